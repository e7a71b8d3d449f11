//! The metrics `compare`'s table, `sweep`'s point files and plots and `--until` read
//! from a finished run, declared once.
//!
//! Each metric is one row: its name, whether higher is better (the table's change sign
//! and mean), what it measures, and how it is computed from the run's outcome. Four
//! tables, in the order a run's metrics are listed:
//!
//! - the workloads' own metrics, from each tool's row in
//!   [`fairsim_workloads::tools::TOOLS`] (read from the tool's JSON report);
//! - [`RUN_METRICS`], one value per run (a row whose value is `None` for a run, such as
//!   the memory model's figures on a one-node machine, is left out of that run);
//! - [`CGROUP_METRICS`], per task group other than the root, named `cgroup./PATH.NAME`;
//! - [`LEVEL_METRICS`], per sched domain level with newidle balances, named
//!   `dLEVEL-NAME`, from every CPU or from `--cpu` alone.
//!
//! [`run_metrics`] computes a run's values from the tables and [`metric_names`] lists
//! every name a run of given workloads can have, before any run, from the same tables,
//! so that `--until`'s check and the table cannot disagree. A new metric is one row.

use fairsim_balance::select::stats::{SelectKind, SisOutcome};
use fairsim_balance::CpuIdleType;
use fairsim_engine::profile::{Profile, Sym};
use fairsim_engine::world::{Outcome, Overhead};
use fairsim_workloads::run::RunSpec;
use fairsim_workloads::RunResult;

use crate::cgroups::{cgroup_rows, CgroupRow};
use crate::memory::locality_totals;
use crate::placement::{pct, ratio};

/// Named metric values of one run: (name, higher is better, value).
pub type RunMetrics = Vec<(String, bool, f64)>;

/// What a [`RUN_METRICS`] row reads: the run, and the sums several rows share.
pub struct RunView<'a> {
    /// The finished run.
    pub outcome: &'a Outcome,
    /// The measured window, in seconds.
    pub secs: f64,
    /// CPU time available in the window (CPUs times the window), ns.
    pub cpu_ns: f64,
    /// Busy CPU time: task time and kernel overhead, ns.
    pub busy_ns: f64,
    /// Time in newidle balancing, ns.
    pub newidle_ns: f64,
    /// The kernel-function profile of every CPU.
    pub profile: Profile,
}

impl RunView<'_> {
    /// A profile line's children time as a share of the profile's busy time, as a
    /// cycles profile with halting idle CPUs reports it (seed 000's perf lines).
    fn perf_share(&self, syms: &[Sym]) -> f64 {
        let children: u64 = syms.iter().map(|&s| self.profile.line(s).children_ns).sum();
        children as f64 / self.profile.busy_ns().max(1) as f64 * 100.0
    }

    /// The wakeups of the window, or `None` when it had none (the placement rows are
    /// then left out).
    fn wakeups(&self) -> Option<u64> {
        let n = self.outcome.sched().wake_stats.calls_of(SelectKind::Wakeup);
        (n > 0).then_some(n)
    }
}

/// One metric with one value per run.
pub struct Metric {
    /// The row's name.
    pub name: &'static str,
    /// Whether a higher value is better.
    pub higher_is_better: bool,
    /// What it measures, for readers of this table and of `--until`'s list.
    pub about: &'static str,
    /// Its value for a run, or `None` where the run has no such figure.
    pub value: fn(&RunView) -> Option<f64>,
}

/// The metrics with one value per run, in the table's order.
pub const RUN_METRICS: &[Metric] = &[
    Metric {
        name: "newidle-time-%",
        higher_is_better: false,
        about: "time in newidle balancing, share of all CPU time",
        value: |v| Some(v.newidle_ns / v.cpu_ns * 100.0),
    },
    Metric {
        name: "newidle-busy-%",
        higher_is_better: false,
        // What a cycles profile shows when idle CPUs halt, as perf's share of
        // newidle_balance in seed 000 does.
        about: "time in newidle balancing, share of busy (non-idle) CPU time",
        value: |v| Some(v.newidle_ns / v.busy_ns.max(1.0) * 100.0),
    },
    Metric {
        name: "perf-newidle_balance-%",
        higher_is_better: false,
        about: "perf's children share of newidle_balance in busy time (seed 000's line)",
        value: |v| Some(v.perf_share(&[Sym::SchedBalanceNewidle])),
    },
    Metric {
        name: "perf-update_sd_lb_stats-%",
        higher_is_better: false,
        about: "perf's children share of update_sd_lb_stats in busy time (seed 000's line)",
        value: |v| Some(v.perf_share(&[Sym::UpdateSdLbStats])),
    },
    Metric {
        name: "perf-update_load_avg-%",
        higher_is_better: false,
        about: "perf's children share of PELT's update_load_avg (seed 003's overhead)",
        value: |v| Some(v.perf_share(&[Sym::UpdateLoadAvg])),
    },
    Metric {
        name: "perf-util_est-%",
        higher_is_better: false,
        about: "perf's children share of util_est's enqueue, dequeue and update",
        value: |v| {
            Some(v.perf_share(&[Sym::UtilEstEnqueue, Sym::UtilEstDequeue, Sym::UtilEstUpdate]))
        },
    },
    Metric {
        name: "off-node-%",
        higher_is_better: false,
        about: "task time run away from the task's home node (memory model, NUMA machines)",
        value: |v| {
            locality_totals(v.outcome).map(|(task, off, _)| off as f64 / task.max(1) as f64 * 100.0)
        },
    },
    Metric {
        name: "node-moves/s",
        higher_is_better: false,
        about: "task moves across nodes per second (memory model, NUMA machines)",
        value: |v| locality_totals(v.outcome).map(|(_, _, moves)| moves as f64 / v.secs),
    },
    Metric {
        name: "rq-lock-spin-%",
        higher_is_better: false,
        about: "time spinning on runqueue locks, share of all CPU time",
        value: |v| {
            let spin = v.outcome.metrics().overhead_of(Overhead::LockSpin);
            Some(spin as f64 / v.cpu_ns * 100.0)
        },
    },
    // Where wakeups went (crate::placement): what a select_idle_sibling idea changes
    // before it changes any latency. Left out of a window without wakeups.
    Metric {
        name: "sis-cpus-read/wakeup",
        higher_is_better: false,
        about: "CPUs a wakeup's idle-CPU search read",
        value: |v| {
            let s = &v.outcome.sched().wake_stats;
            v.wakeups()
                .map(|n| ratio(s.cpus_scanned_of(SelectKind::Wakeup), n))
        },
    },
    Metric {
        name: "sis-none-idle-%",
        higher_is_better: false,
        about: "select_idle_sibling calls that found no idle CPU",
        value: |v| {
            let s = &v.outcome.sched().wake_stats;
            v.wakeups()
                .map(|_| pct(s.sis_count(SisOutcome::NoneIdle), s.sis_calls()))
        },
    },
    Metric {
        name: "wakeups-on-busy-%",
        higher_is_better: false,
        about: "wakeups placed on a CPU that was busy",
        value: |v| {
            let s = &v.outcome.sched().wake_stats;
            v.wakeups().map(|n| pct(s.wakeups_on_busy, n))
        },
    },
    Metric {
        name: "wake-affine-pulled-%",
        higher_is_better: false,
        about: "wake_affine calls that pulled the wakee to the waker's side",
        value: |v| {
            let s = &v.outcome.sched().wake_stats;
            v.wakeups().map(|_| pct(s.affine_pulled, s.affine_calls))
        },
    },
    Metric {
        name: "nr_idle_scan-mean",
        higher_is_better: false,
        about: "SIS_UTIL's nr_idle_scan as the scans read it (0 without SIS_UTIL's limit)",
        value: |v| {
            let s = &v.outcome.sched().wake_stats;
            v.wakeups()
                .map(|_| ratio(s.nr_idle_scan_sum, s.nr_idle_scan_reads))
        },
    },
];

/// One metric per task group other than the root.
pub struct CgroupMetric {
    /// The name after `cgroup./PATH.`.
    pub name: &'static str,
    /// Whether a higher value is better.
    pub higher_is_better: bool,
    /// What it measures.
    pub about: &'static str,
    /// Its value for a group's row, given all groups' usage (the root's row).
    pub value: fn(&CgroupRow, u64) -> f64,
}

/// The task groups' metrics: `cpu.stat`'s usage and run delay over the window, the
/// group's share of all task CPU time, and its bandwidth control's throttled periods and
/// time.
pub const CGROUP_METRICS: &[CgroupMetric] = &[
    CgroupMetric {
        name: "usage_usec",
        higher_is_better: false,
        about: "cpu.stat usage_usec over the window",
        value: |r, _| (r.usage_ns / 1000) as f64,
    },
    CgroupMetric {
        name: "wait_usec",
        higher_is_better: false,
        about: "cpu.stat wait_usec (run delay) over the window",
        value: |r, _| (r.wait_ns / 1000) as f64,
    },
    CgroupMetric {
        name: "share-%",
        higher_is_better: false,
        about: "the group's share of all task CPU time",
        value: |r, all| r.share_pct(all),
    },
    CgroupMetric {
        name: "nr_throttled",
        higher_is_better: false,
        about: "cpu.stat nr_throttled: periods its bandwidth throttled it",
        value: |r, _| r.bw.map_or(0, |b| b.nr_throttled) as f64,
    },
    CgroupMetric {
        name: "throttled_usec",
        higher_is_better: false,
        about: "cpu.stat throttled_usec",
        value: |r, _| r.bw.map_or(0, |b| b.throttled_ns / 1000) as f64,
    },
];

/// A domain level's newidle schedstat sums, from every CPU or one.
#[derive(Debug, Clone, Copy, Default)]
pub struct LevelCounts {
    /// `lb_count[CPU_NEWLY_IDLE]`.
    pub count: u64,
    /// `lb_balanced[CPU_NEWLY_IDLE]`.
    pub balanced: u64,
    /// `lb_sg_scan[CPU_NEWLY_IDLE]` (groups scanned).
    pub scan: u64,
    /// The window, in seconds.
    pub secs: f64,
}

/// One metric per sched domain level that had newidle balances.
pub struct LevelMetric {
    /// The name after `dLEVEL-`.
    pub name: &'static str,
    /// Whether a higher value is better.
    pub higher_is_better: bool,
    /// What it measures.
    pub about: &'static str,
    /// Its value for a level with at least one balance.
    pub value: fn(&LevelCounts) -> f64,
}

/// The schedstat ratios seed 000 reads, per domain level.
pub const LEVEL_METRICS: &[LevelMetric] = &[
    LevelMetric {
        name: "newidle-sg-scan/lb",
        higher_is_better: false,
        about: "groups scanned per newidle balance (lb_sg_scan / lb_count)",
        value: |l| l.scan as f64 / l.count as f64,
    },
    LevelMetric {
        name: "newidle-success-%",
        higher_is_better: true,
        about: "newidle balances that were not balanced ((lb_count - lb_balanced) / lb_count)",
        value: |l| (l.count - l.balanced) as f64 / l.count as f64 * 100.0,
    },
    LevelMetric {
        name: "newidle-lb/s",
        higher_is_better: false,
        about: "newidle balances per second",
        value: |l| l.count as f64 / l.secs,
    },
];

/// The metrics of one finished run of `spec`, in the tables' order, with the schedstat
/// ratios read from every CPU or from `cpu` alone.
pub fn run_metrics(spec: &RunSpec, result: &RunResult, cpu: Option<usize>) -> RunMetrics {
    let w = &result.outcome;
    let elapsed = w.window_ns().max(1);
    let secs = elapsed as f64 / 1e9;
    let mut m = RunMetrics::new();
    for (ws, rep) in spec.workloads.iter().zip(&result.reports) {
        let Some(tool) = fairsim_workloads::tools::by_name(ws.name()) else {
            continue;
        };
        for tm in tool.metrics {
            if let Some(v) = tm.value(&rep.json, secs) {
                m.push((tm.name.to_string(), tm.higher_is_better, v));
            }
        }
    }
    let cpus = &w.metrics().cpus;
    let view = RunView {
        outcome: w,
        secs,
        cpu_ns: elapsed as f64 * w.sched().nr_cpus() as f64,
        busy_ns: cpus
            .iter()
            .map(|c| c.task_ns + c.overhead_total())
            .sum::<u64>() as f64,
        newidle_ns: cpus.iter().map(|c| c.newidle_ns).sum::<u64>() as f64,
        profile: w.profile(None),
    };
    for row in RUN_METRICS {
        if let Some(v) = (row.value)(&view) {
            m.push((row.name.to_string(), row.higher_is_better, v));
        }
    }
    // With task groups, each group's metrics (the root's row is every task's, so it is
    // left out, and gives the total the shares are of).
    let groups = cgroup_rows(w);
    let all = groups.first().map_or(0, |r| r.usage_ns);
    for r in groups.iter().skip(1) {
        for row in CGROUP_METRICS {
            m.push((
                format!("cgroup.{}.{}", r.path, row.name),
                row.higher_is_better,
                (row.value)(r, all),
            ));
        }
    }
    let sched = w.sched();
    let newly = CpuIdleType::NewlyIdle as usize;
    for level in 0..domain_depth(w) {
        let mut l = LevelCounts {
            secs,
            ..LevelCounts::default()
        };
        for c in (0..sched.nr_cpus()).filter(|&c| cpu.is_none_or(|x| x == c)) {
            if let Some(sd) = sched.topo.domains_of(c).nth(level) {
                let st = &sched.sd_stats[sd];
                l.count += st.lb_count[newly];
                l.balanced += st.lb_balanced[newly];
                l.scan += st.lb_sg_scan[newly];
            }
        }
        if l.count > 0 {
            for row in LEVEL_METRICS {
                m.push((
                    format!("d{level}-{}", row.name),
                    row.higher_is_better,
                    (row.value)(&l),
                ));
            }
        }
    }
    m
}

/// The deepest CPU's number of domain levels.
fn domain_depth(w: &Outcome) -> usize {
    (0..w.sched().nr_cpus())
        .map(|c| w.sched().topo.domains_of(c).count())
        .max()
        .unwrap_or(0)
}

/// Every metric a run of these workloads on a machine with `depth` domain levels and
/// these task groups (other than the root) can report, in the table's order, known
/// before the first run so that a misspelt `--until` costs no run. A run may leave some
/// out (a level without newidle balances, a machine without the memory model's
/// figures, a window without wakeups).
pub fn metric_names<'a>(
    workloads: impl Iterator<Item = &'a str>,
    depth: usize,
    cgroups: impl Iterator<Item = &'a str>,
) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for w in workloads {
        let Some(tool) = fairsim_workloads::tools::by_name(w) else {
            continue;
        };
        for tm in tool.metrics {
            if !names.iter().any(|x| x == tm.name) {
                names.push(tm.name.to_string());
            }
        }
    }
    names.extend(RUN_METRICS.iter().map(|r| r.name.to_string()));
    for path in cgroups {
        names.extend(
            CGROUP_METRICS
                .iter()
                .map(|r| format!("cgroup.{path}.{}", r.name)),
        );
    }
    for level in 0..depth {
        names.extend(LEVEL_METRICS.iter().map(|r| format!("d{level}-{}", r.name)));
    }
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    /// No two rows of the tables share a name, and every row says what it measures.
    #[test]
    fn rows_are_named_once_and_explained() {
        let mut names: Vec<&str> = Vec::new();
        let rows = RUN_METRICS
            .iter()
            .map(|r| (r.name, r.about))
            .chain(CGROUP_METRICS.iter().map(|r| (r.name, r.about)))
            .chain(LEVEL_METRICS.iter().map(|r| (r.name, r.about)));
        for (name, about) in rows {
            assert!(!names.contains(&name), "{name} twice");
            assert!(!about.is_empty(), "{name} has no description");
            names.push(name);
        }
    }

    /// The names a workload predicts are its tool's rows, then the run-wide rows, then
    /// the levels'.
    #[test]
    fn names_follow_the_tables() {
        let names = metric_names(["nanosleep"].into_iter(), 2, std::iter::empty());
        assert_eq!(names[0], "loops-per-s");
        assert_eq!(names[1], RUN_METRICS[0].name);
        assert_eq!(names.len(), 1 + RUN_METRICS.len() + 2 * LEVEL_METRICS.len());
        assert_eq!(names.last().unwrap(), "d1-newidle-lb/s");
        let names = metric_names(["hackbench"].into_iter(), 0, ["/a"].into_iter());
        assert!(names.contains(&"cgroup./a.share-%".to_string()));
    }
}
