//! The scheduler's side of task groups: the API the engine calls (`create_task_group`,
//! `set_group_shares`, `set_group_idle`, `set_task_group`) and the other `Sched` methods
//! over [`super::TaskGroups`]. They sit apart from the groups' data, which `Sched` holds,
//! so that the data does not import the scheduler.

use super::{
    CfsBandwidth, GroupError, GroupSeMeta, TaskGroup, TaskGroups, MAX_SHARES, MIN_SHARES,
    ROOT_GROUP,
};
use crate::cfs_rq::CfsRq;
use crate::task::{GroupId, SchedEntity, TaskId};
use crate::weight::{scale_load, LoadWeight};
use crate::Sched;

impl Sched {
    /// `sched_create_group` + `sched_online_group` (`alloc_fair_sched_group`,
    /// `init_tg_cfs_entry`): a new group under `parent` with the default weight
    /// (`cpu.weight` 100, shares 1024), a runqueue and an entity of weight `NICE_0_LOAD`
    /// on every CPU, nothing queued. `path` names it in outputs.
    pub fn create_task_group(
        &mut self,
        parent: GroupId,
        path: &str,
    ) -> Result<GroupId, GroupError> {
        if parent >= self.groups.tgs.len() {
            return Err(GroupError::NoGroup(parent));
        }
        let depth = if parent == ROOT_GROUP {
            0
        } else {
            self.groups.tgs[parent].depth + 1
        };
        let g = self.groups.tgs.len();
        self.groups.tgs.push(TaskGroup {
            path: path.to_string(),
            parent: Some(parent),
            shares: scale_load(1024),
            idle: false,
            load_avg: 0,
            depth,
            bw: CfsBandwidth {
                slice: self.groups.bw_slice,
                ..CfsBandwidth::default()
            },
            autogroup: None,
        });
        // init_cfs_bandwidth: the period timer's phase is random so that groups' timers
        // interleave (get_random_u32_below(period)); drawn from the run's seed.
        let mut rng = crate::lb::rng::PrandomState::seeded(
            self.params.seed ^ (g as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15),
        );
        let period = self.groups.tgs[g].bw.period;
        self.groups.tgs[g].bw.period_expires = (u64::from(rng.next_u32()) * period) >> 32;
        for cpu in 0..self.groups.ncpus {
            let mut cfs = CfsRq {
                tg: g,
                ..CfsRq::default()
            };
            // sync_throttle: a group born under a throttled parent starts throttled too.
            if parent != ROOT_GROUP {
                let pcfs = &self.groups.cfs[self.groups.idx(parent, cpu)];
                cfs.bw.throttle_count = pcfs.bw.throttle_count;
                cfs.bw.throttled_clock_pelt = self.rqs[cpu].pelt.rq_clock_pelt();
            }
            self.groups.cfs.push(cfs);
            // Group entities are allocated zeroed: no slice until their first enqueue
            // gives them their runqueue's smallest, and no PELT history (not a task, so
            // `init_entity_runnable_average` leaves the load at 0).
            let load = LoadWeight {
                weight: crate::weight::NICE_0_LOAD,
                inv_weight: 0,
            };
            let avg = fairsim_pelt::init_entity_runnable_average(false, 1024);
            self.groups.se.push(SchedEntity::new(load, 0, avg));
            self.groups.meta.push(GroupSeMeta::default());
        }
        Ok(g)
    }

    /// `sched_group_set_shares(tg, scale_load(shares))` with `shares` unscaled (from
    /// [`shares_from_cpu_weight`] or [`shares_from_cpu_weight_nice`]): clamped to
    /// `MIN_SHARES..=MAX_SHARES`, then every CPU's group entity and its ancestors are
    /// brought up to date and reweighted.
    pub fn set_group_shares(
        &mut self,
        g: GroupId,
        shares: u64,
        now: u64,
    ) -> Result<(), GroupError> {
        if g >= self.groups.tgs.len() {
            return Err(GroupError::NoGroup(g));
        }
        if g == ROOT_GROUP {
            return Err(GroupError::Root);
        }
        if self.groups.tgs[g].idle {
            return Err(GroupError::IdleGroupShares);
        }
        self.set_shares_scaled(g, scale_load(shares), now);
        Ok(())
    }

    /// `__sched_group_set_shares(tg, shares)` with `shares` scaled.
    fn set_shares_scaled(&mut self, g: GroupId, shares: u64, now: u64) {
        let shares = shares.clamp(scale_load(MIN_SHARES), scale_load(MAX_SHARES));
        if self.groups.tgs[g].shares == shares {
            return;
        }
        self.groups.tgs[g].shares = shares;
        for cpu in 0..self.nr_cpus() {
            self.update_rq_clock(cpu, now);
            self.refresh_group_weights(g, cpu);
        }
    }

    /// `sched_group_set_idle(tg, idle)` (`cpu.idle`): the group's entities count as
    /// SCHED_IDLE ones (`se_is_idle`), its queued tasks move in or out of its ancestors'
    /// `idle_h_nr_running`, and its weight becomes the minimum (`WEIGHT_IDLEPRIO`) or
    /// the default again.
    pub fn set_group_idle(&mut self, g: GroupId, idle: bool, now: u64) -> Result<(), GroupError> {
        if g >= self.groups.tgs.len() {
            return Err(GroupError::NoGroup(g));
        }
        if g == ROOT_GROUP {
            return Err(GroupError::Root);
        }
        if self.groups.tgs[g].idle == idle {
            return Ok(());
        }
        self.groups.tgs[g].idle = idle;
        for cpu in 0..self.nr_cpus() {
            self.propagate_group_idle(g, cpu, idle);
        }
        let shares = if idle {
            scale_load(crate::weight::WEIGHT_IDLEPRIO)
        } else {
            crate::weight::NICE_0_LOAD
        };
        self.set_shares_scaled(g, shares, now);
        Ok(())
    }

    /// Puts the new task `p` in group `g` (`sched_cgroup_fork`): called right after
    /// [`Sched::create_task`], before the task is first enqueued.
    pub fn set_task_group(&mut self, p: TaskId, g: GroupId) -> Result<(), GroupError> {
        if g >= self.groups.tgs.len() {
            return Err(GroupError::NoGroup(g));
        }
        let tg = &mut self.groups.task_group;
        if tg.len() <= p {
            tg.resize(p + 1, ROOT_GROUP);
        }
        tg[p] = g;
        Ok(())
    }

    /// The task groups.
    pub fn task_groups(&self) -> &TaskGroups {
        &self.groups
    }
}
