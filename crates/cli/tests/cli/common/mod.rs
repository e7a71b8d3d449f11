//! Helpers every CLI test module shares: running the built binary and reading what it
//! printed. One copy here, since the modules are one test binary.

use std::path::Path;
use std::process::{Command, Output};

/// Runs the built `fairsim` with `args` and returns what it did.
pub(crate) fn fairsim(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_fairsim"))
        .args(args)
        .output()
        .expect("run fairsim")
}

/// Bytes a command printed, as text.
pub(crate) fn text(b: &[u8]) -> String {
    String::from_utf8(b.to_vec()).expect("utf-8")
}

/// What a run printed on stdout.
pub(crate) fn stdout(o: &Output) -> String {
    text(&o.stdout)
}

/// What a run printed on stderr.
pub(crate) fn stderr(o: &Output) -> String {
    text(&o.stderr)
}

/// Runs `args`, which must succeed, and returns its stdout.
pub(crate) fn ok(args: &[&str]) -> String {
    let o = fairsim(args);
    assert!(o.status.success(), "{args:?}: {}", text(&o.stderr));
    text(&o.stdout)
}

/// Runs `args`, which must be refused as bad input: exit status 2 and one line on stderr
/// that contains `want`.
pub(crate) fn refused(args: &[&str], want: &str) {
    let o = fairsim(args);
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
    assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
    assert!(err.starts_with("fairsim: error: "), "{err}");
    assert!(err.contains(want), "{args:?}: wanted '{want}' in: {err}");
}

/// A temporary path as an argument.
pub(crate) fn s(p: &Path) -> &str {
    p.to_str().expect("UTF-8 temp path")
}
