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

#[test]
fn only_a_real_closed_pipe_is_silent() {
    // An error whose text happens to say "Broken pipe" is still an error.
    assert_refused(&["run", "-w", "Broken pipe"], "--workload");
    // A reader that goes away early is not worth a message, nor a failure.
    let mut child = Command::new(bin())
        .args(["pelt", "--pattern", "run=1us,sleep=1us", "--duration", "1s"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let mut stdout = child.stdout.take().unwrap();
    let mut first = [0u8; 64];
    std::io::Read::read_exact(&mut stdout, &mut first).unwrap();
    drop(stdout);
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success(), "{:?}", o.status);
    assert!(
        o.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn writing_to_a_full_device_fails_with_its_own_status() {
    let full = std::fs::OpenOptions::new().write(true).open("/dev/full");
    let Ok(full) = full else { return };
    let o = Command::new(bin())
        .args(["topology", "--topology", "spr-2s56c2t"])
        .stdout(full)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(4), "{err}");
    assert!(err.contains("writing stdout"), "{err}");
}

/// Help and version text is output like any other: a stdout that cannot take it fails
/// with the output's status and message (docs/errors.md), not 0.
#[test]
fn help_and_version_to_a_full_device_fail_with_its_own_status() {
    for args in [
        &["--help"][..],
        &["-h"],
        &["-V"],
        &["--version"],
        &["run", "--help"],
        &["topology", "-h"],
        &["report", "latency", "--help"],
        &["help"],
        &["help", "sweep"],
    ] {
        let Ok(full) = std::fs::OpenOptions::new().write(true).open("/dev/full") else {
            return;
        };
        let o = Command::new(bin())
            .args(args)
            .stdout(full)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(4), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(
            err.starts_with("fairsim: error: writing stdout: "),
            "{args:?}: {err}"
        );
        // Printed to a stdout that takes it, the same text exits 0 with nothing on stderr.
        let o = fairsim(args);
        assert!(o.status.success(), "{args:?}: {:?}", o.status);
        assert!(!o.stdout.is_empty() && o.stderr.is_empty(), "{args:?}");
    }
}

#[test]
fn smp_modifiers_next_to_a_complete_machine_are_refused() {
    for (args, field) in [
        (
            vec!["topology", "--topology", "tc2", "--capacity", "0:5"],
            "--capacity",
        ),
        (
            vec!["topology", "--numa-distance", "10,20;20,10"],
            "--numa-distance",
        ),
        (
            vec!["topology", "--topology", "tc2", "--itmt", "0:1"],
            "--itmt",
        ),
        (
            vec!["topology", "--topology", "tc2", "--llc", "die"],
            "--llc",
        ),
        (
            vec!["topology", "--topology", "tc2", "--arch", "arm64"],
            "--arch",
        ),
        (
            vec!["run", "--topology", "tc2", "--numa-cpus", "0-4"],
            "--numa-cpus",
        ),
        (
            vec!["topology", "--smp", "4", "--numa-cpus", "0-1;2-3"],
            "--numa-cpus",
        ),
        (
            vec![
                "race",
                "--topology",
                "tc2",
                "--capacity",
                "0:5",
                "--duration",
                "1ms",
            ],
            "--capacity",
        ),
    ] {
        assert_refused(&args, field);
    }
}

#[test]
fn non_regular_files_are_refused_before_reading() {
    assert_refused(&["topology", "--machine", "/dev/zero"], "character device");
    assert_refused(&["run", "/dev/zero"], "character device");
    assert_refused(&["schedstat", "show", "/dev/zero"], "character device");
    assert_refused(&["topology", "--machine", "/tmp"], "directory");
    // A FIFO with no writer would block the open forever.
    let dir = std::env::temp_dir().join(format!("fairsim-fifo-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let fifo = dir.join("m.toml");
    let made = Command::new("mkfifo").arg(&fifo).status();
    if made.map(|s| s.success()).unwrap_or(false) {
        assert_refused(&["topology", "--machine", fifo.to_str().unwrap()], "FIFO");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn compare_refuses_what_it_would_ignore() {
    for (args, field) in [
        // compare's --json is its table (progress_outputs.rs); the run's traces are not.
        (vec!["--trace", "x.pftrace"], "--trace"),
        (vec!["--schedstat", "x"], "--schedstat"),
        (vec!["--features", "ILB_FAST"], "--features"),
        (vec!["--check-determinism"], "--check-determinism"),
        (vec!["--schedstat-version", "15"], "--schedstat-version"),
    ] {
        let mut all = vec!["compare", "--new", "ILB_FAST"];
        all.extend(args);
        assert_refused(&all, field);
    }
    let dir = std::env::temp_dir().join(format!("fairsim-cmp-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let scenario = dir.join("s.toml");
    std::fs::write(
        &scenario,
        "workload = [\"hackbench\"]\nfeatures = \"ILB_SNAPSHOT,ILB_FAST\"\n",
    )
    .unwrap();
    assert_refused(
        &["compare", "--new", "ILB_FAST", scenario.to_str().unwrap()],
        "scenario key features",
    );
    std::fs::remove_dir_all(&dir).unwrap();
    // Seeds past u64::MAX would wrap to 0.
    assert_refused(
        &[
            "compare",
            "--new",
            "ILB_SNAPSHOT,ILB_FAST",
            "--seed",
            "18446744073709551615",
            "--seeds",
            "2",
        ],
        "--seed",
    );
}

#[test]
fn option_errors_name_the_option() {
    assert_refused(&["compare"], "--new");
    assert_refused(&["run", "--seed", "-1"], "--seed");
    assert_refused(&["pelt", "--duration", "-1s"], "--duration");
    assert_refused(&["topology", "--cpu", "-1"], "--cpu");
    // fairsim's own times need their unit; the message says "allowed" once.
    for (opt, val) in [
        ("--duration", "5"),
        ("--warmup", "1"),
        ("--timer-slack", "50"),
        ("--duration", "-5ms"),
    ] {
        let o = fairsim(&["run", opt, val]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success());
        assert!(err.starts_with(&format!("fairsim: error: {opt}:")), "{err}");
        assert_eq!(err.matches("allowed").count(), 1, "{err}");
    }
}

#[test]
fn scenario_machine_keys_that_contradict_are_refused() {
    let dir = std::env::temp_dir().join(format!("fairsim-scen-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let scenario = dir.join("s.toml");
    std::fs::write(
        &scenario,
        "topology = \"tc2\"\nsmp = \"4\"\nworkload = [\"hackbench\"]\n",
    )
    .unwrap();
    assert_refused(&["run", scenario.to_str().unwrap()], "topology and smp");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn run_shows_the_topology_warnings() {
    let o = fairsim(&[
        "run",
        "--smp",
        "sockets=1,cores=2,threads=2",
        "--capacity",
        "0:1024,1:512,2-3:1024",
        "-w",
        "hackbench:g=1,l=10",
    ]);
    assert!(o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("fairsim: warning: CPU capacity asymmetry not supported on SMT"),
        "{err}"
    );
}

/// Issue 50's user-path sweep: an output that is one of the command's inputs (the
/// scenario, the machine file, an rt-app file) was overwritten after the run; it is
/// refused before the run, naming the option, and the input is left as it was.
#[test]
fn an_output_on_an_input_is_refused() {
    let dir = std::env::temp_dir().join(format!("fairsim-inout-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let scenario = dir.join("s.toml");
    let text = "workload = [\"hackbench:g=1,l=5\"]\n";
    std::fs::write(&scenario, text).unwrap();
    let s = scenario.to_str().unwrap();
    let rtapp = dir.join("p.json");
    std::fs::copy(
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../examples/rtapp/periodic.json"
        ),
        &rtapp,
    )
    .unwrap();
    let r = rtapp.to_str().unwrap();
    let w = format!("rtapp:{r}");
    for (args, field) in [
        (vec!["run", s, "--json", s], "--json"),
        (vec!["run", s, "--schedstat", s], "--schedstat"),
        (vec!["run", s, "--trace-text", s], "--trace-text"),
        (vec!["run", "--smp", "4", "-w", &w, "--json", r], "--json"),
        (vec!["compare", s, "--new", "", "--csv", s], "--csv"),
    ] {
        assert_refused(&args, field);
        assert_refused(&args, "this command reads");
    }
    assert_eq!(std::fs::read_to_string(&scenario).unwrap(), text);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A schedstat layout option with no schedstat file to lay out was dropped without a
/// word; it is refused, as `--trace-window` without a trace is.
#[test]
fn schedstat_options_without_a_file_are_refused() {
    for (args, field) in [
        (vec!["run", "--schedstat-sg-scan"], "--schedstat-sg-scan"),
        (
            vec!["run", "--schedstat-version", "15"],
            "--schedstat-version",
        ),
        (
            vec!["race", "--schedstat-version", "15"],
            "--schedstat-version",
        ),
        (vec!["race", "--schedstat-sg-scan"], "--schedstat-sg-scan"),
    ] {
        assert_refused(&args, field);
        assert_refused(&args, "no schedstat file");
    }
}

/// race checked its --json and --schedstat paths only after racing; they are checked
/// before the first race, as run's and compare's are, so nothing is printed.
#[test]
fn race_checks_its_outputs_before_racing() {
    for flag in ["--json", "--schedstat"] {
        let args = ["race", "--smp", "2", flag, "/nonexistent-dir/x"];
        assert_refused(&args, flag);
        assert!(fairsim(&args).stdout.is_empty(), "{flag}: a race ran");
    }
}

/// `--json -` wrote a file named `-`, where `report` reads `-` as standard input; it is
/// refused with the way to ask for that file.
#[test]
fn a_dash_output_is_refused() {
    for flag in ["--json", "--trace-text", "--schedstat"] {
        assert_refused(&["run", "--smp", "2", "--duration", "1ms", flag, "-"], flag);
    }
    assert_refused(&["compare", "--new", "", "--csv", "-"], "./-");
}

/// `topology --cpu N` only changes the summary; with the other formats, which list every
/// CPU, it was dropped without a word and is now refused.
#[test]
fn topology_cpu_outside_the_summary_is_refused() {
    for format in ["json", "dmesg", "debugfs"] {
        assert_refused(
            &["topology", "--smp", "4", "--cpu", "3", "--format", format],
            "--cpu",
        );
    }
    let o = fairsim(&["topology", "--smp", "4", "--cpu", "3"]);
    assert!(o.status.success());
}

/// A command given without its subcommand printed clap's help (12 lines); it is one
/// line naming the command and its subcommands, as every other refusal is.
#[test]
fn a_missing_subcommand_is_one_line() {
    assert_refused(
        &["report"],
        "fairsim report: a subcommand is required; allowed: latency, timehist, map",
    );
    assert_refused(&["schedstat"], "allowed: diff, show");
}
