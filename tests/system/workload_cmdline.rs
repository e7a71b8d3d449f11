//! The tools' own command lines as `--workload` specifications: each pasted command gives
//! the same `WorkloadSpec` as its `key=value` form, an omitted option takes the tool's
//! own default (the source line is cited beside each), and bad input is one line naming
//! the tool and its option.

use fairsim_des::time::{MS, SEC, US};
use fairsim_workloads::{cmdline, Affinity, NetperfTest, SchbenchVersion, Workload, WorkloadSpec};

fn spec(text: &str) -> WorkloadSpec {
    WorkloadSpec::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"))
}

fn error(text: &str) -> String {
    match WorkloadSpec::parse(text) {
        Ok(s) => panic!("{text}: accepted as {s:?}"),
        Err(e) => e.to_string(),
    }
}

/// Asserts that a command line and a key form parse to the same specification.
fn same(line: &str, keys: &str) {
    assert_eq!(spec(line), spec(keys), "{line} vs {keys}");
}

#[test]
fn the_rule_that_tells_a_command_line_from_a_key_list() {
    for line in [
        "schbench -m 2",
        "  schbench   -m 2 ",
        "./schbench -r 1",
        "schbench@2016",
        "perf bench sched messaging",
        "rt-app x.json",
        "taskset -c 0-3 hackbench",
    ] {
        assert!(cmdline::is_command_line(line), "{line}");
    }
    for keys in [
        "schbench",
        "schbench:m=2,t=4",
        "schbench:m=2, t=4",
        "hackbench :g=4",
        "rtapp:/my dir/x.json",
        "sysbench-cpu:threads=2",
        " nanosleep ",
    ] {
        assert!(!cmdline::is_command_line(keys), "{keys}");
    }
    // The key forms above parse as they always did.
    same("hackbench :g=4", "hackbench:g=4");
}

#[test]
fn schbench_current_and_2016() {
    same(
        "schbench -m 2 -t 4 -c 30000 -s 30000 -r 30",
        "schbench:m=2,t=4,c=30000,s=30000,r=30",
    );
    // Attached values, long names with = or a separate value, a unique prefix.
    same(
        "schbench -m2 --threads=4 --cputime 100 --sleep=200 -r1",
        "schbench:m=2,t=4,c=100,s=200,r=1",
    );
    // The tool's defaults: worker_threads = 16, runtime = 30, sleeptime = 30000,
    // cputime = 30000 (masoncl/schbench dd2adce schbench.c lines 36-42; the same in seed
    // 001's printed source lines 175-181). -r differs from the key form's (none: the
    // run's --duration), so the command line spells it out.
    let w = spec("schbench");
    let Workload::Schbench(s) = spec("schbench -m 3").workload else {
        panic!("not schbench")
    };
    assert_eq!((s.message_threads, s.threads), (3, 16));
    assert_eq!(
        (s.cputime, s.sleeptime, s.runtime),
        (30_000 * US, 30_000 * US, Some(30 * SEC))
    );
    assert_eq!(s.version, SchbenchVersion::Current);
    let Workload::Schbench(k) = w.workload else {
        panic!("not schbench")
    };
    assert_eq!(
        k.runtime, None,
        "the key form still leaves -r to --duration"
    );
    // message_threads = 2 (dd2adce line 34) when -m is left out.
    same("schbench -t 4 -r 5", "schbench:t=4,r=5,c=30000,s=30000");

    // Seed 001's command, run by the 2016 binary: -m is read and ignored.
    let line = "schbench@2016 -c 30000 -s 30000 -m 6 -t 24 -r 30";
    same(line, "schbench:version=2016,m=6,t=24,c=30ms,s=30ms,r=30");
    let w = spec(line);
    let Workload::Schbench(s) = &w.workload else {
        panic!("not schbench")
    };
    assert_eq!(
        (s.version, s.m, s.message_threads),
        (SchbenchVersion::V2016, Some(6), 2)
    );
    assert_eq!(w.notes().len(), 1, "the ignored -m is said");
    // A bare schbench@2016 is a command line too, with the tool's defaults.
    same(
        "schbench@2016",
        "schbench:version=2016,t=16,c=30000,s=30000,r=30",
    );
    same("./schbench -r 1", "schbench:r=1");
}

#[test]
fn schbench_errors_name_the_option() {
    assert_eq!(
        error("schbench -Z 3"),
        "--workload: schbench: unknown option -Z (allowed: -m -t -r -s -c)"
    );
    assert_eq!(
        error("schbench -p 100"),
        "--workload: schbench: option -p (--pipe) is not modelled by fairsim (allowed: -m -t -r -s -c)"
    );
    assert_eq!(
        error("schbench -t"),
        "--workload: schbench: -t needs a number of workers per message thread"
    );
    assert_eq!(
        error("schbench -t four"),
        "--workload: schbench: -t needs a number of workers per message thread, not 'four'"
    );
    assert!(error("schbench -r 0").starts_with("--workload: schbench: -r: invalid value '0'"));
    assert!(error("schbench@2016 --threads=0")
        .starts_with("--workload: schbench@2016: --threads: invalid value '0'"));
    // The 2016 binary has no -d in its option string, nor -p.
    assert!(error("schbench@2016 -d 6").contains("schbench@2016: unknown option -d"));
    assert!(error("schbench@2016 -p 1").contains("schbench@2016: unknown option -p"));
    assert!(error("schbench -m 2 extra").contains("schbench: unexpected argument 'extra'"));
    assert!(
        error("schbench --r 2").contains("schbench: option --r is ambiguous (--runtime, --rps)")
    );
    for e in [
        error("schbench -Z"),
        error("schbench -t x"),
        error("schbench 'a"),
    ] {
        assert!(!e.contains('\n'), "{e}");
    }
}

#[test]
fn hackbench_and_perf_bench_messaging() {
    same("hackbench -g 4 -l 1000 -p", "hackbench:g=4,l=1000,pipe");
    same(
        "hackbench --groups=4 --loops 1000 -f10 -s 200 -T",
        "hackbench:g=4,l=1000,f=10,s=200,pipe=0,threads",
    );
    // -T and -P set the same process_mode: the last one wins.
    same("hackbench -T -P", "hackbench");
    same("hackbench -pT", "hackbench:pipe,threads");
    // rt-tests' defaults: datasize = 100, loops = 100, num_groups = 10, num_fds = 20,
    // process mode, sockets (hackbench.c lines 33-47).
    let Workload::Hackbench(h) = spec("hackbench -p").workload else {
        panic!("not hackbench")
    };
    assert_eq!((h.groups, h.loops, h.fds, h.datasize), (10, 100, 20, 100));
    assert!(h.pipe && !h.threads);

    same(
        "perf bench sched messaging -g 8 -l 5000 -p -t",
        "hackbench:g=8,l=5000,pipe,threads",
    );
    // perf's defaults: nr_loops = 100, num_groups = 10 (sched-messaging.c lines 36-38),
    // num_fds = 20 (line 296), DATASIZE 100 (line 33); sockets and processes.
    same(
        "perf bench sched messaging",
        "hackbench:g=10,l=100,f=20,s=100",
    );
    same(
        "perf bench sched messaging --group=2 --nr_loops 7 -pt",
        "hackbench:g=2,l=7,pipe,threads",
    );
    same(
        "perf bench sched messaging -g2 --pipe --no-pipe",
        "hackbench:g=2",
    );

    assert_eq!(
        error("hackbench -g"),
        "--workload: hackbench: -g needs a number"
    );
    assert_eq!(
        error("hackbench -g x"),
        "--workload: hackbench: -g needs a number, not 'x'"
    );
    assert!(error("hackbench -F").contains("hackbench: option -F (--fifo) is not modelled"));
    assert!(error("hackbench -g 0").starts_with("--workload: hackbench: -g: invalid value '0'"));
    assert!(error("perf bench sched messaging -f 4")
        .contains("perf bench sched messaging: unknown option -f (allowed: -p -t -g -l --loop)"));
    assert!(error("perf bench -r 3 sched messaging")
        .contains("perf bench: option -r (--repeat) is not modelled"));
    assert!(error("perf bench sched pipe").contains("perf bench: 'sched pipe' is not modelled"));
    assert!(error("perf stat ls").contains("perf: unexpected argument"));
}

#[test]
fn sysbench_0_4_and_1_0() {
    // 0.4: --max-requests is the total of all threads; fairsim's events are per thread.
    same(
        "sysbench --test=cpu --num-threads=2 --max-requests=1000 run",
        "sysbench-cpu:threads=2,events=500",
    );
    // 1.0.
    same(
        "sysbench cpu --threads=2 --events=1000 run",
        "sysbench-cpu:threads=2,events=500",
    );
    same(
        "sysbench cpu --threads=2 --events=1000 --time=0 run",
        "sysbench-cpu:threads=2,events=500",
    );
    // 1.0 still takes --test= and the 0.4 names as deprecated aliases.
    same(
        "sysbench --test=cpu --threads=4 --max-requests=400 run",
        "sysbench-cpu:threads=4,events=100",
    );
    // 0.4's defaults: num-threads 1, max-requests 10000, max-time 0 (sysbench.c lines
    // 83-85 on branch 0.4); cpu-max-prime 10000 (sb_cpu.c line 34): fairsim's 1 ms event.
    same(
        "sysbench --test=cpu run",
        "sysbench-cpu:threads=1,events=10000,event=1ms",
    );
    // --cpu-max-prime scales the event's work by the loop's trial divisions.
    let Workload::SysbenchCpu(s) =
        spec("sysbench cpu --events=10 --cpu-max-prime=20000 run").workload
    else {
        panic!("not sysbench")
    };
    assert!(s.event > 2 * MS && s.event < 3 * MS, "{}", s.event);

    // 1.0's defaults: events 0 (no limit), time 10 (src/sysbench.c lines 97-99 at 1.0.20):
    // the run lasts the time limit and counts the events done.
    assert_eq!(
        spec("sysbench cpu --threads=2 run"),
        spec("sysbench-cpu:threads=2,events=0,event=1ms,time=10s")
    );
    assert!(
        error("sysbench cpu --time=0 run").contains("--events=0 and --time=0 would run for ever")
    );
    assert!(error("sysbench --test=cpu --num-threads=3 run")
        .contains("--max-requests=10000 is not a multiple of --num-threads=3"));
    assert!(error("sysbench cpu --events=100000 run")
        .contains("sysbench: --time=10 would stop the run before --events=100000"));
    assert!(error("sysbench cpu --threads 2 run")
        .contains("sysbench: --threads needs a value (--threads=VALUE)"));
    assert!(error("sysbench cpu --threads=two --events=2 run")
        .contains("sysbench: --threads needs a number, not 'two'"));
    assert!(error("sysbench --test=cpu --threads-x=2 run")
        .contains("sysbench: unknown option --threads-x"));
    assert!(error("sysbench --test=cpu --report-interval=1 run")
        .contains("option --report-interval is not modelled"));
    assert!(error("sysbench --test=threads run")
        .contains("test 'threads' is not modelled by fairsim; allowed: cpu"));
    assert!(error("sysbench cpu --events=10 prepare").contains("command 'prepare' is not modelled"));
    assert!(error("sysbench cpu --events=10").contains("sysbench: no command; allowed: run"));
}

/// The commands the seed postings printed, as pasted (shell variables filled in).
#[test]
fn the_seeds_commands() {
    // Seed 000.
    same(
        "netperf -4 -H 127.0.0.1 -t TCP_RR -c -C -l 100",
        "netperf:4,H=127.0.0.1,t=TCP_RR,c,C,l=100",
    );
    same(
        "tbench -t 100 224 127.0.0.1",
        "tbench:t=100,clients=224,server=127.0.0.1",
    );
    same(
        "hackbench -g 4 --process --pipe -l 200000 -s 100 -f 28",
        "hackbench:g=4,pipe,l=200000,s=100,f=28,process",
    );
    same(
        "hackbench -g 4 --thread -l 200000 -s 100 -f 28",
        "hackbench:g=4,l=200000,s=100,f=28,threads",
    );
    same("schbench -m 4 -t 56 -r 30", "schbench:m=4,t=56,r=30");
    // Seed 001, on the binary it printed.
    same(
        "./schbench@2016 -c 30000 -s 30000 -m 6 -t 24 -r 30",
        "schbench:version=2016,m=6,t=24,c=30ms,s=30ms,r=30",
    );
    // Seed 002.
    same("cyclictest -a -t 2 -n -D 10", "cyclictest:a,t=2,n,D=10");
    same("hackbench", "hackbench:g=10,l=100,f=20,s=100");
    same(
        "sysbench --test=cpu --num-threads=5 --max-requests=1000 run",
        "sysbench-cpu:threads=5,events=200",
    );
    // Seed 003: perf's old long name for -l.
    same(
        "perf bench sched messaging --pipe --thread --group 8 --loop 5000",
        "hackbench:g=8,l=5000,pipe,threads",
    );
}

#[test]
fn cyclictest_options() {
    same("cyclictest -a -t 2 -n -D 10", "cyclictest:a,t=2,n,D=10");
    same(
        "cyclictest -a3 -t -n -i 200 -d 0 -l 1000 -p 80 -q -m",
        "cyclictest:a=3,t,n,i=200,d=0,l=1000,p=80,q",
    );
    same(
        "cyclictest --threads=4 --affinity --nanosleep --duration=1m",
        "cyclictest:t=4,a,n,D=1m",
    );
    // -S is -t -a -n, whatever -t and -a said.
    same("cyclictest -t 3 -S -i 100", "cyclictest:t,a,n,i=100");
    // The defaults: num_threads = 1, interval = DEFAULT_INTERVAL (1000), distance
    // DEFAULT_DISTANCE (500), priority 0, no -D, no -l (rt-tests cyclictest.c lines 41-42,
    // 974-981, 1247).
    let Workload::Cyclictest(c) = spec("cyclictest -n").workload else {
        panic!("not cyclictest")
    };
    assert_eq!(
        (c.threads, c.interval_us, c.distance_us, c.priority),
        (Some(1), 1000, 500, 0)
    );
    assert_eq!(
        (c.affinity, c.duration, c.loops, c.quiet),
        (Affinity::Unspecified, None, None, false)
    );
    // -a 0: atoi("0") is zero, so cyclictest leaves "0" as an argument.
    assert!(error("cyclictest -n -a 0").contains("cyclictest: unexpected argument '0'"));

    assert!(error("cyclictest -t 2").contains("cyclictest: -n is required"));
    assert!(error("cyclictest -n -h 100").contains("cyclictest: option -h (--histogram) is not modelled by fairsim (allowed: -a -t -n -i -d -D -l -p -q -m -S)"));
    assert!(error("cyclictest -n -i").contains("cyclictest: -i needs a number of usec"));
    assert!(error("cyclictest -n -p 100")
        .starts_with("--workload: cyclictest: -p: invalid value '100'"));
    assert!(
        error("cyclictest -n -D 1x").starts_with("--workload: cyclictest: -D: invalid value '1x'")
    );
    assert!(error("cyclictest -n -an").contains("cyclictest: -a needs a CPU number, not 'n'"));
}

#[test]
fn netperf_global_and_test_specific_options() {
    same("netperf -t TCP_RR -l 30", "netperf:t=TCP_RR,l=30");
    same(
        "netperf -4 -H 127.0.0.1 -t tcp_rr -c -C -l 100 -- -r 64,1024",
        "netperf:4,H=127.0.0.1,t=TCP_RR,c,C,l=100,r=64,1024",
    );
    same(
        "netperf -t UDP_STREAM -- -m 1024",
        "netperf:t=UDP_STREAM,m=1024",
    );
    // netperf's defaults: test_name "TCP_STREAM", test_time 10 (netsh.c lines 106, 148 at
    // netperf-2.7.0).
    let Workload::Netperf(n) = spec("netperf -H localhost").workload else {
        panic!("not netperf")
    };
    assert_eq!(
        (n.test, n.length, n.instances),
        (NetperfTest::TcpStream, 10 * SEC, 1)
    );

    assert!(error("netperf -t TCP_RR -D 1")
        .contains("netperf: option -D is not modelled by fairsim (allowed: -t -l -H -c -C -4)"));
    assert!(error("netperf -t TCP_RR -- -D")
        .contains("netperf (test-specific): option -D is not modelled"));
    assert!(error("netperf -t TCP_RR -l -1000")
        .contains("netperf: -l needs a number of seconds, not '-1000'"));
    assert!(
        error("netperf -t TCP_CRR").starts_with("--workload: netperf: -t: invalid value 'TCP_CRR'")
    );
    assert!(error("netperf -H 10.0.0.1")
        .starts_with("--workload: netperf: -H: invalid value '10.0.0.1'"));
    assert!(error("netperf -c 2.5").contains("netperf: -c 2.5: a CPU rate is not modelled"));
}

#[test]
fn rtapp_tbench_taskset_and_the_shell() {
    let file = format!(
        "{}/tests/data/rtapp/periodic.json",
        env!("CARGO_MANIFEST_DIR")
    );
    same(&format!("rt-app {file}"), &format!("rtapp:{file}"));
    same(&format!("rt-app '{file}'"), &format!("rtapp:{file}"));
    assert!(error("rt-app -l 2 x.json").contains("rt-app: option -l is not modelled"));
    assert!(error("rt-app -").contains("standard input"));

    same("tbench 4", "tbench:clients=4");
    same("tbench -t 30 4", "tbench:t=30,clients=4");
    same(
        "tbench --timelimit=30 4 localhost",
        "tbench:t=30,clients=4,server=localhost",
    );
    // dbench 4.0: .timelimit = 600 (dbench.c line 30), the key form's default.
    same("tbench 2", "tbench:t=600,clients=2");
    assert!(error("tbench -t 30").contains("tbench: no NPROCS"));
    assert!(
        error("tbench -c client.txt 4").contains("tbench: option -c (--loadfile) is not modelled")
    );

    same("taskset -c 0-3 hackbench -g 2", "hackbench:g=2,cpus=0-3");
    same(
        "sudo taskset --cpu-list 1,3 schbench -r 1",
        "schbench:r=1,cpus=1,3",
    );
    assert!(error("taskset 0x3 hackbench").contains("taskset: '0x3' is not supported"));
    assert!(error("schbench -r 1 | tee log").contains("shell syntax '|' is not supported"));
    assert!(error("fio --name=x").contains("unknown program 'fio'"));
}

mod fuzz {
    use super::*;
    use proptest::prelude::*;

    const PROGRAMS: &[&str] = &[
        "schbench",
        "schbench@2016",
        "hackbench",
        "perf bench sched messaging",
        "perf bench",
        "sysbench",
        "sysbench cpu",
        "cyclictest",
        "netperf",
        "rt-app",
        "tbench",
        "taskset -c 0-1 hackbench",
    ];
    const WORDS: &[&str] = &[
        "-m",
        "-t",
        "-c",
        "-s",
        "-r",
        "-a",
        "-n",
        "-p",
        "-T",
        "-P",
        "-g",
        "-l",
        "-D",
        "-i",
        "-S",
        "-H",
        "-4",
        "--",
        "-pt",
        "-t2",
        "-a0",
        "0",
        "1",
        "2",
        "30000",
        "x",
        "''",
        "'a b'",
        "--threads",
        "--threads=2",
        "--events=4",
        "--time=0",
        "--test=cpu",
        "run",
        "--no-pipe",
        "--group=2",
        "TCP_RR",
        "-r",
        "64,1024",
        "-99999999999999999999",
        "99999999999999999999",
        "--cpu-max-prime=3",
        "--cpu-max-prime=1000000",
        "\"q\"",
        "-é",
        "--é=1",
        "\\",
        "\n",
    ];

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        /// Any mix of the tools' options parses or fails with one line, without a panic.
        #[test]
        fn command_lines_never_panic(
            program in prop::sample::select(PROGRAMS),
            words in prop::collection::vec(prop::sample::select(WORDS), 0..8),
        ) {
            let line = format!("{program} {}", words.join(" "));
            match WorkloadSpec::parse(&line) {
                Ok(s) => { let _ = s.nr_tasks(8); }
                Err(e) => {
                    let e = e.to_string();
                    prop_assert!(!e.contains('\n') && !e.trim().is_empty(), "{line:?}: {e}");
                }
            }
        }
    }
}

#[test]
fn uclampset_gives_the_command_its_clamps() {
    let w = WorkloadSpec::parse("uclampset -m 600 hackbench -g 1").unwrap();
    assert_eq!(w.uclamp, Some((600, 1024)));
    let w = WorkloadSpec::parse("taskset -c 0-1 uclampset --util-max=300 hackbench").unwrap();
    assert_eq!(w.uclamp, Some((0, 300)));
    assert!(w.cpus.is_some());
    let w = WorkloadSpec::parse("uclampset -M 700 -m 100 taskset -c 0 hackbench").unwrap();
    assert_eq!(w.uclamp, Some((100, 700)));
    for bad in [
        "uclampset hackbench",
        "uclampset -m 2000 hackbench",
        "uclampset -m 900 -M 300 hackbench",
        "uclampset -p 1 hackbench",
    ] {
        let e = WorkloadSpec::parse(bad).unwrap_err().to_string();
        assert!(e.contains("uclampset: "), "{bad}: {e}");
    }
}

#[test]
fn nice_and_the_nice_key_set_every_tasks_nice_level() {
    let w = WorkloadSpec::parse("nice -n 5 hackbench -g 1").unwrap();
    assert_eq!(w.nice, Some(5));
    assert_eq!(
        WorkloadSpec::parse("nice hackbench").unwrap().nice,
        Some(10)
    );
    assert_eq!(
        WorkloadSpec::parse("nice -7 hackbench").unwrap().nice,
        Some(7)
    );
    // nice(2) clamps the level.
    assert_eq!(
        WorkloadSpec::parse("nice --adjustment=-40 hackbench")
            .unwrap()
            .nice,
        Some(-20)
    );
    let w = WorkloadSpec::parse("hackbench:g=1,nice=-3").unwrap();
    assert_eq!(w.nice, Some(-3));
    assert!(w.canonical(4).ends_with(",nice=-3"), "{}", w.canonical(4));
    for (bad, want) in [
        ("hackbench:nice=20", "hackbench: nice: invalid value '20'"),
        ("nice -n x hackbench", "nice: -n: invalid adjustment 'x'"),
        ("rtapp:t.json,nice=1", "rtapp: nice: not for an rt-app file"),
    ] {
        let e = WorkloadSpec::parse(bad).unwrap_err().to_string();
        assert!(e.contains(want), "{bad}: {e}");
    }
}

#[test]
fn chrt_and_the_policy_key_set_every_tasks_policy() {
    use fairsim_balance::Policy;
    same("chrt -i 0 hackbench -g 1", "hackbench:g=1,policy=idle");
    same(
        "chrt --batch 0 hackbench -g 1",
        "hackbench:g=1,policy=batch",
    );
    same(
        "taskset -c 0 chrt -o 0 hackbench",
        "hackbench:cpus=0,policy=normal",
    );
    let w = spec("hackbench:policy=idle");
    assert_eq!(w.policy, Some(Policy::Idle));
    assert!(
        w.canonical(4).ends_with(",policy=idle"),
        "{}",
        w.canonical(4)
    );
    assert_eq!(spec("hackbench").policy, None);
    for (bad, want) in [
        (
            "hackbench:policy=fifo",
            "hackbench: policy: invalid value 'fifo'; allowed: normal, batch or idle",
        ),
        (
            "chrt -f 10 hackbench",
            "chrt: '-f' is a real-time or deadline policy",
        ),
        (
            "chrt -i 5 hackbench",
            "chrt: priority '5': the policy takes only 0",
        ),
        ("chrt -i 0", "chrt: no command after the priority"),
        ("chrt -p 0 1", "chrt: '-p' is not supported"),
        (
            "rtapp:t.json,policy=idle",
            "rtapp: policy: not for an rt-app file",
        ),
    ] {
        let e = error(bad);
        assert!(e.contains(want), "{bad}: {e}");
        assert!(!e.contains('\n'), "{e}");
    }
}

#[test]
fn an_rtapp_task_with_util_min_above_util_max_is_refused() {
    let f = std::env::temp_dir().join(format!("fairsim-uclamp-{}.json", std::process::id()));
    std::fs::write(
        &f,
        r#"{"tasks": {"t": {"util_min": 800, "util_max": 200, "run": 1000, "sleep": 1000}}}"#,
    )
    .unwrap();
    let e = WorkloadSpec::parse(&format!("rtapp:{}", f.display()))
        .unwrap_err()
        .to_string();
    let _ = std::fs::remove_file(&f);
    assert!(e.contains("800 above util_max 200"), "{e}");
}

#[test]
fn cgexec_and_the_cgroup_key_set_every_tasks_group() {
    same("cgexec -g cpu:/a hackbench -g 1", "hackbench:g=1,cgroup=/a");
    // libcgroup's paths are relative to the controller's root; a v1 pair or `*` names
    // the cpu controller too.
    same(
        "cgexec -g cpu,cpuacct:a/b hackbench",
        "hackbench:cgroup=/a/b",
    );
    same(
        "cgexec -g '*:/a' taskset -c 0 hackbench",
        "hackbench:cpus=0,cgroup=/a",
    );
    same("cgexec -gcpu:/a hackbench", "hackbench:cgroup=/a");
    let w = spec("sysbench-cpu:threads=2,cgroup=/user.slice/x");
    assert_eq!(w.cgroup.as_deref(), Some("/user.slice/x"));
    assert!(
        w.canonical(4).ends_with(",cgroup=/user.slice/x"),
        "{}",
        w.canonical(4)
    );
    assert_eq!(spec("hackbench").cgroup, None);
    let joins = spec("hackbench:cgroup=/a").cgroup_joins();
    assert_eq!(joins.len(), 1);
    assert_eq!(
        (
            joins[0].path.as_str(),
            joins[0].field.as_str(),
            joins[0].creates
        ),
        ("/a", "--workload: hackbench: cgroup", false)
    );
    for (bad, want) in [
        (
            "hackbench:cgroup=a",
            "hackbench: cgroup: invalid value 'a' (not absolute); allowed: an absolute path",
        ),
        (
            "hackbench:cgroup=/a/../b",
            "hackbench: cgroup: invalid value '/a/../b' (the component '..')",
        ),
        ("hackbench:cgroup=", "hackbench: cgroup: invalid value ''"),
        (
            "hackbench:cgroup=/a,cgroup=/b",
            "hackbench: cgroup: given twice; allowed: one cgroup=/PATH",
        ),
        (
            "cgexec -g memory:/a hackbench",
            "cgexec: -g: controllers 'memory' do not include cpu",
        ),
        ("cgexec -g cpu hackbench", "cgexec: -g: 'cpu' has no ':'"),
        ("cgexec -g cpu:/a", "cgexec: no command after -g"),
        (
            "cgexec --sticky -g cpu:/a hackbench",
            "cgexec: '--sticky' is not supported",
        ),
        (
            "cgexec -g 'cpu:/a b' hackbench",
            "cgexec: -g: invalid path '/a b'",
        ),
    ] {
        let e = error(bad);
        assert!(e.contains(want), "{bad}: {e}");
        assert!(!e.contains('\n'), "{e}");
    }
}
