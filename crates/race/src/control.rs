//! How a race run starts, keeps to its deadline and stops: the default number of driving
//! threads, the start gate, each thread's own deadline and the heartbeats the watchdog
//! reads.
//!
//! A race run oversubscribes the host whenever it has more driving threads than the host
//! has CPUs. Left to a main thread that sleeps until the run's time is up and then raises
//! a stop flag, a heavily oversubscribed run overran its `--duration` many times over
//! (2048 threads on a 2-CPU host: 85 s for a 200 ms run): the main thread waited for a
//! time slice behind thousands of spinning threads, and each thread looked at the flag only
//! after a whole round of its CPUs. So each thread now compares the wall clock with the
//! deadline itself after every CPU it turns to, the threads wait at a gate until all of
//! them exist (so that spawning is not starved either), and the default thread count is
//! one the host can carry.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// Driving threads per host CPU that `fairsim race` starts by default (when the machine
/// has more CPUs than that, each thread drives several CPUs in turn).
///
/// More threads than host CPUs, so that threads are preempted in the middle of scans and
/// while holding runqueue locks, as CPUs of a busy host or vCPUs of a guest are: those
/// are the interleavings race mode exists to provoke. Few enough that each thread's turn
/// on a host CPU comes round within a few scheduler slices (with 8 runnable threads per
/// CPU, 7 slices of at most 3 ms), so that every thread notices its deadline within tens
/// of milliseconds and the run ends close to its `--duration`.
pub const THREADS_PER_HOST_CPU: usize = 8;

/// The driving threads a race run over `cpus` emulated CPUs starts by default on a host
/// with `host_cpus` CPUs (`std::thread::available_parallelism`): one per emulated CPU, at
/// most [`THREADS_PER_HOST_CPU`] per host CPU, at least one.
pub fn default_threads(cpus: usize, host_cpus: usize) -> usize {
    let carry = host_cpus.max(1).saturating_mul(THREADS_PER_HOST_CPU);
    cpus.min(carry).max(1)
}

/// The host's CPUs as `std::thread::available_parallelism` reports them (1 when it
/// cannot tell).
pub fn host_cpus() -> usize {
    std::thread::available_parallelism().map_or(1, usize::from)
}

/// What the driving threads and the thread that started them share: the start gate, the
/// deadline, and each thread's heartbeat and stop time (the watchdog tells a finished
/// thread by its join handle, which also covers a thread that panicked).
#[derive(Debug)]
pub struct Control {
    /// Raised once every thread has been started, with the deadline set.
    go: AtomicBool,
    /// When the threads stop, in ns since the world's start.
    deadline_ns: AtomicU64,
    /// Wall ns (since the world's start) of each thread's last finished step.
    pub last: Vec<AtomicU64>,
    /// Wall ns at which each thread stopped (0 while it runs).
    pub stopped: Vec<AtomicU64>,
}

impl Control {
    /// The control of `threads` driving threads, gate closed.
    pub fn new(threads: usize) -> Control {
        Control {
            go: AtomicBool::new(false),
            deadline_ns: AtomicU64::new(u64::MAX),
            last: (0..threads).map(|_| AtomicU64::new(0)).collect(),
            stopped: (0..threads).map(|_| AtomicU64::new(0)).collect(),
        }
    }

    /// Opens the gate: the threads run until `deadline_ns`. The caller unparks them.
    pub fn open(&self, deadline_ns: u64) {
        self.deadline_ns.store(deadline_ns, Ordering::Relaxed);
        // Release: a thread that sees the gate open sees the deadline too.
        self.go.store(true, Ordering::Release);
    }

    /// Waits (parked) until the gate opens; returns the deadline.
    pub fn wait_for_start(&self) -> u64 {
        while !self.go.load(Ordering::Acquire) {
            std::thread::park();
        }
        self.deadline_ns.load(Ordering::Relaxed)
    }

    /// Thread `k` stopped at `now`.
    pub fn stop(&self, k: usize, now: u64) {
        self.stopped[k].store(now, Ordering::Relaxed);
    }

    /// When the last thread stopped (ns since the world's start).
    pub fn last_stop(&self) -> u64 {
        self.stopped
            .iter()
            .map(|s| s.load(Ordering::Relaxed))
            .max()
            .unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_thread_per_cpu_while_the_host_carries_it() {
        assert_eq!(default_threads(16, 2), 16);
        assert_eq!(default_threads(4, 16), 4);
        assert_eq!(default_threads(128, 16), 128);
    }

    #[test]
    fn at_most_eight_threads_per_host_cpu() {
        assert_eq!(default_threads(2048, 2), 16);
        assert_eq!(default_threads(512, 2), 16);
        assert_eq!(default_threads(4096, 64), 512);
        assert_eq!(default_threads(17, 2), 16);
    }

    #[test]
    fn never_zero_threads() {
        assert_eq!(default_threads(8, 0), 8);
        assert_eq!(default_threads(0, 4), 1);
        assert_eq!(default_threads(usize::MAX, usize::MAX), usize::MAX);
    }

    #[test]
    fn the_gate_hands_the_deadline_to_the_threads() {
        let c = std::sync::Arc::new(Control::new(2));
        let handles: Vec<_> = (0..2)
            .map(|k| {
                let c = std::sync::Arc::clone(&c);
                std::thread::spawn(move || {
                    let d = c.wait_for_start();
                    c.stop(k, d + k as u64);
                    d
                })
            })
            .collect();
        c.open(1234);
        for h in &handles {
            h.thread().unpark();
        }
        for h in handles {
            assert_eq!(h.join().unwrap(), 1234);
        }
        assert_eq!(c.last_stop(), 1235);
    }
}
