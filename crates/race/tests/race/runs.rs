//! Race mode on real threads: tasks are conserved while CPUs race through newidle and
//! periodic balances over shared runqueues, and bad specs are refused.

use fairsim_balance::{Features, SchedParams};
use fairsim_race::{run_race, validate, Placement, RaceError, RaceSpec, TokenProgram};
use fairsim_topology::source::{parse_spec, preset, SpecOptions};
use fairsim_topology::{Arch, BuildOptions};

fn spec(features: &str, threads: usize, tasks: usize) -> RaceSpec {
    let features = Features::parse(features).expect("features");
    RaceSpec {
        machine: preset("numa-2s4c2t").expect("preset"),
        build: BuildOptions {
            shared_all_non_numa: features.uses_ilb(),
            ..BuildOptions::default()
        },
        params: SchedParams {
            features,
            ..SchedParams::default()
        },
        tasks,
        threads,
        duration_ns: 300_000_000,
        program: TokenProgram {
            spin_ns: 2_000,
            sleep_ns: 50_000,
            wake_partner: false,
        },
        placement: Placement::Cpu0,
        watchdog_ns: 20_000_000_000,
    }
}

#[test]
fn a_newidle_storm_from_one_runqueue_conserves_every_task() {
    let r = run_race(&spec("", 4, 64)).expect("race run");
    assert!(r.conserved(), "{}", r.render());
    assert_eq!(r.totals.nested_locks, 0, "{}", r.render());
    // Everything starts on CPU 0: the others must have pulled, through newidle balances
    // that scanned groups.
    assert!(r.pulls() > 0, "{}", r.render());
    let newidle_lb: u64 = r.newidle.iter().map(|l| l.count).sum();
    assert!(newidle_lb > 0, "{}", r.render());
    assert!(r.totals.loops > 0);
    // No balance scans more groups than its domain has: 2 in SMT, 4 in MC, 2 in NUMA.
    for l in r.newidle.iter().chain(&r.periodic) {
        let groups = match l.name {
            "SMT" | "NUMA" => 2,
            _ => 4,
        };
        assert!(l.sg_scan <= l.count * (groups - 1), "{}: {l:?}", l.name);
    }
}

#[test]
fn ilb_fast_with_one_thread_per_cpu_conserves_every_task() {
    let r = run_race(&spec("ILB_SNAPSHOT,ILB_FAST", 16, 40)).expect("race run");
    assert!(r.conserved(), "{}", r.render());
    assert_eq!(r.totals.nested_locks, 0);
    assert!(r.pulls() > 0, "{}", r.render());
    assert!(r.sd_lb_stats_newidle.n > 0, "{}", r.render());
    assert!(r.sd_lb_stats_periodic.n > 0, "{}", r.render());
}

#[test]
fn bad_specs_are_refused_naming_the_field() {
    let field = |e: RaceError| match e {
        RaceError::Invalid { field, .. } => field,
        other => panic!("unexpected {other:?}"),
    };
    let mut s = spec("", 0, 4);
    assert_eq!(field(validate(&s).unwrap_err()), "--threads");
    s.threads = 17;
    assert_eq!(field(validate(&s).unwrap_err()), "--threads");
    s.threads = 2;
    s.tasks = 0;
    assert_eq!(field(validate(&s).unwrap_err()), "--tasks");
    s.tasks = 4;
    s.duration_ns = 0;
    assert_eq!(field(validate(&s).unwrap_err()), "--duration");
    s.duration_ns = 1_000_000;
    let mut opts = SpecOptions::new("sockets=1,cores=4", Arch::X86);
    opts.capacity = Some("0-1:1024,2-3:512".into());
    s.machine = parse_spec(&opts).expect("machine");
    s.threads = 2;
    assert_eq!(field(validate(&s).unwrap_err()), "machine");
}

#[test]
fn the_storm_state_is_fixed_and_every_idle_cpu_scans() {
    use fairsim_race::storm::NewidleStorm;
    let params = SchedParams {
        features: Features::parse("ILB_SNAPSHOT,ILB_FAST,NO_NI_RANDOM").expect("features"),
        ..SchedParams::default()
    };
    let storm = NewidleStorm::new(preset("numa-2s4c2t").expect("preset"), params).expect("storm");
    assert_eq!(storm.idle_cpus().len(), 8);
    // The periodic balance before the storm left the LLC snapshot ILB_FAST borrows.
    let w = storm.world();
    let llc = w.topo.cpus[1].sd_llc_shared.expect("LLC shared");
    assert_ne!(
        w.topo.shared[llc]
            .total_capacity
            .load(std::sync::atomic::Ordering::Relaxed),
        0
    );
    // Without NI_RANDOM's dice, every idle CPU scans each of its three domains (SMT,
    // MC, NUMA) in every round, round after round, however many threads race: the
    // queued tokens are too hot to move, so nothing is ever pulled and the state stays.
    for threads in [1, 3, 8] {
        let (_, calls) = storm.run(threads, 5);
        assert_eq!(calls, 8 * 5 * 3, "threads {threads}");
    }
}

#[test]
fn the_watchdog_reports_a_thread_that_does_not_stop_in_time() {
    // One thread drives every CPU and each token spins for 1 s: when the 100 ms run
    // ends, the thread is mid-spin and cannot stop within the 1 ms the watchdog allows.
    // The run is long enough that starting the thread on a loaded host (the run and the
    // watchdog together bound that too) does not end it first.
    let mut s = spec("", 1, 4);
    s.duration_ns = 100_000_000;
    s.program.spin_ns = 1_000_000_000;
    s.watchdog_ns = 1_000_000;
    match run_race(&s) {
        Err(e @ (RaceError::StartTimeout { .. } | RaceError::StopTimeout { .. })) => {
            let msg = e.to_string();
            assert!(msg.starts_with("race watchdog: 1 of 1 threads"), "{msg}");
            assert!(msg.contains("thread 0"), "{msg}");
        }
        other => panic!("expected the watchdog, got {other:?}"),
    }
}

#[test]
fn partner_wakeups_across_cpus_conserve_every_task() {
    let mut s = spec("", 4, 32);
    s.program.wake_partner = true;
    let r = run_race(&s).expect("race run");
    assert!(r.conserved(), "{}", r.render());
    assert_eq!(r.totals.nested_locks, 0);
    assert!(r.totals.partner_wakeups > 0, "{}", r.render());
    // Pairs split by balancing wake each other across CPUs.
    assert!(r.totals.wakeups > r.totals.wakeups_local, "{}", r.render());
}
