//! A group entity's weight: `calc_group_shares` and the group load it reads,
//! `update_tg_load_avg` (Linux 6.12.117, `kernel/sched/fair.c`).

use super::{TaskGroup, ROOT_GROUP};
use crate::cfs_rq::CfsRq;
use crate::weight::{scale_load, scale_load_down};

/// `NSEC_PER_MSEC`: `update_tg_load_avg` moves a runqueue's contribution at most once a
/// millisecond.
const TG_LOAD_AVG_PERIOD: u64 = 1_000_000;

/// `update_tg_load_avg(cfs_rq)`: add the change of a group runqueue's `load_avg` since it
/// was last added to the group's `load_avg`, when more than 1/64 of that contribution and
/// at most once a millisecond of `now` (`sched_clock_cpu`). The root group's is never
/// read and never kept.
pub(crate) fn update_tg_load_avg(tg: &mut TaskGroup, cfs: &mut CfsRq, now: u64) {
    if cfs.tg == ROOT_GROUP {
        return;
    }
    if now.wrapping_sub(cfs.last_update_tg_load_avg) < TG_LOAD_AVG_PERIOD {
        return;
    }
    let delta = cfs.avg.avg.load_avg as i64 - cfs.tg_load_avg_contrib as i64;
    if delta.unsigned_abs() > cfs.tg_load_avg_contrib / 64 {
        tg.load_avg += delta;
        cfs.tg_load_avg_contrib = cfs.avg.avg.load_avg;
        cfs.last_update_tg_load_avg = now;
    }
}

/// `calc_group_shares(cfs_rq)`: the group's shares times this runqueue's load over the
/// group's load, where this runqueue's part of the group load is replaced by
/// `max(load.weight, load_avg)` so that a group running on one CPU gets its whole weight
/// at once; clamped to `MIN_SHARES..=tg->shares` (scaled).
pub(crate) fn calc_group_shares(tg: &TaskGroup, cfs: &CfsRq) -> u64 {
    let tg_shares = tg.shares as i64;
    let load = scale_load_down(cfs.load.weight).max(cfs.avg.avg.load_avg) as i64;
    let mut tg_weight = tg.load_avg;
    tg_weight -= cfs.tg_load_avg_contrib as i64;
    tg_weight += load;
    let mut shares = tg_shares * load;
    if tg_weight != 0 {
        shares /= tg_weight;
    }
    // MIN_SHARES is unscaled here, as in the kernel: a floor for per-CPU parts of a
    // group with small shares.
    shares.clamp(super::MIN_SHARES as i64, tg_shares) as u64
}

/// The default shares of a new group, scaled (`cpu.weight` 100).
pub(crate) fn default_shares() -> u64 {
    scale_load(1024)
}
