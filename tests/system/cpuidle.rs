//! The idle loop end to end: the state a governor picks decides what a wakeup pays, the
//! per-state counters cover the idle time, and the driverless path is unchanged.

use crate::common;

use fairsim_cpuidle::parse_idle_states;
use fairsim_engine::Cpuidle;
use fairsim_workloads::run::run;

/// The median wake-to-run latency (ns) and the world of a run of `workload` on
/// `smt-mc-1s4c2t` with `states`.
fn p50_of(
    workload: &str,
    states: &str,
    cpuidle: Cpuidle,
) -> (u64, fairsim_workloads::run::RunResult) {
    let mut spec = common::spec("smt-mc-1s4c2t", &[workload], 300, 1);
    spec.config.cpuidle = cpuidle;
    spec.config.idle_states = Some(parse_idle_states(states, 8).expect("states"));
    let r = run(&spec, &mut |_, _| {}).expect("run");
    let p50 = r.outcome.metrics().wakeup_latency.value_at_quantile(0.5);
    (p50, r)
}

#[test]
fn a_wakeup_pays_the_exit_latency_of_the_state_the_governor_chose() {
    // The workers sleep 2 ms or more between the message thread's wakeups, longer than
    // every residency here: menu goes as deep as allowed, and each remote wakeup waits
    // for the worker's CPU to leave its state. (A timer wakeup pays the exit before
    // ttwu runs, in the interrupt, so wake-to-run does not show it.)
    const SCHBENCH: &str = "schbench:m=1,t=2,c=2ms,s=2ms";
    let (shallow, _) = p50_of(SCHBENCH, "C1:2us:2us", Cpuidle::Menu);
    let (deep, r) = p50_of(SCHBENCH, "C1:2us:2us,C6:100us:400us", Cpuidle::Menu);
    assert!(shallow < 20_000, "C1 only: p50 {shallow} ns");
    assert!(
        (100_000..130_000).contains(&deep),
        "with C6 the timer wakeups pay its 100 us exit: p50 {deep} ns"
    );
    let usage = r.outcome.cpuidle_usage();
    let c6: u64 = usage.iter().map(|u| u[2].usage).sum();
    assert!(c6 > 100, "the sleeping CPUs enter C6 at each sleep: {c6}");
    // Disabling the deep state brings the latency back down.
    let (off, _) = p50_of(SCHBENCH, "C1:2us:2us,C6:100us:400us,no-C6", Cpuidle::Menu);
    assert!(off < 20_000, "C6 disabled: p50 {off} ns");
}

#[test]
fn the_states_account_for_the_idle_time_of_every_cpu() {
    let (_, r) = p50_of("nanosleep:tasks=2,sleep=1ms", "bdx", Cpuidle::Menu);
    let w = &r.outcome;
    let window = w.window_ns();
    let table = &w.idle_states().tables[0].states;
    for (cpu, u) in w.cpuidle_usage().iter().enumerate() {
        // A residency runs to time_end, after the exit latency, as cpuidle_enter_state
        // measures it; the engine charges that latency as overhead, not idle time.
        let exits: u64 = u
            .iter()
            .zip(table)
            .map(|(s, st)| s.usage * st.exit_latency_ns)
            .sum();
        let in_states: u64 = u.iter().map(|s| s.time_ns).sum::<u64>() - exits;
        let m = &w.metrics().cpus[cpu];
        let idle = window - (m.task_ns + m.overhead_total()).min(window);
        // What remains apart: context switches and other kernel work around each idle
        // period, a few microseconds each.
        let slack = 200_000 + idle / 50;
        assert!(
            in_states.abs_diff(idle) <= slack,
            "cpu{cpu}: {in_states} ns in states, {idle} ns idle"
        );
    }
}

#[test]
fn the_haltpoll_governor_polls_before_it_halts() {
    // Idle periods of about 50 us, under guest_halt_poll_ns (200 us), grow the poll
    // window from 0 (adjust_poll_limit), after which the CPU polls first.
    let (_, r) = p50_of(
        "nanosleep:tasks=2,sleep=50us",
        "haltpoll",
        Cpuidle::Haltpoll,
    );
    let usage = r.outcome.cpuidle_usage();
    let polls: u64 = usage.iter().map(|u| u[0].usage).sum();
    let halts: u64 = usage.iter().map(|u| u[1].usage).sum();
    assert!(polls > 100 && halts > 0, "polls {polls}, halts {halts}");
    // Idle periods of 1 ms shrink it back to nothing: the governor halts at once.
    let (_, r) = p50_of("nanosleep:tasks=2,sleep=1ms", "haltpoll", Cpuidle::Haltpoll);
    let usage = r.outcome.cpuidle_usage();
    let polls: u64 = usage.iter().map(|u| u[0].usage).sum();
    assert!(polls < 10, "1 ms sleeps: polls {polls}");
}

#[test]
fn no_driver_has_no_states_and_pays_the_flat_exit() {
    let mut spec = common::spec("smt-mc-1s4c2t", &["nanosleep:tasks=2,sleep=1ms"], 300, 1);
    spec.config.cpuidle = Cpuidle::None;
    let r = run(&spec, &mut |_, _| {}).expect("run");
    assert!(r.outcome.cpuidle_usage().is_empty());
    let p50 = r.outcome.metrics().wakeup_latency.value_at_quantile(0.5);
    assert!(p50 < 20_000, "flat 1 us idle exit: p50 {p50} ns");
}
