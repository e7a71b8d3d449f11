//! Tests of the machine description sources: presets, qemu-style specs, machine files
//! (fairsim's schema and the ground-truth `topology.json`) and sysfs trees.

use std::path::{Path, PathBuf};

use fairsim_topology::source::{
    load_machine_file, load_sysfs, parse_spec, preset, SpecOptions, PRESETS,
};
use fairsim_topology::{Arch, LlcScope, Machine};

/// The ground-truth topologies copied from `shared/ground-truth/linux-6.12/`.
const GROUND_TRUTH: [&str; 9] = [
    "dies-1s2d2c1t",
    "e5-2690v2",
    "numa-2s4c2t",
    "numa-2s8c2t",
    "numa-4n-far",
    "numa-4n-ring",
    "smt-mc-1s4c2t",
    "spr-2s56c2t",
    "tc2-2big3little",
];

fn data(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(rel)
}

/// A fresh scratch directory for one test, under the system temp dir.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("fairsim-sources-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// Asserts that two machines agree on everything the domain builder reads from masks:
/// architecture, nodes, distances, and per CPU its node, capacity and sibling masks.
/// Names and raw ids are allowed to differ (QEMU's guest ids are APIC-derived).
fn assert_same_masks(a: &Machine, b: &Machine) {
    assert_eq!(a.arch, b.arch, "{} vs {}: arch", a.name, b.name);
    assert_eq!(
        a.nr_cpus(),
        b.nr_cpus(),
        "{} vs {}: CPU count",
        a.name,
        b.name
    );
    assert_eq!(
        a.node_cpus, b.node_cpus,
        "{} vs {}: node cpus",
        a.name, b.name
    );
    assert_eq!(a.distance, b.distance, "{} vs {}: distance", a.name, b.name);
    for (cpu, (x, y)) in a.cpus.iter().zip(&b.cpus).enumerate() {
        let what = format!("{} vs {} cpu{cpu}", a.name, b.name);
        assert_eq!(x.node, y.node, "{what}: node");
        assert_eq!(x.capacity, y.capacity, "{what}: capacity");
        assert_eq!(x.smt_siblings, y.smt_siblings, "{what}: smt");
        assert_eq!(x.cluster_siblings, y.cluster_siblings, "{what}: cluster");
        assert_eq!(x.llc_siblings, y.llc_siblings, "{what}: llc");
        assert_eq!(x.package_siblings, y.package_siblings, "{what}: package");
    }
}

fn spec_err(opts: &SpecOptions) -> String {
    let err = parse_spec(opts)
        .expect_err("spec should be rejected")
        .to_string();
    assert!(!err.contains('\n'), "error must be one line: {err}");
    err
}

fn smp(text: &str) -> SpecOptions {
    SpecOptions::new(text, Arch::X86)
}

#[test]
fn presets_have_expected_sizes() {
    let expected: [(&str, usize, usize); 16] = [
        ("spr-2s56c2t", 224, 2),
        ("2s24c2t", 96, 2),
        ("e5-2690v2", 40, 2),
        ("tc2", 5, 1),
        ("tc2-2big3little", 5, 1),
        ("tc2-2a15", 2, 1),
        ("rk3399", 6, 1),
        ("gs101", 8, 1),
        ("dies-1s2d2c1t", 4, 1),
        ("numa-2s4c2t", 16, 2),
        ("numa-2s8c2t", 32, 2),
        ("numa-4n-far", 16, 4),
        ("numa-4n-ring", 16, 4),
        ("smt-mc-1s4c2t", 8, 1),
        ("2n-2s16c2t", 64, 2),
        ("4n-4s8c2t", 64, 4),
    ];
    assert_eq!(
        PRESETS.len(),
        expected.len(),
        "every preset is checked here"
    );
    for (name, cpus, nodes) in expected {
        let m = preset(name).unwrap_or_else(|e| panic!("{name}: {e}"));
        m.validate().unwrap();
        assert_eq!((m.nr_cpus(), m.nr_nodes()), (cpus, nodes), "{name}");
        assert!(PRESETS.iter().any(|(n, _)| *n == name), "{name} listed");
    }
}

#[test]
fn preset_details_match_the_seed_machines() {
    let spr = preset("spr-2s56c2t").unwrap();
    assert_eq!(spr.cpus[0].llc_siblings.to_list(), "0-111");
    assert_eq!(spr.cpus[223].smt_siblings.to_list(), "222-223");
    assert_eq!(spr.distance, vec![vec![10, 21], vec![21, 10]]);
    let tc2 = preset("tc2").unwrap();
    assert_eq!(tc2.arch, Arch::Arm64);
    let caps: Vec<u32> = tc2.cpus.iter().map(|c| c.capacity).collect();
    assert_eq!(caps, vec![1024, 1024, 430, 430, 430]);
    assert_eq!(tc2.cpus[3].llc_siblings.to_list(), "2-4");
    assert!(tc2.is_asymmetric());
    let dies = preset("dies-1s2d2c1t").unwrap();
    assert_eq!(dies.cpus[2].llc_siblings.to_list(), "2-3");
    assert_eq!(dies.cpus[2].package_siblings.to_list(), "0-3");
}

#[test]
fn gs101_has_three_capacity_classes_with_an_energy_model_each() {
    let m = preset("gs101").unwrap();
    assert_eq!(m.arch, Arch::Arm64);
    assert!(m.is_asymmetric() && !m.smt_present());
    let caps: Vec<u32> = m.cpus.iter().map(|c| c.capacity).collect();
    // capacity-dmips-mhz x the policy's top frequency, the X1's product scaled to 1024.
    assert_eq!(caps, vec![160, 160, 160, 160, 498, 498, 1024, 1024]);
    let counts: Vec<usize> = m.cpufreq.iter().map(|d| d.opps.len()).collect();
    assert_eq!(counts, vec![11, 14, 17]);
    let latencies: Vec<u64> = m.cpufreq.iter().map(|d| d.transition_latency_ns).collect();
    assert_eq!(latencies, vec![500_000; 3]);
    let powers: Vec<Vec<u64>> = m
        .cpufreq
        .iter()
        .map(|d| d.em_power_uw().expect("an energy model per policy"))
        .collect();
    // By hand, C x mV^2 x MHz / 10^6 with the kernel's truncations:
    // A55 at 1803 MHz, 906250 uV: 70 x 906^2 x 1803 / 10^6 = 103597.7 -> 103597 uW.
    assert_eq!(powers[0][10], 103_597);
    // A76 at 400 MHz, 506250 uV: 284 x 506^2 x 400 / 10^6 = 29085.7 -> 29085 uW.
    assert_eq!(powers[1][0], 29_085);
    // X1 at 2802 MHz, 1056250 uV: 650 x 1056^2 x 2802 / 10^6 = 2030997.2 -> 2030997 uW.
    assert_eq!(powers[2][16], 2_030_997);
}

#[test]
fn unknown_preset_lists_allowed_names() {
    let err = preset("spr").unwrap_err().to_string();
    assert!(err.contains("--topology") && err.contains("'spr'"), "{err}");
    assert!(err.contains("e5-2690v2") && err.contains("tc2"), "{err}");
}

#[test]
fn ground_truth_files_match_their_presets() {
    for topo in GROUND_TRUTH {
        let path = data(&format!("linux-6.12/{topo}/topology.json"));
        let loaded = load_machine_file(&path).unwrap_or_else(|e| panic!("{topo}: {e}"));
        assert_eq!(loaded.name, topo);
        let expected = preset(topo).unwrap();
        assert_same_masks(&loaded, &expected);
    }
}

#[test]
fn ground_truth_llc_is_identified_from_the_cache_lines() {
    let dies = load_machine_file(&data("linux-6.12/dies-1s2d2c1t/topology.json")).unwrap();
    assert_eq!(dies.cpus[3].llc_siblings.to_list(), "2-3");
    let tc2 = load_machine_file(&data("linux-6.12/tc2-2big3little/topology.json")).unwrap();
    assert_eq!(tc2.arch, Arch::Arm64);
    assert_eq!(tc2.cpus[0].llc_siblings.to_list(), "0-1");
    assert_eq!(tc2.cpus[4].capacity, 430);
}

#[test]
fn spec_builds_qemu_numbering_and_nodes() {
    let mut o = smp("16,sockets=2,cores=4,threads=2");
    o.numa_distance = Some("10,21;21,10".into());
    let m = parse_spec(&o).unwrap();
    assert_eq!(m.node_cpus[1].to_list(), "8-15");
    assert_eq!(m.cpus[9].node, 1);
    o.numa_cpus = Some("0-3,8-11;4-7,12-15".into());
    let m = parse_spec(&o).unwrap();
    assert_eq!(m.cpus[9].node, 0);
    assert_eq!(m.cpus[5].node, 1);
    let mut a = SpecOptions::new("5,clusters=1", Arch::Arm64);
    a.capacity = Some("0-1:1441,2-4:606".into());
    let m = parse_spec(&a).unwrap();
    assert_eq!(m.cpus[2].capacity, 430);
    assert_eq!(m.cpus[0].llc_siblings.to_list(), "0-4");
    let mut pkg = smp("sockets=1,dies=2,cores=2");
    pkg.llc = Some(LlcScope::Package);
    assert_eq!(
        parse_spec(&pkg).unwrap().cpus[0].llc_siblings.to_list(),
        "0-3"
    );
}

#[test]
fn spec_errors_name_the_field() {
    let cases: Vec<(SpecOptions, &str)> = vec![
        (smp("0"), "--smp cpus"),
        (smp(""), "--smp"),
        (smp("sockets=100000,cores=100000"), "--smp sockets"),
        (
            smp("sockets=8192,dies=8192,clusters=8192,cores=8192,threads=8192"),
            "from 1 to 8192 CPUs",
        ),
        (smp("sockets=2,books=2"), "--smp books"),
        (smp("10,sockets=3"), "CPU count 10"),
        (smp("8,maxcpus=16"), "--smp maxcpus"),
        (smp("8,cores=x"), "--smp cores"),
    ];
    for (opts, needle) in cases {
        let err = spec_err(&opts);
        assert!(err.contains(needle), "'{}': {err}", opts.smp);
    }
    let err = spec_err(&smp("sockets=2,books=2"));
    assert!(err.contains("threads") && err.contains("clusters"), "{err}");
}

#[test]
fn numa_and_capacity_errors_name_the_field() {
    let with = |dist: &str, cpus: Option<&str>, cap: Option<&str>| {
        let mut o = smp("8,sockets=2,cores=4");
        o.numa_distance = (!dist.is_empty()).then(|| dist.to_string());
        o.numa_cpus = cpus.map(str::to_string);
        o.capacity = cap.map(str::to_string);
        o
    };
    let cases = [
        (with("10,21;21", None, None), "--numa-distance row 1"),
        (with("10,21;22,10", None, None), "symmetric"),
        (with("20,10;10,20", None, None), "--numa-distance row 0"),
        (
            with("10,21;21,10", Some("0-7;"), None),
            "--numa-cpus node 1",
        ),
        (
            with("10,21;21,10", Some("0-3;3-7"), None),
            "--numa-cpus node 1",
        ),
        (with("10,21;21,10", Some("0-3;4-6"), None), "CPUs 7"),
        (with("", Some("0-7"), None), "--numa-cpus"),
        (
            with("10,21,21;21,10,21;21,21,10", None, None),
            "--numa-distance",
        ),
        (with("", None, Some("0-7:0")), "--capacity"),
        (with("", None, Some("0-6:1024")), "--capacity"),
        (with("", None, Some("0-7:1024,3:512")), "--capacity"),
        (with("", None, Some("0-7")), "--capacity"),
    ];
    for (opts, needle) in cases {
        let err = spec_err(&opts);
        assert!(err.contains(needle), "{opts:?}: {err}");
    }
}

const TOML_EXAMPLE: &str = r#"
name = "tc2-like"
arch = "arm64"
capacity = "0-1:1441,2-4:606"

[smp]
cpus = 5
sockets = 1
dies = 1
clusters = 1
cores = 5
threads = 1
llc = "cluster"

[numa]
distance = [[10]]
cpus = ["0-4"]
"#;

#[test]
fn toml_and_json_files_load() {
    let dir = scratch("files-ok");
    let toml_path = dir.join("box.toml");
    std::fs::write(&toml_path, TOML_EXAMPLE).unwrap();
    let m = load_machine_file(&toml_path).unwrap();
    assert_eq!(
        (m.name.as_str(), m.arch, m.nr_cpus()),
        ("tc2-like", Arch::Arm64, 5)
    );
    assert_eq!(m.cpus[4].capacity, 430);

    let json_path = dir.join("numa.json");
    let json = r#"{"arch": "x86", "smp": {"sockets": 2, "cores": 4, "threads": 2, "llc": "package"},
                   "numa": {"distance": [[10, 21], [21, 10]]}}"#;
    std::fs::write(&json_path, json).unwrap();
    let m = load_machine_file(&json_path).unwrap();
    assert_eq!(m.name, "numa");
    let mut o = smp("sockets=2,cores=4,threads=2");
    o.numa_distance = Some("10,21;21,10".into());
    o.llc = Some(LlcScope::Package);
    assert_same_masks(&m, &parse_spec(&o).unwrap());
}

#[test]
fn file_errors_name_the_path_and_field() {
    let dir = scratch("files-bad");
    let cases = [
        ("unknown.toml", "[smp]\ncores = 4\nturbo = true\n", "turbo"),
        ("top.toml", "colour = 1\n[smp]\ncores = 4\n", "colour"),
        (
            "dist.toml",
            "[smp]\ncores = 4\n[numa]\ndistance = [[10, 21], [21]]\n",
            "numa.distance row 1",
        ),
        ("cores.toml", "[smp]\ncores = 0\n", "smp.cores"),
        ("llc.toml", "[smp]\ncores = 4\nllc = \"l3\"\n", "smp.llc"),
        ("arch.toml", "arch = \"riscv\"\n[smp]\ncores = 4\n", "arch"),
        (
            "unknown.json",
            r#"{"smp": {"cores": 4, "turbo": 1}}"#,
            "turbo",
        ),
        (
            "cap.json",
            r#"{"smp": {"cores": 2}, "capacity": "0-1:0"}"#,
            "capacity",
        ),
        ("machine.yaml", "smp: 4\n", ".toml or .json"),
        ("array.json", "[1, 2]", "top level is not an object"),
    ];
    for (file, text, needle) in cases {
        let path = dir.join(file);
        std::fs::write(&path, text).unwrap();
        let err = load_machine_file(&path).expect_err(file).to_string();
        assert!(!err.contains('\n'), "{file}: one line: {err}");
        assert!(err.contains(file) && err.contains(needle), "{file}: {err}");
    }
    let missing = load_machine_file(&dir.join("absent.toml"))
        .unwrap_err()
        .to_string();
    assert!(missing.contains("absent.toml"), "{missing}");
}

/// Loads a ground-truth file after editing its JSON, and returns the error.
fn edited_ground_truth_err(topo: &str, edit: impl Fn(&mut serde_json::Value)) -> String {
    let text = std::fs::read_to_string(data(&format!("linux-6.12/{topo}/topology.json"))).unwrap();
    let mut doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    edit(&mut doc);
    let path = scratch(&format!("gt-{topo}")).join("topology.json");
    std::fs::write(&path, doc.to_string()).unwrap();
    let err = load_machine_file(&path)
        .expect_err("edited file should fail")
        .to_string();
    assert!(!err.contains('\n'), "{err}");
    err
}

#[test]
fn bad_ground_truth_is_rejected() {
    let err = edited_ground_truth_err("tc2-2big3little", |d| {
        d["guest_observed"]["cpus"][3]["capacity"] = 2000.into();
    });
    assert!(err.contains("cpu3 capacity"), "{err}");
    let err = edited_ground_truth_err("numa-2s4c2t", |d| {
        d["guest_observed"]["nodes"][1]["distance"] = serde_json::json!([22, 10]);
    });
    assert!(err.contains("numa-distance"), "{err}");
    let err = edited_ground_truth_err("numa-2s4c2t", |d| {
        d["guest_observed"]["nodes"][1]["distance"] = serde_json::json!([21]);
    });
    assert!(err.contains("nodes[1] distance"), "{err}");
    // Emptying node 1 leaves its CPUs in no node at all.
    let err = edited_ground_truth_err("numa-2s4c2t", |d| {
        d["guest_observed"]["nodes"][1]["cpus"] = "".into();
    });
    assert!(err.contains("belong to no node"), "{err}");
    let err = edited_ground_truth_err("smt-mc-1s4c2t", |d| {
        d["guest_observed"]["cpus"] = serde_json::json!([]);
    });
    assert!(err.contains("guest_observed.cpus"), "{err}");
}

#[test]
fn sysfs_smt_box_matches_its_spec() {
    let m = load_sysfs(&data("sysfs/smt8"), Arch::X86).unwrap();
    assert_eq!((m.nr_cpus(), m.nr_nodes()), (8, 1));
    assert_eq!(m.cpus[5].smt_siblings.to_list(), "4-5");
    assert_same_masks(&m, &preset("smt-mc-1s4c2t").unwrap());
}

#[test]
fn sysfs_drops_memory_only_nodes() {
    let m = load_sysfs(&data("sysfs/numa2"), Arch::X86).unwrap();
    assert_eq!(m.distance, vec![vec![10, 21], vec![21, 10]]);
    let mut o = smp("8,sockets=2,cores=2,threads=2");
    o.numa_distance = Some("10,21;21,10".into());
    assert_same_masks(&m, &parse_spec(&o).unwrap());
}

#[test]
fn sysfs_big_little_matches_tc2() {
    let m = load_sysfs(&data("sysfs/biglittle"), Arch::Arm64).unwrap();
    assert_same_masks(&m, &preset("tc2").unwrap());
}

#[test]
fn sysfs_errors_name_the_file() {
    let src = data("sysfs/smt8");
    let cpu_dir = |root: &Path, n: usize| root.join(format!("devices/system/cpu/cpu{n}"));

    let hole = scratch("sysfs-hole");
    copy_tree(&src, &hole);
    std::fs::remove_dir_all(cpu_dir(&hole, 3)).unwrap();
    let err = load_sysfs(&hole, Arch::X86).unwrap_err().to_string();
    assert!(err.contains("cpu3 is missing"), "{err}");

    let offline = scratch("sysfs-offline");
    copy_tree(&src, &offline);
    std::fs::write(cpu_dir(&offline, 2).join("online"), "0\n").unwrap();
    let err = load_sysfs(&offline, Arch::X86).unwrap_err().to_string();
    assert!(err.contains("cpu2 is offline"), "{err}");

    // Garbage in `online` is refused, not counted as online.
    std::fs::write(cpu_dir(&offline, 2).join("online"), "yes\n").unwrap();
    let err = load_sysfs(&offline, Arch::X86).unwrap_err().to_string();
    assert!(
        err.contains("cpu2/online") && err.contains("0 or 1"),
        "{err}"
    );

    let cap = scratch("sysfs-capacity");
    copy_tree(&src, &cap);
    std::fs::write(cpu_dir(&cap, 1).join("cpu_capacity"), "2000\n").unwrap();
    let err = load_sysfs(&cap, Arch::X86).unwrap_err().to_string();
    assert!(
        err.contains("cpu1/cpu_capacity") && err.contains("1 to 1024"),
        "{err}"
    );

    let nocache = scratch("sysfs-nocache");
    copy_tree(&src, &nocache);
    for n in 0..8 {
        std::fs::remove_dir_all(cpu_dir(&nocache, n).join("cache")).unwrap();
    }
    // Without caches the LLC falls back to die_cpus_list, which is the package here.
    let m = load_sysfs(&nocache, Arch::X86).unwrap();
    assert_eq!(m.cpus[0].llc_siblings.to_list(), "0-7");

    let bad_mask = scratch("sysfs-mask");
    copy_tree(&src, &bad_mask);
    std::fs::write(
        cpu_dir(&bad_mask, 0).join("topology/thread_siblings_list"),
        "0-9\n",
    )
    .unwrap();
    let err = load_sysfs(&bad_mask, Arch::X86).unwrap_err().to_string();
    assert!(err.contains("thread_siblings_list"), "{err}");

    let empty = scratch("sysfs-empty");
    let err = load_sysfs(&empty, Arch::X86).unwrap_err().to_string();
    assert!(err.contains("devices/system/cpu"), "{err}");

    for dir in [hole, offline, cap, nocache, bad_mask, empty] {
        let _ = std::fs::remove_dir_all(dir);
    }
}
