//! Runqueue locks in virtual time: who holds each `rq->__lock`, until when, and how long
//! a CPU that wants it spins.
//!
//! Each lock keeps its latest holder's interval and the start of the unbroken run of
//! holds that ends with it. A CPU asks for a lock when its queued kernel work is done
//! (`kernel_until`), not at the event's time, because the work before the lock (a scan, a
//! wakeup's select) comes first. A request after the run ends takes the lock at once; one
//! that is over before the run starts went first (kernel work is processed nearly, not
//! exactly, in time order) and leaves the run alone; any other spins until the run ends
//! and then holds the lock. Queued spinlocks are FIFO, so the order of requests is the
//! order of acquisition. A CPU never waits for its own earlier hold.
//!
//! The holders modelled are those that matter for racing balances: `__schedule` (pick
//! and context switch), `sched_tick`, `ttwu_do_activate` (by the target or a remote
//! waker), `detach_tasks` under the busiest CPU's lock, and the active-balance stopper's
//! double lock. The spin is charged to the spinning CPU as `lock_spin` overhead.

use super::World;
use crate::profile::{Ctx, Leaf, Site};

impl World {
    /// `cpu` takes runqueue `rq`'s lock once its queued kernel work is done and holds it
    /// for `hold` ns. Returns the time it has the lock; a spin before that is charged to
    /// `cpu`.
    /// `ctx` is the kernel path that takes the lock, to which a spin is attributed.
    pub(crate) fn rq_lock(&mut self, cpu: usize, rq: usize, now: u64, hold: u64, ctx: Ctx) -> u64 {
        let want = now.max(self.cpus[cpu].kernel_until);
        let got = self.rq_locks[rq].acquire(cpu, want, hold);
        if got > want {
            self.trace_spin(cpu, want, rq, got - want);
            self.metrics.cpus[cpu].lock_spins += 1;
            self.charge(cpu, now, got - want, Site::new(ctx, Leaf::Spin));
        }
        got
    }

    /// The current holder of `rq`'s lock keeps it `hold` ns from when it took it (at
    /// least until its earlier release).
    pub(crate) fn extend_rq_lock(&mut self, rq: usize, hold: u64) {
        let l = &mut self.rq_locks[rq];
        l.until = l.until.max(l.taken + hold);
    }
}
