//! Linux 6.5's load balancer where it differs from 6.12.117's, which `--kernel 6.5`
//! selects ([`crate::lb::era::Balancer::V6_5`]), with seed 000's ILB patches (posted on
//! 6.5-rc2) on 6.5's `update_sd_lb_stats`; the wakeup side is
//! [`crate::select::v6_5_select`].
//!
//! # Sources
//!
//! - **Linux 6.5.0**: `github:sndrzt/linux-6.5` @ f5744aac (Makefile 6.5.0), read
//!   `kernel/sched/fair.c`: `update_misfit_status` 4631, `select_idle_core` 6887,
//!   `select_idle_smt` 6918, `select_idle_cpu` 6960, `select_idle_capacity` 7054,
//!   `select_idle_sibling` 7119, `select_task_rq_fair` 7727, `task_hot` 8479,
//!   `can_migrate_task` 8585, `detach_tasks` 8721, `check_misfit_status` 9290,
//!   `group_classify` 9386, `update_sg_lb_stats` 9489, `update_sd_pick_busiest` 9581,
//!   `update_sd_lb_stats` 10141, `calculate_imbalance` 10220, `find_busiest_group` 10417,
//!   `find_busiest_queue` 10549, `should_we_balance` 10764, `load_balance` 10806,
//!   `update_newidle_cost` 11204, `rebalance_domains` 11234, `kick_ilb` 11354,
//!   `nohz_balancer_kick` 11390, `newidle_balance` 11823; `kernel/sched/core.c`
//!   (`ttwu_do_activate` 3801 and `sched_init` 10027 for SIS_PROP's `wake_avg_idle`);
//!   `kernel/sched/topology.c` (`sd_init`, identical to 6.12.0's but for the
//!   `SD_SHARE_PKG_RESOURCES` name).
//! - **Linux 6.12.0**: `github:shilei-massclouds/linux-6.12` @ 2974a9e7, the same
//!   functions under their 6.10 names, diffed function by function against 6.5's; and
//!   `../shared/reference/fair-map.md` §0.2 for what 6.12.117 (fairsim's base) adds.
//! - **Seed 000** (`../shared/seeds/000_6528b624d129f86d.txt`, patches 3/7 to 7/7): the
//!   hunks of `update_sd_lb_stats` as posted on 6.5-rc2.
//!
//! # Differences from 6.12.117, and what fairsim does with each
//!
//! Wakeup placement ([`crate::select::v6_5_select`]):
//!
//! 1. `select_task_rq_fair`: 6.5 has no `WF_CURRENT_CPU` return (fairsim makes no such
//!    wakeups) and tests `sched_energy_enabled()` where 6.12 tests
//!    `!is_rd_overutilized()` before EAS (no energy model here: neither runs). Ported
//!    (the function calls 6.5's `select_idle_sibling`); no decision differs by itself.
//! 2. `select_idle_sibling`: 6.5 has no cluster pass (`sched_cluster_active`,
//!    `cpus_share_resources`, `prev_aff`, the fallback to a cache-affine prev or recent
//!    CPU after a failed scan): an idle cache-affine `prev` or `recent_used_cpu` is taken
//!    at once. Ported. It decides differently only on machines with an `SD_CLUSTER`
//!    level, which no preset has (a machine file can).
//! 3. `select_idle_smt(p, target)`: 6.5 does not test that the sibling is in the LLC
//!    domain (6.12 does, for isolcpus). Ported; the same on every fairsim machine, whose
//!    siblings always share the LLC.
//! 4. `select_idle_cpu`: 6.5 still has SIS_PROP (off by default), with its per-CPU
//!    `wake_avg_idle` aged per jiffy, the LLC's `avg_scan_cost`, and the scan time
//!    charged against both; no cluster pass; `!--nr` where 6.12 has `--nr <= 0`. Ported
//!    with SIS_PROP (`rq->wake_stamp`/`wake_avg_idle` in [`crate::lb::RqLb`], the LLC's
//!    `avg_scan_cost` in [`crate::lb::SdRuntime`]).
//! 5. `select_idle_core`: 6.5 remembers an idle thread that `p` may use
//!    (`p->cpus_ptr`), 6.12 one still in the scan mask. Ported; the same outcome without
//!    a cluster pass.
//! 6. `select_idle_capacity`: 6.5 starts the scan at `target + 1` (6.12 at `target`), so
//!    an idle `target` that does not fit is the last candidate rather than the first,
//!    and ties on capacity go to the CPU after it. Ported: it decides differently on
//!    big.LITTLE (TC2, RK3399). 6.5 reads `capacity_orig - thermal_load_avg` where 6.12
//!    reads `get_actual_cpu_capacity`: both are the original capacity here (no thermal or
//!    cpufreq pressure is modelled).
//! 7. `wake_affine*`, `wake_wide`, `record_wakee`, `find_idlest_*` (6.12's
//!    `sched_balance_find_dst_*`), `update_idle_cpu_scan`, `__update_idle_core`: the same
//!    code (`find_idlest_group` lacks a `group_smt_balance` case that the wakeup
//!    statistics never produce). Not ported: 6.12's run.
//! 8. `cpu_util(.., boost)`: 6.5 also boosts `util_est` by `runnable`, which changes
//!    nothing since `util` already is at least `runnable` then. Not ported.
//!
//! Load balancing (this module):
//!
//! 9. `newidle_balance` ([`newidle`]): 6.5 stops after a domain when a task was pulled,
//!    or this runqueue has a task or a queued wakeup (`nr_running > 0 || ttwu_pending`),
//!    and tests that after every domain, with or without `SD_BALANCE_NEWIDLE`; 6.12
//!    stops on `!continue_balancing`, which `should_we_balance` clears at the *next*
//!    domain's balance, after counting it (`lb_count`, `lb_balanced`) and after its cost
//!    check. Each domain's `continue_balancing` starts at 1 in 6.5. 6.5 has no NI_RANDOM
//!    (off through a hidden feature bit already) and its `update_newidle_cost(sd, cost)`
//!    keeps no success statistics. Ported.
//! 10. `load_balance` ([`balance`]): after `LBF_NEED_BREAK` 6.5 goes back to
//!     `more_balance` only while `env.loop < busiest->nr_running`; a `migrate_misfit`
//!     failure counts in `nr_balance_failed` and backs off `balance_interval` (6.12.117
//!     exempts misfit from both). Ported.
//! 11. `detach_tasks`: 6.5 keeps walking past `loop_max` while no movable task was found
//!     (`LBF_ALL_PINNED`), and compares a task's whole `util_est` with a `migrate_util`
//!     imbalance (6.12 shifts it right by `nr_balance_failed`). Ported.
//! 12. `task_hot`: 6.5's cache-hot buddy test also takes the `last` buddy (CFS's
//!     LAST_BUDDY). Ported ([`crate::lb::detach::MoveTasks::src_cfs_last`]).
//! 13. `should_we_balance`: 6.5 lets the first idle CPU of the group balance; 6.12 prefers
//!     a CPU of a fully idle core and falls back to the first idle SMT thread. Ported: it
//!     changes who balances on every SMT preset.
//! 14. Group classification ([`stats`]): 6.5 has no `group_smt_balance` (no
//!     `smt_balance()`, so an SMT group running two tasks is fully busy or has spare
//!     instead of outranking them). `group_classify` itself is 6.12's with that flag never
//!     set. Ported.
//! 15. `update_sg_lb_stats`: not a difference. A misfit task sets `SG_OVERLOAD` in 6.5
//!     as it sets `sg_overloaded` in 6.12.117 (whose port lacked it until issue 37); the
//!     6.5 function keeps its own copy for item 14.
//! 16. `update_sd_pick_busiest`: 6.5 has no `smt_vs_nonsmt_groups` has-spare rule, no
//!     `dst_core_idle` misfit test (a 6.12.117 backport), and tests "do not pull from
//!     bigger CPUs" after the same-type comparison, so a fully busy or has-spare group of
//!     big CPUs that outranks the busiest so far is picked by a little CPU (6.12.117 tests
//!     it first). Ported.
//! 17. `find_busiest_group` / `calculate_imbalance`: 6.5's `prefer_sibling` imbalance is
//!     the difference in running tasks (6.12's `sibling_imbalance` weighs by cores and is
//!     0 for a busy CPU), its force test is `busiest->sum_nr_running >
//!     local->sum_nr_running + 1`; no `group_smt_balance` cases; the energy test is
//!     `sched_energy_enabled()` (never here). Ported.
//! 18. `update_misfit_status` and `check_misfit_status`: 6.5 flags a misfit task on the
//!     biggest CPU it may use too (6.12 not), and its nohz kick for a misfit needs the CPU
//!     to be below the root domain's largest capacity or to have lost capacity. Ported;
//!     asymmetric machines only.
//! 19. `find_busiest_queue`, `need_active_balance`, `asym_active_balance`,
//!     `active_load_balance_cpu_stop`, `can_migrate_task` (but `task_hot`),
//!     `rebalance_domains`, `run_rebalance_domains`, `trigger_load_balance`,
//!     `nohz_idle_balance`, `_nohz_idle_balance`, `nohz_newidle_balance`,
//!     `update_blocked_averages`, `update_group_capacity`, `get_sd_balance_interval`:
//!     6.5 writes the asym-packing tests with an explicit `SD_ASYM_PACKING` check that
//!     6.12 moved into `sched_use_asym_prio`, and 6.5's `kick_ilb` does not skip a kick
//!     whose flags are all set already (it then returns on `NOHZ_KICK_MASK`, the same
//!     outcome); otherwise renames. Not ported: 6.12's run.
//! 20. Not relevant to fairsim: `cpu_overutilized`/`rd->overutilized` (EAS only),
//!     `scale_rt_capacity` and `util_fits_cpu` (thermal pressure, not modelled),
//!     `fbq_type` (NUMA balancing), SCHED_IDLE, cgroup throttling
//!     (`throttled_lb_pair`), per-CPU kthreads, core scheduling.
//!
//! Race mode still runs 6.12's balancer for `--kernel 6.5`: its hosts answer
//! `BalanceHost::balancer` with the default, and the functions here are written over the
//! same traits so that a host could select them.

pub mod balance;
pub mod newidle;
pub mod stats;
