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

/// The reservation of one runqueue lock, engine ns: the latest holder, and the start of
/// the unbroken run of holds that ends with it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RqLock {
    /// The lock has been held without a break since this time.
    pub busy_from: u64,
    /// The latest holder took it at this time.
    pub taken: u64,
    /// And releases it at this time.
    pub until: u64,
    /// The latest holder.
    pub owner: usize,
}

impl RqLock {
    /// `cpu` asks for the lock at `want` to hold it `hold` ns: returns when it gets it,
    /// and updates the reservation.
    pub fn acquire(&mut self, cpu: usize, want: u64, hold: u64) -> u64 {
        if want >= self.until {
            *self = RqLock {
                busy_from: want,
                taken: want,
                until: want + hold,
                owner: cpu,
            };
            return want;
        }
        if self.owner == cpu {
            // A CPU's kernel work is sequential: its own earlier hold cannot delay it.
            // Some holds are not charged as time of their own (they are part of a larger
            // cost), so the earlier one may still look current.
            self.taken = want.max(self.taken);
            self.until = self.until.max(want + hold);
            return want;
        }
        if want + hold <= self.busy_from {
            // This request precedes the busy run and is over before it starts.
            return want;
        }
        let got = self.until;
        self.taken = got;
        self.until = got + hold;
        self.owner = cpu;
        got
    }
}

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

#[cfg(test)]
mod tests {
    use super::RqLock;

    fn held_by(owner: usize, busy_from: u64, taken: u64, until: u64) -> RqLock {
        RqLock {
            busy_from,
            taken,
            until,
            owner,
        }
    }

    #[test]
    fn a_free_lock_is_taken_at_once() {
        let mut l = held_by(1, 100, 100, 200);
        assert_eq!(l.acquire(2, 250, 50), 250);
        assert_eq!(l, held_by(2, 250, 250, 300));
    }

    #[test]
    fn overlapping_requests_spin_in_order_of_arrival() {
        let mut l = held_by(1, 100, 100, 200);
        assert_eq!(l.acquire(2, 150, 50), 200);
        // A third CPU queues behind the second (FIFO, as a queued spinlock), even though
        // its short hold would fit before the second's.
        assert_eq!(l.acquire(3, 160, 10), 250);
        assert_eq!(l, held_by(3, 100, 250, 260));
    }

    #[test]
    fn a_request_that_ends_before_the_busy_run_went_first() {
        let mut l = held_by(1, 100, 100, 200);
        assert_eq!(l.acquire(2, 40, 60), 40);
        assert_eq!(l, held_by(1, 100, 100, 200));
        // One that would run into it waits for the whole run.
        assert_eq!(l.acquire(2, 40, 61), 200);
    }

    #[test]
    fn a_cpu_never_waits_for_its_own_hold() {
        let mut l = held_by(1, 100, 100, 200);
        assert_eq!(l.acquire(1, 150, 10), 150);
        assert_eq!(l, held_by(1, 100, 150, 200));
        assert_eq!(l.acquire(2, 160, 10), 200);
    }
}
