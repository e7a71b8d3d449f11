//! Exclusive cpuset partitions: each partition is built as `build_sched_domains(cpu_map)`
//! builds it, so one socket of a two-socket machine has, CPU for CPU, the hierarchy of a
//! one-socket machine of that shape, and no domain or group reaches across partitions.

use fairsim_topology::source::{parse_spec, preset, SpecOptions};
use fairsim_topology::{
    build_sched_domains, parse_cpusets, partition_sched_domains, Arch, BuildOptions, CpuMask,
    SchedDomains,
};

fn lists(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

/// A CPU's hierarchy as text, every CPU number passed through `map`: per domain its name,
/// level, span, flags and parameters, and per group its span, balance mask, capacity
/// object id, weight, cores and capacities; then the `update_top_cache_domain` pointers.
fn describe(sds: &SchedDomains, cpu: usize, map: &dyn Fn(usize) -> usize) -> Vec<String> {
    let cpus = |m: &CpuMask| m.iter().map(map).collect::<Vec<_>>();
    let mut out = Vec::new();
    for id in sds.domains_of(cpu) {
        let d = sds.domain(id);
        out.push(format!(
            "{} level={} span={:?} flags={} pct={} interval={}..{} nice={} imb_numa_nr={} \
             shared={}",
            d.name,
            d.level,
            cpus(&d.span),
            d.flags.debugfs_string().trim_end(),
            d.imbalance_pct,
            d.min_interval,
            d.max_interval,
            d.cache_nice_tries,
            d.imb_numa_nr,
            d.shared.is_some(),
        ));
        for &g in &d.groups {
            let grp = sds.group(g);
            let sgc = sds.group_sgc(g);
            out.push(format!(
                "  group id={} span={:?} mask={:?} weight={} cores={} caps={:?} flags={}",
                map(sgc.id),
                cpus(&grp.span),
                cpus(&sgc.balance_mask),
                grp.group_weight,
                grp.cores,
                sgc.capacities(),
                grp.flags.debugfs_string().trim_end(),
            ));
        }
    }
    let c = &sds.cpus[cpu];
    let name = |id: Option<usize>| id.map(|d| sds.domain(d).name);
    out.push(format!(
        "llc={:?} size={} llc_id={} share_id={} numa={:?} capacity={}",
        name(c.sd_llc),
        c.sd_llc_size,
        map(c.sd_llc_id),
        map(c.sd_share_id),
        name(c.sd_numa),
        c.cpu_capacity,
    ));
    out
}

/// One socket of `e5-2690v2` (10 cores x 2 threads, CPUs 0-19 and 20-39) as the same
/// socket alone on a one-socket machine.
fn one_socket() -> SchedDomains {
    let m = parse_spec(&SpecOptions::new(
        "20,sockets=1,dies=1,cores=10,threads=2",
        Arch::X86,
    ))
    .unwrap();
    build_sched_domains(&m, BuildOptions::default()).unwrap()
}

#[test]
fn a_socket_partition_is_built_as_that_socket_alone() {
    let m = preset("e5-2690v2").unwrap();
    let alone = one_socket();
    for (cpuset, first) in [("0-19", 0), ("20-39", 20)] {
        let sets = parse_cpusets(m.nr_cpus(), &lists(&[cpuset]), "--cpuset").unwrap();
        let sds = partition_sched_domains(&m, BuildOptions::default(), &sets).unwrap();
        for cpu in first..first + 20 {
            let got = describe(&sds, cpu, &|c| c - first);
            let want = describe(&alone, cpu - first, &|c| c);
            assert_eq!(got, want, "cpu{cpu} of partition {cpuset}");
        }
        // The whole-machine build has a NUMA level above the socket: the partition's
        // build is not simply the machine's.
        let whole = build_sched_domains(&m, BuildOptions::default()).unwrap();
        assert_ne!(
            describe(&whole, first, &|c| c),
            describe(&sds, first, &|c| c)
        );
    }
}

#[test]
fn no_domain_or_group_spans_two_partitions() {
    // Four nodes of four CPUs, two NUMA distances: partitions that cut nodes in two and
    // join nodes at both distances.
    let m = preset("numa-4n-far").unwrap();
    let sets = parse_cpusets(m.nr_cpus(), &lists(&["0-3,9", "12-15", "5-6"]), "--cpuset").unwrap();
    let sds = partition_sched_domains(&m, BuildOptions::default(), &sets).unwrap();
    let spans: Vec<String> = sds.root_domains.iter().map(CpuMask::to_list).collect();
    // The top cpuset keeps what the partitions leave, and comes first.
    assert_eq!(spans, vec!["4,7-8,10-11", "0-3,9", "12-15", "5-6"]);
    for cpu in 0..m.nr_cpus() {
        let rd = &sds.root_domains[sds.root_domain_of(cpu)];
        assert!(rd.test(cpu));
        let chain: Vec<_> = sds.domains_of(cpu).collect();
        assert!(!chain.is_empty(), "cpu{cpu}");
        assert_eq!(&sds.domain(*chain.last().unwrap()).span, rd, "cpu{cpu} top");
        for id in chain {
            let d = sds.domain(id);
            assert!(d.span.is_subset(rd), "cpu{cpu} {} spans {}", d.name, d.span);
            for &g in &d.groups {
                assert!(sds.group(g).span.is_subset(rd));
                assert!(sds.group_sgc(g).balance_mask.is_subset(rd));
            }
        }
        if let Some(llc) = sds.cpus[cpu].sd_llc {
            assert!(sds.domain(llc).span.is_subset(rd));
        }
    }
    // No shared object serves CPUs of two root domains.
    for (s, shared) in sds.shared.iter().enumerate() {
        let users: Vec<usize> = (0..m.nr_cpus())
            .filter(|&c| sds.domains_of(c).any(|d| sds.domain(d).shared == Some(s)))
            .map(|c| sds.root_domain_of(c))
            .collect();
        assert!(
            users.windows(2).all(|w| w[0] == w[1]),
            "shared object {} of cpu{} in root domains {users:?}",
            s,
            shared.id
        );
    }
}

#[test]
fn partitions_taking_every_cpu_leave_no_top_partition() {
    let m = preset("numa-2s4c2t").unwrap();
    let sets = parse_cpusets(m.nr_cpus(), &lists(&["8-15", "0-7"]), "--cpuset").unwrap();
    let sds = partition_sched_domains(&m, BuildOptions::default(), &sets).unwrap();
    let spans: Vec<String> = sds.root_domains.iter().map(CpuMask::to_list).collect();
    assert_eq!(spans, vec!["8-15", "0-7"]);
    assert_eq!(sds.root_domain_of(0), 1);
    assert_eq!(sds.root_domain_of(15), 0);
    // Each socket alone has no NUMA level; the whole machine has one.
    assert!(sds.cpus.iter().all(|c| c.sd_numa.is_none()));
    let whole = build_sched_domains(&m, BuildOptions::default()).unwrap();
    assert!(whole.cpus.iter().all(|c| c.sd_numa.is_some()));
}

#[test]
fn one_cpu_partition_has_no_domain_and_no_partition_is_the_whole_build() {
    let m = preset("numa-2s4c2t").unwrap();
    let sets = parse_cpusets(m.nr_cpus(), &lists(&["3"]), "--cpuset").unwrap();
    let sds = partition_sched_domains(&m, BuildOptions::default(), &sets).unwrap();
    assert_eq!(sds.cpus[3].sd, None);
    assert_eq!(sds.root_domains[1].to_list(), "3");
    // CPU 2, the sibling left behind, keeps an SMT level of one CPU, which degenerates.
    let names: Vec<_> = sds.domains_of(2).map(|d| sds.domain(d).name).collect();
    assert_eq!(names, vec!["MC", "NUMA"]);
    // Without partitions the build is the whole machine's, object for object.
    let none = partition_sched_domains(&m, BuildOptions::default(), &[]).unwrap();
    let whole = build_sched_domains(&m, BuildOptions::default()).unwrap();
    assert_eq!(none.domains, whole.domains);
    assert_eq!(none.groups, whole.groups);
    assert_eq!(none.cpus, whole.cpus);
    assert_eq!(none.root_domains, vec![CpuMask::full(m.nr_cpus())]);
}

#[test]
fn library_callers_get_one_line_errors_too() {
    let m = preset("numa-2s4c2t").unwrap();
    let overlapping = vec![CpuMask::from_cpus(16, 0..4), CpuMask::from_cpus(16, 2..6)];
    let err = partition_sched_domains(&m, BuildOptions::default(), &overlapping)
        .unwrap_err()
        .to_string();
    assert!(err.starts_with("cpusets: "), "{err}");
    assert!(err.contains("share CPUs 2-3"), "{err}");
    let narrow = vec![CpuMask::from_cpus(8, 0..4)];
    let err = partition_sched_domains(&m, BuildOptions::default(), &narrow)
        .unwrap_err()
        .to_string();
    assert!(err.contains("0-15"), "{err}");
}

#[test]
fn capacity_asymmetry_is_classified_against_the_partition() {
    // TC2: A15s 0-1 (1024) and A7s 2-4 (430), one cluster each under PKG.
    let m = preset("tc2").unwrap();
    let flags_of = |sds: &SchedDomains, cpu: usize| -> Vec<String> {
        sds.domains_of(cpu)
            .map(|d| {
                let sd = sds.domain(d);
                format!("{} {}", sd.name, sd.flags.debugfs_string().trim_end())
            })
            .collect()
    };
    // Partitions of one capacity each see no asymmetry, though the machine has it.
    let sets = parse_cpusets(5, &lists(&["0-1"]), "--cpuset").unwrap();
    let sds = partition_sched_domains(&m, BuildOptions::default(), &sets).unwrap();
    assert!(!sds.asym_cpucapacity);
    for cpu in 0..5 {
        assert!(sds.cpus[cpu].sd_asym_cpucapacity.is_none(), "cpu{cpu}");
        assert!(
            flags_of(&sds, cpu).iter().all(|f| !f.contains("ASYM")),
            "cpu{cpu}: {:?}",
            flags_of(&sds, cpu)
        );
    }
    // One A15 and one A7: the partition's top level covers every capacity the partition
    // has, so it is SD_ASYM_CPUCAPACITY_FULL, and it is all that survives above the
    // one-CPU clusters.
    let sets = parse_cpusets(5, &lists(&["1-2"]), "--cpuset").unwrap();
    let sds = partition_sched_domains(&m, BuildOptions::default(), &sets).unwrap();
    assert!(sds.asym_cpucapacity);
    for cpu in [1, 2] {
        let chain = flags_of(&sds, cpu);
        assert_eq!(chain.len(), 1, "cpu{cpu}: {chain:?}");
        assert!(chain[0].starts_with("PKG "), "{chain:?}");
        assert!(chain[0].contains("SD_ASYM_CPUCAPACITY_FULL"), "{chain:?}");
        assert!(sds.cpus[cpu].sd_asym_cpucapacity.is_some());
    }
}

proptest::proptest! {
    #![proptest_config(proptest::test_runner::Config {
        cases: 256,
        failure_persistence: None,
        ..proptest::test_runner::Config::default()
    })]

    /// Whatever a user types, `--cpuset` gives masks of the machine or one line naming
    /// the option; it never panics.
    #[test]
    fn any_cpuset_text_parses_or_fails_in_one_line(
        texts in proptest::collection::vec("[0-9N,:/ -]{0,24}|[0-9]{1,22}-[0-9]{1,22}:[0-9]{1,22}/[0-9]{1,22}", 1..4),
    ) {
        match parse_cpusets(16, &texts, "--cpuset") {
            Ok(sets) => {
                for s in &sets {
                    proptest::prop_assert!(!s.is_empty());
                    proptest::prop_assert_eq!(s.nbits(), 16);
                }
            }
            Err(e) => {
                let e = e.to_string();
                proptest::prop_assert!(e.starts_with("--cpuset"), "{}", e);
                proptest::prop_assert!(!e.contains('\n'), "{}", e);
            }
        }
    }
}
