//! Reading `/proc/schedstat` files (versions 15, 16 and 17, with or without seed 000's
//! `lb_sg_scan` column) and computing the per-CPU, per-domain deltas between two of them,
//! printed in the layout of the `schedstat.py -i 5 -c 8` listing seed 000 quotes:
//! `.domain1.CPU_NEWLY_IDLE.lb_count 822`, one non-zero field per line, sorted.
//!
//! It reads what the kernel writes as well as what fairsim writes, so a delta taken on a
//! real machine and one taken on the emulator print the same way.

use std::fmt::Write;

/// Why a schedstat text could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SchedstatError {
    /// A line did not have the layout of its version.
    #[error("{source_name} line {line}: {reason}")]
    Layout {
        /// The file (for messages).
        source_name: String,
        /// 1-based line number.
        line: usize,
        /// What is wrong.
        reason: String,
    },
    /// The two snapshots do not describe the same CPUs and domains.
    #[error("schedstat diff: {what}")]
    Mismatch {
        /// Which CPUs or domains differ.
        what: String,
    },
}

/// One CPU's counters: its `cpu<N>` line and its `domain<K>` lines, as (name, value).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CpuCounters {
    /// CPU number.
    pub cpu: usize,
    /// `.stats.*` fields in file order.
    pub stats: Vec<(String, u64)>,
    /// Domains, bottom-up.
    pub domains: Vec<DomainCounters>,
}

/// One `domain<K>` line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DomainCounters {
    /// K.
    pub index: usize,
    /// The level name (v17 only).
    pub name: Option<String>,
    /// The span as printed (hex bitmap).
    pub mask: String,
    /// Fields as `ITYPE.field` or `field`, in file order.
    pub fields: Vec<(String, u64)>,
}

/// A parsed schedstat file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Schedstat {
    /// `version N`.
    pub version: u32,
    /// `timestamp J` (jiffies).
    pub timestamp: u64,
    /// CPUs in file order.
    pub cpus: Vec<CpuCounters>,
}

const CPU_FIELDS: [&str; 9] = [
    "yld_count",
    "legacy_zero",
    "sched_count",
    "sched_goidle",
    "ttwu_count",
    "ttwu_local",
    "rq_cpu_time",
    "rq_sched_info.run_delay",
    "rq_sched_info.pcount",
];

const TAIL_FIELDS: [&str; 12] = [
    "alb_count",
    "alb_failed",
    "alb_pushed",
    "sbe_count",
    "sbe_balanced",
    "sbe_pushed",
    "sbf_count",
    "sbf_balanced",
    "sbf_pushed",
    "ttwu_wake_remote",
    "ttwu_move_affine",
    "ttwu_move_balance",
];

/// The per-itype field names of a block of `n` fields in a file of `version`.
fn block_fields(version: u32, n: usize) -> Option<Vec<&'static str>> {
    let mut v: Vec<&'static str> = if version >= 17 {
        vec![
            "lb_count",
            "lb_balanced",
            "lb_failed",
            "lb_imbalance_load",
            "lb_imbalance_util",
            "lb_imbalance_task",
            "lb_imbalance_misfit",
            "lb_gained",
            "lb_hot_gained",
            "lb_nobusyq",
            "lb_nobusyg",
        ]
    } else {
        vec![
            "lb_count",
            "lb_balanced",
            "lb_failed",
            "lb_imbalance",
            "lb_gained",
            "lb_hot_gained",
            "lb_nobusyq",
            "lb_nobusyg",
        ]
    };
    if n == v.len() + 1 {
        v.push("lb_sg_scan");
    }
    (n == v.len()).then_some(v)
}

/// The idle-type names in block order for `version`.
fn itype_order(version: u32) -> [&'static str; 3] {
    if version >= 16 {
        ["CPU_NOT_IDLE", "CPU_IDLE", "CPU_NEWLY_IDLE"]
    } else {
        ["CPU_IDLE", "CPU_NOT_IDLE", "CPU_NEWLY_IDLE"]
    }
}

/// Parses a schedstat text; `source_name` names it in errors.
pub fn parse_schedstat(text: &str, source_name: &str) -> Result<Schedstat, SchedstatError> {
    let err = |line: usize, reason: String| SchedstatError::Layout {
        source_name: source_name.to_string(),
        line,
        reason,
    };
    let num = |s: &str, line: usize| -> Result<u64, SchedstatError> {
        s.parse::<u64>()
            .map_err(|_| err(line, format!("'{s}' is not a counter")))
    };
    let mut version = 0u32;
    let mut seen_timestamp = false;
    let mut seen_cpus = std::collections::BTreeSet::new();
    let mut timestamp = 0u64;
    let mut cpus: Vec<CpuCounters> = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line_no = i + 1;
        let words: Vec<&str> = raw.split_whitespace().collect();
        let Some(&head) = words.first() else {
            continue;
        };
        if head == "version" {
            // A second version line means two files were concatenated; which layout
            // the later lines follow is then a guess.
            if version != 0 {
                return Err(err(
                    line_no,
                    "a second 'version' line; allowed: one snapshot per file".to_string(),
                ));
            }
            version = words
                .get(1)
                .and_then(|v| v.parse().ok())
                .filter(|v| (15..=17).contains(v))
                .ok_or_else(|| err(line_no, "version: allowed 15, 16 or 17".to_string()))?;
        } else if head == "timestamp" {
            if seen_timestamp {
                return Err(err(
                    line_no,
                    "a second 'timestamp' line; allowed: one snapshot per file".to_string(),
                ));
            }
            seen_timestamp = true;
            timestamp = num(words.get(1).copied().unwrap_or(""), line_no)?;
        } else if let Some(n) = head.strip_prefix("cpu") {
            let cpu = n
                .parse::<usize>()
                .map_err(|_| err(line_no, format!("'{head}' is not cpu<N>")))?;
            if words.len() != 1 + CPU_FIELDS.len() {
                return Err(err(
                    line_no,
                    format!("cpu line has {} fields; expected 9", words.len() - 1),
                ));
            }
            // The kernel prints each online CPU once, in increasing order; a repeat would
            // be summed or diffed twice.
            if !seen_cpus.insert(cpu) {
                return Err(err(
                    line_no,
                    format!("cpu{cpu} appears twice; allowed: each CPU once"),
                ));
            }
            let mut stats = Vec::new();
            for (name, w) in CPU_FIELDS.iter().zip(&words[1..]) {
                stats.push((name.to_string(), num(w, line_no)?));
            }
            cpus.push(CpuCounters {
                cpu,
                stats,
                domains: Vec::new(),
            });
        } else if let Some(k) = head.strip_prefix("domain") {
            let index = k
                .parse::<usize>()
                .map_err(|_| err(line_no, format!("'{head}' is not domain<K>")))?;
            if version == 0 {
                return Err(err(
                    line_no,
                    "domain line before the version line".to_string(),
                ));
            }
            let (name, mask, rest) = if version >= 17 {
                if words.len() < 3 {
                    return Err(err(
                        line_no,
                        "domain line without name and mask".to_string(),
                    ));
                }
                (
                    Some(words[1].to_string()),
                    words[2].to_string(),
                    &words[3..],
                )
            } else {
                if words.len() < 2 {
                    return Err(err(line_no, "domain line without mask".to_string()));
                }
                (None, words[1].to_string(), &words[2..])
            };
            if rest.len() < TAIL_FIELDS.len() || (rest.len() - TAIL_FIELDS.len()) % 3 != 0 {
                return Err(err(
                    line_no,
                    format!("domain line has {} counters", rest.len()),
                ));
            }
            let per = (rest.len() - TAIL_FIELDS.len()) / 3;
            let names = block_fields(version, per).ok_or_else(|| {
                err(
                    line_no,
                    format!("{per} counters per idle type does not match version {version}"),
                )
            })?;
            let mut fields = Vec::new();
            for (b, itype) in itype_order(version).iter().enumerate() {
                for (j, name) in names.iter().enumerate() {
                    fields.push((format!("{itype}.{name}"), num(rest[b * per + j], line_no)?));
                }
            }
            for (name, w) in TAIL_FIELDS.iter().zip(&rest[3 * per..]) {
                fields.push((name.to_string(), num(w, line_no)?));
            }
            let Some(cpu) = cpus.last_mut() else {
                return Err(err(line_no, "domain line before any cpu line".to_string()));
            };
            cpu.domains.push(DomainCounters {
                index,
                name,
                mask,
                fields,
            });
        } else {
            return Err(err(line_no, format!("unknown line starting with '{head}'")));
        }
    }
    if version == 0 {
        return Err(err(1, "no 'version' line".to_string()));
    }
    Ok(Schedstat {
        version,
        timestamp,
        cpus,
    })
}

/// `b - a`, counter by counter. The files must have the same version, CPUs, domains and
/// fields; a counter that went down (a reboot) is an error.
pub fn diff_schedstat(a: &Schedstat, b: &Schedstat) -> Result<Schedstat, SchedstatError> {
    let mism = |m: String| SchedstatError::Mismatch { what: m };
    if a.version != b.version {
        return Err(mism(format!(
            "versions differ ({} and {})",
            a.version, b.version
        )));
    }
    if a.cpus.len() != b.cpus.len() {
        return Err(mism(format!(
            "CPU counts differ ({} and {})",
            a.cpus.len(),
            b.cpus.len()
        )));
    }
    let sub = |x: &[(String, u64)],
               y: &[(String, u64)],
               what: &str|
     -> Result<Vec<(String, u64)>, SchedstatError> {
        if x.len() != y.len() {
            return Err(mism(format!("{what}: field counts differ")));
        }
        x.iter()
            .zip(y)
            .map(|((n, v0), (_, v1))| {
                v1.checked_sub(*v0)
                    .map(|d| (n.clone(), d))
                    .ok_or_else(|| mism(format!("{what}.{n} went down ({v0} -> {v1})")))
            })
            .collect()
    };
    let mut cpus = Vec::new();
    for (ca, cb) in a.cpus.iter().zip(&b.cpus) {
        if ca.cpu != cb.cpu || ca.domains.len() != cb.domains.len() {
            return Err(mism(format!(
                "cpu{} has a different layout in the two files",
                ca.cpu
            )));
        }
        let stats = sub(&ca.stats, &cb.stats, &format!("cpu{}", ca.cpu))?;
        let mut domains = Vec::new();
        for (da, db) in ca.domains.iter().zip(&cb.domains) {
            domains.push(DomainCounters {
                index: db.index,
                name: db.name.clone(),
                mask: db.mask.clone(),
                fields: sub(
                    &da.fields,
                    &db.fields,
                    &format!("cpu{}.domain{}", ca.cpu, da.index),
                )?,
            });
        }
        cpus.push(CpuCounters {
            cpu: cb.cpu,
            stats,
            domains,
        });
    }
    Ok(Schedstat {
        version: b.version,
        timestamp: b.timestamp.saturating_sub(a.timestamp),
        cpus,
    })
}

/// Renders a delta as seed 000's listing: for each selected CPU a `cpu<N>` header, then
/// every non-zero counter as `.domain<K>.<ITYPE>.<field> <value>`, `.domain<K>.<field>`
/// or `.stats.<field>`, sorted by name.
pub fn render_listing(delta: &Schedstat, cpus: Option<&[usize]>) -> String {
    let mut out = String::new();
    for c in &delta.cpus {
        if cpus.is_some_and(|sel| !sel.contains(&c.cpu)) {
            continue;
        }
        let _ = writeln!(out, "cpu{}", c.cpu);
        let mut lines: Vec<(String, u64)> = Vec::new();
        for d in &c.domains {
            for (name, v) in &d.fields {
                if *v != 0 {
                    lines.push((format!(".domain{}.{}", d.index, name), *v));
                }
            }
        }
        for (name, v) in &c.stats {
            if *v != 0 && name != "legacy_zero" {
                lines.push((format!(".stats.{name}"), *v));
            }
        }
        lines.sort();
        for (k, v) in lines {
            let _ = writeln!(out, "{k} {v}");
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const V16: &str = "version 16\ntimestamp 100\ncpu0 0 0 10 5 7 3 1000 200 9\n\
domain0 03 1 2 0 0 0 0 0 1  3 3 0 0 0 0 0 3  4 2 1 1 1 0 1 0  0 0 0 0 0 0 0 0 0 6 0 0\n";

    #[test]
    fn v16_blocks_are_busy_idle_newidle() {
        let s = parse_schedstat(V16, "a").unwrap();
        let d = &s.cpus[0].domains[0];
        let get = |k: &str| d.fields.iter().find(|(n, _)| n == k).unwrap().1;
        assert_eq!(get("CPU_NOT_IDLE.lb_count"), 1);
        assert_eq!(get("CPU_IDLE.lb_count"), 3);
        assert_eq!(get("CPU_NEWLY_IDLE.lb_count"), 4);
        assert_eq!(get("CPU_NEWLY_IDLE.lb_nobusyq"), 1);
        assert_eq!(get("ttwu_wake_remote"), 6);
    }

    #[test]
    fn diff_lists_nonzero_deltas_sorted() {
        let a = parse_schedstat(V16, "a").unwrap();
        let b_text = V16
            .replace("cpu0 0 0 10 5", "cpu0 0 0 15 5")
            .replace("domain0 03 1 2", "domain0 03 4 2");
        let b = parse_schedstat(&b_text, "b").unwrap();
        let d = diff_schedstat(&a, &b).unwrap();
        let text = render_listing(&d, None);
        assert_eq!(
            text,
            "cpu0\n.domain0.CPU_NOT_IDLE.lb_count 3\n.stats.sched_count 5\n"
        );
    }

    #[test]
    fn bad_layouts_are_reported_with_line() {
        assert!(parse_schedstat("version 9\n", "x").is_err());
        let e = parse_schedstat("version 16\ncpu0 1 2\n", "x")
            .unwrap_err()
            .to_string();
        assert!(e.contains("x line 2"), "{e}");
        let e = parse_schedstat("version 16\ncpu0 0 0 0 0 0 0 0 0 0\ndomain0 1 2 3\n", "x")
            .unwrap_err()
            .to_string();
        assert!(e.contains("line 3"), "{e}");
    }

    #[test]
    fn repeated_cpus_versions_and_timestamps_are_refused() {
        let cpu_twice = format!("{V16}cpu0 0 0 10 5 7 3 1000 200 9\n");
        let e = parse_schedstat(&cpu_twice, "x").unwrap_err().to_string();
        assert!(e.contains("cpu0 appears twice"), "{e}");
        let two_files = format!("{V16}{V16}");
        let e = parse_schedstat(&two_files, "x").unwrap_err().to_string();
        assert!(
            e.contains("second 'version'") && e.contains("line 5"),
            "{e}"
        );
        let stamps = V16.replace("timestamp 100\n", "timestamp 100\ntimestamp 200\n");
        let e = parse_schedstat(&stamps, "x").unwrap_err().to_string();
        assert!(e.contains("second 'timestamp'"), "{e}");
    }
}
