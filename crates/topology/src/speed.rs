//! CPU speeds apart from capacity: how fast each CPU runs one kind of workload.
//!
//! The kernel's `arch_scale_cpu_capacity` is one number per CPU, the same for every task:
//! the scheduler balances with it and PELT is made invariant with it. Real cores are not
//! that simple; how much faster a big core runs a loop depends on the loop. TC2's
//! device tree gives the A7 a capacity of 430/1024 of the A15 (`capacity-dmips-mhz` 606
//! against 1441, normalised), while seed 002's posting measured the sysbench prime loop at
//! 33.5 s on an A7 against 16.5 s on an A15, a speed of 504/1024. A machine's speed table
//! lets work run at the measured speed while the scheduler keeps the capacity it was
//! given, as it does on the real board.
//!
//! The table maps a workload kind (the tool's name as `--workload` takes it, or `*` for
//! every workload without an entry of its own) to one speed per CPU, on the capacity
//! scale: 1 to 1024, the speed of the biggest CPU at its highest frequency being 1024.
//! This crate carries the table and checks its shape; which kinds exist is the engine's
//! business, which checks the names when a run uses them.
//!
//! In files and on the command line an entry is written like `capacity`, as
//! `cpulist:speed` groups giving every CPU one speed: `sysbench = "0-1:1024,2-4:504"` in a
//! machine file's `[speed]` table, `--speed sysbench=0-1:1024,2-4:504` for `fairsim run`.

use std::collections::BTreeMap;

use crate::error::TopologyError;
use crate::limits::SCHED_CAPACITY_SCALE;
use crate::source::spec_lists::parse_cpu_values;

/// The longest workload kind accepted as a key.
const MAX_KIND_LEN: usize = 32;

/// What a speed table key may be, for error messages.
const KIND_SYNTAX: &str =
    "a workload kind (lower-case letters, digits and '-', e.g. sysbench) or *";

/// Per-workload-kind CPU speeds, in increasing kind order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SpeedTable {
    /// Kind -> one speed per CPU, 1..=1024.
    entries: BTreeMap<String, Vec<u32>>,
}

impl SpeedTable {
    /// An empty table: every workload runs at its CPUs' capacities.
    pub fn new() -> Self {
        SpeedTable::default()
    }

    /// Whether the table has no entry.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The per-CPU speeds given for `kind`, as written in the table (no `*` fallback).
    pub fn get(&self, kind: &str) -> Option<&[u32]> {
        self.entries.get(kind).map(Vec::as_slice)
    }

    /// Every entry, in increasing kind order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &[u32])> {
        self.entries.iter().map(|(k, v)| (k.as_str(), v.as_slice()))
    }

    /// Sets the speeds of `kind`, replacing an earlier entry for it.
    pub fn insert(&mut self, kind: &str, speeds: Vec<u32>) {
        self.entries.insert(kind.to_string(), speeds);
    }

    /// Removes the entry of `kind`, returning its speeds.
    pub fn remove(&mut self, kind: &str) -> Option<Vec<u32>> {
        self.entries.remove(kind)
    }

    /// Removes every entry.
    pub fn clear(&mut self) {
        self.entries.clear();
    }

    /// Checks a key's syntax: `*`, or lower-case letters, digits and `-`.
    pub fn check_kind(kind: &str, field: &str) -> Result<(), TopologyError> {
        let word = !kind.is_empty()
            && kind.len() <= MAX_KIND_LEN
            && kind
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
        if kind == "*" || word {
            Ok(())
        } else {
            Err(TopologyError::invalid(field, kind, KIND_SYNTAX))
        }
    }

    /// Parses one entry's `cpulist:speed` groups for a machine of `ncpus` CPUs: every CPU
    /// once, each speed an integer from 1 to 1024. `field` names the entry in errors.
    pub fn parse_speeds(text: &str, ncpus: usize, field: &str) -> Result<Vec<u32>, TopologyError> {
        parse_cpu_values(
            text,
            ncpus,
            field,
            "speed",
            "an integer speed from 1 to 1024 (the capacity scale)",
            |v| {
                v.parse::<u32>()
                    .ok()
                    .filter(|s| (1..=SCHED_CAPACITY_SCALE).contains(s))
            },
        )
    }

    /// Parses a command-line entry, `KIND=LIST:SPEED,...`, e.g.
    /// `sysbench=0-1:1024,2-4:504`, into its kind and speeds. `option` names the option.
    pub fn parse_option(
        spec: &str,
        ncpus: usize,
        option: &str,
    ) -> Result<(String, Vec<u32>), TopologyError> {
        let Some((kind, list)) = spec.split_once('=') else {
            return Err(TopologyError::invalid(
                option,
                spec,
                "KIND=LIST:SPEED,... (e.g. sysbench=0-1:1024,2-4:504), or none",
            ));
        };
        let kind = kind.trim();
        Self::check_kind(kind, option)?;
        let speeds = Self::parse_speeds(list, ncpus, &format!("{option} {kind}"))?;
        Ok((kind.to_string(), speeds))
    }

    /// The speeds of `kind` written back as `cpulist:speed` groups of consecutive CPUs,
    /// e.g. `0-1:1024,2-4:504`: what a file or `--speed` takes.
    pub fn describe(speeds: &[u32]) -> String {
        let mut groups = Vec::new();
        let mut start = 0;
        for cpu in 1..=speeds.len() {
            if cpu == speeds.len() || speeds[cpu] != speeds[start] {
                let list = if cpu - start == 1 {
                    start.to_string()
                } else {
                    format!("{start}-{}", cpu - 1)
                };
                groups.push(format!("{list}:{}", speeds[start]));
                start = cpu;
            }
        }
        groups.join(",")
    }

    /// Checks the table against a machine of `ncpus` CPUs: keys well formed, one speed
    /// per CPU, every speed from 1 to 1024.
    pub fn validate(&self, ncpus: usize) -> Result<(), TopologyError> {
        for (kind, speeds) in &self.entries {
            let field = format!("speed.{kind}");
            Self::check_kind(kind, &field)?;
            if speeds.len() != ncpus {
                return Err(TopologyError::invalid(
                    &field,
                    format!("{} speeds", speeds.len()),
                    &format!("one speed per CPU ({ncpus})"),
                ));
            }
            if let Some((cpu, s)) = speeds
                .iter()
                .enumerate()
                .find(|(_, s)| !(1..=SCHED_CAPACITY_SCALE).contains(*s))
            {
                return Err(TopologyError::invalid(
                    &format!("{field} cpu{cpu}"),
                    s,
                    "1 to 1024 (the capacity scale)",
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_parse_and_describe_back() {
        let s = SpeedTable::parse_speeds("0-1:1024,2-4:504", 5, "speed.sysbench").unwrap();
        assert_eq!(s, vec![1024, 1024, 504, 504, 504]);
        assert_eq!(SpeedTable::describe(&s), "0-1:1024,2-4:504");
        assert_eq!(SpeedTable::describe(&[7, 9, 9]), "0:7,1-2:9");
        let (kind, s) = SpeedTable::parse_option("sysbench=0:1024,1:512", 2, "--speed").unwrap();
        assert_eq!((kind.as_str(), s), ("sysbench", vec![1024, 512]));
    }

    #[test]
    fn bad_entries_name_the_field() {
        for (text, n) in [
            ("0-1:1024", 5),
            ("0-4:0", 5),
            ("0-4:1025", 5),
            ("0-4:fast", 5),
        ] {
            let e = SpeedTable::parse_speeds(text, n, "speed.sysbench")
                .unwrap_err()
                .to_string();
            assert!(
                e.starts_with("speed.sysbench") && e.contains("allowed"),
                "{e}"
            );
        }
        for spec in ["sysbench", "Sys=0:1", "=0:1", "a b=0:1"] {
            let e = SpeedTable::parse_option(spec, 1, "--speed")
                .unwrap_err()
                .to_string();
            assert!(e.starts_with("--speed") && e.contains("allowed"), "{e}");
        }
    }

    #[test]
    fn validate_checks_the_shape() {
        let mut t = SpeedTable::new();
        t.insert("sysbench", vec![1024, 504]);
        assert!(t.validate(2).is_ok());
        assert!(t.validate(3).is_err());
        t.insert("*", vec![0, 1]);
        let e = t.validate(2).unwrap_err().to_string();
        assert!(e.contains("speed.* cpu0"), "{e}");
    }
}
