//! Properties over random patterns, capacities and frequencies.

use fairsim_pelt::clock::cap_scale;
use fairsim_pelt::sim::{simulate, tick_nsec, Event, InitMode, Pattern, Phase, SimParams};
use fairsim_pelt::util_est::{util_est_update, UtilEstMode, UTIL_AVG_UNCHANGED, UTIL_EST_MARGIN};
use fairsim_pelt::{SchedAvg, PELT_MIN_DIVIDER};
use proptest::prelude::*;

fn mode_strategy() -> impl Strategy<Value = UtilEstMode> {
    prop::sample::select(vec![
        UtilEstMode::V6_12,
        UtilEstMode::Legacy { fastup: true },
        UtilEstMode::Legacy { fastup: false },
        UtilEstMode::Off,
    ])
}

fn pattern_strategy() -> impl Strategy<Value = Pattern> {
    prop::collection::vec((1_000u64..30_000_000, 1_000u64..30_000_000), 1..=3).prop_map(|pairs| {
        let mut phases = Vec::new();
        for (r, s) in pairs {
            phases.push(Phase::Run(r));
            phases.push(Phase::Sleep(s));
        }
        Pattern::new(phases).unwrap()
    })
}

fn params(
    pattern: Pattern,
    cap: u64,
    freq: u64,
    hz: u64,
    mode: UtilEstMode,
    init: InitMode,
) -> SimParams {
    let mut p = SimParams::new(pattern, 200_000_000);
    p.cpu_capacity = cap;
    p.freq_capacity = freq;
    p.tick_ns = tick_nsec(hz);
    p.util_est = mode;
    p.init = init;
    p
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// Every signal stays within the capacity scale (load within the task's weight),
    /// and the samples come in time order with the documented event order.
    #[test]
    fn signals_within_bounds(
        pattern in pattern_strategy(),
        cap in 1u64..=1024,
        freq in 1u64..=1024,
        hz in prop::sample::select(vec![100u64, 250, 300, 1000]),
        mode in mode_strategy(),
        zero in any::<bool>(),
    ) {
        let init = if zero { InitMode::Zero } else { InitMode::Kernel };
        let samples = simulate(&params(pattern, cap, freq, hz, mode, init)).unwrap();
        let mut last = 0;
        for s in &samples {
            prop_assert!(s.util_avg <= 1024, "util {}", s.util_avg);
            prop_assert!(s.runnable_avg <= 1024, "runnable {}", s.runnable_avg);
            prop_assert!(s.load_avg <= 1024, "load {}", s.load_avg);
            prop_assert!(s.util_est <= 1024, "util_est {}", s.util_est);
            prop_assert!(s.cfs.util_avg <= 1024);
            prop_assert!(s.time_ns >= last);
            last = s.time_ns;
        }
        prop_assert_eq!(samples[0].event, Event::Wake);
    }

    /// util never exceeds what the run time allows: util_sum only grows by 1024 per
    /// 1024-ns unit of running in PELT time (decay only shrinks it), so with zero init
    /// util_sum <= 1024 * (scaled run time / 1024 + number of run intervals), and
    /// util_avg <= util_sum / PELT_MIN_DIVIDER.
    #[test]
    fn util_bounded_by_run_time(
        pattern in pattern_strategy(),
        cap in 1u64..=1024,
        freq in 1u64..=1024,
        hz in prop::sample::select(vec![100u64, 250, 1000]),
    ) {
        let p = params(pattern.clone(), cap, freq, hz, UtilEstMode::V6_12, InitMode::Zero);
        let samples = simulate(&p).unwrap();
        let intervals = pattern.run_intervals(p.duration_ns);
        for s in &samples {
            // Running time (real ns) before this sample, scaled as the clock scales it
            // (one cap_scale pair per interval is an upper bound of the per-tick sum).
            let mut units = 0u64;
            for &(a, b) in &intervals {
                if a >= s.time_ns { break; }
                let ran = b.min(s.time_ns) - a;
                units += cap_scale(cap_scale(ran, cap), freq) / 1024 + 1;
            }
            prop_assert!(s.se.util_sum as u64 <= 1024 * units,
                "t {} util_sum {} > 1024 * {}", s.time_ns, s.se.util_sum, units);
            prop_assert!(s.util_avg <= s.se.util_sum as u64 / PELT_MIN_DIVIDER as u64 + 1);
        }
    }

    /// A longer first run never yields a lower util_avg at its end.
    #[test]
    fn longer_run_never_lowers_util(
        run in 1_000u64..100_000_000,
        extra in 0u64..50_000_000,
        cap in 1u64..=1024,
        freq in 1u64..=1024,
        hz in prop::sample::select(vec![100u64, 250, 1000]),
        zero in any::<bool>(),
    ) {
        let init = if zero { InitMode::Zero } else { InitMode::Kernel };
        let at_sleep = |r: u64| {
            let mut p = params(Pattern::duty(r, 1_000_000_000).unwrap(), cap, freq, hz,
                               UtilEstMode::V6_12, init);
            p.duration_ns = r;
            let s = simulate(&p).unwrap();
            let last = *s.last().unwrap();
            assert_eq!(last.event, Event::Sleep);
            last.util_avg
        };
        let short = at_sleep(run);
        let long = at_sleep(run + extra);
        prop_assert!(long >= short, "run {} -> {}, run {} -> {}", run, short, run + extra, long);
    }

    /// util_est is left unchanged when the new sample is within the margin below it
    /// (6.12 form: only the flag is set), and in the legacy form when both the EWMA and
    /// the previous sample are within the margin of the new one.
    #[test]
    fn util_est_within_margin_is_unchanged(
        ewma in 10u32..=1024,
        below in 1u32..UTIL_EST_MARGIN,
        prev_delta in 0u32..(2 * UTIL_EST_MARGIN - 1),
        ewma_delta in 0u32..(2 * UTIL_EST_MARGIN - 1),
        fastup in any::<bool>(),
    ) {
        // 6.12: sample = ewma - below, 0 < below < margin.
        let sample = ewma - below;
        let mut p = SchedAvg { util_avg: sample as u64, runnable_avg: sample as u64,
                               util_est: ewma, ..SchedAvg::default() };
        util_est_update(&mut p, true, 1024, UtilEstMode::V6_12);
        prop_assert_eq!(p.util_est, ewma | UTIL_AVG_UNCHANGED);

        // Legacy: new sample s, ewma and previous enqueued both within (-margin, margin)
        // of s. (With FASTUP an ewma below the sample is replaced, so keep it >= s then.)
        let s = 500u32;
        let prev = s + prev_delta - (UTIL_EST_MARGIN - 1);
        let ew = if fastup { s + ewma_delta / 2 } else { s + ewma_delta - (UTIL_EST_MARGIN - 1) };
        let mut p = SchedAvg { util_avg: s as u64, runnable_avg: s as u64,
                               util_est: prev, util_est_ewma: ew, ..SchedAvg::default() };
        util_est_update(&mut p, true, 1024, UtilEstMode::Legacy { fastup });
        prop_assert_eq!((p.util_est, p.util_est_ewma), (prev, ew));
    }
}
