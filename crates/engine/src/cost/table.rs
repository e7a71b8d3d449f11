//! The cost table's type, its `--cost` overrides and their errors.
//!
//! A child of `cost` of its own because the platform tables in [`crate::cost_tables`] are
//! values of this type while `cost` selects among them by name: with the type in `cost`,
//! `cost` and the tables imported each other.

use serde::{Deserialize, Serialize};

use fairsim_des::time::parse_duration_with_unit;

/// Costs in nanoseconds of kernel work, charged to the CPU that does it. Each field says
/// what the kernel does for it; the values, and where they come from, are in the tables of
/// [`crate::cost_tables`]. `Default` is the `x86-2020s` table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CostTable {
    /// `__schedule` switching from one task (or idle) to another: pick, `context_switch`,
    /// `switch_mm`, FPU and TLB work. Charged to the switching CPU on every `prev != next`
    /// switch.
    pub context_switch: u64,
    /// The fixed part of `try_to_wake_up` on the waking CPU (pi_lock, state checks,
    /// `select_task_rq` bookkeeping, `ttwu_stat`), apart from the idle-CPU scan.
    pub wakeup: u64,
    /// One CPU visited by an idle-CPU search (`select_idle_cpu`, `select_idle_core`,
    /// `find_idlest_group_cpu`): `available_idle_cpu` reads the remote rq's `curr`,
    /// `nr_running` and `ttwu_pending`, about one cache line that is usually dirty in
    /// another core's cache.
    pub idle_scan_per_cpu: u64,
    /// One CPU whose statistics a load balance reads (`update_sg_lb_stats` for one CPU:
    /// `cpu_load`, `cpu_util_cfs`, `cpu_runnable`, `nr_running`, `h_nr_runnable`,
    /// `idle_cpu`, `cpu_overutilized` with `capacity_of` and the runqueue's uclamp): the
    /// instructions, and about five lines of the remote `struct rq` that its owner
    /// rewrites at every enqueue, dequeue and switch. The extra for another LLC or node
    /// (`scan_remote_llc`, `scan_remote_node`) comes on top.
    pub lb_scan_per_cpu: u64,
    /// Extra cost of reading a CPU's runqueue that sits in another LLC of the same node
    /// (another die's L3, another cluster's L2): the lines come from a remote cache. Only
    /// balancing counts visits by distance.
    pub scan_remote_llc: u64,
    /// Extra cost of reading a CPU's runqueue on another NUMA node.
    pub scan_remote_node: u64,
    /// One sched group whose statistics are computed (`update_sg_lb_stats` fixed part,
    /// `find_idlest_group`): the group capacity object and the loop overhead. The group's
    /// CPUs are charged separately through `idle_scan_per_cpu` when the balance code
    /// counts them as visited.
    pub group_scan: u64,
    /// One task examined for migration (`can_migrate_task`: affinity, `task_hot`): a few
    /// fields of a remote task.
    pub task_examine: u64,
    /// Moving one task between runqueues within an LLC (`detach_task`/`attach_task`, or
    /// the `set_task_cpu` of a migrating wakeup) plus the first cache misses of the task on
    /// its new CPU. Charged to the destination CPU.
    pub migration: u64,
    /// Extra cost of a migration across LLCs: the task's hot lines come from a remote
    /// cache or memory.
    pub migration_cross_llc: u64,
    /// Delivery latency of an IPI (send to handler entry on the target). A wakeup queued
    /// on the target's wake list, and a remote `resched_curr`, reach the target this late.
    pub ipi_latency: u64,
    /// Handling an IPI on the target: irq entry/exit and `sched_ttwu_pending` for one
    /// task. Charged to the target CPU.
    pub ipi_handle: u64,
    /// Taking a remote runqueue's lock for a direct remote enqueue (`ttwu_queue` without
    /// the wake list): one contended cache-line transfer, charged to the waking CPU.
    pub remote_rq_lock: u64,
    /// `ttwu_do_activate` under the target runqueue's lock: `enqueue_task_fair`
    /// (update_curr, a PELT update, the rbtree insert) and `wakeup_preempt`. It is how
    /// long a waker holds the target's lock, and the hold per task detached by a balance.
    /// The time itself is inside `wakeup`, `ipi_handle` and `migration`; this constant only
    /// sets how long others wait for the lock.
    pub rq_enqueue: u64,
    /// An hrtimer interrupt (`hrtimer_interrupt` with one `hrtimer_wakeup` callback and
    /// reprogramming the clock event device).
    pub timer_irq: u64,
    /// The periodic scheduler tick (`tick_sched_timer` -> `update_process_times` ->
    /// `sched_tick`) on a busy CPU.
    pub tick: u64,
    /// Leaving the idle state when an interrupt arrives on an idle CPU, where no cpuidle
    /// table says otherwise (no cpuidle driver, or the flat table's `C1`).
    pub idle_exit: u64,
    /// Restarting the tick when a CPU whose tick was stopped leaves idle to run a task
    /// (`tick_nohz_idle_exit`: `tick_nohz_restart_sched_tick` reprograms the clock event
    /// device), after the wakeup and before the switch, so it adds to wakeup latency. On
    /// bare metal it is counted in `idle_exit`; in a virtual machine each reprogramming
    /// exits to the hypervisor, and it dominates.
    pub tick_restart: u64,
    /// `fork`/`clone` in the parent (`copy_process`, and for processes the mm copy).
    pub fork: u64,
    /// `execve` in the new process's own context, up to the new image's `main`: the
    /// binary's load, the teardown of the forked copy's mm, the mappings the dynamic loader
    /// asks for and the page faults of the new image's start-up. Unlike the charges above,
    /// it is not scheduler overhead: a workload runs it as the task's own system time (a
    /// run segment, `Op::RunSysCost`), so it is preemptible and scales with the CPU's
    /// speed. Only workloads that say so (forkbench) run it; `Op::Exec` alone does not.
    pub exec: u64,
    /// `do_exit` of a process in its own context before it wakes its parent: `exit_mm`
    /// unmapping the image and freeing its page tables, the files and the signal state.
    /// Run, like `exec`, as the task's own system time by the workloads that say so.
    pub exit: u64,
    /// A TCP `send` of one segment over loopback on the sending CPU, up to the device:
    /// the system call, `tcp_sendmsg_locked`, `tcp_write_xmit`, `__tcp_transmit_skb`,
    /// the IP output path and `loopback_xmit` -> `netif_rx`, without the copy from user
    /// memory (`net_copy_per_kib`) and without the receive softirq (`tcp_rx`).
    pub tcp_send: u64,
    /// The receive softirq of one loopback TCP segment, on the sending CPU: with RPS off
    /// `netif_rx` queues the skb on that CPU's backlog (`enqueue_to_backlog(skb,
    /// smp_processor_id())`) and `local_bh_enable` runs `net_rx_action` ->
    /// `process_backlog` -> `ip_rcv` -> `tcp_v4_rcv` -> `tcp_rcv_established`, which
    /// queues the data and processes the piggybacked ACK; the peer's wakeup from
    /// `sock_def_readable` is `wakeup`, apart.
    pub tcp_rx: u64,
    /// A TCP `recv` system call that finds its data queued: `tcp_recvmsg` without the
    /// copy to user memory and without the wait.
    pub tcp_recv: u64,
    /// A UDP `send` of one datagram over loopback up to the device (`udp_sendmsg`,
    /// `ip_make_skb`, `udp_send_skb`, `loopback_xmit`), without the copy.
    pub udp_send: u64,
    /// The receive softirq of one loopback UDP datagram on the sending CPU
    /// (`net_rx_action` -> `__udp4_lib_rcv` -> `__udp_enqueue_schedule_skb`), without
    /// the peer's wakeup.
    pub udp_rx: u64,
    /// A UDP `recv` that finds a datagram queued (`udp_recvmsg` without the copy).
    pub udp_recv: u64,
    /// Copying one KiB between user memory and an skb (`_copy_from_iter` in a send,
    /// `skb_copy_datagram_iter` in a receive), charged once per direction of the copy.
    pub net_copy_per_kib: u64,
    /// `__update_load_avg_se` inside `update_load_avg`: one task entity's PELT sums
    /// brought to the runqueue's PELT clock (the decay when a 1024-us period boundary
    /// passed, the averages recomputed). Charged per call counted by the scheduler, in
    /// whatever path made it (enqueue, dequeue, put, set, tick, a balance's detach and
    /// attach), to the CPU that made it.
    pub pelt_update_se: u64,
    /// `update_cfs_rq_load_avg` inside `update_load_avg`: the runqueue's own PELT sums,
    /// charged like `pelt_update_se`.
    pub pelt_update_cfs_rq: u64,
    /// `util_est_enqueue`: a task's estimate added to its runqueue's (UTIL_EST on).
    pub util_est_enqueue: u64,
    /// `util_est_dequeue`: a task's estimate removed from its runqueue's (UTIL_EST on).
    pub util_est_dequeue: u64,
    /// `util_est_update`: a new sample of a task that slept, with the EWMA step
    /// (UTIL_EST on, `util_avg` changed since the last sample).
    pub util_est_update: u64,
}

/// A `--cost` override that could not be applied.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CostError {
    /// Not `name=value`.
    #[error("--cost: invalid override '{got}'; allowed: NAME=DURATION, e.g. context_switch=2us")]
    Syntax {
        /// The override as given.
        got: String,
    },
    /// Unknown constant.
    #[error("--cost: unknown cost '{got}'; allowed: {names}", names = CostTable::NAMES.join(", "))]
    Unknown {
        /// The name as given.
        got: String,
    },
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
        "exec",
        "exit",
        "tcp_send",
        "tcp_rx",
        "tcp_recv",
        "udp_send",
        "udp_rx",
        "udp_recv",
        "net_copy_per_kib",
        "pelt_update_se",
        "pelt_update_cfs_rq",
        "util_est_enqueue",
        "util_est_dequeue",
        "util_est_update",
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
            "exec" => &mut self.exec,
            "exit" => &mut self.exit,
            "tcp_send" => &mut self.tcp_send,
            "tcp_rx" => &mut self.tcp_rx,
            "tcp_recv" => &mut self.tcp_recv,
            "udp_send" => &mut self.udp_send,
            "udp_rx" => &mut self.udp_rx,
            "udp_recv" => &mut self.udp_recv,
            "net_copy_per_kib" => &mut self.net_copy_per_kib,
            "pelt_update_se" => &mut self.pelt_update_se,
            "pelt_update_cfs_rq" => &mut self.pelt_update_cfs_rq,
            "util_est_enqueue" => &mut self.util_est_enqueue,
            "util_est_dequeue" => &mut self.util_est_dequeue,
            "util_est_update" => &mut self.util_est_update,
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
        let (name, value) = spec.split_once('=').ok_or_else(|| CostError::Syntax {
            got: spec.to_string(),
        })?;
        let name = name.trim();
        // The name first: a misspelt name is the more useful thing to hear about.
        if self.field(name).is_none() {
            return Err(CostError::Unknown {
                got: name.to_string(),
            });
        }
        let v = parse_duration_with_unit(value).map_err(|e| CostError::Value {
            name: name.to_string(),
            msg: e.to_string(),
        })?;
        if v > fairsim_des::time::SEC {
            return Err(CostError::Value {
                name: name.to_string(),
                msg: format!("{value} is more than 1s"),
            });
        }
        let slot = self.field(name).ok_or_else(|| CostError::Unknown {
            got: name.to_string(),
        })?;
        *slot = v;
        Ok(())
    }
}
