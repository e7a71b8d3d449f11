//! The build's refusals: `Machine::validate`'s sibling-mask check and the builder's
//! `topology_span_sane`. Both are computed from the distinct masks rather than pair by
//! pair (so that machines of thousands of CPUs build in seconds); these tests pin the
//! pair each message names to the one the kernel's pairwise scan finds first.

use fairsim_topology::{
    build_sched_domains, machine_from_ids, Arch, BuildOptions, CpuIds, CpuMask, LlcScope, Machine,
    TopologyError,
};

/// A flat machine of `n` CPUs in `nodes` equal nodes, one package, distances 10/20.
fn flat(arch: Arch, n: usize, nodes: usize) -> Machine {
    let ids: Vec<CpuIds> = (0..n)
        .map(|i| CpuIds {
            socket: 0,
            die: 0,
            cluster: 0,
            core: i as u32,
            thread: 0,
            node: i * nodes / n,
            capacity: 1024,
        })
        .collect();
    let distance = (0..nodes)
        .map(|a| (0..nodes).map(|b| if a == b { 10 } else { 20 }).collect())
        .collect();
    machine_from_ids("t", arch, &ids, nodes, distance, LlcScope::Package).unwrap()
}

/// Gives each class of `classes` (CPU lists) as the LLC siblings of its CPUs.
fn set_llcs(m: &mut Machine, classes: &[&str]) {
    let n = m.nr_cpus();
    for list in classes {
        let mask = CpuMask::parse_list(n, list).unwrap();
        for cpu in mask.iter() {
            m.cpus[cpu].llc_siblings = mask.clone();
        }
    }
}

fn inconsistent(err: TopologyError) -> String {
    match err {
        e @ (TopologyError::Inconsistent { .. }
        | TopologyError::SiblingsDiffer { .. }
        | TopologyError::SmtOutsidePackage { .. }) => e.to_string(),
        other => panic!("expected an inconsistency, got {other}"),
    }
}

#[test]
fn sibling_masks_that_are_not_classes_name_the_first_pair() {
    let mut m = flat(Arch::X86, 8, 1);
    // cpu2 and cpu3 see a smaller LLC than cpu0 and cpu1 do.
    for cpu in [2, 3] {
        m.cpus[cpu].llc_siblings = CpuMask::parse_list(8, "2-7").unwrap();
    }
    let err = inconsistent(m.validate().unwrap_err());
    assert_eq!(
        err,
        "cpu0 llc_cpus '0-7' differs from cpu2's '2-7'; siblings must list the same CPUs"
    );
    // Masks that hold their own CPU and are consistent through their first CPU, but
    // overlap: the first offending CPU is not the first CPU of the machine.
    let mut m = flat(Arch::X86, 8, 1);
    set_llcs(&mut m, &["0-1", "2-5", "6-7"]);
    m.cpus[4].llc_siblings = CpuMask::parse_list(8, "4-7").unwrap();
    m.cpus[5].llc_siblings = CpuMask::parse_list(8, "4-7").unwrap();
    let err = inconsistent(m.validate().unwrap_err());
    assert_eq!(
        err,
        "cpu2 llc_cpus '2-5' differs from cpu4's '4-7'; siblings must list the same CPUs"
    );
    // A sibling whose mask lacks itself is found from the first CPU that lists it.
    let mut m = flat(Arch::X86, 8, 1);
    m.cpus[6].package_siblings = CpuMask::parse_list(8, "0-5").unwrap();
    let err = inconsistent(m.validate().unwrap_err());
    assert_eq!(
        err,
        "cpu0 core_siblings '0-7' differs from cpu6's '0-5'; siblings must list the same CPUs"
    );
    // A mask without its own CPU is reported as such before any sibling comparison.
    let mut m = flat(Arch::X86, 8, 1);
    m.cpus[0].package_siblings = CpuMask::parse_list(8, "1-7").unwrap();
    let err = inconsistent(m.validate().unwrap_err());
    assert_eq!(
        err,
        "cpu0 core_siblings: must contain the CPU itself (got '1-7')"
    );
}

#[test]
fn overlapping_arm64_coregroups_fail_topology_span_sane_at_the_kernels_pair() {
    // arm64's cpu_coregroup_mask narrows the node to the LLC only when the LLC fits in
    // it: an LLC straddling two nodes leaves its CPUs with the whole node, which overlaps
    // the neighbouring CPUs' LLC-sized masks.
    let mut m = flat(Arch::Arm64, 12, 3);
    set_llcs(&mut m, &["0-3", "4-5", "6-9", "10-11"]);
    m.validate().unwrap();
    let err = inconsistent(build_sched_domains(&m, BuildOptions::default()).unwrap_err());
    assert_eq!(
        err,
        "MC level: cpu4 spans 4-5 and cpu6 spans 4-7; \
         non-NUMA levels must be equal or disjoint (topology_span_sane)"
    );
    // The machine's first CPU fails, against the first later CPU of the node-wide mask.
    let mut m = flat(Arch::Arm64, 12, 3);
    set_llcs(&mut m, &["0-1", "2-5", "6-7", "8-11"]);
    m.validate().unwrap();
    let err = inconsistent(build_sched_domains(&m, BuildOptions::default()).unwrap_err());
    assert_eq!(
        err,
        "MC level: cpu0 spans 0-1 and cpu2 spans 0-3; \
         non-NUMA levels must be equal or disjoint (topology_span_sane)"
    );
}

#[test]
fn a_large_flat_machine_builds_with_one_group_list_entry_per_cpu_pair() {
    let m = flat(Arch::X86, 1024, 1);
    let sds = build_sched_domains(&m, BuildOptions::default()).unwrap();
    for cpu in [0, 511, 1023] {
        let sd = sds.cpus[cpu].sd.unwrap();
        let d = sds.domain(sd);
        assert_eq!(d.name, "MC");
        assert_eq!(d.groups.len(), 1024);
        assert_eq!(sds.group(d.groups[0]).span.to_list(), cpu.to_string());
        let next = (cpu + 1) % 1024;
        assert_eq!(sds.group(d.groups[1]).span.to_list(), next.to_string());
    }
    // The groups are shared: one per CPU, not one per CPU pair.
    assert_eq!(sds.groups.len(), 1024);
}
