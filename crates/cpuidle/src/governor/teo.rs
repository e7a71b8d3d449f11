//! The timer events oriented governor (drivers/cpuidle/governors/teo.c, Linux 6.12.117).
//!
//! Teo sorts every idle period into bins bounded by the states' target residencies and
//! counts, per bin, "hits" (the CPU woke in the bin of the sleep length: the timer woke it)
//! and "intercepts" (it woke in a shallower bin: something else did), both decaying by 1/8
//! per update. It starts from the deepest enabled state and moves to a shallower one when
//! intercepts dominate; only if the result is not already shallow does it ask for the
//! sleep length and fit the state under it.
//!
//! 6.12.117's teo.c is the reworked one backported to 6.12.y (the candidate is the deepest
//! enabled state rather than the one fitting the sleep length, the sleep length is queried
//! last, the tick-period "hits" bin `tick_hits`), not 6.12.0's.

use crate::governor_api::{
    DevState, IdleCtx, Selection, CPUIDLE_STATE_MAX, KTIME_MAX, RESIDENCY_THRESHOLD_NS,
};
use crate::states::IdleState;

/// `PULSE`: what one event adds to a metric.
pub const PULSE: u32 = 1024;
/// `DECAY_SHIFT`: every update takes 1/8 off each metric.
pub const DECAY_SHIFT: u32 = 3;

/// One bin's metrics (`struct teo_bin`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TeoBin {
    /// `intercepts`: wakeups in this bin while the sleep length was in a deeper one.
    pub intercepts: u32,
    /// `hits`: wakeups in the same bin as the sleep length.
    pub hits: u32,
}

/// Teo's per-CPU data (`struct teo_cpu`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TeoCpu {
    time_span_ns: i64,
    sleep_length_ns: i64,
    state_bins: [TeoBin; CPUIDLE_STATE_MAX],
    total: u32,
    tick_hits: u32,
    /// `TICK_NSEC`, which teo_reflect needs and the kernel has as a constant; taken from
    /// the last selection's context.
    tick_nsec: i64,
}

/// `teo_find_shallower_state()` (teo.c, 6.12.117): the deepest enabled state below
/// `state_idx` whose target residency fits `duration_ns`, or the shallowest enabled one
/// below it if none fits (`state_idx` itself if none is enabled). Polling states are passed
/// over if `no_poll`.
fn find_shallower_state(
    states: &[IdleState],
    mut state_idx: usize,
    duration_ns: u64,
    no_poll: bool,
) -> usize {
    for i in (0..state_idx).rev() {
        if states[i].disabled || (no_poll && states[i].polling) {
            continue;
        }
        state_idx = i;
        if states[i].target_residency_ns <= duration_ns {
            break;
        }
    }
    state_idx
}

impl TeoCpu {
    /// `teo_enable_device()` (teo.c, 6.12.117): everything zeroed.
    pub fn new() -> TeoCpu {
        TeoCpu::default()
    }

    /// `state_bins[]`, one per state of the driver, state 0 first.
    pub fn bins(&self) -> &[TeoBin; CPUIDLE_STATE_MAX] {
        &self.state_bins
    }

    /// `total`: the sum of all metrics at the last update, plus the last event's pulse.
    pub fn total(&self) -> u32 {
        self.total
    }

    /// `tick_hits`: the hits-only bin past the deepest state when its target residency is
    /// below the tick period.
    pub fn tick_hits(&self) -> u32 {
        self.tick_hits
    }

    /// `sleep_length_ns`: the sleep length of the last selection, `KTIME_MAX` if it was not
    /// queried.
    pub fn sleep_length_ns(&self) -> i64 {
        self.sleep_length_ns
    }

    /// `time_span_ns`: from selection to reflect, or the sleep length if a safety net (the
    /// polling limit, the tick) ended the idle period.
    pub fn time_span_ns(&self) -> i64 {
        self.time_span_ns
    }

    /// `teo_state_ok()` (teo.c, 6.12.117): with the tick stopped, states shallower than the
    /// tick period are not worth it.
    fn state_ok(&self, s: &IdleState, tick_stopped: bool) -> bool {
        !tick_stopped || s.target_residency_ns >= self.tick_nsec as u64
    }

    /// `teo_update()` (teo.c, 6.12.117): decay all metrics, then count the last idle
    /// period as a hit in the sleep length's bin or an intercept in the bin it fell into.
    fn update(&mut self, dev: &DevState, states: &[IdleState]) {
        let tick = self.tick_nsec;
        let measured_ns: u64 = if self.time_span_ns >= self.sleep_length_ns {
            // A safety net ended the period, or the wakeup came close enough to the timer
            // seen at selection: the period does not count as shorter than any bin.
            u64::MAX
        } else {
            let lat_ns = usize::try_from(dev.last_state_idx)
                .ok()
                .and_then(|i| states.get(i))
                .map_or(0, |s| s.exit_latency_ns);
            // last_residency_ns rather than time_span_ns (which includes the cpuidle
            // overhead), less half the exit latency as a guess of its average.
            let measured = dev.last_residency_ns;
            if measured >= lat_ns {
                measured - lat_ns / 2
            } else {
                measured / 2
            }
        };

        self.total = 0;
        let mut idx_timer = 0;
        let mut idx_duration = 0;
        let mut target_residency_ns: i64 = 0;
        for (i, s) in states.iter().enumerate() {
            let bin = &mut self.state_bins[i];
            bin.hits -= bin.hits >> DECAY_SHIFT;
            bin.intercepts -= bin.intercepts >> DECAY_SHIFT;
            self.total = self
                .total
                .wrapping_add(bin.hits.wrapping_add(bin.intercepts));
            // An s64 in the kernel; residencies are far below 2^63.
            target_residency_ns = s.target_residency_ns.min(KTIME_MAX) as i64;
            if target_residency_ns <= self.sleep_length_ns {
                idx_timer = i;
                if target_residency_ns as u64 <= measured_ns {
                    idx_duration = i;
                }
            }
        }

        // The deepest state is shallower than the tick period: count hits past the tick
        // period in an extra bin, which teo_select uses for the tick decision.
        if target_residency_ns < tick {
            self.tick_hits -= self.tick_hits >> DECAY_SHIFT;
            self.total = self.total.wrapping_add(self.tick_hits);
            if tick <= self.sleep_length_ns {
                idx_timer = states.len();
                if tick as u64 <= measured_ns {
                    self.tick_hits = self.tick_hits.wrapping_add(PULSE);
                    self.total = self.total.wrapping_add(PULSE);
                    return;
                }
            }
        }

        if idx_timer == idx_duration {
            let bin = &mut self.state_bins[idx_timer];
            bin.hits = bin.hits.wrapping_add(PULSE);
        } else {
            let bin = &mut self.state_bins[idx_duration];
            bin.intercepts = bin.intercepts.wrapping_add(PULSE);
        }
        self.total = self.total.wrapping_add(PULSE);
    }

    /// `teo_select()` (teo.c, 6.12.117).
    pub(crate) fn select(&mut self, dev: &mut DevState, ctx: &IdleCtx) -> Selection {
        let states = ctx.table();
        let n = states.len();
        let latency_req = ctx.latency_req_ns;
        let tick_stopped = ctx.tick_stopped;
        self.tick_nsec = ctx.tick_nsec.min(KTIME_MAX) as i64;
        let tick = self.tick_nsec;
        let mut delta_tick = (tick / 2) as u64;
        let mut queried = false;
        let out = |idx: usize, stop_tick: bool, queried: bool| Selection {
            idx,
            stop_tick,
            sleep_length_queried: queried,
        };

        if dev.last_state_idx >= 0 {
            self.update(dev, states);
            dev.last_state_idx = -1;
        }

        self.time_span_ns = ctx.now_ns.min(KTIME_MAX) as i64;
        // The sleep length is "infinite" unless it is queried below.
        self.sleep_length_ns = KTIME_MAX as i64;

        // No choice to make.
        if n < 2 {
            return out(0, false, false);
        }

        // The deepest enabled state (idx), the first enabled one (idx0), the deepest one
        // within the latency limit (constraint_idx), and the sums of the metrics of all
        // the states shallower than idx.
        let mut idx: Option<usize> = (!states[0].disabled).then_some(0);
        let mut idx0 = 0;
        let mut constraint_idx = 0;
        let mut intercept_sum = 0u32;
        let mut hit_sum = 0u32;
        let mut idx_intercept_sum = 0u32;
        let mut idx_hit_sum = 0u32;
        for (i, s) in states.iter().enumerate().skip(1) {
            let prev_bin = self.state_bins[i - 1];
            intercept_sum = intercept_sum.wrapping_add(prev_bin.intercepts);
            hit_sum = hit_sum.wrapping_add(prev_bin.hits);
            if s.disabled {
                continue;
            }
            if idx.is_none() {
                idx0 = i;
            }
            idx = Some(i);
            if s.exit_latency_ns <= latency_req {
                constraint_idx = i;
            }
            idx_intercept_sum = intercept_sum;
            idx_hit_sum = hit_sum;
        }

        // No state enabled: state 0 must do.
        let Some(mut idx) = idx else {
            return out(0, false, false);
        };

        let duration_ns: u64;
        if idx == idx0 {
            // Only one state is enabled: use it, and let its residency decide the tick.
            duration_ns = states[idx].target_residency_ns;
        } else {
            let tick_intercept_sum = intercept_sum.wrapping_add(self.state_bins[n - 1].intercepts);

            // Intercepts in the shallower bins outweigh everything from the candidate's bin
            // on: look for the deepest state whose residency the idle duration reached in
            // more than half of the intercepted cases, skipping states too shallow for a
            // stopped tick.
            let prev_intercept_idx = idx;
            if idx_intercept_sum.wrapping_mul(2) > self.total.wrapping_sub(idx_hit_sum) {
                let mut first_suitable_idx = idx;
                let mut sum = 0u32;
                for i in (0..idx).rev() {
                    sum = sum.wrapping_add(self.state_bins[i].intercepts);
                    if sum.wrapping_mul(2) > idx_intercept_sum {
                        // Take it unless it is too shallow or disabled; then take the
                        // first deep enough enabled state found on the way down.
                        idx = if self.state_ok(&states[i], tick_stopped) && !states[i].disabled {
                            i
                        } else {
                            first_suitable_idx
                        };
                        break;
                    }
                    if states[i].disabled {
                        continue;
                    }
                    if !self.state_ok(&states[i], tick_stopped) {
                        // Too shallow; an alternative found already may still win.
                        if first_suitable_idx != idx {
                            continue;
                        }
                        break;
                    }
                    first_suitable_idx = i;
                }
            }
            if idx == 0 && prev_intercept_idx != 0 {
                // The sleep length is needed after the wakeup to tell whether this guess
                // was right.
                let (sleep, _) = ctx.sleep_length();
                self.sleep_length_ns = sleep as i64;
                return out(0, false, true);
            }

            // The latency limit may call for a shallower state.
            if idx > constraint_idx {
                idx = constraint_idx;
            }
            // State 0 means an immediate non-timer wakeup is expected: no timer check.
            if idx == 0 {
                return out(0, false, false);
            }
            // A short enough state behind a polling state 0 needs no timer check either.
            if states[0].polling && states[idx].target_residency_ns < RESIDENCY_THRESHOLD_NS {
                return out(idx, false, false);
            }

            let (sleep, dt) = ctx.sleep_length();
            queried = true;
            delta_tick = dt;
            self.sleep_length_ns = sleep as i64;
            let mut d = sleep;
            // The closest timer comes before the candidate's residency: go shallower.
            if states[idx].target_residency_ns > d {
                idx = find_shallower_state(states, idx, d, false);
            }
            // A state shallower than the tick period and intercepts before the tick period
            // making up most of the events: do not stop the tick.
            let total = self.total;
            if states[idx].target_residency_ns < tick as u64
                && tick_intercept_sum > total / 2 + total / 8
            {
                d = (tick / 2) as u64;
            }
            duration_ns = d;
        }

        // The tick may stop unless the state polls or the expected idle duration is
        // shorter than the tick period; a stopped tick stays stopped.
        if (!states[idx].polling && duration_ns as i64 >= tick) || tick_stopped {
            return out(idx, true, queried);
        }
        // The tick will run: fit the state under the time till the next tick.
        if idx > idx0 && states[idx].target_residency_ns > delta_tick {
            idx = find_shallower_state(states, idx, delta_tick, false);
        }
        out(idx, false, queried)
    }

    /// `teo_reflect()` (teo.c, 6.12.117): remember the entered state and how long the CPU
    /// was away since the selection; if the polling limit or the tick (with a sleep length
    /// beyond the tick period) ended the idle period, take the whole sleep length instead.
    pub(crate) fn reflect(
        &mut self,
        dev: &mut DevState,
        idx: usize,
        now_ns: u64,
        tick_wakeup: bool,
    ) {
        dev.last_state_idx = idx as i32;
        if dev.poll_time_limit || (tick_wakeup && self.sleep_length_ns > self.tick_nsec) {
            dev.poll_time_limit = false;
            self.time_span_ns = self.sleep_length_ns;
        } else {
            let now = now_ns.min(KTIME_MAX) as i64;
            self.time_span_ns = now.wrapping_sub(self.time_span_ns);
        }
    }
}

#[cfg(test)]
mod tests {
    //! Selections from prepared bins, for the walk past states too shallow for a stopped
    //! tick. HZ=250: TICK_NSEC = 4 ms.

    use super::*;
    use crate::governor_api::tick_nsec;

    fn st(name: &str, exit_latency_ns: u64, target_residency_ns: u64, polling: bool) -> IdleState {
        IdleState {
            polling,
            ..IdleState::new(name, exit_latency_ns, target_residency_ns)
        }
    }

    /// With the tick stopped, the walk down from C10 records C8 (5 ms, deep enough) as the
    /// first suitable state, passes C1 (too shallow, but a suitable state is known, so it
    /// goes on) and crosses half of the intercepts at POLL, which is too shallow: C8.
    /// Without C8 to fall back on, the walk stops at C1 and C10 stays.
    #[test]
    fn stopped_tick_falls_back_to_the_first_suitable_state() {
        let states = vec![
            st("POLL", 0, 0, true),
            st("C1", 2_000, 2_000, false),
            st("C8", 100_000, 5_000_000, false),
            st("C10", 500_000, 20_000_000, false),
        ];
        let tick = tick_nsec(250);
        let pick = |c8_disabled: bool| {
            let mut states = states.clone();
            states[2].disabled = c8_disabled;
            let mut t = TeoCpu::new();
            // Intercepts: 3000 in bin 0, 100 in bin 1, 100 in bin 2; no hits. The update
            // is skipped (last_state_idx -1), so total stays as set.
            t.state_bins[0].intercepts = 3_000;
            t.state_bins[1].intercepts = 100;
            t.state_bins[2].intercepts = 100;
            t.total = 3_200;
            let mut dev = DevState {
                last_state_idx: -1,
                ..DevState::default()
            };
            let ctx = IdleCtx {
                sleep_length_ns: 30_000_000,
                delta_tick_ns: 30_000_000,
                tick_stopped: true,
                ..IdleCtx::new(&states, tick)
            };
            t.select(&mut dev, &ctx)
        };
        // Intercepts below C10: 3200 (3000 + 100 + 100 if C8 is enabled, as the sums run
        // over all bins); 6400 > 3200 - 0. Walk: bin 2 (100) no, bin 1 (200) no, bin 0
        // (3200 > 1600) yes, but POLL is too shallow: C8. The sleep length (30 ms) fits
        // C8; the tick is stopped: C8, tick stopped.
        let s = pick(false);
        assert_eq!(
            (s.idx, s.stop_tick, s.sleep_length_queried),
            (2, true, true)
        );
        // C8 disabled: C1 is too shallow and no suitable state is known: C10 stays.
        let s = pick(true);
        assert_eq!(
            (s.idx, s.stop_tick, s.sleep_length_queried),
            (3, true, true)
        );
    }
}
