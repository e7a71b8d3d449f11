//! `fairsim run -w 'TOOL ARGS'`: the tools' own command lines run end to end, print the
//! tool's output and the canonical key form in the header, and bad options fail with one
//! line naming the tool's option.

use crate::common::fairsim;

fn text(bytes: &[u8]) -> String {
    String::from_utf8(bytes.to_vec()).expect("utf-8")
}

/// Runs `fairsim run -w LINE` on a small machine for `duration` and returns stdout.
fn run(line: &str, duration: &str) -> String {
    let o = fairsim(&[
        "run",
        "--topology",
        "smt-mc-1s4c2t",
        "-w",
        line,
        "--duration",
        duration,
    ]);
    assert!(o.status.success(), "{line}: {}", text(&o.stderr));
    text(&o.stdout)
}

#[test]
fn pasted_commands_run_like_their_key_forms() {
    let cases = [
        (
            "schbench -m 2 -t 4 -c 1000 -s 2000 -r 1",
            "schbench:m=2,t=4,c=1ms,s=2ms,r=1",
            "Latency percentiles (usec)",
        ),
        (
            "hackbench -g 2 -l 50 -p",
            "hackbench:g=2,l=50,pipe",
            "Time:",
        ),
        (
            "perf bench sched messaging -g 1 -l 20 -p -t",
            "hackbench:g=1,l=20,pipe,threads",
            "Time:",
        ),
        (
            "sysbench --test=cpu --num-threads=2 --max-requests=20 run",
            "sysbench-cpu:threads=2,events=10",
            "General statistics:",
        ),
        (
            "cyclictest -a -t 2 -n -D 1",
            "cyclictest:a,t=2,n,D=1",
            "T: 0",
        ),
    ];
    for (line, keys, marker) in cases {
        let out = run(line, "50ms");
        assert!(out.contains(marker), "{line}: no '{marker}' in\n{out}");
        // The same run as the key form, byte for byte.
        assert_eq!(out, run(keys, "50ms"), "{line} vs {keys}");
    }
}

#[test]
fn schbench_2016_says_it_ignores_m() {
    let o = fairsim(&[
        "run",
        "--topology",
        "smt-mc-1s4c2t",
        "-w",
        "schbench@2016 -m 6 -t 2 -r 1",
        "--duration",
        "30ms",
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let err = text(&o.stderr);
    assert!(err.contains("ignores m=6"), "{err}");
    assert!(text(&o.stdout).contains("schbench:version=2016,m=2,t=2"));
}

#[test]
fn bad_options_are_one_line_naming_the_tool_option() {
    for (line, want) in [
        (
            "schbench -Z 3",
            "schbench: unknown option -Z (allowed: -m -t -r -s -c)",
        ),
        ("hackbench -g", "hackbench: -g needs a number"),
        (
            "netperf -t TCP_RR -D 1",
            "netperf: option -D is not modelled",
        ),
        ("cyclictest -t 2", "cyclictest: -n is required"),
    ] {
        let o = fairsim(&["run", "-w", line, "--duration", "10ms"]);
        assert!(!o.status.success(), "{line} was accepted");
        let err = text(&o.stderr);
        assert!(err.contains(want), "{line}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{line}: {err}");
    }
}

/// The number after `label` on the report line that starts with it.
fn figure(out: &str, label: &str) -> f64 {
    let line = out
        .lines()
        .find(|l| l.trim_start().starts_with(label))
        .unwrap_or_else(|| panic!("no '{label}' in {out}"));
    let rest = line.trim_start()[label.len()..].trim();
    let word = rest.split(['/', ' ', 's']).next().unwrap_or("");
    word.parse()
        .unwrap_or_else(|_| panic!("'{label}' not a number: {line}"))
}

#[test]
fn sysbench_counts_the_events_a_time_limit_or_the_duration_left_done() {
    // sysbench 1.0 without --events runs for its --time: two threads of 1 ms events on
    // idle CPUs do about 1000 each in one second.
    let out = run("sysbench cpu --threads=2 --time=1 run", "2s");
    let total = figure(&out, "total number of events:");
    assert!((1900.0..=2000.0).contains(&total), "{out}");
    assert_eq!(figure(&out, "events (avg/stddev):"), total / 2.0, "{out}");
    assert!(!out.contains("not finished"), "{out}");
    // A run that --duration cuts short says so, and its fairness block counts the events
    // done by then rather than the ones asked for.
    let out = run("sysbench-cpu:threads=1,events=10000", "2s");
    assert!(
        out.contains("not finished within --duration; 0/1 threads done"),
        "{out}"
    );
    let done = figure(&out, "total number of events:");
    assert!((1900.0..=2000.0).contains(&done), "{out}");
    assert_eq!(figure(&out, "events (avg/stddev):"), done, "{out}");
}
