//! The machine-model options of `fairsim run` (and so of `compare` and `sweep`): `--costs`,
//! the named kernel-overhead cost table that `--cost` overrides apply to, and `--speed`,
//! the CPUs' speeds for a workload kind apart from their capacities. Both resolve against
//! the scenario file and the machine: an option beats the scenario's key, which beats what
//! the machine (a preset or a machine file) says.

use fairsim_engine::speed::{speed_key, SPEED_KINDS};
use fairsim_engine::CostTableName;
use fairsim_topology::{Machine, SpeedTable};

use crate::error::{invalid, CliError};

/// What `--speed` takes besides its entries: dropping the machine's table.
const SPEED_NONE: &str = "none";

/// The cost table a run starts from: `--costs`, else the scenario's `costs`, else the
/// machine's own ([`CostTableName::of_machine`]), else `x86-2020s`.
pub(crate) fn resolve_costs(
    option: Option<&String>,
    scenario: Option<&String>,
    machine: &Machine,
    machine_source: &str,
) -> Result<CostTableName, CliError> {
    let given = option
        .map(|s| ("--costs", s))
        .or_else(|| scenario.map(|s| ("scenario key costs", s)));
    match given {
        Some((field, name)) => CostTableName::parse(name).ok_or_else(|| {
            invalid(
                field,
                name,
                &format!(
                    "{}; per-constant overrides go to --cost NAME=DURATION",
                    CostTableName::NAMES
                ),
            )
        }),
        None => Ok(CostTableName::of_machine(machine, machine_source)?),
    }
}

/// Applies the scenario's `speed` entries, then `--speed`'s, to the machine's speed
/// table: each `KIND=LIST:SPEED,...` replaces the table's entry for its kind (under
/// whichever alias the table wrote it), and `none` drops every entry given so far, the
/// machine's included, so that the run's work goes at capacity.
pub(crate) fn apply_speed(
    machine: &mut Machine,
    scenario: &[String],
    option: &[String],
) -> Result<(), CliError> {
    let entries = scenario
        .iter()
        .map(|s| ("scenario key speed", s))
        .chain(option.iter().map(|s| ("--speed", s)));
    for (field, spec) in entries {
        if spec.trim() == SPEED_NONE {
            machine.speed.clear();
            continue;
        }
        let (kind, speeds) = SpeedTable::parse_option(spec, machine.nr_cpus(), field)?;
        let Some(key) = speed_key(&kind) else {
            return Err(invalid(field, &kind, &format!("{SPEED_KINDS}; or none")));
        };
        let same: Vec<String> = machine
            .speed
            .iter()
            .filter(|(k, _)| speed_key(k) == Some(key))
            .map(|(k, _)| k.to_string())
            .collect();
        for k in same {
            machine.speed.remove(&k);
        }
        machine.speed.insert(key, speeds);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tc2() -> Machine {
        fairsim_topology::source::preset("tc2").unwrap()
    }

    #[test]
    fn the_option_beats_the_scenario_which_beats_the_machine() {
        let m = tc2();
        let arm = "arm-2013".to_string();
        let x86 = "x86-2020s".to_string();
        assert_eq!(
            resolve_costs(None, None, &m, "t").unwrap(),
            CostTableName::Arm2013
        );
        assert_eq!(
            resolve_costs(None, Some(&x86), &m, "t").unwrap(),
            CostTableName::X86_2020s
        );
        assert_eq!(
            resolve_costs(Some(&arm), Some(&x86), &m, "t").unwrap(),
            CostTableName::Arm2013
        );
        // CliError shows its text through Debug only; the text is what is checked.
        let e = format!(
            "{:?}",
            resolve_costs(Some(&"wakeup=1us".to_string()), None, &m, "t").unwrap_err()
        );
        assert!(e.contains("--costs") && e.contains("--cost NAME="), "{e}");
    }

    #[test]
    fn speed_entries_replace_and_none_clears() {
        let mut m = tc2();
        apply_speed(&mut m, &[], &["sysbench-cpu=0-4:700".into()]).unwrap();
        assert_eq!(m.speed.get("sysbench"), Some(&[700; 5][..]));
        assert_eq!(m.speed.iter().count(), 1);
        apply_speed(
            &mut m,
            &["hackbench=0-4:600".into()],
            &["none".into(), "*=0-4:512".into()],
        )
        .unwrap();
        assert_eq!(m.speed.iter().count(), 1);
        assert_eq!(m.speed.get("*"), Some(&[512; 5][..]));
        for bad in ["sysbnch=0-4:1", "sysbench=0-3:1", "sysbench"] {
            let e = format!(
                "{:?}",
                apply_speed(&mut tc2(), &[], &[bad.into()]).unwrap_err()
            );
            assert!(e.contains("\"--speed") && e.contains("allowed"), "{e}");
        }
    }
}
