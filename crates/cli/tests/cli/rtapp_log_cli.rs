//! `fairsim run --rtapp-log DIR`: rt-app's per-thread log files, and the option refused
//! where it cannot apply.

use crate::common::{fairsim, stderr};

#[test]
fn the_log_files_are_written_one_per_thread() {
    let dir = std::env::temp_dir().join(format!("fairsim-rtapp-log-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("p.json");
    std::fs::write(
        &file,
        r#"{"tasks": {"p": {"instance": 2, "run": 2000, "timer": {"ref": "unique", "period": 10000}}}}"#,
    )
    .unwrap();
    let logs = dir.join("logs");
    let w = format!("rtapp:{}", file.display());
    let o = fairsim(&[
        "run",
        "--smp",
        "4",
        "--workload",
        &w,
        "--duration",
        "100ms",
        "--rtapp-log",
        logs.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    for k in 0..2 {
        let text = std::fs::read_to_string(logs.join(format!("rt-app-p-{k}-{k}.log"))).unwrap();
        let mut lines = text.lines();
        assert_eq!(lines.next(), Some("# Policy : SCHED_OTHER priority : 0"));
        assert!(lines
            .next()
            .unwrap()
            .starts_with("#idx     perf      run   period"));
        let rows: Vec<&str> = lines.collect();
        assert_eq!(rows.len(), 9, "{text}");
        assert!(rows
            .iter()
            .all(|r| r.split_whitespace().next() == Some(&k.to_string()[..])));
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn the_option_is_refused_without_an_rt_app_workload_and_by_compare() {
    let o = fairsim(&[
        "run",
        "--smp",
        "2",
        "--workload",
        "sysbench-cpu:threads=1",
        "--duration",
        "10ms",
        "--rtapp-log",
        "/tmp/never",
    ]);
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert_eq!(e.lines().count(), 1, "{e}");
    assert!(
        e.contains("--rtapp-log: the run has no rt-app workload"),
        "{e}"
    );
    let o = fairsim(&["compare", "--new", "ILB_FAST", "--rtapp-log", "/tmp/never"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("--rtapp-log: not available with compare"),
        "{}",
        stderr(&o)
    );
}
