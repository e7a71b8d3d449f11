//! One `struct cfs_rq` and the EEVDF entity operations of fair.c: virtual time, lag,
//! eligibility, the deadline-ordered timeline and `pick_eevdf`, placement, and entity
//! enqueue/dequeue with delayed dequeue.
//!
//! The kernel keeps queued entities in an rbtree ordered by deadline and augmented with
//! each subtree's minimum vruntime, so that `pick_eevdf` finds the eligible entity with the
//! earliest deadline in O(log n). Here the timeline is an ordered map on (deadline, insertion
//! order); the first eligible entry in order is the same entity the kernel's heap search
//! returns (ties go to the earlier insertion, as `rb_add` places equal keys to the right).
//!
//! This module holds the data (`CfsRq`, its bandwidth fields, the parameters and clocks the
//! operations take) and imports nothing above it; the operations, generic over the
//! [`crate::entities::Entities`] store whose hooks take a `CfsRq`, live in `eevdf`, so that
//! the store and the runqueue do not import each other.

mod eevdf;

use std::collections::BTreeMap;

use fairsim_pelt::{CfsRqAvg, UtilEstMode};

use crate::features::Features;
use crate::task::{SchedEntity, TaskId};
use crate::weight::LoadWeight;

pub(crate) use eevdf::{
    cancel_protect_slice, clear_buddies, do_preempt_short, put_prev_entity_finish,
    put_prev_entity_update, update_cfs_group, NONE, TG,
};
pub use eevdf::{
    dequeue_entity, enqueue_entity, entity_tick, place_entity, put_prev_entity,
    requeue_delayed_entity, set_next_entity, update_curr, update_load_avg, CurrUpdate,
};

/// The initial `zero_vruntime` (`init_cfs_rq`): just below wrap-around, so that every
/// comparison has to be wrap-safe, as in the kernel.
pub const INITIAL_ZERO_VRUNTIME: u64 = (-(1i64 << 20)) as u64;

/// `ENQUEUE_*` and `DEQUEUE_*` flags the fair class looks at.
pub mod qflags {
    /// `DEQUEUE_SLEEP` / `ENQUEUE_WAKEUP`.
    pub const SLEEP_WAKEUP: u32 = 0x01;
    /// `DEQUEUE_SAVE` / `ENQUEUE_RESTORE`.
    pub const SAVE_RESTORE: u32 = 0x02;
    /// `DEQUEUE_SPECIAL`.
    pub const SPECIAL: u32 = 0x10;
    /// `DEQUEUE_DELAYED` / `ENQUEUE_DELAYED`.
    pub const DELAYED: u32 = 0x200;
    /// `ENQUEUE_MIGRATED`.
    pub const MIGRATED: u32 = 0x1000;
    /// `ENQUEUE_INITIAL`.
    pub const INITIAL: u32 = 0x2000;
}

/// Settings the entity operations read: features, the base slice and the tick, and for
/// the CFS kernels their tunables.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FairParams {
    /// `sched_features` (which also name the kernel whose fair class runs).
    pub features: Features,
    /// CFS's tunables (read only when the kernel is a CFS one, `--kernel` before 6.6).
    pub cfs: crate::kernel::CfsTunables,
    /// `sysctl_sched_base_slice` in ns (0.7 ms x (1 + ilog2(min(ncpus, 8)))).
    pub base_slice: u64,
    /// `TICK_NSEC`.
    pub tick_nsec: u64,
    /// Which util_est form is in use.
    pub util_est: UtilEstMode,
}

/// The clocks of the rq an operation runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RqClocks {
    /// `rq_clock_task(rq)`.
    pub clock_task: u64,
    /// `cfs_rq_clock_pelt(cfs_rq)`.
    pub clock_pelt: u64,
}

/// `struct cfs_rq`: a CPU's own (`rq->cfs`) or a task group's on that CPU.
///
/// Laid out in declaration order: `h_nr_queued` and the PELT averages come first, right
/// after the fields of [`crate::rq::Rq`] that a load balance reads of every CPU it scans.
#[derive(Debug, Clone, PartialEq, Eq)]
#[repr(C)]
pub struct CfsRq {
    /// `h_nr_queued`.
    pub h_nr_queued: u32,
    /// `nr_running` (entities queued, current and delayed included).
    pub nr_running: u32,
    /// `avg`: PELT signals of the cfs_rq, with removed-load bookkeeping.
    pub avg: CfsRqAvg,
    /// `load`: sum of queued entities' weights.
    pub load: LoadWeight,
    /// `h_nr_runnable`: queued and not delayed.
    pub h_nr_runnable: u32,
    /// `h_nr_delayed`.
    pub h_nr_delayed: u32,
    /// `idle_h_nr_running`: queued SCHED_IDLE tasks (delayed ones included, as
    /// `h_nr_queued` counts them). fairsim keeps no per-entity `idle_nr_running`, which
    /// only `/proc/sched_debug` reads without task groups.
    pub idle_h_nr_running: u32,
    /// `avg_vruntime`: sum of (v_i - zero_vruntime) * w_i over the tree.
    pub avg_vruntime: i64,
    /// `avg_load`: sum of w_i over the tree.
    pub avg_load: u64,
    /// `zero_vruntime`: reference point of the sums.
    pub zero_vruntime: u64,
    /// `tasks_timeline`: entities in the tree (not `curr`), by deadline then insertion.
    pub timeline: BTreeMap<(i64, u64), TaskId>,
    pub(crate) next_seq: u64,
    /// `curr`.
    pub curr: Option<TaskId>,
    /// `next` buddy.
    pub next: Option<TaskId>,
    /// An `update_load_avg` of this cfs_rq called `cfs_rq_util_change` (it decayed the
    /// signals, or attached or detached an entity) and the runqueue has not yet run the
    /// cpufreq hook for it (`Sched::cfs_rq_util_change`, right after the entity
    /// operation, before anything else reads or changes the signals).
    pub util_changed: bool,
    /// The PELT updates entity operations made on this runqueue since the scheduler last
    /// moved them into its cost-model counters (`Sched::entity_op_done`).
    pub pelt_calls: PeltCalls,
    /// CFS (`--kernel` before 6.6): `min_vruntime`, the monotonic floor of the queue's
    /// vruntimes that placement and migration normalise against. EEVDF leaves it alone.
    pub min_vruntime: u64,
    /// CFS: the `last` buddy (the task a wakeup preempted).
    pub last: Option<TaskId>,
    /// CFS: the `skip` buddy (the task that yielded).
    pub skip: Option<TaskId>,
    /// `cfs_rq->tg`: the task group whose runqueue this is (0, the root, for `rq->cfs`).
    pub tg: crate::task::GroupId,
    /// `tg_load_avg_contrib`: the `load_avg` last added to the group's `load_avg`.
    pub tg_load_avg_contrib: u64,
    /// `last_update_tg_load_avg`: when (`sched_clock_cpu`) that contribution last moved.
    pub last_update_tg_load_avg: u64,
    /// `h_load`: the runqueue's share of its CPU's root load (`update_cfs_rq_h_load`),
    /// a cache the balancer's readers refresh once a jiffy.
    pub h_load: std::cell::Cell<u64>,
    /// `last_h_load_update`: the jiffy `h_load` was last computed in.
    pub last_h_load_update: std::cell::Cell<u64>,
    /// CFS bandwidth control's per-runqueue state (`cpu.max`; only group runqueues).
    pub bw: CfsRqBandwidth,
    /// The load-tracking tracepoints this runqueue's entity operations fired since the
    /// scheduler last moved them into its log (`Sched::entity_op_done`); `None` while no
    /// tracer listens ([`crate::pelt_tp`]).
    pub pelt_tp: Option<Box<Vec<crate::pelt_tp::PeltTracepoint>>>,
}

/// The CFS bandwidth fields of `struct cfs_rq` (`CONFIG_CFS_BANDWIDTH`): a group runqueue's
/// local runtime pool, its own throttling and the throttle count it inherits from its
/// ancestors, and the clocks that stop its PELT time and count its throttled time.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CfsRqBandwidth {
    /// `runtime_enabled`: its group has a quota.
    pub runtime_enabled: bool,
    /// `runtime_remaining`: runtime taken from the group's pool and not yet used.
    pub runtime_remaining: i64,
    /// `throttled`: this runqueue ran out and is off its parent.
    pub throttled: bool,
    /// `throttle_count`: this runqueue and its throttled ancestors.
    pub throttle_count: u32,
    /// `throttled_clock`: `rq_clock` when it was throttled with tasks queued (0: not).
    pub throttled_clock: u64,
    /// `throttled_clock_self`: `rq_clock` when its hierarchy's throttling began.
    pub throttled_clock_self: u64,
    /// `throttled_clock_self_time`: time spent throttled by its own or an ancestor's
    /// quota (`cpu.stat.local`'s `throttled_usec`).
    pub throttled_clock_self_time: u64,
    /// `throttled_clock_pelt`: `rq_clock_pelt` when the throttling began.
    pub throttled_clock_pelt: u64,
    /// `throttled_clock_pelt_time`: PELT time spent throttled, taken off its PELT clock.
    pub throttled_clock_pelt_time: u64,
}

/// What `update_load_avg` computed, for the cost model: each call updates the cfs_rq's
/// signals, and the entity's unless it was never attached or `SKIP_AGE_LOAD` was asked.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PeltCalls {
    /// `__update_load_avg_se` calls.
    pub se: u64,
    /// `update_cfs_rq_load_avg` calls.
    pub cfs_rq: u64,
}

impl Default for CfsRq {
    fn default() -> Self {
        CfsRq {
            load: LoadWeight::default(),
            nr_running: 0,
            h_nr_queued: 0,
            h_nr_runnable: 0,
            h_nr_delayed: 0,
            idle_h_nr_running: 0,
            avg_vruntime: 0,
            avg_load: 0,
            zero_vruntime: INITIAL_ZERO_VRUNTIME,
            timeline: BTreeMap::new(),
            next_seq: 0,
            curr: None,
            next: None,
            avg: CfsRqAvg::default(),
            util_changed: false,
            pelt_calls: PeltCalls::default(),
            min_vruntime: INITIAL_ZERO_VRUNTIME,
            last: None,
            skip: None,
            tg: 0,
            tg_load_avg_contrib: 0,
            last_update_tg_load_avg: 0,
            h_load: std::cell::Cell::new(0),
            // No jiffy has computed it yet (jiffy 0 is long before the emulation).
            last_h_load_update: std::cell::Cell::new(u64::MAX),
            bw: CfsRqBandwidth::default(),
            pelt_tp: None,
        }
    }
}

/// Order key of a deadline: wrap-safe as long as deadlines stay within 2^63 of the
/// initial zero_vruntime, i.e. the kernel's `(s64)(a - b) < 0` comparison.
pub(crate) fn deadline_key(deadline: u64) -> i64 {
    deadline.wrapping_sub(INITIAL_ZERO_VRUNTIME) as i64
}

/// `entity_before(a, b)`.
pub fn entity_before(a: &SchedEntity, b: &SchedEntity) -> bool {
    (a.deadline.wrapping_sub(b.deadline) as i64) < 0
}
