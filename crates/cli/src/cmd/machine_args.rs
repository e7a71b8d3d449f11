//! The machine-selection options every command that needs a machine shares:
//! `--topology`, `--smp` (with `--numa-distance`, `--numa-cpus`, `--capacity`, `--llc`),
//! `--machine FILE` and `--sysfs DIR`.

use std::path::PathBuf;

use fairsim_topology::source::{
    load_machine_file, load_sysfs, parse_llc, parse_spec, preset, SpecOptions, PRESETS,
};
use fairsim_topology::{Arch, Machine, TopologyError};

use crate::error::{invalid, CliError};

/// The preset used when no machine option is given.
pub(crate) const DEFAULT_PRESET: &str = "numa-2s4c2t";

/// How to describe the machine. At most one of `--topology`, `--smp`, `--machine` and
/// `--sysfs`; with none, the `numa-2s4c2t` preset (2 sockets x 4 cores x 2 threads).
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct MachineArgs {
    /// A named machine (see `fairsim topology --list-presets`), e.g. `spr-2s56c2t`.
    #[arg(long, value_name = "PRESET", conflicts_with_all = ["smp", "machine", "sysfs"])]
    pub topology: Option<String>,

    /// A qemu-style CPU layout, e.g. `sockets=2,cores=56,threads=2` (dies=, clusters= too).
    #[arg(long, value_name = "SPEC", conflicts_with_all = ["machine", "sysfs"])]
    pub smp: Option<String>,

    /// NUMA distance matrix for `--smp`: rows split by `;`, e.g. `10,21;21,10`.
    /// Nodes get an equal, contiguous share of the CPUs unless `--numa-cpus` says otherwise.
    #[arg(long, value_name = "MATRIX")]
    pub numa_distance: Option<String>,

    /// CPUs of each node for `--smp`, split by `;`, e.g. `0-55,112-167;56-111,168-223`.
    #[arg(long, value_name = "LISTS")]
    pub numa_cpus: Option<String>,

    /// Raw CPU capacities for `--smp` (capacity-dmips-mhz style), e.g. `0-1:1441,2-4:606`;
    /// normalised so the biggest CPU gets 1024.
    #[arg(long, value_name = "LIST:RAW,...")]
    pub capacity: Option<String>,

    /// x86 ITMT core priorities for `--smp`, e.g. `0-3:60,4-15:40`: turns on
    /// `sysctl_sched_itmt_enabled`, so CLS, MC and PKG pack tasks onto higher-priority CPUs
    /// (`SD_ASYM_PACKING`), as on parts with Turbo Boost Max 3.0 or hybrid cores.
    #[arg(long, value_name = "LIST:PRIO,...")]
    pub itmt: Option<String>,

    /// Where the last-level cache sits for `--smp`: core, cluster, die or package
    /// (default: die on x86, cluster on arm64).
    #[arg(long, value_name = "SCOPE")]
    pub llc: Option<String>,

    /// Architecture whose topology levels apply to `--smp` and `--sysfs`: x86 or arm64
    /// (default x86).
    #[arg(long, value_name = "ARCH")]
    pub arch: Option<String>,

    /// A machine file: fairsim's TOML/JSON schema, or a ground-truth `topology.json`.
    #[arg(long, value_name = "FILE", conflicts_with = "sysfs")]
    pub machine: Option<PathBuf>,

    /// A sysfs tree to describe, e.g. `/sys` for this host.
    #[arg(long, value_name = "DIR")]
    pub sysfs: Option<PathBuf>,
}

impl MachineArgs {
    /// Builds the machine these options describe, and checks the cost table and the
    /// workload kinds it names (a machine file's `costs` and `[speed]`), which only the
    /// engine knows, so that every command refuses a file naming ones that do not exist.
    pub(crate) fn load(&self) -> Result<Machine, CliError> {
        let m = self.load_unchecked()?;
        fairsim_workloads::check_machine(&m, &self.source())?;
        Ok(m)
    }

    fn load_unchecked(&self) -> Result<Machine, CliError> {
        self.refuse_unused()?;
        let arch = match &self.arch {
            Some(a) => Arch::parse(a).ok_or_else(|| invalid("--arch", a, "x86 or arm64"))?,
            None => Arch::X86,
        };
        if let Some(name) = &self.topology {
            return Ok(preset(name)?);
        }
        if let Some(smp) = &self.smp {
            let llc = match &self.llc {
                Some(s) => Some(
                    parse_llc(s)
                        .ok_or_else(|| invalid("--llc", s, "core, cluster, die or package"))?,
                ),
                None => None,
            };
            let opts = SpecOptions {
                smp: smp.clone(),
                numa_distance: self.numa_distance.clone(),
                numa_cpus: self.numa_cpus.clone(),
                arch,
                capacity: self.capacity.clone(),
                llc,
                itmt: self.itmt.clone(),
            };
            return Ok(parse_spec(&opts)?);
        }
        if let Some(path) = &self.machine {
            return load_machine_file(path).map_err(|e| match e {
                // A scenario file (such as validation/host/host.toml) describes its
                // machine with scenario keys; say so rather than report the first key
                // that the machine schema reads differently.
                TopologyError::Io { .. } => name_option("--machine", e),
                _ if fairsim_workloads::scenario::Scenario::load(path).is_ok() => CliError::msg(format!(
                    "--machine {}: this is a scenario file, not a machine file; run it as `fairsim run {}`",
                    path.display(),
                    path.display()
                )),
                e => name_option("--machine", e),
            });
        }
        if let Some(dir) = &self.sysfs {
            return load_sysfs(dir, arch).map_err(|e| name_option("--sysfs", e));
        }
        Ok(preset(DEFAULT_PRESET)?)
    }
}

/// Puts the option in front of an error about the path it gave (a read error names only
/// the path); errors about the contents already name their field.
fn name_option(option: &str, err: TopologyError) -> CliError {
    match err {
        TopologyError::Io { .. } => CliError::msg(format!("{option} {err}")),
        other => other.into(),
    }
}

impl MachineArgs {
    /// The option that names the machine, as the user would write it.
    pub(crate) fn source(&self) -> String {
        if let Some(name) = &self.topology {
            format!("--topology {name}")
        } else if let Some(smp) = &self.smp {
            format!("--smp {smp}")
        } else if let Some(path) = &self.machine {
            format!("--machine {}", path.display())
        } else if let Some(dir) = &self.sysfs {
            format!("--sysfs {}", dir.display())
        } else {
            format!("the default machine ({DEFAULT_PRESET})")
        }
    }

    /// Refuses the `--smp` modifiers next to a machine that is already complete (a preset,
    /// a file, a sysfs tree, or the default), where they would otherwise be dropped
    /// without a word, and `--arch` where the machine carries its own architecture.
    fn refuse_unused(&self) -> Result<(), CliError> {
        if self.smp.is_none() {
            let modifiers = [
                ("--numa-distance", self.numa_distance.is_some()),
                ("--numa-cpus", self.numa_cpus.is_some()),
                ("--capacity", self.capacity.is_some()),
                ("--itmt", self.itmt.is_some()),
                ("--llc", self.llc.is_some()),
            ];
            if let Some((name, _)) = modifiers.iter().find(|(_, given)| *given) {
                return Err(CliError::msg(format!(
                    "{name}: applies only to --smp, not to {}; allowed: --smp with {name}, or \
                     a machine file that sets it",
                    self.source()
                )));
            }
        } else if self.numa_cpus.is_some() && self.numa_distance.is_none() {
            return Err(CliError::msg(
                "--numa-cpus: needs --numa-distance; allowed: --numa-distance MATRIX with \
                 --numa-cpus LISTS",
            ));
        }
        if self.arch.is_some() && (self.topology.is_some() || self.machine.is_some()) {
            return Err(CliError::msg(format!(
                "--arch: applies only to --smp and --sysfs, not to {} (which sets its own \
                 architecture); allowed: drop --arch",
                self.source()
            )));
        }
        Ok(())
    }
}

/// One line per preset, for `--list-presets`.
pub(crate) fn preset_listing() -> String {
    let width = PRESETS.iter().map(|(n, _)| n.len()).max().unwrap_or(0);
    PRESETS
        .iter()
        .map(|(name, desc)| format!("{name:<width$}  {desc}\n"))
        .collect()
}
