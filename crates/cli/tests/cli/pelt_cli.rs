//! End-to-end tests of `fairsim pelt`.

use crate::common::{fairsim, stdout};

#[test]
fn csv_header_and_event_order() {
    let o = fairsim(&[
        "pelt",
        "--pattern",
        "run=8ms,sleep=8ms",
        "--duration",
        "32ms",
        "--format",
        "csv",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = stdout(&o);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines[0],
        "time_ns,event,util_avg,runnable_avg,load_avg,util_est"
    );
    let ev: Vec<(u64, &str)> = lines[1..]
        .iter()
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            assert_eq!(f.len(), 6, "{l}");
            (f[0].parse().unwrap(), f[1])
        })
        .collect();
    // HZ=250: ticks every 4 ms; the tick at a sleep instant comes first, the tick at a
    // wakeup instant is skipped, and the wake at exactly --duration is included.
    let ms = 1_000_000;
    assert_eq!(
        ev,
        vec![
            (0, "wake"),
            (4 * ms, "tick"),
            (8 * ms, "tick"),
            (8 * ms, "sleep"),
            (16 * ms, "wake"),
            (20 * ms, "tick"),
            (24 * ms, "tick"),
            (24 * ms, "sleep"),
            (32 * ms, "wake"),
        ]
    );
    // New task on a 1024 CPU: util_avg = runnable_avg = 512, load_avg = 1024, util_est 0.
    assert_eq!(lines[1], "0,wake,512,512,1024,0");
}

#[test]
fn always_running_matches_half_life() {
    // Zero init, full capacity: after 32 ms (31.25 periods) util is near
    // 1024 * (1 - 0.5^(32/33.554432)) = 495.3.
    let o = fairsim(&[
        "pelt",
        "--pattern",
        "always",
        "--duration",
        "32ms",
        "--init",
        "zero",
        "--format",
        "csv",
    ]);
    assert!(o.status.success());
    let out = stdout(&o);
    let last = out.lines().last().unwrap();
    let util: u64 = last.split(',').nth(2).unwrap().parse().unwrap();
    assert!((493..=497).contains(&util), "{last}");
}

#[test]
fn table_has_summary() {
    let o = fairsim(&[
        "pelt",
        "--pattern",
        "run=8ms,sleep=8ms",
        "--duration",
        "300ms",
        "--capacity",
        "446",
        "--freq",
        "0.6",
        "--util-est",
        "6.12",
    ]);
    assert!(o.status.success());
    let out = stdout(&o);
    assert!(out.contains("freq 614/1024"), "{out}");
    assert!(out.contains("util_avg >= 50% of capacity (223)"));
    assert!(out.contains("settled util_avg"));
    assert!(out.contains("util_est at each wakeup (19)"));
}

#[test]
fn util_est_forms_differ() {
    let run = |form: &str, pattern: &str| {
        let o = fairsim(&[
            "pelt",
            "--pattern",
            pattern,
            "--duration",
            "200ms",
            "--util-est",
            form,
            "--format",
            "csv",
        ]);
        assert!(o.status.success());
        stdout(&o)
    };
    // Without FASTUP the legacy EWMA climbs by quarters, and its column is
    // max(ewma, enqueued): it differs from 6.12 once the samples go down.
    assert_ne!(
        run("6.12", "run=4ms,sleep=20ms"),
        run("legacy-nofastup", "run=4ms,sleep=20ms")
    );
    // A 3 ms run has no tick at its sleep: 6.12.117 samples util_est before the PELT
    // update at dequeue (a stale util_avg), v6.7 after it, so the forms differ.
    assert_ne!(
        run("6.12", "run=3ms,sleep=20ms"),
        run("legacy", "run=3ms,sleep=20ms")
    );
    let off = run("off", "run=4ms,sleep=20ms");
    assert!(off.lines().skip(1).all(|l| l.ends_with(",0")));
}

#[test]
fn bad_input_is_one_line_naming_the_field() {
    for (args, field) in [
        (vec!["pelt", "--pattern", "sleep=1ms"], "--pattern"),
        (vec!["pelt", "--pattern", "run=1ms,sleep=0ms"], "--pattern"),
        (vec!["pelt", "--duration", "5parsecs"], "--duration"),
        (vec!["pelt", "--capacity", "2000"], "--capacity"),
        (vec!["pelt", "--freq", "1.5"], "--freq"),
        (vec!["pelt", "--hz", "0"], "--hz"),
        (vec!["pelt", "--util-est", "7.0"], "--util-est"),
        (vec!["pelt", "--init", "random"], "--init"),
        (vec!["pelt", "--format", "json"], "--format"),
        (vec!["pelt", "--duration", "2h"], "--duration"),
    ] {
        let o = fairsim(&args);
        assert!(!o.status.success(), "{args:?}");
        let err = String::from_utf8(o.stderr).unwrap();
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(field), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
}

#[test]
fn help_documents_semantics() {
    let o = fairsim(&["pelt", "--help"]);
    assert!(o.status.success());
    let out = stdout(&o);
    for needle in [
        "tick at the same instant as a sleep",
        "round(freq * 1024)",
        "--init",
        "legacy",
    ] {
        assert!(out.contains(needle), "missing {needle}");
    }
}
