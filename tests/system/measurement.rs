//! The measurement machinery: run-to-run noise, the measurement window and the profile.

use crate::common;

use fairsim_des::time::MS;
use fairsim_engine::noise::NoiseModel;
use fairsim_engine::profile::Sym;
use fairsim_engine::world::Overhead;
use fairsim_output::to_json;
use fairsim_workloads::{run, RunResult, RunSpec};

const NSLEEP: &str = "nanosleep:tasks=24,sleep=10us";
const SCHBENCH: &str = "schbench:m=2,t=4,c=2ms,s=2ms";

fn noisy(machine: &str, w: &str, ms: u64, seed: u64) -> RunSpec {
    let mut s = common::spec(machine, &[w], ms, seed);
    s.config.noise = NoiseModel::DEFAULT;
    s
}

fn go(s: &RunSpec) -> RunResult {
    run(s, &mut |_, _| {}).unwrap()
}

fn json_text(s: &RunSpec) -> String {
    let r = go(s);
    serde_json::to_string(&to_json(s, &r)).unwrap()
}

#[test]
fn noise_changes_results_across_seeds_and_not_across_reruns() {
    for w in [NSLEEP, SCHBENCH] {
        let a = json_text(&noisy("numa-2s4c2t", w, 150, 1));
        let again = json_text(&noisy("numa-2s4c2t", w, 150, 1));
        assert_eq!(a, again, "{w}: one seed gave two results");
        let b = go(&noisy("numa-2s4c2t", w, 150, 2));
        let a = go(&noisy("numa-2s4c2t", w, 150, 1));
        let switches = |r: &RunResult| {
            r.outcome
                .metrics()
                .cpus
                .iter()
                .map(|c| c.switches)
                .sum::<u64>()
        };
        let overhead = |r: &RunResult| {
            r.outcome
                .metrics()
                .cpus
                .iter()
                .map(|c| c.overhead_total())
                .sum::<u64>()
        };
        assert!(
            switches(&a) != switches(&b) || overhead(&a) != overhead(&b),
            "{w}: two seeds gave the same run"
        );
    }
}

#[test]
fn noise_keeps_the_mean_cost_of_kernel_work() {
    // The mean of the drawn durations is the cost table's: per context switch, the
    // charged time stays within 2% of context_switch.
    let r = go(&noisy("numa-2s4c2t", NSLEEP, 200, 3));
    let cs: u64 = r.outcome.metrics().overhead_of(Overhead::ContextSwitch);
    let n: u64 = r.outcome.metrics().cpus.iter().map(|c| c.switches).sum();
    let mean = cs as f64 / n as f64;
    let want = r.outcome.config().cost.context_switch as f64;
    assert!((mean - want).abs() < 0.02 * want, "mean {mean} vs {want}");
}

/// The counters the window must difference exactly: everything counted when it happens.
fn counters(r: &RunResult) -> Vec<u64> {
    let w = &r.outcome;
    let mut v = vec![
        w.metrics().wakeups_local,
        w.metrics().wakeups_remote,
        w.metrics().timers_fired,
        w.metrics().cpus_visited,
        w.metrics().groups_visited,
    ];
    for c in &w.metrics().cpus {
        v.push(c.switches);
        v.push(c.migrations_in);
        v.push(c.newidle_balances);
        v.extend_from_slice(&c.overhead_ns());
        v.push(c.overhead_total());
        v.extend_from_slice(&c.site_ns);
    }
    for rq in &w.sched().rqs {
        let s = &rq.stats;
        v.extend([s.sched_count, s.sched_goidle, s.ttwu_count, s.ttwu_local]);
    }
    for sd in &w.sched().sd_stats {
        v.extend(sd.lb_count);
        v.extend(sd.lb_balanced);
        v.extend(sd.lb_failed);
        v.extend(sd.lb_gained);
        v.extend(sd.lb_sg_scan);
        v.push(sd.ttwu_wake_remote);
    }
    v
}

#[test]
fn the_window_is_a_later_minus_earlier_difference() {
    for w in [NSLEEP, SCHBENCH] {
        let early = go(&noisy("numa-2s4c2t", w, 60, 5));
        let late = go(&noisy("numa-2s4c2t", w, 200, 5));
        let mut win = noisy("numa-2s4c2t", w, 200, 5);
        win.config.warmup = 60 * MS;
        let window = go(&win);
        assert_eq!(window.outcome.window_start(), 60 * MS);
        assert_eq!(window.outcome.window_ns(), 140 * MS);
        let (e, l, d) = (counters(&early), counters(&late), counters(&window));
        assert_eq!(e.len(), d.len());
        for (i, ((e, l), d)) in e.iter().zip(&l).zip(&d).enumerate() {
            assert_eq!(l - e, *d, "{w}: counter {i}: {l} - {e} != {d}");
        }
        // The scheduler's per-task counters are reported as their growth in the window.
        let t = window.outcome.tasks().len() - 1;
        let (me, ml, md) = (
            early.outcome.task_metrics(t),
            late.outcome.task_metrics(t),
            window.outcome.task_metrics(t),
        );
        assert_eq!(ml.pcount - me.pcount, md.pcount, "{w}");
        assert_eq!(ml.run_delay_ns - me.run_delay_ns, md.run_delay_ns, "{w}");
        assert!(d.iter().any(|&x| x > 0));
    }
}

#[test]
fn a_warmup_at_or_past_the_end_is_not_a_window() {
    let mut s = noisy("numa-2s4c2t", NSLEEP, 50, 5);
    s.config.warmup = 50 * MS;
    let r = go(&s);
    assert_eq!(r.outcome.window_start(), 0);
}

#[test]
fn profile_shares_sum_to_the_total_and_agree_with_the_overhead_split() {
    let mut s = noisy("numa-2s4c2t", NSLEEP, 200, 9);
    s.config.warmup = 50 * MS;
    let r = go(&s);
    let w = &r.outcome;
    let p = w.profile(None);
    let lines = p.lines();
    let self_sum: u64 = lines.iter().map(|l| l.self_ns).sum();
    assert_eq!(self_sum, p.total_ns());
    let overhead: u64 = w.metrics().cpus.iter().map(|c| c.overhead_total()).sum();
    assert_eq!(p.kernel_ns(), overhead);
    // The running total and the split by kind (derived from the sites) agree on each CPU.
    for c in &w.metrics().cpus {
        assert_eq!(c.overhead_ns().iter().sum::<u64>(), c.overhead_total());
    }
    let task: u64 = w.metrics().cpus.iter().map(|c| c.task_ns).sum();
    assert_eq!(p.user_ns, task);
    // No CPU is busier than the window, so all CPU time is CPUs x window.
    assert_eq!(p.total_ns(), w.window_ns() * w.cpus().len() as u64);
    assert!(lines.iter().all(|l| l.children_ns >= l.self_ns));
    // Each overhead kind's time is the sum of its sites'.
    let per_cpu: u64 = (0..w.cpus().len())
        .map(|c| w.profile(Some(c)).kernel_ns())
        .sum();
    assert_eq!(per_cpu, overhead);
    // The nanosleep storm balances on going idle: the newidle balance and its group scan
    // are on the profile, and __schedule is the biggest kernel entry.
    let nb = p.line(Sym::SchedBalanceNewidle);
    assert!(nb.children_ns > 0);
    assert!(p.line(Sym::UpdateSdLbStats).children_ns > 0);
    let sch = p.line(Sym::Schedule);
    assert!(sch.children_ns >= nb.children_ns);
    assert!(sch.self_ns > 0);
}

#[test]
fn batches_of_events_run_exactly_what_single_steps_run() {
    // World::step_batch (what run and the CLI use) against World::step, on a run whose
    // launch, idle loop, balancing and window all go through the step: same events, same
    // end, same counters. Odd batch sizes make the batches end mid-instant.
    let mut s = noisy("numa-2s4c2t", NSLEEP, 60, 3);
    s.config.warmup = 20 * MS;
    let mut one = fairsim_workloads::prepare(&s).unwrap();
    while one.step().unwrap() {}
    for every in [1, 7, 4096] {
        let mut batched = fairsim_workloads::prepare(&s).unwrap();
        let mut calls = 0u64;
        while !batched.ended() {
            let before = batched.events();
            batched.step_batch(every).unwrap();
            let ran = batched.events() - before;
            assert!(ran <= every, "a batch of {every} ran {ran} events");
            assert!(
                batched.ended() || batched.events() % every == 0,
                "a batch of {every} stopped at {} events",
                batched.events()
            );
            calls += 1;
        }
        assert_eq!(batched.events(), one.events(), "batches of {every}");
        assert_eq!(batched.now(), one.now());
        assert_eq!(batched.metrics().cpus, one.metrics().cpus);
        assert!(calls >= one.events() / every);
    }
}
