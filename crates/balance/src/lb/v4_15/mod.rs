//! Linux 4.15's load balancer (`--kernel 4.15`; 4.16 runs it too): 4.5's
//! ([`crate::lb::v4_5`]) with the differences below. The functions that changed only in a
//! clause take it at their place under `Balancer::V4_15`; what 4.15 added as functions
//! lives here.
//!
//! # Sources
//!
//! **Linux 4.15.0**: `github:sndrzt/linux-4.15` @ 6ea06264 (Makefile 4.15.0). Read:
//! kernel/sched/fair.c (`cpu_load_update` .. `cpu_avg_load_per_task` 5389-5640, `task_hot`
//! .. `attach_tasks` 6974-7330, `enum group_type` .. `find_busiest_queue` 7452-8385,
//! `need_active_balance` .. `trigger_load_balance` 8386-9400), kernel/sched/topology.c
//! (`sd_init`), kernel/sched/sched.h (`arch_scale_cpu_capacity`, `NICE_0_LOAD`),
//! kernel/time/tick-sched.c (`cpu_load_update_nohz_start/stop`),
//! drivers/base/arch_topology.c and arch/arm/kernel/topology.c (`cpu_scale` from
//! `capacity-dmips-mhz` and the maximum frequency). **Linux 4.16.13**
//! (`github:lizuobin/linux-4.16.13_tiny4412` @ 92bab218): every balancer function above
//! is line for line 4.15.0's (only `cpu_util`'s return type changed), so `--kernel 4.16`
//! runs this balancer.
//!
//! # What 4.15 changed from 4.5
//!
//! - `cpu_load[]`: the tickless load is kept over a tickless period and the restart's
//!   load fed in ([`cpu_load`]).
//! - Capacity: `sgc->min_capacity` ([`capacity`]); ARM's `cpu_scale` comes from the
//!   device tree's `capacity-dmips-mhz` ([`crate::sched::Sched::arch_scale_cpu_capacity_v4_5`]).
//! - `update_sd_pick_busiest`: the `SD_ASYM_CPUCAPACITY` clause with
//!   `group_smaller_cpu_capacity` ([`find_busiest`]); no 4.15 architecture sets the flag,
//!   so it is off on every machine unless a test sets it.
//! - `update_sd_lb_stats`: a remote group counts as overloaded for `SD_PREFER_SIBLING`
//!   only with two more tasks than the local group (4.5: more than one task); LLC levels
//!   prefer siblings too (`sd_init`).
//! - `find_busiest_group`: any idle balance (not only newly idle) forces a pull from an
//!   overloaded group into a local group with spare capacity.
//! - `calculate_imbalance`: the load above capacity is the excess tasks' capacity scaled
//!   to a load (4.5 subtracted a capacity from a load).
//! - `load_balance`: `env->cpus` is the domain's span; an all-pinned source is retried
//!   only while CPUs outside the local group remain.
//! - `detach_tasks` and `detach_one_task` walk `cfs_tasks` from the tail (the pick moves
//!   a task to the head in 4.15), rotating skipped tasks to the head.
//! - `active_load_balance_cpu_stop` resets `nr_balance_failed` after a push.
//! - `nohz_kick_needed` reads the LLC's `sched_domain_shared` busy count (4.5: the
//!   group of `sd_busy`, absent when the LLC is the top level).
//! - Unchanged: `task_hot`, `can_migrate_task` (4.15 tests `CPU_NEWLY_IDLE` where 4.5
//!   had no group mask), `fix_small_imbalance`, `find_busiest_queue`,
//!   `need_active_balance` (but for asym packing), `idle_balance` (but for
//!   `cpu_active`), `rebalance_domains`, `nohz_idle_balance` (4.15 names the catch-up
//!   `cpu_load_update_idle`), `nohz_balancer_kick`.

pub mod capacity;
pub mod cpu_load;
pub mod find_busiest;
