//! Features declared once (issue 33, part 1) end to end: `fairsim features` lists each
//! kernel's file from the declarations; a feature declared to change the domains builds
//! them in every command, with `--ilb-sd-share` a deprecated alias; a feature that needs
//! another is refused alike in every command.

use crate::common::{fairsim, ok, text};

/// A refusal: exit 2, one line on stderr, containing `needle`.
fn bad(args: &[&str], needle: &str) {
    let o = fairsim(args);
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
    assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
    assert!(err.contains(needle), "{args:?}: wanted '{needle}' in {err}");
}

#[test]
fn the_listing_follows_the_kernel() {
    let o = fairsim(&["features"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    assert!(out.starts_with("Linux 6.12.117's features file"), "{out}");
    assert!(
        out.contains("\nPLACE_LAG                on      features.h since 6.6 (EEVDF)\n"),
        "{out}"
    );
    assert!(
        out.contains("\nILB_FAST                 off     seed 000 patch 6/7\n"),
        "{out}"
    );
    assert!(out.contains("    needs ILB_SNAPSHOT ("), "{out}");
    assert!(!out.contains("START_DEBIT"), "{out}");
    let o = fairsim(&["features", "--kernel", "4.5"]);
    let out = text(&o.stdout);
    assert!(out.contains("\nSTART_DEBIT              on "), "{out}");
    assert!(!out.contains("PLACE_LAG"), "{out}");
    bad(
        &["features", "--kernel", "5.10"],
        "--kernel: unknown kernel '5.10'",
    );
    // run's --help points to the listing.
    let help = text(&fairsim(&["run", "--help"]).stdout);
    assert!(help.contains("fairsim features --kernel K"), "{help}");
    assert!(!help.contains("--ilb-sd-share"), "{help}");
}

#[test]
fn a_domain_changing_feature_builds_the_shared_state_in_topology() {
    let json = |args: &[&str]| -> serde_json::Value {
        let o = fairsim(args);
        assert!(o.status.success(), "{}", text(&o.stderr));
        serde_json::from_slice(&o.stdout).expect("JSON")
    };
    // Two packages on one node: PKG is above the LLC and below NUMA.
    let base = [
        "topology",
        "--smp",
        "sockets=2,cores=2,threads=2",
        "--format",
        "json",
    ];
    let shared = |v: &serde_json::Value| -> Vec<bool> {
        v["cpus"][0]["domains"]
            .as_array()
            .expect("domains")
            .iter()
            .map(|d| d["has_shared"].as_bool().expect("has_shared"))
            .collect()
    };
    let plain = json(&base);
    let mut with = base.to_vec();
    with.extend(["--features", "ILB_SNAPSHOT"]);
    let ilb = json(&with);
    assert_ne!(shared(&plain), shared(&ilb));
    assert!(shared(&ilb).iter().all(|&s| s), "{ilb}");
    // The deprecated option still builds it, and says so on stderr.
    let mut alias = base.to_vec();
    alias.push("--ilb-sd-share");
    let o = fairsim(&alias);
    assert!(o.status.success());
    assert_eq!(
        shared(&serde_json::from_slice(&o.stdout).expect("JSON")),
        shared(&ilb)
    );
    let err = text(&o.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("fairsim: note: --ilb-sd-share is deprecated"),
        "{err}"
    );
}

#[test]
fn run_builds_the_shared_state_itself_and_the_alias_changes_nothing_else() {
    let run = |extra: &[&str]| -> (String, String) {
        let mut args = vec![
            "run",
            "--smp",
            "sockets=2,cores=2,threads=2",
            "--workload",
            "hackbench:g=2,l=20",
            "--seed",
            "5",
            "--features",
            "ILB_SNAPSHOT,ILB_FAST",
        ];
        args.extend(extra);
        let o = fairsim(&args);
        assert!(o.status.success(), "{}", text(&o.stderr));
        (text(&o.stdout), text(&o.stderr))
    };
    let (a, _) = run(&[]);
    let (b, err) = run(&["--ilb-sd-share"]);
    let body = |s: &str| {
        s.lines()
            .filter(|l| !l.contains("wall"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(body(&a), body(&b));
    assert!(
        err.contains("fairsim: note: --ilb-sd-share is deprecated"),
        "{err}"
    );
}

#[test]
fn a_feature_without_the_one_it_reads_is_refused_in_every_command() {
    let needle = "ILB_FAST needs ILB_SNAPSHOT (seed 000: ILB_SNAPSHOT,ILB_FAST";
    bad(&["run", "--features", "ILB_FAST"], needle);
    bad(&["compare", "--new", "ILB_FAST"], needle);
    bad(&["race", "--features", "ILB_FAST"], needle);
    bad(&["topology", "--features", "ILB_FAST"], needle);
    bad(
        &["run", "--features", "NO_SUCH"],
        "allowed: default alone, or the names of Linux 6.12's features file",
    );
}

/// Issue 50 row 10: `--features default`, which the docs show for race, is the kernel's
/// defaults in every command.
#[test]
fn default_alone_is_the_kernels_defaults_in_every_command() {
    let plain = ok(&["run", "--smp", "2", "-w", "hackbench:g=1,l=10"]);
    let named = ok(&[
        "run",
        "--smp",
        "2",
        "-w",
        "hackbench:g=1,l=10",
        "--features",
        "default",
    ]);
    assert_eq!(plain, named);
    ok(&[
        "compare",
        "--smp",
        "2",
        "-w",
        "hackbench:g=1,l=10",
        "--base",
        "default",
        "--new",
        "NO_SIS_UTIL",
        "--seeds",
        "2",
    ]);
}
