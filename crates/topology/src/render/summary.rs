//! A readable overview of a hierarchy: the machine, the distinct per-CPU level stacks, and
//! one CPU's domains in full. This is what a person wants before diffing a dmesg dump.

use std::collections::BTreeMap;
use std::fmt::Write;

use crate::cpumask::CpuMask;
use crate::domain::SchedDomains;
use crate::machine::Machine;

/// Renders the overview for `m` and its built domains, showing `cpu`'s domains in detail.
pub fn render_summary(m: &Machine, sds: &SchedDomains, cpu: usize) -> String {
    let mut out = String::new();
    let distances: Vec<String> = sds
        .levels
        .numa
        .distances
        .iter()
        .map(u32::to_string)
        .collect();
    let _ = writeln!(
        out,
        "machine: {} ({}, {} CPUs, {} package(s), {} NUMA node(s), distances {}, {:?} NUMA)",
        m.name,
        m.arch.name(),
        m.nr_cpus(),
        count_distinct(m.cpus.iter().map(|c| c.package_id)),
        m.nr_nodes(),
        distances.join("/"),
        sds.levels.numa.topology_type,
    );
    if m.is_asymmetric() {
        let caps: BTreeMap<u32, CpuMask> =
            m.cpus
                .iter()
                .enumerate()
                .fold(BTreeMap::new(), |mut acc, (i, c)| {
                    acc.entry(c.capacity)
                        .or_insert_with(|| CpuMask::new(m.nr_cpus()))
                        .set(i);
                    acc
                });
        let list: Vec<String> = caps
            .iter()
            .rev()
            .map(|(cap, cpus)| format!("{cpus}:{cap}"))
            .collect();
        let _ = writeln!(out, "capacities: {}", list.join(" "));
    }
    if sds.root_domains.len() > 1 {
        let spans: Vec<String> = sds.root_domains.iter().map(CpuMask::to_list).collect();
        let _ = writeln!(
            out,
            "root domains (exclusive cpuset partitions, the top cpuset's CPUs first): {}",
            spans.join(" | ")
        );
    }
    let built: Vec<&str> = sds.levels.levels.iter().map(|l| l.name).collect();
    let _ = writeln!(
        out,
        "topology levels (before degenerate removal): {}",
        built.join(" ")
    );
    out.push('\n');
    out.push_str("per-CPU level stacks (name: span CPUs / groups):\n");
    let mut stacks: BTreeMap<String, CpuMask> = BTreeMap::new();
    for c in 0..sds.nr_cpus {
        let stack: Vec<String> = sds
            .domains_of(c)
            .map(|id| {
                let d = sds.domain(id);
                format!("{}: {}/{}", d.name, d.span_weight, d.nr_groups())
            })
            .collect();
        let key = if stack.is_empty() {
            "(no domain)".to_string()
        } else {
            stack.join(" > ")
        };
        stacks
            .entry(key)
            .or_insert_with(|| CpuMask::new(sds.nr_cpus))
            .set(c);
    }
    let mut rows: Vec<(&String, &CpuMask)> = stacks.iter().collect();
    rows.sort_by_key(|(_, cpus)| cpus.first());
    for (stack, cpus) in rows {
        let _ = writeln!(out, "  cpus {cpus}: {stack}");
    }
    if cpu < sds.nr_cpus {
        let _ = writeln!(out, "\ncpu{cpu}:");
        for (k, id) in sds.domains_of(cpu).enumerate() {
            let d = sds.domain(id);
            let _ = writeln!(
                out,
                "  domain{k} {:<4} span={} level={} groups={} imbalance_pct={} interval={}..{}ms busy_factor={} cache_nice_tries={} imb_numa_nr={}{}",
                d.name,
                d.span,
                d.level,
                d.nr_groups(),
                d.imbalance_pct,
                d.min_interval,
                d.max_interval,
                d.busy_factor,
                d.cache_nice_tries,
                d.imb_numa_nr,
                if d.shared.is_some() { " shared" } else { "" },
            );
            let _ = writeln!(out, "    flags: {}", d.flags.debugfs_string().trim_end());
        }
        let c = &sds.cpus[cpu];
        let name = |id: Option<usize>| id.map_or("none", |d| sds.domain(d).name);
        let _ = writeln!(
            out,
            "  sd_llc={} (size {}, id {}) sd_share_id={} sd_numa={} sd_asym_cpucapacity={} capacity={}",
            name(c.sd_llc),
            c.sd_llc_size,
            c.sd_llc_id,
            c.sd_share_id,
            name(c.sd_numa),
            name(c.sd_asym_cpucapacity),
            c.cpu_capacity,
        );
    }
    for w in &sds.warnings {
        let _ = writeln!(out, "warning: {w}");
    }
    out
}

fn count_distinct(it: impl Iterator<Item = u32>) -> usize {
    let mut v: Vec<u32> = it.collect();
    v.sort_unstable();
    v.dedup();
    v.len()
}
