//! The memory-locality model (`fairsim_engine::memory`): home nodes by first touch, the
//! off-node slowdown of task work, and its accounting.

use crate::common;

use fairsim_des::time::MS;
use fairsim_engine::program::{Op, Program};
use fairsim_engine::world::Blueprint;
use fairsim_engine::world::{TaskRt, WorkloadRt};
use fairsim_engine::{World, WorldConfig};
use fairsim_topology::source::preset;
use fairsim_topology::{build_sched_domains, BuildOptions, CpuMask};
use fairsim_workloads::run;

/// numa-2s4c2t: CPUs 0-7 are node 0, 8-15 node 1, SLIT 10/21.
const MACHINE: &str = "numa-2s4c2t";

/// One task pinned to `cpu` with its memory already on `home`, running `prog` in a
/// workload of intensity `mem` per mille.
fn one_task(cpu: usize, home: Option<usize>, mem: u32, prog: Program) -> World {
    let m = preset(MACHINE).unwrap();
    let n = m.nr_cpus();
    let topo = build_sched_domains(&m, BuildOptions::default()).unwrap();
    let mut bp = Blueprint::default();
    bp.programs.push(prog);
    let mut t = TaskRt::root("t".into(), 0);
    t.cpus_allowed = Some(CpuMask::single(n, cpu));
    t.home_node = home;
    bp.tasks.push(t);
    bp.workloads.push(WorkloadRt {
        tasks: (0, 1),
        ..WorkloadRt::new(fairsim_des::rng::SimRng::new(1), 0)
    });
    bp.workload_mem = vec![mem];
    let config = WorldConfig {
        duration: 1_000 * MS,
        check_invariants: true,
        ..WorldConfig::default()
    };
    World::new(m, topo, config, bp).unwrap()
}

const WORK: u64 = 3_000_000;

fn work() -> Program {
    Program::new().op(Op::Run { work: WORK }).op(Op::Exit)
}

#[test]
fn work_away_from_its_memory_runs_slower_by_the_stalled_share_of_the_slit_ratio() {
    // Memory on node 0, running on CPU 9 of node 1, 10% of the time stalled on DRAM:
    // 1 + 0.1 * (21 - 10) / 10 = 1.11 times as long. The rate is integer: 1024 units per
    // ns scaled to 1024 * 10000 / 11100 = 922.
    let mut w = one_task(9, Some(0), 100, work());
    w.run(&mut |_, _| {}).unwrap();
    let rate = 1024 * 10_000 / 11_100;
    assert_eq!(w.metrics().cpus[9].task_ns, (WORK * 1024).div_ceil(rate));
    assert_eq!(
        w.metrics().tasks[0].off_node_ns,
        w.metrics().cpus[9].task_ns
    );
    assert_eq!(w.metrics().cpus[9].remote_ns, w.metrics().cpus[9].task_ns);
    // At home, or with no DRAM stalls, the work takes what it takes; the time away from
    // home is counted either way, since it says where the task ran.
    for (home, mem, away) in [(Some(1), 100, 0), (Some(0), 0, WORK)] {
        let mut w = one_task(9, home, mem, work());
        w.run(&mut |_, _| {}).unwrap();
        assert_eq!(w.metrics().cpus[9].task_ns, WORK, "home {home:?} mem {mem}");
        assert_eq!(
            w.metrics().cpus[9].remote_ns,
            away,
            "home {home:?} mem {mem}"
        );
    }
    // A fully DRAM-bound task runs at the latency ratio, 10/21.
    let mut w = one_task(9, Some(0), 1000, work());
    w.run(&mut |_, _| {}).unwrap();
    assert_eq!(
        w.metrics().cpus[9].task_ns,
        (WORK * 1024).div_ceil(1024 * 10 / 21)
    );
}

#[test]
fn a_new_task_and_an_exec_take_the_node_they_first_run_on() {
    // A task without a home takes the node it first runs on: no slowdown.
    let mut w = one_task(12, None, 1000, work());
    w.run(&mut |_, _| {}).unwrap();
    assert_eq!(w.tasks()[0].home_node, Some(1));
    assert_eq!(w.metrics().cpus[12].task_ns, WORK);
    // exec throws the old image away: the new one is faulted in where the task runs, so
    // the work after it is local however far the old memory was.
    let prog = Program::new()
        .op(Op::Exec)
        .op(Op::Run { work: WORK })
        .op(Op::Exit);
    let mut w = one_task(12, Some(0), 1000, prog);
    w.run(&mut |_, _| {}).unwrap();
    assert_eq!(w.tasks()[0].home_node, Some(1));
    assert_eq!(w.metrics().tasks[0].off_node_ns, 0);
    assert_eq!(w.metrics().cpus[12].task_ns, WORK);
    // The same with work before the exec: that work runs away from its memory, at the
    // latency ratio; the work after it, on the same CPU, at full speed again.
    let prog = Program::new()
        .op(Op::Run { work: WORK })
        .op(Op::Exec)
        .op(Op::Run { work: WORK })
        .op(Op::Exit);
    let mut w = one_task(12, Some(0), 1000, prog);
    w.run(&mut |_, _| {}).unwrap();
    let away = (WORK * 1024).div_ceil(1024 * 10 / 21);
    assert_eq!(w.metrics().tasks[0].off_node_ns, away);
    assert_eq!(w.metrics().cpus[12].task_ns, away + WORK);
}

#[test]
fn processes_own_their_memory_and_threads_share_their_process() {
    let node = |cpu: usize| usize::from(cpu >= 8);
    for (spec, threads) in [
        ("hackbench:g=2,l=50,f=4,pipe", false),
        ("hackbench:g=2,l=50,f=4,pipe,threads", true),
    ] {
        let mut s = common::spec(MACHINE, &[spec], 2_000, 3);
        s.config.check_invariants = true;
        let r = run(&s, &mut |_, _| {}).unwrap();
        let w = &r.outcome;
        assert!(r.reports[0].finished, "{spec}");
        let main_home = w.tasks()[0].home_node.expect("main ran");
        let mut away = 0;
        for (x, t) in w.tasks().iter().enumerate().skip(1) {
            let home = t.home_node.expect("every task ran");
            if threads {
                assert_eq!(
                    home, main_home,
                    "{spec}: thread {} has its own home",
                    t.name
                );
            }
            let m = &w.metrics().tasks[x];
            // Time off the home node is exactly the time on the other node's CPUs.
            let off: u64 = m
                .cpu_ns
                .iter()
                .filter(|(c, _)| node(*c) != home)
                .map(|(_, ns)| ns)
                .sum();
            assert_eq!(m.off_node_ns, off, "{spec}: {}", t.name);
            if !threads && m.node_migrations == 0 {
                assert_eq!(off, 0, "{spec}: {} never left its first node", t.name);
            }
            away += off;
        }
        let remote: u64 = w.metrics().cpus.iter().map(|c| c.remote_ns).sum();
        assert_eq!(remote, away, "{spec}");
    }
}

#[test]
fn workloads_that_touch_no_dram_run_as_before() {
    // nanosleep's default intensity is 0: the run is the same bytes as with mem=0 named.
    let json = |w: &str| {
        let s = common::spec(MACHINE, &[w], 20, 5);
        let r = run(&s, &mut |_, _| {}).unwrap();
        let mut v = fairsim_output::to_json(&s, &r);
        v["workloads"] = serde_json::Value::Null;
        v.to_string()
    };
    assert_eq!(
        json("nanosleep:tasks=16,sleep=5us"),
        json("nanosleep:tasks=16,sleep=5us,mem=0")
    );
}
