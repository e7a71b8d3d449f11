//! `--util-est` (and the scenario key `util_est`): the form reaches the scheduler, the
//! feature write NO_UTIL_EST still wins, and a bad name gets one line.

use crate::common::fairsim;

fn temp(name: &str) -> std::path::PathBuf {
    std::env::temp_dir().join(format!("fairsim-util-est-{}-{name}", std::process::id()))
}

/// The util_est form the run's JSON reports, and its stdout.
fn form(extra: &[&str]) -> (String, String) {
    let json = temp(&format!(
        "{}.json",
        extra.join("_").replace(['/', ' '], "-")
    ));
    let mut args = vec![
        "run",
        "--smp",
        "4",
        "--workload",
        "schbench:m=1,t=4,r=1",
        "--duration",
        "200ms",
        "--json",
        json.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let o = fairsim(&args);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    (
        v["util_est"].as_str().unwrap().to_string(),
        String::from_utf8(o.stdout).unwrap(),
    )
}

#[test]
fn every_form_reaches_the_scheduler() {
    let (f, out) = form(&[]);
    assert_eq!(f, "6.12");
    assert!(!out.contains("util_est"), "the default form is not named");
    for (given, want) in [
        ("6.12", "6.12"),
        ("legacy-nofastup", "legacy-nofastup"),
        ("legacy-fastup", "legacy-fastup"),
        ("legacy", "legacy-fastup"),
        ("off", "off"),
    ] {
        let (f, out) = form(&["--util-est", given]);
        assert_eq!(f, want, "--util-est {given}");
        if want != "6.12" {
            assert!(out.contains(&format!("; util_est {want}")), "{out}");
        }
    }
    // The feature writes keep their meaning: NO_UTIL_EST turns any form off, and
    // UTIL_EST_FASTUP adds the fast-up to the legacy form.
    assert_eq!(
        form(&["--util-est", "legacy", "--features", "NO_UTIL_EST"]).0,
        "off"
    );
    assert_eq!(
        form(&[
            "--util-est",
            "legacy-nofastup",
            "--features",
            "UTIL_EST_FASTUP"
        ])
        .0,
        "legacy-fastup"
    );
}

#[test]
fn the_scenario_key_sets_the_form_and_the_option_wins() {
    let scenario = temp("scenario.toml");
    std::fs::write(
        &scenario,
        "smp = \"4\"\nworkload = [\"schbench:m=1,t=4,r=1\"]\nduration = \"200ms\"\nutil_est = \"legacy-nofastup\"\n",
    )
    .unwrap();
    for (extra, want) in [
        (vec![], "legacy-nofastup"),
        (vec!["--util-est", "off"], "off"),
    ] {
        let json = temp(&format!("scenario-{want}.json"));
        let mut args = vec![
            "run",
            scenario.to_str().unwrap(),
            "--json",
            json.to_str().unwrap(),
        ];
        args.extend(extra);
        let o = fairsim(&args);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        assert_eq!(v["util_est"], want);
    }
}

#[test]
fn a_bad_form_gets_one_line() {
    let o = fairsim(&[
        "run",
        "--smp",
        "2",
        "--workload",
        "schbench",
        "--util-est",
        "4.17",
    ]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8(o.stderr).unwrap();
    assert_eq!(
        err.trim_end(),
        "fairsim: error: --util-est: invalid value '4.17'; allowed: 6.12, legacy (= legacy-fastup), legacy-fastup, legacy-nofastup, off"
    );
}
