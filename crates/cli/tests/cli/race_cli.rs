//! End-to-end tests of `fairsim race`.

use crate::common::{fairsim, text};

#[test]
fn two_feature_sets_and_two_thread_counts_give_four_runs_and_a_table() {
    let o = fairsim(&[
        "race",
        "--duration",
        "150ms",
        "--start",
        "cpu0",
        "--threads",
        "2,16",
        "--features",
        "default",
        "--features",
        "ILB_SNAPSHOT,ILB_FAST",
    ]);
    let out = text(&o.stdout);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert_eq!(out.matches("conservation: ok").count(), 4, "{out}");
    // Nothing is turned on that was not written: no note, no added feature.
    assert!(!out.contains("note:"), "{out}");
    assert!(
        out.contains("update_sd_lb_stats wall ns, newidle:"),
        "{out}"
    );
    let table = out.split("features ").last().expect("table");
    assert_eq!(
        table.lines().filter(|l| l.ends_with("yes")).count(),
        4,
        "{out}"
    );
}

#[test]
fn bad_race_options_are_one_line_errors() {
    for (args, field) in [
        (vec!["race", "--start", "everywhere"], "--start"),
        (vec!["race", "--pattern", "storm"], "--pattern"),
        (vec!["race", "--threads", "0"], "--threads"),
        (vec!["race", "--threads", "2,x"], "--threads"),
        (vec!["race", "--duration", "0s"], "--duration"),
        (vec!["race", "--run", "5s"], "--run"),
        (vec!["race", "--features", "NO_SUCH"], "--features"),
        (
            vec![
                "race",
                "--smp",
                "sockets=1,cores=4",
                "--capacity",
                "0-1:1024,2-3:512",
            ],
            "machine",
        ),
    ] {
        let o = fairsim(&args);
        let err = text(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(field), "{args:?}: {err}");
    }
}

#[test]
fn the_schedstat_file_reads_back_with_fairsim_schedstat() {
    let dir = std::env::temp_dir().join(format!("fairsim-race-ss-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let file = dir.join("race.schedstat");
    let f = file.to_str().expect("utf-8 path");
    let json = dir.join("race.json");
    let j = json.to_str().expect("utf-8 path");
    let o = fairsim(&[
        "race",
        "--duration",
        "150ms",
        "--threads",
        "4",
        "--schedstat",
        f,
        "--json",
        j,
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let written = std::fs::read_to_string(&file).expect("schedstat file");
    assert!(written.starts_with("version 16\ntimestamp "), "{written}");
    let o = fairsim(&["schedstat", "show", f]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let shown = text(&o.stdout);
    // Tokens start on CPU 0, so some CPU balanced as newly idle and counted it.
    assert!(shown.contains(".CPU_NEWLY_IDLE.lb_count"), "{shown}");
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).expect("json file")).expect("json");
    assert_eq!(doc[0]["threads"], 4);
    assert_eq!(doc[0]["conservation"]["ok"], true);
    assert!(doc[0]["update_sd_lb_stats"]["newidle"]["calls"]
        .as_u64()
        .is_some());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_one_cpu_machine_runs_without_domains() {
    let o = fairsim(&["race", "--smp", "sockets=1,cores=1", "--duration", "100ms"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(text(&o.stdout).contains("conservation: ok (1 tokens"));
}
