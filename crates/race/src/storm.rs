//! A fixed state to time concurrent newidle balances against (the `newidle_storm`
//! benchmark): every hardware thread of every other core runs one token with a second
//! queued behind it, so `rd->overloaded` is set and busiest groups exist, and the CPUs of
//! the remaining cores are idle and balance. `sysctl_sched_migration_cost` is set so high
//! that every queued token is cache hot: `can_migrate_task` refuses it (and an idle CPU's
//! SMT sibling, where heat does not count, is idle too), so nothing moves and each round
//! sees the same state while doing the whole scan, the busiest runqueue's lock and the
//! task walk.
//! Before the storm, one periodic balance per CPU writes the snapshots the ILB features
//! read.

use std::time::{Duration, Instant};

use fairsim_balance::lb::{LbState, NewidleBalance, NewidleStep};
use fairsim_balance::{CpuIdleType, PeriodicBalance, SchedParams};
use fairsim_topology::{BuildOptions, Machine};

use crate::build_world;
use crate::cpu::{CpuCtx, RaceWorld};
use crate::error::RaceError;

/// The storm's shared state.
pub struct NewidleStorm {
    world: RaceWorld,
    lb: LbState,
    idle_cpus: Vec<usize>,
}

impl NewidleStorm {
    /// Sets up `machine` with `params` (its migration cost is overridden as described in
    /// the module docs).
    pub fn new(machine: Machine, mut params: SchedParams) -> Result<NewidleStorm, RaceError> {
        params.migration_cost = u64::MAX / 4;
        let n = machine.nr_cpus();
        // Cores in order of their first CPU; the even ones are busy.
        let mut cores: Vec<usize> = machine
            .cpus
            .iter()
            .map(|c| c.smt_siblings.iter().next().unwrap_or(0))
            .collect();
        cores.sort_unstable();
        cores.dedup();
        let busy: Vec<usize> = (0..n)
            .filter(|&c| {
                let first = machine.cpus[c].smt_siblings.iter().next().unwrap_or(c);
                cores.iter().position(|&k| k == first).unwrap_or(0) % 2 == 0
            })
            .collect();
        let build = BuildOptions {
            shared_all_non_numa: params.features.uses_ilb(),
            ..BuildOptions::default()
        };
        let (world, lb) = build_world(&machine, build, &params, 2 * busy.len(), |p| busy[p / 2])?;
        for &cpu in &busy {
            let mut g = world.rqs[cpu].lock();
            g.pick_next(world.util_est);
        }
        let idle_cpus: Vec<usize> = (0..n).filter(|c| !busy.contains(c)).collect();
        // One periodic balance on every CPU writes the domain snapshots ILB_SNAPSHOT
        // keeps and ILB_UTIL's scan depth, as the ticks before a storm would. Nothing
        // moves: a first failure does not yet exceed `cache_nice_tries`.
        for cpu in 0..n {
            let mut ctx = CpuCtx::new(&world, cpu, &lb.sd, lb.rnd[cpu]);
            let idle = if busy.contains(&cpu) {
                CpuIdleType::NotIdle
            } else {
                CpuIdleType::Idle
            };
            // At 1 s, every domain's interval has passed since the build.
            ctx.sched_balance_domains(cpu, idle, 1_000_000_000);
        }
        Ok(NewidleStorm {
            world,
            lb,
            idle_cpus,
        })
    }

    /// The shared state.
    pub fn world(&self) -> &RaceWorld {
        &self.world
    }

    /// The CPUs that balance.
    pub fn idle_cpus(&self) -> &[usize] {
        &self.idle_cpus
    }

    /// Runs `rounds` newidle balances on every idle CPU, the idle CPUs split over
    /// `threads` OS threads running at once, and returns the wall time and the number of
    /// `update_sd_lb_stats` calls made.
    pub fn run(&self, threads: usize, rounds: u64) -> (Duration, u64) {
        let threads = threads.clamp(1, self.idle_cpus.len().max(1));
        let w = &self.world;
        let t0 = Instant::now();
        let calls: u64 = std::thread::scope(|s| {
            let handles: Vec<_> = (0..threads)
                .map(|k| {
                    let cpus: Vec<usize> = self
                        .idle_cpus
                        .iter()
                        .copied()
                        .skip(k)
                        .step_by(threads)
                        .collect();
                    let lb = &self.lb;
                    s.spawn(move || {
                        let mut ctxs: Vec<CpuCtx<'_>> = cpus
                            .iter()
                            .map(|&c| CpuCtx::new(w, c, &lb.sd, lb.rnd[c]))
                            .collect();
                        for _ in 0..rounds {
                            for ctx in ctxs.iter_mut() {
                                let cpu = ctx.cpu;
                                let now = w.now_ns();
                                if let Ok(mut nb) = NewidleBalance::start(ctx, cpu, now) {
                                    while let NewidleStep::Continue = nb.step(ctx, w.now_ns()) {}
                                }
                            }
                        }
                        ctxs.iter()
                            .map(|c| c.stats.sd_lb_stats_newidle_ns.len())
                            .sum::<u64>()
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap_or(0)).sum()
        });
        (t0.elapsed(), calls)
    }
}
