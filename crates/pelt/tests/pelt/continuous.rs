//! A slow floating-point "continuous PELT" run side by side with the kernel's integer
//! form, and the bound on how far apart they may be.
//!
//! Continuous model: in PELT time, util = 1024 * u with du/dt pulling u towards 1 while
//! running and towards 0 otherwise, at the rate that halves a difference every 32
//! periods (32 * 1024 * 1024 ns). The PELT clock is modelled as the kernel does: while
//! the task runs it advances at cap * freq / 2^20 of real time; when the CPU goes idle
//! it jumps back to real time, so the stolen time counts as idle.
//!
//! Documented bound: |util_avg - continuous| <= 1024 * (1 - y) * 2 + 4 (about 47.8),
//! with y = 2^(-1/32). Why: the kernel (1) recomputes util_avg only when a period
//! boundary is crossed, so the printed value can lag the exact sum by up to one period,
//! in which the continuous value moves by at most 1024 * (1 - y); (2) weighs each
//! contribution by y^(whole periods of age), i.e. rounds every age down or up by less
//! than one period, a relative error of at most 1 - y on the whole sum; and (3)
//! truncates time to 1024 ns units and every product, a few units in total.

use fairsim_pelt::sim::{simulate, Event, InitMode, Pattern, SimParams};
use proptest::prelude::*;

const HALF_LIFE_NS: f64 = 32.0 * 1_048_576.0;

fn bound() -> f64 {
    let y = 0.5f64.powf(1.0 / 32.0);
    1024.0 * (1.0 - y) * 2.0 + 4.0
}

/// Returns the largest |kernel - continuous| over all events of a run.
fn max_deviation(run_ns: u64, sleep_ns: u64, cap: u64, freq: u64, hz: u64, dur: u64) -> f64 {
    let mut params = SimParams::new(Pattern::duty(run_ns, sleep_ns).unwrap(), dur);
    params.init = InitMode::Zero;
    params.cpu_capacity = cap;
    params.freq_capacity = freq;
    params.tick_ns = fairsim_pelt::sim::tick_nsec(hz);
    let samples = simulate(&params).unwrap();

    let s = (cap * freq) as f64 / 1_048_576.0;
    let decay = |dt: f64| 0.5f64.powf(dt / HALF_LIFE_NS);
    let mut u = 0.0f64;
    let mut last_t = 0u64; // real time of the last model step
    let mut running = false;
    let mut run_start = 0u64;
    let mut worst = 0.0f64;
    for x in &samples {
        let dt = (x.time_ns - last_t) as f64;
        if running {
            // Running: PELT time advances at rate s.
            u = 1.0 - (1.0 - u) * decay(dt * s);
        } else {
            u *= decay(dt);
        }
        match x.event {
            Event::Wake => {
                running = true;
                run_start = x.time_ns;
            }
            Event::Sleep => running = false,
            Event::Tick => {}
        }
        last_t = x.time_ns;
        worst = worst.max((x.util_avg as f64 - 1024.0 * u).abs());
        if x.event == Event::Sleep {
            // The CPU goes idle and the PELT clock syncs: the time the run "stole" at
            // reduced capacity becomes idle time, applied after this sample.
            u *= decay((x.time_ns - run_start) as f64 * (1.0 - s));
        }
    }
    worst
}

#[test]
fn canonical_cases_within_bound() {
    let b = bound();
    for &(run, sleep, cap, freq) in &[
        (8_000_000u64, 8_000_000u64, 1024u64, 1024u64),
        (8_000_000, 8_000_000, 446, 614),
        (2_000_000, 30_000_000, 1024, 1024),
        (30_000_000, 2_000_000, 1024, 1024),
        (16_000_000, 4_000_000, 606, 1024),
    ] {
        let d = max_deviation(run, sleep, cap, freq, 250, 500_000_000);
        eprintln!("run {run} sleep {sleep} cap {cap} freq {freq}: max deviation {d:.2}");
        assert!(
            d <= b,
            "run {run} sleep {sleep} cap {cap} freq {freq}: {d} > {b}"
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn random_patterns_within_bound(
        run in 100_000u64..40_000_000,
        sleep in 2_000_000u64..40_000_000,
        cap in 64u64..=1024,
        freq in 64u64..=1024,
        hz in prop::sample::select(vec![100u64, 250, 300, 1000]),
    ) {
        let d = max_deviation(run, sleep, cap, freq, hz, 400_000_000);
        prop_assert!(d <= bound(), "deviation {} > {}", d, bound());
    }
}
