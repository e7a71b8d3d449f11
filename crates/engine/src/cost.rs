//! The kernel-overhead cost table: how much CPU time each piece of scheduler and kernel
//! work takes on the CPU that does it.
//!
//! Every constant models a cost that the real kernel pays on some CPU and that matters for
//! the experiments fairsim reproduces. Its value depends on the hardware generation, so
//! there is one table per platform, each in [`crate::cost_tables`] with the public
//! measurement behind every value, none fitted to a seed's result:
//!
//! - `x86-2020s` ([`crate::cost_tables::x86_2020s`]): a current x86 server, the default;
//! - `arm-2013` ([`crate::cost_tables::arm_2013`]): an ARMv7 big.LITTLE board of 2013
//!   (TC2's Cortex-A15 at 1 GHz), the default of the `tc2` presets.
//!
//! A run starts from a named table ([`CostTableName`]: `--costs NAME`, a scenario's or a
//! machine file's `costs = "NAME"`, else the machine's own, else `x86-2020s`) and every
//! constant can then be overridden from the command line (`--cost name=value`, e.g.
//! `--cost context_switch=2us`) and from a scenario file's `[cost]` table, so that a user
//! can check how sensitive a conclusion is to them.
//!
//! Charged time makes the CPU busy in "kernel" state: the task it runs makes no progress
//! meanwhile, and the time is counted as overhead, not as task time.

use fairsim_topology::Machine;

use crate::error::EngineError;

mod table;

pub use table::{CostError, CostTable};

impl Default for CostTable {
    fn default() -> Self {
        crate::cost_tables::x86_2020s::TABLE
    }
}

/// The cost tables fairsim ships, by the name `--costs` and the `costs` keys take.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub enum CostTableName {
    /// A current x86 server ([`crate::cost_tables::x86_2020s`]), the default.
    #[default]
    X86_2020s,
    /// An ARMv7 big.LITTLE board of 2013, TC2's Cortex-A15 at 1 GHz
    /// ([`crate::cost_tables::arm_2013`]).
    Arm2013,
}

impl CostTableName {
    /// Every table, in the order `--help` lists them.
    pub const ALL: [CostTableName; 2] = [CostTableName::X86_2020s, CostTableName::Arm2013];

    /// What `--costs` accepts, for error messages.
    pub const NAMES: &'static str = "x86-2020s (a current x86 server) or arm-2013 \
         (an ARMv7 big.LITTLE board of 2013, TC2)";

    /// The name in files, outputs and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            CostTableName::X86_2020s => "x86-2020s",
            CostTableName::Arm2013 => "arm-2013",
        }
    }

    /// Parses a table's name.
    pub fn parse(s: &str) -> Option<CostTableName> {
        CostTableName::ALL
            .into_iter()
            .find(|t| t.name() == s.trim())
    }

    /// The table's values.
    pub fn table(self) -> CostTable {
        match self {
            CostTableName::X86_2020s => crate::cost_tables::x86_2020s::TABLE,
            CostTableName::Arm2013 => crate::cost_tables::arm_2013::TABLE,
        }
    }

    /// The table a machine names (its `costs`, from a preset or a machine file), or the
    /// default when it names none. An unknown name is an error naming the machine's
    /// `costs` field after `source` (where the machine came from, e.g. `--machine m.toml`)
    /// and the tables that exist.
    pub fn of_machine(m: &Machine, source: &str) -> Result<CostTableName, EngineError> {
        match &m.costs {
            None => Ok(CostTableName::default()),
            Some(name) => CostTableName::parse(name).ok_or_else(|| EngineError::Invalid {
                field: format!("{source}: costs"),
                got: name.clone(),
                allowed: CostTableName::NAMES.to_string(),
            }),
        }
    }
}

impl std::fmt::Display for CostTableName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_is_settable_and_readable() {
        let mut c = CostTable::default();
        for (i, name) in CostTable::NAMES.iter().enumerate() {
            c.apply(&format!("{name}={}ns", i + 1)).unwrap();
            assert_eq!(c.get(name), Some(i as u64 + 1));
        }
    }

    #[test]
    fn tables_are_selected_by_name_and_overrides_go_on_top() {
        assert_eq!(
            CostTableName::parse("x86-2020s"),
            Some(CostTableName::X86_2020s)
        );
        assert_eq!(
            CostTableName::parse("arm-2013"),
            Some(CostTableName::Arm2013)
        );
        assert_eq!(CostTableName::parse("arm"), None);
        assert_eq!(CostTableName::default().table(), CostTable::default());
        for t in CostTableName::ALL {
            assert_eq!(CostTableName::parse(t.name()), Some(t));
            assert!(CostTableName::NAMES.contains(t.name()));
        }
        let arm = CostTableName::Arm2013.table();
        assert_ne!(arm, CostTable::default());
        let mut c = arm;
        c.apply("context_switch=2us").unwrap();
        assert_eq!(c.context_switch, 2_000);
        // Every other constant keeps the named table's value, not the default's.
        for name in CostTable::NAMES.iter().filter(|n| **n != "context_switch") {
            assert_eq!(c.get(name), arm.get(name), "{name}");
        }
    }

    #[test]
    fn a_machine_names_its_table() {
        let mut m = fairsim_topology::source::preset("numa-2s4c2t").unwrap();
        assert_eq!(
            CostTableName::of_machine(&m, "t"),
            Ok(CostTableName::X86_2020s)
        );
        let tc2 = fairsim_topology::source::preset("tc2").unwrap();
        assert_eq!(
            CostTableName::of_machine(&tc2, "t"),
            Ok(CostTableName::Arm2013)
        );
        m.costs = Some("vax-1977".into());
        let e = CostTableName::of_machine(&m, "t").unwrap_err().to_string();
        assert!(
            e.contains("costs") && e.contains("vax-1977") && e.contains("arm-2013"),
            "{e}"
        );
    }

    #[test]
    fn overrides_take_units_and_reject_junk() {
        let mut c = CostTable::default();
        c.apply("context_switch=2us").unwrap();
        assert_eq!(c.context_switch, 2_000);
        assert!(matches!(c.apply("nope=1"), Err(CostError::Unknown { .. })));
        assert!(matches!(c.apply("wakeup"), Err(CostError::Syntax { .. })));
        assert!(matches!(
            c.apply("wakeup=-1us"),
            Err(CostError::Value { .. })
        ));
        assert!(matches!(c.apply("wakeup=2s"), Err(CostError::Value { .. })));
    }
}
