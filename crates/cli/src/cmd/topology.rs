//! `fairsim topology`: the sched domains Linux 6.12.117 builds for a machine.

use std::io::Write;

use fairsim_balance::{Features, Kernel};
use fairsim_topology::render::{render_summary, write_debugfs, write_dmesg, write_json};
use fairsim_topology::{check_build_memory, parse_cpusets, partition_sched_domains, BuildOptions};
use fairsim_workloads::run::DEFAULT_MEMORY_BUDGET;

use super::machine_args::{preset_listing, MachineArgs};
use crate::error::{invalid, CliError};

/// Output forms of `fairsim topology`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum TopologyFormat {
    /// A readable overview: level stacks per CPU set and one CPU's domains in full.
    Summary,
    /// The kernel's `sched_verbose` dump (`CPU0 attaching sched-domain(s): ...`), as
    /// dmesg shows it without timestamps.
    Dmesg,
    /// `/sys/kernel/debug/sched/domains/cpuN/domainM/*` as `path: value` lines.
    Debugfs,
    /// Everything, for scripts.
    Json,
}

/// Build the sched domains Linux 6.12.117 builds for a machine and print them.
///
/// The hierarchy follows kernel/sched/topology.c: the arch levels (x86: SMT, CLS, MC, PKG;
/// arm64: SMT, MC, PKG), NODE and one NUMA level per distinct distance, with degenerate
/// levels removed as `cpu_attach_domain` removes them. Group capacities are nominal (no IRQ
/// or RT pressure), so `cap=` appears where the kernel would print it for those values.
#[derive(Debug, clap::Args)]
pub(crate) struct TopologyArgs {
    #[command(flatten)]
    machine: MachineArgs,

    /// Output form.
    #[arg(long, value_enum, default_value = "summary")]
    format: TopologyFormat,

    /// CPU shown in full by `--format summary` (default 0).
    #[arg(long, value_name = "N")]
    cpu: Option<usize>,

    /// Scheduler features, as `fairsim run --features` takes them: the domains are built
    /// as that feature set needs them (ILB_SNAPSHOT, ILB_UTIL and ILB_FAST give every
    /// non-NUMA domain a `sched_domain_shared`, seed 000's patch 1/7, not only the LLC
    /// levels). `fairsim features` lists them.
    #[arg(long, value_name = "LIST")]
    features: Option<String>,

    /// The kernel whose features file --features writes to (default 6.12). The domains
    /// themselves are 6.12.117's for every kernel.
    #[arg(long, value_name = "VERSION")]
    kernel: Option<String>,

    /// Deprecated: `--features ILB_SNAPSHOT` builds seed 000's sched_domain_shared on
    /// every non-NUMA domain. Still builds it, with a note.
    #[arg(long, hide = true)]
    ilb_sd_share: bool,

    /// The `relax_domain_level=` boot parameter: domains at this level or above lose
    /// SD_BALANCE_WAKE and SD_BALANCE_NEWIDLE.
    #[arg(long, value_name = "LEVEL")]
    relax_domain_level: Option<u32>,

    /// Largest estimated memory for building the sched domains, in MiB (default 4096,
    /// as for `fairsim run`): a machine whose hierarchy would need more is refused
    /// before anything is built.
    #[arg(long, value_name = "MIB")]
    memory_budget: Option<u64>,

    /// An exclusive cpuset partition, repeatable: a CPU list in the kernel's cpulist
    /// format, e.g. `0-9,20-29`. The domains are built per partition, as
    /// `partition_sched_domains` builds them for cgroup v2 root partitions, with the CPUs
    /// none takes as the top cpuset's own partition; each partition is printed with its
    /// `root domain span:` line.
    #[arg(long = "cpuset", value_name = "LIST")]
    cpusets: Vec<String>,

    /// List the preset machines and exit.
    #[arg(long)]
    list_presets: bool,
}

/// Runs `fairsim topology`.
pub(crate) fn run(args: &TopologyArgs, out: &mut dyn Write) -> Result<(), CliError> {
    if args.list_presets {
        out.write_all(preset_listing().as_bytes())?;
        return Ok(());
    }
    // The other formats list every CPU: a --cpu would be dropped without a word.
    if args.cpu.is_some() && !matches!(args.format, TopologyFormat::Summary) {
        return Err(CliError::msg(
            "--cpu: only --format summary shows one CPU in full; allowed: --format summary, or leave --cpu out",
        ));
    }
    let cpu = args.cpu.unwrap_or(0);
    let machine = args.machine.load()?;
    if cpu >= machine.nr_cpus() {
        return Err(invalid(
            "--cpu",
            cpu,
            &format!("0 to {}", machine.nr_cpus() - 1),
        ));
    }
    let kernel = match &args.kernel {
        Some(t) => Kernel::parse(t).map_err(|e| CliError::msg(e.to_string()))?,
        None => Kernel::default(),
    };
    let features = match &args.features {
        Some(list) => Features::parse_for(kernel, list)?,
        None => kernel.features(),
    };
    if args.ilb_sd_share {
        eprintln!("fairsim: note: {}", super::features::ILB_SD_SHARE_NOTE);
    }
    let opts = BuildOptions {
        // A feature declared to change the domains sets them up itself.
        shared_all_non_numa: args.ilb_sd_share || features.shares_all_non_numa(),
        relax_domain_level: args.relax_domain_level,
    };
    let budget = match args.memory_budget {
        Some(0) => return Err(invalid("--memory-budget", 0, "a size in MiB above 0")),
        Some(mib) => mib.saturating_mul(1 << 20),
        None => DEFAULT_MEMORY_BUDGET,
    };
    let cpusets = parse_cpusets(machine.nr_cpus(), &args.cpusets, "--cpuset")?;
    // A partitioned build needs no more than the whole machine's, whose spans contain
    // every partition's at each level.
    check_build_memory(&machine, opts, budget)?;
    let sds = partition_sched_domains(&machine, opts, &cpusets)?;
    // The dmesg listing and the JSON grow with the square of the CPU count (2.4 GB of JSON
    // at 4096 CPUs), so every form but the summary is written as it is produced, in about
    // the memory of one CPU's part.
    match args.format {
        TopologyFormat::Summary => {
            out.write_all(render_summary(&machine, &sds, cpu).as_bytes())?;
        }
        TopologyFormat::Dmesg => write_dmesg(&sds, out)?,
        TopologyFormat::Debugfs => write_debugfs(&sds, out)?,
        TopologyFormat::Json => write_json(&sds, out)?,
    }
    Ok(())
}
