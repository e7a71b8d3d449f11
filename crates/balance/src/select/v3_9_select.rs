//! Linux 3.9's `select_task_rq_fair(p, sd_flag, wake_flags)`, which `--kernel 3.9` runs in
//! place of 6.12's.
//!
//! # Source
//!
//! `kernel/sched/fair.c` of **Linux 3.9.0** (`github:Red54/loongson1-linux-3.9` at
//! `2694001c`, Makefile 3.9.0), `select_task_rq_fair` 3307-3394; `kernel/sched/core.c`
//! `select_task_rq` 1207-1226 and `try_to_wake_up` (`task_waking` then
//! `select_task_rq(p, SD_BALANCE_WAKE, wake_flags)`). Its pieces:
//! [`super::v3_9_wake_affine`], [`super::v3_9_sis`], and the balance loop with
//! `find_idlest_group`/`find_idlest_cpu` in [`super::v3_9_find_idlest`]. 3.9 has no
//! `wake_wide`, `record_wakee` or wakee flips (they came in 3.12), and no power-savings
//! placement (`sched_mc_power_savings` went in 3.4); `SD_PREFER_SIBLING` is read only
//! by the balancer (`update_sd_lb_stats`), not here.
//!
//! # The steps
//!
//! 1. The previous CPU is `task_cpu(p)` (3.9 has no `prev_cpu` argument and no
//!    `wake_cpu`; fairsim's caller passes `p->wake_cpu`, the same CPU). A task allowed on
//!    one CPU stays on it.
//! 2. A wakeup (`SD_BALANCE_WAKE`) wants an affine placement when the waking CPU is
//!    allowed, and starts from the previous CPU; a fork or exec starts from the waking
//!    CPU.
//! 3. Walking up every domain of the waking CPU (one without `SD_LOAD_BALANCE` is
//!    skipped, not an end; every fairsim domain balances): with `want_affine`, the first
//!    `SD_WAKE_AFFINE` domain spanning the previous CPU ends the walk as `affine_sd`;
//!    otherwise each domain with `sd_flag` becomes `sd`, so `sd` is the highest one.
//! 4. With `affine_sd`: when the CPUs differ and `wake_affine` says so, the waking CPU
//!    replaces the previous one as the target; `select_idle_sibling` then picks around
//!    the target, and that is the answer.
//! 5. Otherwise the balance loop descends from `sd`, if any; a wakeup without an affine
//!    domain and without an `SD_BALANCE_WAKE` domain (none of 3.9's initializers sets the
//!    flag) stays on the previous CPU, with no idle search.
//!
//! # Against 4.5 and 6.12
//!
//! - 4.5 and 6.12 start every placement from `prev_cpu`, stop the walk at the first domain
//!   without `sd_flag` when not affine, and run `select_idle_sibling` on every wakeup
//!   that found no balance domain, so a wakeup whose waking CPU is not allowed, or whose
//!   previous CPU is beyond every wake-affine domain (NUMA distance over 30), still looks
//!   for an idle CPU around the previous one; 3.9 returns the previous CPU as it is.
//! - 4.5 and 6.12 skip the affine path when `wake_wide` says the waker has many partners.
//! - 3.9's `select_task_rq` asks the class whatever `nr_cpus_allowed` is, and the class
//!   returns `task_cpu(p)` for a task allowed on one CPU; fairsim's caller, 6.12's, does
//!   not ask the class then and takes the allowed CPU, which is `task_cpu(p)` unless the
//!   mask changed while the task slept.

use fairsim_topology::{SdFlags, SdId};

use crate::sched::{wf, Sched};
use crate::task::TaskId;

impl Sched {
    /// `select_task_rq_fair(p, sd_flag, wake_flags)` of Linux 3.9 (kernel/sched/fair.c),
    /// run on `this_cpu` (`smp_processor_id()`): `wake_affine` and `select_idle_sibling`
    /// in the lowest wake-affine domain spanning both CPUs for a wakeup, the
    /// `find_idlest_group`/`find_idlest_cpu` descent from the highest domain with the
    /// balance flag otherwise. The previous CPU is read as `task_cpu(p)`; `_wake_cpu`
    /// (`p->wake_cpu` from the caller) is the same CPU.
    pub(crate) fn select_task_rq_fair_v3_9(
        &mut self,
        p: TaskId,
        _wake_cpu: usize,
        wake_flags: u32,
        this_cpu: usize,
        _now: u64,
    ) -> usize {
        // SD_BALANCE_* and WF_TTWU/FORK/EXEC share the first nibble.
        let sd_flag = SdFlags(wake_flags & 0xF);
        let cpu = this_cpu;
        let mut prev_cpu = self.tasks[p].cpu;
        let mut new_cpu = cpu;
        let mut want_affine = false;
        let sync = wake_flags & wf::SYNC != 0;

        if self.tasks[p].nr_cpus_allowed == 1 {
            return prev_cpu;
        }

        if sd_flag.intersects(SdFlags::BALANCE_WAKE) {
            if self.tasks[p].allowed_on(cpu) {
                want_affine = true;
            }
            new_cpu = prev_cpu;
        }

        let mut affine_sd: Option<SdId> = None;
        let mut sd: Option<SdId> = None;
        // Every fairsim domain has SD_LOAD_BALANCE, so 3.9's `continue` past one without
        // it never applies.
        for tmp in self.topo.domains_of(cpu) {
            let d = self.topo.domain(tmp);
            // Both cpu and prev_cpu are in this domain: cpu is a valid affine target.
            if want_affine && d.flags.contains(SdFlags::WAKE_AFFINE) && d.span.test(prev_cpu) {
                affine_sd = Some(tmp);
                break;
            }
            if d.flags.intersects(sd_flag) {
                sd = Some(tmp);
            }
        }

        if let Some(asd) = affine_sd {
            if cpu != prev_cpu {
                if self.wake_affine_v3_9(asd, p, cpu, prev_cpu, sync) {
                    prev_cpu = cpu;
                }
                self.count_wake_affine(cpu, prev_cpu);
            }
            return self.select_idle_sibling_legacy_counted(p, prev_cpu);
        }
        if sd.is_some() && sd_flag.intersects(SdFlags::BALANCE_WAKE) {
            self.wake_stats.wake_slow_path += 1;
        }

        match sd {
            // find_idlest_cpu_v3_9 starts from prev_cpu for SD_BALANCE_WAKE and from cpu
            // otherwise, as new_cpu does here.
            Some(sd) => self.find_idlest_cpu_v3_9(sd, p, cpu, prev_cpu, sd_flag),
            None => new_cpu,
        }
    }
}
