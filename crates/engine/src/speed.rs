//! CPU speeds apart from capacity: the workload kinds a machine's speed table
//! ([`fairsim_topology::SpeedTable`]) may name, and the rate each workload's work runs at.
//!
//! Without a speed table a CPU does `capacity_orig * freq_capacity / 1024` work units per
//! nanosecond, the capacity the scheduler sees scaled by the current frequency. A speed
//! entry for a workload's kind replaces `capacity_orig` in that product for that
//! workload's tasks, and for them only: the scheduler's `capacity_orig`, `cpu_capacity`,
//! PELT's capacity invariance and misfit detection keep the capacity, as the kernel's do
//! on a machine whose cores run some code faster than their capacity says. The speed only
//! changes how long the work takes, and so what PELT sees through time.

use fairsim_topology::Machine;

use crate::error::EngineError;

/// The kinds a speed table may name, with their aliases folded into the first name: the
/// tools `--workload` takes.
const KINDS: [(&str, &[&str]); 6] = [
    ("schbench", &["schbench"]),
    ("hackbench", &["hackbench"]),
    ("nanosleep", &["nanosleep"]),
    ("sysbench", &["sysbench", "sysbench-cpu"]),
    ("rtapp", &["rtapp", "rt-app"]),
    ("cyclictest", &["cyclictest"]),
];

/// The key of every workload without an entry of its own.
pub const ANY_KIND: &str = "*";

/// What a speed table key may be, for error messages.
pub const SPEED_KINDS: &str = "schbench, hackbench, nanosleep, sysbench (sysbench-cpu), \
     rtapp (rt-app), cyclictest, or * for every workload without its own entry";

/// The key that a workload kind (a tool name or one of its aliases, or `*`) has in a
/// speed table, or `None` when it names no workload.
pub fn speed_key(kind: &str) -> Option<&'static str> {
    if kind == ANY_KIND {
        return Some(ANY_KIND);
    }
    KINDS
        .iter()
        .find(|(_, names)| names.contains(&kind))
        .map(|(key, _)| *key)
}

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
                allowed: SPEED_KINDS.to_string(),
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
    fn kinds_fold_their_aliases() {
        assert_eq!(speed_key("sysbench-cpu"), Some("sysbench"));
        assert_eq!(speed_key("rt-app"), Some("rtapp"));
        assert_eq!(speed_key("*"), Some("*"));
        assert_eq!(speed_key("sysbnch"), None);
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
