//! `run --trace-dat` and `--trace-text-format` as a user runs them: the trace.dat reads
//! back with every event of the ftrace text, `trace-cmd report` (where installed; CI sets
//! FAIRSIM_REQUIRE_TRACE_CMD) prints what `--trace-text-format trace-cmd` and
//! `trace-cmd-raw` print, the default text stays ftrace's, the run's own output does not
//! change, and bad values get one line.

use std::path::PathBuf;
use std::process::Command;

use fairsim_trace::tracedat::read::read_trace_dat;

use crate::common::{fairsim, ok, refused, s, stderr};

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "fairsim-trace-dat-cli-{}-{name}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

const RUN: [&str; 7] = [
    "run",
    "--smp",
    "4",
    "-w",
    "hackbench:g=1,l=50",
    "--duration",
    "20ms",
];

fn with(extra: &[&str]) -> Vec<String> {
    RUN.iter().chain(extra).map(|a| a.to_string()).collect()
}

fn run(args: &[String]) -> std::process::Output {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let o = fairsim(&args);
    assert!(o.status.success(), "{args:?}: {}", stderr(&o));
    o
}

/// `trace-cmd report ARGS FILE`, or None where trace-cmd is not installed (outside CI).
fn trace_cmd(args: &[&str], file: &std::path::Path) -> Option<String> {
    let Ok(out) = Command::new("trace-cmd")
        .arg("report")
        .args(args)
        .arg(file)
        .output()
    else {
        assert!(
            std::env::var_os("FAIRSIM_REQUIRE_TRACE_CMD").is_none(),
            "FAIRSIM_REQUIRE_TRACE_CMD is set but trace-cmd cannot run"
        );
        eprintln!("skipped: trace-cmd is not installed");
        return None;
    };
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(String::from_utf8(out.stdout).unwrap())
}

#[test]
fn a_run_writes_a_trace_dat_that_trace_cmd_reports_as_the_text_layouts() {
    let dir = temp_dir("run");
    let (dat, ft, tc, raw) = (
        dir.join("t.dat"),
        dir.join("ft.txt"),
        dir.join("tc.txt"),
        dir.join("raw.txt"),
    );
    let plain = run(&with(&[]));
    let traced = run(&with(&["--trace-dat", s(&dat), "--trace-text", s(&ft)]));
    assert_eq!(
        plain.stdout, traced.stdout,
        "tracing changed the run's output"
    );
    run(&with(&[
        "--trace-text",
        s(&tc),
        "--trace-text-format",
        "trace-cmd",
    ]));
    run(&with(&[
        "--trace-text",
        s(&raw),
        "--trace-text-format=trace-cmd-raw",
    ]));
    // The default layout is ftrace's, and naming it changes nothing.
    let ft_named = dir.join("ft-named.txt");
    run(&with(&[
        "--trace-text",
        s(&ft_named),
        "--trace-text-format",
        "ftrace",
    ]));
    let ftrace = std::fs::read_to_string(&ft).unwrap();
    assert!(ftrace.starts_with("# tracer: nop\n"));
    assert_eq!(ftrace, std::fs::read_to_string(&ft_named).unwrap());

    // The trace.dat holds every event of the text, and the same run gives the same bytes.
    let bytes = std::fs::read(&dat).unwrap();
    let f = read_trace_dat(&bytes).unwrap();
    assert_eq!(f.cpus, 4);
    let events: usize = f.events.iter().map(Vec::len).sum();
    let lines = ftrace.lines().filter(|l| !l.starts_with('#')).count();
    assert!(lines > 1000, "{lines}");
    assert_eq!(events, lines);
    let again = dir.join("again.dat");
    run(&with(&["--trace-dat", s(&again)]));
    assert_eq!(bytes, std::fs::read(&again).unwrap());

    let tc = std::fs::read_to_string(&tc).unwrap();
    let raw = std::fs::read_to_string(&raw).unwrap();
    assert!(tc.starts_with("cpus=4\n"));
    assert!(tc.contains(" sched_switch:         "));
    assert!(raw.contains(" prev_state=256 ") || raw.contains(" prev_state=1 "));
    assert_eq!(tc.lines().count(), lines + 1);
    let Some(report) = trace_cmd(&[], &dat) else {
        return;
    };
    assert_eq!(
        report, tc,
        "trace-cmd report and --trace-text-format trace-cmd"
    );
    let report_raw = trace_cmd(&["-R"], &dat).unwrap();
    assert_eq!(report_raw, raw, "trace-cmd report -R and trace-cmd-raw");
}

#[test]
fn trace_dat_and_text_format_refuse_bad_input_in_one_line() {
    refused(
        &with(&["--trace-text", "x.txt", "--trace-text-format", "perfetto"])
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>(),
        "--trace-text-format: invalid value 'perfetto'; allowed: ftrace, trace-cmd, trace-cmd-raw",
    );
    refused(
        &with(&["--trace-text-format", "trace-cmd"])
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>(),
        "--trace-text-format: no text trace to lay out; allowed: with --trace-text FILE",
    );
    refused(
        &[
            "compare",
            "--smp",
            "2",
            "-w",
            "hackbench:g=1,l=10",
            "--base",
            "",
            "--new",
            "NO_SIS_UTIL",
            "--trace-dat",
            "x.dat",
        ],
        "--trace-dat: not available with compare",
    );
    let dir = temp_dir("bad");
    let o = fairsim(
        &with(&["--trace-dat", s(&dir.join("missing/t.dat"))])
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>(),
    );
    assert!(!o.status.success());
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("--trace-dat"), "{err}");
    // --trace-window traces for --trace-dat alone.
    ok(&with(&[
        "--trace-window",
        "1ms..2ms",
        "--trace-dat",
        s(&dir.join("w.dat")),
    ])
    .iter()
    .map(String::as_str)
    .collect::<Vec<_>>());
}
