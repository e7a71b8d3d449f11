//! Which kernel's load balancer a run has ([`Balancer`]), as its features select it.
//!
//! The choice is data: `Sched::new` and the legacy balancers' state read it, and the
//! entry points of [`crate::lb::era`] dispatch on it. It sits apart from those entry
//! points (which are `Sched` methods) so that the scheduler's state can name it without
//! importing them.

use crate::features::{Feature, Features};
use crate::kernel::Kernel;

/// Which kernel's load balancer runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Balancer {
    /// 6.12.117's `sched_balance_*` (also what 4.5 to 6.5 run here until their own are
    /// ported).
    V6_12,
    /// Linux 3.9's `load_balance` with `cpu_power` and `cpu_load[]` (LEGACY_LB).
    V3_9,
    /// Linux 4.5's `load_balance`: `cpu_capacity`, `cpu_load[]` fed with PELT's runnable
    /// load, `enum group_type` (`--kernel 4.5`).
    V4_5,
    /// Linux 4.15's, which is 4.5's with the differences `lb/v4_15` lists; 4.16.13's
    /// balancer is 4.15.0's line for line (`--kernel 4.15`, `--kernel 4.16`).
    V4_15,
    /// Linux 6.5's `load_balance` and `newidle_balance` where they differ from 6.12's
    /// (`lb/v6_5`); its triggers, softirq, nohz and stopper are 6.12's (`--kernel 6.5`).
    V6_5,
}

impl Balancer {
    /// The balancer a machine with `features` runs: LEGACY_LB selects 3.9's whatever the
    /// kernel, otherwise the kernel's own (6.12's for the kernels not ported yet).
    pub fn for_features(features: Features) -> Balancer {
        if features.has(Feature::LEGACY_LB) {
            return Balancer::V3_9;
        }
        match features.kernel() {
            Kernel::V4_5 => Balancer::V4_5,
            Kernel::V4_15 | Kernel::V4_16 => Balancer::V4_15,
            Kernel::V6_5 => Balancer::V6_5,
            _ => Balancer::V6_12,
        }
    }

    /// Whether the balancer keeps `cpu_load[]` and its own capacities
    /// ([`crate::lb::v3_9::LegacyLbState`]).
    pub fn has_cpu_load(self) -> bool {
        matches!(self, Balancer::V3_9 | Balancer::V4_5 | Balancer::V4_15)
    }
}
