//! A race run's results: the CPUs' measurements merged, schedstat-style counters summed
//! by domain level, the wall-time distribution of `update_sd_lb_stats`, lock contention,
//! and the task-conservation check.

use std::fmt::Write as _;

use fairsim_balance::schedstat::{initial_jiffies, render_schedstat, SchedstatVersion};
use fairsim_balance::{CpuIdleType, RqSchedstat, SdSchedstat, TaskId};
use fairsim_topology::{SchedDomains, SdId};

use crate::cpu::{CpuCtx, CpuStats};
use crate::hist::DurHist;
use crate::rq::Token;
use crate::spec::{Placement, RaceSpec};

/// What one emulated CPU returned.
#[derive(Debug, Clone)]
pub struct CpuResult {
    /// The CPU.
    pub cpu: usize,
    /// Its measurements.
    pub stats: CpuStats,
    /// Its domains' schedstat counters.
    pub sd_stats: Vec<(SdId, SdSchedstat)>,
    /// Tokens it had detached and not attached when it stopped (must be none).
    pub in_flight: Vec<TaskId>,
}

/// Counters of one domain level (SMT, MC, NUMA, ...) summed over CPUs, for one idle type.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LevelCounts {
    /// The level's name.
    pub name: &'static str,
    /// `lb_count`.
    pub count: u64,
    /// `lb_balanced`.
    pub balanced: u64,
    /// `lb_failed`.
    pub failed: u64,
    /// `lb_gained`.
    pub gained: u64,
    /// `lb_nobusyg`.
    pub nobusyg: u64,
    /// `lb_nobusyq`.
    pub nobusyq: u64,
    /// `lb_sg_scan`.
    pub sg_scan: u64,
}

/// A distribution of wall-clock durations in ns.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Dist {
    /// Samples.
    pub n: u64,
    /// Mean.
    pub mean: f64,
    /// Median.
    pub p50: u32,
    /// 99th percentile.
    pub p99: u32,
    /// Largest.
    pub max: u32,
}

impl Dist {
    fn of(h: &DurHist) -> Dist {
        if h.is_empty() {
            return Dist::default();
        }
        Dist {
            n: h.len(),
            mean: h.mean(),
            p50: h.percentile(50),
            p99: h.percentile(99),
            max: h.max(),
        }
    }
}

/// Everything a race run measured.
#[derive(Debug, Clone)]
pub struct RaceReport {
    /// The machine's name.
    pub machine: String,
    /// CPUs.
    pub cpus: usize,
    /// Threads.
    pub threads: usize,
    /// Tokens.
    pub tasks: usize,
    /// The features, as the features file lists the ones that differ from 6.12.117.
    pub features: String,
    /// Wall seconds the CPUs ran: from the threads' start (all at once, at the gate) to
    /// the last thread's stop.
    pub wall_s: f64,
    /// Newidle counters by level (`CPU_NEWLY_IDLE`).
    pub newidle: Vec<LevelCounts>,
    /// Periodic counters by level (`CPU_IDLE` and `CPU_NOT_IDLE` summed).
    pub periodic: Vec<LevelCounts>,
    /// All CPUs' measurements summed (the duration vectors left empty).
    pub totals: CpuStats,
    /// `update_sd_lb_stats` wall ns in newidle balances.
    pub sd_lb_stats_newidle: Dist,
    /// The same in periodic balances.
    pub sd_lb_stats_periodic: Dist,
    /// Runqueue lock acquisitions that found the lock held (failed try-locks).
    pub rq_lock_contended: u64,
    /// Failed try-locks of `sched_balance_running` (SD_SERIALIZE).
    pub serialize_failed: u64,
    /// Token migrations.
    pub migrations: u64,
    /// Tokens seen nowhere at the end.
    pub missing: usize,
    /// Tokens seen in more than one place at the end.
    pub duplicated: usize,
    /// Where tokens started.
    pub placement: Placement,
    /// Tokens woke their partners.
    pub pairs: bool,
    /// The domains the counters belong to.
    pub topo: SchedDomains,
    /// Every domain's schedstat counters, indexed like `topo.domains`.
    pub sd_stats: Vec<SdSchedstat>,
    /// Each CPU's `cpu<N>` schedstat line.
    pub rq_stats: Vec<RqSchedstat>,
    /// CONFIG_HZ, for the schedstat timestamp.
    pub hz: u32,
}

fn by_level(topo: &SchedDomains, cpus: &[CpuResult], itypes: &[CpuIdleType]) -> Vec<LevelCounts> {
    let mut rows: Vec<(u32, LevelCounts)> = Vec::new();
    for c in cpus {
        for (sd, s) in &c.sd_stats {
            let d = topo.domain(*sd);
            let i = match rows
                .iter()
                .position(|r| r.0 == d.level && r.1.name == d.name)
            {
                Some(i) => i,
                None => {
                    rows.push((
                        d.level,
                        LevelCounts {
                            name: d.name,
                            ..LevelCounts::default()
                        },
                    ));
                    rows.len() - 1
                }
            };
            let r = &mut rows[i].1;
            for &t in itypes {
                let t = t as usize;
                r.count += s.lb_count[t];
                r.balanced += s.lb_balanced[t];
                r.failed += s.lb_failed[t];
                r.gained += s.lb_gained[t];
                r.nobusyg += s.lb_nobusyg[t];
                r.nobusyq += s.lb_nobusyq[t];
                r.sg_scan += s.lb_sg_scan[t];
            }
        }
    }
    rows.sort_by_key(|r| r.0);
    rows.into_iter().map(|r| r.1).collect()
}

impl RaceReport {
    /// Merges the CPUs' results; `seen[p]` is how many places token `p` was found in.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        spec: &RaceSpec,
        topo: SchedDomains,
        cpus: Vec<CpuResult>,
        seen: &[u32],
        tokens: &[Token],
        wall_ns: u64,
        rq_lock_contended: u64,
        serialize_failed: u64,
    ) -> RaceReport {
        let newidle = by_level(&topo, &cpus, &[CpuIdleType::NewlyIdle]);
        let periodic = by_level(&topo, &cpus, &[CpuIdleType::Idle, CpuIdleType::NotIdle]);
        let mut totals = CpuStats::default();
        let mut ni = DurHist::default();
        let mut pe = DurHist::default();
        let mut sd_stats = vec![SdSchedstat::default(); topo.domains.len()];
        let mut rq_stats = vec![RqSchedstat::default(); spec.machine.nr_cpus()];
        for c in cpus {
            for (sd, st) in c.sd_stats {
                if let Some(slot) = sd_stats.get_mut(sd) {
                    *slot = st;
                }
            }
            let s = c.stats;
            if let Some(r) = rq_stats.get_mut(c.cpu) {
                // What race mode counts of the cpu line: schedule() calls that picked a
                // token or went idle, timer wakeups (all local), tokens given the CPU and
                // their run time. Yields and run delay are not tracked (0).
                r.sched_count = s.picks + s.goidle;
                r.sched_goidle = s.goidle;
                r.ttwu_count = s.wakeups;
                r.ttwu_local = s.wakeups_local;
                r.pcount = s.picks;
                r.rq_cpu_time = s.busy_ns;
            }
            totals.newidle_calls += s.newidle_calls;
            totals.newidle_balances += s.newidle_balances;
            totals.newidle_pulled += s.newidle_pulled;
            totals.newidle_ns += s.newidle_ns;
            totals.periodic_runs += s.periodic_runs;
            totals.active_wanted += s.active_wanted;
            totals.loops += s.loops;
            totals.busy_ns += s.busy_ns;
            totals.nested_locks += s.nested_locks;
            totals.partner_wakeups += s.partner_wakeups;
            totals.wakeups += s.wakeups;
            totals.wakeups_local += s.wakeups_local;
            totals.picks += s.picks;
            totals.goidle += s.goidle;
            ni.merge(&s.sd_lb_stats_newidle_ns);
            pe.merge(&s.sd_lb_stats_periodic_ns);
        }
        RaceReport {
            machine: spec.machine.name.clone(),
            cpus: spec.machine.nr_cpus(),
            threads: spec.threads,
            tasks: spec.tasks,
            features: spec.params.features.diff_summary(),
            wall_s: wall_ns as f64 / 1e9,
            newidle,
            periodic,
            totals,
            sd_lb_stats_newidle: Dist::of(&ni),
            sd_lb_stats_periodic: Dist::of(&pe),
            rq_lock_contended,
            serialize_failed,
            migrations: tokens.iter().map(|t| t.migrations).sum(),
            missing: seen.iter().filter(|&&k| k == 0).count(),
            duplicated: seen.iter().filter(|&&k| k > 1).count(),
            placement: spec.placement,
            pairs: spec.program.wake_partner,
            topo,
            sd_stats,
            rq_stats,
            hz: spec.params.hz,
        }
    }

    /// The run's counters as `/proc/schedstat` reads at its end (`sg_scan`: seed 000's
    /// patch 7/7 column), for `fairsim schedstat show|diff`.
    pub fn schedstat(&self, version: SchedstatVersion, sg_scan: bool) -> String {
        let rq: Vec<&RqSchedstat> = self.rq_stats.iter().collect();
        let hz = u64::from(self.hz.max(1));
        let tick = (1_000_000_000 + hz / 2) / hz;
        let jiffies = (CpuCtx::kclock((self.wall_s * 1e9) as u64)) / tick;
        let timestamp = initial_jiffies(self.hz).wrapping_add(jiffies);
        render_schedstat(&self.topo, &rq, &self.sd_stats, timestamp, version, sg_scan)
    }

    /// Every token was found in exactly one place.
    pub fn conserved(&self) -> bool {
        self.missing == 0 && self.duplicated == 0
    }

    /// Newidle balance time over the CPUs' busy time (token runs plus newidle balances),
    /// the comparable of the engine's `newidle-busy-%` and of a cycles profile's share
    /// when idle CPUs halt.
    pub fn newidle_busy_pct(&self) -> f64 {
        let t = &self.totals;
        100.0 * t.newidle_ns as f64 / ((t.busy_ns + t.newidle_ns).max(1)) as f64
    }

    /// Tokens pulled by balancing (newidle and periodic).
    pub fn pulls(&self) -> u64 {
        self.newidle
            .iter()
            .chain(&self.periodic)
            .map(|r| r.gained)
            .sum()
    }

    /// The report for scripts: every figure of [`RaceReport::render`], by name.
    pub fn to_json(&self) -> serde_json::Value {
        let t = &self.totals;
        let dist = |d: &Dist| serde_json::json!({"calls": d.n, "mean_ns": d.mean, "p50_ns": d.p50, "p99_ns": d.p99, "max_ns": d.max});
        let levels = |rows: &[LevelCounts]| {
            rows.iter()
                .map(|r| {
                    serde_json::json!({
                        "level": r.name, "lb_count": r.count, "lb_balanced": r.balanced,
                        "lb_failed": r.failed, "lb_gained": r.gained, "lb_nobusyg": r.nobusyg,
                        "lb_nobusyq": r.nobusyq, "lb_sg_scan": r.sg_scan,
                    })
                })
                .collect::<Vec<_>>()
        };
        serde_json::json!({
            "machine": self.machine,
            "cpus": self.cpus,
            "threads": self.threads,
            "tasks": self.tasks,
            "features": self.features,
            "start": match self.placement { Placement::Cpu0 => "cpu0", Placement::Spread => "spread" },
            "wall_s": self.wall_s,
            "newidle": {
                "calls": t.newidle_calls,
                "balances": t.newidle_balances,
                "pulled": t.newidle_pulled,
                "wall_ns": t.newidle_ns,
                "busy_pct": self.newidle_busy_pct(),
                "by_level": levels(&self.newidle),
            },
            "periodic": { "runs": t.periodic_runs, "by_level": levels(&self.periodic) },
            "update_sd_lb_stats": {
                "newidle": dist(&self.sd_lb_stats_newidle),
                "periodic": dist(&self.sd_lb_stats_periodic),
            },
            "pulls": self.pulls(),
            "migrations": self.migrations,
            "active_balances_wanted": t.active_wanted,
            "failed_trylocks": { "rq": self.rq_lock_contended, "sched_balance_running": self.serialize_failed },
            "tokens": { "loops": t.loops, "busy_ns": t.busy_ns, "wakeups": t.wakeups, "wakeups_local": t.wakeups_local, "partner_wakeups": t.partner_wakeups, "pairs": self.pairs },
            "conservation": {
                "ok": self.conserved() && t.nested_locks == 0,
                "missing": self.missing,
                "duplicated": self.duplicated,
                "nested_rq_locks": t.nested_locks,
            },
        })
    }

    /// The report as text.
    pub fn render(&self) -> String {
        let mut o = String::new();
        let s = self.wall_s.max(1e-9);
        let t = &self.totals;
        let _ = writeln!(
            o,
            "race: {} ({} CPUs) on {} threads, {} tokens started {}{}, {:.2} s wall",
            self.machine,
            self.cpus,
            self.threads,
            self.tasks,
            match self.placement {
                Placement::Cpu0 => "on CPU 0",
                Placement::Spread => "spread",
            },
            if self.pairs {
                ", waking their partners"
            } else {
                ""
            },
            self.wall_s
        );
        let _ = writeln!(o, "features: {}", self.features);
        let _ = writeln!(o);
        let _ = writeln!(
            o,
            "newidle balance: {} calls ({:.0}/s), {} past the rd->overloaded and avg_idle gates ({:.0}/s), {} pulled ({:.1}%)",
            t.newidle_calls,
            t.newidle_calls as f64 / s,
            t.newidle_balances,
            t.newidle_balances as f64 / s,
            t.newidle_pulled,
            100.0 * t.newidle_pulled as f64 / (t.newidle_balances.max(1)) as f64
        );
        let _ = writeln!(
            o,
            "  wall time in sched_balance_newidle: {:.3} s, {:.0} ns per call, {:.2}% of the CPUs' busy time (token runs + newidle), {:.2}% of the threads' wall time",
            t.newidle_ns as f64 / 1e9,
            t.newidle_ns as f64 / (t.newidle_calls.max(1)) as f64,
            self.newidle_busy_pct(),
            100.0 * t.newidle_ns as f64 / (s * 1e9 * self.threads as f64),
        );
        let d = &self.sd_lb_stats_newidle;
        let _ = writeln!(
            o,
            "update_sd_lb_stats wall ns, newidle: {} calls, mean {:.0}, p50 {}, p99 {}, max {}",
            d.n, d.mean, d.p50, d.p99, d.max
        );
        let d = &self.sd_lb_stats_periodic;
        let _ = writeln!(
            o,
            "update_sd_lb_stats wall ns, periodic: {} calls, mean {:.0}, p50 {}, p99 {}, max {}",
            d.n, d.mean, d.p50, d.p99, d.max
        );
        let _ = writeln!(o);
        for (title, rows) in [
            ("newidle", &self.newidle),
            ("periodic (idle + busy)", &self.periodic),
        ] {
            let _ = writeln!(o, "{title} by domain level (schedstat, all CPUs):");
            let _ = writeln!(
                o,
                "  {:<6} {:>10} {:>9} {:>10} {:>9} {:>9} {:>9} {:>9} {:>10} {:>9}",
                "level",
                "lb_count",
                "/s",
                "balanced",
                "failed",
                "gained",
                "nobusyg",
                "nobusyq",
                "sg_scan",
                "groups/lb"
            );
            for r in rows.iter() {
                let _ = writeln!(
                    o,
                    "  {:<6} {:>10} {:>9.0} {:>10} {:>9} {:>9} {:>9} {:>9} {:>10} {:>9.1}",
                    r.name,
                    r.count,
                    r.count as f64 / s,
                    r.balanced,
                    r.failed,
                    r.gained,
                    r.nobusyg,
                    r.nobusyq,
                    r.sg_scan,
                    r.sg_scan as f64 / (r.count.max(1)) as f64
                );
            }
        }
        let _ = writeln!(o);
        let _ = writeln!(
            o,
            "pulls: {} ({:.0}/s), token migrations {}, active balances wanted {} (not run: no stopper)",
            self.pulls(),
            self.pulls() as f64 / s,
            self.migrations,
            t.active_wanted
        );
        let _ = writeln!(
            o,
            "failed try-locks: rq locks {} ({:.0}/s), sched_balance_running {}",
            self.rq_lock_contended,
            self.rq_lock_contended as f64 / s,
            self.serialize_failed
        );
        let _ = writeln!(
            o,
            "tokens: {} loops ({:.0}/s), busy {:.1}% of CPU wall time; wakeups {} ({} by a partner), {} onto another CPU",
            t.loops,
            t.loops as f64 / s,
            100.0 * t.busy_ns as f64 / (s * 1e9 * self.cpus as f64),
            t.wakeups,
            t.partner_wakeups,
            t.wakeups - t.wakeups_local
        );
        let _ = writeln!(
            o,
            "conservation: {} ({} tokens, {} missing, {} duplicated, {} nested rq locks)",
            if self.conserved() && t.nested_locks == 0 {
                "ok"
            } else {
                "VIOLATED"
            },
            self.tasks,
            self.missing,
            self.duplicated,
            t.nested_locks
        );
        o
    }
}
