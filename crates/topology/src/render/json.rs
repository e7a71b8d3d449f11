//! JSON for scripts: the machine-independent view of the hierarchy.

use std::io::{self, Write};

use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::{json, Value};

use crate::domain::{GroupId, SchedDomains, SdId};
use crate::flags::SdFlags;

/// Renders the hierarchy as JSON: per CPU its domains (name, level, span, flags,
/// parameters, groups with span, balance mask and capacities) and the
/// `update_top_cache_domain` pointers, plus the NUMA distance table.
///
/// The document is held whole, and grows with the square of the CPU count;
/// [`write_json`] writes the same document as it goes.
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

/// Writes [`render_json`]'s document, pretty-printed and followed by a newline, to `out`
/// as it goes: the same bytes as `serde_json::to_string_pretty(&render_json(sds))` plus
/// `\n`, without holding the document.
///
/// The document grows with the square of the CPU count (each CPU lists its domains'
/// groups, and a domain of a large package has one group per core: 2.4 GB at 4096 CPUs),
/// so it is streamed, and what this needs beyond the hierarchy is one group's span at a
/// time. Keys come in the order `render_json`'s maps keep them (sorted). An error of `out`
/// is returned as it came, so that a closed pipe stays a closed pipe.
pub fn write_json<W: Write>(sds: &SchedDomains, out: W) -> io::Result<()> {
    let mut ser = serde_json::Serializer::pretty(out);
    Doc(sds).serialize(&mut ser).map_err(io::Error::from)?;
    ser.into_inner().write_all(b"\n")
}

/// The whole document.
struct Doc<'a>(&'a SchedDomains);

/// Every CPU's object, in CPU order.
struct Cpus<'a>(&'a SchedDomains);

/// One CPU's object.
struct Cpu<'a>(&'a SchedDomains, usize);

/// One CPU's domains, bottom-up.
struct Domains<'a>(&'a SchedDomains, usize);

/// One domain's object.
struct Domain<'a>(&'a SchedDomains, SdId);

/// One domain's groups, in ring order.
struct Groups<'a>(&'a SchedDomains, SdId);

/// One group's object.
struct Group<'a>(&'a SchedDomains, GroupId);

/// Flag names as a list.
struct Names(SdFlags);

/// The root domains of a partitioned build.
struct RootDomains<'a>(&'a SchedDomains);

impl Serialize for Doc<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let sds = self.0;
        let partitioned = sds.root_domains.len() > 1;
        let mut m = s.serialize_map(Some(7 + usize::from(partitioned)))?;
        m.serialize_entry("asym_cpucapacity", &sds.asym_cpucapacity)?;
        m.serialize_entry("cluster_active", &sds.cluster_active)?;
        m.serialize_entry("cpus", &Cpus(sds))?;
        m.serialize_entry("nr_cpus", &sds.nr_cpus)?;
        m.serialize_entry("numa_distances", &sds.levels.numa.distances)?;
        m.serialize_entry(
            "numa_topology_type",
            &format!("{:?}", sds.levels.numa.topology_type),
        )?;
        if partitioned {
            m.serialize_entry("root_domains", &RootDomains(sds))?;
        }
        m.serialize_entry("warnings", &sds.warnings)?;
        m.end()
    }
}

impl Serialize for Cpus<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let sds = self.0;
        s.collect_seq((0..sds.nr_cpus).map(|cpu| Cpu(sds, cpu)))
    }
}

impl Serialize for Cpu<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let (sds, cpu) = (self.0, self.1);
        let c = &sds.cpus[cpu];
        let partitioned = sds.root_domains.len() > 1;
        let name_of = |id: Option<usize>| id.map(|d| sds.domain(d).name);
        let mut m = s.serialize_map(Some(10 + usize::from(partitioned)))?;
        m.serialize_entry("capacity", &c.cpu_capacity)?;
        m.serialize_entry("capacity_orig", &c.capacity_orig)?;
        m.serialize_entry("cpu", &cpu)?;
        m.serialize_entry("domains", &Domains(sds, cpu))?;
        if partitioned {
            // Only a partitioned build names root domains, as in `render_json`.
            m.serialize_entry("root_domain", &sds.root_domain_of(cpu))?;
        }
        m.serialize_entry("sd_asym_cpucapacity", &name_of(c.sd_asym_cpucapacity))?;
        m.serialize_entry("sd_llc", &name_of(c.sd_llc))?;
        m.serialize_entry("sd_llc_id", &c.sd_llc_id)?;
        m.serialize_entry("sd_llc_size", &c.sd_llc_size)?;
        m.serialize_entry("sd_numa", &name_of(c.sd_numa))?;
        m.serialize_entry("sd_share_id", &c.sd_share_id)?;
        m.end()
    }
}

impl Serialize for Domains<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let sds = self.0;
        s.collect_seq(sds.domains_of(self.1).map(|id| Domain(sds, id)))
    }
}

impl Serialize for Domain<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let sds = self.0;
        let sd = sds.domain(self.1);
        let mut m = s.serialize_map(Some(14))?;
        m.serialize_entry("busy_factor", &sd.busy_factor)?;
        m.serialize_entry("cache_nice_tries", &sd.cache_nice_tries)?;
        m.serialize_entry("flags", &Names(sd.flags))?;
        m.serialize_entry("groups", &Groups(sds, self.1))?;
        m.serialize_entry("has_shared", &sd.shared.is_some())?;
        m.serialize_entry("imb_numa_nr", &sd.imb_numa_nr)?;
        m.serialize_entry("imbalance_pct", &sd.imbalance_pct)?;
        m.serialize_entry("level", &sd.level)?;
        m.serialize_entry("max_interval", &sd.max_interval)?;
        m.serialize_entry("min_interval", &sd.min_interval)?;
        m.serialize_entry("name", sd.name)?;
        m.serialize_entry("nr_groups", &sd.nr_groups())?;
        m.serialize_entry("span", &sd.span.to_list())?;
        m.serialize_entry("span_weight", &sd.span_weight)?;
        m.end()
    }
}

impl Serialize for Groups<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let sds = self.0;
        let sd = sds.domain(self.1);
        s.collect_seq(sd.groups.iter().map(|&g| Group(sds, g)))
    }
}

impl Serialize for Group<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let sds = self.0;
        let grp = sds.group(self.1);
        let sgc = sds.group_sgc(self.1);
        let (cap, min, max) = sgc.capacities();
        let mut m = s.serialize_map(Some(9))?;
        m.serialize_entry("balance_mask", &sgc.balance_mask.to_list())?;
        m.serialize_entry("capacity", &cap)?;
        m.serialize_entry("cores", &grp.cores)?;
        m.serialize_entry("flags", &Names(grp.flags))?;
        m.serialize_entry("id", &sgc.id)?;
        m.serialize_entry("max_capacity", &max)?;
        m.serialize_entry("min_capacity", &min)?;
        m.serialize_entry("span", &grp.span.to_list())?;
        m.serialize_entry("weight", &grp.group_weight)?;
        m.end()
    }
}

impl Serialize for Names {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.0.names())
    }
}

impl Serialize for RootDomains<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let sds = self.0;
        s.collect_seq(
            sds.root_domains
                .iter()
                .enumerate()
                .map(|(rd, span)| RootDomain {
                    max_cpu_capacity: sds.rd_max_cpu_capacity(rd),
                    span: span.to_list(),
                }),
        )
    }
}

/// One root domain's object.
#[derive(serde::Serialize)]
struct RootDomain {
    max_cpu_capacity: u64,
    span: String,
}
