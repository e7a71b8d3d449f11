//! The ground-truth `topology.json` format (`shared/ground-truth/*/topology.json`): what a
//! QEMU guest kernel showed in sysfs, in its `guest_observed` part.
//!
//! Per CPU it lists `package`, `die`, `cluster` and `core` ids and the `thread_siblings`,
//! `cluster_cpus`, `core_siblings` and `die_cpus` lists; `capacity` on arm64. Values are
//! integers or strings (`0`, `"0-1"`, and `""` for ids and masks arm64 does not have).
//! `nodes` gives each node's `cpus` and `distance` row; `extra` holds cpu0's cache lines
//! (`cpu0 cache index3 level=3 type=Unified shared_cpu_list=0-111`), from which the LLC
//! mask is identified.

use serde_json::Value;

use crate::cpumask::{CpuListError, CpuMask, NR_CPUS_MAX};
use crate::error::TopologyError;
use crate::limits::SCHED_CAPACITY_SCALE;
use crate::machine::{Arch, CpuTopology, Machine};
use crate::source::nodes::{cpu_nodes, node_of_cpus, RawNode};

/// The per-CPU mask fields of `guest_observed.cpus[]`, in the order tried when matching the
/// LLC: the widest sharing first, so that equal masks resolve to the broader meaning.
const LLC_CANDIDATES: [&str; 4] = [
    "die_cpus",
    "core_siblings",
    "cluster_cpus",
    "thread_siblings",
];

/// Why a value of a ground-truth CPU entry, or the LLC it names, was refused. The
/// messages are the reasons [`machine_from_guest`] puts after the field's name in its
/// `TopologyError::Parse`; typed so that the cases can be told apart.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
enum GuestValueError {
    /// An integer mask that is not one of the machine's CPUs.
    #[error("'{num}' is not a CPU in 0-{last}")]
    NotCpuIn {
        /// The number as written.
        num: String,
        /// The last CPU.
        last: usize,
    },
    /// A CPU-list string that does not parse.
    #[error(transparent)]
    CpuList(#[from] CpuListError),
    /// A mask that is neither an integer nor a string.
    #[error("'{got}' is not a CPU list")]
    NotCpuList {
        /// The value as given.
        got: String,
    },
    /// An id that is a number or string but not a `u32`.
    #[error("'{got}' is not an id (a non-negative integer)")]
    NotNonNegativeId {
        /// The value as given.
        got: String,
    },
    /// An id that is neither a number nor a string.
    #[error("'{got}' is not an id")]
    NotId {
        /// The value as given.
        got: String,
    },
    /// No entry for CPU 0, whose caches name the LLC.
    #[error("guest_observed.cpus: cpu 0 missing")]
    Cpu0Missing,
    /// cpu0's LLC line with a `shared_cpu_list` that does not parse.
    #[error("guest_observed.extra cpu0 cache level {level}: shared_cpu_list {source}")]
    CacheList {
        /// The cache level.
        level: u32,
        /// Why the list was refused.
        source: CpuListError,
    },
    /// cpu0's LLC line with a `shared_cpu_list` that no sibling field of cpu0 equals.
    #[error(
        "guest_observed.extra cpu0 cache level {level}: shared_cpu_list '{shared}' matches none of cpu0's {candidates}",
        candidates = LLC_CANDIDATES.join(", ")
    )]
    NoLlcMatch {
        /// The cache level.
        level: u32,
        /// The list as written.
        shared: String,
    },
}

/// Builds a `Machine` from a parsed ground-truth `topology.json`. `path` is only used in
/// error messages.
pub(crate) fn machine_from_guest(path: &str, doc: &Value) -> Result<Machine, TopologyError> {
    let err = |reason: String| TopologyError::Parse {
        path: path.to_string(),
        reason,
    };
    let guest = doc
        .get("guest_observed")
        .ok_or_else(|| err("guest_observed: missing".to_string()))?;
    let cpus_json = guest.get("cpus").and_then(Value::as_array).ok_or_else(|| {
        err("guest_observed.cpus: missing; allowed: an array of CPUs".to_string())
    })?;
    let n = cpus_json.len();
    if n == 0 || n > NR_CPUS_MAX {
        return Err(err(format!(
            "guest_observed.cpus: {n} CPUs; allowed: 1 to {NR_CPUS_MAX}"
        )));
    }
    // Entries are placed by their "cpu" number, which must run 0..n without holes.
    let mut slots: Vec<Option<&Value>> = vec![None; n];
    for (i, c) in cpus_json.iter().enumerate() {
        let cpu = c.get("cpu").and_then(Value::as_u64).ok_or_else(|| {
            err(format!(
                "guest_observed.cpus[{i}].cpu: missing or not an integer"
            ))
        })?;
        match usize::try_from(cpu).ok().and_then(|c| slots.get_mut(c)) {
            Some(slot @ None) => *slot = Some(c),
            _ => {
                return Err(err(format!(
                    "guest_observed.cpus[{i}].cpu: {cpu} is out of range or repeated; allowed: each of 0-{} once",
                    n - 1
                )))
            }
        }
    }
    let entries: Vec<&Value> = slots.into_iter().flatten().collect();
    let llc_field =
        llc_field(guest, entries.first().copied(), n).map_err(|e| err(e.to_string()))?;
    let arch = match doc.get("kernel_release").and_then(Value::as_str) {
        Some(r) if r.contains("arm64") || r.contains("aarch64") => Arch::Arm64,
        _ => Arch::X86,
    };
    let (node_cpus, distance) = guest_nodes(guest, n).map_err(|e| match e {
        TopologyError::Invalid { .. } | TopologyError::Inconsistent { .. } => err(e.to_string()),
        other => other,
    })?;
    let node_of = node_of_cpus(&node_cpus, n);
    let mut cpus = Vec::with_capacity(n);
    for (cpu, c) in entries.iter().enumerate() {
        let field = |name: &str| format!("guest_observed.cpus[cpu {cpu}].{name}");
        let mask = |name: &str| -> Result<Option<CpuMask>, TopologyError> {
            mask_value(c.get(name), n).map_err(|e| err(format!("{}: {e}", field(name))))
        };
        let need = |name: &str| -> Result<CpuMask, TopologyError> {
            mask(name)?
                .filter(|m| !m.is_empty())
                .ok_or_else(|| err(format!("{}: missing; allowed: a CPU list", field(name))))
        };
        let id =
            |name: &str| id_value(c.get(name)).map_err(|e| err(format!("{}: {e}", field(name))));
        let smt = need("thread_siblings")?;
        let cluster = mask("cluster_cpus")?
            .filter(|m| !m.is_empty())
            .unwrap_or_else(|| smt.clone());
        let llc = need(llc_field)?;
        let capacity = match c.get("capacity") {
            None | Some(Value::Null) => SCHED_CAPACITY_SCALE,
            Some(v) => v
                .as_u64()
                .and_then(|v| u32::try_from(v).ok())
                .ok_or_else(|| {
                    err(format!(
                        "{}: not an integer; allowed: 1 to 1024",
                        field("capacity")
                    ))
                })?,
        };
        cpus.push(CpuTopology {
            package_id: id("package")?,
            die_id: id("die")?,
            cluster_id: id("cluster")?,
            core_id: id("core")?,
            node: node_of.get(cpu).copied().flatten().unwrap_or(0),
            capacity,
            smt_siblings: smt,
            cluster_siblings: cluster,
            llc_siblings: llc,
            package_siblings: need("core_siblings")?,
        });
    }
    let name = doc
        .get("topology_name")
        .and_then(Value::as_str)
        .unwrap_or("ground-truth")
        .to_string();
    let m = Machine {
        name,
        arch,
        cpus,
        node_cpus,
        distance,
        itmt_prio: None,
        idle_states: None,
        cpu_power: None,
        costs: None,
        speed: crate::speed::SpeedTable::new(),
        cpufreq: Vec::new(),
    };
    m.validate().map_err(|e| err(e.to_string()))?;
    Ok(m)
}

/// Picks the per-CPU field that holds the LLC: the one equal, on cpu0, to the
/// `shared_cpu_list` of cpu0's highest-level data or unified cache.
fn llc_field(
    guest: &Value,
    cpu0: Option<&Value>,
    n: usize,
) -> Result<&'static str, GuestValueError> {
    let best = guest
        .get("extra")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .filter_map(parse_cache_line)
        .filter(|c| c.ctype != "Instruction")
        .max_by_key(|c| c.level);
    let cpu0 = cpu0.ok_or(GuestValueError::Cpu0Missing)?;
    let cpu0_mask = |name: &str| {
        mask_value(cpu0.get(name), n)
            .ok()
            .flatten()
            .filter(|m| !m.is_empty())
    };
    let Some(cache) = best else {
        // Without cache information, fall back as sysfs does: the die, else the package.
        return Ok(if cpu0_mask("die_cpus").is_some() {
            "die_cpus"
        } else {
            "core_siblings"
        });
    };
    let shared =
        CpuMask::parse_list(n, &cache.shared).map_err(|source| GuestValueError::CacheList {
            level: cache.level,
            source,
        })?;
    LLC_CANDIDATES
        .into_iter()
        .find(|name| cpu0_mask(name).as_ref() == Some(&shared))
        .ok_or_else(|| GuestValueError::NoLlcMatch {
            level: cache.level,
            shared: cache.shared.clone(),
        })
}

/// One `cpu0 cache indexK level=L type=T shared_cpu_list=X` line.
struct CacheLine {
    level: u32,
    ctype: String,
    shared: String,
}

fn parse_cache_line(line: &str) -> Option<CacheLine> {
    if !line.starts_with("cpu0 cache ") {
        return None;
    }
    let mut level = None;
    let mut ctype = None;
    let mut shared = None;
    for word in line.split_whitespace() {
        match word.split_once('=') {
            Some(("level", v)) => level = v.parse::<u32>().ok(),
            Some(("type", v)) => ctype = Some(v.to_string()),
            Some(("shared_cpu_list", v)) => shared = Some(v.to_string()),
            _ => {}
        }
    }
    Some(CacheLine {
        level: level?,
        ctype: ctype?,
        shared: shared?,
    })
}

/// The node masks and distance table from `guest_observed.nodes`.
fn guest_nodes(guest: &Value, n: usize) -> Result<(Vec<CpuMask>, Vec<Vec<u32>>), TopologyError> {
    let list = guest
        .get("nodes")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let mut raw = Vec::with_capacity(list.len());
    for (i, node) in list.iter().enumerate() {
        let label = format!("guest_observed.nodes[{i}]");
        let cpus = mask_value(node.get("cpus"), n)
            .map_err(|e| TopologyError::Inconsistent {
                field: format!("{label}.cpus"),
                detail: e.to_string(),
            })?
            .unwrap_or_else(|| CpuMask::new(n));
        let distance = node
            .get("distance")
            .and_then(Value::as_array)
            .map(|row| {
                row.iter()
                    .map(|d| d.as_u64().and_then(|d| u32::try_from(d).ok()))
                    .collect::<Option<Vec<u32>>>()
            })
            .ok_or_else(|| TopologyError::Inconsistent {
                field: format!("{label}.distance"),
                detail: "missing; allowed: an array of integers".into(),
            })?
            .ok_or_else(|| TopologyError::Inconsistent {
                field: format!("{label}.distance"),
                detail: "allowed: integers 10 to 255".into(),
            })?;
        raw.push(RawNode {
            label,
            cpus,
            distance,
        });
    }
    cpu_nodes(&raw, n)
}

/// Reads a mask that may be an integer (one CPU), a CPU-list string, or absent.
fn mask_value(v: Option<&Value>, n: usize) -> Result<Option<CpuMask>, GuestValueError> {
    match v {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(num)) => match num.as_u64().and_then(|c| usize::try_from(c).ok()) {
            Some(c) if c < n => Ok(Some(CpuMask::single(n, c))),
            _ => Err(GuestValueError::NotCpuIn {
                num: num.to_string(),
                last: n - 1,
            }),
        },
        Some(Value::String(s)) => Ok(Some(CpuMask::parse_list(n, s)?)),
        Some(other) => Err(GuestValueError::NotCpuList {
            got: other.to_string(),
        }),
    }
}

/// Reads an id that may be an integer, a numeric string, or `""` (no such level: 0).
fn id_value(v: Option<&Value>) -> Result<u32, GuestValueError> {
    match v {
        None | Some(Value::Null) => Ok(0),
        Some(Value::Number(num)) => {
            num.as_u64()
                .and_then(|x| u32::try_from(x).ok())
                .ok_or_else(|| GuestValueError::NotNonNegativeId {
                    got: num.to_string(),
                })
        }
        Some(Value::String(s)) if s.trim().is_empty() => Ok(0),
        Some(Value::String(s)) => s
            .trim()
            .parse::<u32>()
            .map_err(|_| GuestValueError::NotNonNegativeId { got: s.to_string() }),
        Some(other) => Err(GuestValueError::NotId {
            got: other.to_string(),
        }),
    }
}
