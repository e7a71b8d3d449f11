//! forkbench: pipelines pass every byte, every command is forked, exec'd and reaped, user
//! plus system time is the workload's CPU time, options are checked, runs are
//! deterministic.

use crate::common;

use fairsim_des::time::MS;
use fairsim_engine::program::{Op, SysCost};
use fairsim_engine::world::RtState;
use fairsim_engine::Outcome;
use fairsim_output::to_json;
use fairsim_workloads::{run, RunResult, WorkloadSpec};

fn run_fb(w: &str, seed: u64) -> RunResult {
    let mut s = common::spec("numa-2s4c2t", &[w], 20_000, seed);
    s.config.check_invariants = true;
    run(&s, &mut |_, _| {}).unwrap_or_else(|e| panic!("{w}: {e}"))
}

/// The user and system work a task's program asks for, its loops unrolled: `Run` is
/// user work; `RunSys` and the cost table's `exec`/`exit` are system work.
fn program_work(world: &Outcome, t: usize) -> (u64, u64) {
    let ops = &world.programs()[world.tasks()[t].prog].ops;
    let cost = world.config().cost;
    let (mut user, mut sys) = (0u64, 0u64);
    let mut mult = vec![1u64];
    for op in ops {
        let m = *mult.last().unwrap();
        match *op {
            Op::Run { work } => user += work * m,
            Op::RunSys { work } => sys += work * m,
            Op::RunSysCost { cost: c } => sys += c.of(&cost) * m,
            Op::LoopBegin { times } => mult.push(m * times.unwrap()),
            Op::LoopEnd { .. } => {
                mult.pop();
            }
            _ => {}
        }
    }
    (user, sys)
}

/// Bytes the task's program reads from its pipe.
fn bytes_read(world: &Outcome, t: usize) -> u64 {
    let ops = &world.programs()[world.tasks()[t].prog].ops;
    let mut mult = vec![1u64];
    let mut n = 0;
    for op in ops {
        let m = *mult.last().unwrap();
        match *op {
            Op::PipeRead { bytes, .. } => n += u64::from(bytes) * m,
            Op::LoopBegin { times } => mult.push(m * times.unwrap()),
            Op::LoopEnd { .. } => {
                mult.pop();
            }
            _ => {}
        }
    }
    n
}

#[test]
fn a_pipeline_passes_every_byte_and_both_ends_finish() {
    // 10000 bytes in 4096-byte writes: two full chunks and a tail of 1808.
    let r = run_fb(
        "forkbench:cmds=10,pipe=50,bytes=10000,chunk=4096,work=50us..200us",
        3,
    );
    let w = &r.outcome;
    assert!(r.reports[0].finished, "{}", r.reports[0].text);
    assert_eq!(w.pipes().len(), 5);
    for p in w.pipes() {
        assert_eq!(p.used, 0, "a pipe kept data");
        assert!(p.readers.is_empty() && p.writers.is_empty());
    }
    let readers: Vec<usize> = (0..w.tasks().len())
        .filter(|&t| w.tasks()[t].name.ends_with('b'))
        .collect();
    assert_eq!(readers.len(), 5);
    for &b in &readers {
        let a = b - 1;
        assert!(w.tasks()[a].name.ends_with('a'));
        assert_eq!(w.tasks()[a].pipe_base, w.tasks()[b].pipe_base);
        assert_eq!(bytes_read(w, b), 10_000, "{}", w.tasks()[b].name);
        for x in [a, b] {
            assert_eq!(w.tasks()[x].state, RtState::Exited, "{}", w.tasks()[x].name);
            // Each end got to its program's `Exit`, past every read and write.
            let ops = &w.programs()[w.tasks()[x].prog].ops;
            assert_eq!(w.tasks()[x].pc, ops.len() - 1);
            assert_eq!(ops[w.tasks()[x].pc], Op::Exit);
        }
    }
    let j = &r.reports[0].json;
    assert_eq!(j["pipelines"], 5);
    assert_eq!(j["pipe_bytes"], 50_000);
}

#[test]
fn every_command_is_forked_execd_and_reaped() {
    let r = run_fb("forkbench:scripts=2,cmds=12,pipe=25,work=100us..1ms", 5);
    let w = &r.outcome;
    assert!(r.reports[0].finished);
    // Per script: a shell, 12 commands, 3 of them pipelines with a second process.
    assert_eq!(w.tasks().len(), 2 * (1 + 12 + 3));
    assert_eq!(w.live_tasks(), 0);
    for (t, task) in w.tasks().iter().enumerate() {
        assert!(task.sched_id.is_some(), "{} never forked", task.name);
        assert_eq!(task.state, RtState::Exited, "{}", task.name);
        assert_eq!(w.metrics().tasks[t].execs, 1, "{} exec'd once", task.name);
        assert!(w.metrics().tasks[t].exited_at.is_some());
    }
    for shell in [0, 16] {
        let sh = &w.tasks()[shell];
        assert!(sh.name.starts_with("fb-sh"));
        // Every child's exit was reaped by a wait: no token is left over.
        assert_eq!(sh.tokens, 0);
        assert_eq!(sh.next_child, sh.children.1);
        let sh_exit = w.metrics().tasks[shell].exited_at.unwrap();
        for c in sh.children.0..sh.children.1 {
            assert_eq!(w.tasks()[c].parent, Some(shell));
            assert!(w.metrics().tasks[c].exited_at.unwrap() < sh_exit);
        }
    }
    let j = &r.reports[0].json;
    assert_eq!(j["processes"], 32);
    assert_eq!(j["execs"], 32);
    assert_eq!(j["commands"], 24);
}

#[test]
fn user_plus_sys_is_the_workloads_cpu_time() {
    for cputime in ["precise", "tick"] {
        let r = run_fb(
            // mem=0: work off its home node would otherwise take longer than asked.
            &format!("forkbench:cmds=40,pipe=10,work=100us..2ms,cputime={cputime},mem=0"),
            9,
        );
        let w = &r.outcome;
        assert!(r.reports[0].finished);
        let (mut user, mut sys, mut asked_user, mut asked_sys) = (0, 0, 0, 0);
        for t in 0..w.tasks().len() {
            let m = &w.metrics().tasks[t];
            user += m.user_ns;
            sys += m.sys_ns;
            let (u, s) = program_work(w, t);
            asked_user += u;
            asked_sys += s;
        }
        // Every CPU capacity is 1024 at full frequency and no work is slowed by remote
        // memory: user time is exactly the user
        // work the programs ask for, and system time holds their system work plus the
        // kernel work charged to them (forks, wakeups, exits, ticks).
        assert_eq!(user, asked_user, "{cputime}");
        assert!(sys > asked_sys, "{cputime}: {sys} <= {asked_sys}");
        // Conservation: every busy ns of every CPU is some task's user or system time,
        // or kernel work done for no task.
        let busy: u64 = w
            .metrics()
            .cpus
            .iter()
            .map(|c| c.task_ns + c.overhead_total())
            .sum();
        let unowned: u64 = w.metrics().cpus.iter().map(|c| c.no_task_kernel_ns).sum();
        assert_eq!(user + sys + unowned, busy, "{cputime}");
        // Segments are the JSON's cpu_time_ns; the charges come on top.
        let segs: u64 = (0..w.tasks().len())
            .flat_map(|t| w.metrics().tasks[t].cpu_ns.values())
            .sum();
        assert_eq!(segs, asked_user + asked_sys, "{cputime}");
        // The report's User and System split the same total either way.
        let j = &r.reports[0].json;
        let (ru, rs) = (
            j["user_ns"].as_u64().unwrap(),
            j["sys_ns"].as_u64().unwrap(),
        );
        assert_eq!(ru + rs, user + sys, "{cputime}");
        assert_eq!(j["user_precise_ns"], user);
        assert_eq!(j["sys_precise_ns"], sys);
        if cputime == "precise" {
            assert_eq!((ru, rs), (user, sys));
        }
        let doc = to_json(&common::spec("numa-2s4c2t", &["forkbench"], 1, 1), &r);
        for task in doc["tasks"].as_array().unwrap() {
            assert!(task["user_ns"].is_u64() && task["sys_ns"].is_u64());
        }
    }
}

#[test]
fn the_cost_tables_exec_and_exit_are_system_time_of_the_process() {
    let mut s = common::spec(
        "numa-2s4c2t",
        &["forkbench:cmds=3,pipe=0,work=1ms,startup=0,parse=0"],
        20_000,
        1,
    );
    s.config.cost.apply("exec=300us").unwrap();
    s.config.cost.apply("exit=50us").unwrap();
    let r = run(&s, &mut |_, _| {}).unwrap();
    let w = &r.outcome;
    for t in 1..4 {
        let m = &w.metrics().tasks[t];
        assert_eq!(m.user_ns, MS, "{}", w.tasks()[t].name);
        assert!(m.sys_ns >= 350_000, "{}: {}", w.tasks()[t].name, m.sys_ns);
        assert_eq!(program_work(w, t), (MS, 350_000));
    }
    assert_eq!(SysCost::Exec.of(&w.config().cost), 300_000);
}

#[test]
fn bad_options_give_one_line_errors_naming_the_key() {
    for (spec, key) in [
        ("forkbench:scripts=0", "scripts"),
        ("forkbench:cmds=x", "cmds"),
        ("forkbench:work=3ms..1ms", "work"),
        ("forkbench:work=-1us", "work"),
        ("forkbench:work", "work"),
        ("forkbench:dist=normal", "dist"),
        ("forkbench:pipe=101", "pipe"),
        ("forkbench:chunk=0", "chunk"),
        ("forkbench:bytes=-4", "bytes"),
        ("forkbench:parse=1h", "parse"),
        ("forkbench:startup=abc", "startup"),
        ("forkbench:cputime=virt", "cputime"),
        ("forkbench:bogus=1", "bogus"),
    ] {
        let e = WorkloadSpec::parse(spec).unwrap_err().to_string();
        assert!(e.contains(key) && e.contains("forkbench: "), "{spec}: {e}");
        assert!(!e.contains('\n'), "{spec}: {e}");
    }
    let ok = WorkloadSpec::parse("forkbench:j=4,work=1ms,dist=uniform").unwrap();
    let c = ok.canonical(8);
    assert!(
        c.starts_with("forkbench:scripts=4,cmds=1000,work=1ms..1ms,dist=uniform,pipe=3,bytes=8192"),
        "{c}"
    );
}

#[test]
fn same_seed_same_bytes() {
    let w = "forkbench:scripts=2,cmds=20,pipe=20";
    let spec = common::spec("numa-2s4c2t", &[w], 20_000, 11);
    let a = run(&spec, &mut |_, _| {}).unwrap();
    let b = run(&spec, &mut |_, _| {}).unwrap();
    let ja = serde_json::to_string(&to_json(&spec, &a)).unwrap();
    let jb = serde_json::to_string(&to_json(&spec, &b)).unwrap();
    assert_eq!(ja, jb);
    assert_eq!(a.reports[0].text, b.reports[0].text);
    let other = common::spec("numa-2s4c2t", &[w], 20_000, 12);
    let c = run(&other, &mut |_, _| {}).unwrap();
    assert_ne!(
        a.reports[0].json["elapsed_ns"], c.reports[0].json["elapsed_ns"],
        "another seed draws other works"
    );
}
