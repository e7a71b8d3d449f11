//! Run-to-run noise: what makes two runs of one scenario on a real machine differ.
//!
//! A kernel path never takes exactly the same time twice: cache and TLB state, branch
//! predictors, interrupts and SMT siblings move it around a floor set by its instructions.
//! fairsim's cost table gives each path's mean; with noise on, each charged piece of work
//! takes a duration drawn around that mean, every launched (root) task starts at a random
//! phase of the scheduler tick, and a quiet hrtimer fires somewhere in its slack window
//! rather than always at its hard expiry. Everything is drawn from one stream derived from
//! the run's seed, in event order, so a seed still gives the same bytes; another seed gives
//! another run, and `compare`'s standard deviations mean what a kernel developer's do.
//!
//! # The distribution and its basis
//!
//! A duration is `mean * (1 - s) + mean * s * E`: a floor plus an exponential-like tail,
//! where `E` has mean 1 and `s` is the spread (default 0.10, `--noise SPREAD`). `E` is
//! drawn with integers only (so that every platform draws the same values): the number of
//! trailing zero bits of a random word (geometric, mean 1) plus a uniform fraction, over
//! 1.5. Its quantiles: p1 0.01, p50 0.67, p99 4.4; the coefficient of variation of a
//! duration is 0.96 `s`.
//!
//! The spread is measured, not fitted: on the project's build host (an x86 VM running
//! Linux 6.18), 2 x 200,000 round trips of a pipe ping-pong between two tasks pinned to
//! one CPU (two wakeups, two context switches, four system calls: nothing but scheduler
//! and syscall paths) took p1 3.98-4.00 us, p50 4.13 us, p99 4.80-5.80 us, with a
//! coefficient of variation of 0.05-0.07 below p99 and a long tail of interrupts above
//! it (`validation/host/src/rtt-dist.c`). With s = 0.10 the model gives p1/p50 0.93,
//! p99/p50 1.39 and a CV of 0.10: the measured floor and p99 are bracketed, and the
//! model's tail is somewhat heavier than the trimmed sample's, standing in for the
//! interrupts the engine does not model.
//!
//! A quiet timer armed with slack fires, in the kernel, at its hard expiry unless another
//! interrupt on its CPU runs it earlier (see [`crate::world::TimerExpiry`]). The engine
//! models the interrupts it knows of (ticks, other timers); the ones it does not (device
//! interrupts, other processes' timers, RCU) are the noise: the timer fires
//! `min(slack, slack * s * E)` before its hard expiry. The root tasks of a run start at a
//! uniform offset within the first tick period, because a real launch happens at an
//! arbitrary phase of the jiffy.

use fairsim_des::rng::SimRng;

/// The default spread, in parts per thousand (see the module docs for its basis).
pub const DEFAULT_SPREAD_PERMILLE: u32 = 100;

/// The noise setting of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct NoiseModel {
    /// Spread `s` in parts per thousand; 0 is off (today's exact, noiseless behaviour).
    pub spread_permille: u32,
}

impl NoiseModel {
    /// No noise: every duration is its mean.
    pub const OFF: NoiseModel = NoiseModel { spread_permille: 0 };

    /// The default noise.
    pub const DEFAULT: NoiseModel = NoiseModel {
        spread_permille: DEFAULT_SPREAD_PERMILLE,
    };

    /// Whether noise is on.
    pub fn is_on(self) -> bool {
        self.spread_permille > 0
    }

    /// Parses `off`, `on` (the default spread) or a spread in `0..=1` (`0.1`).
    pub fn parse(s: &str) -> Option<NoiseModel> {
        match s.trim() {
            "off" | "0" => Some(NoiseModel::OFF),
            "on" => Some(NoiseModel::DEFAULT),
            v => {
                let x: f64 = v.parse().ok()?;
                if !(0.0..=1.0).contains(&x) || !x.is_finite() {
                    return None;
                }
                Some(NoiseModel {
                    spread_permille: (x * 1000.0).round() as u32,
                })
            }
        }
    }

    /// The setting as `--noise` takes it.
    pub fn describe(self) -> String {
        if self.is_on() {
            format!("{}", self.spread_permille as f64 / 1000.0)
        } else {
            "off".into()
        }
    }
}

/// The noise source of one run: the model and its own stream.
#[derive(Debug, Clone)]
pub struct Noise {
    model: NoiseModel,
    rng: SimRng,
}

impl Noise {
    /// The noise of a run with `seed`; its stream is apart from the workloads' and the
    /// scheduler's.
    pub fn new(model: NoiseModel, seed: u64) -> Noise {
        Noise {
            model,
            rng: SimRng::derive(seed, u64::MAX - 1),
        }
    }

    /// Whether noise is on.
    pub fn is_on(&self) -> bool {
        self.model.is_on()
    }

    /// `E` in units of 1/1536 (mean 1536): trailing zeros of the low 54 bits of a random
    /// word plus a uniform 10-bit fraction from its top bits (independent bits of one
    /// draw, so that a charge costs one step of the stream).
    fn tail_q(&mut self) -> u64 {
        let w = self.rng.next_u64();
        let tz = u64::from((w & ((1 << 54) - 1)).trailing_zeros().min(40));
        let frac = w >> 54;
        tz * 1024 + frac
    }

    /// The duration of a piece of kernel work whose mean is `mean` ns.
    pub fn work(&mut self, mean: u64) -> u64 {
        let s = u128::from(self.model.spread_permille);
        if s == 0 || mean == 0 {
            return mean;
        }
        let q = self.tail_q();
        // The same quotients in 64 bits for every charge under 2^32 ns (4.3 s), where no
        // product can overflow (`s` <= 1000 < 2^10, `q` < 2^16): a 128-bit division is a
        // library call, and this runs for every piece of kernel work the engine charges.
        if mean < 1 << 32 {
            let s = s as u64;
            return mean * (1000 - s) / 1000 + mean * s * q / (1000 * 1536);
        }
        let m = u128::from(mean);
        let floor = m * (1000 - s) / 1000;
        let tail = m * s * u128::from(q) / (1000 * 1536);
        (floor + tail).min(u128::from(u64::MAX)) as u64
    }

    /// How much earlier than its hard expiry a quiet timer with `slack` fires.
    pub fn timer_early(&mut self, slack: u64) -> u64 {
        let s = u128::from(self.model.spread_permille);
        if s == 0 || slack == 0 {
            return 0;
        }
        let q = self.tail_q();
        if slack < 1 << 32 {
            return (slack * s as u64 * q / (1000 * 1536)).min(slack);
        }
        let early = u128::from(slack) * s * u128::from(q) / (1000 * 1536);
        early.min(u128::from(slack)) as u64
    }

    /// A uniform offset in `0..period`, for a launch's phase.
    pub fn phase(&mut self, period: u64) -> u64 {
        if !self.is_on() || period == 0 {
            return 0;
        }
        self.rng.below(period)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn off_is_exact_and_on_varies_around_the_mean() {
        let mut off = Noise::new(NoiseModel::OFF, 1);
        assert_eq!(off.work(1_500), 1_500);
        assert_eq!(off.timer_early(50_000), 0);
        assert_eq!(off.phase(4_000_000), 0);
        let mut on = Noise::new(NoiseModel::DEFAULT, 1);
        let n = 200_000u64;
        let draws: Vec<u64> = (0..n).map(|_| on.work(10_000)).collect();
        let mean = draws.iter().sum::<u64>() as f64 / n as f64;
        assert!((mean - 10_000.0).abs() < 30.0, "mean {mean}");
        assert!(draws.iter().all(|&d| d >= 9_000));
        let mut sorted = draws.clone();
        sorted.sort_unstable();
        let p50 = sorted[(n / 2) as usize] as f64;
        let p99 = sorted[(n * 99 / 100) as usize] as f64;
        assert!((9_500.0..9_800.0).contains(&p50), "p50 {p50}");
        assert!((13_000.0..14_000.0).contains(&p99), "p99 {p99}");
        assert!((0..1000).all(|_| on.timer_early(50_000) <= 50_000));
    }

    /// The 64-bit fast paths of `work` and `timer_early` give the 128-bit formulas'
    /// results, from a nanosecond to charges whose products overflow 64 bits.
    #[test]
    fn the_64_bit_path_equals_the_128_bit_formula() {
        let mut fast = Noise::new(NoiseModel::DEFAULT, 3);
        let mut refq = Noise::new(NoiseModel::DEFAULT, 3);
        let s = u128::from(NoiseModel::DEFAULT.spread_permille);
        let mut x = 1u64;
        for i in 0..200_000u32 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            // Means spread over every magnitude, up to u64::MAX.
            let mean = (x >> (i % 64)).max(1);
            let q = u128::from(refq.tail_q());
            let m = u128::from(mean);
            let want =
                (m * (1000 - s) / 1000 + m * s * q / (1000 * 1536)).min(u128::from(u64::MAX));
            assert_eq!(u128::from(fast.work(mean)), want, "mean {mean}");
            let q = u128::from(refq.tail_q());
            let early = (m * s * q / (1000 * 1536)).min(m);
            assert_eq!(u128::from(fast.timer_early(mean)), early, "slack {mean}");
        }
    }

    #[test]
    fn same_seed_same_draws_other_seed_other_draws() {
        let a: Vec<u64> = {
            let mut x = Noise::new(NoiseModel::DEFAULT, 7);
            (0..16).map(|_| x.work(1_000)).collect()
        };
        let b: Vec<u64> = {
            let mut x = Noise::new(NoiseModel::DEFAULT, 7);
            (0..16).map(|_| x.work(1_000)).collect()
        };
        let c: Vec<u64> = {
            let mut x = Noise::new(NoiseModel::DEFAULT, 8);
            (0..16).map(|_| x.work(1_000)).collect()
        };
        assert_eq!(a, b);
        assert_ne!(a, c);
    }

    #[test]
    fn parse_takes_off_on_and_spreads() {
        assert_eq!(NoiseModel::parse("off"), Some(NoiseModel::OFF));
        assert_eq!(NoiseModel::parse("on"), Some(NoiseModel::DEFAULT));
        assert_eq!(
            NoiseModel::parse("0.25"),
            Some(NoiseModel {
                spread_permille: 250
            })
        );
        assert_eq!(NoiseModel::parse("2"), None);
        assert_eq!(NoiseModel::parse("nan"), None);
        assert_eq!(NoiseModel::parse("x"), None);
    }
}
