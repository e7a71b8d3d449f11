//! Energy-aware scheduling and utilization clamps of Linux 6.5 (`--kernel 6.5`) on rk3399
//! (4 Cortex-A53 at capacity 381, 2 Cortex-A72 at 1024): the perf domains, 6.5's energy
//! model costs and estimate against hand-computed sums, its placement, and where its
//! clamps act differently from 6.12.117's.

use crate::select_support;

use fairsim_balance::cpufreq::{CpuUtilType, Cpufreq, EmPerfState, Governor};
use fairsim_balance::energy::feec::EnergyEnv;
use fairsim_balance::energy::v6_5_feec::em_cpu_energy_v6_5;
use fairsim_balance::{Kernel, Sched, SchedParams};
use select_support::{sched_with, sleeper_on, wake};

const MS: u64 = 1_000_000;

fn rk3399_on(kernel: Kernel) -> Sched {
    let params = SchedParams {
        features: kernel.features(),
        ..SchedParams::default()
    };
    let mut s = sched_with("rk3399", params);
    let caps: Vec<u64> = s.rqs.iter().map(|rq| rq.capacity_orig).collect();
    let cf = Cpufreq::new(&s.machine, Governor::DEFAULT, &caps, 0).expect("rk3399's cpufreq");
    s.install_cpufreq(cf);
    s
}

fn set_util(s: &mut Sched, p: usize, util: u64) {
    s.tasks[p].se.avg.util_avg = util;
    s.tasks[p].se.avg.util_est = util as u32;
    // 6.5's util_est is {enqueued, ewma}: the estimate is the larger.
    s.tasks[p].se.avg.util_est_ewma = util as u32;
    // compute_energy's frequency reading is boosted to the runnable average.
    s.tasks[p].se.avg.runnable_avg = util;
}

fn em(s: &Sched, policy: usize) -> Vec<EmPerfState> {
    s.cpufreq.as_ref().unwrap().policies[policy]
        .em
        .clone()
        .unwrap()
}

#[test]
fn linux_6_5_builds_perf_domains_and_costs_states_by_frequency() {
    let s = rk3399_on(Kernel::V6_5);
    assert!(s.sched_energy_enabled());
    let spans: Vec<String> = s.eas.rd_pd[0].iter().map(|pd| pd.cpus.to_list()).collect();
    assert_eq!(spans, ["4-5", "0-3"]);
    // 6.5's em_create_perf_table: cost = fmax * power / freq.
    for policy in 0..2 {
        let t = em(&s, policy);
        let fmax = u64::from(t.last().unwrap().frequency);
        for st in &t {
            assert_eq!(st.cost, fmax * st.power / u64::from(st.frequency));
        }
    }
    // 6.12 costs the same states as power * 10 / performance.
    let s12 = rk3399_on(Kernel::V6_12);
    let t = em(&s12, 1);
    assert_eq!(t[0].cost, t[0].power * 10 / t[0].performance);
}

#[test]
fn em_cpu_energy_of_6_5_picks_the_state_by_frequency_after_the_headroom() {
    let t = [
        EmPerfState {
            frequency: 408_000,
            power: 100,
            performance: 0,
            cost: 300,
            inefficient: true,
        },
        EmPerfState {
            frequency: 600_000,
            power: 150,
            performance: 0,
            cost: 280,
            inefficient: false,
        },
        EmPerfState {
            frequency: 816_000,
            power: 250,
            performance: 0,
            cost: 290,
            inefficient: false,
        },
    ];
    // max_util 100 at capacity 381: 125 after headroom, 816000 * 125 / 381 = 267716 kHz,
    // which 408 MHz reaches; skipped as inefficient, so 600 MHz: 280 * 200 / 381.
    assert_eq!(
        em_cpu_energy_v6_5(&t, true, 100, 200, 381, 381),
        280 * 200 / 381
    );
    assert_eq!(
        em_cpu_energy_v6_5(&t, false, 100, 200, 381, 381),
        300 * 200 / 381
    );
    // 250 -> 312 -> 668598 kHz: 816 MHz.
    assert_eq!(
        em_cpu_energy_v6_5(&t, true, 250, 200, 381, 381),
        290 * 200 / 381
    );
    // The allowed capacity caps the request after the headroom: 250 -> 312 -> 200.
    assert_eq!(
        em_cpu_energy_v6_5(&t, true, 250, 200, 200, 381),
        280 * 200 / 381
    );
    assert_eq!(em_cpu_energy_v6_5(&t, true, 250, 0, 381, 381), 0);
}

#[test]
fn compute_energy_of_6_5_matches_a_hand_computed_sum_on_the_little_domain() {
    let mut s = rk3399_on(Kernel::V6_5);
    let p = sleeper_on(&mut s, 4, None, MS);
    set_util(&mut s, p, 100);
    let little = s.eas.rd_pd[0][1].clone();
    assert_eq!(little.cpus.to_list(), "0-3");
    let eenv = EnergyEnv {
        task_busy_time: 100,
        pd_busy_time: 0,
        cpu_cap: 381,
        pd_cap: 4 * 381,
    };
    // p on cpu0 of an idle cluster: max_util 100, 125 with headroom, 1416000 * 125 / 381 =
    // 464566 kHz, so the first efficient state from 600 MHz; energy cost * 100 / 381.
    let t = em(&s, 0);
    let want_freq = 1_416_000u64 * 125 / 381;
    let i = t
        .iter()
        .position(|st| u64::from(st.frequency) >= want_freq && !st.inefficient)
        .unwrap();
    assert_eq!(t[i].frequency, 600_000);
    let hand = t[i].cost * 100 / 381;
    assert_eq!(s.compute_energy_v6_5(&eenv, &little, p, Some(0)), hand);
    // Without the task the domain is idle and costs nothing.
    assert_eq!(s.compute_energy_v6_5(&eenv, &little, p, None), 0);
}

#[test]
fn a_small_task_that_slept_on_a_big_cpu_wakes_on_a_little_one_under_6_5() {
    let mut s = rk3399_on(Kernel::V6_5);
    let p = sleeper_on(&mut s, 4, None, MS);
    set_util(&mut s, p, 100);
    let cpu = wake(&mut s, p, 0, 0, 20 * MS);
    assert!(
        cpu < 4,
        "a 100-util task belongs on a LITTLE CPU, got cpu{cpu}"
    );
    assert_eq!(s.eas.stats.feec_calls, 1);
    assert_eq!(s.eas.stats.feec_moved, 1);
}

#[test]
fn util_min_sends_a_small_task_to_a_big_cpu_under_6_5() {
    let mut s = rk3399_on(Kernel::V6_5);
    let p = sleeper_on(&mut s, 0, None, MS);
    set_util(&mut s, p, 100);
    s.sched_setattr_uclamp(p, 600, 1024).unwrap();
    let cpu = wake(&mut s, p, 0, 0, 20 * MS);
    assert!(
        cpu >= 4,
        "util_min 600 does not fit a LITTLE CPU, got cpu{cpu}"
    );
}

#[test]
fn a_task_capped_at_zero_stays_on_its_previous_cpu_under_6_5() {
    // 6.5 returns prev_cpu when uclamp_task_util(p), the estimate clamped to the
    // task's clamps, is 0, before any energy is computed.
    let mut s = rk3399_on(Kernel::V6_5);
    let p = sleeper_on(&mut s, 1, None, MS);
    set_util(&mut s, p, 100);
    s.sched_setattr_uclamp(p, 0, 0).unwrap();
    let cpu = wake(&mut s, p, 4, 0, 20 * MS);
    assert_eq!(cpu, 1);
    assert_eq!((s.eas.stats.feec_placed, s.eas.stats.feec_moved), (1, 0));
}

#[test]
fn the_6_5_frequency_utilization_is_clamped_before_the_headroom() {
    let mut s = rk3399_on(Kernel::V6_5);
    let a = sleeper_on(&mut s, 4, None, MS);
    s.sched_setattr_uclamp(a, 400, 700).unwrap();
    // On an idle runqueue only the task's clamps count (FREQUENCY_UTIL with p, as
    // eenv_pd_max_util asks on the task's destination).
    assert!(s.uclamp_rq_is_idle(5));
    // A small utilization is raised to uclamp_min, with no headroom yet: get_next_freq
    // adds it, so 6.5 asks for 500 where 6.12's sugov_effective_cpu_perf asks for 400.
    assert_eq!(
        s.effective_cpu_util_v6_5(5, 50, CpuUtilType::Frequency, Some(a)),
        400
    );
    // A large one is cut to uclamp_max; the energy reading is not clamped.
    assert_eq!(
        s.effective_cpu_util_v6_5(5, 900, CpuUtilType::Frequency, Some(a)),
        700
    );
    assert_eq!(
        s.effective_cpu_util_v6_5(5, 900, CpuUtilType::Energy, Some(a)),
        900
    );
    // At the capacity the reading saturates (a LITTLE CPU's 381).
    assert_eq!(
        s.effective_cpu_util_v6_5(1, 500, CpuUtilType::Frequency, Some(a)),
        381
    );
    assert_eq!(s.uclamp_rq_util_with_v6_5(1, 50, Some(a)), 400);
    // Without a task, an idle runqueue's own clamps (none) leave the value as it is.
    assert_eq!(s.uclamp_rq_util_with_v6_5(1, 50, None), 50);
}
