//! Integration tests: every workload on small machines with the invariants checked after
//! every event, conservation, determinism, monotone time, affinity, work scaling, pipes.

use crate::common;

use fairsim_des::time::{MS, US};
use fairsim_engine::program::{Op, Program};
use fairsim_engine::world::{Blueprint, Overhead, Pipe, RtState};
use fairsim_engine::world::{TaskRt, WorkloadRt};
use fairsim_engine::{NoiseModel, World, WorldConfig};
use fairsim_output::to_json;
use fairsim_topology::source::preset;
use fairsim_topology::{build_sched_domains, BuildOptions, CpuMask};
use fairsim_workloads::{prepare, run};

fn run_checked(machine: &str, w: &str, ms: u64) -> fairsim_workloads::RunResult {
    let mut s = common::spec(machine, &[w], ms, 7);
    s.config.check_invariants = true;
    run(&s, &mut |_, _| {}).unwrap_or_else(|e| panic!("{machine} {w}: {e}"))
}

#[test]
fn every_workload_runs_with_invariants_checked_after_every_event() {
    for (m, w) in [
        ("numa-2s4c2t", "schbench:m=2,t=4,c=2ms,s=2ms"),
        ("smt-mc-1s4c2t", "hackbench:g=1,l=5,pipe"),
        ("dies-1s2d2c1t", "hackbench:g=1,l=5,f=4,threads"),
        ("numa-4n-far", "nanosleep:tasks=24,sleep=10us"),
        ("tc2", "sysbench-cpu:threads=5,events=50"),
    ] {
        let r = run_checked(m, w, 200);
        assert!(
            r.outcome.events() > 100,
            "{m} {w}: only {} events",
            r.outcome.events()
        );
        assert!(!r.reports[0].text.is_empty());
    }
}

#[test]
fn finished_workloads_account_for_every_task() {
    for w in [
        "hackbench:g=2,l=20,pipe",
        "hackbench:g=1,l=20",
        "sysbench-cpu:threads=6,events=3",
    ] {
        let r = run_checked("numa-2s4c2t", w, 10_000);
        assert!(r.reports[0].finished, "{w} did not finish");
        let world = &r.outcome;
        assert_eq!(world.live_tasks(), 0, "{w}");
        for (i, t) in world.tasks().iter().enumerate() {
            assert_eq!(t.state, RtState::Exited, "{w}: task {i} {}", t.name);
            let sid = t.sched_id.expect("forked");
            assert!(
                !world.sched().tasks[sid].se.on_rq,
                "{w}: task {i} still queued"
            );
        }
        assert!(world.now().0 < 10_000 * MS, "{w} ended by itself");
        assert!(world
            .sched()
            .rqs
            .iter()
            .all(|rq| rq.nr_running == 0 && rq.curr.is_none()));
    }
}

#[test]
fn hackbench_moves_every_message() {
    let r = run_checked("numa-2s4c2t", "hackbench:g=1,l=30,f=5,pipe", 10_000);
    // Every pipe is drained and no one waits on it.
    for p in r.outcome.pipes() {
        assert_eq!(p.used, 0);
        assert!(p.readers.is_empty() && p.writers.is_empty());
    }
    assert!(
        r.reports[0].text.contains("Time: "),
        "{}",
        r.reports[0].text
    );
}

#[test]
fn contended_runqueue_locks_cost_the_spinner_time() {
    // Eighty tasks wake each other across sixteen CPUs: wakers, switching CPUs and
    // balancers meet on runqueue locks, and every spin is charged to the spinning CPU.
    let r = run_checked("numa-2s4c2t", "hackbench:g=2,l=50,f=10", 10_000);
    let cpus = &r.outcome.metrics().cpus;
    let spins: u64 = cpus.iter().map(|c| c.lock_spins).sum();
    let spin_ns: u64 = cpus
        .iter()
        .map(|c| c.overhead_ns()[Overhead::LockSpin as usize])
        .sum();
    assert!(spins > 0, "no runqueue lock was ever contended");
    assert!(spin_ns >= spins, "{spins} spins took {spin_ns} ns");
}

#[test]
fn same_seed_same_bytes_and_different_seed_differs() {
    let w = [
        "schbench:m=2,t=3,c=3ms,s=3ms",
        "nanosleep:tasks=4,sleep=20us",
    ];
    let json = |seed| {
        let s = common::spec("numa-2s4c2t", &w, 300, seed);
        let r = run(&s, &mut |_, _| {}).unwrap();
        serde_json::to_string(&to_json(&s, &r)).unwrap()
    };
    let a = json(1);
    assert_eq!(a, json(1));
    assert_ne!(a, json(2));
}

#[test]
fn virtual_time_never_goes_backwards() {
    let s = common::spec(
        "numa-2s4c2t",
        &["schbench:m=1,t=6,c=1ms,s=1ms", "hackbench:g=1,l=10,f=3"],
        100,
        3,
    );
    let mut w = prepare(&s).unwrap();
    let mut last = 0;
    while w.step().unwrap() {
        assert!(w.now().0 >= last);
        last = w.now().0;
    }
    assert!(last <= 100 * MS);
}

#[test]
fn pinned_tasks_stay_on_their_cpu() {
    let r = run_checked("numa-2s4c2t", "nanosleep:tasks=32,sleep=5us,pin", 50);
    let w = &r.outcome;
    for t in w.tasks().iter().skip(1) {
        let sid = t.sched_id.unwrap();
        let mask = t.cpus_allowed.as_ref().unwrap();
        assert!(
            mask.test(w.sched().tasks[sid].cpu),
            "{} left its CPU",
            t.name
        );
        assert_eq!(w.sched().tasks[sid].se.nr_migrations, 0);
    }
}

/// A one-task world on `machine`, the task pinned to `cpu` running `prog`.
fn tiny_world(machine: &str, cpu: usize, progs: Vec<Program>, pipes: Vec<Pipe>) -> World {
    let m = preset(machine).unwrap();
    let n = m.nr_cpus();
    let topo = build_sched_domains(&m, BuildOptions::default()).unwrap();
    let mut bp = Blueprint::default();
    for (i, p) in progs.into_iter().enumerate() {
        bp.programs.push(p);
        let mut t = TaskRt::root(format!("t{i}"), i);
        t.cpus_allowed = Some(CpuMask::single(n, cpu));
        bp.tasks.push(t);
    }
    bp.pipes = pipes;
    let mut rt = WorkloadRt::new(fairsim_des::rng::SimRng::new(1), 0);
    rt.tasks.1 = bp.tasks.len();
    bp.workloads.push(rt);
    let config = WorldConfig {
        duration: 1_000 * MS,
        check_invariants: true,
        ..WorldConfig::default()
    };
    World::new(m, topo, config, bp).unwrap()
}

#[test]
fn work_scales_with_capacity() {
    // tc2: CPUs 0-1 have capacity 1024, CPUs 2-4 capacity 430.
    let prog = || {
        Program::new()
            .op(Op::Mark { slot: 0 })
            .op(Op::Run { work: 4_300_000 })
            .op(Op::Mark { slot: 1 })
            .op(Op::Exit)
    };
    let elapsed = |cpu| {
        let mut w = tiny_world("tc2", cpu, vec![prog()], vec![]);
        w.run(&mut |_, _| {}).unwrap();
        let [Some(a), Some(b)] = w.tasks()[0].marks else {
            panic!("marks");
        };
        (b - a, w)
    };
    let (big, wb) = elapsed(0);
    let (little, wl) = elapsed(3);
    let cap = wl.sched().rqs[3].capacity_orig;
    assert_eq!(wb.sched().rqs[0].capacity_orig, 1024);
    // Ticks interrupt the work, so compare the pure task time: exact, rounded up.
    let task_big = wb.metrics().cpus[0].task_ns;
    let task_little = wl.metrics().cpus[3].task_ns;
    assert_eq!(task_big, 4_300_000);
    assert_eq!(task_little, (4_300_000u64 * 1024).div_ceil(cap));
    assert!(little > big * 2, "little {little} big {big}");
}

#[test]
fn pipe_blocks_the_writer_when_full_and_delivers_everything() {
    let writer = Program::new()
        .begin_loop(Some(10))
        .op(Op::PipeWrite {
            pipe: 0,
            bytes: 100,
        })
        .end_loop()
        .op(Op::Exit);
    let reader = Program::new()
        .op(Op::Sleep {
            dur: fairsim_engine::program::DurSpec::Fixed(200 * US),
        })
        .begin_loop(Some(10))
        .op(Op::Run { work: 10_000 })
        .op(Op::PipeRead {
            pipe: 0,
            bytes: 100,
        })
        .end_loop()
        .op(Op::Exit);
    let pipe = Pipe {
        capacity: 300,
        charge_per_msg: None,
        used: 0,
        readers: Vec::new(),
        writers: Vec::new(),
        socket: false,
    };
    let mut w = tiny_world("numa-2s4c2t", 1, vec![writer, reader], vec![pipe]);
    w.run(&mut |_, _| {}).unwrap();
    assert!(w.tasks().iter().all(|t| t.state == RtState::Exited));
    assert_eq!(w.pipes()[0].used, 0);
    // The writer blocked: it could not finish before the reader woke after 200 us + slack.
    let writer_exit = w.metrics().tasks[0].exited_at.unwrap();
    assert!(writer_exit > 200 * US, "writer exited at {writer_exit}");
}

#[test]
fn timers_expiring_in_one_interrupt_do_not_stack_their_wakees() {
    // One nanosleep task per CPU. Timer slack lets two tasks' timers on one CPU fire in
    // the same interrupt; the handler wakes them one after the other, so the second sees
    // the first queued on the CPU and goes to an idle one. If both chose the still-empty
    // CPU, the pair would share it for good and every loop would queue behind the other.
    let r = run_checked("smt-mc-1s4c2t", "nanosleep:tasks=8,sleep=1us", 100);
    let run_delay: u64 = r
        .outcome
        .sched()
        .rqs
        .iter()
        .map(|rq| rq.stats.run_delay)
        .sum();
    assert!(run_delay < MS, "tasks waited {run_delay} ns for a CPU");
}

#[test]
fn an_idle_cpu_reschedules_only_when_asked() {
    // Each nanosleep loop switches to the task once and back to idle once, so an idle
    // CPU's schedule() calls that pick idle (sched_goidle) match the timeslices (pcount),
    // as on the kernel (seed 000's cpu8: 89,390 against 89,393). A resched request that a
    // wakeup already delivered must not make a CPU schedule again later.
    let r = run_checked("numa-2s8c2t", "nanosleep:tasks=32,sleep=1us", 50);
    let rqs = &r.outcome.sched().rqs;
    let goidle: u64 = rqs.iter().map(|rq| rq.stats.sched_goidle).sum();
    let pcount: u64 = rqs.iter().map(|rq| rq.stats.pcount).sum();
    assert!(pcount > 10_000, "only {pcount} timeslices");
    assert!(
        goidle * 100 <= pcount * 102,
        "sched_goidle {goidle} against pcount {pcount}"
    );
}

#[test]
fn nice_5_gets_335_of_1024_plus_335_of_a_shared_cpu() {
    // Two CPU hogs on cpu0, at nice 0 and nice 5: EEVDF shares the CPU by weight,
    // sched_prio_to_weight's 1024 and 335.
    let s = common::spec(
        "smt-mc-1s4c2t",
        &[
            "sysbench-cpu:threads=1,events=0,time=100s,cpus=0",
            "taskset -c 0 nice -n 5 sysbench cpu --threads=1 --events=0 --time=100 run",
        ],
        2000,
        1,
    );
    assert_eq!(s.workloads[1].nice, Some(5));
    let r = fairsim_workloads::run::run(&s, &mut |_, _| {}).unwrap();
    let j = fairsim_output::to_json(&s, &r);
    let user: Vec<u64> = j["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["user_ns"].as_u64().unwrap())
        .filter(|&ns| ns > 0)
        .collect();
    assert_eq!(user.len(), 2, "{user:?}");
    let ratio = user[0] as f64 / user[1] as f64;
    assert!((ratio / (1024.0 / 335.0) - 1.0).abs() < 0.01, "{ratio}");
}

/// Each task's `(user_ns, wakeups, mean wakeup latency ns, max wakeup latency ns)` of a
/// 2 s run of `workloads` on a four-core SMT machine, for tasks that ran.
fn per_task(workloads: &[&str]) -> Vec<(u64, u64, u64, u64)> {
    per_task_noise(workloads, NoiseModel::OFF)
}

/// [`per_task`] with the run's noise model `noise`.
fn per_task_noise(workloads: &[&str], noise: NoiseModel) -> Vec<(u64, u64, u64, u64)> {
    let mut s = common::spec("smt-mc-1s4c2t", workloads, 2000, 1);
    s.config.noise = noise;
    let r = fairsim_workloads::run::run(&s, &mut |_, _| {}).unwrap();
    let j = fairsim_output::to_json(&s, &r);
    j["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            let n = |k: &str| t[k].as_u64().unwrap();
            (
                n("user_ns"),
                n("wakeups"),
                n("wakeup_latency_mean_ns"),
                n("wakeup_latency_max_ns"),
            )
        })
        .filter(|t| t.0 > 0)
        .collect()
}

#[test]
fn a_sched_idle_task_weighs_3_never_preempts_and_is_always_preempted() {
    // A SCHED_IDLE hog beside a normal one on cpu0 gets about 3 / (1024 + 3) of it
    // (WEIGHT_IDLEPRIO); the first tick's worth before the normal hog's first slice
    // ends is the error the bound allows.
    let hogs = per_task(&[
        "sysbench-cpu:threads=1,events=0,time=100s,cpus=0",
        "taskset -c 0 chrt -i 0 sysbench cpu --threads=1 --events=0 --time=100 run",
    ]);
    assert_eq!(hogs.len(), 2, "{hogs:?}");
    let share = hogs[1].0 as f64 / (hogs[0].0 + hogs[1].0) as f64;
    assert!(share < 0.005 && share > 0.002, "idle share {share}");
    // A normal task waking on a CPU that runs a SCHED_IDLE hog preempts it at once
    // (check_preempt_wakeup_fair's idle rule); beside a normal hog, EEVDF makes it wait
    // for the hog's slice now and then. How often depends on where each wakeup falls in
    // the hog's slice (its protection under RUN_TO_PARITY, the sleeper's lag): without
    // noise the loop locks into one phase, so the run draws its timings with the
    // default noise, as a machine does.
    let sleeper = "nanosleep:n=1,cpus=0";
    let beside_idle = per_task_noise(
        &[
            "sysbench-cpu:threads=1,events=0,time=100s,cpus=0,policy=idle",
            sleeper,
        ],
        NoiseModel::DEFAULT,
    );
    let beside_normal = per_task_noise(
        &["sysbench-cpu:threads=1,events=0,time=100s,cpus=0", sleeper],
        NoiseModel::DEFAULT,
    );
    let lat = |v: &[(u64, u64, u64, u64)]| *v.iter().find(|t| t.1 > 100).unwrap();
    assert!(lat(&beside_idle).3 < 10_000, "{beside_idle:?}");
    assert!(lat(&beside_normal).3 > 1_000_000, "{beside_normal:?}");
    // A SCHED_IDLE or SCHED_BATCH sleeper never preempts the normal hog: each of its
    // wakeups waits for the next tick or the hog's slice, so it wakes ~100 times less.
    for policy in ["idle", "batch"] {
        let w = format!("{sleeper},policy={policy}");
        let v = per_task(&["sysbench-cpu:threads=1,events=0,time=100s,cpus=0", &w]);
        let t = v.iter().find(|t| t.1 > 0).unwrap();
        assert!(t.1 * 20 < lat(&beside_normal).1, "{policy}: {v:?}");
        assert!(t.2 > 1_000_000, "{policy}: {v:?}");
    }
}
