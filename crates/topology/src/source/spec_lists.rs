//! The list-valued options of the qemu-style spec: the NUMA distance table, the CPUs of
//! each node, and per-CPU capacities, with the field names their errors use. Kept apart
//! from `spec` so each file stays readable; `spec` builds on them, never the other way.

use crate::capacity::normalize_capacities;
use crate::cpumask::CpuMask;
use crate::error::TopologyError;
use crate::limits::{LOCAL_DISTANCE, MAX_NUMNODES, NR_DISTANCE_VALUES};

/// How fields are named in error messages, so that the same parser can serve the command
/// line (`--smp cores`) and machine files (`smp.cores`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct FieldNames {
    pub smp: &'static str,
    pub smp_sep: &'static str,
    pub distance: &'static str,
    pub numa_cpus: &'static str,
    pub capacity: &'static str,
    pub itmt: &'static str,
}

impl FieldNames {
    pub(crate) fn smp_key(&self, key: &str) -> String {
        format!("{}{}{}", self.smp, self.smp_sep, key)
    }
}

/// Parses `10,21;21,10` into a square, symmetric table with 10 on the diagonal and larger
/// values elsewhere, the rules `numa_set_distance` and the ACPI SLIT checks enforce.
pub(crate) fn parse_distance(text: &str, field: &str) -> Result<Vec<Vec<u32>>, TopologyError> {
    let rows_text: Vec<&str> = text.trim().split(';').collect();
    if rows_text.len() > MAX_NUMNODES {
        return Err(TopologyError::invalid(
            field,
            format!("{} rows", rows_text.len()),
            &format!("1 to {MAX_NUMNODES} rows (MAX_NUMNODES)"),
        ));
    }
    let mut rows = Vec::with_capacity(rows_text.len());
    for (i, row) in rows_text.iter().enumerate() {
        let rf = format!("{field} row {i}");
        let entries = row
            .split(',')
            .map(|e| {
                let e = e.trim();
                e.parse::<u32>().map_err(|_| {
                    TopologyError::invalid(&rf, e, "comma-separated integers from 10 to 255")
                })
            })
            .collect::<Result<Vec<u32>, _>>()?;
        rows.push(entries);
    }
    check_distance(&rows, field)?;
    Ok(rows)
}

/// Checks a distance table, naming rows as `<field> row <i>`.
pub(crate) fn check_distance(rows: &[Vec<u32>], field: &str) -> Result<(), TopologyError> {
    let nodes = rows.len();
    if nodes == 0 {
        return Err(TopologyError::invalid(field, "(empty)", "at least one row"));
    }
    for (i, row) in rows.iter().enumerate() {
        let rf = format!("{field} row {i}");
        if row.len() != nodes {
            return Err(TopologyError::invalid(
                &rf,
                format!("{} entries", row.len()),
                &format!("{nodes} entries, one per row: the matrix must be square"),
            ));
        }
        for (j, &d) in row.iter().enumerate() {
            let mirror = rows.get(j).and_then(|r| r.get(i)).copied().unwrap_or(0);
            if i == j && d != LOCAL_DISTANCE {
                return Err(TopologyError::invalid(
                    &rf,
                    format!("{d} at column {j}"),
                    "10 (LOCAL_DISTANCE) on the diagonal, the smallest of its row",
                ));
            }
            if i != j && (d <= LOCAL_DISTANCE || d >= NR_DISTANCE_VALUES) {
                return Err(TopologyError::invalid(
                    &rf,
                    format!("{d} at column {j}"),
                    "11 to 255 off the diagonal (above the diagonal's 10)",
                ));
            }
            if d != mirror {
                return Err(TopologyError::invalid(
                    &rf,
                    format!("{d} at column {j}"),
                    &format!("a symmetric matrix: row {j} column {i} is {mirror}"),
                ));
            }
        }
    }
    Ok(())
}

/// The default node split: contiguous, equal CPU ranges.
pub(crate) fn even_split(
    n: usize,
    nodes: usize,
    f: &FieldNames,
) -> Result<Vec<usize>, TopologyError> {
    if nodes == 0 || n % nodes != 0 {
        return Err(TopologyError::invalid(
            f.distance,
            format!("{nodes} nodes for {n} CPUs"),
            &format!(
                "a node count dividing the CPU count, or {} to place CPUs",
                f.numa_cpus
            ),
        ));
    }
    Ok((0..n).map(|cpu| cpu * nodes / n).collect())
}

/// Parses `0-3;4-7`: one CPU list per node, every CPU in exactly one node.
pub(crate) fn parse_numa_cpus(
    text: &str,
    n: usize,
    nodes: usize,
    f: &FieldNames,
) -> Result<Vec<usize>, TopologyError> {
    let lists: Vec<&str> = text.trim().split(';').collect();
    if lists.len() != nodes {
        return Err(TopologyError::invalid(
            f.numa_cpus,
            format!("{} CPU lists", lists.len()),
            &format!("one CPU list per node: {nodes}, as {} has rows", f.distance),
        ));
    }
    let mut node_of: Vec<Option<usize>> = vec![None; n];
    for (node, list) in lists.iter().enumerate() {
        let nf = format!("{} node {node}", f.numa_cpus);
        let mask = CpuMask::parse_list(n, list)
            .map_err(|e| TopologyError::invalid(&nf, list.trim(), &format!("a CPU list ({e})")))?;
        if mask.is_empty() {
            return Err(TopologyError::invalid(
                &nf,
                "(empty)",
                "at least one CPU per node (memory-only nodes are not emulated)",
            ));
        }
        for cpu in mask.iter() {
            if let Some(slot) = node_of.get_mut(cpu) {
                if let Some(other) = *slot {
                    return Err(TopologyError::invalid(
                        &nf,
                        list.trim(),
                        &format!("CPUs in one node only; CPU {cpu} is also in node {other}"),
                    ));
                }
                *slot = Some(node);
            }
        }
    }
    let missing = CpuMask::from_cpus(n, (0..n).filter(|&c| node_of[c].is_none()));
    if !missing.is_empty() {
        return Err(TopologyError::invalid(
            f.numa_cpus,
            text.trim(),
            &format!("every CPU in some node; CPUs {missing} are in none"),
        ));
    }
    Ok(node_of.into_iter().map(|o| o.unwrap_or(0)).collect())
}

/// Parses `0-1:1441,2-4:606` into normalised per-CPU capacities. Commas separate both the
/// groups and the items of a CPU list, so a group ends at the item carrying `:raw`.
pub(crate) fn parse_capacity(text: &str, n: usize, field: &str) -> Result<Vec<u32>, TopologyError> {
    let raw = parse_cpu_values(
        text,
        n,
        field,
        "capacity",
        "a positive integer raw capacity",
        |v| v.parse::<u64>().ok().filter(|&v| v > 0),
    )?;
    normalize_capacities(&raw)
        .map_err(|e| TopologyError::invalid(field, text.trim(), &e.to_string()))
}

/// Parses ITMT core priorities, `0-1:60,2-7:40`: one integer per CPU, higher preferred.
pub(crate) fn parse_itmt(text: &str, n: usize, field: &str) -> Result<Vec<i32>, TopologyError> {
    parse_cpu_values(text, n, field, "priority", "an integer priority", |v| {
        v.parse::<i32>()
            .ok()
            .filter(|p| p.unsigned_abs() <= 1 << 30)
    })
}

/// Parses `cpulist:value` groups that give every CPU exactly one `what`, e.g.
/// `0,2:1441,1,3-4:606`. `value` turns the text after `:` into a value, `None` when it is
/// not `allowed`.
pub(crate) fn parse_cpu_values<T: Copy>(
    text: &str,
    n: usize,
    field: &str,
    what: &str,
    allowed: &str,
    value: impl Fn(&str) -> Option<T>,
) -> Result<Vec<T>, TopologyError> {
    let mut out: Vec<Option<T>> = vec![None; n];
    let mut pending: Vec<&str> = Vec::new();
    for item in text.split(',') {
        let item = item.trim();
        let Some((cpus_part, v)) = item.split_once(':') else {
            pending.push(item);
            continue;
        };
        pending.push(cpus_part);
        let list = pending.join(",");
        pending.clear();
        let group = format!("{list}:{}", v.trim());
        let mask = CpuMask::parse_list(n, &list).map_err(|e| {
            TopologyError::invalid(field, &group, &format!("cpulist:{what} groups ({e})"))
        })?;
        if mask.is_empty() {
            return Err(TopologyError::invalid(
                field,
                &group,
                "a non-empty CPU list before ':'",
            ));
        }
        let v = value(v.trim()).ok_or_else(|| {
            TopologyError::invalid(field, &group, &format!("{allowed} after ':'"))
        })?;
        for cpu in mask.iter() {
            if let Some(slot) = out.get_mut(cpu) {
                if slot.is_some() {
                    return Err(TopologyError::invalid(
                        field,
                        &group,
                        &format!("each CPU once; CPU {cpu} already has a {what}"),
                    ));
                }
                *slot = Some(v);
            }
        }
    }
    if pending.iter().any(|p| !p.is_empty()) {
        return Err(TopologyError::invalid(
            field,
            pending.join(","),
            &format!("cpulist:{what} groups, e.g. '0-1:1441,2-4:606'"),
        ));
    }
    let missing = CpuMask::from_cpus(n, (0..n).filter(|&c| out[c].is_none()));
    if !missing.is_empty() {
        return Err(TopologyError::invalid(
            field,
            text.trim(),
            &format!("a {what} for every CPU; CPUs {missing} have none"),
        ));
    }
    Ok(out.into_iter().flatten().collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capacity_groups_may_hold_comma_lists() {
        let caps = parse_capacity("0,2:1441,1,3-4:606", 5, "--capacity").unwrap();
        assert_eq!(caps, vec![1024, 430, 1024, 430, 430]);
        let err = parse_capacity("0-1:1441", 5, "--capacity")
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("--capacity"), "{err}");
    }

    #[test]
    fn itmt_priorities_cover_every_cpu_once() {
        assert_eq!(
            parse_itmt("0-1:60,2-3:40", 4, "--itmt").unwrap(),
            vec![60, 60, 40, 40]
        );
        assert!(parse_itmt("0-1:60", 4, "--itmt").is_err());
        assert!(parse_itmt("0-3:60,1:40", 4, "--itmt").is_err());
        assert!(parse_itmt("0-3:high", 4, "--itmt").is_err());
    }
}
