//! Metrics of a run: per-CPU time split (task, kernel overhead, idle), context switches and
//! migrations; per-task wakeup latency and run delay; machine-wide wakeup counts and the
//! wakeup-latency histogram.
//!
//! The machine-wide histogram is an HdrHistogram (3 significant digits, ns). Per task only
//! count, sum and maximum are kept, so that 65536 tasks do not need 65536 histograms.

use std::collections::BTreeMap;

use hdrhistogram::Histogram;

use crate::event::Tid;
use crate::world::Overhead;

/// Longest latency the histogram records exactly; longer ones are clamped (1 hour).
const HIST_MAX_NS: u64 = 3_600_000_000_000;

/// Time split and counters of one CPU.
///
/// Laid out in declaration order, 64-byte aligned: what a run segment's advance and a
/// charge of kernel work add to come first, in one cache line (a test checks it).
#[derive(Debug, Clone, PartialEq, Eq)]
#[repr(C, align(64))]
pub struct CpuMetrics {
    /// ns spent running task work (segments).
    pub task_ns: u64,
    /// ns of `task_ns` run by tasks whose memory is on another node ([`crate::memory`]).
    pub remote_ns: u64,
    /// ns of kernel overhead charged while no runnable task was current (idle, or inside
    /// `schedule()` after the current task blocked or exited): the part of the overhead
    /// that no task's `sys_ns` holds.
    pub no_task_kernel_ns: u64,
    /// ns of kernel overhead in all, the sum of `site_ns` kept as it grows: the cpufreq
    /// governor reads it at every update.
    pub overhead_total_ns: u64,
    /// ns of kernel overhead by profile site ([`crate::profile::Site::index`]). The time
    /// by [`Overhead`] kind is a function of it ([`CpuMetrics::overhead_ns`]), computed
    /// when asked: adding each piece of kernel work to a second array cost every charge
    /// a lookup of its kind and a second write.
    pub site_ns: [u64; crate::profile::NR_SITES],
    /// Context switches (`prev != next`).
    pub switches: u64,
    /// Wakeups that migrated a task to this CPU.
    pub migrations_in: u64,
    /// ns spent in `sched_balance_newidle` (from the start of the newidle balance to the
    /// end of its last step's work), what perf attributes to newidle_balance.
    pub newidle_ns: u64,
    /// The part of `newidle_ns` spent in calls that the `rd->overloaded`/`avg_idle` gate
    /// ended before any domain was walked, so that the balances past it have a mean of
    /// their own.
    pub newidle_gated_ns: u64,
    /// Newidle balances that got past the early exits.
    pub newidle_balances: u64,
    /// Runqueue lock acquisitions that had to spin (the time is `lock_spin` overhead).
    pub lock_spins: u64,
    /// Wakeups whose task then ran here, and the sum and maximum of their wake-to-run
    /// delays (`perf sched latency`'s delay, per CPU rather than per task).
    pub wakeups_run: u64,
    /// The sum of those delays, ns.
    pub wake_lat_sum_ns: u64,
    /// The longest of them, ns.
    pub wake_lat_max_ns: u64,
}

impl Default for CpuMetrics {
    fn default() -> Self {
        CpuMetrics {
            task_ns: 0,
            remote_ns: 0,
            no_task_kernel_ns: 0,
            overhead_total_ns: 0,
            site_ns: [0; crate::profile::NR_SITES],
            switches: 0,
            migrations_in: 0,
            newidle_ns: 0,
            newidle_gated_ns: 0,
            newidle_balances: 0,
            lock_spins: 0,
            wakeups_run: 0,
            wake_lat_sum_ns: 0,
            wake_lat_max_ns: 0,
        }
    }
}

impl CpuMetrics {
    /// Total kernel overhead in ns.
    pub fn overhead_total(&self) -> u64 {
        self.overhead_total_ns
    }

    /// ns of kernel overhead by [`Overhead`] kind: each site's time under its site's kind.
    pub fn overhead_ns(&self) -> [u64; Overhead::COUNT] {
        let mut by_kind = [0; Overhead::COUNT];
        for (i, &ns) in self.site_ns.iter().enumerate() {
            if ns != 0 {
                by_kind[crate::profile::Site::from_index(i).overhead() as usize] += ns;
            }
        }
        by_kind
    }
}

/// Per-task counters.
///
/// Laid out in declaration order, 64-byte aligned: the counters a run segment's advance
/// adds to (user, system and off-node time, and the run time on the CPU it ran on last)
/// share the first cache line (a test checks it).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[repr(C, align(64))]
pub struct TaskMetrics {
    /// User time in ns: the task's `Run` and `Spin` segments.
    pub user_ns: u64,
    /// System time in ns: the task's `RunSys` segments, plus the kernel work charged on
    /// its CPU while it was current and runnable (its forks, wakeups, exit, the
    /// interrupts that landed on it), as a kernel without `CONFIG_IRQ_TIME_ACCOUNTING`
    /// counts interrupt time to the interrupted task.
    pub sys_ns: u64,
    /// Task time on CPUs of a node other than its memory's ([`crate::memory`]), in ns.
    pub off_node_ns: u64,
    /// Task time on each CPU it ran on, in ns: where a thread ran and for how long.
    pub cpu_ns: CpuTimes,
    /// Wakeups measured (from `try_to_wake_up` to getting the CPU).
    pub wakeups: u64,
    /// Sum of their latencies in ns.
    pub wake_lat_sum_ns: u64,
    /// Largest latency in ns.
    pub wake_lat_max_ns: u64,
    /// `sched_info.run_delay` in ns (filled at the end).
    pub run_delay_ns: u64,
    /// `sched_info.pcount` (filled at the end).
    pub pcount: u64,
    /// `se.nr_migrations` (filled at the end).
    pub migrations: u64,
    /// `se.sum_exec_runtime` in ns (filled at the end).
    pub runtime_ns: u64,
    /// When the task exited.
    pub exited_at: Option<u64>,
    /// Times the task started running on a node other than the one it last ran on.
    pub node_migrations: u64,
    /// Ticks that found the task current in user mode (`account_user_time` of
    /// `account_process_tick` under `CONFIG_TICK_CPU_ACCOUNTING`).
    pub user_ticks: u64,
    /// Ticks that found the task current in kernel mode (`account_system_time`).
    pub sys_ticks: u64,
    /// `execve`s the task made (`Op::Exec`).
    pub execs: u64,
}

/// A task's run time per CPU. The CPU it ran on last is counted apart from the map, so
/// that the run segment's advance, which adds to it many times per task switch, does not
/// search the map each time; the readers see the two merged.
///
/// Laid out in declaration order, the last CPU first: it is what the advance touches.
#[derive(Clone, Default)]
#[repr(C)]
pub struct CpuTimes {
    last: Option<(usize, u64)>,
    done: BTreeMap<usize, u64>,
}

impl CpuTimes {
    /// Adds `ns` of run time on `cpu`.
    #[inline]
    pub fn add(&mut self, cpu: usize, ns: u64) {
        match &mut self.last {
            Some((c, n)) if *c == cpu => *n += ns,
            last => {
                if let Some((c, n)) = last.replace((cpu, ns)) {
                    *self.done.entry(c).or_default() += n;
                }
            }
        }
    }

    /// Run time per CPU, in CPU order.
    pub fn map(&self) -> BTreeMap<usize, u64> {
        let mut m = self.done.clone();
        if let Some((c, n)) = self.last {
            *m.entry(c).or_default() += n;
        }
        m
    }

    /// `(cpu, ns)` in CPU order.
    pub fn iter(&self) -> impl Iterator<Item = (usize, u64)> {
        self.map().into_iter()
    }

    /// Run time on `cpu`, if the task ran there.
    pub fn get(&self, cpu: usize) -> Option<u64> {
        let last = self.last.filter(|&(c, _)| c == cpu).map(|(_, n)| n);
        match (self.done.get(&cpu), last) {
            (None, None) => None,
            (a, b) => Some(a.copied().unwrap_or(0) + b.unwrap_or(0)),
        }
    }

    /// The times, in CPU order.
    pub fn values(&self) -> impl Iterator<Item = u64> {
        self.iter().map(|(_, n)| n)
    }
}

impl PartialEq for CpuTimes {
    fn eq(&self, other: &Self) -> bool {
        self.map() == other.map()
    }
}

impl Eq for CpuTimes {}

impl std::fmt::Debug for CpuTimes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.map().fmt(f)
    }
}

/// Everything counted during a run.
#[derive(Debug, Clone)]
pub struct Metrics {
    /// Per CPU.
    pub cpus: Vec<CpuMetrics>,
    /// Per engine task.
    pub tasks: Vec<TaskMetrics>,
    /// Wakeup latency of every task, ns.
    pub wakeup_latency: Histogram<u64>,
    /// Wakeups whose selected CPU was the waking CPU.
    pub wakeups_local: u64,
    /// Wakeups to another CPU.
    pub wakeups_remote: u64,
    /// CPUs visited by scheduler scans.
    pub cpus_visited: u64,
    /// Groups visited by scheduler scans.
    pub groups_visited: u64,
    /// hrtimers fired.
    pub timers_fired: u64,
}

impl Metrics {
    /// ns of overhead of kind `k` on all CPUs.
    pub fn overhead_of(&self, k: Overhead) -> u64 {
        self.cpus.iter().map(|c| c.overhead_ns()[k as usize]).sum()
    }

    /// Empty metrics for `ncpus` CPUs and `ntasks` tasks.
    pub fn new(ncpus: usize, ntasks: usize) -> Self {
        Metrics {
            cpus: vec![CpuMetrics::default(); ncpus],
            tasks: vec![TaskMetrics::default(); ntasks],
            wakeup_latency: Histogram::new_with_bounds(1, HIST_MAX_NS, 3)
                .expect("static histogram bounds are valid"),
            wakeups_local: 0,
            wakeups_remote: 0,
            cpus_visited: 0,
            groups_visited: 0,
            timers_fired: 0,
        }
    }

    /// Records one wakeup latency of task `t`.
    pub fn record_wakeup_latency(&mut self, t: Tid, cpu: usize, ns: u64) {
        let m = &mut self.tasks[t];
        m.wakeups += 1;
        m.wake_lat_sum_ns += ns;
        m.wake_lat_max_ns = m.wake_lat_max_ns.max(ns);
        let c = &mut self.cpus[cpu];
        c.wakeups_run += 1;
        c.wake_lat_sum_ns += ns;
        c.wake_lat_max_ns = c.wake_lat_max_ns.max(ns);
        self.wakeup_latency
            .saturating_record(ns.clamp(1, HIST_MAX_NS));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_times_merge_the_last_cpu_with_the_rest() {
        let mut t = CpuTimes::default();
        assert_eq!(t.get(3), None);
        t.add(3, 10);
        t.add(3, 5);
        t.add(1, 7);
        t.add(3, 1);
        assert_eq!(t.get(3), Some(16));
        assert_eq!(t.get(1), Some(7));
        assert_eq!(t.get(2), None);
        assert_eq!(t.iter().collect::<Vec<_>>(), vec![(1, 7), (3, 16)]);
        let mut u = CpuTimes::default();
        u.add(1, 7);
        u.add(3, 16);
        assert_eq!(t, u);
        assert_eq!(format!("{t:?}"), "{1: 7, 3: 16}");
    }

    #[test]
    fn latency_is_recorded_per_task_and_globally() {
        let mut m = Metrics::new(2, 2);
        m.record_wakeup_latency(1, 0, 5_000);
        m.record_wakeup_latency(1, 1, 7_000);
        assert_eq!(m.tasks[1].wakeups, 2);
        assert_eq!(m.tasks[1].wake_lat_max_ns, 7_000);
        // Per CPU too, where each wakeup ran.
        assert_eq!(
            (
                m.cpus[0].wakeups_run,
                m.cpus[0].wake_lat_sum_ns,
                m.cpus[0].wake_lat_max_ns
            ),
            (1, 5_000, 5_000)
        );
        assert_eq!(m.cpus[1].wake_lat_max_ns, 7_000);
        assert_eq!(m.wakeup_latency.len(), 2);
        assert_eq!(m.tasks[0], TaskMetrics::default());
    }

    #[test]
    fn what_a_segment_advance_adds_to_shares_one_cache_line() {
        use std::mem::{offset_of, size_of};
        let last_end = offset_of!(TaskMetrics, cpu_ns)
            + offset_of!(CpuTimes, last)
            + size_of::<Option<(usize, u64)>>();
        assert!(
            last_end <= 64,
            "TaskMetrics' advance fields end at byte {last_end}"
        );
        assert!(offset_of!(TaskMetrics, off_node_ns) < 64);
        assert!(offset_of!(CpuMetrics, remote_ns) < 64);
        assert!(offset_of!(CpuMetrics, no_task_kernel_ns) < 64);
        assert!(offset_of!(CpuMetrics, overhead_total_ns) < 64);
        assert_eq!(std::mem::align_of::<CpuMetrics>(), 64);
    }
}
