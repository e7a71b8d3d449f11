//! PELT (per-entity load tracking) and util_est, ported bit-exact from Linux 6.12.117's
//! `kernel/sched/pelt.c`, `pelt.h`, `sched-pelt.h` and the util_est parts of `fair.c`.
//!
//! The crate is pure arithmetic: it owns no runqueue and no clock. Callers (the balance
//! crate, the engine, `fairsim pelt`) keep a [`SchedAvg`] per sched_entity, a
//! [`CfsRqAvg`] per cfs_rq and a [`PeltClock`] per rq, and call the kernel's functions
//! at the kernel's call sites:
//!
//! - every enqueue/dequeue/tick/`set_next_entity`/`put_prev_entity`:
//!   [`update_load_avg_task`] with `now = PeltClock::rq_clock_pelt()`;
//! - every `update_rq_clock`: [`PeltClock::update_rq_clock_task`]; going idle:
//!   [`PeltClock::update_idle_rq_clock_pelt`];
//! - task creation: [`init_entity_runnable_average`] then [`post_init_entity_util_avg`]
//!   (the first enqueue attaches with `DO_ATTACH`);
//! - wakeup migration: [`remove_entity_load_avg`] on the old cfs_rq, set
//!   `last_update_time = 0`, attach on the new one through `DO_ATTACH`; load-balance
//!   migration: `DO_DETACH` at dequeue, then the same attach;
//! - util_est: [`util_est_enqueue`], [`util_est_dequeue`], [`util_est_update`],
//!   [`task_util_est`] in the form chosen by [`UtilEstMode`].
//!
//! No floating point is used anywhere in the crate.

pub mod avg;
pub mod clock;
pub mod decay;
pub mod entity;
pub mod group;
pub mod init;
pub mod sim;
pub mod util_est;

pub use avg::{
    accumulate_sum, get_pelt_divider, update_crosses_period, update_load_avg, update_load_sum,
    SchedAvg, PELT_MIN_DIVIDER,
};
pub use clock::{cap_scale, PeltClock};
pub use decay::{
    accumulate_pelt_segments, decay_load, LOAD_AVG_MAX, LOAD_AVG_PERIOD, RUNNABLE_AVG_YN_INV,
};
pub use entity::{
    attach_entity_load_avg, detach_entity_load_avg, remove_entity_load_avg, scale_load_down,
    sync_entity_load_avg, update_cfs_rq_load_avg, update_load_avg_blocked_se,
    update_load_avg_cfs_rq, update_load_avg_se, update_load_avg_task, update_load_avg_task_traced,
    CfsRqAvg, CfsRqInputs, PeltTracer, SeInputs, UpdateFlags, UpdateOutcome,
};
pub use group::propagate_entity_load_avg;
pub use init::{init_entity_runnable_average, post_init_entity_util_avg};
pub use util_est::{
    task_util_est, util_est_dequeue, util_est_enqueue, util_est_update, UtilEstMode,
    UTIL_AVG_UNCHANGED, UTIL_EST_MARGIN, UTIL_EST_WEIGHT_SHIFT,
};

/// `SCHED_CAPACITY_SHIFT`: capacities and utilizations are fixed point with 10 bits.
pub const SCHED_CAPACITY_SHIFT: u32 = 10;

/// `SCHED_CAPACITY_SCALE`: the capacity of the biggest CPU at max frequency, 1024.
pub const SCHED_CAPACITY_SCALE: u64 = 1 << SCHED_CAPACITY_SHIFT;
