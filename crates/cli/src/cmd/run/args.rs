//! `fairsim run`'s options: the clap declaration that `run`, `compare` and every point of
//! `sweep` parse, so that one command line means the same run in all three.

use std::path::PathBuf;

use super::super::machine_args::MachineArgs;

/// Arguments of `fairsim run`.
#[derive(Debug, clap::Args)]
#[command(
    long_about = "Run workloads (schbench, hackbench, nanosleep, sysbench-cpu) on an emulated \
machine in virtual time, with Linux 6.12.117's fair-class scheduler (or, with --kernel, the \
fair class of an older kernel a seed posting was measured on: 6.5, 4.16, 4.15, 4.5 or 3.9), and \
print the tools' own output plus a scheduler summary. Without arguments, a built-in scenario \
runs and is explained."
)]
pub(crate) struct RunArgs {
    #[command(flatten)]
    pub(crate) machine: MachineArgs,

    /// A scenario TOML file with the same settings (command-line options override it).
    #[arg(value_name = "SCENARIO")]
    pub(crate) scenario: Option<PathBuf>,

    /// A workload, repeatable: `NAME:key=value,...`, keys being the tool's own options,
    /// e.g. `schbench:version=2016,m=6,t=24,c=30ms,s=30ms` (seed 001's run: the 2016
    /// binary ignores `m`, so 2 message threads x 24 workers), `hackbench:g=4,l=1000,pipe`,
    /// `nanosleep:tasks=224,sleep=1us`, `sysbench-cpu:threads=5`. Or the tool's own command
    /// line, quoted, read with that tool's option grammar and defaults: `'schbench -m 2
    /// -t 4 -c 30000 -s 30000 -r 30'`, `'schbench@2016 ...'` (seed 001's binary, which
    /// ignores -m), `'hackbench -g 4 -l 1000 -p'`, `'perf bench sched messaging -g 8 -l
    /// 5000 -p -t'`, `'sysbench --test=cpu --num-threads=2 --max-requests=1000 run'`,
    /// `'sysbench cpu --threads=2 --events=1000 run'`, `'cyclictest -a -t 2 -n -D 10'`,
    /// `'netperf -t TCP_RR -l 30 -- -r 64,1024'`, `'rt-app FILE.json'`, `'tbench -t 30 4'`,
    /// optionally after `taskset -c LIST`, `uclampset -m MIN -M MAX`, `nice -n N`,
    /// `chrt -b|-i 0` and `cgexec -g cpu:/PATH` (the keys `cpus=`, `uclamp=MIN..MAX`,
    /// `nice=N`, `policy=batch|idle` and `cgroup=/PATH` in the key form). A
    /// specification is a command line when a
    /// space comes before any `:` (and a bare `schbench@2016`); options fairsim does not
    /// model are refused by name.
    #[arg(long = "workload", short = 'w', value_name = "SPEC")]
    pub(crate) workloads: Vec<String>,

    /// An exclusive cpuset partition, repeatable: a CPU list in the kernel's cpulist
    /// format, e.g. `0-9,20-29`. Each becomes a root partition as cgroup v2's
    /// `cpuset.cpus.partition = root` makes it: sched domains of its own and a root
    /// domain balanced apart from the others; the CPUs none takes stay with the top
    /// cpuset and form one more. Replaces a scenario's `cpusets`. The shorthand of
    /// `--cgroup '/cpuset-N:cpuset.cpus=LIST,cpuset.cpus.partition=root'`, a group no
    /// task joins.
    #[arg(long = "cpuset", value_name = "LIST")]
    pub(crate) cpusets: Vec<String>,

    /// A cgroup (cgroup v2's cpu and cpuset controllers), repeatable: `/PATH` to create
    /// it, and `/PATH:KEY=V,...` to write its files: `cpu.weight=N` (1..10000, default
    /// 100) or `cpu.weight.nice=N` (-20..19), `cpu.idle=0|1`, `cpu.max='QUOTA_US
    /// [PERIOD_US]'` (or `max`; period 100000 by default), `cpu.max.burst=US`,
    /// `cpuset.cpus=LIST` (its tasks' CPUs) and `cpuset.cpus.partition=root|member`
    /// (`root`: an exclusive partition, as --cpuset), e.g.
    /// `--cgroup '/svc:cpu.weight=200,cpu.max=50000 100000'`. Missing parents are
    /// created as `mkdir -p` would; a workload joins a group with its `cgroup=/PATH` key
    /// (rt-app files with their tasks' `taskgroup`). A group with `cpuset.*` files only
    /// is no task group. Other files are refused. Task groups: --kernel 6.12 only.
    /// Added to a scenario's [cgroup."/PATH"] tables.
    #[arg(long = "cgroup", value_name = "/PATH[:KEY=V,...]")]
    pub(crate) cgroups: Vec<String>,

    /// The kernel whose scheduler runs, whole: 6.12 (6.12.117, EEVDF; the default), or
    /// the CFS kernel of a seed posting: 6.5 (seed 000), 4.16 (seed 003; its util_est
    /// patch is the feature UTIL_EST, off by default), 4.15 (seed 004; its SD_NUMA patch
    /// is FIND_IDLEST_NUMA, off), 4.5 (seed 001; its select_idle_sibling patch is
    /// SIS_FIRST_IDLE, off), 3.9 (seed 002; LB_RUNNABLE_AVG, LB_FORCE_BETTER_CPU and
    /// LB_IDLE_PULL_MULTI). Each brings its own fair class (CFS's vruntime, slices, sleeper
    /// credit, wakeup granularity and buddies), select_task_rq_fair, load balancer
    /// (4.16 runs 4.15's), features file (--features writes apply to it), tunables,
    /// util_est form and schedstat version (15 before 6.6). PELT stays 6.12's; HZ, idle
    /// states and costs stay as given.
    #[arg(long, value_name = "VERSION")]
    pub(crate) kernel: Option<String>,

    /// Scheduler features, written as to /sys/kernel/debug/sched/features, comma
    /// separated: e.g. `NO_SIS_UTIL,ILB_SNAPSHOT,ILB_FAST`, applied to the --kernel's
    /// defaults (only the features its features file lists can be written). `fairsim
    /// features --kernel K` lists them with their defaults, origins and what each needs;
    /// a feature that changes the sched domains (ILB_*) sets them up itself.
    #[arg(long, value_name = "LIST")]
    pub(crate) features: Option<String>,

    /// Emulated run length, with its unit (fairsim's own times take no bare numbers), e.g.
    /// `30s`, `500ms` (default: schbench's -r or 30s; 5s for
    /// nanosleep; until done, at most 1h, for hackbench and sysbench-cpu).
    #[arg(long, value_name = "D", allow_hyphen_values = true)]
    pub(crate) duration: Option<String>,

    /// Seed of the run's random streams.
    #[arg(long, value_name = "N")]
    pub(crate) seed: Option<u64>,

    /// CONFIG_HZ: 100, 250, 300 or 1000.
    #[arg(long, value_name = "HZ")]
    pub(crate) hz: Option<u32>,

    /// The util_est form the scheduler runs: `6.12` (the single value of v6.8+, the
    /// default with --kernel 6.12), `legacy-nofastup` (the {enqueued, ewma} form as v4.17
    /// merged it, updated only when util_avg changed: UTIL_AVG_UNCHANGED; the default of
    /// the older kernels, 6.5 adding its UTIL_EST_FASTUP feature), `legacy-fastup` (the
    /// same with v5.9's UTIL_EST_FASTUP, as v5.9-v6.7 ran it; `legacy` says the same), or
    /// `off` (NO_UTIL_EST; the only form of 4.15, 4.5 and 3.9, which had no util_est).
    #[arg(long, value_name = "FORM")]
    pub(crate) util_est: Option<String>,

    /// The kernel-overhead cost table the run starts from: x86-2020s (a current x86
    /// server) or arm-2013 (an ARMv7 big.LITTLE board of 2013, TC2). Default: the
    /// machine's own (arm-2013 for the tc2 presets), else x86-2020s. `--cost` overrides
    /// apply on top.
    #[arg(long = "costs", value_name = "TABLE")]
    pub(crate) cost_table: Option<String>,

    /// Kernel-overhead cost override, repeatable: `NAME=DURATION`, e.g.
    /// `context_switch=2us`, with the unit (names: see the engine's cost table), on top
    /// of the `--costs` table.
    #[arg(long = "cost", value_name = "NAME=D")]
    pub(crate) costs: Vec<String>,

    /// A CPU speed for one workload kind apart from the capacity the scheduler sees,
    /// repeatable: `KIND=LIST:SPEED,...` with every CPU once and speeds on the capacity
    /// scale (1..1024), e.g. `sysbench=0-1:1024,2-4:504`. KIND is schbench, hackbench,
    /// nanosleep, sysbench, rtapp or * (every workload without its own entry). It replaces
    /// the machine's entry for the kind (tc2 has sysbench's); `none` drops the machine's
    /// table, so that all work runs at capacity.
    #[arg(long = "speed", value_name = "KIND=LIST:SPEED,...")]
    pub(crate) speeds: Vec<String>,

    /// Timer slack of every task (`timer_slack_ns`), default 50us.
    #[arg(long, value_name = "D", allow_hyphen_values = true)]
    pub(crate) timer_slack: Option<String>,

    /// The CPU the workloads are launched from (where the shell that starts them runs):
    /// a CPU number (default 0) or `random`, a CPU drawn from the seed for each workload,
    /// as a shell runs wherever its last wakeup put it. Kernels whose fork placement
    /// depends on the parent's CPU then differ from run to run, as on a real machine.
    #[arg(long, value_name = "CPU")]
    pub(crate) launch_cpu: Option<String>,

    /// Where a quiet hrtimer fires in [d, d+slack]: hard (d+slack, the kernel on an
    /// otherwise quiet CPU), mid or soft (d).
    #[arg(long, value_name = "POINT")]
    pub(crate) timer_expiry: Option<String>,

    /// The cpuidle governor: menu (the default on bare metal: it predicts the idle time
    /// and picks the deepest state that fits; the tick keeps running when the prediction is
    /// under a tick), haltpoll (KVM guests: poll, then halt; the default with the haltpoll
    /// states), teo (the timer events oriented governor: it picks the state from how often
    /// recent idle periods ended before the next timer), or none (no cpuidle driver, as in a
    /// qemu guest: the tick always stops
    /// and a wakeup pays the flat idle_exit cost). teo came in Linux 5.1 and haltpoll in
    /// 5.4: with an older --kernel, menu or none.
    #[arg(long, value_name = "GOVERNOR")]
    pub(crate) cpuidle: Option<String>,

    /// The CPU idle states: a preset (the kernel driver's table: bdx for 2s24c2t, ivt for
    /// e5-2690v2, spr for spr-2s56c2t, tc2, haltpoll, flat, ...) or a list
    /// `NAME:EXIT:RESIDENCY,...` (e.g. `C1:2us:2us,C1E:10us:20us,C6:133us:600us`), with
    /// `,no-STATE` to disable one (`spr,no-C6`). Default: the machine's table, else `flat`
    /// (POLL, then C1 with the idle_exit cost). Each wakeup of an idle CPU pays its
    /// state's exit latency.
    #[arg(long, value_name = "STATES")]
    pub(crate) idle_states: Option<String>,

    /// The cpufreq governor of a machine with frequency domains (rk3399, or a machine
    /// file's [[cpufreq]] tables): schedutil (the default; schedutil:rate_limit_us=N
    /// overrides its rate limit, 1.5 transition latencies by default), performance,
    /// powersave, or userspace:KHZ (a fixed frequency written to every policy's
    /// scaling_setspeed, as scaling_min_freq = scaling_max_freq pins it). Refused on a
    /// machine without cpufreq, whose CPUs always run at full frequency. schedutil came in
    /// Linux 4.7: with --kernel 4.5 or 3.9 such a machine needs one of the
    /// others.
    #[arg(long, value_name = "GOVERNOR")]
    pub(crate) governor: Option<String>,

    /// Run-to-run noise: on (default: kernel-work durations, timer expiry within the
    /// slack and launch phase drawn from the seed's streams, spread 0.1), off (exact
    /// cost-table means, every seed alike when nothing else is random) or a spread in
    /// 0..1 such as 0.2.
    #[arg(long, value_name = "on|off|SPREAD")]
    pub(crate) noise: Option<String>,

    /// Discard everything before this virtual time: schedstat counters, latencies, loop
    /// counts and overhead shares cover [warmup, end), as `schedstat.py -i` started after
    /// launch does. Must be shorter than the run.
    #[arg(long, value_name = "D", allow_hyphen_values = true)]
    pub(crate) warmup: Option<String>,

    /// Print a `perf report --children`-style profile: kernel time by function (with
    /// callers), task time and idle time, as shares of all CPU time and of busy time.
    #[arg(long)]
    pub(crate) profile: bool,

    /// Deprecated: a feature whose declaration changes the domains (ILB_SNAPSHOT,
    /// ILB_UTIL, ILB_FAST) gives every non-NUMA domain its sched_domain_shared (seed 000
    /// patch 1/7) by itself. Still builds it, with a note.
    #[arg(long, hide = true)]
    pub(crate) ilb_sd_share: bool,

    /// A sysctl write, repeatable: `kernel.sched_NAME=VALUE`, as `sysctl -w` takes it,
    /// for the --kernel's /proc/sys/kernel tunables (up to 5.12: sched_latency_ns,
    /// sched_min_granularity_ns, sched_wakeup_granularity_ns, sched_migration_cost_ns,
    /// sched_nr_migrate, sched_tunable_scaling, sched_child_runs_first; 6.5:
    /// sched_child_runs_first, sched_energy_aware and the sched_util_clamp_* three; 6.12:
    /// sched_energy_aware and sched_util_clamp_*; every era: sched_autogroup_enabled, 1
    /// on 6.12 only, and sched_cfs_bandwidth_slice_us, read by 6.12's cpu.max groups),
    /// checked against the kernel's ranges and applied through its handlers in the
    /// order given.
    #[arg(long = "sysctl", value_name = "kernel.sched_NAME=V")]
    pub(crate) sysctls: Vec<String>,

    /// A write to /sys/kernel/debug/sched/NAME, repeatable: `NAME=VALUE`, for the tunables
    /// the --kernel kept in debugfs (5.13-6.5: latency_ns, min_granularity_ns,
    /// wakeup_granularity_ns, migration_cost_ns, nr_migrate, tunable_scaling; 6.6 on:
    /// base_slice_ns, migration_cost_ns, nr_migrate, tunable_scaling).
    #[arg(long = "debugfs", value_name = "NAME=V")]
    pub(crate) debugfs: Vec<String>,

    /// Write /proc/schedstat as it reads at the end of the run to FILE (with --warmup, the
    /// counters since the window opened, as a `schedstat.py -i` delta shows them).
    #[arg(long, value_name = "FILE")]
    pub(crate) schedstat: Option<PathBuf>,

    /// Add seed 000's `lb_sg_scan` column (patch 7/7) to every idle-type block of the
    /// schedstat file.
    #[arg(long)]
    pub(crate) schedstat_sg_scan: bool,

    /// schedstat layout: 15, 16 or 17 (default: the --kernel's, 16 for 6.12 and 15 for
    /// the older kernels).
    #[arg(long, value_name = "V")]
    pub(crate) schedstat_version: Option<String>,

    /// Write the run's results as JSON to FILE.
    #[arg(long, value_name = "FILE")]
    pub(crate) json: Option<PathBuf>,

    /// Run twice and check that the JSON results are byte-identical.
    #[arg(long)]
    pub(crate) check_determinism: bool,

    /// Check the scheduler's invariants after every event (slow).
    #[arg(long)]
    pub(crate) check_invariants: bool,

    /// Largest estimated state accepted, in MiB (default 4096).
    #[arg(long, value_name = "MIB")]
    pub(crate) memory_budget: Option<u64>,

    /// Write a Perfetto trace (protobuf, opens in ui.perfetto.dev and trace_processor) of
    /// the scheduler's tracepoints (sched_switch, sched_waking, sched_wakeup(_new),
    /// sched_migrate_task, sched_process_fork/exit, cpu_idle) and fairsim's balance and
    /// runqueue-lock tracks, over --trace-window (default: the measurement window).
    #[arg(long, value_name = "FILE")]
    pub(crate) trace: Option<PathBuf>,

    /// Write the same events as ftrace text, in /sys/kernel/tracing/trace's layout.
    #[arg(long, value_name = "FILE")]
    pub(crate) trace_text: Option<PathBuf>,

    /// The layout of --trace-text: ftrace (/sys/kernel/tracing/trace, the default),
    /// trace-cmd (what `trace-cmd report` prints for the same events) or trace-cmd-raw
    /// (`trace-cmd report -R`: raw field values, which LISA's TxtTraceParser reads).
    #[arg(long, value_name = "LAYOUT")]
    pub(crate) trace_text_format: Option<String>,

    /// Write the same events as a trace-cmd trace.dat (version 6: trace-cmd report,
    /// KernelShark and LISA read it), with the event formats of 6.12, per-CPU ring-buffer
    /// pages, saved_cmdlines and the local trace clock.
    #[arg(long, value_name = "FILE")]
    pub(crate) trace_dat: Option<PathBuf>,

    /// Also trace these event sets, comma-separated: `pelt`, the sched_tp module's
    /// load-tracking events (sched_pelt_cfs, sched_pelt_se, sched_util_est_cfs,
    /// sched_util_est_se, sched_cpu_capacity) that LISA's load_tracking analysis reads,
    /// in --trace-text and --trace-dat (not in the Perfetto file).
    #[arg(long, value_name = "LIST")]
    pub(crate) trace_events: Option<String>,

    /// The traced window, `START..END` with units (e.g. `1s..1.2s`, `..10ms`, `500ms..`);
    /// also the timeline of --plot (default: its first 2 ms).
    #[arg(long, value_name = "START..END")]
    pub(crate) trace_window: Option<String>,

    /// After the summary, print perf sched's report KIND of the run's trace (its window
    /// as --trace-window sets it): latency, timehist or map (repeatable). The same as
    /// `fairsim report KIND` of the --trace-text file.
    #[arg(long, value_name = "KIND")]
    pub(crate) report: Vec<String>,

    /// Write SVG plots into DIR (the wakeup-latency CDF, the per-CPU timeline, newidle
    /// balances and groups scanned per domain over time) with their data
    /// (plot-data.json, which `fairsim plot` draws again). With compare: the CDF per
    /// feature set and the metrics as bars with error bars.
    #[arg(long, value_name = "DIR")]
    pub(crate) plot: Option<PathBuf>,

    /// Write rt-app's per-thread log files (rt-app-NAME-IDX-IDX.log, one line per phase
    /// pass, rt-app v1.0's columns) into DIR.
    #[arg(long, value_name = "DIR")]
    pub(crate) rtapp_log: Option<PathBuf>,

    /// Show progress on stderr even when it is not a terminal: plain lines every few
    /// seconds (and, for compare, at each finished run), with no escape sequences. At a
    /// terminal a bar with an estimate of the time left shows without it.
    #[arg(long)]
    pub(crate) progress: bool,
}

/// `fairsim run`'s arguments as a clap command of their own, with the CLI's rule that
/// option values may start with `-`: `fairsim sweep` parses each point's argument vector
/// with it, so that a point means what the same `fairsim run` command line means.
pub(crate) fn run_args_command() -> clap::Command {
    use clap::Args;
    crate::hyphen_values::hyphen_values(RunArgs::augment_args(
        clap::Command::new("fairsim run").no_binary_name(true),
    ))
}

/// Parses `fairsim run`'s arguments from `argv` (without the program and command names).
pub(crate) fn parse_run_args(argv: &[String]) -> Result<RunArgs, clap::Error> {
    use clap::FromArgMatches;
    let matches = run_args_command().try_get_matches_from(argv)?;
    RunArgs::from_arg_matches(&matches)
}
