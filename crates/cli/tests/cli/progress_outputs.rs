//! End-to-end tests of the feedback while a command runs and of its outputs: output paths
//! refused before the first event, `compare --json`/`--csv`, `--progress` on a pipe, and
//! Ctrl-C or SIGTERM writing what has finished (exit status 130), and `compare --until`
//! stopping its seeds when the answer is known.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::common::text;

/// A short scenario: a few ms of schbench on the default machine.
const SHORT: [&str; 4] = ["-w", "schbench:m=1,t=2,c=1ms,s=1ms", "--duration", "20ms"];

fn fairsim(args: &[&str]) -> Output {
    fairsim_env(args, &[])
}

fn fairsim_env(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_fairsim"));
    c.args(args);
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().expect("run fairsim")
}

/// A fresh scratch directory for one test.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("fairsim-progress-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

fn path(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

#[test]
fn a_bad_output_path_is_refused_before_the_run() {
    // An hour of emulated time: only a refusal before the first event returns at once.
    // Exit status 4, as an unwritable output always had (docs/errors.md).
    let started = Instant::now();
    let out = fairsim(&[
        "run",
        "-w",
        "nanosleep:tasks=64,sleep=1us",
        "--duration",
        "3600s",
        "--json",
        "/nonexistent-fairsim-dir/x.json",
    ]);
    let took = started.elapsed();
    assert_eq!(out.status.code(), Some(4), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stderr),
        "fairsim: error: --json: cannot write /nonexistent-fairsim-dir/x.json: No such file or directory\n"
    );
    assert!(out.stdout.is_empty());
    assert!(took < Duration::from_secs(5), "took {took:?}");

    // Every output option is checked, each naming itself.
    let dir = scratch("bad");
    let file = dir.join("a-file");
    std::fs::write(&file, "").expect("write");
    let under_file = file.join("sub");
    for (cmd, flag, value) in [
        ("run", "--trace", "/nonexistent-fairsim-dir/t.pftrace"),
        ("run", "--trace-text", "/nonexistent-fairsim-dir/t.txt"),
        ("run", "--trace-dat", "/nonexistent-fairsim-dir/t.dat"),
        ("run", "--schedstat", "/nonexistent-fairsim-dir/s"),
        ("run", "--plot", path(&under_file)),
        ("compare", "--csv", "/nonexistent-fairsim-dir/t.csv"),
        ("compare", "--json", "/nonexistent-fairsim-dir/t.json"),
        ("compare", "--plot", path(&under_file)),
    ] {
        let mut args = vec![
            cmd,
            "-w",
            "nanosleep:tasks=64,sleep=1us",
            "--duration",
            "3600s",
        ];
        if cmd == "compare" {
            args.extend(["--new", "NO_SIS_UTIL", "--seeds", "2"]);
        }
        args.extend([flag, value]);
        let started = Instant::now();
        let out = fairsim(&args);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(4), "{cmd} {flag}: {err}");
        assert!(
            err.starts_with(&format!("fairsim: error: {flag}: cannot write {value}: ")),
            "{cmd} {flag}: {err}"
        );
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(started.elapsed() < Duration::from_secs(5), "{cmd} {flag}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn compare_writes_its_table_as_json_and_csv() {
    let dir = scratch("table");
    let (json, csv) = (dir.join("t.json"), dir.join("t.csv"));
    let mut args = vec!["compare"];
    args.extend(SHORT);
    args.extend(["--new", "NO_SIS_UTIL", "--seeds", "2"]);
    args.extend(["--json", path(&json), "--csv", path(&csv)]);
    let out = fairsim(&args);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let table = text(&out.stdout);
    // stdout is the table alone, as without the options.
    let mut plain = vec!["compare"];
    plain.extend(SHORT);
    plain.extend(["--new", "NO_SIS_UTIL", "--seeds", "2"]);
    assert_eq!(table, text(&fairsim(&plain).stdout));

    let csv = std::fs::read_to_string(&csv).expect("csv");
    let mut lines = csv.lines();
    assert_eq!(
        lines.next(),
        Some("metric,better,mean,base_mean,new_mean,change_pct,significant,base_stddev,new_stddev,base_samples,new_samples")
    );
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    // One row per metric of the text table (each has a Min row there).
    let metrics = table.lines().filter(|l| l.starts_with("Min ")).count();
    assert!(metrics > 3, "{table}");
    assert_eq!(rows.len(), metrics, "{csv}");
    for r in &rows {
        assert_eq!(r.len(), 11, "{r:?}");
        // The text table's mean row of the metric shows the same means and change.
        let mean_row = table
            .lines()
            .find(|l| l.starts_with(r[2]) && l.split_whitespace().nth(1) == Some(r[0]))
            .unwrap_or_else(|| panic!("no {} row for {} in\n{table}", r[2], r[0]));
        let num = |s: &str| s.parse::<f64>().expect("number");
        let shown = format!("{:.4} (", num(r[3]));
        assert!(mean_row.contains(&shown), "{mean_row} vs {r:?}");
        assert!(
            mean_row.contains(&format!("{:.4}", num(r[4]))),
            "{mean_row}"
        );
        assert!(
            mean_row.contains(&format!("{:.2}%", num(r[5]))),
            "{mean_row}"
        );
        assert_eq!(
            mean_row.contains('*'),
            r[6] == "true",
            "{mean_row} vs {r:?}"
        );
        assert_eq!((r[9], r[10]), ("2", "2"));
    }

    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).expect("json")).expect("JSON");
    assert_eq!(doc["seeds"], 2);
    assert_eq!(doc["seeds_in_table"], 2);
    assert_eq!(doc["interrupted"], false);
    // Only --until adds its key.
    assert!(doc.get("until").is_none(), "{doc}");
    assert_eq!(doc["new"]["features"], "NO_SIS_UTIL");
    let jrows = doc["rows"].as_array().expect("rows");
    assert_eq!(jrows.len(), rows.len());
    for (j, r) in jrows.iter().zip(&rows) {
        assert_eq!(j["metric"], r[0]);
        assert_eq!(j["mean"], r[2]);
        assert_eq!(j["significant"], r[6] == "true");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn progress_forced_on_a_pipe_prints_plain_lines() {
    let mut args = vec!["run"];
    args.extend(SHORT);
    let quiet = fairsim(&args);
    assert!(quiet.status.success());
    assert!(
        !text(&quiet.stderr).contains("progress"),
        "{}",
        text(&quiet.stderr)
    );
    args.push("--progress");
    let forced = fairsim(&args);
    assert!(forced.status.success());
    let err = text(&forced.stderr);
    assert!(
        err.contains("fairsim: progress: emulated 0.020s of 0.020s (100.0%)"),
        "{err}"
    );
    assert!(
        !err.contains('\u{1b}'),
        "escape sequences on a pipe: {err:?}"
    );
    // Progress goes to stderr only.
    assert_eq!(quiet.stdout, forced.stdout);

    let mut args = vec!["compare"];
    args.extend(SHORT);
    args.extend(["--new", "NO_SIS_UTIL", "--seeds", "2", "--progress"]);
    let out = fairsim(&args);
    assert!(out.status.success());
    let err = text(&out.stderr);
    for side in ["base", "new"] {
        assert!(
            err.contains(&format!("fairsim: compare: {side} seed ")),
            "{err}"
        );
    }
    assert!(err.contains("4/4 runs in "), "{err}");
    assert!(!err.contains('\u{1b}'), "{err:?}");
}

#[test]
fn an_interrupted_compare_prints_the_seeds_that_finished() {
    let dir = scratch("interrupted");
    let json = dir.join("t.json");
    let mut args = vec!["compare"];
    args.extend(SHORT);
    args.extend([
        "--new",
        "NO_SIS_UTIL",
        "--seeds",
        "4",
        "--json",
        path(&json),
    ]);
    // The hook raises the flag Ctrl-C raises once the first seed finished on both sides.
    let out = fairsim_env(&args, &[("FAIRSIM_INTERRUPT_AFTER", "1")]);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).expect("json")).expect("JSON");
    let n = doc["seeds_in_table"].as_u64().expect("count");
    assert!((1..4).contains(&n), "{n}");
    assert_eq!(doc["interrupted"], true);
    assert!(
        stderr.ends_with(&format!(
            "fairsim: interrupted: table from {n} of 4 seeds\n"
        )),
        "{stderr}"
    );
    assert!(
        stdout.contains(&format!("{n} of 4 seeds per side (interrupted)")),
        "{stdout}"
    );
    // The table holds the finished seeds: the mean rows of each metric are there.
    assert!(stdout.lines().any(|l| l.starts_with("Amean")), "{stdout}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_interrupted_sweep_keeps_its_finished_points() {
    let dir = scratch("sweep");
    std::fs::write(
        dir.join("plan.toml"),
        "name = \"cut\"\n[run]\nduration = \"10ms\"\n[axes]\nworkloads = [\"schbench:m=1,t=2,c=1ms,s=1ms\"]\nseeds = 6\n",
    )
    .expect("plan");
    let out_dir = dir.join("out");
    let out = fairsim_env(
        &[
            "sweep",
            path(&dir.join("plan.toml")),
            "--out",
            path(&out_dir),
            "--jobs",
            "1",
        ],
        &[("FAIRSIM_INTERRUPT_AFTER", "2")],
    );
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    let points = std::fs::read_dir(out_dir.join("points"))
        .expect("points")
        .count();
    assert_eq!(points, 2, "{stderr}");
    assert!(!out_dir.join("summary.txt").exists());
    assert!(
        stderr.contains("fairsim: interrupted: sweep cut: 2 of 6 points finished and written"),
        "{stderr}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Spawns `args` with `--progress`, waits for its first progress line and sends `signal`
/// (`INT` or `TERM`); returns its output.
fn signalled(args: &[&str], signal: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_fairsim"))
        .args(args)
        .arg("--progress")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn fairsim");
    let stderr = child.stderr.take().expect("stderr");
    let mut reader = BufReader::new(stderr);
    let mut seen = String::new();
    // The first line comes once the run is under way, after the handlers are installed.
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).expect("read stderr") == 0 {
            panic!("fairsim ended before its first progress line: {seen}");
        }
        seen.push_str(&line);
        if line.starts_with("fairsim: progress:") || line.starts_with("fairsim: compare:") {
            break;
        }
    }
    let pid = child.id().to_string();
    let killed = Command::new("kill")
        .args([&format!("-{signal}"), pid.as_str()])
        .status()
        .expect("kill");
    assert!(killed.success());
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut reader, &mut rest).expect("read stderr");
    let mut out = child.wait_with_output().expect("wait");
    seen.push_str(&rest);
    out.stderr = seen.into_bytes();
    out
}

#[test]
fn ctrl_c_stops_a_run_at_its_current_time() {
    let out = signalled(
        &[
            "run",
            "-w",
            "nanosleep:tasks=8,sleep=1us",
            "--duration",
            "3600s",
        ],
        "INT",
    );
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    assert!(
        stderr.contains("fairsim: interrupted: stopped at "),
        "{stderr}"
    );
    assert!(stderr.contains("of 3600s emulated"), "{stderr}");
    // The summary of the run up to then is written.
    assert!(!stdout.is_empty(), "{stderr}");
}

#[test]
fn sigterm_stops_a_compare_with_no_finished_seed() {
    let out = signalled(
        &[
            "compare",
            "-w",
            "nanosleep:tasks=8,sleep=1us",
            "--duration",
            "3600s",
            "--new",
            "NO_SIS_UTIL",
            "--seeds",
            "2",
        ],
        "TERM",
    );
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    assert!(
        stderr.ends_with(
            "fairsim: interrupted: no seed finished on both sides of 2; nothing written\n"
        ),
        "{stderr}"
    );
    assert!(out.stdout.is_empty());
}

/// A compare whose sides differ a lot in the groups newidle balance scans at the MC level
/// (ILB_FAST stops the scan early): 29% fewer, with a spread of about 1%.
const CLEAR: [&str; 6] = [
    "-w",
    "nanosleep:tasks=64,sleep=1us",
    "--duration",
    "50ms",
    "--new",
    "ILB_SNAPSHOT,ILB_FAST",
];

#[test]
fn until_significant_stops_a_clear_difference_early_and_says_why() {
    let dir = scratch("until");
    let json = dir.join("u.json");
    let mut args = vec!["compare"];
    args.extend(CLEAR);
    args.extend([
        "--seeds",
        "20",
        "--until",
        "d1-newidle-sg-scan/lb:significant",
    ]);
    args.extend(["--json", path(&json)]);
    // One thread and three give the same bytes: the rule is checked in seed order and
    // the seeds run past the stop point are discarded.
    let one = fairsim_env(&args, &[("RAYON_NUM_THREADS", "1")]);
    let json_one = std::fs::read(&json).expect("json");
    let three = fairsim_env(&args, &[("RAYON_NUM_THREADS", "3")]);
    assert!(one.status.success(), "{}", text(&one.stderr));
    assert_eq!(text(&one.stdout), text(&three.stdout));
    assert_eq!(json_one, std::fs::read(&json).expect("json"));

    let table = text(&one.stdout);
    let doc: serde_json::Value = serde_json::from_slice(&json_one).expect("JSON");
    let until = &doc["until"];
    let n = until["seeds_run"].as_u64().expect("seeds_run");
    assert!((5..20).contains(&n), "{doc}");
    assert_eq!(until["stopped_because"], "significant");
    assert_eq!(until["metric"], "d1-newidle-sg-scan/lb");
    assert_eq!(until["rule"], "significant");
    assert_eq!(until["min_seeds"], 5);
    assert_eq!(until["seed_cap"], 20);
    assert_eq!(doc["seeds_in_table"], n);
    assert_eq!(doc["interrupted"], false);
    let first = table.lines().next().unwrap_or("");
    assert!(
        first.contains(&format!(", {n} of 20 seeds per side, ")),
        "{table}"
    );
    let line = table.lines().nth(1).unwrap_or("");
    assert!(
        line.starts_with(&format!(
            "until d1-newidle-sg-scan/lb:significant: stopped after {n} of 20 seeds: \
             d1-newidle-sg-scan/lb difference significant (Welch t = "
        )),
        "{table}"
    );
    assert!(
        line.contains("O'Brien-Fleming-type Lan-DeMets spending"),
        "{line}"
    );
    assert_eq!(until["message"].as_str(), line.split(" seeds: ").nth(1));
    // The table holds the seeds up to the stop point, on both sides.
    for row in doc["rows"].as_array().expect("rows") {
        assert!(row["base_samples"].as_u64() <= Some(n), "{row}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn until_runs_identical_sides_to_the_seed_cap() {
    let mut args = vec!["compare"];
    args.extend(CLEAR);
    // The new side is the baseline: every seed gives both sides the same value.
    args[6] = "";
    args.extend(["--seeds", "6", "--until", "loops-per-s:significant<0.01"]);
    let out = fairsim(&args);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let table = text(&out.stdout);
    assert!(table
        .lines()
        .next()
        .unwrap_or("")
        .contains(", 6 seeds per side, "));
    assert!(
        table.lines().nth(1).unwrap_or("").starts_with(
            "until loops-per-s:significant<0.01: stopped after 6 of 6 seeds: seed cap reached \
             (last look: Welch t = 0, "
        ),
        "{table}"
    );
}

#[test]
fn bad_until_inputs_get_one_line_errors() {
    for (extra, start) in [
        (
            vec!["--until", "loops:significant"],
            "--until: unknown metric 'loops'; allowed: loops-per-s, ",
        ),
        (
            vec!["--until", "loops-per-s:sig"],
            "--until: unknown rule 'sig' in 'loops-per-s:sig'; allowed: significant, ",
        ),
        (
            vec!["--until", "loops-per-s"],
            "--until: invalid value 'loops-per-s'; allowed: METRIC:RULE",
        ),
        (
            vec!["--until", "loops-per-s:ci<0%"],
            "--until: rule 'ci<0%' in 'loops-per-s:ci<0%': invalid value '0'; allowed: a percentage above 0",
        ),
        (
            vec!["--until", "loops-per-s:ci<0"],
            "--until: rule 'ci<0' in 'loops-per-s:ci<0': invalid value '0'; allowed: a number above 0",
        ),
        (
            vec!["--until", "loops-per-s:significant<1"],
            "--until: rule 'significant<1' in 'loops-per-s:significant<1': invalid value '1'; allowed: an ALPHA with 0 < ALPHA < 0.5",
        ),
        (vec!["--min-seeds", "3"], "--min-seeds: only with --until"),
        (
            vec!["--until", "loops-per-s:significant", "--min-seeds", "1"],
            "--min-seeds: invalid value '1'; allowed: 2 to --seeds (4)",
        ),
        (
            vec!["--until", "loops-per-s:significant"],
            "--seeds: 4 is below --until's default --min-seeds 5",
        ),
    ] {
        let mut args = vec!["compare"];
        args.extend(CLEAR);
        // --seeds 4 is below --min-seeds' default, which the last case is about; the
        // others give one that fits.
        args.extend(["--seeds", "4"]);
        if !extra.contains(&"--min-seeds") && start.starts_with("--until") {
            args.extend(["--min-seeds", "2"]);
        }
        args.extend(extra);
        let out = fairsim(&args);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(
            err.starts_with(&format!("fairsim: error: {start}")),
            "{err}"
        );
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(out.stdout.is_empty());
    }
}
