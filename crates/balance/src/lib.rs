//! Port of `kernel/sched/fair.c`'s SMP logic: runqueues, EEVDF pick, wakeup placement,
//! load balancing and schedstat counters.
//!
//! Not yet written: this crate is the home of the engine issue (#4) and the load-balancing
//! issue (#5). It re-exports its two foundations so that dependants see one layer.

pub use fairsim_pelt as pelt;
pub use fairsim_topology as topology;
