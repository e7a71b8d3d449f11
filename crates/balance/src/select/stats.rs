//! Where wakeups went: counters of `select_task_rq_fair`'s paths and of
//! `select_idle_sibling`'s outcomes, so that a wakeup-placement idea can be seen at work
//! and not only in its end results.
//!
//! The kernel keeps only `ttwu_wake_remote`, `ttwu_move_affine` and `ttwu_move_balance`
//! per domain (`/proc/schedstat`), which say nothing of which idle-CPU test found the CPU
//! or how far the LLC scan went. These are fairsim's own counts, the ones a developer
//! would add with a few `schedstat_inc()`s or bpftrace probes on `select_idle_sibling`'s
//! returns: each is counted where the kernel function takes that branch, in every era
//! whose `select_idle_sibling` fairsim runs. They are counted over the measured window
//! (`Sched::reset_schedstat` clears them) and cost no modelled time.

/// Which test of `select_idle_sibling` gave the CPU (the order of its checks in 6.12).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SisOutcome {
    /// The target itself was idle.
    Target,
    /// The cache-affine previous CPU was idle.
    Prev,
    /// The task's `recent_used_cpu` was idle.
    RecentUsed,
    /// `select_idle_capacity` found an idle CPU that fits (asymmetric-capacity machines).
    Capacity,
    /// `select_idle_smt` found an idle SMT sibling of the previous CPU.
    SmtSibling,
    /// The LLC scan found an idle core.
    IdleCore,
    /// The LLC scan found an idle CPU (the first idle one, or an idle core's CPU on an
    /// era whose scan looks for cores by group).
    IdleCpu,
    /// Nothing idle: a fallback candidate (a cluster-external `prev` or recent CPU) or
    /// the target, busy.
    NoneIdle,
}

impl SisOutcome {
    /// Every outcome, in the order of the checks.
    pub const ALL: [SisOutcome; 8] = [
        SisOutcome::Target,
        SisOutcome::Prev,
        SisOutcome::RecentUsed,
        SisOutcome::Capacity,
        SisOutcome::SmtSibling,
        SisOutcome::IdleCore,
        SisOutcome::IdleCpu,
        SisOutcome::NoneIdle,
    ];

    /// The outcome's name in the JSON and the summary.
    pub fn name(self) -> &'static str {
        match self {
            SisOutcome::Target => "target",
            SisOutcome::Prev => "prev",
            SisOutcome::RecentUsed => "recent_used_cpu",
            SisOutcome::Capacity => "idle_capacity",
            SisOutcome::SmtSibling => "smt_sibling",
            SisOutcome::IdleCore => "idle_core",
            SisOutcome::IdleCpu => "idle_cpu",
            SisOutcome::NoneIdle => "none_idle",
        }
    }
}

/// The kind of `select_task_rq_fair` call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SelectKind {
    /// A wakeup (`WF_TTWU`).
    Wakeup,
    /// A fork (`WF_FORK`).
    Fork,
    /// An exec (`WF_EXEC`).
    Exec,
}

/// The placement counters of a run (see the module documentation).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WakeStats {
    /// `select_task_rq_fair` calls for wakeups, forks and execs.
    pub calls: [u64; 3],
    /// Wakeups that `find_energy_efficient_cpu` placed (EAS, the root domain not
    /// overutilized).
    pub eas: u64,
    /// Wakeups that `wake_wide` kept from the affine path.
    pub wake_wide: u64,
    /// Wakeups that called `wake_affine` (an affine domain spans both CPUs and the waker's
    /// CPU is not the previous one).
    pub affine_calls: u64,
    /// Of those, the ones `wake_affine` sent to the waker's CPU.
    pub affine_pulled: u64,
    /// Wakeups placed by the slow path (a domain with `SD_BALANCE_WAKE`).
    pub wake_slow_path: u64,
    /// `select_idle_sibling` outcomes, in [`SisOutcome::ALL`]'s order.
    pub sis: [u64; 8],
    /// `select_idle_cpu` scans that SIS_UTIL skipped (`nr_idle_scan` was 0).
    pub scans_skipped: u64,
    /// `select_idle_cpu` scans that ran.
    pub scans: u64,
    /// The sum of the SIS_UTIL `nr_idle_scan` limits the scans read.
    pub nr_idle_scan_sum: u64,
    /// How many scans read a SIS_UTIL limit.
    pub nr_idle_scan_reads: u64,
    /// Scans that stopped at SIS_UTIL's limit without finding an idle CPU.
    pub scans_limited: u64,
    /// CPUs whose state the calls read, by kind (the idle-CPU tests and scans of the fast
    /// path; the groups' CPUs of the slow path).
    pub cpus_scanned: [u64; 3],
    /// Wakeups whose chosen CPU was not idle when it was chosen (the waker's own CPU on a
    /// sync wakeup among them).
    pub wakeups_on_busy: u64,
}

impl WakeStats {
    /// Counts one call of `kind` that read `cpus` CPUs and chose a CPU that was `busy`.
    pub(crate) fn record(&mut self, kind: SelectKind, cpus: u64, busy: bool) {
        let k = kind as usize;
        self.calls[k] += 1;
        self.cpus_scanned[k] += cpus;
        if kind == SelectKind::Wakeup && busy {
            self.wakeups_on_busy += 1;
        }
    }

    /// The count of `select_idle_sibling` calls that ended in `o`.
    pub fn sis_count(&self, o: SisOutcome) -> u64 {
        self.sis[o as usize]
    }

    /// `select_idle_sibling` calls in all.
    pub fn sis_calls(&self) -> u64 {
        self.sis.iter().sum()
    }

    /// Calls of `kind`.
    pub fn calls_of(&self, kind: SelectKind) -> u64 {
        self.calls[kind as usize]
    }

    /// CPUs read by calls of `kind`.
    pub fn cpus_scanned_of(&self, kind: SelectKind) -> u64 {
        self.cpus_scanned[kind as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_by_kind_and_outcome() {
        let mut s = WakeStats::default();
        s.record(SelectKind::Wakeup, 3, true);
        s.record(SelectKind::Wakeup, 1, false);
        s.record(SelectKind::Fork, 8, true);
        assert_eq!(s.calls_of(SelectKind::Wakeup), 2);
        assert_eq!(s.calls_of(SelectKind::Fork), 1);
        assert_eq!(s.cpus_scanned_of(SelectKind::Wakeup), 4);
        assert_eq!(s.cpus_scanned_of(SelectKind::Fork), 8);
        // A fork onto a busy CPU is no wakeup on a busy CPU.
        assert_eq!(s.wakeups_on_busy, 1);
        s.sis[SisOutcome::Prev as usize] += 2;
        assert_eq!(s.sis_count(SisOutcome::Prev), 2);
        assert_eq!(s.sis_calls(), 2);
        let names: Vec<_> = SisOutcome::ALL.iter().map(|o| o.name()).collect();
        assert_eq!(names.len(), 8);
        assert!(SisOutcome::ALL
            .iter()
            .enumerate()
            .all(|(i, o)| *o as usize == i));
    }
}
