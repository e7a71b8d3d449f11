//! Exclusive cpuset partitions: the CPU sets cgroup v2's `cpuset.cpus.partition = root`
//! hands to `partition_sched_domains`, and the build of one root domain per set.
//!
//! A user names the partitions; the CPUs no partition takes stay with the top cpuset,
//! which is a partition root of its own in cgroup v2, so they form one more root domain
//! (listed first, as `generate_sched_domains` lists the top cpuset first). Each set is
//! built as `build_sched_domains(cpu_map)` builds it: every span ANDed with the set, the
//! walk up stopping at the level spanning the whole set, and degenerate levels removed
//! per CPU, so no domain, group or balance ever reaches across two sets.

use crate::attach::build_root_domains;
use crate::cpumask::{CpuListError, CpuMask};
use crate::domain::{BuildOptions, SchedDomains};
use crate::error::TopologyError;
use crate::machine::Machine;

/// Parses the cpusets `lists` (the kernel's cpulist format, `0-9,20-29`, as
/// [`parse_cpulist`] reads it) for a machine of `nr_cpus` CPUs and checks them as
/// [`check_cpusets`] does. Errors name `field`, the option or key the lists came from
/// (`--cpuset`, `cpusets`).
pub fn parse_cpusets(
    nr_cpus: usize,
    lists: &[String],
    field: &str,
) -> Result<Vec<CpuMask>, TopologyError> {
    let last = nr_cpus.saturating_sub(1);
    let sets = lists
        .iter()
        .map(|text| {
            parse_cpulist(nr_cpus, text).map_err(|why| {
                TopologyError::invalid(
                    field,
                    text,
                    &format!("a CPU list of CPUs 0-{last}, e.g. 0-3,8-11 ({why})"),
                )
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    check_cpusets(nr_cpus, &sets, field)?;
    Ok(sets)
}

/// Mirrors `bitmap_parselist` (what a write to `cpuset.cpus` goes through): items split
/// by commas, each `A`, `A-B` or `A-B:USED/GROUP` (the first USED CPUs of every GROUP
/// CPUs from A up to B), where `N` stands for the last CPU. An empty text is an empty
/// mask, which the callers refuse.
pub fn parse_cpulist(nr_cpus: usize, text: &str) -> Result<CpuMask, CpuListError> {
    let last = nr_cpus.saturating_sub(1);
    let num = |s: &str| -> Result<usize, CpuListError> {
        let s = s.trim();
        if s == "N" {
            return Ok(last);
        }
        s.parse::<usize>()
            .map_err(|_| CpuListError::NotCpu { got: s.to_string() })
    };
    let mut mask = CpuMask::new(nr_cpus);
    for item in text.trim().split(',').map(str::trim) {
        if item.is_empty() {
            continue;
        }
        let (range, pattern) = match item.split_once(':') {
            Some((r, p)) => (r, Some(p)),
            None => (item, None),
        };
        let (start, end) = match range.split_once('-') {
            Some((a, b)) => (num(a)?, num(b)?),
            None => {
                let a = num(range)?;
                (a, a)
            }
        };
        let width = end.saturating_sub(start) + 1;
        let (used, group) = match pattern {
            Some(p) => {
                let (u, g) =
                    p.split_once('/')
                        .ok_or_else(|| CpuListError::PatternWithoutGroup {
                            got: item.to_string(),
                        })?;
                (num(u)?, num(g)?)
            }
            None => (width, width),
        };
        if start > end {
            return Err(CpuListError::Backwards {
                got: item.to_string(),
            });
        }
        if group == 0 || used > group {
            return Err(CpuListError::BadPattern {
                got: item.to_string(),
            });
        }
        if end >= nr_cpus {
            return Err(CpuListError::OutOfRange { cpu: end, last });
        }
        // Saturating and checked sums: USED and GROUP may be any number a user types.
        let mut base = Some(start);
        while let Some(b) = base.filter(|&b| b <= end) {
            for cpu in b..b.saturating_add(used).min(end + 1) {
                mask.set(cpu);
            }
            base = b.checked_add(group);
        }
    }
    Ok(mask)
}

/// Checks exclusive partitions as `validate_change` and the partition code of cpuset.c
/// refuse them: each set non-empty, within the machine's CPUs, and no CPU in two sets.
pub fn check_cpusets(nr_cpus: usize, sets: &[CpuMask], field: &str) -> Result<(), TopologyError> {
    let last = nr_cpus.saturating_sub(1);
    let mut taken = CpuMask::new(nr_cpus);
    for (i, set) in sets.iter().enumerate() {
        if set.nbits() != nr_cpus {
            return Err(TopologyError::invalid(
                field,
                format!("a mask of {} CPUs", set.nbits()),
                &format!("a CPU list of this machine's CPUs 0-{last}"),
            ));
        }
        if set.is_empty() {
            return Err(TopologyError::invalid(
                field,
                set,
                "a non-empty CPU list; a partition needs at least one CPU",
            ));
        }
        if set.intersects(&taken) {
            let shared = set.and(&taken);
            let other = sets[..i]
                .iter()
                .find(|s| s.intersects(set))
                .map_or_else(String::new, CpuMask::to_list);
            return Err(TopologyError::Inconsistent {
                field: field.to_string(),
                detail: format!(
                    "{set} and {other} share CPUs {shared}; allowed: exclusive \
                     partitions, each CPU in at most one {field}"
                ),
            });
        }
        taken.or_with(set);
    }
    Ok(())
}

/// Mirrors cgroup v2's `generate_sched_domains`: the top cpuset's remaining CPUs first
/// (left out when the partitions take every CPU), then each partition in order. Without
/// partitions it is the one set of every CPU.
pub fn generate_sched_domains(nr_cpus: usize, cpusets: &[CpuMask]) -> Vec<CpuMask> {
    let mut rest = CpuMask::full(nr_cpus);
    for set in cpusets {
        rest.andnot_with(set);
    }
    let mut doms = Vec::with_capacity(cpusets.len() + 1);
    if !rest.is_empty() {
        doms.push(rest);
    }
    doms.extend(cpusets.iter().cloned());
    doms
}

/// Mirrors `partition_sched_domains` called with the sets of [`generate_sched_domains`]:
/// builds one root domain per set. Without cpusets this is [`crate::build_sched_domains`].
/// The sets are checked by [`check_cpusets`] under the field name `cpusets`.
pub fn partition_sched_domains(
    m: &Machine,
    opts: BuildOptions,
    cpusets: &[CpuMask],
) -> Result<SchedDomains, TopologyError> {
    m.validate()?;
    check_cpusets(m.nr_cpus(), cpusets, "cpusets")?;
    build_root_domains(m, opts, generate_sched_domains(m.nr_cpus(), cpusets))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lists(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn leftover_cpus_come_first() {
        let sets = parse_cpusets(8, &lists(&["4-5"]), "--cpuset").unwrap();
        let doms = generate_sched_domains(8, &sets);
        let spans: Vec<String> = doms.iter().map(CpuMask::to_list).collect();
        assert_eq!(spans, vec!["0-3,6-7", "4-5"]);
        let all = parse_cpusets(8, &lists(&["0-3", "4-7"]), "--cpuset").unwrap();
        assert_eq!(generate_sched_domains(8, &all).len(), 2);
    }

    #[test]
    fn cpulists_take_the_kernels_patterns_and_n() {
        let parse = |t: &str| {
            parse_cpulist(16, t)
                .map(|m| m.to_list())
                .map_err(|e| e.to_string())
        };
        assert_eq!(parse("0-9,12").unwrap(), "0-9,12");
        assert_eq!(parse("0-15:2/4").unwrap(), "0-1,4-5,8-9,12-13");
        assert_eq!(parse("1-N:1/2").unwrap(), "1,3,5,7,9,11,13,15");
        assert_eq!(parse("N").unwrap(), "15");
        assert_eq!(parse("0-5:0/3").unwrap(), "");
        let huge = usize::MAX;
        assert_eq!(parse(&format!("0-5:{huge}/{huge}")).unwrap(), "0-5");
        assert!(parse("0-9:3/2").unwrap_err().contains("USED at most GROUP"));
        assert!(parse("0-9:1/0").unwrap_err().contains("GROUP above 0"));
        assert!(parse("0-9:1").unwrap_err().contains("without '/GROUP'"));
        assert!(parse("3-1").unwrap_err().contains("backwards"));
    }

    #[test]
    fn bad_cpusets_are_refused_in_one_line() {
        for (input, want) in [
            (vec!["0-3", "3-5"], "share CPUs 3"),
            (vec![""], "non-empty"),
            (vec!["0-8"], "out of range 0-7"),
            (vec!["x"], "not a CPU number"),
        ] {
            let err = parse_cpusets(8, &lists(&input), "--cpuset")
                .unwrap_err()
                .to_string();
            assert!(err.starts_with("--cpuset"), "{err}");
            assert!(err.contains(want), "{err}");
            assert!(!err.contains('\n'), "{err}");
        }
    }
}
