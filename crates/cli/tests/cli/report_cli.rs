//! `fairsim report latency|timehist|map` and `fairsim run --report` as a user runs them:
//! a hand-written ten-event trace whose perf sched answers are worked out by hand (below),
//! a run's `--report` equal to `report` of its `--trace-text` file, and bad input refused
//! in one line.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

use crate::common::fairsim;

fn fairsim_stdin(args: &[&str], input: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_fairsim"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run fairsim");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

fn temp_file(name: &str, text: &str) -> PathBuf {
    let p = std::env::temp_dir().join(format!("fairsim-report-{}-{name}", std::process::id()));
    std::fs::write(&p, text).unwrap();
    p
}

fn stdout(o: &Output) -> String {
    assert!(
        o.status.success(),
        "fairsim failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout.clone()).unwrap()
}

/// Two CPUs, three tasks: alpha (pid 10) and two tasks both named beta (11 and 12).
///
/// - alpha is switched in at 1.000000 on CPU 0 (first seen: a zero delay), preempted
///   (`R+`) at 1.000300 by beta:11 and switched in again at 1.001300 (a 1.000 ms
///   delay), then sleeps at 1.003000: run 0.300 + 1.700 ms, delays 0 and 1.000 ms.
/// - beta:11 is woken at 1.000100, in at 1.000300 (0.200 ms), sleeps at 1.001300 (ran
///   1.000 ms), is woken at 1.002100 and in on CPU 1 at 1.002600 (0.500 ms).
/// - beta:12 is woken at 1.000400, in on CPU 1 at 1.000500 (0.100 ms), sleeps at
///   1.002000 (ran 1.500 ms).
const TRACE: &str = "\
# tracer: nop
#
# entries-in-buffer/entries-written: 10/10   #P:2
#
          <idle>-0       [000] d..2.     1.000000: sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=alpha next_pid=10 next_prio=120
           alpha-10      [000] d..2.     1.000100: sched_waking: comm=beta pid=11 prio=120 target_cpu=000
           alpha-10      [000] d..2.     1.000300: sched_switch: prev_comm=alpha prev_pid=10 prev_prio=120 prev_state=R+ ==> next_comm=beta next_pid=11 next_prio=120
          <idle>-0       [001] d..2.     1.000400: sched_waking: comm=beta pid=12 prio=120 target_cpu=001
          <idle>-0       [001] d..2.     1.000500: sched_switch: prev_comm=swapper/1 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=beta next_pid=12 next_prio=120
            beta-11      [000] d..2.     1.001300: sched_switch: prev_comm=beta prev_pid=11 prev_prio=120 prev_state=S ==> next_comm=alpha next_pid=10 next_prio=120
            beta-12      [001] d..2.     1.002000: sched_switch: prev_comm=beta prev_pid=12 prev_prio=120 prev_state=S ==> next_comm=swapper/1 next_pid=0 next_prio=120
          <idle>-0       [001] d..2.     1.002100: sched_waking: comm=beta pid=11 prio=120 target_cpu=001
          <idle>-0       [001] d..2.     1.002600: sched_switch: prev_comm=swapper/1 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=beta next_pid=11 next_prio=120
           alpha-10      [000] d..2.     1.003000: sched_switch: prev_comm=alpha prev_pid=10 prev_prio=120 prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120
";

const RULE: &str = " -------------------------------------------------------------------------------------------------------------------------------------------";

#[test]
fn latency_per_pid_has_the_hand_worked_delays_and_counts() {
    let f = temp_file("lat.txt", TRACE);
    let out = stdout(&fairsim(&["report", "latency", "-p", f.to_str().unwrap()]));
    let header = "  Task                  |   Runtime ms  |  Count   | Avg delay ms    | Max delay ms    | Max delay start           | Max delay end          |";
    let want = [
        "",
        RULE,
        header,
        RULE,
        "  alpha:10              |      2.000 ms |        2 | avg:   0.500 ms | max:   1.000 ms | max start:     1.000300 s | max end:     1.001300 s",
        "  beta:11               |      1.000 ms |        2 | avg:   0.350 ms | max:   0.500 ms | max start:     1.002100 s | max end:     1.002600 s",
        "  beta:12               |      1.500 ms |        1 | avg:   0.100 ms | max:   0.100 ms | max start:     1.000400 s | max end:     1.000500 s",
        " -----------------------------------------------------------------------------------------------------------------",
        "  TOTAL:                |      4.500 ms |        5 |",
        " ---------------------------------------------------",
        "",
        "",
    ]
    .join("\n");
    let _ = std::fs::remove_file(&f);
    assert_eq!(out, want);
}

#[test]
fn latency_merges_tasks_of_one_comm_and_sorts_by_perfs_default() {
    let f = temp_file("merge.txt", TRACE);
    let out = stdout(&fairsim(&["report", "latency", f.to_str().unwrap()]));
    let rows: Vec<&str> = out.lines().filter(|l| l.contains(" avg:")).collect();
    // beta:(2): 0.200 + 0.500 + 0.100 ms over three waits is 0.267 ms, below alpha's
    // 0.500, so alpha comes first; the merged maximum is beta:11's.
    assert_eq!(
        rows,
        [
            "  alpha:10              |      2.000 ms |        2 | avg:   0.500 ms | max:   1.000 ms | max start:     1.000300 s | max end:     1.001300 s",
            "  beta:(2)              |      2.500 ms |        3 | avg:   0.267 ms | max:   0.500 ms | max start:     1.002100 s | max end:     1.002600 s",
        ]
    );
    // --sort runtime puts the merged beta first.
    let out = stdout(&fairsim(&[
        "report",
        "latency",
        "-s",
        "runtime",
        f.to_str().unwrap(),
    ]));
    let _ = std::fs::remove_file(&f);
    let first = out.lines().find(|l| l.contains(" avg:")).unwrap();
    assert!(first.starts_with("  beta:(2) "), "{out}");
}

#[test]
fn timehist_prints_wait_delay_and_run_of_the_task_leaving_each_cpu() {
    let out = stdout(&fairsim_stdin(&["report", "timehist", "-"], TRACE));
    // <idle> on CPU 1 left it runnable at 1.000500, so perf 6.12 counts its time until
    // CPU 1's next switch (1.002000) as scheduling delay; alpha was preempted at
    // 1.000300 and waited 1.000 ms for CPU 0 both ways.
    let want = [
        "           time    cpu  task name                       wait time  sch delay   run time",
        "                        [tid/pid]                          (msec)     (msec)     (msec)",
        "--------------- ------  ------------------------------  ---------  ---------  ---------",
        "       1.000000 [0000]  <idle>                              0.000      0.000      0.000 ",
        "       1.000300 [0000]  alpha[10]                           0.000      0.000      0.300 ",
        "       1.000500 [0001]  <idle>                              0.000      0.000      0.000 ",
        "       1.001300 [0000]  beta[11]                            0.000      0.200      1.000 ",
        "       1.002000 [0001]  beta[12]                            0.000      0.100      1.500 ",
        "       1.002600 [0001]  <idle>                              1.500      1.500      0.600 ",
        "       1.003000 [0000]  alpha[10]                           1.000      1.000      1.700 ",
        "",
    ]
    .join("\n");
    assert_eq!(out, want);
}

#[test]
fn map_gives_each_task_a_short_name_and_a_legend_line() {
    let out = stdout(&fairsim_stdin(&["report", "map"], TRACE));
    let want = [
        "  *A0           1.000000 secs A0 => alpha:10",
        "  *B0           1.000300 secs B0 => beta:11",
        "   B0 *C0       1.000500 secs C0 => beta:12",
        "  *A0  C0       1.001300 secs ",
        "   A0 *.        1.002000 secs .  => swapper:0",
        "   A0 *B0       1.002600 secs ",
        "  *.   B0       1.003000 secs ",
        "",
    ]
    .join("\n");
    assert_eq!(out, want);
}

#[test]
fn run_report_matches_report_of_the_runs_trace_text() {
    let text = std::env::temp_dir().join(format!("fairsim-report-{}-run.txt", std::process::id()));
    let args = [
        "run",
        "--smp",
        "4",
        "--workload",
        "hackbench:g=1,l=20",
        "--duration",
        "20ms",
        "--report",
        "latency",
        "--report",
        "map",
        "--trace-text",
        text.to_str().unwrap(),
    ];
    let run = stdout(&fairsim(&args));
    let lat = stdout(&fairsim(&["report", "latency", text.to_str().unwrap()]));
    let map = stdout(&fairsim(&["report", "map", text.to_str().unwrap()]));
    let _ = std::fs::remove_file(&text);
    let at = run
        .find("\n== perf sched latency of the trace [")
        .expect("a latency section");
    let sections = &run[at..];
    let lat_body = sections.split_once(" ==\n").unwrap().1;
    let (lat_body, map_part) = lat_body
        .split_once("\n== perf sched map of the trace [")
        .expect("a map section");
    assert_eq!(
        lat_body, lat,
        "run --report latency differs from report latency"
    );
    assert_eq!(map_part.split_once(" ==\n").unwrap().1, map);
    // The run's own summary is unchanged by --report.
    let plain = stdout(&fairsim(&args[..7]));
    assert_eq!(&run[..at], plain);
    assert!(lat.contains("  hb-"), "{lat}");
}

#[test]
fn bad_input_is_refused_in_one_line() {
    let cases: [(&[&str], &str, &str); 4] = [
        (
            &["report", "latency", "-"],
            "hello\n",
            "not an event line 'hello'",
        ),
        (
            &["report", "latency", "-s", "avg,bogus"],
            "",
            "--sort: unknown key 'bogus'",
        ),
        (
            &["report", "map"],
            "# only a header\n",
            "no sched_switch events",
        ),
        (&["report", "timehist"], "\0\x01binary", "binary data"),
    ];
    for (args, input, want) in cases {
        let o = fairsim_stdin(args, input);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    }
    let o = fairsim(&["run", "--duration", "5ms", "--report", "latncy"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("--report: invalid value 'latncy'; allowed: latency, timehist or map"),
        "{err}"
    );
    let o = fairsim(&[
        "compare",
        "--new",
        "ILB_SNAPSHOT",
        "--duration",
        "5ms",
        "--report",
        "latency",
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("--report: not available with compare"),
        "{err}"
    );
    let o = fairsim(&["report", "latency", "/nonexistent/trace.txt"]);
    assert!(String::from_utf8_lossy(&o.stderr).contains("FILE /nonexistent/trace.txt"));
}

/// Issue 50 row 1: an input that never ends is refused before it is opened (a device) or
/// once a line's cap is read (a pipe), in bounded memory: the shell's `ulimit -v` gives
/// the process far less than buffering the input whole would take.
#[test]
fn endless_inputs_are_refused_in_bounded_memory() {
    let o = fairsim(&["report", "latency", "/dev/zero"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("FILE /dev/zero: a character device; allowed: a trace in ftrace text"),
        "{err}"
    );
    for (input, want) in [
        ("/dev/zero", "FILE - (stdin): line 1: binary data"),
        ("/dev/urandom", "FILE - (stdin): line 1: "),
    ] {
        let cmd = format!(
            "ulimit -v 300000; exec {} report latency - < {input}",
            env!("CARGO_BIN_EXE_fairsim")
        );
        let o = Command::new("sh").args(["-c", &cmd]).output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{input}: {err}");
        assert!(err.contains(want), "{input}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    }
    // A long run of text without a newline is refused at the line cap, not read whole.
    let long = temp_file("long.txt", &"a".repeat(200_000));
    let o = fairsim(&["report", "map", long.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains(&format!(
            "FILE {}: line 1: longer than 65536 bytes",
            long.display()
        )),
        "{err}"
    );
    std::fs::remove_file(long).unwrap();
}

/// Issue 50 row 10: a trace without switches is refused naming the path it came from.
#[test]
fn a_trace_without_switches_is_refused_naming_its_path() {
    let f = temp_file("noswitch.txt", "# only a header\n");
    let o = fairsim(&["report", "timehist", f.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains(&format!("FILE {}: no sched_switch events", f.display())),
        "{err}"
    );
    std::fs::remove_file(f).unwrap();
}
