//! cyclictest's threads at run time: the workload model behind its threads' absolute
//! sleeps and `main`'s poll of the run's end ([`CyclicCall`]), and each thread's
//! `struct thread_stat`.
//!
//! Ported from rt-tests 0.85's `timerthread` (src/cyclictest/cyclictest.c) in its
//! `MODE_CLOCK_NANOSLEEP` + `TIMER_ABSTIME` form, and from the test of `main`'s display
//! loop that ends the run. The clock is the world's virtual time, read as a
//! `CLOCK_MONOTONIC` `timespec` (seconds and nanoseconds) so that `calcdiff` truncates as
//! it does in C.

use std::collections::BTreeSet;

use fairsim_des::time::SEC;
use fairsim_engine::hook::{HookAct, HookCx, SleepAct, WorkloadModel};
use fairsim_engine::program::Op;

/// `USEC_PER_SEC`.
const USEC_PER_SEC: i64 = 1_000_000;
/// `stat->min`'s starting value in `main` (what a thread that never measured prints).
pub(crate) const MIN_UNSET: i64 = 1_000_000;

/// What a thread does at the head of its loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CyclicStep {
    /// `clock_nanosleep(TIMER_ABSTIME)` until this instant (ns); an instant already
    /// passed returns at once.
    Until(u64),
    /// The loop is over (`shutdown`, or `max_cycles` reached): `timerthread` returns.
    Exit,
}

/// What one of cyclictest's hook operations does, by the index its operation carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CyclicCall {
    /// `clock_nanosleep(TIMER_ABSTIME, &next)` at the head of a thread's loop (an
    /// interruptible [`Op::HookSleep`]): on first use the thread takes `next` from now;
    /// then it sleeps until `next`, and when it runs again the latency is recorded and
    /// `next` moves on by its interval. An instant already passed returns at once. The
    /// thread exits here when the workload has shut down or its loops are done, and
    /// when posted (`main`'s `SIGTERM`, which interrupts the sleep). A thread is task
    /// `k + 1` of its workload, `main` task 0.
    Sleep,
    /// `main`'s display loop test, `if (shutdown || allstopped) break;`: when the
    /// threads have stopped, leave the innermost loop and go on at `after`.
    Poll {
        /// Index of the operation after the loop's end.
        after: usize,
    },
}

/// One thread: its parameters (`struct thread_param`), its clock and its
/// `struct thread_stat`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CyclicThread {
    /// `par->interval`, in ns.
    pub interval: u64,
    /// `par->max_cycles` (`-l`); `None` is cyclictest's 0, no limit.
    pub max_cycles: Option<u64>,
    /// Whether the thread has read its start time.
    pub started: bool,
    /// `next`: the instant of the current period's wakeup.
    pub next: u64,
    /// `stop`: the start plus `-D`, when a duration was given.
    pub stop: Option<u64>,
    /// `stat->cycles` over the whole run: what `-l` and `main`'s test count.
    pub cycles_all: u64,
    /// The loop ended (`max_cycles` reached).
    pub done: bool,
    /// `stat->cycles`, counted inside the measurement window.
    pub cycles: u64,
    /// `stat->min` in us ([`MIN_UNSET`] before the first cycle).
    pub min: i64,
    /// `stat->max` in us.
    pub max: i64,
    /// `stat->act`: the last latency, in us.
    pub act: i64,
    /// `stat->avg`: the sum of the latencies in us (a `double` in cyclictest; the sum
    /// of integers is exact here, and `avg / cycles` truncates alike).
    pub sum: i64,
    /// The CPUs the thread measured on, for the report (not in cyclictest).
    pub cpus: BTreeSet<usize>,
}

impl CyclicThread {
    /// A thread of period `interval` ns that stops after `max_cycles` loops, if given.
    pub fn new(interval: u64, max_cycles: Option<u64>) -> CyclicThread {
        CyclicThread {
            interval,
            max_cycles,
            min: MIN_UNSET,
            ..CyclicThread::default()
        }
    }

    /// The average printed by `print_stat`: `(long)(stat->avg / stat->cycles)`, 0 without
    /// cycles.
    pub fn avg(&self) -> i64 {
        self.sum.checked_div(self.cycles as i64).unwrap_or(0)
    }
}

/// The cyclictest state of a workload: its threads and the process-wide `shutdown`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CyclicRt {
    /// The threads, in creation order.
    pub threads: Vec<CyclicThread>,
    /// `-D` in ns, if given.
    pub duration: Option<u64>,
    /// `shutdown`: set by the first thread past its `stop`, or by `main` when it leaves
    /// its display loop; every thread leaves its loop when it next tests it.
    pub shutdown: bool,
    /// The hook operations, by the index their program's operation carries.
    pub calls: Vec<CyclicCall>,
}

impl CyclicRt {
    /// The program operation for `call`.
    pub fn op(&mut self, call: CyclicCall) -> Op {
        self.calls.push(call);
        let call_index = (self.calls.len() - 1) as u32;
        match call {
            CyclicCall::Sleep => Op::HookSleep {
                call: call_index,
                interruptible: true,
            },
            CyclicCall::Poll { .. } => Op::Hook {
                call: call_index,
                local: false,
            },
        }
    }

    /// The head of `timerthread`'s loop for thread `k` at `now` (ns).
    ///
    /// On the first call this is the thread's start: `clock_gettime(&now)`, then
    /// `next = now + interval` and `stop = now + duration`. Then `while (!shutdown)`: the
    /// thread sleeps until `next`, or leaves when `shutdown` is set or its `-l` loops are
    /// done.
    pub fn sleep(&mut self, k: usize, now: u64) -> CyclicStep {
        let duration = self.duration;
        let shutdown = self.shutdown;
        let Some(th) = self.threads.get_mut(k) else {
            return CyclicStep::Exit;
        };
        if !th.started {
            th.started = true;
            th.next = now + th.interval;
            th.stop = duration.map(|d| now + d);
        }
        if shutdown || th.done {
            CyclicStep::Exit
        } else {
            CyclicStep::Until(th.next)
        }
    }

    /// Thread `k` is back from `clock_nanosleep` and reads the clock at `now` on `cpu`:
    /// the body of `timerthread`'s loop after the sleep. The latency `calcdiff(now,
    /// next)` goes into the statistics when `counted` (inside the measurement window);
    /// `shutdown` is set once `now` has reached the thread's `stop`; `next` moves on by
    /// one interval (0.85 has no catch-up: after an overrun the next sleep returns at
    /// once, until `next` is ahead again); the loop ends after `max_cycles` cycles.
    pub fn woke(&mut self, k: usize, now: u64, cpu: usize, counted: bool) {
        let Some(th) = self.threads.get_mut(k) else {
            return;
        };
        let diff = calcdiff(now, th.next);
        if counted {
            th.min = th.min.min(diff);
            th.max = th.max.max(diff);
            th.act = diff;
            th.sum += diff;
            th.cycles += 1;
            th.cpus.insert(cpu);
        }
        if th.stop.is_some_and(|stop| calcdiff(now, stop) >= 0) {
            self.shutdown = true;
        }
        th.cycles_all += 1;
        th.next += th.interval;
        if th.max_cycles == Some(th.cycles_all) {
            th.done = true;
        }
    }

    /// `main`'s test after each `usleep(10000)` of its display loop:
    /// `if (shutdown || allstopped) break;`, then `shutdown = 1` on the way out. In 0.85
    /// `allstopped` counts the threads that have done their `-l` cycles and the test is
    /// that it is non-zero, so the first thread to finish its loops ends the run for all.
    /// Returns whether `main` leaves the loop.
    pub fn poll(&mut self) -> bool {
        let allstopped = self
            .threads
            .iter()
            .any(|th| th.max_cycles.is_some_and(|m| th.cycles_all >= m));
        if self.shutdown || allstopped {
            self.shutdown = true;
            return true;
        }
        false
    }
}

impl WorkloadModel for CyclicRt {
    fn hook(&mut self, call: u32, _cx: &mut HookCx<'_>) -> HookAct {
        match self.calls.get(call as usize).copied() {
            Some(CyclicCall::Poll { after }) if self.poll() => HookAct::LeaveLoop { after },
            _ => HookAct::Next,
        }
    }

    fn sleep(&mut self, _call: u32, cx: &mut HookCx<'_>) -> SleepAct {
        let k = cx.me.saturating_sub(1);
        match CyclicRt::sleep(self, k, cx.now) {
            CyclicStep::Exit => SleepAct::Exit,
            CyclicStep::Until(next) if next > cx.now => SleepAct::Until(next),
            CyclicStep::Until(_) => {
                // The instant has passed: the sleep returns at once and the thread
                // measures as it would after waking.
                CyclicRt::woke(self, k, cx.now, cx.cpu, cx.now >= cx.warmup);
                SleepAct::Return
            }
        }
    }

    fn woke(&mut self, _call: u32, cx: &mut HookCx<'_>) {
        // The measurement window opens at the warm-up's end; `window_start` reads 0
        // until then, so it cannot tell a warm-up cycle.
        let k = cx.me.saturating_sub(1);
        CyclicRt::woke(self, k, cx.at, cx.cpu, cx.at >= cx.warmup);
    }
}

/// `calcdiff(t1, t2)`: microseconds from `t2` to `t1` (both ns of `CLOCK_MONOTONIC`),
/// the seconds and the nanoseconds of the two `timespec`s subtracted apart and the
/// nanoseconds' difference divided by 1000 truncating toward zero, as C's integer
/// division does. So 600 ns across a second boundary count as 1 us and within a second
/// as 0.
pub fn calcdiff(t1: u64, t2: u64) -> i64 {
    let (s1, n1) = ((t1 / SEC) as i64, (t1 % SEC) as i64);
    let (s2, n2) = ((t2 / SEC) as i64, (t2 % SEC) as i64);
    USEC_PER_SEC * (s1 - s2) + (n1 - n2) / 1000
}

#[cfg(test)]
mod tests {
    use super::*;
    use fairsim_des::time::US;

    #[test]
    fn calcdiff_truncates_the_nanoseconds_as_c_does() {
        assert_eq!(calcdiff(75_900, 0), 75);
        assert_eq!(calcdiff(SEC + 500, SEC - 100), 1);
        assert_eq!(calcdiff(SEC - 100, SEC - 700), 0);
        assert_eq!(calcdiff(3 * SEC, SEC), 2_000_000);
        assert_eq!(calcdiff(SEC, 2 * SEC), -1_000_000);
    }

    #[test]
    fn a_thread_follows_timerthread() {
        let mut rt = CyclicRt {
            threads: vec![CyclicThread::new(1_000 * US, Some(3))],
            duration: None,
            shutdown: false,
            calls: Vec::new(),
        };
        // Start at 20 us: the first wakeup is one interval later.
        assert_eq!(rt.sleep(0, 20 * US), CyclicStep::Until(1_020 * US));
        rt.woke(0, 1_020 * US + 75_400, 1, true);
        assert_eq!(rt.sleep(0, 1_100 * US), CyclicStep::Until(2_020 * US));
        // An overrun: the next instant is already behind, and 0.85 does not skip it.
        rt.woke(0, 3_500 * US, 1, true);
        assert_eq!(rt.sleep(0, 3_501 * US), CyclicStep::Until(3_020 * US));
        assert!(!rt.poll());
        rt.woke(0, 3_502 * US, 1, false);
        let th = &rt.threads[0];
        assert_eq!(
            (th.cycles, th.min, th.max, th.act, th.avg(), th.cycles_all),
            (2, 75, 1_480, 1_480, (75 + 1_480) / 2, 3)
        );
        // -l 3 reached: the thread leaves, and main's test ends the run.
        assert_eq!(rt.sleep(0, 3_503 * US), CyclicStep::Exit);
        assert!(rt.poll() && rt.shutdown);
    }

    #[test]
    fn the_first_thread_past_its_stop_shuts_every_thread_down() {
        let mut rt = CyclicRt {
            threads: vec![
                CyclicThread::new(1_000 * US, None),
                CyclicThread::new(1_500 * US, None),
            ],
            duration: Some(2 * 1_000 * US),
            shutdown: false,
            calls: Vec::new(),
        };
        assert_eq!(rt.sleep(0, 0), CyclicStep::Until(1_000 * US));
        assert_eq!(rt.sleep(1, 10 * US), CyclicStep::Until(1_510 * US));
        rt.woke(0, 1_050 * US, 0, true);
        assert!(!rt.shutdown);
        rt.woke(0, 2_050 * US, 0, true);
        assert!(rt.shutdown);
        // Thread 1 still measures the sleep it was in, then leaves at its loop head.
        rt.woke(1, 1_560 * US, 1, true);
        assert_eq!(rt.sleep(1, 1_561 * US), CyclicStep::Exit);
        assert_eq!(rt.threads[1].cycles, 1);
        assert_eq!(CyclicThread::new(1, None).min, MIN_UNSET);
    }
}
