//! JSON for scripts: the machine-independent view of the hierarchy.

use serde_json::{json, Value};

use crate::domain::SchedDomains;

/// Renders the hierarchy as JSON: per CPU its domains (name, level, span, flags,
/// parameters, groups with span, balance mask and capacities) and the
/// `update_top_cache_domain` pointers, plus the NUMA distance table.
pub fn render_json(sds: &SchedDomains) -> Value {
    let cpus: Vec<Value> = (0..sds.nr_cpus)
        .map(|cpu| {
            let c = &sds.cpus[cpu];
            let domains: Vec<Value> = sds
                .domains_of(cpu)
                .map(|id| {
                    let sd = sds.domain(id);
                    let groups: Vec<Value> = sd
                        .groups
                        .iter()
                        .map(|&g| {
                            let grp = sds.group(g);
                            let sgc = sds.group_sgc(g);
                            let (cap, min, max) = sgc.capacities();
                            json!({
                                "id": sgc.id,
                                "span": grp.span.to_list(),
                                "balance_mask": sgc.balance_mask.to_list(),
                                "flags": grp.flags.names().collect::<Vec<_>>(),
                                "weight": grp.group_weight,
                                "cores": grp.cores,
                                "capacity": cap,
                                "min_capacity": min,
                                "max_capacity": max,
                            })
                        })
                        .collect();
                    json!({
                        "name": sd.name,
                        "level": sd.level,
                        "span": sd.span.to_list(),
                        "span_weight": sd.span_weight,
                        "flags": sd.flags.names().collect::<Vec<_>>(),
                        "imbalance_pct": sd.imbalance_pct,
                        "busy_factor": sd.busy_factor,
                        "cache_nice_tries": sd.cache_nice_tries,
                        "min_interval": sd.min_interval,
                        "max_interval": sd.max_interval,
                        "imb_numa_nr": sd.imb_numa_nr,
                        "nr_groups": sd.nr_groups(),
                        "has_shared": sd.shared.is_some(),
                        "groups": groups,
                    })
                })
                .collect();
            let name_of = |id: Option<usize>| id.map(|d| sds.domain(d).name);
            json!({
                "cpu": cpu,
                "capacity": c.cpu_capacity,
                "capacity_orig": c.capacity_orig,
                "sd_llc": name_of(c.sd_llc),
                "sd_llc_size": c.sd_llc_size,
                "sd_llc_id": c.sd_llc_id,
                "sd_share_id": c.sd_share_id,
                "sd_numa": name_of(c.sd_numa),
                "sd_asym_cpucapacity": name_of(c.sd_asym_cpucapacity),
                "domains": domains,
            })
        })
        .collect();
    let mut cpus = cpus;
    let partitioned = sds.root_domains.len() > 1;
    if partitioned {
        // Only a partitioned build names root domains, so that the JSON of a whole-machine
        // build stays what it was before partitions existed.
        for (cpu, v) in cpus.iter_mut().enumerate() {
            if let Some(obj) = v.as_object_mut() {
                obj.insert("root_domain".into(), json!(sds.root_domain_of(cpu)));
            }
        }
    }
    let mut doc = json!({
        "nr_cpus": sds.nr_cpus,
        "numa_distances": sds.levels.numa.distances,
        "numa_topology_type": format!("{:?}", sds.levels.numa.topology_type),
        "asym_cpucapacity": sds.asym_cpucapacity,
        "cluster_active": sds.cluster_active,
        "warnings": sds.warnings,
        "cpus": cpus,
    });
    if partitioned {
        let rds: Vec<Value> = sds
            .root_domains
            .iter()
            .enumerate()
            .map(|(rd, span)| {
                json!({
                    "span": span.to_list(),
                    "max_cpu_capacity": sds.rd_max_cpu_capacity(rd),
                })
            })
            .collect();
        if let Some(obj) = doc.as_object_mut() {
            obj.insert("root_domains".into(), Value::Array(rds));
        }
    }
    doc
}
