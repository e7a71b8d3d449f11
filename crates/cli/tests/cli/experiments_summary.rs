//! The seed experiments' summary line (issue 32): every `experiments/seed-00N/table.py`
//! ends with `N comparisons, D same direction, W within 2x, X not produced`. These tests
//! build a small fixture with the binary (seed 001's schbench at a very short duration,
//! laid out as `experiments/seed-001/run` writes it), run that seed's `table.py` on it
//! and parse its last line, and check that the shared parser
//! (`experiments/compare.py check`) and this file's agree on well-formed and malformed
//! lines. They need `python3`, as the experiments do.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The four counts of a summary line, or why the line is not one. Mirrors
/// `parse_summary` in `experiments/compare.py`: the exact words, decimal counts, nothing
/// before or after, and counts that hold together (W <= D <= N - X, X <= N).
fn parse_summary(line: &str) -> Result<[u64; 4], String> {
    let words = [
        " comparisons, ",
        " same direction, ",
        " within 2x, ",
        " not produced",
    ];
    let mut rest = line;
    let mut counts = [0u64; 4];
    for (i, w) in words.iter().enumerate() {
        let end = rest
            .find(w)
            .ok_or_else(|| format!("missing '{}' in {line:?}", w.trim()))?;
        let digits = &rest[..end];
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return Err(format!("count {digits:?} is not a number in {line:?}"));
        }
        counts[i] = digits.parse().map_err(|e| format!("{e} in {line:?}"))?;
        rest = &rest[end + w.len()..];
    }
    if !rest.is_empty() {
        return Err(format!("trailing text {rest:?} in {line:?}"));
    }
    let [n, d, w, x] = counts;
    if x > n || d > n - x || w > d {
        return Err(format!("inconsistent counts in {line:?}"));
    }
    Ok(counts)
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Whether `compare.py check` accepts `line` as the last line of a table (read on stdin).
fn python_check(line: &str) -> bool {
    use std::io::Write;
    let mut child = Command::new("python3")
        .arg(repo().join("experiments/compare.py"))
        .args(["check", "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("python3 runs (the experiments need it)");
    let mut stdin = child.stdin.take().unwrap();
    stdin
        .write_all(format!("some table\n{line}\n").as_bytes())
        .unwrap();
    drop(stdin);
    child.wait().unwrap().success()
}

fn tempdir(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "fairsim-experiments-summary-{tag}-{}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

const GOOD: [&str; 4] = [
    "7 comparisons, 4 same direction, 3 within 2x, 0 not produced",
    "18 comparisons, 9 same direction, 0 within 2x, 8 not produced",
    "0 comparisons, 0 same direction, 0 within 2x, 0 not produced",
    "4 comparisons, 0 same direction, 0 within 2x, 4 not produced",
];

const BAD: [&str; 10] = [
    "7 comparisons, 4 same direction, 3 within 2x",
    "7 comparisons, 4 same direction, 3 within 2x, 0 not produced.",
    "summary: 7 comparisons, 4 same direction, 3 within 2x, 0 not produced",
    "7 comparison, 4 same direction, 3 within 2x, 0 not produced",
    "seven comparisons, 4 same direction, 3 within 2x, 0 not produced",
    "7 comparisons, 4 same direction, 3 within 2X, 0 not produced",
    "7 comparisons,  4 same direction, 3 within 2x, 0 not produced",
    "7 comparisons, 8 same direction, 3 within 2x, 0 not produced",
    "7 comparisons, 4 same direction, 5 within 2x, 0 not produced",
    "7 comparisons, 4 same direction, 3 within 2x, 4 not produced",
];

#[test]
fn parsers_agree_on_good_and_malformed_lines() {
    for line in GOOD {
        assert!(parse_summary(line).is_ok(), "rejected {line:?}");
        assert!(python_check(line), "compare.py rejected {line:?}");
    }
    for line in BAD {
        assert!(parse_summary(line).is_err(), "accepted {line:?}");
        assert!(!python_check(line), "compare.py accepted {line:?}");
    }
    assert_eq!(parse_summary(GOOD[1]), Ok([18, 9, 0, 8]));
}

#[test]
fn seed_001_table_ends_with_a_summary_line() {
    let out = tempdir("seed001");
    let reading = out.join("2x12x2");
    std::fs::create_dir_all(&reading).unwrap();
    let scenario = repo().join("experiments/seed-001/schbench.toml");
    // The favoured reading's machine and the two 4.5 kernels, as `run` names the files,
    // at a very short duration: the table's layout, not its figures, is under test.
    for (name, feats) in [
        ("mainline", "NO_SIS_FIRST_IDLE"),
        ("patch", "SIS_FIRST_IDLE"),
    ] {
        for seed in ["1", "2"] {
            let json = reading.join(format!("4.5-{name}-{seed}.json"));
            let status = Command::new(env!("CARGO_BIN_EXE_fairsim"))
                .arg("run")
                .arg(&scenario)
                .args(["--smp", "sockets=2,cores=12,threads=2"])
                .args(["--numa-distance", "10,21;21,10", "--idle-states", "bdx"])
                .args(["--kernel", "4.5", "--features", feats, "--seed", seed])
                .args(["--duration", "300ms", "--json"])
                .arg(&json)
                .output()
                .expect("run fairsim");
            assert!(
                status.status.success(),
                "{}",
                String::from_utf8_lossy(&status.stderr)
            );
        }
    }
    let table = Command::new("python3")
        .arg(repo().join("experiments/seed-001/table.py"))
        .arg(&out)
        .output()
        .expect("python3 runs (the experiments need it)");
    let stdout = String::from_utf8_lossy(&table.stdout);
    assert!(
        table.status.success(),
        "table.py failed: {}",
        String::from_utf8_lossy(&table.stderr)
    );
    let last = stdout.lines().last().unwrap_or_default();
    let [n, d, w, x] = parse_summary(last).unwrap_or_else(|e| panic!("{e}\n{stdout}"));
    // Seed 001's headline: p50, p90, p99 and p99.9, all computed by fairsim.
    assert_eq!((n, x), (4, 0), "{stdout}");
    assert!(w <= d && d <= n, "{stdout}");
    // The rule is printed before the line.
    assert!(
        stdout.contains("rule: same direction = same sign of change"),
        "{stdout}"
    );
    assert!(python_check(last), "compare.py rejected {last:?}");
    let _ = std::fs::remove_dir_all(&out);
}
