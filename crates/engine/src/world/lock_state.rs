//! Each runqueue lock's reservation and the rule by which a request gets the lock, as
//! `locks`' module comment describes; `locks` keeps the `World` methods that take a lock
//! and charge the spin. The type lives apart so that `World`'s fields can name it without
//! depending on those methods.

/// The reservation of one runqueue lock, engine ns: the latest holder, and the start of
/// the unbroken run of holds that ends with it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct RqLock {
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
    pub(super) fn acquire(&mut self, cpu: usize, want: u64, hold: u64) -> u64 {
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
