//! Regression tests of issue #16's hardening: inputs that once exhausted memory, hung,
//! hid an error or were silently ignored.

use std::process::{Command, Output, Stdio};

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_fairsim")
}

fn fairsim(args: &[&str]) -> Output {
    Command::new(bin())
        .args(args)
        .output()
        .expect("run fairsim")
}

/// Asserts a refusal: non-zero exit, exactly one line on stderr naming `field`.
fn assert_refused(args: &[&str], field: &str) {
    let o = fairsim(args);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "{args:?} succeeded: {err}");
    assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
    assert!(err.contains(field), "{args:?}: {err}");
    assert!(!err.contains("panicked"), "{args:?}: {err}");
}

#[test]
fn pelt_streams_its_output_in_flat_memory() {
    // A million updates: holding them (~200 bytes each, doubled as the Vec grows) needs
    // more than the 150 MB of address space the shell's ulimit gives the process here.
    let cmd = format!(
        "ulimit -v 150000; exec {} pelt --pattern run=1us,sleep=1us --duration 1s --format csv",
        bin()
    );
    let o = Command::new("sh")
        .args(["-c", &cmd])
        .stderr(Stdio::piped())
        .output()
        .expect("run sh");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let lines = o.stdout.iter().filter(|&&b| b == b'\n').count();
    assert!(lines > 1_000_000, "{lines}");
}

#[test]
fn pelt_refuses_runs_of_more_than_1e8_updates_up_front() {
    assert_refused(
        &[
            "pelt",
            "--pattern",
            "run=1us,sleep=1us",
            "--duration",
            "3600s",
        ],
        "--pattern/--duration",
    );
}
