//! CFS arithmetic of the era kernels (3.9, 4.5, 4.15, 4.16, 6.5) checked against values
//! worked by hand from each kernel's fair.c (the extracts in /tmp/k when this was
//! written): `__sched_period` / `sched_slice`, sleeper credit and START_DEBIT in
//! `place_entity`, the buddies in `pick_next_entity`, the `wakeup_gran` threshold of
//! `wakeup_preempt_entity`, and the migration renormalisation of `min_vruntime`. Property
//! tests drive one CPU with random operations and check that `min_vruntime` never goes
//! back, the runqueue invariants hold, and no nice-0 hog starves.
//!
//! Tunables (`update_sysctl`, factor 1 + ilog2(min(ncpus, 8))):
//! - 1 CPU: latency 6 ms, min_granularity 0.75 ms, wakeup_granularity 1 ms;
//! - 8 CPUs: latency 24 ms, min_granularity 3 ms, wakeup_granularity 4 ms;
//! - `sched_nr_latency` 8 in both.
//!
//! The two divisions, as the kernels do them (weights in their user-visible form):
//! - 4.5 and later, `__calc_delta(delta, w, lw)`: `inv = 0xffffffff / lw` (or the task's
//!   `sched_prio_to_wmult[]` entry for its own load), `fact = w * inv` shifted right until
//!   it fits 32 bits (the shift 32 reduced by as much), result `(delta * fact) >> shift`,
//!   truncating.
//! - 3.9, `calc_delta_mine(delta, w, lw)`: `inv = 2^32 / lw` (or `prio_to_wmult[]`),
//!   `tmp = delta * w`; when `tmp > 2^32`: `SRR(SRR(tmp, 16) * inv, 16)`, else
//!   `SRR(tmp * inv, 32)`, where `SRR(x, y) = (x + 2^(y-1)) >> y` rounds.

use fairsim_balance::cfs::calc::calc_delta_fair_era;
use fairsim_balance::cfs::entity::{
    enqueue_entity, place_entity, sched_period, sched_slice, sched_vslice, set_next_entity,
    update_min_vruntime,
};
use fairsim_balance::cfs::pick::{pick_next_entity, wakeup_gran, wakeup_preempt_entity};
use fairsim_balance::cfs_rq::{CfsRq, FairParams, RqClocks};
use fairsim_balance::weight::{LoadWeight, NICE_0_LOAD};
use fairsim_balance::{
    base_slice_for, CfsTunables, Features, Kernel, Sched, SchedParams, Task, TaskId, TaskState,
    WakeDecision,
};
use fairsim_topology::source::preset;
use fairsim_topology::{build_sched_domains, BuildOptions, CpuMask};
use proptest::prelude::*;

const MS: u64 = 1_000_000;
/// HZ=250.
const TICK: u64 = 4 * MS;

/// The CFS kernels, oldest first.
const CFS: [Kernel; 5] = [
    Kernel::V3_9,
    Kernel::V4_5,
    Kernel::V4_15,
    Kernel::V4_16,
    Kernel::V6_5,
];

// ---------------------------------------------------------------------------------------
// Reference arithmetic, written from the kernels' sources (not from fairsim's code).
// ---------------------------------------------------------------------------------------

/// `__calc_delta(delta, w, lw)` of 4.5+ with `inv` the inverse weight it uses.
fn ref_calc_delta_inv(delta: u64, w: u64, inv: u64) -> u64 {
    let mut fact = u128::from(w) * u128::from(inv);
    let mut shift = 32;
    while fact >> 32 != 0 {
        fact >>= 1;
        shift -= 1;
    }
    ((u128::from(delta) * fact) >> shift) as u64
}

/// `__calc_delta(delta, w, lw)` of 4.5+ for a runqueue load `lw` (inverse computed by
/// `__update_inv_weight`: `WMULT_CONST / lw`, `WMULT_CONST = ~0U`).
fn ref_calc_delta(delta: u64, w: u64, lw: u64) -> u64 {
    ref_calc_delta_inv(delta, w, 0xffff_ffff / lw)
}

fn srr(x: u128, y: u32) -> u128 {
    (x + (1u128 << (y - 1))) >> y
}

/// `calc_delta_mine(delta, w, lw)` of 3.9 with `inv` the inverse weight it uses.
fn ref_calc_delta_mine_inv(delta: u64, w: u64, inv: u64) -> u64 {
    let tmp = if w > 1 {
        u128::from(delta) * u128::from(w)
    } else {
        u128::from(delta)
    };
    let r = if tmp > 1u128 << 32 {
        srr(srr(tmp, 16) * u128::from(inv), 16)
    } else {
        srr(tmp * u128::from(inv), 32)
    };
    r.min(i64::MAX as u128) as u64
}

/// `calc_delta_mine(delta, w, lw)` of 3.9 for a runqueue load (`WMULT_CONST = 1UL << 32`
/// on 64-bit in 3.9).
fn ref_calc_delta_mine(delta: u64, w: u64, lw: u64) -> u64 {
    ref_calc_delta_mine_inv(delta, w, (1u64 << 32) / lw)
}

/// `__sched_period(nr)`.
fn ref_period(nr: u64, t: &CfsTunables) -> u64 {
    if nr > t.nr_latency {
        nr * t.min_granularity
    } else {
        t.latency
    }
}

/// The era's `sched_slice` for an entity of weight `w` counted in a queue of `nr`
/// entities weighing `sum` together.
fn ref_slice(k: Kernel, nr: u64, w: u64, sum: u64, t: &CfsTunables) -> u64 {
    let p = ref_period(nr, t);
    match k {
        Kernel::V3_9 => ref_calc_delta_mine(p, w, sum),
        Kernel::V6_5 => ref_calc_delta(p, w, sum).max(t.min_granularity),
        _ => ref_calc_delta(p, w, sum),
    }
}

// ---------------------------------------------------------------------------------------
// Setups.
// ---------------------------------------------------------------------------------------

/// An 8-CPU machine (tunable factor 4) running `features`' kernel.
fn sched_with(features: Features) -> Sched {
    let m = preset("smt-mc-1s4c2t").unwrap();
    let topo = build_sched_domains(&m, BuildOptions::default()).unwrap();
    let params = SchedParams {
        features,
        util_est: features.kernel().util_est(),
        ..SchedParams::default()
    };
    Sched::new(m, topo, params)
}

fn sched(k: Kernel) -> Sched {
    sched_with(k.features())
}

/// Fair-class parameters of kernel `k` on `ncpus` CPUs, built by hand.
fn params_for(features: Features, ncpus: usize) -> FairParams {
    FairParams {
        features,
        cfs: CfsTunables::for_cpus(ncpus),
        base_slice: base_slice_for(ncpus),
        tick_nsec: TICK,
        util_est: features.kernel().util_est(),
    }
}

fn params(k: Kernel, ncpus: usize) -> FairParams {
    params_for(k.features(), ncpus)
}

/// Fresh tasks of the given nice levels (not queued anywhere).
fn tasks_of(nices: &[i32]) -> Vec<Task> {
    let mut s = sched(Kernel::V4_15);
    for &n in nices {
        s.create_task("t", n, None, 0);
    }
    s.tasks.clone()
}

fn clocks(t: u64) -> RqClocks {
    RqClocks {
        clock_task: t,
        clock_pelt: t,
    }
}

/// A runqueue with `tasks[i]` enqueued (flags 0: not a wakeup, so the vruntime given,
/// relative, is made absolute by adding `min_vruntime`) at `rel[i]` above the initial
/// `min_vruntime` (-2^20, so every comparison must be wrap-safe).
fn queue_with(k: Kernel, nices: &[i32], rel: &[u64]) -> (CfsRq, Vec<Task>, FairParams) {
    let p = params(k, 8);
    let mut tasks = tasks_of(nices);
    let mut cfs = CfsRq::default();
    for (i, &r) in rel.iter().enumerate() {
        tasks[i].se.vruntime = r;
        enqueue_entity(&mut cfs, &mut tasks, i, 0, clocks(MS), &p);
        cfs.h_nr_queued += 1;
    }
    (cfs, tasks, p)
}

/// `v - base` as a signed difference (wrap-safe).
fn diff(v: u64, base: u64) -> i64 {
    v.wrapping_sub(base) as i64
}

/// Forks a task pinned to `cpu` at `now` (from that CPU) and enqueues it there.
fn spawn(s: &mut Sched, cpu: usize, nice: i32, now: u64) -> TaskId {
    let n = s.nr_cpus();
    let p = s.create_task("t", nice, Some(CpuMask::single(n, cpu)), cpu);
    s.task_fork(p, cpu, now);
    assert_eq!(s.wake_up_new_task_select(p, cpu, now), cpu);
    s.wake_up_new_task_activate(p, now);
    p
}

/// Runs `cpu` from `from` to `to`: schedules when needed and ticks at every multiple of
/// the tick period.
fn run(s: &mut Sched, cpu: usize, from: u64, to: u64) {
    if s.rqs[cpu].curr.is_none() || s.rqs[cpu].need_resched {
        s.schedule(cpu, from);
    }
    let mut t = (from / TICK + 1) * TICK;
    while t <= to {
        if s.tick(cpu, t) {
            s.schedule(cpu, t);
        }
        s.check_invariants().unwrap();
        t += TICK;
    }
    s.update_rq_clock(cpu, to);
}

/// Wakes the sleeping `p` at `now` from `cpu` (try_to_wake_up + ttwu_do_activate).
fn wake(s: &mut Sched, p: TaskId, cpu: usize, now: u64) -> bool {
    match s.try_to_wake_up(p, cpu, 0, now) {
        WakeDecision::Enqueue {
            wake_flags,
            via_wakelist,
            ..
        } => s.ttwu_do_activate(p, wake_flags, via_wakelist, now),
        WakeDecision::Runnable { preempt, .. } => preempt,
        WakeDecision::NotSleeping => false,
    }
}

// ---------------------------------------------------------------------------------------
// 1. __sched_period and sched_slice.
// ---------------------------------------------------------------------------------------

#[test]
fn sched_period_is_latency_up_to_nr_latency_then_nr_min_granularities() {
    // nr <= 8: sysctl_sched_latency; nr > 8: nr * sysctl_sched_min_granularity.
    // 1 CPU: 6 ms, then 9 * 0.75 = 6.75 ms, 7.5, 8.25, 9 ms.
    let one = [6.0, 6.0, 6.0, 6.0, 6.0, 6.0, 6.0, 6.0, 6.75, 7.5, 8.25, 9.0];
    // 8 CPUs: 24 ms, then 9 * 3 = 27 ms, 30, 33, 36 ms.
    let eight = [24, 24, 24, 24, 24, 24, 24, 24, 27, 30, 33, 36];
    for k in CFS {
        let p1 = params(k, 1);
        let p8 = params(k, 8);
        for n in 1..=12u64 {
            let i = n as usize - 1;
            assert_eq!(
                sched_period(n, &p1),
                (one[i] * 1e6) as u64,
                "{k} 1 cpu nr {n}"
            );
            assert_eq!(sched_period(n, &p8), eight[i] * MS, "{k} 8 cpus nr {n}");
        }
        // nr 0 (an empty queue) is still the latency.
        assert_eq!(sched_period(0, &p8), 24 * MS);
    }
}

/// `sched_slice` of one of `n` queued nice-0 entities, n = 1..=12, worked by hand:
///
/// 4.5+ (`__calc_delta`, truncating): `inv = 0xffffffff / (1024 n)`,
/// `slice = period * 1024 * inv >> 32` (1024 * inv < 2^32 always: no extra shift).
/// - 8 CPUs, n = 1: inv = 4194303 (0xffffffff / 1024 = 4194303.999), 1024 * inv =
///   4294966272, 24e6 * 4294966272 / 2^32 = 23999994.28 -> 23999994.
/// - 8 CPUs, n = 2: inv = 2097151, 1024 * inv = 2147482624, 24e6 * that / 2^32 =
///   11999994.28 -> 11999994.
/// - 8 CPUs, n = 9: period 27 ms, inv = 0xffffffff / 9216 = 466033, 1024 * inv =
///   477217792, 27e6 * that / 2^32 = 2999994.9 -> 2999994.
/// - 1 CPU, n = 1: 6e6 * 4294966272 / 2^32 = 5999998.57 -> 5999998.
///
/// 3.9 (`calc_delta_mine`, rounding, `inv = 2^32 / (1024 n)`):
/// - 8 CPUs, n = 2: tmp = 24e6 * 1024 = 24576000000 > 2^32: SRR(tmp, 16) = 375000,
///   inv = 2097152, 375000 * 2097152 = 786432000000, SRR(., 16) = 12000000.
/// - 1 CPU, n = 9: period 6.75 ms, tmp = 6912000000 > 2^32: SRR(tmp, 16) =
///   floor(105468.75 + 0.5) = 105469, inv = 2^32 / 9216 = 466033, 105469 * 466033 =
///   49152034477, SRR(., 16) = floor(750000.53 + 0.5) = 750001.
/// - 1 CPU, n = 3: tmp = 6144000000 > 2^32: SRR = 93750, inv = 1398101,
///   93750 * 1398101 = 131071968750, SRR(., 16) = floor(1999999.52 + 0.5) = 2000000.
///
/// 6.5: the 4.5+ value, at least `sysctl_sched_min_granularity` (BASE_SLICE): 3 ms (8 CPUs)
/// and 0.75 ms (1 CPU) from n = 8 on.
const SLICE_NICE0_8CPU_TRUNC: [u64; 12] = [
    23999994, 11999994, 7999998, 5999994, 4799995, 3999996, 3428569, 2999994, 2999994, 2999997,
    2999997, 2999997,
];
const SLICE_NICE0_8CPU_V3_9: [u64; 12] = [
    24000000, 12000000, 7999998, 6000000, 4799995, 3999996, 3428570, 3000000, 2999995, 2999997,
    2999997, 2999997,
];
const SLICE_NICE0_8CPU_V6_5: [u64; 12] = [
    23999994, 11999994, 7999998, 5999994, 4799995, 3999996, 3428569, 3000000, 3000000, 3000000,
    3000000, 3000000,
];
const SLICE_NICE0_1CPU_TRUNC: [u64; 12] = [
    5999998, 2999998, 1999999, 1499998, 1199998, 999999, 857142, 749998, 749998, 749999, 749999,
    749999,
];
const SLICE_NICE0_1CPU_V3_9: [u64; 12] = [
    6000000, 3000000, 2000000, 1500000, 1199999, 999999, 857142, 750000, 750001, 750002, 749998,
    749999,
];
const SLICE_NICE0_1CPU_V6_5: [u64; 12] = [
    5999998, 2999998, 1999999, 1499998, 1199998, 999999, 857142, 750000, 750000, 750000, 750000,
    750000,
];

fn nice0_table(k: Kernel, ncpus: usize) -> &'static [u64; 12] {
    match (k, ncpus) {
        (Kernel::V3_9, 1) => &SLICE_NICE0_1CPU_V3_9,
        (Kernel::V3_9, _) => &SLICE_NICE0_8CPU_V3_9,
        (Kernel::V6_5, 1) => &SLICE_NICE0_1CPU_V6_5,
        (Kernel::V6_5, _) => &SLICE_NICE0_8CPU_V6_5,
        (_, 1) => &SLICE_NICE0_1CPU_TRUNC,
        _ => &SLICE_NICE0_8CPU_TRUNC,
    }
}

/// A hand-built queue: the tasks in `on` are queued (their weights summed in `load`), the
/// others are not.
fn slice_queue(tasks: &mut [Task], on: &[usize]) -> CfsRq {
    let mut cfs = CfsRq::default();
    for t in tasks.iter_mut() {
        t.se.on_rq = false;
    }
    for &i in on {
        tasks[i].se.on_rq = true;
        cfs.load.add(tasks[i].se.load.weight);
    }
    cfs.nr_running = on.len() as u32;
    cfs.h_nr_queued = on.len() as u32;
    cfs
}

#[test]
fn hand_tables_agree_with_the_reference_formulas() {
    // Guards the literal tables above against typos: each entry is the kernel formula.
    for k in CFS {
        for ncpus in [1, 8] {
            let t = CfsTunables::for_cpus(ncpus);
            for n in 1..=12u64 {
                let want = ref_slice(k, n, 1024, 1024 * n, &t);
                assert_eq!(
                    nice0_table(k, ncpus)[n as usize - 1],
                    want,
                    "{k} {ncpus} {n}"
                );
            }
        }
    }
}

#[test]
fn sched_slice_of_nice0_tasks_1_to_12_by_era() {
    for k in CFS {
        for ncpus in [1, 8] {
            let p = params(k, ncpus);
            let table = nice0_table(k, ncpus);
            let mut tasks = tasks_of(&[0; 12]);
            for n in 1..=12usize {
                // n queued, asking for one of them.
                let on: Vec<usize> = (0..n).collect();
                let cfs = slice_queue(&mut tasks, &on);
                assert_eq!(
                    sched_slice(&cfs, &tasks, 0, &p),
                    table[n - 1],
                    "{k} {ncpus} cpus: {n} queued"
                );
                // n - 1 queued and the entity asked about not on_rq: it counts itself in
                // (nr_running + 1, load + its weight), the same slice.
                let on: Vec<usize> = (1..n).collect();
                let cfs = slice_queue(&mut tasks, &on);
                assert_eq!(
                    sched_slice(&cfs, &tasks, 0, &p),
                    table[n - 1],
                    "{k} {ncpus} cpus: {} queued + 1 not on_rq",
                    n - 1
                );
            }
        }
    }
}

/// `sched_slice` for mixed nice levels, each `(nices, per-entity slices)` by era, worked
/// from weights nice 0 = 1024, nice 5 = 335, nice -5 = 3121.
///
/// {0, 5} on 8 CPUs: sum 1359, inv = 0xffffffff / 1359 = 3160388 (2^32 / 1359 gives the
/// same 3160388).
/// - 4.5+: nice 0: 1024 * 3160388 = 3236237312 < 2^32, 24e6 * 3236237312 / 2^32 =
///   18083885.19 -> 18083885; nice 5: 335 * 3160388 = 1058729980, 24e6 * that / 2^32 =
///   5916114.78 -> 5916114.
/// - 3.9: nice 5: tmp = 24e6 * 335 = 8040000000 > 2^32, SRR(tmp, 16) =
///   floor(122680.66 + 0.5) = 122681, 122681 * 3160388 = 387719560228,
///   SRR(., 16) = floor(5916130.98 + 0.5) = 5916131 (the early rounding of tmp costs 17 ns).
///
/// {0, 5, -5} on 8 CPUs: sum 4480, inv 958698; nice 5: 24e6 * 335 * 958698 / 2^32 =
/// 1794642.75 -> 1794642 (4.5+), and 6.5 raises it to min_granularity 3000000 (BASE_SLICE).
struct Mixed {
    ncpus: usize,
    nices: &'static [i32],
    /// Which of `nices` are queued (the rest ask as not on_rq).
    queued: usize,
    trunc: &'static [u64],
    v3_9: &'static [u64],
    v6_5: &'static [u64],
}

const MIXED: &[Mixed] = &[
    Mixed {
        ncpus: 8,
        nices: &[0, 5],
        queued: 2,
        trunc: &[18083885, 5916114],
        v3_9: &[18083885, 5916131],
        v6_5: &[18083885, 5916114],
    },
    Mixed {
        ncpus: 8,
        nices: &[0, -5],
        queued: 2,
        trunc: &[5929069, 18070923],
        v3_9: &[5929070, 18070918],
        v6_5: &[5929069, 18070923],
    },
    Mixed {
        ncpus: 8,
        nices: &[0, 5, -5],
        queued: 3,
        trunc: &[5485713, 1794642, 16719641],
        v3_9: &[5485714, 1794648, 16719637],
        v6_5: &[5485713, 3000000, 16719641],
    },
    // A nice-5 task not yet queued joining two nice-0 ones: nr 2 + 1, load 2048 + 335 =
    // 2383, inv 1802336, 24e6 * 335 * 1802336 / 2^32 = 3373897.97 -> 3373897. The two
    // queued ones still share 24 ms between them (load 2048): 11999994, 3.9 12000000.
    Mixed {
        ncpus: 8,
        nices: &[0, 0, 5],
        queued: 2,
        trunc: &[11999994, 11999994, 3373897],
        v3_9: &[12000000, 12000000, 3373907],
        v6_5: &[11999994, 11999994, 3373897],
    },
    Mixed {
        ncpus: 1,
        nices: &[0, 5],
        queued: 2,
        trunc: &[4520971, 1479028],
        v3_9: &[4520971, 1479029],
        v6_5: &[4520971, 1479028],
    },
    Mixed {
        ncpus: 1,
        nices: &[0, -5],
        queued: 2,
        trunc: &[1482267, 4517730],
        v3_9: &[1482267, 4517730],
        v6_5: &[1482267, 4517730],
    },
    Mixed {
        ncpus: 1,
        nices: &[0, 5, -5],
        queued: 3,
        trunc: &[1371428, 448660, 4179910],
        v3_9: &[1371428, 448661, 4179909],
        v6_5: &[1371428, 750000, 4179910],
    },
    // Eight nice-0 and a nice-5 task: nr 9 > 8, period 9 * min_granularity = 27 ms (8 CPUs),
    // sum 8 * 1024 + 335 = 8527, inv = 0xffffffff / 8527 = 503690; nice 5:
    // 27e6 * 335 * 503690 / 2^32 = 1060747.55 -> 1060747, which 6.5 raises to 3 ms.
    Mixed {
        ncpus: 8,
        nices: &[0, 0, 0, 0, 0, 0, 0, 0, 5],
        queued: 9,
        trunc: &[
            3242404, 3242404, 3242404, 3242404, 3242404, 3242404, 3242404, 3242404, 1060747,
        ],
        v3_9: &[
            3242404, 3242404, 3242404, 3242404, 3242404, 3242404, 3242404, 3242404, 1060749,
        ],
        v6_5: &[
            3242404, 3242404, 3242404, 3242404, 3242404, 3242404, 3242404, 3242404, 3000000,
        ],
    },
    // The same on 1 CPU: period 6.75 ms; nice 5: 265186 (4.5+), 265187 (3.9), and 6.5's
    // floor of 0.75 ms.
    Mixed {
        ncpus: 1,
        nices: &[0, 0, 0, 0, 0, 0, 0, 0, 5],
        queued: 9,
        trunc: &[
            810601, 810601, 810601, 810601, 810601, 810601, 810601, 810601, 265186,
        ],
        v3_9: &[
            810603, 810603, 810603, 810603, 810603, 810603, 810603, 810603, 265187,
        ],
        v6_5: &[
            810601, 810601, 810601, 810601, 810601, 810601, 810601, 810601, 750000,
        ],
    },
];

fn weight_of(nice: i32) -> u64 {
    LoadWeight::from_nice(nice).weight >> 10
}

#[test]
fn sched_slice_of_mixed_nice_levels_by_era() {
    for m in MIXED {
        let weights: Vec<u64> = m.nices.iter().map(|&n| weight_of(n)).collect();
        for k in CFS {
            let want = match k {
                Kernel::V3_9 => m.v3_9,
                Kernel::V6_5 => m.v6_5,
                _ => m.trunc,
            };
            // The literals are the kernel formula (guards typos): a queued entity shares
            // with the queued ones, one not queued counts itself in.
            let t = CfsTunables::for_cpus(m.ncpus);
            let queued_sum: u64 = weights[..m.queued].iter().sum();
            for (i, &w) in weights.iter().enumerate() {
                let on = i < m.queued;
                let nr = m.queued as u64 + u64::from(!on);
                let sum = queued_sum + if on { 0 } else { w };
                assert_eq!(
                    want[i],
                    ref_slice(k, nr, w, sum, &t),
                    "{k} {:?} #{i}",
                    m.nices
                );
            }
            let p = params(k, m.ncpus);
            let mut tasks = tasks_of(m.nices);
            let on: Vec<usize> = (0..m.queued).collect();
            let cfs = slice_queue(&mut tasks, &on);
            for (i, &w) in want.iter().enumerate() {
                assert_eq!(
                    sched_slice(&cfs, &tasks, i, &p),
                    w,
                    "{k} {} cpus {:?}: entity {i} (on_rq {})",
                    m.ncpus,
                    m.nices,
                    tasks[i].se.on_rq
                );
            }
        }
    }
}

#[test]
fn v6_5_base_slice_is_a_floor_that_no_base_slice_removes() {
    // Eight nice-0 and one nice-5 on 8 CPUs: the nice-5 slice is 1060747 ns by
    // __calc_delta (see MIXED); BASE_SLICE makes it 3 ms; NO_BASE_SLICE leaves it.
    let mut tasks = tasks_of(&[0, 0, 0, 0, 0, 0, 0, 0, 5]);
    let on: Vec<usize> = (0..9).collect();
    let cfs = slice_queue(&mut tasks, &on);
    let with = params(Kernel::V6_5, 8);
    assert_eq!(sched_slice(&cfs, &tasks, 8, &with), 3 * MS);
    let without = params_for(
        Features::parse_for(Kernel::V6_5, "NO_BASE_SLICE").unwrap(),
        8,
    );
    assert_eq!(sched_slice(&cfs, &tasks, 8, &without), 1060747);
    // No slice of any entity of any mix falls below min_granularity under BASE_SLICE.
    for m in MIXED {
        let p = params(Kernel::V6_5, m.ncpus);
        let mut tasks = tasks_of(m.nices);
        let on: Vec<usize> = (0..m.queued).collect();
        let cfs = slice_queue(&mut tasks, &on);
        for i in 0..m.nices.len() {
            assert!(sched_slice(&cfs, &tasks, i, &p) >= p.cfs.min_granularity);
        }
    }
}

#[test]
fn sched_vslice_of_a_nice0_child_is_its_slice() {
    // calc_delta_fair of a nice-0 entity is the identity (weight == NICE_0_LOAD): the
    // vslice of a new nice-0 task joining one queued nice-0 task on 8 CPUs is the slice
    // of 2: 11999994 (4.5+, 6.5), 12000000 (3.9).
    for k in CFS {
        let p = params(k, 8);
        let mut tasks = tasks_of(&[0, 0]);
        let cfs = slice_queue(&mut tasks, &[0]);
        let want = if k == Kernel::V3_9 {
            12_000_000
        } else {
            11_999_994
        };
        assert_eq!(sched_vslice(&cfs, &mut tasks, 1, &p), want, "{k}");
    }
}

// ---------------------------------------------------------------------------------------
// 2. Sleeper credit and START_DEBIT.
// ---------------------------------------------------------------------------------------

#[test]
fn place_entity_by_hand() {
    // min_vruntime M near the wrap; 8 CPUs: latency 24 ms, thresh 12 ms (GENTLE) or 24 ms.
    const M: u64 = u64::MAX - 30 * MS;
    for k in CFS {
        for (list, thresh) in [("", 12 * MS), ("NO_GENTLE_FAIR_SLEEPERS", 24 * MS)] {
            let p = params_for(Features::parse_for(k, list).unwrap(), 8);
            let mut tasks = tasks_of(&[0, 0]);
            let mut cfs = slice_queue(&mut tasks, &[0]);
            cfs.min_vruntime = M;
            // Wakeup (initial = 0): max(own, M - thresh).
            for (own, want) in [
                (M - 5 * MS, M - 5 * MS),
                (M - thresh + 1, M - thresh + 1),
                (M - thresh - 1, M - thresh),
                (M - 100 * MS, M - thresh),
                (M.wrapping_add(50 * MS), M.wrapping_add(50 * MS)),
            ] {
                tasks[1].se.vruntime = own;
                place_entity(&cfs, &mut tasks, 1, false, 10 * MS, &p);
                assert_eq!(
                    diff(tasks[1].se.vruntime, M),
                    diff(want, M),
                    "{k} {list}: own {}",
                    diff(own, M)
                );
            }
        }
        // Fork (initial = 1) next to one queued nice-0 entity: START_DEBIT adds the
        // vslice of a 2-entity queue, 11999994 (3.9: 12000000); then max with the own
        // (parent's) vruntime. NO_START_DEBIT: max(own, M).
        let vslice = if k == Kernel::V3_9 {
            12_000_000
        } else {
            11_999_994
        };
        let p = params(k, 8);
        let nd = params_for(Features::parse_for(k, "NO_START_DEBIT").unwrap(), 8);
        let mut tasks = tasks_of(&[0, 0]);
        let mut cfs = slice_queue(&mut tasks, &[0]);
        cfs.min_vruntime = M;
        for (own, debit, no_debit) in [
            (M - MS, M.wrapping_add(vslice), M),
            (
                M.wrapping_add(20 * MS),
                M.wrapping_add(20 * MS),
                M.wrapping_add(20 * MS),
            ),
            (
                M.wrapping_add(5 * MS),
                M.wrapping_add(vslice),
                M.wrapping_add(5 * MS),
            ),
        ] {
            tasks[1].se.vruntime = own;
            place_entity(&cfs, &mut tasks, 1, true, 10 * MS, &p);
            assert_eq!(diff(tasks[1].se.vruntime, M), diff(debit, M), "{k}");
            tasks[1].se.vruntime = own;
            place_entity(&cfs, &mut tasks, 1, true, 10 * MS, &nd);
            assert_eq!(diff(tasks[1].se.vruntime, M), diff(no_debit, M), "{k}");
        }
    }
}

#[test]
fn v6_5_long_sleeper_is_placed_outright() {
    // entity_is_long_sleeper (6.5): exec_start != 0 and
    // rq_clock_task - exec_start > 2^63 / 1024 = 2^53 ns (~104 days): then
    // se->vruntime = M - thresh even when its own vruntime is larger (it may have wrapped).
    const M: u64 = 1 << 40;
    let exec_start = 5 * MS;
    for k in CFS {
        let p = params(k, 8);
        let mut tasks = tasks_of(&[0, 0]);
        let mut cfs = slice_queue(&mut tasks, &[0]);
        cfs.min_vruntime = M;
        for (slept, long) in [(1u64 << 53, false), ((1 << 53) + 1, true)] {
            tasks[1].se.vruntime = M + 50 * MS;
            tasks[1].se.exec_start = exec_start;
            place_entity(&cfs, &mut tasks, 1, false, exec_start + slept, &p);
            let want = if long && k == Kernel::V6_5 {
                M - 12 * MS
            } else {
                M + 50 * MS
            };
            assert_eq!(tasks[1].se.vruntime, want, "{k}: slept {slept}");
        }
        // exec_start 0 (migrated, or never ran): never a long sleeper.
        tasks[1].se.vruntime = M + 50 * MS;
        tasks[1].se.exec_start = 0;
        place_entity(&cfs, &mut tasks, 1, false, u64::MAX / 2, &p);
        assert_eq!(tasks[1].se.vruntime, M + 50 * MS, "{k}");
    }
}

/// A hog `h` and a sleeper `x` on CPU 0 of an 8-CPU machine; `x` has just blocked at the
/// returned time, `h` runs.
fn hog_and_sleeper(features: Features) -> (Sched, TaskId, TaskId, u64) {
    let mut s = sched_with(features);
    let h = spawn(&mut s, 0, 0, 0);
    let x = spawn(&mut s, 0, 0, 0);
    run(&mut s, 0, 0, 60 * MS);
    // Block x once it runs and has caught up to within 6 ms of h (x has just been
    // picked, or ran a tick or two), so that a short sleep gets no credit.
    let mut t = 60 * MS;
    while s.rqs[0].curr != Some(x)
        || diff(s.tasks[h].se.vruntime, s.tasks[x].se.vruntime) > 6 * MS as i64
    {
        let next = t + TICK;
        run(&mut s, 0, t, next);
        t = next;
        assert!(t < 400 * MS, "x never ran");
    }
    s.block_current(0, t);
    assert_eq!(s.schedule(0, t), Some(h));
    s.check_invariants().unwrap();
    (s, h, x, t)
}

#[test]
fn short_sleeper_keeps_its_vruntime_long_sleeper_gets_half_a_latency() {
    for k in CFS {
        for gentle in [true, false] {
            let f = if gentle {
                k.features()
            } else {
                Features::parse_for(k, "NO_GENTLE_FAIR_SLEEPERS").unwrap()
            };
            // thresh = sysctl_sched_latency (24 ms on 8 CPUs), halved under
            // GENTLE_FAIR_SLEEPERS.
            let thresh = if gentle { 12 * MS } else { 24 * MS };

            // 1 ms of sleep: the hog moves min_vruntime by at most 1 ms (nice 0), so
            // min_vruntime - thresh is below x's own vruntime: max_vruntime keeps it.
            let (mut s, h, x, t) = hog_and_sleeper(f);
            let vx = s.tasks[x].se.vruntime;
            let vh = s.tasks[h].se.vruntime;
            wake(&mut s, x, 0, t + MS);
            s.check_invariants().unwrap();
            let min = s.rqs[0].cfs.min_vruntime;
            // The hog alone ran exactly 1 ms since x blocked: vruntime + 1 ms (nice 0).
            assert_eq!(s.tasks[h].se.vruntime, vh + MS, "{k}");
            assert!(
                diff(vx, min.wrapping_sub(thresh)) > 0,
                "{k}: precondition vx {vx} vh {vh} min {min} x now {}",
                s.tasks[x].se.vruntime
            );
            assert_eq!(
                s.tasks[x].se.vruntime, vx,
                "{k} gentle={gentle}: 1 ms sleeper"
            );

            // 100 ms of sleep: min_vruntime follows the hog alone to vh + 100 ms, far
            // beyond vx + thresh: x lands at min_vruntime - thresh.
            let (mut s, h, x, t) = hog_and_sleeper(f);
            let vx = s.tasks[x].se.vruntime;
            let vh = s.tasks[h].se.vruntime;
            run(&mut s, 0, t, t + 100 * MS);
            wake(&mut s, x, 0, t + 100 * MS);
            s.check_invariants().unwrap();
            let min = s.rqs[0].cfs.min_vruntime;
            assert_eq!(s.tasks[h].se.vruntime, vh + 100 * MS, "{k}");
            assert_eq!(min, vh + 100 * MS, "{k}: min_vruntime is the lone hog's");
            assert!(diff(vx, min.wrapping_sub(thresh)) < 0, "{k}: precondition");
            assert_eq!(
                s.tasks[x].se.vruntime,
                vh + 100 * MS - thresh,
                "{k} gentle={gentle}: 100 ms sleeper"
            );
            // Placed thresh behind the hog, more than wakeup_gran (4 ms): it preempts.
            assert!(s.rqs[0].need_resched, "{k}");
        }
    }
}

#[test]
fn start_debit_places_a_child_a_vslice_after_min_vruntime() {
    for k in CFS {
        // Parent h alone on CPU 0: min_vruntime == h's vruntime. The child is not on_rq:
        // nr 1 + 1 = 2, load 2048: vslice 11999994 (4.5+, 6.5) or 12000000 (3.9), more
        // than 0 ahead of the parent, so max(parent, min + vslice) = min + vslice.
        let vslice = if k == Kernel::V3_9 {
            12_000_000
        } else {
            11_999_994
        };
        let mut s = sched(k);
        let h = spawn(&mut s, 0, 0, 0);
        run(&mut s, 0, 0, 40 * MS);
        let t = 40 * MS;
        let n = s.nr_cpus();
        let c = s.create_task("child", 0, Some(CpuMask::single(n, 0)), 0);
        s.task_fork(c, 0, t);
        let min = s.rqs[0].cfs.min_vruntime;
        assert_eq!(min, s.tasks[h].se.vruntime, "{k}");
        // task_fork_fair leaves it relative to min_vruntime.
        assert_eq!(
            s.tasks[c].se.vruntime, vslice,
            "{k}: relative child vruntime"
        );
        s.wake_up_new_task_select(c, 0, t);
        s.wake_up_new_task_activate(c, t);
        assert_eq!(s.tasks[c].se.vruntime, min + vslice, "{k}: placed child");
        // The child is ahead of the parent: no preemption.
        assert!(!s.rqs[0].need_resched, "{k}");
        s.check_invariants().unwrap();
    }
}

#[test]
fn start_debit_child_takes_the_parent_vruntime_when_that_is_larger() {
    for k in CFS {
        // h alone: min_vruntime m0 = h's vruntime. A 100 ms sleeper x wakes at t, placed at
        // m0 - 12 ms, and stays the leftmost: min_vruntime stays m0 while h runs 12 ms
        // more (h is not rescheduled in between). At t + 12 ms h forks: update_curr gives
        // h m0 + 12 ms; the child's START_DEBIT vslice is a third of 24 ms (nr 2 + 1,
        // load 3072): 24e6 * 1024 * (0xffffffff / 3072 = 1398101) >> 32 = 7999998 (3.9:
        // 7999998 too), m0 + 7999998 < m0 + 12 ms, so the child starts at the parent's
        // vruntime: relative 12 ms.
        let (mut s, h, x, t0) = hog_and_sleeper(k.features());
        run(&mut s, 0, t0, t0 + 100 * MS);
        let t = t0 + 100 * MS;
        wake(&mut s, x, 0, t);
        let m0 = s.rqs[0].cfs.min_vruntime;
        assert_eq!(s.tasks[h].se.vruntime, m0, "{k}");
        assert_eq!(s.tasks[x].se.vruntime, m0 - 12 * MS, "{k}");
        let n = s.nr_cpus();
        let c = s.create_task("child", 0, Some(CpuMask::single(n, 0)), 0);
        s.task_fork(c, 0, t + 12 * MS);
        assert_eq!(
            s.rqs[0].cfs.min_vruntime, m0,
            "{k}: x holds min_vruntime back"
        );
        assert_eq!(s.tasks[h].se.vruntime, m0 + 12 * MS, "{k}");
        assert_eq!(
            s.tasks[c].se.vruntime,
            12 * MS,
            "{k}: child at the parent's vruntime"
        );
    }
}

// ---------------------------------------------------------------------------------------
// 3. Buddies in pick_next_entity.
// ---------------------------------------------------------------------------------------

/// The pick with the era's candidates: 3.9 picks from the tree only (the previous task was
/// put back first); later eras pass the current entity.
fn pick(cfs: &mut CfsRq, tasks: &mut [Task], p: &FairParams) -> TaskId {
    let curr = if p.features.kernel() == Kernel::V3_9 {
        None
    } else {
        cfs.curr
    };
    pick_next_entity(cfs, tasks, curr, p).unwrap()
}

/// Whether the era clears the picked entity's buddies in `pick_next_entity` (3.9 to
/// 4.16) rather than in `set_next_entity` (6.5).
fn clears_at_pick(k: Kernel) -> bool {
    k != Kernel::V6_5
}

#[test]
fn next_buddy_within_wakeup_gran_of_the_leftmost_is_picked() {
    // wakeup_gran of a nice-0 buddy on 8 CPUs: 4 ms of virtual time.
    // wakeup_preempt_entity(next, left): vdiff = next - left; 4 ms -> 0 (< 1: picked),
    // 4 ms + 1 -> 1 (not picked).
    for k in CFS {
        let (mut cfs, mut tasks, p) = queue_with(k, &[0, 0, 0], &[0, 4 * MS, 5 * MS]);
        cfs.next = Some(1);
        assert_eq!(pick(&mut cfs, &mut tasks, &p), 1, "{k}");
        if clears_at_pick(k) {
            assert_eq!(cfs.next, None, "{k}: pick clears the buddy");
        } else {
            assert_eq!(cfs.next, Some(1), "{k}: pick keeps the buddy");
            set_next_entity(&mut cfs, &mut tasks, 1, clocks(2 * MS), &p);
            assert_eq!(cfs.next, None, "{k}: set_next_entity clears it");
        }

        let (mut cfs, mut tasks, p) = queue_with(k, &[0, 0, 0], &[0, 4 * MS + 1, 5 * MS]);
        cfs.next = Some(1);
        assert_eq!(
            pick(&mut cfs, &mut tasks, &p),
            0,
            "{k}: buddy too far right"
        );
        // The leftmost had no buddy role: the next buddy stays.
        assert_eq!(cfs.next, Some(1), "{k}");
    }
}

#[test]
fn buddy_gran_is_in_the_leftmosts_virtual_time() {
    // pick_next_entity tests `wakeup_preempt_entity(buddy, left) < 1`, whose gran is
    // `wakeup_gran(left)` (fair.c: `gran = wakeup_gran(curr, se)` / `wakeup_gran(se)` with
    // `se` the second argument): the leftmost's weight counts, not the buddy's ("This is
    // especially important for buddies when the leftmost task is higher priority than the
    // buddy").
    //
    // A nice -5 leftmost (3121): gran = calc_delta_fair(4 ms) = 4e6 * 1024 / 3121 through
    // its prio_to_wmult 1376151:
    // - 4.5+: 1024 * 1376151 = 1409178624 < 2^32, 4e6 * 1409178624 >> 32 = 1312399.86 ->
    //   1312399;
    // - 3.9: tmp = 4.096e9 <= 2^32, SRR(4.096e9 * 1376151, 32) = floor(1312399.86 + 0.5) =
    //   1312400.
    // So a nice-0 buddy 1312400 ahead is within gran on 3.9 only.
    for k in CFS {
        let gran = if k == Kernel::V3_9 {
            1_312_400
        } else {
            1_312_399
        };
        for (ahead, picked) in [(gran, true), (gran + 1, false)] {
            let (mut cfs, mut tasks, p) = queue_with(k, &[-5, 0], &[0, ahead]);
            cfs.next = Some(1);
            let want = if picked { 1 } else { 0 };
            assert_eq!(
                pick(&mut cfs, &mut tasks, &p),
                want,
                "{k}: buddy {ahead} ahead"
            );
        }
        // The other way round, a nice -5 buddy ahead of a nice-0 leftmost gets the
        // leftmost's 4 ms: picked at 4 ms, not at 4 ms + 1.
        for (ahead, picked) in [(4 * MS, true), (4 * MS + 1, false)] {
            let (mut cfs, mut tasks, p) = queue_with(k, &[0, -5], &[0, ahead]);
            cfs.next = Some(1);
            let want = if picked { 1 } else { 0 };
            assert_eq!(
                pick(&mut cfs, &mut tasks, &p),
                want,
                "{k}: -5 buddy {ahead} ahead"
            );
        }
    }
}

#[test]
fn skip_buddy_gives_way_to_the_second_within_gran() {
    for k in CFS {
        // Leftmost 0 yielded (skip); second 4 ms ahead: within gran -> second.
        let (mut cfs, mut tasks, p) = queue_with(k, &[0, 0, 0], &[0, 4 * MS, 9 * MS]);
        cfs.skip = Some(0);
        assert_eq!(pick(&mut cfs, &mut tasks, &p), 1, "{k}");
        // Picking 1 clears 1's buddies only: the skip mark on 0 stays.
        assert_eq!(cfs.skip, Some(0), "{k}");

        // Second 4 ms + 1 ahead: too unfair, the skip buddy runs after all.
        let (mut cfs, mut tasks, p) = queue_with(k, &[0, 0, 0], &[0, 4 * MS + 1, 9 * MS]);
        cfs.skip = Some(0);
        assert_eq!(pick(&mut cfs, &mut tasks, &p), 0, "{k}");
        if clears_at_pick(k) {
            assert_eq!(
                cfs.skip, None,
                "{k}: clear_buddies(picked) drops the skip mark"
            );
        } else {
            assert_eq!(cfs.skip, Some(0), "{k}");
            set_next_entity(&mut cfs, &mut tasks, 0, clocks(2 * MS), &p);
            assert_eq!(cfs.skip, None, "{k}");
        }
    }
}

#[test]
fn next_buddy_wins_over_last_buddy_when_both_are_within_gran() {
    for k in CFS {
        // Leftmost 0, last 1 (2 ms ahead), next 2 (3 ms ahead): both within 4 ms.
        // 3.9-4.16 test last then next (next overrides); 6.5 tries next first.
        let (mut cfs, mut tasks, p) = queue_with(k, &[0, 0, 0], &[0, 2 * MS, 3 * MS]);
        cfs.last = Some(1);
        cfs.next = Some(2);
        assert_eq!(pick(&mut cfs, &mut tasks, &p), 2, "{k}");
        assert_eq!(
            cfs.last,
            Some(1),
            "{k}: the last buddy is not the picked one"
        );
        assert_eq!(cfs.next.is_none(), clears_at_pick(k), "{k}");

        // Next 5 ms ahead (beyond gran), last 2 ms ahead: last.
        let (mut cfs, mut tasks, p) = queue_with(k, &[0, 0, 0], &[0, 2 * MS, 5 * MS]);
        cfs.last = Some(1);
        cfs.next = Some(2);
        assert_eq!(pick(&mut cfs, &mut tasks, &p), 1, "{k}");
        assert_eq!(cfs.last.is_none(), clears_at_pick(k), "{k}");
        assert_eq!(cfs.next, Some(2), "{k}");

        // Both beyond: the leftmost; neither buddy is cleared.
        let (mut cfs, mut tasks, p) = queue_with(k, &[0, 0, 0], &[0, 5 * MS, 6 * MS]);
        cfs.last = Some(1);
        cfs.next = Some(2);
        assert_eq!(pick(&mut cfs, &mut tasks, &p), 0, "{k}");
        assert_eq!((cfs.last, cfs.next), (Some(1), Some(2)), "{k}");
    }
}

#[test]
fn current_entity_is_a_pick_candidate_from_4_5_on() {
    for k in CFS.into_iter().filter(|&k| k != Kernel::V3_9) {
        // curr c (task 0, rel 0) is left of the tree's first (task 1, 1 ms): picked.
        let (mut cfs, mut tasks, p) = queue_with(k, &[0, 0, 0], &[0, MS, 6 * MS]);
        set_next_entity(&mut cfs, &mut tasks, 0, clocks(MS), &p);
        assert_eq!(
            pick_next_entity(&mut cfs, &mut tasks, Some(0), &p),
            Some(0),
            "{k}"
        );

        // curr yielded (skip): second is the tree's first, 1 ms ahead, within gran.
        cfs.skip = Some(0);
        assert_eq!(
            pick_next_entity(&mut cfs, &mut tasks, Some(0), &p),
            Some(1),
            "{k}"
        );

        // curr yielded but the tree's first is 4 ms + 1 ahead: curr again.
        let (mut cfs, mut tasks, p) = queue_with(k, &[0, 0], &[0, 4 * MS + 1]);
        set_next_entity(&mut cfs, &mut tasks, 0, clocks(MS), &p);
        cfs.skip = Some(0);
        assert_eq!(
            pick_next_entity(&mut cfs, &mut tasks, Some(0), &p),
            Some(0),
            "{k}"
        );

        // The tree's first (task 0, rel 0) yielded; the next in the tree (task 1) is at
        // 3 ms but curr (task 2) at 1 ms is before it, so curr is the second: picked.
        let (mut cfs, mut tasks, p) = queue_with(k, &[0, 0, 0], &[0, 3 * MS, MS]);
        set_next_entity(&mut cfs, &mut tasks, 2, clocks(MS), &p);
        cfs.skip = Some(0);
        assert_eq!(
            pick_next_entity(&mut cfs, &mut tasks, Some(2), &p),
            Some(2),
            "{k}"
        );
    }
}

#[test]
fn update_min_vruntime_counts_a_dequeued_current_only_before_4_15() {
    for k in CFS {
        // curr (task 0) at rel 2 ms, tree's first (task 1) at rel 5 ms, min_vruntime at
        // rel 0. With curr queued: max(min, min(curr, left)) = rel 2 ms in every era.
        let (mut cfs, mut tasks, _) = queue_with(k, &[0, 0], &[2 * MS, 5 * MS]);
        let base = cfs.min_vruntime;
        let p = params(k, 8);
        set_next_entity(&mut cfs, &mut tasks, 0, clocks(MS), &p);
        update_min_vruntime(&mut cfs, &tasks, k);
        assert_eq!(diff(cfs.min_vruntime, base), 2 * MS as i64, "{k}");
        // curr dequeued (se.on_rq = 0, still cfs_rq->curr): 3.9 and 4.5 still take its
        // vruntime (2 ms, no change); 4.15 on skip it and advance to the leftmost's 5 ms.
        tasks[0].se.vruntime = base.wrapping_add(3 * MS);
        tasks[0].se.on_rq = false;
        update_min_vruntime(&mut cfs, &tasks, k);
        let want = if k <= Kernel::V4_5 { 3 * MS } else { 5 * MS };
        assert_eq!(diff(cfs.min_vruntime, base), want as i64, "{k}");
    }
}

// ---------------------------------------------------------------------------------------
// 4. wakeup_gran and wakeup_preempt_entity.
// ---------------------------------------------------------------------------------------

#[test]
fn wakeup_gran_in_the_wakees_virtual_time() {
    for k in CFS {
        let mut tasks = tasks_of(&[0, -5]);
        // nice 0: calc_delta_fair is the identity: 4 ms (8 CPUs), 1 ms (1 CPU).
        assert_eq!(wakeup_gran(&mut tasks, 0, &params(k, 8)), 4 * MS, "{k}");
        assert_eq!(wakeup_gran(&mut tasks, 0, &params(k, 1)), MS, "{k}");
        // nice -5 (3121, prio_to_wmult 1376151): 4 ms -> 1312399 (4.5+) / 1312400 (3.9),
        // see next_buddy_gran_is_in_the_buddys_virtual_time; 1 ms: 1024 * 1376151 * 1e6
        // >> 32 = 328099.97 -> 328099 (4.5+), SRR rounds to 328100 (3.9).
        let (g8, g1) = if k == Kernel::V3_9 {
            (1_312_400, 328_100)
        } else {
            (1_312_399, 328_099)
        };
        assert_eq!(wakeup_gran(&mut tasks, 1, &params(k, 8)), g8, "{k}");
        assert_eq!(wakeup_gran(&mut tasks, 1, &params(k, 1)), g1, "{k}");
    }
}

/// `sched_prio_to_wmult[]` of 4.5 to 6.5 (kernel/sched/core.c; 3.9's `prio_to_wmult[]` in
/// kernel/sched/sched.h is the same table). The entries are 2^32 / weight *rounded*, not
/// truncated: e.g. nice 5, 2^32 / 335 = 12820797.9, entry 12820798.
const KERNEL_WMULT: [u32; 40] = [
    48388, 59856, 76040, 92818, 118348, 147320, 184698, 229616, 287308, 360437, 449829, 563644,
    704093, 875809, 1099582, 1376151, 1717300, 2157191, 2708050, 3363326, 4194304, 5237765,
    6557202, 8165337, 10153587, 12820798, 15790321, 19976592, 24970740, 31350126, 39045157,
    49367440, 61356676, 76695844, 95443717, 119304647, 148102320, 186737708, 238609294, 286331153,
];

#[test]
fn task_inverse_weights_are_the_kernels_prio_to_wmult() {
    // set_load_weight: `load->inv_weight = sched_prio_to_wmult[prio]` (core-4.15.c:759,
    // core-3.9.c:719). Every CFS era's calc_delta_fair(delta, se) of a task multiplies by
    // that entry.
    let wrong: Vec<String> = (-20..20)
        .filter_map(|nice: i32| {
            let got = LoadWeight::from_nice(nice).inv_weight;
            let want = KERNEL_WMULT[(nice + 20) as usize];
            (got != want).then(|| format!("nice {nice}: {got} (kernel {want})"))
        })
        .collect();
    assert!(wrong.is_empty(), "inv_weight differs: {}", wrong.join(", "));
}

#[test]
fn v3_9_calc_delta_mine_uses_the_entitys_cached_inverse() {
    // 3.9's calc_delta_mine recomputes lw->inv_weight only when it is 0 (fair-3.9.c:195
    // `if (!lw->inv_weight)`); a task's load carries prio_to_wmult[prio]. With the
    // kernel's nice-5 entry 12820798 set by hand:
    // - 4 ms: tmp = 4096000000 <= 2^32, SRR(4096000000 * 12820798, 32) =
    //   floor(12226865.77 + 0.5) = 12226866;
    // - 100 ms: tmp = 102400000000 > 2^32, SRR(tmp, 16) = 1562500,
    //   1562500 * 12820798 = 20032496875000, SRR(., 16) = floor(305671644.21 + 0.5) =
    //   305671644.
    // 4.5+ (__calc_delta, also using lw->inv_weight): 4 ms -> 12226865, 100 ms ->
    // 100e6 * 3282124288 >> 30 = 305671644.21 -> 305671644.
    // (With the truncated inverse 12820797 3.9 would give 12226865 and 305671620.)
    let lw = LoadWeight {
        weight: 335 << 10,
        inv_weight: 12_820_798,
    };
    for k in CFS {
        let want = if k == Kernel::V3_9 {
            [12_226_866, 305_671_644]
        } else {
            [12_226_865, 305_671_644]
        };
        let got = [
            calc_delta_fair_era(k, 4 * MS, &mut lw.clone()),
            calc_delta_fair_era(k, 100 * MS, &mut lw.clone()),
        ];
        assert_eq!(got, want, "{k}: calc_delta_fair of a nice-5 entity");
    }
}

#[test]
fn wakeup_gran_of_a_nice5_wakee_uses_the_kernels_wmult() {
    // nice 5: weight 335, sched_prio_to_wmult[25] = 12820798 (see KERNEL_WMULT).
    // 8 CPUs, 4 ms:
    // - 4.5+: fact = 1024 * 12820798 = 13128497152 > 2^32: shifted right 2 bits (fact >> 32
    //   = 3) -> 3282124288, shift 30; 4e6 * 3282124288 >> 30 = 12226865.77 -> 12226865.
    // - 3.9: tmp = 4096000000 <= 2^32: SRR(4096000000 * 12820798, 32) =
    //   floor(12226865.77 + 0.5) = 12226866.
    // (About 4 ms * 1024 / 335 = 12226865.67.)
    // 1 ms on 1 CPU: 1e6 * 3282124288 >> 30 = 3056716.44 -> 3056716 (3.9 rounds to the
    // same).
    let mut wrong = Vec::new();
    for k in CFS {
        let mut tasks = tasks_of(&[5]);
        let want8 = if k == Kernel::V3_9 {
            12_226_866
        } else {
            12_226_865
        };
        let got8 = wakeup_gran(&mut tasks, 0, &params(k, 8));
        let got1 = wakeup_gran(&mut tasks, 0, &params(k, 1));
        if (got8, got1) != (want8, 3_056_716) {
            wrong.push(format!(
                "{k}: {got8} (kernel {want8}), 1 cpu {got1} (kernel 3056716)"
            ));
        }
    }
    assert!(wrong.is_empty(), "nice-5 wakeup_gran: {}", wrong.join("; "));
}

#[test]
fn wakeup_preempt_entity_thresholds() {
    for k in CFS {
        for (nice, ncpus) in [(0, 8), (0, 1), (-5, 8), (-5, 1)] {
            let p = params(k, ncpus);
            let gran = match (nice, ncpus, k) {
                (0, 8, _) => 4 * MS,
                (0, _, _) => MS,
                (_, 8, Kernel::V3_9) => 1_312_400,
                (_, 8, _) => 1_312_399,
                (_, _, Kernel::V3_9) => 328_100,
                _ => 328_099,
            };
            // Task 0 is curr, task 1 the wakee. Base near the wrap to exercise the signed
            // difference.
            let mut tasks = tasks_of(&[0, nice]);
            let base = u64::MAX - 2 * MS;
            tasks[1].se.vruntime = base;
            let mut at = |curr_ahead: i64| {
                tasks[0].se.vruntime = base.wrapping_add(curr_ahead as u64);
                wakeup_preempt_entity(&mut tasks, 0, 1, &p)
            };
            let g = gran as i64;
            assert_eq!(at(-5 * MS as i64), -1, "{k} nice {nice}: wakee ahead");
            assert_eq!(at(0), -1, "{k} nice {nice}: vdiff 0");
            assert_eq!(at(1), 0, "{k} nice {nice}: vdiff 1");
            assert_eq!(at(g - 1), 0, "{k} nice {nice}: just below gran");
            assert_eq!(at(g), 0, "{k} nice {nice}: at gran");
            assert_eq!(at(g + 1), 1, "{k} nice {nice}: just above gran");
            assert_eq!(at(10 * g), 1, "{k} nice {nice}: far behind");
        }
    }
}

#[test]
fn a_wakee_more_than_gran_behind_the_hog_preempts_it() {
    for k in CFS {
        for (behind, preempts) in [(4 * MS, false), (4 * MS + 1, true), (MS, false)] {
            let (mut s, h, x, t) = hog_and_sleeper(k.features());
            // Let the hog run alone to the next tick, then wake x at that very instant
            // (update_curr charges nothing more) with its vruntime `behind` the hog's.
            let tw = (t / TICK + 2) * TICK;
            run(&mut s, 0, t, tw);
            assert_eq!(s.rqs[0].curr, Some(h));
            assert!(!s.rqs[0].need_resched);
            let vh = s.tasks[h].se.vruntime;
            s.tasks[x].se.vruntime = vh - behind;
            wake(&mut s, x, 0, tw);
            assert_eq!(s.tasks[h].se.vruntime, vh, "{k}: no time charged");
            // Within thresh (12 ms) of min_vruntime: placement keeps the vruntime.
            assert_eq!(s.tasks[x].se.vruntime, vh - behind, "{k}");
            assert_eq!(s.rqs[0].need_resched, preempts, "{k}: {behind} behind");
            assert_eq!(s.rqs[0].cfs.next == Some(x), preempts, "{k}: next buddy");
            // Two tasks < sched_nr_latency: no last buddy.
            assert_eq!(s.rqs[0].cfs.last, None, "{k}");
            if preempts {
                assert_eq!(s.schedule(0, tw), Some(x), "{k}");
            }
            s.check_invariants().unwrap();
        }
    }
}

// ---------------------------------------------------------------------------------------
// 6. Migration keeps the lag relative to min_vruntime.
// ---------------------------------------------------------------------------------------

/// CPU 0 with hogs a and b (b queued, not running), CPU 1 with hog c; both CPUs ticked
/// up to `t`, CPU 1's clock then left `stale` behind (its current task not updated).
fn two_cpus(k: Kernel, stale: u64) -> (Sched, TaskId, u64) {
    let mut s = sched(k);
    let a = spawn(&mut s, 0, 0, 0);
    let b = spawn(&mut s, 0, 0, 0);
    let _c = spawn(&mut s, 1, 0, 0);
    let t = 100 * MS;
    s.schedule(0, 0);
    s.schedule(1, 0);
    let mut tt = TICK;
    while tt <= t {
        for cpu in [0, 1] {
            if cpu == 1 && tt > t - stale {
                continue;
            }
            if s.tick(cpu, tt) {
                s.schedule(cpu, tt);
            }
        }
        s.check_invariants().unwrap();
        tt += TICK;
    }
    s.update_rq_clock(1, t - stale);
    let p = if s.rqs[0].curr == Some(a) { b } else { a };
    let n = s.nr_cpus();
    let mut mask = CpuMask::single(n, 0);
    mask.set(1);
    s.set_cpus_allowed(p, mask);
    (s, p, t)
}

#[test]
fn migration_keeps_the_lag_behind_min_vruntime() {
    for k in CFS {
        let (mut s, p, t) = two_cpus(k, 0);
        let lag = diff(s.tasks[p].se.vruntime, s.rqs[0].cfs.min_vruntime);
        assert_ne!(s.rqs[0].cfs.min_vruntime, s.rqs[1].cfs.min_vruntime, "{k}");
        s.deactivate_task(0, p, 0);
        // Dequeued without DEQUEUE_SLEEP: relative to the source's min_vruntime.
        assert_eq!(
            s.tasks[p].se.vruntime as i64, lag,
            "{k}: relative in transit"
        );
        let ex = s.tasks[p].se.exec_start;
        assert_ne!(ex, 0, "{k}: p has run");
        s.set_task_cpu(p, 1);
        // migrate_task_rq_fair forgets exec_start in 4.5 to 4.16 ("no longer consider
        // this task hot"); 3.9 and 6.5 keep it here.
        let cleared = matches!(k, Kernel::V4_5 | Kernel::V4_15 | Kernel::V4_16);
        assert_eq!(
            s.tasks[p].se.exec_start == 0,
            cleared,
            "{k}: after set_task_cpu"
        );
        s.update_rq_clock(1, t);
        s.activate_task(1, p, 0);
        let lag1 = diff(s.tasks[p].se.vruntime, s.rqs[1].cfs.min_vruntime);
        assert_eq!(lag1, lag, "{k}: lag on the destination");
        // 6.5's enqueue_entity: `if (flags & ENQUEUE_MIGRATED) se->exec_start = 0;`.
        let want_ex = if k == Kernel::V3_9 { ex } else { 0 };
        assert_eq!(s.tasks[p].se.exec_start, want_ex, "{k}: after the enqueue");
        s.check_invariants().unwrap();
        assert_eq!(s.tasks[p].cpu, 1);
    }
}

#[test]
fn wakeup_migration_keeps_the_lag_then_places() {
    // A task that sleeps on CPU 0 and wakes on CPU 1: its vruntime is made relative to
    // CPU 0's min_vruntime (task_waking_fair in 3.9/4.5, migrate_task_rq_fair for a
    // TASK_WAKING task from 4.15), made absolute on CPU 1 (ENQUEUE_WAKING / ENQUEUE_MIGRATED)
    // and then placed: v' = max(lag + min1, min1 - 12 ms).
    for k in CFS {
        let (mut s, _, mut t) = two_cpus(k, 0);
        // Block CPU 0's current task once it has run 8 ms of its turn, so that it is
        // not far behind.
        loop {
            let c = s.rqs[0].curr.unwrap();
            let se = &s.tasks[c].se;
            if se.sum_exec_runtime - se.prev_sum_exec_runtime >= 2 * TICK {
                break;
            }
            t += TICK;
            for cpu in [0, 1] {
                if s.tick(cpu, t) {
                    s.schedule(cpu, t);
                }
            }
        }
        let x = s.rqs[0].curr.unwrap();
        s.block_current(0, t);
        s.schedule(0, t);
        let t2 = t + TICK;
        for cpu in [0, 1] {
            if s.tick(cpu, t2) {
                s.schedule(cpu, t2);
            }
        }
        let n = s.nr_cpus();
        s.set_cpus_allowed(x, CpuMask::single(n, 1));
        let lag = diff(s.tasks[x].se.vruntime, s.rqs[0].cfs.min_vruntime);
        // x ran 8 ms, then the other task one tick: x is not far behind.
        assert!(lag > -(12 * MS as i64), "{k}: lag {lag}");
        wake(&mut s, x, 0, t2);
        assert_eq!(s.tasks[x].cpu, 1, "{k}");
        let min1 = s.rqs[1].cfs.min_vruntime;
        assert_eq!(diff(s.tasks[x].se.vruntime, min1), lag, "{k}: lag kept");
        s.check_invariants().unwrap();

        // The same after a long sleep (100 ms): the lag has grown below -12 ms, and x
        // lands at min1 - 12 ms.
        let (mut s, _, t) = two_cpus(k, 0);
        let x = s.rqs[0].curr.unwrap();
        s.block_current(0, t);
        s.schedule(0, t);
        let mut t2 = t;
        while t2 < t + 100 * MS {
            t2 += TICK;
            for cpu in [0, 1] {
                if s.tick(cpu, t2) {
                    s.schedule(cpu, t2);
                }
            }
        }
        s.set_cpus_allowed(x, CpuMask::single(n, 1));
        let lag = diff(s.tasks[x].se.vruntime, s.rqs[0].cfs.min_vruntime);
        assert!(lag < -(12 * MS as i64), "{k}: lag {lag}");
        wake(&mut s, x, 0, t2);
        let min1 = s.rqs[1].cfs.min_vruntime;
        assert_eq!(
            diff(s.tasks[x].se.vruntime, min1),
            -(12 * MS as i64),
            "{k}: placed"
        );
        s.check_invariants().unwrap();
    }
}

#[test]
fn migration_renormalises_after_update_curr_from_4_15() {
    // The destination's current task has run 2 ms (and more, up to its last tick) that
    // update_curr has not charged yet. 4.15 on (enqueue_entity: `if (renorm && !curr)
    // se->vruntime += cfs_rq->min_vruntime` after update_curr) add the updated
    // min_vruntime; 3.9 and 4.5 (`if (!(flags & ENQUEUE_WAKEUP) || (flags &
    // ENQUEUE_WAKING)) se->vruntime += cfs_rq->min_vruntime;` before update_curr) add the
    // stale one.
    for k in CFS {
        let (mut s, p, t) = two_cpus(k, 2 * MS);
        let lag = diff(s.tasks[p].se.vruntime, s.rqs[0].cfs.min_vruntime);
        s.deactivate_task(0, p, 0);
        s.set_task_cpu(p, 1);
        s.update_rq_clock(1, t);
        let min_before = s.rqs[1].cfs.min_vruntime;
        s.activate_task(1, p, 0);
        let min_after = s.rqs[1].cfs.min_vruntime;
        assert!(
            diff(min_after, min_before) >= 2 * MS as i64,
            "{k}: c was charged"
        );
        let v = s.tasks[p].se.vruntime;
        if k >= Kernel::V4_15 {
            assert_eq!(diff(v, min_after), lag, "{k}");
        } else {
            assert_eq!(diff(v, min_before), lag, "{k}");
        }
        s.check_invariants().unwrap();
    }
}

// ---------------------------------------------------------------------------------------
// 5. Properties on one CPU.
// ---------------------------------------------------------------------------------------

#[derive(Debug, Clone)]
enum Op {
    /// Fork a task of this nice level (at most 6 live tasks).
    Spawn(i32),
    /// Advance time by this many microseconds, ticking at each tick boundary crossed and
    /// scheduling when a tick asks.
    Advance(u64),
    /// The current task blocks (then `__schedule`).
    Block,
    /// Wake the i-th sleeping task (modulo their number).
    Wake(usize),
    /// `__schedule`.
    Schedule,
    /// `sched_yield` by the current task.
    Yield,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        2 => prop::sample::select(vec![0, 0, 0, -5, 5]).prop_map(Op::Spawn),
        5 => (0u64..9_000).prop_map(Op::Advance),
        2 => Just(Op::Block),
        2 => any::<usize>().prop_map(Op::Wake),
        1 => Just(Op::Schedule),
        1 => Just(Op::Yield),
    ]
}

/// Runs `ops` on CPU 0 of kernel `k`, checking after each step that `min_vruntime` did
/// not go back and that the invariants hold.
fn run_ops(k: Kernel, ops: &[Op]) -> Result<(), TestCaseError> {
    let mut s = sched(k);
    let mut now = 0u64;
    let mut tasks: Vec<TaskId> = Vec::new();
    let mut prev_min = s.rqs[0].cfs.min_vruntime;
    for (i, o) in ops.iter().enumerate() {
        match *o {
            Op::Spawn(nice) => {
                if tasks.len() < 6 {
                    tasks.push(spawn(&mut s, 0, nice, now));
                }
            }
            Op::Advance(us) => {
                let to = now + us * 1000;
                let mut t = (now / TICK + 1) * TICK;
                while t <= to {
                    if s.tick(0, t) {
                        s.schedule(0, t);
                    }
                    t += TICK;
                }
                now = to;
                s.update_rq_clock(0, now);
            }
            Op::Block => {
                if s.rqs[0].curr.is_some() {
                    s.block_current(0, now);
                    s.schedule(0, now);
                }
            }
            Op::Wake(j) => {
                let sleeping: Vec<TaskId> = tasks
                    .iter()
                    .copied()
                    .filter(|&p| s.tasks[p].state == TaskState::Sleeping)
                    .collect();
                if !sleeping.is_empty() {
                    let p = sleeping[j % sleeping.len()];
                    if wake(&mut s, p, 0, now) && s.rqs[0].curr.is_none() {
                        s.schedule(0, now);
                    }
                }
            }
            Op::Schedule => {
                s.schedule(0, now);
            }
            Op::Yield => {
                if s.rqs[0].curr.is_some() {
                    s.yield_task(0, now);
                    s.schedule(0, now);
                }
            }
        }
        if let Err(e) = s.check_invariants() {
            return Err(TestCaseError::fail(format!("{k} step {i} {o:?}: {e}")));
        }
        let min = s.rqs[0].cfs.min_vruntime;
        prop_assert!(
            diff(min, prev_min) >= 0,
            "{} step {} {:?}: min_vruntime went back from {} to {}",
            k,
            i,
            o,
            prev_min,
            min
        );
        prev_min = min;
        // A task that is current is queued (se.on_rq) on this CPU and not in the tree.
        if let Some(c) = s.rqs[0].curr {
            prop_assert!(s.tasks[c].se.on_rq, "{} step {}: current not on_rq", k, i);
            prop_assert!(!s.rqs[0].cfs.timeline.values().any(|&p| p == c));
        }
    }
    Ok(())
}

/// `n` nice-0 hogs spawned at the given times on CPU 0 of kernel `k`, run to `end`; every
/// tick records who runs. Checks that each hog, once forked, is seen running at least once
/// in every window of `nr * (slice + tick) + 2 ticks` (slice = latency / nr: a hog runs
/// until its `delta_exec` exceeds its slice, noticed at a tick, so the others' turns take at
/// most slice + tick each).
fn run_hogs(k: Kernel, spawn_at: &[u64], end: u64) -> Result<(), TestCaseError> {
    let mut s = sched(k);
    let mut spawns: Vec<u64> = spawn_at.to_vec();
    spawns.sort_unstable();
    let nr = spawns.len() as u64;
    let slice = s.fair.cfs.latency / nr;
    let window = nr * (slice + TICK) + 2 * TICK;
    let mut hogs: Vec<(TaskId, u64)> = Vec::new(); // (task, last seen running or forked)
    let mut next_spawn = 0;
    let mut t = 0u64;
    while t <= end {
        // Forks between the previous tick and this one, at their own times.
        while next_spawn < spawns.len() && spawns[next_spawn] <= t {
            let at = spawns[next_spawn];
            let p = spawn(&mut s, 0, 0, at);
            if s.rqs[0].need_resched {
                s.schedule(0, at);
            }
            hogs.push((p, at));
            next_spawn += 1;
        }
        if s.tick(0, t) {
            s.schedule(0, t);
        }
        if let Err(e) = s.check_invariants() {
            return Err(TestCaseError::fail(format!("{k} at {t}: {e}")));
        }
        let curr = s.rqs[0].curr;
        for (p, last) in hogs.iter_mut() {
            if curr == Some(*p) {
                *last = t;
            }
            prop_assert!(
                t.saturating_sub(*last) <= window,
                "{}: task {} not run for {} ns (window {}), {} hogs",
                k,
                p,
                t.saturating_sub(*last),
                window,
                nr
            );
        }
        t += TICK;
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn min_vruntime_is_monotonic_and_invariants_hold(ops in prop::collection::vec(op(), 1..80)) {
        for k in CFS {
            run_ops(k, &ops)?;
        }
    }

    #[test]
    fn no_nice0_hog_starves(spawn_at in prop::collection::vec(0u64..60 * MS, 1..=6)) {
        for k in CFS {
            run_hogs(k, &spawn_at, 300 * MS)?;
        }
    }
}

#[test]
fn nice0_load_is_1024_scaled() {
    // Sanity for the hand-worked weights above: NICE_0_LOAD is 1024 << 10.
    assert_eq!(NICE_0_LOAD, 1024 << 10);
    assert_eq!(weight_of(5), 335);
    assert_eq!(weight_of(-5), 3121);
}
