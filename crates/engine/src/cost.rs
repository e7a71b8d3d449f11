//! The kernel-overhead cost table: how much CPU time each piece of scheduler and kernel
//! work takes on the CPU that does it.
//!
//! Every constant models a cost that the real kernel pays on some CPU and that matters for
//! the experiments fairsim reproduces. The values are orders of magnitude from public
//! measurements on recent x86 servers, not numbers fitted to any seed's result; the
//! reasoning for each is on its field. All of them can be overridden from the command line
//! (`--cost name=value`, e.g. `--cost context_switch=2us`) and from a scenario file's
//! `[cost]` table, so that a user can check how sensitive a conclusion is to them.
//!
//! Charged time makes the CPU busy in "kernel" state: the task it runs makes no progress
//! meanwhile, and the time is counted as overhead, not as task time.

use serde::{Deserialize, Serialize};

use crate::time::parse_duration_with_unit;

/// Costs in nanoseconds of kernel work, charged to the CPU that does it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CostTable {
    /// `__schedule` switching from one task (or idle) to another: pick, `context_switch`,
    /// `switch_mm`, FPU and TLB work. lmbench `lat_ctx` and `perf bench sched pipe` put a
    /// process switch with a small working set at 1-3 us on current x86; 1.5 us is the
    /// middle of that range. Charged to the switching CPU on every `prev != next` switch.
    pub context_switch: u64,
    /// The fixed part of `try_to_wake_up` on the waking CPU (pi_lock, state checks,
    /// `select_task_rq` bookkeeping, `ttwu_stat`), apart from the idle-CPU scan. A
    /// `perf bench sched pipe` round trip (two syscalls, two wakeups, two switches) takes
    /// ~4-6 us on current x86, which leaves ~0.5 us for each wakeup path.
    pub wakeup: u64,
    /// One CPU visited by an idle-CPU search (`select_idle_cpu`, `select_idle_core`,
    /// `find_idlest_group_cpu`): `available_idle_cpu` reads the remote rq's `curr`,
    /// `nr_running` and `ttwu_pending`, about one cache line that is usually dirty in
    /// another core's cache. An L3 hit or cross-core transfer is ~30-40 ns on Sapphire
    /// Rapids (Intel MLC loaded latency); 40 ns per CPU.
    pub idle_scan_per_cpu: u64,
    /// One CPU whose statistics a load balance reads (`update_sg_lb_stats` for one CPU:
    /// `cpu_load`, `cpu_util_cfs`, `cpu_runnable`, `nr_running`, `h_nr_runnable`,
    /// `idle_cpu`, `cpu_overutilized` with `capacity_of` and the runqueue's uclamp).
    /// Two parts:
    /// - the instructions and cached reads, measured: `fairsim race --threads 1` runs the
    ///   same `update_sd_lb_stats` with every runqueue in one core's caches and takes
    ///   ~1.2 us for spr-2s56c2t's 55-group, 110-CPU MC scan on the build host, ~10 ns
    ///   per CPU;
    /// - the cache misses, estimated: the reads touch about five lines of the remote
    ///   `struct rq` (its head with `nr_running`, the cfs_rq head, the cacheline-aligned
    ///   `cfs.avg`, `curr`, `uclamp`) that the owner rewrites at every enqueue, dequeue and
    ///   switch, so on a busy machine each read finds them modified in the owner's cache.
    ///   A modified line moves between two cores of one Sapphire Rapids socket in
    ///   roughly 60-100 ns (published core-to-core latency measurements of 4th-generation
    ///   Xeon, e.g. Chips and Cheese, "Core to Core Latency Data on Large Systems",
    ///   2023). How many of them overlap is the open question: the loads of successive
    ///   CPUs are independent, so a Golden Cove core with 16 L1D fill buffers and a
    ///   512-entry reorder window can keep 10-16 in flight (5 x 80 ns / 16 = 25 ns per
    ///   CPU), while data-dependent branches that mispredict would limit it to 2-3 (160
    ///   ns per CPU).
    ///
    /// The default takes the overlapped end, 40 ns in all, the same as
    /// `idle_scan_per_cpu`, so that a default run is what it was before this constant
    /// existed; `--cost lb_scan_per_cpu=170ns` is the other end, and the closing notes
    /// of issue #11 say what each does to seed 000's figures. The extra for another LLC
    /// or node (`scan_remote_llc`, `scan_remote_node`) comes on top.
    pub lb_scan_per_cpu: u64,
    /// Extra cost of reading a CPU's runqueue that sits in another LLC of the same node
    /// (another die's L3, e.g. multi-die packages): the lines come from a remote cache,
    /// ~100 ns instead of ~40 ns on multi-die x86 (Intel MLC, AMD cross-CCX figures);
    /// +60 ns. Only balancing counts visits by distance.
    pub scan_remote_llc: u64,
    /// Extra cost of reading a CPU's runqueue on another NUMA node: a remote-socket cache
    /// hit is ~130-200 ns on 2-socket x86 (Intel MLC remote latencies) against ~40 ns
    /// locally; +120 ns.
    pub scan_remote_node: u64,
    /// One sched group whose statistics are computed (`update_sg_lb_stats` fixed part,
    /// `find_idlest_group`): the group capacity object and the loop overhead, one or two
    /// shared cache lines; 60 ns. The group's CPUs are charged separately through
    /// `idle_scan_per_cpu` when the balance code counts them as visited.
    pub group_scan: u64,
    /// One task examined for migration (`can_migrate_task`: affinity, `task_hot`): a few
    /// fields of a remote task, one or two cache misses; 50 ns.
    pub task_examine: u64,
    /// Moving one task between runqueues within an LLC (`detach_task`/`attach_task`, or
    /// the `set_task_cpu` of a migrating wakeup) plus the first cache misses of the task on
    /// its new CPU: ~1 us. Charged to the destination CPU.
    pub migration: u64,
    /// Extra cost of a migration across LLCs (another socket's cache): the task's hot
    /// lines come from a remote L3 or memory at ~130-200 ns each on 2-socket x86 (Intel
    /// MLC remote latencies), a few dozen lines for a small task: 3 us more.
    pub migration_cross_llc: u64,
    /// Delivery latency of an IPI (send to handler entry on the target): 1-2 us on current
    /// x86 (x2APIC, smp_call_function_single microbenchmarks); 1.5 us. A wakeup queued on
    /// the target's wake list, and a remote `resched_curr`, reach the target this late.
    pub ipi_latency: u64,
    /// Handling an IPI on the target: irq entry/exit and `sched_ttwu_pending` for one task;
    /// ~0.3 us. Charged to the target CPU.
    pub ipi_handle: u64,
    /// Taking a remote runqueue's lock for a direct remote enqueue (`ttwu_queue` without
    /// the wake list): one contended cache-line transfer, ~100-200 ns; 200 ns, charged to
    /// the waking CPU.
    pub remote_rq_lock: u64,
    /// `ttwu_do_activate` under the target runqueue's lock: `enqueue_task_fair` (update_curr,
    /// a PELT update, the rbtree insert) and `wakeup_preempt`, a few hundred ns of mostly
    /// cached work; 250 ns. It is how long a waker holds the target's lock, and the hold
    /// per task detached by a balance. The time itself is inside `wakeup`, `ipi_handle`
    /// and `migration`; this constant only sets how long others wait for the lock.
    pub rq_enqueue: u64,
    /// An hrtimer interrupt (`hrtimer_interrupt` with one `hrtimer_wakeup` callback and
    /// reprogramming the clock event device): ~0.5 us on x86 with TSC deadline timers.
    pub timer_irq: u64,
    /// The periodic scheduler tick (`tick_sched_timer` -> `update_process_times` ->
    /// `sched_tick`) on a busy CPU: ~0.5 us.
    pub tick: u64,
    /// Leaving the idle state when an interrupt arrives on an idle CPU. With deep C-states
    /// disabled (as in seed 000), the shallowest state C1 has `exit_latency` 1 us in the
    /// intel_idle tables for Sapphire Rapids; 1 us.
    pub idle_exit: u64,
    /// Restarting the tick when a CPU whose tick was stopped leaves idle to run a task
    /// (`tick_nohz_idle_exit`: `tick_nohz_restart_sched_tick` reprograms the clock event
    /// device), after the wakeup and before the switch, so it adds to wakeup latency. On
    /// bare metal this is a TSC-deadline MSR write and some bookkeeping, well under a
    /// microsecond and counted in `idle_exit`; 0 by default. In a virtual machine each
    /// reprogramming exits to the hypervisor, and it dominates: the build host's model
    /// (`validation/host/host.toml`) measures it.
    pub tick_restart: u64,
    /// `fork`/`clone` in the parent (`copy_process`, and for processes the mm copy):
    /// ~10 us for a thread, tens of us for a small process; 20 us.
    pub fork: u64,
}

impl Default for CostTable {
    fn default() -> Self {
        CostTable {
            context_switch: 1_500,
            wakeup: 500,
            idle_scan_per_cpu: 40,
            lb_scan_per_cpu: 40,
            scan_remote_llc: 60,
            scan_remote_node: 120,
            group_scan: 60,
            task_examine: 50,
            migration: 1_000,
            migration_cross_llc: 3_000,
            ipi_latency: 1_500,
            ipi_handle: 300,
            remote_rq_lock: 200,
            rq_enqueue: 250,
            timer_irq: 500,
            tick: 500,
            idle_exit: 1_000,
            tick_restart: 0,
            fork: 20_000,
        }
    }
}

/// A `--cost` override that could not be applied.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CostError {
    /// Not `name=value`.
    #[error("--cost: invalid override '{0}'; allowed: NAME=DURATION, e.g. context_switch=2us")]
    Syntax(String),
    /// Unknown constant.
    #[error("--cost: unknown cost '{0}'; allowed: {names}", names = CostTable::NAMES.join(", "))]
    Unknown(String),
    /// Bad value.
    #[error("--cost {name}: {msg}")]
    Value {
        /// The constant.
        name: String,
        /// What is wrong.
        msg: String,
    },
}

impl CostTable {
    /// Names of the constants, as `--cost` and the scenario file take them.
    pub const NAMES: &'static [&'static str] = &[
        "context_switch",
        "wakeup",
        "idle_scan_per_cpu",
        "lb_scan_per_cpu",
        "scan_remote_llc",
        "scan_remote_node",
        "group_scan",
        "task_examine",
        "migration",
        "migration_cross_llc",
        "ipi_latency",
        "ipi_handle",
        "remote_rq_lock",
        "rq_enqueue",
        "timer_irq",
        "tick",
        "idle_exit",
        "tick_restart",
        "fork",
    ];

    fn field(&mut self, name: &str) -> Option<&mut u64> {
        Some(match name {
            "context_switch" => &mut self.context_switch,
            "wakeup" => &mut self.wakeup,
            "idle_scan_per_cpu" => &mut self.idle_scan_per_cpu,
            "lb_scan_per_cpu" => &mut self.lb_scan_per_cpu,
            "scan_remote_llc" => &mut self.scan_remote_llc,
            "scan_remote_node" => &mut self.scan_remote_node,
            "group_scan" => &mut self.group_scan,
            "task_examine" => &mut self.task_examine,
            "migration" => &mut self.migration,
            "migration_cross_llc" => &mut self.migration_cross_llc,
            "ipi_latency" => &mut self.ipi_latency,
            "ipi_handle" => &mut self.ipi_handle,
            "remote_rq_lock" => &mut self.remote_rq_lock,
            "rq_enqueue" => &mut self.rq_enqueue,
            "timer_irq" => &mut self.timer_irq,
            "tick" => &mut self.tick,
            "idle_exit" => &mut self.idle_exit,
            "tick_restart" => &mut self.tick_restart,
            "fork" => &mut self.fork,
            _ => return None,
        })
    }

    /// The value of the constant `name`.
    pub fn get(&self, name: &str) -> Option<u64> {
        let mut copy = *self;
        copy.field(name).map(|v| *v)
    }

    /// Applies one `name=value` override; the value carries its unit (`2us`, `0ns`), since a
    /// bare number means another unit in each tool. Values above 1 s
    /// are refused: no kernel path modelled here takes that long.
    pub fn apply(&mut self, spec: &str) -> Result<(), CostError> {
        let (name, value) = spec
            .split_once('=')
            .ok_or_else(|| CostError::Syntax(spec.to_string()))?;
        let name = name.trim();
        // The name first: a misspelt name is the more useful thing to hear about.
        if self.field(name).is_none() {
            return Err(CostError::Unknown(name.to_string()));
        }
        let v = parse_duration_with_unit(value).map_err(|e| CostError::Value {
            name: name.to_string(),
            msg: e.to_string(),
        })?;
        if v > crate::time::SEC {
            return Err(CostError::Value {
                name: name.to_string(),
                msg: format!("{value} is more than 1s"),
            });
        }
        let slot = self
            .field(name)
            .ok_or_else(|| CostError::Unknown(name.to_string()))?;
        *slot = v;
        Ok(())
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
    fn overrides_take_units_and_reject_junk() {
        let mut c = CostTable::default();
        c.apply("context_switch=2us").unwrap();
        assert_eq!(c.context_switch, 2_000);
        assert!(matches!(c.apply("nope=1"), Err(CostError::Unknown(_))));
        assert!(matches!(c.apply("wakeup"), Err(CostError::Syntax(_))));
        assert!(matches!(
            c.apply("wakeup=-1us"),
            Err(CostError::Value { .. })
        ));
        assert!(matches!(c.apply("wakeup=2s"), Err(CostError::Value { .. })));
    }
}
