//! Exact integer values derived by hand from the kernel's formulas.
//!
//! Constants used in the derivations (kernel/sched/sched-pelt.h):
//! y^1 = 0xfa83b2da = 4202935002 / 2^32, y^0 = 0xffffffff, LOAD_AVG_MAX = 47742,
//! PELT_MIN_DIVIDER = 47742 - 1024 = 46718. One period is 1024 units of 1024 ns
//! (P = 2^20 ns).

use fairsim_pelt::sim::{simulate, InitMode, Pattern, SimParams, CLOCK_BASE_NS};
use fairsim_pelt::{update_load_avg, update_load_sum, SchedAvg, UtilEstMode};

const P: u64 = 1 << 20;

fn fresh() -> SchedAvg {
    SchedAvg {
        last_update_time: P,
        ..SchedAvg::default()
    }
}

/// An always-running task after 32 periods, accounted in one update.
///
/// delta = 32 * 1024 units, period_contrib 0: periods = 32, sums decay from 0, and
/// contrib = decay(1024 - 0, 32) + (47742 - decay(47742, 32) - 1024) + 0, with
/// decay(1024, 32) = (1024 >> 1) * (2^32 - 1) >> 32 = 511 and
/// decay(47742, 32) = 23871 * (2^32 - 1) >> 32 = 23870, so contrib = 511 + 22848 = 23359.
/// util_sum = 23359 << 10 = 23919616; divider = 46718 (period_contrib 0);
/// util_avg = 23919616 / 46718 = 512 exactly (46718 * 512 = 23919616).
#[test]
fn always_running_32_periods_single_update() {
    let mut sa = fresh();
    assert!(update_load_sum(P + 32 * P, &mut sa, 1, 1, true));
    update_load_avg(&mut sa, 1024);
    assert_eq!(sa.util_sum, 23_919_616);
    assert_eq!(sa.period_contrib, 0);
    assert_eq!(sa.util_avg, 512);
    assert_eq!(sa.runnable_avg, 512);
    // load_sum = 1 * 23359; load_avg = 1024 * 23359 / 46718 = 512.
    assert_eq!(sa.load_sum, 23_359);
    assert_eq!(sa.load_avg, 512);
}

/// An always-running task updated at every period boundary.
///
/// Each update crosses one boundary with period_contrib 0: contrib =
/// decay(1024, 1) + (47742 - decay(47742, 1) - 1024) = 1002 + (47742 - 46718 - 1024)
/// = 1002, so util_sum(n) = (util_sum(n-1) * 4202935002 >> 32) + 1002 * 1024:
/// n=1: 1026048 -> util_avg 1026048 / 46718 = 21;
/// n=2: (1026048 * 4202935002 >> 32) = 1004061, + 1026048 = 2030109 -> 43;
/// n=3: (2030109 * 4202935002 >> 32) = 1986607, + 1026048 = 3012655 -> 64.
#[test]
fn always_running_period_by_period() {
    let mut sa = fresh();
    let expect = [(1_026_048u32, 21u64), (2_030_109, 43), (3_012_655, 64)];
    for (n, (sum, avg)) in expect.into_iter().enumerate() {
        assert!(update_load_sum(P + (n as u64 + 1) * P, &mut sa, 1, 1, true));
        update_load_avg(&mut sa, 1024);
        assert_eq!((sa.util_sum, sa.util_avg), (sum, avg), "period {}", n + 1);
    }
}

/// A task that sleeps exactly 32 periods: one half-life.
///
/// From util_sum 23919616 (above), decay(x, 32) = (x >> 1) * (2^32 - 1) >> 32
/// = 11959808 - 1 = 11959807 (the y^0 entry loses one unit), and
/// util_avg = 11959807 / 46718 = 255, not 256 (46718 * 256 = 11959808).
#[test]
fn sleep_exactly_32_periods_halves_minus_one() {
    let mut sa = fresh();
    update_load_sum(P + 32 * P, &mut sa, 1, 1, true);
    update_load_avg(&mut sa, 1024);
    assert!(update_load_sum(P + 64 * P, &mut sa, 0, 0, false));
    update_load_avg(&mut sa, 1024);
    assert_eq!(sa.util_sum, 11_959_807);
    assert_eq!(sa.util_avg, 255);
}

/// One 50% duty cycle (512 units running, 512 sleeping) starting at phase `phi` units
/// into a period, updated at the end of the run and at the end of the sleep, as a
/// wakeup/sleep pair does. The avg only moves when a boundary is crossed.
///
/// phi = 0: run 0..512 (no boundary): util_sum = 512 << 10 = 524288, avg stays 0,
///   period_contrib 512; sleep 512..1024 crosses one boundary: util_sum =
///   524288 * 4202935002 >> 32 = 513053, period_contrib 0, avg = 513053 / 46718 = 10.
/// phi = 256: run 256..768: util_sum 524288, pc 768; sleep 768..1280: util_sum 513053,
///   pc 256, avg = 513053 / 46974 = 10.
/// phi = 512: run 512..1024 crosses: contrib = decay(512, 1) + 0 + 0 = 501,
///   util_sum = 501 << 10 = 513024, pc 0, avg = 513024 / 46718 = 10; the sleep
///   512 units later crosses nothing, avg stays 10, pc 512.
/// phi = 768: run 768..1280 crosses: contrib = decay(256, 1) + 0 + 256 = 250 + 256 = 506,
///   util_sum = 518144, pc 256, avg = 518144 / 46974 = 11; the sleep crosses nothing.
#[test]
fn half_duty_cycle_at_four_phases() {
    let cases = [
        (0u64, 513_053u32, 10u64, 0u32),
        (256, 513_053, 10, 256),
        (512, 513_024, 10, 512),
        (768, 518_144, 11, 768),
    ];
    for (phi, sum, avg, pc) in cases {
        let mut sa = fresh();
        // Idle up to the phase: no load, no boundary.
        update_load_sum(P + phi * 1024, &mut sa, 0, 0, false);
        if update_load_sum(P + (phi + 512) * 1024, &mut sa, 1, 1, true) {
            update_load_avg(&mut sa, 1024);
        }
        if update_load_sum(P + (phi + 1024) * 1024, &mut sa, 0, 0, false) {
            update_load_avg(&mut sa, 1024);
        }
        assert_eq!(sa.util_sum, sum, "phase {phi}");
        assert_eq!(sa.util_avg, avg, "phase {phi}");
        assert_eq!(sa.period_contrib, pc, "phase {phi}");
    }
}

/// The same 32-period run/sleep through the emulator, with no tick inside the run
/// (HZ = 1), zero init, full capacity: the wake at 0 attaches at a period boundary
/// (util_sum 0, and load_sum 1 from attach's quirk), the sleep at 32 periods gives
/// util_avg 512 (as above) and load_avg = 1024 * (decay(1, 32) + 23359) / 46718
/// = 1024 * 23359 / 46718 = 512, and the wake 32 periods later gives 255.
///
/// util_est (6.12.117 order: util_est_update *before* the PELT update at dequeue): the
/// sample is the stale util_avg 0, so util_est stays 0. In the legacy (v6.7) order the
/// PELT update comes first: the sample is 512 and FASTUP takes it at once.
#[test]
fn emulator_half_life_and_util_est_order() {
    let mut params = SimParams::new(Pattern::duty(32 * P, 32 * P).unwrap(), 64 * P);
    params.init = InitMode::Zero;
    params.tick_ns = 1_000_000_000;
    let s = simulate(&params).unwrap();
    let got: Vec<(u64, u64, u64, u32)> = s
        .iter()
        .map(|x| (x.time_ns, x.util_avg, x.load_avg, x.util_est))
        .collect();
    assert_eq!(
        got,
        vec![(0, 0, 0, 0), (32 * P, 512, 512, 0), (64 * P, 255, 255, 0)]
    );
    assert_eq!(s[0].se.last_update_time, CLOCK_BASE_NS);
    assert_eq!(s[0].se.load_sum, 1);

    params.util_est = UtilEstMode::Legacy { fastup: true };
    let s = simulate(&params).unwrap();
    assert_eq!(s[1].util_est, 512);
    assert_eq!(s[2].util_est, 512);
}

/// Capacity invariance through the clock: 8 ms of running at capacity 512 and max
/// frequency advance the PELT clock by cap_scale(8000000, 512) = 4000000 ns =
/// 3906 units + 256 ns. From a period boundary that crosses 3 boundaries with
/// period_contrib ending at 3906 - 3 * 1024 = 834 units:
/// contrib = decay(1024, 3) + (47742 - decay(47742, 3) - 1024) + 834, with
/// y^3 = 0xefe4b99a: decay(1024, 3) = 1024 * 4024744346 >> 32 = 959,
/// decay(47742, 3) = 47742 * 4024744346 >> 32 = 44738, c2 = 47742 - 44738 - 1024 = 1980,
/// contrib = 959 + 1980 + 834 = 3773, util_sum = 3773 << 10 = 3863552,
/// util_avg = 3864576 / (46718 + 834) = 81.
#[test]
fn emulator_capacity_scales_the_clock() {
    let mut params = SimParams::new(Pattern::duty(8_000_000, 8_000_000).unwrap(), 8_000_000);
    params.init = InitMode::Zero;
    params.cpu_capacity = 512;
    params.tick_ns = 1_000_000_000;
    let s = simulate(&params).unwrap();
    let sleep = s.last().unwrap();
    assert_eq!(sleep.se.util_sum, 3_863_552);
    assert_eq!(sleep.se.period_contrib, 834);
    assert_eq!(sleep.util_avg, 81);
    // The PELT clock synced back to clock_task when the CPU went idle.
    assert_eq!(sleep.clock.clock_pelt, CLOCK_BASE_NS + 8_000_000);
    assert_eq!(sleep.clock.lost_idle_time, 0);
}

/// New-task initialisation on an idle CPU of capacity 446: util_avg = runnable_avg =
/// (446 - 0) / 2 = 223 and load_avg = 1024, visible at the first wake (attach keeps the
/// averages and rebuilds the sums: util_sum = 223 * 46718 = 10418114).
#[test]
fn emulator_new_task_init() {
    let mut params = SimParams::new(Pattern::duty(8_000_000, 8_000_000).unwrap(), 1);
    params.cpu_capacity = 446;
    let s = simulate(&params).unwrap();
    assert_eq!(
        (s[0].util_avg, s[0].runnable_avg, s[0].load_avg),
        (223, 223, 1024)
    );
    assert_eq!(s[0].se.util_sum, 10_418_114);
    // load_sum = 1024 * 46718 / 1024 = 46718.
    assert_eq!(s[0].se.load_sum, 46_718);
}
