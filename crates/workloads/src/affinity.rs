//! `cpus=LIST`, the CPU list every workload takes: its tasks' `cpus_allowed`, as
//! `taskset -c LIST tool ...` sets it for the tool and every task it forks.
//!
//! The list is the kernel's `cpulist` syntax (`0-9,20-29`, `cpulist_parse`), so its commas
//! would split a workload specification's `key=value` items: the items after `cpus=` that
//! are CPU numbers or ranges (`20-29`, `7`) continue the list.

use fairsim_topology::CpuMask;

use fairsim_engine::error::{EngineError, SpecError};

/// The largest CPU number a list may name (`NR_CPUS` of the topology builder).
const MAX_CPU: usize = 8191;

/// Why a CPU list is refused ([`CpuList::parse`], [`CpuList::mask`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CpuListError {
    /// Two commas in a row, or a comma at an end.
    #[error("an empty item")]
    EmptyItem,
    /// An item that is not a CPU number.
    #[error("'{got}' is not a CPU number")]
    NotANumber {
        /// The item.
        got: String,
    },
    /// A range whose first CPU is above its last.
    #[error("range '{range}' runs backwards")]
    Backwards {
        /// The range.
        range: String,
    },
    /// A CPU above the largest number a list may name.
    #[error("CPU {cpu} is above {max}")]
    AboveMax {
        /// The CPU.
        cpu: usize,
        /// The largest allowed.
        max: usize,
    },
    /// No CPU at all.
    #[error("no CPU")]
    NoCpu,
    /// A CPU the machine does not have.
    #[error("CPU {cpu} is not on the {ncpus}-CPU machine, whose CPUs are 0-{last}", last = ncpus - 1)]
    NotOnMachine {
        /// The CPU.
        cpu: usize,
        /// CPUs of the machine.
        ncpus: usize,
    },
}

/// A CPU list as given, checked for syntax; turned into a mask once the machine is known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CpuList {
    /// `(first, last)` ranges in the order given.
    ranges: Vec<(usize, usize)>,
}

impl CpuList {
    /// Parses `0-9,20-29`, `5`, ...: at least one CPU, no backwards range, CPUs up to 8191.
    pub fn parse(text: &str) -> Result<CpuList, CpuListError> {
        let mut ranges = Vec::new();
        for item in text.split(',').map(str::trim) {
            if item.is_empty() {
                return Err(CpuListError::EmptyItem);
            }
            let num = |s: &str| {
                s.trim()
                    .parse::<usize>()
                    .map_err(|_| CpuListError::NotANumber {
                        got: s.trim().to_string(),
                    })
            };
            let (a, b) = match item.split_once('-') {
                Some((a, b)) => (num(a)?, num(b)?),
                None => (num(item)?, num(item)?),
            };
            if a > b {
                return Err(CpuListError::Backwards {
                    range: item.to_string(),
                });
            }
            if b > MAX_CPU {
                return Err(CpuListError::AboveMax {
                    cpu: b,
                    max: MAX_CPU,
                });
            }
            ranges.push((a, b));
        }
        if ranges.is_empty() {
            return Err(CpuListError::NoCpu);
        }
        Ok(CpuList { ranges })
    }

    /// Whether `item` continues a CPU list (a number or a range) rather than starting
    /// another `key=value` item.
    pub fn continues(item: &str) -> bool {
        let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
        match item.split_once('-') {
            Some((a, b)) => digits(a.trim()) && digits(b.trim()),
            None => digits(item.trim()),
        }
    }

    /// The mask on a machine of `ncpus` CPUs, or why the list does not fit it.
    pub fn mask(&self, ncpus: usize) -> Result<CpuMask, CpuListError> {
        let mut m = CpuMask::new(ncpus);
        for &(a, b) in &self.ranges {
            if b >= ncpus {
                return Err(CpuListError::NotOnMachine { cpu: b, ncpus });
            }
            for c in a..=b {
                m.set(c);
            }
        }
        Ok(m)
    }

    /// The list as the kernel prints a `cpulist` (`0-9,20-29`), for headers.
    pub fn canonical(&self) -> String {
        let n = self.ranges.iter().map(|r| r.1 + 1).max().unwrap_or(1);
        match self.mask(n) {
            Ok(m) => m.to_list(),
            Err(_) => String::new(),
        }
    }
}

/// Takes `cpus=LIST` (with its continuation items) out of a specification's body, and
/// returns the rest of the body and the list.
pub(crate) fn split_cpus(tool: &str, body: &str) -> Result<(String, Option<CpuList>), EngineError> {
    let mut rest: Vec<&str> = Vec::new();
    let mut list: Option<String> = None;
    let mut in_list = false;
    for item in body.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let key = item
            .split_once('=')
            .map(|(k, _)| k.trim().trim_start_matches('-'));
        if key == Some("cpus") {
            if list.is_some() {
                return Err(SpecError::GivenTwice {
                    tool: tool.to_string(),
                    key: "cpus".into(),
                    allowed: "one cpus=LIST (e.g. cpus=0-9,20-29)".into(),
                }
                .into());
            }
            list = item.split_once('=').map(|(_, v)| v.trim().to_string());
            in_list = true;
        } else if in_list && CpuList::continues(item) {
            if let Some(l) = &mut list {
                l.push(',');
                l.push_str(item);
            }
        } else {
            in_list = false;
            rest.push(item);
        }
    }
    let cpus = match list {
        Some(text) => Some(
            CpuList::parse(&text).map_err(|why| SpecError::InvalidBecause {
                tool: tool.to_string(),
                key: "cpus".into(),
                why: why.to_string(),
                got: text.clone(),
                allowed: "a CPU list such as 0-9,20-29".into(),
            })?,
        ),
        None => None,
    };
    Ok((rest.join(","), cpus))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_continue_across_the_specification_commas() {
        let (rest, cpus) = split_cpus("nanosleep", "tasks=4,cpus=0-1,6-7,9,sleep=1us").unwrap();
        assert_eq!(rest, "tasks=4,sleep=1us");
        let cpus = cpus.unwrap();
        assert_eq!(cpus.canonical(), "0-1,6-7,9");
        assert_eq!(cpus.mask(10).unwrap().to_list(), "0-1,6-7,9");
        let (rest, cpus) = split_cpus("hackbench", "g=2,pipe").unwrap();
        assert_eq!((rest.as_str(), cpus), ("g=2,pipe", None));
    }

    #[test]
    fn bad_lists_are_refused_in_one_line() {
        for (body, want) in [
            ("cpus=3-1", "runs backwards"),
            ("cpus=x", "'x' is not a CPU number"),
            ("cpus=", "an empty item"),
            ("cpus=0,cpus=1", "given twice"),
            ("cpus=9000", "above 8191"),
        ] {
            let e = split_cpus("schbench", body).unwrap_err().to_string();
            assert!(e.contains(want), "{body}: {e}");
            assert!(e.starts_with("--workload: schbench: cpus:"), "{e}");
        }
        let l = CpuList::parse("0-15").unwrap();
        assert!(l
            .mask(8)
            .unwrap_err()
            .to_string()
            .contains("CPU 15 is not on the 8-CPU machine"));
    }
}
