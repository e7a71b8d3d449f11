//! The task groups' report ([`fairsim_engine::cgroup`]): per group, root first and then in
//! creation order, its weight as `cpu.weight` and `cpu.weight.nice` read it back, its
//! tasks, and `cpu.stat`'s times over the window, each group's covering its
//! descendants' as the kernel's hierarchical `cpu.stat` does.
//!
//! The times come from the engine's per-task counters, not from the scheduler's groups:
//! `usage_usec` is the tasks' `se.sum_exec_runtime` (what `cgroup_account_cputime`
//! charges from `update_curr`), `user_usec` and `system_usec` split it in the ratio of the
//! tasks' user and system tick samples (`cgroup_base_stat_cputime_show` runs
//! `cputime_adjust` on the group's sums, under `CONFIG_TICK_CPU_ACCOUNTING` as the
//! engine models it), and `wait_usec` is the tasks' `sched_info.run_delay`. The root's
//! row sums every task the same way; the kernel's root `cpu.stat` reads the machine's
//! `kcpustat` instead, which also counts interrupt time no task was charged.
//!
//! Nothing here shows without a group besides the root, so that other runs read as they
//! did.

use serde_json::{json, Value};

use fairsim_balance::group::{
    cpu_weight_from_shares, cpu_weight_nice_from_shares, ROOT_GROUP, RUNTIME_INF,
};

use fairsim_engine::world::Outcome;
use fairsim_workloads::cputime_adjust;

/// One group's row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CgroupRow {
    /// Its path (`/` for the root).
    pub path: String,
    /// `cpu.weight` as it reads back; `None` for the root, which has no such file.
    pub weight: Option<u64>,
    /// `cpu.weight.nice` as it reads back; `None` for the root.
    pub weight_nice: Option<i64>,
    /// Tasks the run forked into the group itself (exited ones included).
    pub tasks: u64,
    /// The same with every descendant's.
    pub tasks_total: u64,
    /// CPU time of its and its descendants' tasks over the window, ns.
    pub usage_ns: u64,
    /// Their user time (`usage_ns` split by the tick samples), ns.
    pub user_ns: u64,
    /// Their system time, ns.
    pub system_ns: u64,
    /// Time they waited on a runqueue, ns.
    pub wait_ns: u64,
    /// `cpu.idle`; `None` for the root.
    pub idle: Option<bool>,
    /// `cpu.max` as it reads back (`50000 100000`, `max 100000`); `None` for the root.
    pub max: Option<String>,
    /// `cpu.max.burst` in us; `None` for the root.
    pub burst_us: Option<u64>,
    /// `cpu.stat`'s bandwidth counters over the window; `None` for the root.
    pub bw: Option<BwStat>,
}

/// `cpu.stat`'s CFS bandwidth lines (`cpu_extra_stat_show`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BwStat {
    /// `nr_periods`: periods the group's timer ran with a quota.
    pub nr_periods: u64,
    /// `nr_throttled`: periods that found a runqueue of the group throttled.
    pub nr_throttled: u64,
    /// `throttled_usec` in ns: the runqueues' throttled time, summed.
    pub throttled_ns: u64,
    /// `nr_bursts`.
    pub nr_bursts: u64,
    /// `burst_usec` in ns.
    pub burst_ns: u64,
}

impl CgroupRow {
    /// The group's share of all tasks' CPU time (the root's usage), in percent.
    pub fn share_pct(&self, all_ns: u64) -> f64 {
        if all_ns == 0 {
            0.0
        } else {
            self.usage_ns as f64 * 100.0 / all_ns as f64
        }
    }
}

/// Every group's row, root first and then in creation order, or nothing when the run
/// has no group besides the root.
pub fn cgroup_rows(w: &Outcome) -> Vec<CgroupRow> {
    let tg = w.sched().task_groups();
    if !tg.active() {
        return Vec::new();
    }
    let n = tg.tgs.len();
    // Per group, its own tasks' sums: tasks, runtime, run delay, user and system ticks.
    let mut own = vec![[0u64; 5]; n];
    for x in 0..w.tasks().len() {
        let Some(sid) = w.tasks()[x].sched_id else {
            continue;
        };
        let m = w.task_metrics(x);
        let g = tg.group_of(sid).min(n - 1);
        for (acc, v) in
            own[g]
                .iter_mut()
                .zip([1, m.runtime_ns, m.run_delay_ns, m.user_ticks, m.sys_ticks])
        {
            *acc += v;
        }
    }
    // Each group's sums cover its descendants': add every group's own sums to it and to
    // each of its ancestors (the root included).
    let mut total = vec![[0u64; 5]; n];
    for (g, sums) in own.iter().enumerate() {
        let mut at = Some(g);
        while let Some(a) = at {
            for (t, v) in total[a].iter_mut().zip(sums) {
                *t += v;
            }
            at = tg.tgs[a].parent;
        }
    }
    (0..n)
        .map(|g| {
            let [tasks_total, usage_ns, wait_ns, user_ticks, sys_ticks] = total[g];
            let (user_ns, system_ns) = cputime_adjust(usage_ns, user_ticks, sys_ticks);
            let shares = tg.tgs[g].shares >> 10;
            let child = g != ROOT_GROUP;
            let b = &tg.tgs[g].bw;
            let max = if b.quota == RUNTIME_INF {
                format!("max {}", b.period / 1000)
            } else {
                format!("{} {}", b.quota / 1000, b.period / 1000)
            };
            CgroupRow {
                path: tg.tgs[g].path.clone(),
                weight: child.then(|| cpu_weight_from_shares(shares)),
                weight_nice: child.then(|| cpu_weight_nice_from_shares(shares)),
                tasks: own[g][0],
                tasks_total,
                usage_ns,
                user_ns,
                system_ns,
                wait_ns,
                idle: child.then_some(tg.tgs[g].idle),
                max: child.then_some(max),
                burst_us: child.then_some(b.burst / 1000),
                bw: child.then_some(BwStat {
                    nr_periods: b.nr_periods,
                    nr_throttled: b.nr_throttled,
                    throttled_ns: b.throttled_time,
                    nr_bursts: b.nr_burst,
                    burst_ns: b.burst_time,
                }),
            }
        })
        .collect()
}

/// The JSON's `cgroups` array, or `None` without groups.
pub(super) fn json(w: &Outcome) -> Option<Value> {
    let rows = cgroup_rows(w);
    let all = rows.first()?.usage_ns;
    let tg = w.sched().task_groups();
    let list = rows
        .iter()
        .enumerate()
        .map(|(g, r)| {
            json!({
                "path": r.path,
                "parent": tg.tgs[g].parent.map(|p| tg.tgs[p].path.clone()),
                "cpu.weight": r.weight,
                "cpu.weight.nice": r.weight_nice,
                "tasks": r.tasks,
                "tasks_total": r.tasks_total,
                "usage_usec": r.usage_ns / 1000,
                "user_usec": r.user_ns / 1000,
                "system_usec": r.system_ns / 1000,
                "wait_usec": r.wait_ns / 1000,
                "share_pct": r.share_pct(all),
                "cpu.idle": r.idle.map(u8::from),
                "cpu.max": r.max,
                "cpu.max.burst": r.burst_us,
                "nr_periods": r.bw.map(|b| b.nr_periods),
                "nr_throttled": r.bw.map(|b| b.nr_throttled),
                "throttled_usec": r.bw.map(|b| b.throttled_ns / 1000),
                "nr_bursts": r.bw.map(|b| b.nr_bursts),
                "burst_usec": r.bw.map(|b| b.burst_ns / 1000),
            })
        })
        .collect();
    Some(Value::Array(list))
}

/// The summary's table of groups, or nothing without groups.
pub(super) fn summary_section(w: &Outcome) -> String {
    let rows = cgroup_rows(w);
    let Some(all) = rows.first().map(|r| r.usage_ns) else {
        return String::new();
    };
    let width = rows.iter().map(|r| r.path.len()).max().unwrap_or(1).max(4);
    let mut s = String::from(
        "cgroups (cpu.stat over the window, each group with its descendants; share of all task CPU time):\n",
    );
    s.push_str(&format!(
        "  {:<width$}  weight  w.nice  tasks  total  usage-ms   user-ms  system-ms   wait-ms   share\n",
        "path"
    ));
    let ms = |ns: u64| format!("{:.1}", ns as f64 / 1e6);
    let opt = |v: Option<String>| v.unwrap_or_else(|| "-".to_string());
    for r in &rows {
        s.push_str(&format!(
            "  {:<width$}  {:>6}  {:>6}  {:>5}  {:>5}  {:>8}  {:>8}  {:>9}  {:>8}  {:>5.1}%\n",
            r.path,
            opt(r.weight.map(|v| v.to_string())),
            opt(r.weight_nice.map(|v| v.to_string())),
            r.tasks,
            r.tasks_total,
            ms(r.usage_ns),
            ms(r.user_ns),
            ms(r.system_ns),
            ms(r.wait_ns),
            r.share_pct(all),
        ));
    }
    // Bandwidth control's lines, for the groups with a quota or idle.
    let limited: Vec<&CgroupRow> = rows
        .iter()
        .filter(|r| r.idle == Some(true) || r.max.as_deref().is_some_and(|m| !m.starts_with("max")))
        .collect();
    if !limited.is_empty() {
        s.push_str(&format!(
            "  {:<width$}  idle  {:>15}  burst-us  periods  throttled  throttled-ms  bursts  burst-ms\n",
            "path", "cpu.max"
        ));
        for r in limited {
            let b = r.bw.unwrap_or(BwStat {
                nr_periods: 0,
                nr_throttled: 0,
                throttled_ns: 0,
                nr_bursts: 0,
                burst_ns: 0,
            });
            s.push_str(&format!(
                "  {:<width$}  {:>4}  {:>15}  {:>8}  {:>7}  {:>9}  {:>12}  {:>6}  {:>8}\n",
                r.path,
                u8::from(r.idle == Some(true)),
                r.max.as_deref().unwrap_or("-"),
                r.burst_us.unwrap_or(0),
                b.nr_periods,
                b.nr_throttled,
                ms(b.throttled_ns),
                b.nr_bursts,
                ms(b.burst_ns),
            ));
        }
    }
    s
}
