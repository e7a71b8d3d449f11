//! A group entity's weight: `calc_group_shares` and the group load it reads,
//! `update_tg_load_avg` (Linux 6.12.117, `kernel/sched/fair.c`).

use super::{TaskGroup, ROOT_GROUP};
use crate::cfs_rq::CfsRq;
use crate::weight::scale_load_down;

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::weight::scale_load;

    fn tg(shares: u64, load_avg: i64) -> TaskGroup {
        TaskGroup {
            path: "/t".into(),
            parent: Some(ROOT_GROUP),
            shares: scale_load(shares),
            idle: false,
            load_avg,
            depth: 0,
            bw: Default::default(),
            autogroup: None,
        }
    }

    fn cfs(weight: u64, load_avg: u64, contrib: u64) -> CfsRq {
        let mut c = CfsRq {
            tg: 1,
            tg_load_avg_contrib: contrib,
            ..CfsRq::default()
        };
        c.load.weight = weight;
        c.avg.avg.load_avg = load_avg;
        c
    }

    #[test]
    fn shares_follow_this_cpus_part_of_the_group_load() {
        // load = max(1024, 500) = 1024; tg_weight = 1500 - 500 + 1024 = 2024;
        // 1048576 * 1024 / 2024 = 530504.
        assert_eq!(
            calc_group_shares(&tg(1024, 1500), &cfs(scale_load(1024), 500, 500)),
            530_504
        );
        // The group runs here alone: its whole weight.
        assert_eq!(
            calc_group_shares(&tg(1024, 0), &cfs(scale_load(1024), 0, 0)),
            scale_load(1024)
        );
        // The average above the queued weight counts: load = 3000, tg_weight = 3000 + 1000.
        assert_eq!(
            calc_group_shares(&tg(2048, 1000), &cfs(scale_load(1024), 3000, 0)),
            2048 * 1024 * 3000 / 4000
        );
        // Nothing queued and no load: the unscaled MIN_SHARES floor.
        assert_eq!(calc_group_shares(&tg(1024, 0), &cfs(0, 0, 0)), 2);
        // A tiny share of a small group stays above the floor (the kernel's 8-CPU
        // example: shares 15 over 8 equally loaded CPUs is 1920).
        assert_eq!(
            calc_group_shares(&tg(15, 8 * 1024), &cfs(scale_load(1024), 1024, 1024)),
            1920
        );
    }

    #[test]
    fn group_load_moves_by_more_than_a_64th_at_most_once_a_millisecond() {
        let mut g = tg(1024, 0);
        let mut c = cfs(0, 640, 0);
        update_tg_load_avg(&mut g, &mut c, 5_000_000);
        assert_eq!((g.load_avg, c.tg_load_avg_contrib), (640, 640));
        // Within the millisecond: nothing.
        c.avg.avg.load_avg = 1000;
        update_tg_load_avg(&mut g, &mut c, 5_500_000);
        assert_eq!(g.load_avg, 640);
        // A change of 10 is not more than 640 / 64.
        c.avg.avg.load_avg = 650;
        update_tg_load_avg(&mut g, &mut c, 6_000_000);
        assert_eq!(g.load_avg, 640);
        c.avg.avg.load_avg = 651;
        update_tg_load_avg(&mut g, &mut c, 6_000_000);
        assert_eq!((g.load_avg, c.tg_load_avg_contrib), (651, 651));
    }
}
