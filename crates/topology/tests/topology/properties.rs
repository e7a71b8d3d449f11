//! Property tests: for random valid machines the built hierarchy keeps the invariants the
//! kernel's `sched_domain_debug_one` checks, and those the balancer relies on.

use fairsim_topology::{
    machine_from_ids, partition_sched_domains, Arch, BuildOptions, CpuIds, CpuMask, LlcScope,
    Machine, SdFlags,
};
use proptest::prelude::*;

/// A random machine: a regular socket/die/cluster/core/thread shape, nodes made of whole
/// sockets or equal slices of them, a symmetric distance table, and per-cluster capacities
/// on arm64.
fn machine_strategy() -> impl Strategy<Value = Machine> {
    (
        1u32..=4,
        1u32..=2,
        1u32..=2,
        1u32..=4,
        1u32..=2,
        prop_oneof![Just(Arch::X86), Just(Arch::Arm64)],
        prop_oneof![
            Just(LlcScope::Core),
            Just(LlcScope::Cluster),
            Just(LlcScope::Die),
            Just(LlcScope::Package)
        ],
        1usize..=2,
        proptest::collection::vec(11u32..=40, 28),
        proptest::collection::vec(prop_oneof![Just(1024u32), Just(512), Just(430)], 16),
    )
        .prop_map(
            |(sockets, dies, clusters, cores, threads, arch, llc, per_socket, dist, caps)| {
                let threads = if arch == Arch::Arm64 { 1 } else { threads };
                let per_pkg = (dies * clusters * cores * threads) as usize;
                let per_socket = per_socket.min(per_pkg);
                let nodes = (sockets as usize) * per_socket;
                let mut ids = Vec::new();
                for s in 0..sockets {
                    for d in 0..dies {
                        for cl in 0..clusters {
                            for c in 0..cores {
                                for t in 0..threads {
                                    let idx_in_pkg = ids.len() % per_pkg;
                                    let node =
                                        s as usize * per_socket + idx_in_pkg * per_socket / per_pkg;
                                    let cluster_index = ((s * dies + d) * clusters + cl) as usize;
                                    let capacity = if arch == Arch::Arm64 {
                                        caps[cluster_index % caps.len()]
                                    } else {
                                        1024
                                    };
                                    ids.push(CpuIds {
                                        socket: s,
                                        die: d,
                                        cluster: cl,
                                        core: c,
                                        thread: t,
                                        node,
                                        capacity,
                                    });
                                }
                            }
                        }
                    }
                }
                // Make the biggest CPU 1024, as normalisation guarantees.
                if ids.iter().all(|i| i.capacity != 1024) {
                    ids[0].capacity = 1024;
                }
                // Fill the upper triangle from the random pool, row by row, and mirror it.
                let mut distance = vec![vec![10u32; nodes]; nodes];
                let pairs = (0..nodes).flat_map(|i| (i + 1..nodes).map(move |j| (i, j)));
                for (k, (i, j)) in pairs.enumerate() {
                    let d = dist[k % dist.len()];
                    distance[i][j] = d;
                    distance[j][i] = d;
                }
                machine_from_ids("prop", arch, &ids, nodes, distance, llc)
                    .expect("generated machines are valid")
            },
        )
}

/// Exclusive cpusets drawn from one label per CPU: label 0 leaves the CPU to the top
/// cpuset, labels 1 and 2 put it in the first or second partition (empty ones dropped).
fn cpusets_of(n: usize, labels: &[u8]) -> Vec<CpuMask> {
    (1..=2u8)
        .map(|l| CpuMask::from_cpus(n, (0..n).filter(|&c| labels.get(c) == Some(&l))))
        .filter(|m| !m.is_empty())
        .collect()
}

/// The invariants of `partition_sched_domains(m, cpusets)`: those of a whole-machine
/// build, each root domain standing for the machine.
fn check_invariants(m: &Machine, cpusets: &[CpuMask]) -> Result<(), TestCaseError> {
    let n = m.nr_cpus();
    for opts in [
        BuildOptions::default(),
        BuildOptions {
            shared_all_non_numa: true,
            relax_domain_level: None,
        },
    ] {
        let sds = partition_sched_domains(m, opts, cpusets)
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        // The root domains are disjoint and cover the machine, and each CPU's index
        // names the one holding it.
        let mut union = CpuMask::new(n);
        for rd in &sds.root_domains {
            prop_assert!(!rd.intersects(&union), "root domains overlap");
            union.or_with(rd);
        }
        prop_assert_eq!(&union, &CpuMask::full(n));
        for cpu in 0..n {
            let chain: Vec<_> = sds.domains_of(cpu).collect();
            let all = &sds.root_domains[sds.root_domain_of(cpu)];
            prop_assert!(all.test(cpu), "cpu{} outside its root domain", cpu);
            if all.weight() == 1 {
                prop_assert!(chain.is_empty());
                continue;
            }
            prop_assert!(!chain.is_empty(), "cpu{cpu} has no domain in {all}");
            let top = sds.domain(*chain.last().unwrap());
            // All nodes are reachable (finite distances), so the top level spans the
            // CPU's whole root domain: the machine, or its cpuset partition.
            prop_assert_eq!(&top.span, all, "cpu{} top domain", cpu);
            let mut prev_span: Option<CpuMask> = None;
            let mut prev_level = None;
            for &id in &chain {
                let sd = sds.domain(id);
                prop_assert!(sd.span.test(cpu), "cpu{cpu} not in its {} span", sd.name);
                if let Some(p) = &prev_span {
                    prop_assert!(
                        p.is_subset(&sd.span),
                        "{} span does not contain child's",
                        sd.name
                    );
                    prop_assert!(p != &sd.span, "{} kept though it equals its child", sd.name);
                }
                if let Some(l) = prev_level {
                    prop_assert!(sd.level > l, "levels must increase");
                }
                // Groups cover the span; the first group holds the CPU.
                let first = sds.group(sd.groups[0]);
                prop_assert!(
                    first.span.test(cpu),
                    "first group of {} lacks cpu{cpu}",
                    sd.name
                );
                let mut covered = CpuMask::new(n);
                let mut total = 0usize;
                for &g in &sd.groups {
                    let grp = sds.group(g);
                    prop_assert!(grp.span.is_subset(&sd.span));
                    prop_assert!(!grp.span.is_empty());
                    let sgc = sds.group_sgc(g);
                    prop_assert!(!sgc.balance_mask.is_empty());
                    prop_assert!(sgc.balance_mask.is_subset(&grp.span));
                    let nominal: u64 = grp.span.iter().map(|c| u64::from(m.cpus[c].capacity)).sum();
                    if !sd.flags.contains(SdFlags::OVERLAP) {
                        prop_assert!(!covered.intersects(&grp.span), "{} groups overlap", sd.name);
                        prop_assert_eq!(sgc.capacity(), nominal);
                    }
                    covered.or_with(&grp.span);
                    total += grp.span.weight();
                }
                prop_assert_eq!(
                    &covered,
                    &sd.span,
                    "{} groups do not cover the span",
                    sd.name
                );
                if !sd.flags.contains(SdFlags::OVERLAP) {
                    prop_assert_eq!(total, sd.span.weight());
                    // The groups come in the order build_sched_groups' walk meets them:
                    // from the CPU, wrapping over the span, each at its first CPU not yet
                    // covered; the builder takes it as a rotation of the span's first
                    // ring without walking, which must give the walk's answer.
                    let groups: Vec<_> = sd.groups.iter().copied().collect();
                    let mut walk = Vec::new();
                    let mut seen = CpuMask::new(n);
                    for i in sd.span.iter_wrap(cpu) {
                        if seen.test(i) {
                            continue;
                        }
                        let g = groups.iter().copied().find(|&g| sds.group(g).span.test(i));
                        prop_assert!(g.is_some(), "cpu{} of {} in no group", i, sd.name);
                        let g = g.unwrap_or_default();
                        seen.or_with(&sds.group(g).span);
                        walk.push(g);
                    }
                    prop_assert_eq!(&walk, &groups, "{} groups out of walk order", sd.name);
                }
                prop_assert!(sd.groups.len() >= 2 || sd.flags.contains(SdFlags::WAKE_AFFINE));
                prev_span = Some(sd.span.clone());
                prev_level = Some(sd.level);
            }
            let c = &sds.cpus[cpu];
            if let Some(llc) = c.sd_llc {
                prop_assert!(sds.domain(llc).span.test(cpu));
                prop_assert_eq!(c.sd_llc_size, sds.domain(llc).span.weight());
            }
        }
        // Non-overlapping levels partition the machine: two CPUs' domains at one level are
        // equal or disjoint.
        for a in 0..n {
            for b in a + 1..n {
                for da in sds.domains_of(a) {
                    let x = sds.domain(da);
                    if x.flags.contains(SdFlags::OVERLAP) {
                        continue;
                    }
                    for db in sds.domains_of(b) {
                        let y = sds.domain(db);
                        if y.tl == x.tl {
                            prop_assert!(x.span == y.span || !x.span.intersects(&y.span));
                        }
                    }
                }
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn random_machines_keep_domain_invariants(m in machine_strategy()) {
        check_invariants(&m, &[])?;
    }

    #[test]
    fn random_cpuset_partitions_keep_domain_invariants(
        m in machine_strategy(),
        labels in proptest::collection::vec(0u8..3, 128),
    ) {
        let sets = cpusets_of(m.nr_cpus(), &labels);
        check_invariants(&m, &sets)?;
    }
}
