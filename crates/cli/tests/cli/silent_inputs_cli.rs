//! Issue 50 row 9: inputs that were accepted without a word, each now refused in one line
//! or, where dropping the input is right, named in a note.

use crate::common::{fairsim, refused, s, stderr};

#[test]
fn a_leading_sudo_is_dropped_with_a_note() {
    let o = fairsim(&[
        "run",
        "--smp",
        "4",
        "-w",
        "sudo hackbench -g 1 -l 10",
        "--duration",
        "5ms",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(
            "fairsim: note: workload 'sudo hackbench -g 1 -l 10': sudo dropped; the command runs as it would under sudo"
        ),
        "{}",
        stderr(&o)
    );
}

#[test]
fn an_rtapp_file_without_threads_is_refused() {
    let dir = std::env::temp_dir().join(format!("fairsim-silent-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (name, text) in [
        ("none.json", "{\"tasks\": {}}"),
        (
            "zero.json",
            "{\"tasks\": {\"t\": {\"instance\": 0, \"run\": 1000}}}",
        ),
    ] {
        let f = dir.join(name);
        std::fs::write(&f, text).unwrap();
        let w = format!("rtapp:{}", s(&f));
        refused(
            &["run", "--smp", "2", "-w", &w],
            "tasks: no thread to run (no task, or every instance 0); allowed: at least one task with instance 1 or more",
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_key_twice_and_an_empty_item_are_refused() {
    refused(
        &["run", "--smp", "4", "-w", "hackbench:g=1,l=10,g=2"],
        "--workload: hackbench: g: given twice; allowed: each key once (g and groups are one key)",
    );
    refused(
        &["run", "--smp", "4", "-w", "hackbench:g=1,,l=10"],
        "--workload: hackbench: an empty item in 'g=1,,l=10'; allowed: key=value items separated by single commas",
    );
}

#[test]
fn a_state_no_kernel_prints_is_refused_by_every_report() {
    let dir = std::env::temp_dir().join(format!("fairsim-state-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("t.txt");
    std::fs::write(
        &f,
        "a-1 [000] d..2. 1.000000: sched_switch: prev_comm=a prev_pid=1 prev_prio=120 prev_state=QQQ ==> next_comm=b next_pid=2 next_prio=120\n",
    )
    .unwrap();
    for kind in ["latency", "timehist", "map"] {
        refused(
            &["report", kind, s(&f)],
            "line 1: sched_switch: prev_state=QQQ is not a state; allowed: R, or letters of SDTtXZPI",
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
