//! Linux 3.9's `select_idle_sibling(p, target)` and `idle_cpu()`, which `--kernel 3.9`'s
//! [`super::v3_9_select`] calls.
//!
//! # Source
//!
//! `kernel/sched/fair.c` of **Linux 3.9.0** (`github:Red54/loongson1-linux-3.9` at
//! `2694001c`, Makefile 3.9.0), `select_idle_sibling` 3253-3293; `kernel/sched/core.c`
//! `idle_cpu` 3746-3762 (ported with the 3.9 balancer as [`Sched::idle_cpu_v3_9`]) and
//! `build_sched_groups` (the group list the walk follows).
//!
//! # What 3.9 does
//!
//! An idle `target` is kept; else an idle previous CPU (`task_cpu(p)`) that shares the
//! LLC with `target`; else, from `sd_llc(target)` down through the child domains, the
//! first group (in list order from `target`'s) that the task may use, whose CPUs are all
//! idle and do not include `target`, gives its first allowed CPU; else `target`.
//!
//! # Against 4.5's
//!
//! This is the form the function took in the 3.9 merge window (before it, `target` was
//! kept only when it was the waking CPU or the previous CPU and idle, and an idle
//! previous CPU other than `target` was not looked at), and it is the form 3.9.0's tree
//! has. 4.5's ([`super::v4_5_sis`]) is the same text: the same
//! two early returns (`idle_cpu(target)`; then the previous CPU, when it differs from
//! `target`, shares its cache and is idle), the same walk over the same group lists
//! (3.9's and 4.5's `build_sched_groups` link the groups in the same order), and the
//! same `idle_cpu()` (the idle task current, `nr_running` 0, an empty `wake_list`). So
//! the walk is [`Sched::sis_v4_5_lower_domains`]; its idle test reads `nr_running`
//! with 6.12's delayed entities, which the CFS kernels never have queued, where
//! [`Sched::idle_cpu_v3_9`] leaves them out. What differs is around the call:
//! 3.9's `select_task_rq_fair` asks `select_idle_sibling` only when it found a
//! wake-affine domain and returns the previous CPU untouched otherwise (4.5 asks on
//! every wakeup that has no balance domain), and seed 001's SIS_FIRST_IDLE, a patch
//! on 4.5, is not read here.
//!
//! # Cost
//!
//! As in the 4.5 port: each CPU the walk reads is one visit; the checks of `target` and
//! of the previous CPU are not counted.

use crate::lb::view::LbRead;
use crate::sched::Sched;
use crate::task::TaskId;

impl Sched {
    /// `select_idle_sibling(p, target)` of Linux 3.9 (kernel/sched/fair.c): an idle
    /// `target`; else an idle previous CPU (`task_cpu(p)`, not checked against the
    /// task's allowed CPUs: `select_task_rq()`'s fallback handles that) sharing
    /// `target`'s LLC; else the first fully idle group below `sd_llc(target)` that does
    /// not hold `target` ([`Sched::sis_v4_5_lower_domains`], the same walk); else
    /// `target`.
    pub fn select_idle_sibling_v3_9(&self, p: TaskId, target: usize) -> usize {
        let i = self.tasks[p].cpu;

        if self.idle_cpu_v3_9(target) {
            return target;
        }

        // If the previous CPU is cache affine and idle, don't be stupid.
        if i != target && self.cpus_share_cache(i, target) && self.idle_cpu_v3_9(i) {
            return i;
        }

        self.sis_v4_5_lower_domains(p, target)
    }
}
