//! CPU speeds apart from capacity: a machine's speed table ([`fairsim_topology::SpeedTable`])
//! names the workload kinds of [`crate::tools`] (each tool's `speed` key and its
//! aliases), and each workload of a run gets the per-CPU speeds of its kind's entry, else
//! the `*` entry, else none (at capacity). The engine takes the resolved speeds as data
//! (`Blueprint::workload_speeds`, whose documentation says what a speed changes) and
//! names no tool.

use fairsim_engine::error::EngineError;
use fairsim_topology::Machine;

use crate::tools::{speed_key, speed_kinds, ANY_KIND};

/// Checks a machine's speed table: every key names a workload kind (or `*`), and no two
/// keys name the same kind (`sysbench` and `sysbench-cpu`). Errors name the entry as a
/// machine file writes it (`speed.KIND`), after `source` (where the machine came from,
/// e.g. `--machine m.toml`).
pub fn check_speed(m: &Machine, source: &str) -> Result<(), EngineError> {
    let mut seen: Vec<(&'static str, &str)> = Vec::new();
    for (kind, _) in m.speed.iter() {
        let field = format!("{source}: speed.{kind}");
        let Some(key) = speed_key(kind) else {
            return Err(EngineError::Invalid {
                field,
                got: kind.to_string(),
                allowed: speed_kinds(),
            });
        };
        if let Some((_, other)) = seen.iter().find(|(k, _)| *k == key) {
            return Err(EngineError::Invalid {
                field,
                got: kind.to_string(),
                allowed: format!("one entry per workload kind; speed.{other} names it too"),
            });
        }
        seen.push((key, kind));
    }
    Ok(())
}

/// The per-CPU speeds the work of a workload of `kind` runs at on `m`: its kind's entry,
/// else the `*` entry, else `None` (at capacity).
pub fn speeds_of(m: &Machine, kind: &str) -> Option<Vec<u64>> {
    let key = speed_key(kind)?;
    let row = m
        .speed
        .iter()
        .find(|(k, _)| speed_key(k) == Some(key))
        .or_else(|| m.speed.iter().find(|(k, _)| *k == ANY_KIND))
        .map(|(_, row)| row)?;
    Some(row.iter().map(|&s| u64::from(s)).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tc2() -> Machine {
        fairsim_topology::source::preset("tc2").unwrap()
    }

    #[test]
    fn a_workload_finds_its_entry_then_the_default() {
        let mut m = tc2();
        assert_eq!(
            speeds_of(&m, "sysbench-cpu"),
            Some(vec![1024, 1024, 504, 504, 504])
        );
        assert_eq!(speeds_of(&m, "hackbench"), None);
        m.speed.insert("*", vec![1024, 1024, 600, 600, 600]);
        assert_eq!(speeds_of(&m, "hackbench").unwrap()[2], 600);
        assert_eq!(speeds_of(&m, "sysbench-cpu").unwrap()[2], 504);
        assert!(check_speed(&m, "t").is_ok());
    }

    #[test]
    fn bad_kinds_are_refused_with_the_field() {
        let mut m = tc2();
        m.speed.insert("sysbnch", vec![1024; 5]);
        let e = check_speed(&m, "t").unwrap_err().to_string();
        assert!(
            e.contains("speed.sysbnch") && e.contains("allowed: schbench"),
            "{e}"
        );
        let mut m = tc2();
        m.speed.insert("sysbench-cpu", vec![1024; 5]);
        let e = check_speed(&m, "t").unwrap_err().to_string();
        assert!(e.contains("one entry per workload kind"), "{e}");
    }
}
