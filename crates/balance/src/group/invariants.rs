//! The runqueue invariants with task groups: every runqueue's counts match what is
//! queued on it and below it, and every queued group runqueue's entity is queued.

use crate::sched::InvariantError;
use crate::task::Policy;
use crate::task::TaskState;
use crate::Sched;

use super::{CfsRef, GROUP_SE_BIT};

/// What a runqueue holds, itself and below: tasks queued, delayed, SCHED_IDLE (or in
/// idle groups), and the weight of its own entities.
#[derive(Default)]
struct Held {
    queued: u32,
    delayed: u32,
    idle: u32,
    entities: u32,
    weight: u64,
}

impl Sched {
    /// [`Sched::check_invariants`] with task groups.
    pub(crate) fn check_invariants_hier(&self) -> Result<(), InvariantError> {
        let mut seen = vec![0u32; self.tasks.len()];
        for cpu in 0..self.nr_cpus() {
            let rq = &self.rqs[cpu];
            let held = self.check_cfs(CfsRef::Root(cpu), cpu, &mut seen)?;
            // Throttled runqueues are off the hierarchy with their tasks still queued on
            // them: those tasks count in cfs_tasks but not in nr_running.
            let mut throttled = 0;
            for g in 1..self.groups.tgs.len() {
                let i = self.groups.idx(g, cpu);
                if self.groups.cfs[i].bw.throttled && !self.groups.se[i].on_rq {
                    throttled += self.check_cfs(CfsRef::Group(i), cpu, &mut seen)?.queued;
                }
            }
            if held.queued != rq.nr_running {
                return Err(InvariantError::HierNrRunning {
                    cpu,
                    queued: held.queued,
                    nr_running: rq.nr_running,
                });
            }
            if rq.cfs_tasks.len() as u32 != held.queued + throttled {
                return Err(InvariantError::HierCfsTasks {
                    cpu,
                    entries: rq.cfs_tasks.len(),
                    queued: held.queued,
                    throttled,
                });
            }
        }
        for (p, t) in self.tasks.iter().enumerate() {
            if seen[p] != u32::from(t.se.on_rq) {
                return Err(InvariantError::QueuedTimes {
                    task: p,
                    times: seen[p],
                    on_rq: t.se.on_rq,
                });
            }
            if t.state == TaskState::Running && !t.se.on_rq {
                return Err(InvariantError::RunningNotQueued { task: p });
            }
        }
        Ok(())
    }

    /// Checks runqueue `c` of `cpu` and the group runqueues below it, returning what it
    /// holds.
    fn check_cfs(&self, c: CfsRef, cpu: usize, seen: &mut [u32]) -> Result<Held, InvariantError> {
        let cfs = self.h_cfs(c);
        let mut held = Held::default();
        let curr = cfs.curr.filter(|&x| self.h_se_ref(x).on_rq);
        for id in cfs.timeline.values().copied().chain(curr) {
            if self.h_cfs_of(id, cpu) != c {
                return Err(InvariantError::WrongRunqueue { cpu, entity: id });
            }
            let se = self.h_se_ref(id);
            held.entities += 1;
            held.weight += se.load.weight;
            if id & GROUP_SE_BIT != 0 {
                let i = id & !GROUP_SE_BIT;
                let below = self.check_cfs(CfsRef::Group(i), cpu, seen)?;
                let gcfs = &self.groups.cfs[i];
                held.queued += below.queued;
                held.delayed += below.delayed;
                held.idle += if self.groups.tgs[gcfs.tg].idle {
                    below.queued
                } else {
                    below.idle
                };
            } else {
                let t = &self.tasks[id];
                seen[id] += 1;
                if t.cpu != cpu {
                    return Err(InvariantError::QueuedElsewhere {
                        task: id,
                        cpu,
                        task_cpu: t.cpu,
                    });
                }
                held.queued += 1;
                held.delayed += u32::from(se.sched_delayed);
                held.idle += u32::from(t.policy == Policy::Idle);
            }
        }
        if held.entities != cfs.nr_running || held.weight != cfs.load.weight {
            return Err(InvariantError::GroupLoad {
                cpu,
                tg: cfs.tg,
                entities: held.entities,
                weight: held.weight,
                nr_running: cfs.nr_running,
                load: cfs.load.weight,
            });
        }
        if held.queued != cfs.h_nr_queued
            || held.delayed != cfs.h_nr_delayed
            || held.queued - held.delayed != cfs.h_nr_runnable
            || held.idle != cfs.idle_h_nr_running
        {
            return Err(InvariantError::GroupCounts {
                cpu,
                tg: cfs.tg,
                queued: held.queued,
                delayed: held.delayed,
                idle: held.idle,
                h_nr_queued: cfs.h_nr_queued,
                h_nr_delayed: cfs.h_nr_delayed,
                h_nr_runnable: cfs.h_nr_runnable,
                idle_h_nr_running: cfs.idle_h_nr_running,
            });
        }
        Ok(held)
    }

    fn h_se_ref(&self, id: usize) -> &crate::task::SchedEntity {
        if id & GROUP_SE_BIT != 0 {
            &self.groups.se[id & !GROUP_SE_BIT]
        } else {
            &self.tasks[id].se
        }
    }
}
