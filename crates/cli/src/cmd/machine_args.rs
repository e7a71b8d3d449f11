//! The machine-selection options every command that needs a machine shares:
//! `--topology`, `--smp` (with `--numa-distance`, `--numa-cpus`, `--capacity`, `--llc`),
//! `--machine FILE` and `--sysfs DIR`.

use std::path::PathBuf;

use fairsim_topology::source::{
    load_machine_file, load_sysfs, parse_llc, parse_spec, preset, SpecOptions, PRESETS,
};
use fairsim_topology::{Arch, Machine};

use crate::error::{invalid, CliError};

/// The preset used when no machine option is given.
pub const DEFAULT_PRESET: &str = "numa-2s4c2t";

/// How to describe the machine. At most one of `--topology`, `--smp`, `--machine` and
/// `--sysfs`; with none, the `numa-2s4c2t` preset (2 sockets x 4 cores x 2 threads).
#[derive(Debug, Clone, clap::Args)]
pub struct MachineArgs {
    /// A named machine (see `fairsim topology --list-presets`), e.g. `spr-2s56c2t`.
    #[arg(long, value_name = "PRESET", conflicts_with_all = ["smp", "machine", "sysfs"])]
    pub topology: Option<String>,

    /// A qemu-style CPU layout, e.g. `sockets=2,cores=56,threads=2` (dies=, clusters= too).
    #[arg(long, value_name = "SPEC", conflicts_with_all = ["machine", "sysfs"])]
    pub smp: Option<String>,

    /// NUMA distance matrix for `--smp`: rows split by `;`, e.g. `10,21;21,10`.
    /// Nodes get an equal, contiguous share of the CPUs unless `--numa-cpus` says otherwise.
    #[arg(long, value_name = "MATRIX", requires = "smp")]
    pub numa_distance: Option<String>,

    /// CPUs of each node for `--smp`, split by `;`, e.g. `0-55,112-167;56-111,168-223`.
    #[arg(long, value_name = "LISTS", requires = "numa_distance")]
    pub numa_cpus: Option<String>,

    /// Raw CPU capacities for `--smp` (capacity-dmips-mhz style), e.g. `0-1:1441,2-4:606`;
    /// normalised so the biggest CPU gets 1024.
    #[arg(long, value_name = "LIST:RAW,...", requires = "smp")]
    pub capacity: Option<String>,

    /// x86 ITMT core priorities for `--smp`, e.g. `0-3:60,4-15:40`: turns on
    /// `sysctl_sched_itmt_enabled`, so CLS, MC and PKG pack tasks onto higher-priority CPUs
    /// (`SD_ASYM_PACKING`), as on parts with Turbo Boost Max 3.0 or hybrid cores.
    #[arg(long, value_name = "LIST:PRIO,...", requires = "smp")]
    pub itmt: Option<String>,

    /// Where the last-level cache sits for `--smp`: core, cluster, die or package
    /// (default: die on x86, cluster on arm64).
    #[arg(long, value_name = "SCOPE", requires = "smp")]
    pub llc: Option<String>,

    /// Architecture whose topology levels apply to `--smp` and `--sysfs`: x86 or arm64.
    #[arg(long, value_name = "ARCH", default_value = "x86")]
    pub arch: String,

    /// A machine file: fairsim's TOML/JSON schema, or a ground-truth `topology.json`.
    #[arg(long, value_name = "FILE", conflicts_with = "sysfs")]
    pub machine: Option<PathBuf>,

    /// A sysfs tree to describe, e.g. `/sys` for this host.
    #[arg(long, value_name = "DIR")]
    pub sysfs: Option<PathBuf>,
}

impl MachineArgs {
    /// Builds the machine these options describe.
    pub fn load(&self) -> Result<Machine, CliError> {
        let arch =
            Arch::parse(&self.arch).ok_or_else(|| invalid("--arch", &self.arch, "x86 or arm64"))?;
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
            return Ok(load_machine_file(path)?);
        }
        if let Some(dir) = &self.sysfs {
            return Ok(load_sysfs(dir, arch)?);
        }
        Ok(preset(DEFAULT_PRESET)?)
    }
}

/// One line per preset, for `--list-presets`.
pub fn preset_listing() -> String {
    let width = PRESETS.iter().map(|(n, _)| n.len()).max().unwrap_or(0);
    PRESETS
        .iter()
        .map(|(name, desc)| format!("{name:<width$}  {desc}\n"))
        .collect()
}
