//! End-to-end tests of `fairsim sweep` and `fairsim sweep merge`, run as a user runs them,
//! on a tiny plan: 2 machines x 2 feature sets x 2 seeds, a few ms of emulated time.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::common::text;

const PLAN: &str = r#"
name = "tiny"
[run]
duration = "8ms"
warmup = "2ms"
[axes]
machines = ["smt-mc-1s4c2t", "dies-1s2d2c1t"]
workloads = ["schbench:m=1,t=4,c=1ms,s=1ms"]
seeds = 2
[axes.features]
base = "ILB_SNAPSHOT,NO_NI_RANDOM"
fast = "ILB_SNAPSHOT,ILB_FAST,NO_NI_RANDOM"
"#;

fn fairsim(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_fairsim"))
        .current_dir(dir)
        .args(args)
        .output()
        .expect("run fairsim")
}

/// A fresh scratch directory for one test, holding `plan.toml`.
fn scratch(name: &str, plan: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("fairsim-sweep-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    std::fs::write(dir.join("plan.toml"), plan).expect("write plan");
    dir
}

/// Every file under `root`, by relative path, with its bytes.
fn tree(root: &Path) -> BTreeMap<String, Vec<u8>> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
        for e in std::fs::read_dir(dir).expect("read dir") {
            let p = e.expect("entry").path();
            if p.is_dir() {
                walk(root, &p, out);
            } else {
                let rel = p.strip_prefix(root).expect("under root");
                out.insert(rel.display().to_string(), std::fs::read(&p).expect("read"));
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(root, root, &mut out);
    out
}

fn ok(o: &Output) {
    assert!(o.status.success(), "{}", text(&o.stderr));
}

/// Checks a refusal: exit 2 and exactly one line on stderr containing `want`.
fn refused(o: &Output, want: &str) {
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("fairsim: error: "), "{err}");
    assert!(err.contains(want), "wanted '{want}' in: {err}");
}

#[test]
fn unsharded_equals_merged_shards_byte_for_byte() {
    let dir = scratch("merge", PLAN);
    ok(&fairsim(&dir, &["sweep", "plan.toml", "--out", "all"]));
    for i in 1..=3 {
        let o = fairsim(
            &dir,
            &[
                "sweep",
                "plan.toml",
                "--shard",
                &format!("{i}/3"),
                "--out",
                &format!("s{i}"),
            ],
        );
        ok(&o);
        assert!(
            text(&o.stderr).contains("no summary.txt"),
            "{}",
            text(&o.stderr)
        );
        assert!(!dir.join(format!("s{i}/summary.txt")).exists());
    }
    ok(&fairsim(
        &dir,
        &["sweep", "merge", "s1", "s2", "s3", "--out", "merged"],
    ));
    let all = tree(&dir.join("all"));
    assert_eq!(all.len(), 2 + 8, "{:?}", all.keys().collect::<Vec<_>>());
    assert_eq!(all, tree(&dir.join("merged")));

    let summary = text(&all["summary.txt"]);
    assert!(
        summary.contains("== machines: smt-mc-1s4c2t vs dies-1s2d2c1t"),
        "{summary}"
    );
    assert!(summary.contains("== features: base vs fast"), "{summary}");
    let point = text(&all["points/0005-dies-1s2d2c1t_schbench-m-1-t-4-c-1ms-s-1ms_base_s43.json"]);
    assert!(
        point.contains("\"command\": \"fairsim run --topology dies-1s2d2c1t --workload schbench:m=1,t=4,c=1ms,s=1ms --features ILB_SNAPSHOT,NO_NI_RANDOM --duration 8ms --warmup 2ms --seed 43\""),
        "{point}"
    );

    // A shard missing, two plans, and a directory without a plan are refused.
    refused(
        &fairsim(&dir, &["sweep", "merge", "s1", "s3", "--out", "bad"]),
        "3 of 8 points missing, the first 0001-",
    );
    assert!(!dir.join("bad").exists());
    std::fs::write(dir.join("plan2.toml"), PLAN.replace("8ms", "9ms")).expect("plan2");
    ok(&fairsim(
        &dir,
        &["sweep", "plan2.toml", "--shard", "2/3", "--out", "other"],
    ));
    refused(
        &fairsim(
            &dir,
            &["sweep", "merge", "s1", "other", "s3", "--out", "bad"],
        ),
        "allowed: shards of one plan",
    );
    // Two copies of a point that differ are refused.
    let copy = dir.join("s1x");
    std::fs::create_dir_all(copy.join("points")).expect("copy dir");
    for (rel, bytes) in tree(&dir.join("s1")) {
        let bytes = if rel.starts_with("points/0000-") {
            text(&bytes)
                .replace("\"index\": 0", "\"index\": 0 ")
                .into_bytes()
        } else {
            bytes
        };
        std::fs::write(copy.join(rel), bytes).expect("copy file");
    }
    refused(
        &fairsim(
            &dir,
            &["sweep", "merge", "s1", "s2", "s3", "s1x", "--out", "bad"],
        ),
        "differs between s1 and s1x",
    );
    std::fs::create_dir_all(dir.join("empty")).expect("empty dir");
    refused(
        &fairsim(&dir, &["sweep", "merge", "empty", "--out", "bad"]),
        "empty: no plan.json",
    );
    // Another plan's output directory is not overwritten.
    refused(
        &fairsim(&dir, &["sweep", "plan2.toml", "--out", "all"]),
        "holds the output of another plan",
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn one_job_and_two_jobs_write_the_same_bytes() {
    let dir = scratch("jobs", PLAN);
    ok(&fairsim(
        &dir,
        &["sweep", "plan.toml", "--jobs", "1", "--out", "j1"],
    ));
    ok(&fairsim(
        &dir,
        &["sweep", "plan.toml", "--jobs", "2", "--out", "j2"],
    ));
    let j1 = tree(&dir.join("j1"));
    assert_eq!(j1.len(), 10);
    assert_eq!(j1, tree(&dir.join("j2")));
    // The default output directory is named after the plan.
    ok(&fairsim(&dir, &["sweep", "plan.toml"]));
    assert_eq!(j1, tree(&dir.join("sweep-tiny")));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_point_runs_what_its_command_line_runs() {
    let plan = PLAN
        .replace("seeds = 2", "seeds = [7]")
        .replace("[axes.features]", "hz = [250, 1000]\n[axes.features]");
    let dir = scratch("cmdline", &plan);
    ok(&fairsim(&dir, &["sweep", "plan.toml", "--out", "o"]));
    let files = tree(&dir.join("o"));
    let (name, point) = files
        .iter()
        .find(|(k, _)| k.contains("_fast_hz-1000_"))
        .expect("a fast hz-1000 point");
    assert!(name.ends_with("_fast_hz-1000_s7.json"), "{name}");
    let point: serde_json::Value = serde_json::from_slice(point).expect("point JSON");
    let command = point["command"].as_str().expect("command");
    assert!(command.ends_with("--hz 1000 --seed 7"), "{command}");
    // The same arguments given to `fairsim run` give the same workload results.
    let mut argv: Vec<&str> = vec!["run"];
    argv.extend(
        point["argv"]
            .as_array()
            .expect("argv")
            .iter()
            .map(|a| a.as_str().expect("arg")),
    );
    argv.extend(["--json", "run.json"]);
    ok(&fairsim(&dir, &argv));
    let run: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("run.json")).expect("run.json"))
            .expect("JSON");
    assert_eq!(
        run["workloads"][0]["results"],
        point["workloads"][0]["results"]
    );
    assert_eq!(run["hz"], 1000);
    let summary = text(&files["summary.txt"]);
    assert!(summary.contains("== hz: 250 vs 1000"), "{summary}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_plans_and_options_get_one_line() {
    let base = "name = \"t\"\n[axes]\nworkloads = [\"schbench:m=1,t=2\"]\n";
    let cases: [(&str, String, &str); 9] = [
        (
            "unknown",
            format!("{base}colour = \"red\"\n"),
            "axes.colour: not an option of fairsim run",
        ),
        (
            "top",
            format!("bogus = 1\n{base}"),
            "bogus: unknown key; allowed: name, run, axes",
        ),
        (
            "empty",
            base.replace("[\"schbench:m=1,t=2\"]", "[]"),
            "axes.workloads: empty",
        ),
        (
            "dup",
            base.replace(
                "[\"schbench:m=1,t=2\"]",
                "[\"schbench:m=1,t=2\", \"schbench:m=1,t=2\"]",
            ),
            "axes.workloads: duplicate value",
        ),
        (
            "output",
            "name = \"t\"\n[run]\ntrace = \"x\"\n[axes]\nworkloads = [\"a\"]\n".to_string(),
            "run.trace: a per-run output",
        ),
        (
            "nofeat",
            format!("{base}[axes.features]\n"),
            "axes.features: empty",
        ),
        (
            "badhz",
            format!("{base}hz = [333]\n"),
            "--hz: invalid value '333'",
        ),
        ("toml", "name = \n".to_string(), "line 1:"),
        (
            "noname",
            "[axes]\nworkloads = [\"a\"]\n".to_string(),
            "name: missing",
        ),
    ];
    for (tag, plan, want) in cases {
        let dir = scratch(tag, &plan);
        let o = fairsim(&dir, &["sweep", "plan.toml"]);
        refused(&o, want);
        let _ = std::fs::remove_dir_all(&dir);
    }
    let dir = scratch("opts", PLAN);
    refused(
        &fairsim(&dir, &["sweep", "plan.toml", "--shard", "4/3"]),
        "--shard: invalid value '4/3'",
    );
    refused(
        &fairsim(&dir, &["sweep", "plan.toml", "--jobs", "0"]),
        "--jobs: invalid value '0'",
    );
    refused(&fairsim(&dir, &["sweep", "missing.toml"]), "missing.toml");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn until_stops_each_combination_where_its_interval_is_narrow_enough() {
    let plan = PLAN.replace("seeds = 2", "seeds = 4");
    let dir = scratch("until", &plan);
    let until = ["--until", "Wakeup-50.0th-us:ci<1000%", "--min-seeds", "2"];
    let one = fairsim(
        &dir,
        &[
            &["sweep", "plan.toml", "--jobs", "1", "--out", "u1"][..],
            &until[..],
        ]
        .concat(),
    );
    ok(&one);
    // 4 combinations of 4 seeds each, every one stopped at its first look (2 seeds).
    assert!(
        text(&one.stderr).contains("ran 8 of 16 points (--until Wakeup-50.0th-us:ci<1000%: 4 of 4 combinations stopped before the seed cap)"),
        "{}",
        text(&one.stderr)
    );
    let u1 = tree(&dir.join("u1"));
    assert_eq!(u1.keys().filter(|k| k.starts_with("points")).count(), 8);
    let summary = String::from_utf8(u1["summary.txt"].clone()).expect("utf-8");
    assert!(summary.contains("8 of 16 points"), "{summary}");
    assert_eq!(
        summary.matches("stopped after 2 of 4 seeds").count(),
        4,
        "{summary}"
    );
    // The same bytes on two threads, and over a directory where a full run of the plan
    // left the points past each stop.
    ok(&fairsim(
        &dir,
        &[
            &["sweep", "plan.toml", "--jobs", "2", "--out", "u2"][..],
            &until[..],
        ]
        .concat(),
    ));
    assert_eq!(u1, tree(&dir.join("u2")));
    ok(&fairsim(&dir, &["sweep", "plan.toml", "--out", "u3"]));
    assert_eq!(tree(&dir.join("u3")).len(), 18);
    ok(&fairsim(
        &dir,
        &[&["sweep", "plan.toml", "--out", "u3"][..], &until[..]].concat(),
    ));
    assert_eq!(u1, tree(&dir.join("u3")));
    // A cell whose seeds all gave the same value stops at its first look; one whose values
    // spread runs every seed and says so.
    let all = fairsim(
        &dir,
        &[
            "sweep",
            "plan.toml",
            "--out",
            "u4",
            "--until",
            "Wakeup-50.0th-us:ci<0.000001",
            "--min-seeds",
            "3",
        ],
    );
    ok(&all);
    let summary = std::fs::read_to_string(dir.join("u4/summary.txt")).expect("summary");
    assert!(summary.contains("14 of 16 points"), "{summary}");
    assert_eq!(
        summary
            .matches("smt-mc-1s4c2t, workloads=schbench:m=1,t=4,c=1ms,s=1ms, features=base: stopped after 3 of 4 seeds")
            .count()
            + summary
                .matches("smt-mc-1s4c2t, workloads=schbench:m=1,t=4,c=1ms,s=1ms, features=fast: stopped after 3 of 4 seeds")
                .count(),
        2,
        "{summary}"
    );
    assert_eq!(
        summary
            .matches("all 4 seeds: seed cap reached (last look: 95% CI of the mean")
            .count(),
        2,
        "{summary}"
    );
    for (args, want) in [
        (
            vec!["--until", "Wakeup-50.0th-us:significant"],
            "compares two sides",
        ),
        (
            vec!["--until", "Wakeup-50.0th-us:ci<5%", "--shard", "1/2"],
            "not with --shard",
        ),
        (vec!["--min-seeds", "3"], "--min-seeds: only with --until"),
        (vec!["--until", "nope:ci<5%"], "unknown metric 'nope'"),
        (
            vec!["--until", "Wakeup-50.0th-us:ci<5%"],
            "below --until's default --min-seeds 5",
        ),
        (
            vec!["--until", "Wakeup-50.0th-us:ci<5%", "--min-seeds", "5"],
            "2 to the plan's seeds (4)",
        ),
    ] {
        refused(
            &fairsim(
                &dir,
                &[&["sweep", "plan.toml", "--out", "bad"][..], &args[..]].concat(),
            ),
            want,
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
