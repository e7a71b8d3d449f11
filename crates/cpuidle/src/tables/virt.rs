//! The table of KVM guests with the haltpoll cpuidle driver
//! (drivers/cpuidle/cpuidle-haltpoll.c, Linux 6.12).
//!
//! `haltpoll_init` fills state 0 with `cpuidle_poll_state_init` (drivers/cpuidle/
//! poll_state.c: `POLL`, 0/0, `CPUIDLE_FLAG_POLLING`) and keeps the driver's static state
//! 1, `haltpoll idle` (`default_enter_idle`, a `HLT` that exits to the host), with
//! exit latency 1 us, target residency 1 us and no flags. The driver loads when the host
//! advertises `KVM_HINTS_REALTIME` or with `cpuidle_haltpoll.force=1`; the build host of
//! validation/host runs exactly this table.

use crate::states::{poll_state, state_us, IdleTable};

/// The `haltpoll` driver's table: POLL and `haltpoll idle` (1/1 us).
pub(super) fn haltpoll() -> IdleTable {
    IdleTable {
        driver: "haltpoll".to_string(),
        source: "cpuidle-haltpoll haltpoll_driver (KVM guest), Linux 6.12".to_string(),
        states: vec![poll_state(), state_us("haltpoll idle", 1, 1, false)],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn haltpoll_states() {
        // cpuidle-haltpoll.c: state 1 .exit_latency = 1, .target_residency = 1 (us);
        // poll_state.c: POLL 0/0 with CPUIDLE_FLAG_POLLING.
        let t = haltpoll();
        assert_eq!(t.driver, "haltpoll");
        assert_eq!(t.states.len(), 2);
        let (p, h) = (&t.states[0], &t.states[1]);
        assert_eq!(
            (p.name.as_str(), p.exit_latency_ns, p.target_residency_ns),
            ("POLL", 0, 0)
        );
        assert!(p.polling && !p.timer_stop && !p.disabled);
        assert_eq!(
            (h.name.as_str(), h.exit_latency_ns, h.target_residency_ns),
            ("haltpoll idle", 1_000, 1_000)
        );
        assert!(!h.polling && !h.timer_stop && !h.disabled);
    }
}
