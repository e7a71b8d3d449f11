//! Linux 4.5's load balancer (`--kernel 4.5`), on the 3.9 port's state: the functions 4.5
//! changed live here, the ones it kept are 3.9's ([`crate::lb::v3_9`]) generalised to the
//! era, and 4.15's and 4.16's balancer is this one with the differences
//! [`crate::lb::v4_15`] lists.
//!
//! # Sources
//!
//! **Linux 4.5.0**: `github:arthur-lucena/linux-4.5-hw-so` @ f21e75bf (Makefile 4.5.0).
//! Read: kernel/sched/fair.c (`decay_load_missed` .. `cpu_avg_load_per_task`
//! 4388-4615, `cpu_util` 5042, `lb_env` .. `attach_tasks` 5660-6030, `task_h_load` 6115,
//! `enum group_type` .. `find_busiest_queue` 6123-7010, `need_active_balance` ..
//! `load_balance` 7018-7350, `get_sd_balance_interval` .. `idle_balance` 7353-7481,
//! `active_load_balance_cpu_stop` .. `trigger_load_balance` 7483-7989);
//! kernel/sched/core.c (`sd_init`, `update_top_cache_domain`,
//! `init_sched_groups_capacity`, `got_nohz_idle_kick`, `scheduler_ipi`);
//! kernel/sched/sched.h (`SCHED_LOAD_RESOLUTION` is 0: `#if 0` on 64-bit);
//! kernel/time/tick-sched.c (`tick_nohz_idle_enter` calls `set_cpu_sd_state_idle`, the
//! tick's stop `nohz_balance_enter_idle`, `tick_nohz_idle_exit` `update_cpu_load_nohz(0)`);
//! arch/arm/kernel/topology.c (`arch_scale_cpu_capacity` is `cpu_scale`, from the 3.9
//! efficiency table and `clock-frequency`).
//!
//! # What 4.5 changed from 3.9, and where each change is
//!
//! - **Load** (`weighted_cpuload`): PELT's `cfs_rq->runnable_load_avg`, not
//!   `rq->load.weight` ([`crate::lb::v3_9::cpu_load`], rebuilt per task as
//!   [`crate::sched::Sched::weighted_cpuload_v4_15`]); `task_h_load` is the task's
//!   `se.avg.load_avg` ([`detach`]). `cpu_load[]` keeps 3.9's tables and updates
//!   (4.5's `active` argument only matters for NO_HZ_FULL).
//! - **Capacity** ("power" renamed): `capacity_of`, `capacity_orig_of`,
//!   `update_cpu_capacity` from `arch_scale_cpu_capacity` (the SMT gain folded in),
//!   `update_group_capacity`, `check_cpu_capacity`, `scale_rt_capacity` ([`capacity`]).
//! - **Group statistics** ([`find_busiest`]): `enum group_type { group_other,
//!   group_imbalanced, group_overloaded }`, `group_has_capacity` and
//!   `group_is_overloaded` on utilization with `imbalance_pct`, `sgc->imbalance` set by a
//!   balance that affinity defeated, `update_sd_pick_busiest` by class then `avg_load`,
//!   `calculate_imbalance` capping the pull only between two overloaded groups,
//!   capacity-scaled `find_busiest_queue` with `check_cpu_capacity`, and
//!   `should_we_balance` on its own.
//! - **Migration** ([`detach`]): `detach_tasks`/`attach_tasks` with `LBF_DST_PINNED`,
//!   `LB_MIN`, `env->loop_max` (`sysctl_sched_nr_migrate`), never emptying the source in
//!   an idle balance; `task_hot` with the next and the last buddy (`CfsRq::next`,
//!   `CfsRq::last`).
//! - **`load_balance`** ([`balance`]): who balances, the pinned retries, the parent's
//!   imbalance flag, `need_active_balance` for reduced capacity, the stopper.
//! - **Newly idle** ([`newidle`]): `idle_balance(this_rq)` with `rd->overload`,
//!   `max_newidle_lb_cost` against `avg_idle`, `sysctl_sched_migration_cost`.
//! - **Triggers** ([`triggers`]): `rebalance_domains` with the newidle cost decay,
//!   `nohz_idle_balance` of due CPUs before the CPU's own balance, `nohz_kick_needed` on
//!   the LLC's busy CPUs and reduced capacity.
//! - **Domains** (`sd_init`, in [`crate::lb::v3_9::SdParamsV3_9::for_domain`]): every
//!   level's intervals scale with its weight (min `w`, max `2w` ms, `balance_interval`
//!   `w`), `busy_factor` 32, `imbalance_pct` 125 (SMT 110, LLC 117), `cache_nice_tries`
//!   0 (LLC and above 1, NUMA 2), `busy_idx` 2 (SMT 0, NUMA 3), `idle_idx` 0 (NUMA 2,
//!   above the LLC 1), `newidle_idx`, `wake_idx` and `forkexec_idx` 0,
//!   `SD_PREFER_SIBLING` on SMT levels and levels above the LLC.
//!
//! # Not modelled
//!
//! `SD_ASYM_PACKING` (`check_asym_packing`, its branches in `update_sd_pick_busiest`,
//! `need_active_balance` and `nohz_kick_needed`), NUMA balancing (`fbq_type`,
//! `migrate_degrades_locality`), group scheduling (`task_h_load` is the task's own load),
//! CPU hotplug, RT tasks (`scale_rt_capacity` is 1024, `pulled_task` is never -1), and
//! `CONFIG_PREEMPT`'s early stop of a newly idle `detach_tasks`. fairsim's PELT is
//! 6.12's (its `util_avg` is scaled by 6.12's CPU capacity, where 4.5 scaled by
//! `cpu_scale`); `nr_running` leaves 6.12's delayed entities out.

pub mod balance;
pub mod capacity;
pub mod detach;
pub mod find_busiest;
pub mod newidle;
pub mod triggers;
