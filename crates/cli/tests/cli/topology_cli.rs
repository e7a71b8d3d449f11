//! End-to-end tests of `fairsim topology`, run as a user runs it.

use std::path::PathBuf;

use crate::common::fairsim;

fn ground_truth(topo: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../topology/tests/data/linux-6.12")
        .join(topo)
}

fn strip_caps(text: &str) -> String {
    text.lines()
        .map(|l| {
            l.split(' ')
                .filter(|w| !w.starts_with("cap="))
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn dmesg_from_topology_json_equals_the_kernels_apart_from_measured_caps() {
    for topo in ["numa-4n-ring", "tc2-2big3little", "numa-4n-far"] {
        let dir = ground_truth(topo);
        let json = dir.join("topology.json");
        let out = fairsim(&[
            "topology",
            "--machine",
            json.to_str().unwrap(),
            "--format",
            "dmesg",
        ]);
        assert!(
            out.status.success(),
            "{topo}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let ours = String::from_utf8(out.stdout).unwrap();
        let theirs = std::fs::read_to_string(dir.join("dmesg-sched-joined.txt")).unwrap();
        assert_eq!(strip_caps(&ours), strip_caps(&theirs), "{topo}");
    }
}

#[test]
fn spr_preset_has_smt_mc_numa_for_every_cpu() {
    let out = fairsim(&["topology", "--topology", "spr-2s56c2t"]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("cpus 0-223: SMT: 2/2 > MC: 112/56 > NUMA: 224/2"),
        "{text}"
    );
}

#[test]
fn json_output_parses_and_is_deterministic() {
    let a = fairsim(&["topology", "--topology", "numa-4n-far", "--format", "json"]);
    let b = fairsim(&["topology", "--topology", "numa-4n-far", "--format", "json"]);
    assert!(a.status.success());
    assert_eq!(a.stdout, b.stdout, "same input must give the same bytes");
    let v: serde_json::Value = serde_json::from_slice(&a.stdout).unwrap();
    assert_eq!(v["nr_cpus"], 16);
    let cpu0 = &v["cpus"][0]["domains"];
    let names: Vec<&str> = cpu0
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, vec!["SMT", "MC", "NUMA", "NUMA"]);
}

#[test]
fn smp_spec_builds_the_same_domains_as_the_matching_preset() {
    let spec = fairsim(&[
        "topology",
        "--smp",
        "sockets=2,cores=4,threads=2",
        "--numa-distance",
        "10,21;21,10",
        "--format",
        "debugfs",
    ]);
    let preset = fairsim(&[
        "topology",
        "--topology",
        "numa-2s4c2t",
        "--format",
        "debugfs",
    ]);
    assert!(spec.status.success());
    assert_eq!(spec.stdout, preset.stdout);
}

#[test]
fn ilb_variant_gives_every_non_numa_domain_shared_state() {
    let out = fairsim(&[
        "topology",
        "--topology",
        "numa-2s4c2t",
        "--ilb-sd-share",
        "--format",
        "json",
    ]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    for d in v["cpus"][0]["domains"].as_array().unwrap() {
        let numa = d["name"] == "NUMA";
        assert_eq!(d["has_shared"], !numa, "{}", d["name"]);
    }
}

/// Bad input: one line on stderr naming the field, exit status 2, nothing on stdout.
fn assert_one_line_error(args: &[&str], field: &str) {
    let out = fairsim(args);
    assert_eq!(out.status.code(), Some(2), "{args:?}");
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
    assert!(err.contains(field), "{args:?}: '{err}' should name {field}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(out.stdout.is_empty());
}

#[test]
fn bad_input_is_a_one_line_error_naming_the_field() {
    assert_one_line_error(&["topology", "--smp", "sockets=0"], "sockets");
    assert_one_line_error(
        &["topology", "--smp", "sockets=100000,cores=100000"],
        "--smp",
    );
    assert_one_line_error(
        &[
            "topology",
            "--smp",
            "sockets=2",
            "--numa-distance",
            "10,21;21",
        ],
        "--numa-distance",
    );
    assert_one_line_error(
        &[
            "topology",
            "--smp",
            "sockets=2",
            "--numa-distance",
            "10,21;20,10",
        ],
        "--numa-distance",
    );
    assert_one_line_error(
        &[
            "topology",
            "--smp",
            "sockets=2",
            "--numa-distance",
            "30,21;21,30",
        ],
        "--numa-distance",
    );
    assert_one_line_error(&["topology", "--topology", "no-such-box"], "spr-2s56c2t");
    assert_one_line_error(
        &["topology", "--smp", "cpus=4", "--capacity", "0-3:0"],
        "--capacity",
    );
    assert_one_line_error(&["topology", "--smp", "sockets=2", "--bogus=1"], "--bogus");
    assert_one_line_error(&["topology", "--format", "xml"], "summary");
    assert_one_line_error(&["topology", "--cpu", "999"], "--cpu");
    assert_one_line_error(&["topology", "--arch", "mips", "--smp", "cpus=2"], "--arch");
    assert_one_line_error(
        &["topology", "--machine", "/no/such/file.toml"],
        "/no/such/file.toml",
    );
}
