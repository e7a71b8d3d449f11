//! End-to-end tests of `fairsim run`.

use crate::common::{fairsim, stderr, stdout};

fn ok(args: &[&str]) -> String {
    let o = fairsim(args);
    assert!(o.status.success(), "{args:?}: {}", stderr(&o));
    stdout(&o)
}

#[test]
fn no_arguments_runs_the_explained_builtin_scenario() {
    let out = ok(&["run"]);
    assert!(
        out.starts_with("No arguments: running the built-in scenario"),
        "{out}"
    );
    assert!(out.contains("Latency percentiles (usec)"));
    assert!(out.contains("== scheduler =="));
}

#[test]
fn each_workload_prints_its_tool_output() {
    let out = ok(&[
        "run",
        "--workload",
        "schbench:m=2,t=4,c=2ms,s=2ms",
        "--duration",
        "200ms",
    ]);
    for l in [
        "Latency percentiles (usec)",
        "\t50.0000th: ",
        "\t*99.0000th: ",
        "\tOver=",
    ] {
        assert!(out.contains(l), "missing {l:?} in {out}");
    }
    let out = ok(&["run", "--workload", "hackbench:g=2,l=10,pipe"]);
    assert!(
        out.contains(
            "Running in process mode with 2 groups using 40 file descriptors each (== 80 tasks)"
        ),
        "{out}"
    );
    assert!(out.contains("Each sender will pass 10 messages of 100 bytes"));
    assert!(
        out.lines()
            .any(|l| l.starts_with("Time: ") && l[6..].parse::<f64>().is_ok()),
        "{out}"
    );
    let out = ok(&["run", "--workload", "hackbench:g=1,l=5,threads"]);
    assert!(out.contains("Running in threaded mode"));
    let out = ok(&[
        "run",
        "--topology",
        "tc2",
        "--workload",
        "sysbench-cpu:threads=5,events=20",
    ]);
    assert!(
        out.contains("Number of threads: 5") && out.contains("total time:"),
        "{out}"
    );
    let out = ok(&[
        "run",
        "--workload",
        "nanosleep:tasks=8,sleep=1us",
        "--duration",
        "50ms",
    ]);
    assert!(out.contains("nanosleep stress: 8 tasks"), "{out}");
}

#[test]
fn schedstat_files_follow_each_version_layout() {
    let dir = std::env::temp_dir().join(format!("fairsim-run-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (v, fields, skip) in [("15", 36, 2), ("16", 36, 2), ("17", 45, 3)] {
        let path = dir.join(format!("schedstat{v}"));
        ok(&[
            "run",
            "--workload",
            "nanosleep:tasks=4",
            "--duration",
            "20ms",
            "--schedstat",
            path.to_str().unwrap(),
            "--schedstat-version",
            v,
        ]);
        let text = std::fs::read_to_string(&path).unwrap();
        let mut lines = text.lines();
        assert_eq!(lines.next(), Some(format!("version {v}").as_str()));
        assert!(lines.next().unwrap().starts_with("timestamp "));
        let mut cpus = 0;
        for l in lines {
            let f: Vec<&str> = l.split(' ').collect();
            if f[0].starts_with("cpu") {
                cpus += 1;
                assert_eq!(f.len(), 10, "{l}");
            } else {
                assert!(f[0].starts_with("domain"), "{l}");
                assert_eq!(f.len() - skip, fields, "{l}");
            }
        }
        assert_eq!(cpus, 16);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn json_output_and_determinism_check() {
    let dir = std::env::temp_dir().join(format!("fairsim-run-json-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("run.json");
    let out = ok(&[
        "run",
        "--workload",
        "schbench:m=1,t=3,c=1ms,s=1ms",
        "--duration",
        "100ms",
        "--json",
        path.to_str().unwrap(),
        "--check-determinism",
    ]);
    assert!(out.contains("determinism: OK"), "{out}");
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(v["schema_version"], 2);
    assert_eq!(v["machine"]["cpus"], 16);
    assert_eq!(v["workloads"][0]["name"], "schbench");
    assert!(v["scheduler"]["context_switches"].as_u64().unwrap() > 0);
    assert_eq!(v["cpus"].as_array().unwrap().len(), 16);
    // Every CPU lists its domains (SMT, MC, NUMA on numa-2s4c2t) with the balance
    // counters, seed 000's lb_sg_scan included; the idle CPUs' periodic balances have
    // scanned groups.
    let doms = v["cpus"][0]["domains"].as_array().unwrap();
    let names: Vec<&str> = doms.iter().map(|d| d["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["SMT", "MC", "NUMA"]);
    let scanned: u64 = v["cpus"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|c| c["domains"].as_array().unwrap())
        .map(|d| d["lb"]["CPU_IDLE"]["lb_sg_scan"].as_u64().unwrap())
        .sum();
    assert!(scanned > 0);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn scenario_file_is_read_and_overridden() {
    let dir = std::env::temp_dir().join(format!("fairsim-run-scn-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("s.toml");
    std::fs::write(
        &path,
        "topology = \"smt-mc-1s4c2t\"\nworkload = [\"nanosleep:tasks=2\"]\nduration = \"10ms\"\nseed = 5\n[cost]\ncontext_switch = \"2us\"\n",
    )
    .unwrap();
    let out = ok(&["run", path.to_str().unwrap(), "--seed", "6"]);
    assert!(out.contains("machine smt-mc-1s4c2t (8 CPUs"), "{out}");
    assert!(
        out.contains("seed 6") && out.contains("context_switch=2us"),
        "{out}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

fn bad(args: &[&str], needle: &str) {
    let o = fairsim(args);
    assert_eq!(o.status.code(), Some(2), "{args:?}");
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
    assert!(err.contains(needle), "{args:?}: {err}");
    assert!(!err.contains("panicked"));
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    bad(&["run", "--workload", "fio"], "unknown workload 'fio'");
    bad(&["run", "--workload", "schbench:x=1"], "unknown key 'x'");
    bad(
        &["run", "--workload", "schbench:m=0"],
        "m: invalid value '0'",
    );
    bad(&["run", "--duration", "-1s"], "--duration");
    bad(&["run", "--workload", "hackbench:g=100000"], "budget");
    bad(&["run", "--features", "NO_SUCH"], "unknown feature");
    bad(&["run", "--cost", "bogus=1us"], "unknown cost 'bogus'");
    bad(&["run", "--schedstat-version", "18"], "15, 16 or 17");
    bad(&["run", "--topology", "nope"], "nope");
    bad(&["run", "--timer-expiry", "late"], "hard, mid or soft");
    bad(
        &["run", "--cpuidle", "ladder"],
        "menu, teo, haltpoll or none",
    );
    bad(&["run", "--idle-states", "skylake-ish"], "--idle-states");
    bad(&["run", "--idle-states", "spr,no-C7"], "C7");
    bad(
        &["run", "--idle-states", "C1:2us:2us,C6:1us:600us"],
        "--idle-states",
    );
    bad(&["run", "--idle-states", "C6:133us:100us"], "--idle-states");
    bad(
        &["run", "--cpuidle", "none", "--idle-states", "spr"],
        "--cpuidle none",
    );
    bad(&["run", "/nonexistent/scenario.toml"], "scenario");
    bad(
        &["run", "--noise", "loud"],
        "on, off or a spread from 0 to 1",
    );
    bad(&["run", "--noise", "1.5"], "--noise");
    bad(
        &["run", "--duration", "100ms", "--warmup", "100ms"],
        "shorter than the run",
    );
    bad(&["run", "--warmup", "soon"], "--warmup");
    bad(
        &["compare", "--new", "ILB_FAST", "--profile"],
        "--profile: not available with compare",
    );
}

#[test]
fn a_feature_without_the_feature_it_needs_is_one_line_and_exit_2() {
    let needle = "SIS_FIRST_IDLE needs LEGACY_SIS (seed 001: before = LEGACY_SIS, after = LEGACY_SIS,SIS_FIRST_IDLE)";
    bad(&["run", "--features", "SIS_FIRST_IDLE"], needle);
    bad(
        &["run", "--features", "NO_LEGACY_SIS,SIS_FIRST_IDLE"],
        "--features: SIS_FIRST_IDLE needs LEGACY_SIS",
    );
    bad(
        &[
            "compare",
            "--workload",
            "nanosleep:tasks=2",
            "--new",
            "SIS_FIRST_IDLE",
        ],
        "--new: SIS_FIRST_IDLE needs LEGACY_SIS",
    );
    bad(
        &["race", "--features", "SIS_FIRST_IDLE"],
        "--features: SIS_FIRST_IDLE needs LEGACY_SIS",
    );
    // A scenario file's features go through the same check.
    let dir = std::env::temp_dir().join(format!("fairsim-run-dep-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let scn = dir.join("sis.toml");
    std::fs::write(&scn, "features = \"SIS_FIRST_IDLE\"\n").unwrap();
    bad(&["run", scn.to_str().unwrap()], needle);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn noise_window_and_profile_reach_the_outputs() {
    let base = [
        "run",
        "--topology",
        "smt-mc-1s4c2t",
        "--workload",
        "nanosleep:tasks=8,sleep=1us",
        "--duration",
        "60ms",
    ];
    let with = |extra: &[&str]| {
        let mut a: Vec<&str> = base.to_vec();
        a.extend_from_slice(extra);
        ok(&a)
    };
    // Noise is on by default: two seeds give two runs, one seed the same run twice.
    let a = with(&["--seed", "1"]);
    assert!(a.contains("noise: spread 0.1"), "{a}");
    assert_eq!(a, with(&["--seed", "1"]));
    assert_ne!(a, with(&["--seed", "2"]));
    // --noise off prints no noise line.
    assert!(!with(&["--noise", "off"]).contains("noise:"));
    let w = with(&["--warmup", "20ms"]);
    assert!(w.contains("measured window [20ms, 60ms) (40ms)"), "{w}");
    let p = with(&["--profile"]);
    assert!(p.contains("Children      Self"), "{p}");
    assert!(p.contains("[k] __schedule"), "{p}");
    assert!(p.contains("[k] [idle]"), "{p}");
}

#[test]
fn compare_prints_an_mmtests_table_and_rejects_bad_features() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_fairsim"))
        .args([
            "compare",
            "--topology",
            "smt-mc-1s4c2t",
            "--workload",
            "nanosleep:tasks=8,sleep=1us",
            "--duration",
            "50ms",
            "--base",
            "NO_NI_RANDOM",
            "--new",
            "NO_NI_RANDOM,ILB_SNAPSHOT,ILB_FAST",
            "--seeds",
            "2",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("Hmean     loops-per-s"), "{text}");
    assert!(text.contains("newidle-time-%"), "{text}");
    assert!(
        text.lines()
            .any(|l| l.starts_with("Amean") && l.contains("(   0.00%)")),
        "{text}"
    );
    let bad = std::process::Command::new(env!("CARGO_BIN_EXE_fairsim"))
        .args([
            "compare",
            "--workload",
            "nanosleep:tasks=2",
            "--new",
            "NO_SUCH_FEATURE",
        ])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
    let err = String::from_utf8(bad.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("--new"), "{err}");
}

#[test]
fn schedstat_show_lists_a_runs_counters() {
    let dir = std::env::temp_dir().join(format!("fairsim-ss-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("ss.txt");
    let run = std::process::Command::new(env!("CARGO_BIN_EXE_fairsim"))
        .args([
            "run",
            "--topology",
            "numa-2s4c2t",
            "--workload",
            "nanosleep:tasks=16,sleep=1us",
            "--duration",
            "100ms",
            "--schedstat-sg-scan",
            "--schedstat",
        ])
        .arg(&file)
        .output()
        .unwrap();
    assert!(run.status.success());
    let show = std::process::Command::new(env!("CARGO_BIN_EXE_fairsim"))
        .args(["schedstat", "show"])
        .arg(&file)
        .args(["--cpu", "0"])
        .output()
        .unwrap();
    let text = String::from_utf8(show.stdout).unwrap();
    assert!(text.starts_with("cpu0\n"), "{text}");
    assert!(text.contains(".domain0.CPU_IDLE.lb_count "), "{text}");
    assert!(text.contains(".stats.sched_count "), "{text}");
    assert!(
        text.contains(".domain0.CPU_IDLE.lb_sg_scan "),
        "seed 000's column: {text}"
    );
    let diff = std::process::Command::new(env!("CARGO_BIN_EXE_fairsim"))
        .args(["schedstat", "diff"])
        .arg(&file)
        .arg(&file)
        .output()
        .unwrap();
    assert!(diff.status.success());
    assert_eq!(
        String::from_utf8(diff.stdout)
            .unwrap()
            .lines()
            .filter(|l| l.starts_with('.'))
            .count(),
        0
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn schbench_2016_says_once_that_it_ignores_m() {
    let o = fairsim(&[
        "run",
        "--workload",
        "schbench:version=2016,m=6,t=3,c=2ms,s=2ms",
        "--duration",
        "100ms",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    assert_eq!(err.matches("ignores m=6").count(), 1, "{err}");
    assert!(
        stdout(&o).contains("schbench:version=2016,m=2,t=3"),
        "{}",
        stdout(&o)
    );
}

/// Where wakeups went: the summary's placement lines, the JSON's object (its
/// `select_idle_sibling` outcomes add up to its calls, one per wakeup on 6.12 without
/// EAS or a slow path), and compare's SIS rows, which move when SIS_UTIL is off.
#[test]
fn wakeup_placement_is_summarised_in_json_and_compared() {
    let dir = std::env::temp_dir().join(format!("fairsim-placement-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let j = dir.join("p.json");
    let args = [
        "--smp",
        "sockets=1,cores=16,threads=2",
        "-w",
        "hackbench -g 4 -l 100 -p -T",
    ];
    let mut run = vec!["run"];
    run.extend(args);
    run.extend(["--json", j.to_str().unwrap()]);
    let out = ok(&run);
    assert!(out.contains("\nwakeup placement: "), "{out}");
    assert!(out.contains("\nselect_idle_sibling: "), "{out}");
    assert!(out.contains("SIS_UTIL nr_idle_scan mean "), "{out}");
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&j).unwrap()).unwrap();
    let p = &doc["scheduler"]["wakeup_placement"];
    let wakeups = p["wakeups"].as_u64().unwrap();
    assert!(wakeups > 100, "{p}");
    let outcomes: u64 = p["select_idle_sibling"]
        .as_object()
        .unwrap()
        .values()
        .map(|v| v.as_u64().unwrap())
        .sum();
    assert_eq!(outcomes, wakeups, "{p}");
    assert!(p["llc_scans"].as_u64().unwrap() > 0, "{p}");
    // Each recorded wake-to-run delay is counted on the CPU the task ran on.
    assert!(
        out.contains("\nwake-to-run delay by CPU: longest "),
        "{out}"
    );
    let per_cpu: u64 = doc["cpus"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["wakeups_run"].as_u64().unwrap())
        .sum();
    assert_eq!(
        per_cpu,
        doc["scheduler"]["wakeup_latency_ns"]["count"]
            .as_u64()
            .unwrap()
    );
    let mut cmp = vec!["compare"];
    cmp.extend(args);
    cmp.extend(["--new", "NO_SIS_UTIL", "--seeds", "2"]);
    let table = ok(&cmp);
    for row in [
        "sis-cpus-read/wakeup",
        "sis-none-idle-%",
        "nr_idle_scan-mean",
    ] {
        assert!(
            table
                .lines()
                .any(|l| l.starts_with("Amean") && l.contains(row)),
            "{row}: {table}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A short netperf TCP_RR run on 8 CPUs, whose work is system calls and whose CPUs idle
/// thousands of times with nothing overloaded: its summary and its JSON document.
fn netperf_run() -> (String, serde_json::Value) {
    let json = std::env::temp_dir().join(format!(
        "fairsim-netperf-{}-{:?}.json",
        std::process::id(),
        std::thread::current().id()
    ));
    let out = ok(&[
        "run",
        "--smp",
        "8",
        "-w",
        "netperf -t TCP_RR -l 1",
        "--duration",
        "50ms",
        "--json",
        json.to_str().unwrap(),
    ]);
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let _ = std::fs::remove_file(&json);
    (out, doc)
}

/// Issue 50 row 5: the newidle line divides its time, which runs from each call's start
/// and so holds the calls the `rd->overloaded`/`avg_idle` gate ended, by every call, and
/// counts the balances past the gate apart. netperf's ping-pong idles its CPUs thousands
/// of times with nothing overloaded: many calls, no balance past the gate.
#[test]
fn the_newidle_line_divides_its_time_by_every_call() {
    let (out, doc) = netperf_run();
    let s = &doc["scheduler"];
    let calls = s["newidle_calls"].as_u64().unwrap();
    let balances = s["newidle_balances"].as_u64().unwrap();
    let ns = s["newidle_ns"].as_u64().unwrap();
    assert!(calls > 1000 && balances < calls, "{s}");
    let line = out
        .lines()
        .find(|l| l.starts_with("newidle balance: "))
        .unwrap();
    let each = ns as f64 / calls as f64 / 1e3;
    assert!(
        line.contains(&format!(", calls {calls} ("))
            && line.contains(&format!("{each:.2} us each")),
        "{line}"
    );
    // The gate's two halves: netperf's ping-pong never overloads the root domain, so
    // every call the gate stops is stopped by that half; the calls past it, those
    // stopped by either half and the other early exits make up every call.
    let not_overloaded = s["newidle_gate_not_overloaded"].as_u64().unwrap();
    let avg_idle = s["newidle_gate_avg_idle"].as_u64().unwrap();
    assert!(not_overloaded > 1000 && avg_idle == 0, "{s}");
    assert!(balances + not_overloaded + avg_idle <= calls, "{s}");
    // The balances past the gate get the time the gated calls did not take.
    let gated = s["newidle_gated_ns"].as_u64().unwrap();
    assert!(gated > 0 && gated <= ns, "{s}");
    let past_each = if balances > 0 {
        (ns - gated) as f64 / balances as f64 / 1e3
    } else {
        0.0
    };
    assert!(
        line.ends_with(&format!(
            "past the rd->overloaded and avg_idle gates {balances} ({:.0}/s), {past_each:.2} us each",
            balances as f64 / 0.05
        )),
        "{line}"
    );
}

/// Issue 50 row 10: a run given options but no workload is not told it had no arguments,
/// and the explanation's machine and length are not claimed for it.
#[test]
fn options_without_a_workload_are_not_called_no_arguments() {
    let out = ok(&["run", "--smp", "2", "--duration", "20ms"]);
    assert!(
        out.starts_with(
            "No workload given: running the built-in one, schbench:m=2,t=8,c=10ms,s=10ms"
        ),
        "{out}"
    );
    assert!(!out.contains("No arguments"), "{out}");
}

/// Issue 50 row 10: a value where getopt would take the next option is refused as the
/// missing value, and a tool level with no modelled option says so.
#[test]
fn tool_option_errors_name_what_is_missing() {
    crate::common::refused(
        &["run", "-w", "schbench -m -t 4"],
        "schbench: -m needs a number of message threads before the next option, not '-t'",
    );
    crate::common::refused(
        &["run", "-w", "perf bench -f"],
        "perf bench: option -f (--format) is not modelled by fairsim (allowed: none of perf bench's own options)",
    );
}

/// Issue 50 row 11: a tool whose own length --duration cuts says so, instead of printing
/// a normal table (schbench), a throughput of 0 (tbench) or an empty list (sysbench).
#[test]
fn runs_cut_short_by_the_duration_say_so() {
    let out = ok(&[
        "run",
        "--smp",
        "8",
        "-w",
        "tbench -t 1 4",
        "--duration",
        "300ms",
    ]);
    assert!(
        out.contains(
            "Throughput: (not finished within --duration: the run ended at 300ms of tbench's 1 s;"
        ),
        "{out}"
    );
    assert!(
        !out.contains("Throughput 0 MB/sec") && !out.contains("cleanup"),
        "{out}"
    );
    let out = ok(&[
        "run",
        "--smp",
        "8",
        "-w",
        "schbench -r 30",
        "--duration",
        "300ms",
    ]);
    assert!(
        out.contains(
            "(not finished within --duration: the run ended at 300ms of schbench's -r 30s;"
        ),
        "{out}"
    );
    let out = ok(&[
        "run",
        "--smp",
        "2",
        "-w",
        "sysbench cpu --threads=2 --time=10 run",
        "--duration",
        "300ms",
    ]);
    assert!(
        out.contains("Per-thread completion time (s):\n    (2 of 2 threads still running at the end of --duration)\n"),
        "{out}"
    );
    // A run that ends by its own length prints the tools' normal lines.
    let out = ok(&[
        "run",
        "--smp",
        "8",
        "-w",
        "schbench -r 1",
        "--duration",
        "1s",
    ]);
    assert!(!out.contains("not finished"), "{out}");
}

/// Issue 50 row 12: netperf's work is system calls, which the `CPU time:` line counts as
/// kernel overhead (`tasks 0.0%`); the line under it splits the busy time as time(1)
/// does, and its three parts add up to the tasks' time and the overhead.
#[test]
fn busy_time_is_also_split_as_time_splits_it() {
    let (out, doc) = netperf_run();
    let s = &doc["scheduler"];
    let n = |k: &str| s[k].as_u64().unwrap();
    assert_eq!(n("user_ns"), 0, "{s}");
    assert!(n("sys_ns") > 0, "{s}");
    assert_eq!(
        n("user_ns") + n("sys_ns") + n("no_task_kernel_ns"),
        n("task_ns") + n("overhead_ns"),
        "{s}"
    );
    let line = out
        .lines()
        .find(|l| l.starts_with("CPU time as time(1) splits it: user 0.0%, sys "))
        .unwrap_or_else(|| panic!("{out}"));
    assert!(line.contains("kernel work of no task"), "{line}");
}
