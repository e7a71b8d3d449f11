//! A machine read from a sysfs tree: a live `/sys`, a copy of one, or a small fake tree.
//!
//! The root is always a parameter: nothing here assumes `/sys`. Read, relative to it:
//!
//! * `devices/system/cpu/cpuN/` for N = 0, 1, ... without holes; a CPU whose `online` file
//!   says 0 is an error, since the scheduler would not see it.
//! * `cpuN/topology/`: `physical_package_id`, `die_id` (default 0), `cluster_id` (default
//!   0), `core_id`, `thread_siblings_list` (or `core_cpus_list`), `core_siblings_list` (or
//!   `package_cpus_list`), `cluster_cpus_list` (default: the thread siblings, which is the
//!   x86 L2 mask on parts without a shared L2).
//! * `cpuN/cpu_capacity` (optional, already normalised by the kernel, 1 to 1024; default
//!   1024).
//! * `cpuN/cache/indexK/{level,type,shared_cpu_list}`: the LLC is the highest-level cache
//!   of type Unified or Data; without caches, `die_cpus_list`, else the package.
//! * `devices/system/node/nodeN/{cpulist,distance}`; no node directory means one node.
//!   Memory-only nodes are dropped, rows and columns, as the scheduler ignores them.

use std::path::{Path, PathBuf};

use crate::cpumask::{CpuMask, NR_CPUS_MAX};
use crate::error::TopologyError;
use crate::limits::{MAX_NUMNODES, SCHED_CAPACITY_SCALE};
use crate::machine::{Arch, CpuTopology, Machine};
use crate::source::nodes::{cpu_nodes, node_of_cpus, parse_distance_row, RawNode};
use crate::source::read::read_bounded;

/// Loads the machine described by the sysfs tree mounted at `root` (such as `/sys`).
pub fn load_sysfs(root: &Path, arch: Arch) -> Result<Machine, TopologyError> {
    let cpu_dir = root.join("devices/system/cpu");
    let ids = numbered_dirs(&cpu_dir, "cpu", NR_CPUS_MAX)?;
    let n = ids.len();
    if n == 0 {
        return Err(TopologyError::Io {
            path: cpu_dir.display().to_string(),
            reason: "no cpuN directories; allowed: a sysfs root such as /sys".to_string(),
        });
    }
    if let Some((pos, &id)) = ids.iter().enumerate().find(|(pos, &id)| *pos != id) {
        return Err(TopologyError::Inconsistent {
            field: cpu_dir.display().to_string(),
            detail: format!(
                "cpu{pos} is missing but cpu{id} exists; CPUs must be numbered 0-{} without holes",
                n - 1
            ),
        });
    }
    let mut cpus = Vec::with_capacity(n);
    for cpu in 0..n {
        cpus.push(read_cpu(&cpu_dir.join(format!("cpu{cpu}")), cpu, n)?);
    }
    let node_dir = root.join("devices/system/node");
    let mut raw = Vec::new();
    if node_dir.is_dir() {
        for id in numbered_dirs(&node_dir, "node", MAX_NUMNODES)? {
            let dir = node_dir.join(format!("node{id}"));
            let cpulist = dir.join("cpulist");
            let distance_path = dir.join("distance");
            let distance = parse_distance_row(&read_text(&distance_path)?)
                .map_err(|reason| parse_error(&distance_path, reason))?;
            raw.push(RawNode {
                label: dir.display().to_string(),
                cpus: read_mask(&cpulist, n)?,
                distance,
            });
        }
    }
    let (node_cpus, distance) = cpu_nodes(&raw, n)?;
    let node_of = node_of_cpus(&node_cpus, n);
    for (cpu, c) in cpus.iter_mut().enumerate() {
        c.node = node_of.get(cpu).copied().flatten().unwrap_or(0);
    }
    let m = Machine {
        name: format!("sysfs:{}", root.display()),
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
    m.validate()?;
    Ok(m)
}

/// Reads one `cpuN` directory.
fn read_cpu(dir: &Path, cpu: usize, n: usize) -> Result<CpuTopology, TopologyError> {
    let online = dir.join("online");
    if online.exists() {
        // The kernel writes exactly "0" or "1" here; anything else is not a sysfs tree
        // fairsim can trust, so it is refused rather than counted as online.
        match read_text(&online)?.trim() {
            "1" => {}
            "0" => {
                return Err(TopologyError::Inconsistent {
                    field: online.display().to_string(),
                    detail: format!(
                        "cpu{cpu} is offline; allowed: all CPUs online (the scheduler would not see it)"
                    ),
                })
            }
            other => {
                return Err(parse_error(
                    &online,
                    format!("'{other}'; allowed: 0 or 1"),
                ))
            }
        }
    }
    let topo = dir.join("topology");
    let smt = read_mask_either(&topo, "thread_siblings_list", "core_cpus_list", n)?;
    let package = read_mask_either(&topo, "core_siblings_list", "package_cpus_list", n)?;
    // Without cluster_cpus_list the x86 L2 is per core and arm64 has no cluster level
    // the scheduler uses, so the thread siblings are the right stand-in on both.
    let cluster =
        read_optional_mask(&topo.join("cluster_cpus_list"), n)?.unwrap_or_else(|| smt.clone());
    let die_cpus = read_optional_mask(&topo.join("die_cpus_list"), n)?;
    let llc = match read_llc(&dir.join("cache"), n)? {
        Some(m) => m,
        None => die_cpus.unwrap_or_else(|| package.clone()),
    };
    let capacity_path = dir.join("cpu_capacity");
    let capacity = if capacity_path.exists() {
        let text = read_text(&capacity_path)?;
        match text.trim().parse::<u32>() {
            Ok(c) if (1..=SCHED_CAPACITY_SCALE).contains(&c) => c,
            _ => {
                return Err(parse_error(
                    &capacity_path,
                    format!("'{}' is not a capacity; allowed: 1 to 1024", text.trim()),
                ))
            }
        }
    } else {
        SCHED_CAPACITY_SCALE
    };
    Ok(CpuTopology {
        package_id: read_id(&topo.join("physical_package_id"), true)?,
        die_id: read_id(&topo.join("die_id"), false)?,
        cluster_id: read_id(&topo.join("cluster_id"), false)?,
        core_id: read_id(&topo.join("core_id"), true)?,
        node: 0,
        capacity,
        smt_siblings: smt,
        cluster_siblings: cluster,
        llc_siblings: llc,
        package_siblings: package,
    })
}

/// The `shared_cpu_list` of the highest-level Unified or Data cache, if any cache is listed.
fn read_llc(cache_dir: &Path, n: usize) -> Result<Option<CpuMask>, TopologyError> {
    if !cache_dir.is_dir() {
        return Ok(None);
    }
    let mut best: Option<(u32, PathBuf)> = None;
    for k in numbered_dirs(cache_dir, "index", 64)? {
        let dir = cache_dir.join(format!("index{k}"));
        let ctype = read_text(&dir.join("type"))?;
        if !matches!(ctype.trim(), "Unified" | "Data") {
            continue;
        }
        let level_path = dir.join("level");
        let level_text = read_text(&level_path)?;
        let level = level_text.trim().parse::<u32>().map_err(|_| {
            parse_error(
                &level_path,
                format!("'{}' is not a cache level", level_text.trim()),
            )
        })?;
        if best.as_ref().is_none_or(|(l, _)| level > *l) {
            best = Some((level, dir));
        }
    }
    match best {
        Some((_, dir)) => Ok(Some(read_mask(&dir.join("shared_cpu_list"), n)?)),
        None => Ok(None),
    }
}

/// Sorted numbers N of the `<prefix>N` entries of `dir`, at most `max` of them.
fn numbered_dirs(dir: &Path, prefix: &str, max: usize) -> Result<Vec<usize>, TopologyError> {
    let entries = std::fs::read_dir(dir).map_err(|e| io_error(dir, &e))?;
    let mut ids = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| io_error(dir, &e))?;
        let name = entry.file_name();
        let Some(rest) = name.to_str().and_then(|s| s.strip_prefix(prefix)) else {
            continue;
        };
        if rest.is_empty() || !rest.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        let Ok(id) = rest.parse::<usize>() else {
            continue;
        };
        ids.push(id);
        if ids.len() > max {
            return Err(TopologyError::Inconsistent {
                field: dir.display().to_string(),
                detail: format!("more than {max} {prefix}N entries; allowed: at most {max}"),
            });
        }
    }
    ids.sort_unstable();
    Ok(ids)
}

/// The most a single sysfs attribute may hold: the kernel's attributes fit in a page,
/// and a CPU list of 8192 CPUs written out one by one stays under 64 KiB.
const MAX_ATTR_BYTES: u64 = 64 << 10;

fn read_text(path: &Path) -> Result<String, TopologyError> {
    read_bounded(path, MAX_ATTR_BYTES).map_err(|e| TopologyError::Io {
        path: path.display().to_string(),
        reason: e.to_string(),
    })
}

fn read_mask(path: &Path, n: usize) -> Result<CpuMask, TopologyError> {
    let text = read_text(path)?;
    CpuMask::parse_list(n, &text).map_err(|e| {
        parse_error(
            path,
            format!("{e}; allowed: a CPU list of CPUs 0-{}", n - 1),
        )
    })
}

fn read_optional_mask(path: &Path, n: usize) -> Result<Option<CpuMask>, TopologyError> {
    if path.exists() {
        read_mask(path, n).map(Some)
    } else {
        Ok(None)
    }
}

fn read_mask_either(
    dir: &Path,
    first: &str,
    second: &str,
    n: usize,
) -> Result<CpuMask, TopologyError> {
    match read_optional_mask(&dir.join(first), n)? {
        Some(m) => Ok(m),
        None => read_mask(&dir.join(second), n),
    }
}

/// Reads an id file. `-1` (an id the firmware did not give) reads as 0; a missing file is
/// an error only when `required`.
fn read_id(path: &Path, required: bool) -> Result<u32, TopologyError> {
    if !required && !path.exists() {
        return Ok(0);
    }
    let text = read_text(path)?;
    match text.trim().parse::<i64>() {
        Ok(-1) => Ok(0),
        Ok(v) => u32::try_from(v).map_err(|_| {
            parse_error(
                path,
                format!("'{v}' is not an id; allowed: 0 to {}", u32::MAX),
            )
        }),
        Err(_) => Err(parse_error(
            path,
            format!("'{}' is not an id; allowed: an integer", text.trim()),
        )),
    }
}

fn io_error(path: &Path, e: &std::io::Error) -> TopologyError {
    TopologyError::Io {
        path: path.display().to_string(),
        reason: e.to_string(),
    }
}

fn parse_error(path: &Path, reason: String) -> TopologyError {
    TopologyError::Parse {
        path: path.display().to_string(),
        reason,
    }
}
