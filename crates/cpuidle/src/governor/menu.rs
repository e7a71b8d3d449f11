//! The menu governor (drivers/cpuidle/governors/menu.c, Linux 6.12.117).
//!
//! Menu predicts the idle duration as the smaller of two guesses and picks the deepest
//! state whose target residency fits it and whose exit latency the PM QoS limit allows:
//!
//! - the time till the next timer scaled by a correction factor, one factor per order of
//!   magnitude of that time ([`which_bucket`]), kept as a running average of how much of the
//!   predicted time the CPU really stayed idle;
//! - the average of the last eight idle durations when they are tightly grouped
//!   ([`get_typical_interval`]).
//!
//! 6.12.117 carries these stable backports over 6.12.0's menu.c: "Remove iowait influence"
//! (no `nr_iowait_cpu()`, six buckets, no performance multiplier), "Avoid using invalid
//! recent intervals data" (a refused entry records `UINT_MAX`), "Avoid selecting states with
//! too much latency", "Rearrange main loop in menu_select()", "Select polling state in some
//! more cases", "Use residency threshold in polling state override decisions", the
//! `tick_nohz_tick_stopped()` sleep-length query, and "Avoid discarding useful information"
//! together with its revert.

use crate::governor_api::{
    DevState, IdleCtx, Selection, KTIME_MAX, NSEC_PER_USEC, RESIDENCY_THRESHOLD_NS,
};
use crate::states::IdleState;

/// `BUCKETS`: correction factors, one per decade of the time till the next timer.
pub const BUCKETS: usize = 6;
/// `INTERVAL_SHIFT`: log2 of the number of recent intervals kept.
pub const INTERVAL_SHIFT: u32 = 3;
/// `INTERVALS`: the number of recent idle durations kept for pattern detection.
pub const INTERVALS: usize = 1 << INTERVAL_SHIFT;
/// `RESOLUTION`: the fixed-point unit of a correction factor's one update.
pub const RESOLUTION: u32 = 1024;
/// `DECAY`: a correction factor keeps 7/8 of itself on every update, so it settles at
/// `RESOLUTION * DECAY` times the measured/predicted ratio.
pub const DECAY: u32 = 8;
/// `MAX_INTERESTING`: idle periods at least this long count as a perfect prediction.
pub const MAX_INTERESTING: u64 = 50_000 * NSEC_PER_USEC;

/// `RESOLUTION * DECAY * NSEC_PER_USEC`: the divisor that turns `next_timer_ns` times a
/// correction factor into microseconds.
const FACTOR_DIVISOR: u64 = RESOLUTION as u64 * DECAY as u64 * NSEC_PER_USEC;

/// `UINT_MAX`: no typical interval, or an unusable recent interval.
const UINT_MAX: u32 = u32::MAX;

/// `INT_MAX`: the first outlier threshold of `get_typical_interval`.
const INT_MAX: u32 = i32::MAX as u32;

/// Menu's per-CPU data (`struct menu_device`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MenuDevice {
    needs_update: bool,
    tick_wakeup: bool,
    next_timer_ns: u64,
    bucket: usize,
    correction_factor: [u32; BUCKETS],
    intervals: [u32; INTERVALS],
    interval_ptr: usize,
}

impl Default for MenuDevice {
    fn default() -> MenuDevice {
        MenuDevice::new()
    }
}

/// `which_bucket()` (menu.c, 6.12.117): the correction factor for a time till the next
/// timer, one per decade from 10 us to 100 ms.
pub fn which_bucket(duration_ns: u64) -> usize {
    if duration_ns < 10 * NSEC_PER_USEC {
        return 0;
    }
    if duration_ns < 100 * NSEC_PER_USEC {
        return 1;
    }
    if duration_ns < 1_000 * NSEC_PER_USEC {
        return 2;
    }
    if duration_ns < 10_000 * NSEC_PER_USEC {
        return 3;
    }
    if duration_ns < 100_000 * NSEC_PER_USEC {
        return 4;
    }
    5
}

/// `get_typical_interval()` (menu.c, 6.12.117): the average of the recent intervals (in
/// microseconds) when their spread is small, `UINT_MAX` otherwise.
///
/// The average is accepted when the variance is at most 400 us^2, or when the average
/// exceeds six standard deviations and at least 3/4 of the samples are used. Otherwise the
/// largest samples are dropped (the threshold goes to one below the current maximum) and
/// the test is repeated, until no more than 3/4 of the samples are left. Averages and
/// variances are integer divisions (a shift when all eight samples count), as in the kernel.
pub fn get_typical_interval(intervals: &[u32; INTERVALS]) -> u32 {
    let n = INTERVALS as u64;
    // Samples above this are outliers; UINT_MAX entries (refused entries) never count.
    let mut thresh = INT_MAX;
    loop {
        // The kernel also computes the minimum here, but 6.12.117 no longer uses it.
        let mut max = 0u32;
        let mut sum = 0u64;
        let mut divisor = 0u64;
        for &value in intervals.iter().filter(|&&v| v <= thresh) {
            sum += u64::from(value);
            divisor += 1;
            max = max.max(value);
        }
        if max == 0 {
            return UINT_MAX;
        }
        // Every counted sample is at most INT_MAX, so the average fits an unsigned int.
        let avg = if divisor == n {
            (sum >> INTERVAL_SHIFT) as u32
        } else {
            (sum / divisor) as u32
        };

        let mut variance = 0u64;
        for &value in intervals.iter().filter(|&&v| v <= thresh) {
            let diff = i64::from(value) - i64::from(avg);
            variance = variance.wrapping_add(diff.wrapping_mul(diff) as u64);
        }
        if divisor == n {
            variance >>= INTERVAL_SHIFT;
        } else {
            variance /= divisor;
        }

        // avg < 2^32, so avg^2 fits a u64; variance * 36 is checked not to overflow first.
        if variance <= u64::MAX / 36
            && ((u64::from(avg) * u64::from(avg) > variance * 36 && divisor * 4 >= n * 3)
                || variance <= 400)
        {
            return avg;
        }

        // With 3/4 of the samples or fewer left, give up on a prediction so that deep
        // states stay reachable (the revert of "Avoid discarding useful information").
        if divisor * 4 <= n * 3 {
            return UINT_MAX;
        }
        thresh = max - 1;
    }
}

impl MenuDevice {
    /// `menu_enable_device()` (menu.c, 6.12.117): all data zeroed, every correction factor
    /// at unity (`RESOLUTION * DECAY`).
    pub fn new() -> MenuDevice {
        MenuDevice {
            needs_update: false,
            tick_wakeup: false,
            next_timer_ns: 0,
            bucket: 0,
            correction_factor: [RESOLUTION * DECAY; BUCKETS],
            intervals: [0; INTERVALS],
            interval_ptr: 0,
        }
    }

    /// `correction_factor[]`: unity is `RESOLUTION * DECAY` (8192).
    pub fn correction_factor(&self) -> &[u32; BUCKETS] {
        &self.correction_factor
    }

    /// `intervals[]`: the recent idle durations in microseconds, a ring.
    pub fn intervals(&self) -> &[u32; INTERVALS] {
        &self.intervals
    }

    /// `interval_ptr`: where the next interval goes.
    pub fn interval_ptr(&self) -> usize {
        self.interval_ptr
    }

    /// `bucket`: the correction factor used by the last selection.
    pub fn bucket(&self) -> usize {
        self.bucket
    }

    /// `next_timer_ns`: the sleep length seen by the last selection, `KTIME_MAX` when it
    /// was not queried.
    pub fn next_timer_ns(&self) -> u64 {
        self.next_timer_ns
    }

    /// `needs_update`: a reflect happened since the last selection.
    pub fn needs_update(&self) -> bool {
        self.needs_update
    }

    /// `menu_update_intervals()` (menu.c, 6.12.117): one more recent interval, in the ring.
    fn update_intervals(&mut self, interval_us: u32) {
        self.intervals[self.interval_ptr] = interval_us;
        self.interval_ptr += 1;
        if self.interval_ptr >= INTERVALS {
            self.interval_ptr = 0;
        }
    }

    /// `menu_select()` (menu.c, 6.12.117).
    pub(crate) fn select(&mut self, dev: &mut DevState, ctx: &IdleCtx) -> Selection {
        let states = ctx.table();
        let latency_req = ctx.latency_req_ns;
        let tick_nsec = ctx.tick_nsec;
        let mut stop_tick = true;
        let mut queried = false;

        if self.needs_update {
            self.update(dev, states, tick_nsec);
            self.needs_update = false;
        } else if dev.last_residency_ns == 0 {
            // The previous selection was not entered (the driver refused it or a reschedule
            // came first): record an unusable interval so that the short ones it would
            // otherwise leave in charge do not steer the prediction.
            self.update_intervals(UINT_MAX);
        }

        // The shortest expected idle interval.
        let mut predicted_ns = u64::from(get_typical_interval(&self.intervals)) * NSEC_PER_USEC;
        let delta_tick;
        if predicted_ns > RESIDENCY_THRESHOLD_NS || ctx.tick_stopped {
            let (delta, dt) = ctx.sleep_length();
            queried = true;
            delta_tick = dt;
            self.next_timer_ns = delta;
            self.bucket = which_bucket(self.next_timer_ns);
            // Rounded to the closest microsecond. The product wraps in the kernel's u64 when
            // the sleep length is near KTIME_MAX, and the quotient is stored in an unsigned
            // int; both are kept.
            let scaled = (FACTOR_DIVISOR / 2).wrapping_add(
                self.next_timer_ns
                    .wrapping_mul(u64::from(self.correction_factor[self.bucket])),
            );
            let timer_us = (scaled / FACTOR_DIVISOR) as u32;
            predicted_ns = predicted_ns.min(u64::from(timer_us) * NSEC_PER_USEC);
            // With the tick already stopped a too short prediction may leave the CPU in a
            // shallow state for long, so trust the known timer instead.
            if ctx.tick_stopped && predicted_ns < tick_nsec {
                predicted_ns = self.next_timer_ns;
            }
        } else {
            // No sleep length: assume a distant timer and the tick half a period away.
            self.next_timer_ns = KTIME_MAX;
            delta_tick = tick_nsec / 2;
            self.bucket = which_bucket(KTIME_MAX);
        }

        let n = states.len();
        if n <= 1
            || latency_req == 0
            || ((self.next_timer_ns < states[1].target_residency_ns
                || latency_req < states[1].exit_latency_ns)
                && !states[0].disabled)
        {
            // State 0 will be used whatever happens; keep the tick if it polls.
            return Selection {
                idx: 0,
                stop_tick: !states.first().is_some_and(|s| s.polling),
                sleep_length_queried: queried,
            };
        }

        // The deepest state allowed by the latency limit whose residency fits.
        let mut idx: Option<usize> = None;
        for (i, s) in states.iter().enumerate() {
            if s.disabled {
                continue;
            }
            let cur = *idx.get_or_insert(i);
            if s.exit_latency_ns > latency_req {
                break;
            }
            if s.target_residency_ns <= predicted_ns {
                idx = Some(i);
                continue;
            }
            // Rather than busy polling, use a physical state whose target residency is
            // below the threshold, whose exit latency fits the prediction and whose target
            // residency ends before the next timer.
            if states[cur].polling
                && s.target_residency_ns < RESIDENCY_THRESHOLD_NS
                && s.target_residency_ns <= self.next_timer_ns
                && s.exit_latency_ns <= predicted_ns
            {
                predicted_ns = s.target_residency_ns;
                idx = Some(i);
                break;
            }
            if predicted_ns < tick_nsec {
                break;
            }
            if !ctx.tick_stopped {
                // A shallow state woken early by the tick costs little: keep the tick and
                // let the governor run again in the next round of the idle loop.
                predicted_ns = states[cur].target_residency_ns;
                break;
            }
            // The tick is stopped: if the state so far is shallow and this one fits before
            // the closest timer, take it rather than risk staying shallow for long.
            let pick = if states[cur].target_residency_ns < tick_nsec
                && s.target_residency_ns <= delta_tick
            {
                i
            } else {
                cur
            };
            return Selection {
                idx: pick,
                stop_tick,
                sleep_length_queried: queried,
            };
        }
        // No state enabled: state 0 must do.
        let mut idx = idx.unwrap_or(0);

        // Keep the tick for a polling state or a prediction shorter than a tick period.
        if (states[idx].polling || predicted_ns < tick_nsec) && !ctx.tick_stopped {
            stop_tick = false;
            if idx > 0 && states[idx].target_residency_ns > delta_tick {
                // The tick will wake the CPU first: take the deepest enabled shallower state
                // whose residency fits before the tick, or the shallowest enabled one.
                for i in (0..idx).rev() {
                    if states[i].disabled {
                        continue;
                    }
                    idx = i;
                    if states[i].target_residency_ns <= delta_tick {
                        break;
                    }
                }
            }
        }

        Selection {
            idx,
            stop_tick,
            sleep_length_queried: queried,
        }
    }

    /// `menu_reflect()` (menu.c, 6.12.117): remember the entered state and whether the
    /// tick handler ran (`tick_nohz_idle_got_tick()`), for the next selection's update.
    pub(crate) fn reflect(&mut self, dev: &mut DevState, idx: usize, tick_wakeup: bool) {
        dev.last_state_idx = idx as i32;
        self.needs_update = true;
        self.tick_wakeup = tick_wakeup;
    }

    /// `menu_update()` (menu.c, 6.12.117): fold the last idle period into the correction
    /// factor of the bucket it was predicted with and into the recent intervals.
    fn update(&mut self, dev: &DevState, states: &[IdleState], tick_nsec: u64) {
        let target = usize::try_from(dev.last_state_idx)
            .ok()
            .and_then(|i| states.get(i));
        let exit_latency_ns = target.map_or(0, |s| s.exit_latency_ns);
        let polling = target.is_some_and(|s| s.polling);

        let mut measured_ns = if self.tick_wakeup && self.next_timer_ns > tick_nsec {
            // The tick woke the CPU although the prediction was beyond it (so the tick was
            // meant to be stopped): the CPU could have slept long, so say so.
            9 * MAX_INTERESTING / 10
        } else if polling && dev.poll_time_limit {
            // Polling ran into its time limit: the prediction was too short, and a better
            // one would have let the next timer wake the CPU.
            self.next_timer_ns
        } else {
            // The measured time includes the exit latency; take it off, or assume half
            // the time if the state may not even have been reached. The doubling and the
            // subtraction wrap in the kernel's u64 for absurd exit latencies; so here.
            let measured = dev.last_residency_ns;
            if measured > exit_latency_ns.wrapping_mul(2) {
                measured.wrapping_sub(exit_latency_ns)
            } else {
                measured / 2
            }
        };

        // The correction factor must not exceed unity.
        if measured_ns > self.next_timer_ns {
            measured_ns = self.next_timer_ns;
        }

        let mut new_factor = self.correction_factor[self.bucket];
        new_factor -= new_factor / DECAY;
        if self.next_timer_ns > 0 && measured_ns < MAX_INTERESTING {
            // measured_ns < MAX_INTERESTING and measured_ns <= next_timer_ns, so the
            // quotient is at most RESOLUTION.
            let ratio = u64::from(RESOLUTION) * measured_ns / self.next_timer_ns;
            new_factor = new_factor.wrapping_add(ratio as u32);
        } else {
            // Idle so long that it counts as a perfect prediction.
            new_factor = new_factor.wrapping_add(RESOLUTION);
        }
        // DECAY > 1, so the factor never reaches 0 and the kernel's guard is dead code.
        self.correction_factor[self.bucket] = new_factor;

        // ktime_to_us() of a value at most KTIME_MAX, stored in an unsigned int.
        self.update_intervals((measured_ns / NSEC_PER_USEC) as u32);
    }
}

#[cfg(test)]
mod tests {
    //! Selections from a prepared `struct menu_device`, for the branches that a sequence of
    //! idle periods reaches only slowly. HZ=250: TICK_NSEC = 4 ms.

    use super::*;
    use crate::governor_api::tick_nsec;

    const TICK: u64 = tick_nsec(250);

    fn st(name: &str, exit_latency_ns: u64, target_residency_ns: u64, polling: bool) -> IdleState {
        IdleState {
            polling,
            ..IdleState::new(name, exit_latency_ns, target_residency_ns)
        }
    }

    fn skx() -> Vec<IdleState> {
        vec![
            st("POLL", 0, 0, true),
            st("C1", 2_000, 2_000, false),
            st("C1E", 10_000, 20_000, false),
            st("C6", 133_000, 600_000, false),
        ]
    }

    /// A device whose last idle period has been folded in already (no update pending, a
    /// non-zero last residency), with the given recent intervals and one bucket's factor.
    fn primed(intervals: [u32; INTERVALS], bucket: usize, factor: u32) -> (MenuDevice, DevState) {
        let mut m = MenuDevice::new();
        m.intervals = intervals;
        m.correction_factor[bucket] = factor;
        let dev = DevState {
            last_residency_ns: 1,
            ..DevState::default()
        };
        (m, dev)
    }

    fn ctx(states: &[IdleState], sleep_ns: u64, tick_stopped: bool) -> IdleCtx<'_> {
        IdleCtx {
            sleep_length_ns: sleep_ns,
            delta_tick_ns: TICK,
            tick_stopped,
            ..IdleCtx::new(states, TICK)
        }
    }

    /// The correction factor alone moves the choice: with no typical interval, 4 ms to the
    /// timer and bucket 3's factor at 1228, timer_us = (4096000 + 4000000 * 1228) /
    /// 8192000 = 600 and C6 (600 us) still fits; at 1227 it is 599 and C1E is taken.
    #[test]
    fn correction_factor_alone_moves_the_choice() {
        let states = skx();
        // At unity the prediction is the full 4 ms, not below the tick period, so the tick
        // may stop; at 600 us and 599 us it is kept.
        for (factor, idx, stop_tick) in [(8192, 3, true), (1228, 3, false), (1227, 2, false)] {
            let (mut m, mut dev) = primed([0; INTERVALS], 3, factor);
            let s = m.select(&mut dev, &ctx(&states, 4_000_000, false));
            assert_eq!((s.idx, s.stop_tick), (idx, stop_tick), "factor {factor}");
        }
    }

    /// A shallow physical state instead of busy polling: intervals of 2 us predict 2 us,
    /// below RESIDENCY_THRESHOLD_NS, so the sleep length is not read (next_timer_ns =
    /// KTIME_MAX). C1 (exit 1 us, residency 5 us) does not fit 2 us, but its residency is
    /// below 15 us and its exit latency within the prediction: C1, predicted 5 us. With a
    /// 3 us exit latency it is not, and POLL stays.
    #[test]
    fn physical_state_preferred_to_polling() {
        for (exit_ns, idx) in [(1_000, 1), (3_000, 0)] {
            let states = vec![
                st("POLL", 0, 0, true),
                st("C1", exit_ns, 5_000, false),
                st("C6", 133_000, 600_000, false),
            ];
            let (mut m, mut dev) = primed([2; INTERVALS], 3, RESOLUTION * DECAY);
            let s = m.select(&mut dev, &ctx(&states, 4_000_000, false));
            assert_eq!(
                (s.idx, s.stop_tick, s.sleep_length_queried),
                (idx, false, false)
            );
            assert_eq!(m.next_timer_ns, KTIME_MAX);
        }
        // A residency of 15 us or more is never preferred to polling this way: C1 at
        // 16 us with a 5 us prediction (intervals of 5 us) leaves POLL.
        let states = vec![st("POLL", 0, 0, true), st("C1", 1_000, 16_000, false)];
        let (mut m, mut dev) = primed([5; INTERVALS], 3, RESOLUTION * DECAY);
        assert_eq!(m.select(&mut dev, &ctx(&states, 4_000_000, false)).idx, 0);
    }

    /// With the tick already stopped the sleep length is always read, and a prediction
    /// below the tick period is replaced by it: a 10 us pattern with the next timer 10 ms
    /// away picks C6 instead of C1.
    #[test]
    fn stopped_tick_trusts_the_next_timer() {
        let states = skx();
        let (mut m, mut dev) = primed([10; INTERVALS], 3, RESOLUTION * DECAY);
        let s = m.select(&mut dev, &ctx(&states, 10_000_000, true));
        assert_eq!(
            (s.idx, s.stop_tick, s.sleep_length_queried),
            (3, true, true)
        );
        let (mut m, mut dev) = primed([10; INTERVALS], 3, RESOLUTION * DECAY);
        let s = m.select(&mut dev, &ctx(&states, 10_000_000, false));
        assert_eq!(
            (s.idx, s.stop_tick, s.sleep_length_queried),
            (1, false, false)
        );
    }

    /// With the tick stopped, a prediction of at least one tick period and a deeper state
    /// that does not fit it, menu returns at once: the deeper state if the one so far is
    /// shallower than the tick period and the deeper one fits before the next event
    /// (delta_tick), else the one so far. The tick stays stopped.
    #[test]
    fn stopped_tick_with_a_long_prediction() {
        // 30 ms to the timer (bucket 4) with bucket 4's factor at one half: timer_us =
        // (4096000 + 30000000 * 4096) / 8192000 = 15000, so predicted 15 ms.
        let table = |c10_residency_ns: u64| {
            vec![
                st("POLL", 0, 0, true),
                st("C6", 133_000, 600_000, false),
                st("C10", 500_000, c10_residency_ns, false),
            ]
        };
        // C10 needs 20 ms > 15 ms, but C6 is shallower than the tick period and 20 ms fits
        // in the 30 ms till the next event: C10. At 35 ms it does not: C6.
        for (c10_ns, idx) in [(20_000_000, 2), (35_000_000, 1)] {
            let states = table(c10_ns);
            let (mut m, mut dev) = primed([0; INTERVALS], 4, 4_096);
            let c = IdleCtx {
                delta_tick_ns: 30_000_000,
                ..ctx(&states, 30_000_000, true)
            };
            let s = m.select(&mut dev, &c);
            assert_eq!((s.idx, s.stop_tick), (idx, true), "C10 at {c10_ns}");
        }
        // With the tick running the same case keeps the state so far and the tick:
        // predicted becomes C6's 600 us, below the tick period.
        let states = table(20_000_000);
        let (mut m, mut dev) = primed([0; INTERVALS], 4, 4_096);
        let s = m.select(&mut dev, &ctx(&states, 30_000_000, false));
        assert_eq!((s.idx, s.stop_tick), (1, false));
    }

    /// The sleep length's product with the correction factor wraps in a u64 when it is
    /// near KTIME_MAX, as in the kernel: KTIME_MAX * 8192 + 4096000 wraps to 4087808, so
    /// timer_us = 0 and predicted 0: POLL, tick kept.
    #[test]
    fn product_wraps_like_the_kernel() {
        let states = skx();
        let (mut m, mut dev) = primed([0; INTERVALS], 5, RESOLUTION * DECAY);
        let s = m.select(&mut dev, &ctx(&states, u64::MAX, false));
        assert_eq!(m.next_timer_ns, KTIME_MAX);
        assert_eq!((s.idx, s.stop_tick), (0, false));
    }
}
