//! Energy-aware scheduling (Linux 6.12.117) on rk3399 (4 Cortex-A53 at capacity 381 in
//! one policy, 2 Cortex-A72 at 1024 in another, energy models from the device tree):
//! when EAS is built, where `find_energy_efficient_cpu` puts small and big tasks, and the
//! overutilized state that turns it off and gives placement back to the balancer.

use crate::select_support;

use fairsim_balance::cpufreq::{Cpufreq, Governor};
use fairsim_balance::{BalanceScan, CpuIdleType, Kernel, Sched, SchedParams, TunablePlace};
use fairsim_topology::CpuMask;
use select_support::{sched, sched_with, sleeper_on, wake};

const MS: u64 = 1_000_000;

/// rk3399 with cpufreq under `governor`.
fn rk3399_with(governor: Governor, params: SchedParams) -> Sched {
    let mut s = sched_with("rk3399", params);
    let caps: Vec<u64> = s.rqs.iter().map(|rq| rq.capacity_orig).collect();
    let cf = Cpufreq::new(&s.machine, governor, &caps, 0).expect("rk3399's cpufreq");
    s.install_cpufreq(cf);
    s
}

fn rk3399() -> Sched {
    rk3399_with(Governor::DEFAULT, SchedParams::default())
}

/// Sets a sleeping task's utilization (average and estimate) to `util`.
fn set_util(s: &mut Sched, p: usize, util: u64) {
    s.tasks[p].se.avg.util_avg = util;
    s.tasks[p].se.avg.util_est = util as u32;
}

#[test]
fn eas_is_built_only_where_the_kernel_would_build_it() {
    let s = rk3399();
    assert!(s.sched_energy_enabled());
    // build_perf_domains prepends: the big policy (first CPU 4) heads the list.
    let spans: Vec<String> = s.eas.rd_pd[0].iter().map(|pd| pd.cpus.to_list()).collect();
    assert_eq!(spans, ["4-5", "0-3"]);

    let s = rk3399_with(Governor::Performance, SchedParams::default());
    assert!(!s.sched_energy_enabled());
    assert!(
        s.eas
            .not_possible
            .as_deref()
            .unwrap()
            .starts_with("schedutil is mandatory"),
        "{:?}",
        s.eas.not_possible
    );
    // Without EAS the root domain always reads overutilized: placement as before.
    assert!(s.is_rd_overutilized(0));

    // Linux 6.5 had EAS (tests/v6_5_energy.rs); 4.16 did not (it came in 5.0).
    let params = SchedParams {
        features: Kernel::V6_5.features(),
        ..SchedParams::default()
    };
    let s = rk3399_with(Governor::DEFAULT, params);
    assert!(s.sched_energy_enabled());
    let params = SchedParams {
        features: Kernel::V4_16.features(),
        ..SchedParams::default()
    };
    let s = rk3399_with(Governor::DEFAULT, params);
    assert!(!s.sched_energy_enabled());
    assert!(s
        .eas
        .not_possible
        .as_deref()
        .unwrap()
        .contains("it came in 5.0"));

    // A symmetric machine never gets perf domains.
    let mut s = sched("smt-mc-1s4c2t");
    s.build_perf_domains();
    assert_eq!(
        s.eas.not_possible.as_deref(),
        Some("CPUs do not have asymmetric capacities")
    );
}

#[test]
fn a_small_task_that_slept_on_a_big_cpu_wakes_on_a_little_one() {
    let mut s = rk3399();
    let p = sleeper_on(&mut s, 4, None, MS);
    set_util(&mut s, p, 100);
    let cpu = wake(&mut s, p, 0, 0, 20 * MS);
    assert!(
        cpu < 4,
        "a 100-util task belongs on a LITTLE CPU, got cpu{cpu}"
    );
    let st = s.eas.stats;
    assert_eq!((st.feec_calls, st.feec_placed, st.feec_moved), (1, 1, 1));
}

#[test]
fn a_task_too_big_for_a_little_cpu_wakes_on_a_big_one() {
    let mut s = rk3399();
    let p = sleeper_on(&mut s, 1, None, MS);
    // 400 does not fit 381 with the 20% margin (400 * 1280 > 381 * 1024).
    set_util(&mut s, p, 400);
    let cpu = wake(&mut s, p, 1, 0, 20 * MS);
    assert!(cpu >= 4, "a 400-util task needs a big CPU, got cpu{cpu}");
}

#[test]
fn an_overutilized_cpu_turns_eas_off_until_the_root_balance_clears_it() {
    let mut s = rk3399();
    assert!(!s.is_rd_overutilized(0));
    // A little CPU whose utilization does not fit: overutilized, and so its root domain.
    s.rqs[2].cfs.avg.avg.util_avg = 350;
    assert!(s.cpu_overutilized(2));
    s.set_now(5 * MS);
    s.check_update_overutilized_status(2);
    assert!(s.is_rd_overutilized(0));
    assert_eq!(s.eas.stats.overutilized_sets, 1);
    // Wakeups skip EAS meanwhile.
    let p = sleeper_on(&mut s, 4, None, 6 * MS);
    set_util(&mut s, p, 100);
    wake(&mut s, p, 0, 0, 20 * MS);
    assert_eq!(s.eas.stats.feec_calls, 0);
    assert_eq!(s.eas.stats.overutilized_wakeups, 1);
    // The load fits again; the next statistics of the root domain clear the flag.
    s.rqs[2].cfs.avg.avg.util_avg = 100;
    assert!(!s.cpu_overutilized(2));
    let root = s.topo.cpus[0].sd.map(|mut d| {
        while let Some(up) = s.topo.domain(d).parent {
            d = up;
        }
        d
    });
    let mut env = s.lb_env(0, root.unwrap(), CpuIdleType::Idle);
    s.set_now(30 * MS);
    s.update_sd_lb_stats(&mut env);
    assert!(!s.is_rd_overutilized(0));
    assert_eq!(s.eas.overutilized_ns_at(30 * MS), 25 * MS);
}

#[test]
fn kernel_sched_energy_aware_switches_eas_off_where_it_is_possible_only() {
    let mut params = SchedParams::default();
    params
        .tunables
        .write(
            Kernel::V6_12,
            TunablePlace::Sysctl,
            "kernel.sched_energy_aware=0",
        )
        .unwrap();
    let s = rk3399_with(Governor::DEFAULT, params);
    assert!(!s.sched_energy_enabled());
    assert_eq!(
        s.eas.not_possible.as_deref(),
        Some("kernel.sched_energy_aware=0")
    );
    assert!(s.check_energy_aware_write().is_ok());
    // Where EAS is not possible the kernel refuses the write itself (EOPNOTSUPP).
    let s = sched_with("smt-mc-1s4c2t", params);
    let e = s.check_energy_aware_write().unwrap_err();
    assert_eq!(e.why, fairsim_balance::energy::EasError::NoAsymmetry);
    let e = e.to_string();
    assert!(e.contains("EOPNOTSUPP"), "{e}");
    assert!(e.contains("CPUs do not have asymmetric capacities"), "{e}");
    // The range is 0..1; 6.5 has the sysctl (topology.c), 4.16 had no EAS to switch.
    let mut t = fairsim_balance::Tunables::default();
    assert!(t
        .write(
            Kernel::V6_12,
            TunablePlace::Sysctl,
            "kernel.sched_energy_aware=2"
        )
        .is_err());
    assert!(t
        .write(
            Kernel::V6_5,
            TunablePlace::Sysctl,
            "kernel.sched_energy_aware=1"
        )
        .is_ok());
    assert!(t
        .write(
            Kernel::V4_16,
            TunablePlace::Sysctl,
            "kernel.sched_energy_aware=1"
        )
        .is_err());
}

#[test]
fn a_runqueues_clamps_are_the_largest_of_its_tasks() {
    use fairsim_balance::uclamp::ClampId;
    let mut s = rk3399();
    let a = s.create_task("a", 0, Some(CpuMask::single(6, 1)), 1);
    let b = s.create_task("b", 0, Some(CpuMask::single(6, 1)), 1);
    s.sched_setattr_uclamp(a, 300, 600).unwrap();
    s.sched_setattr_uclamp(b, 700, 800).unwrap();
    assert!(s.uclamp_is_used());
    for p in [a, b] {
        s.wake_up_new_task_select(p, 1, MS);
        s.wake_up_new_task_activate(p, MS);
    }
    assert_eq!(s.uclamp_rq_get(1, ClampId::Min), 700);
    assert_eq!(s.uclamp_rq_get(1, ClampId::Max), 800);
    assert!(!s.uclamp_rq_is_idle(1));
    // b sleeps: a's clamps remain.
    assert_eq!(s.schedule(1, 2 * MS), Some(a));
    s.block_current(1, 3 * MS);
    assert_eq!(s.schedule(1, 3 * MS), Some(b));
    s.block_current(1, 4 * MS);
    s.schedule(1, 4 * MS);
    assert_eq!(s.uclamp_rq_get(1, ClampId::Min), 0);
    // The last task out leaves its maximum clamp in place and flags the runqueue idle.
    assert!(s.uclamp_rq_is_idle(1));
    assert_eq!(s.uclamp_rq_get(1, ClampId::Max), 800);
    // uclamp_validate's rules.
    assert!(s.sched_setattr_uclamp(a, 700, 600).is_err());
    assert!(s.sched_setattr_uclamp(a, 0, 1025).is_err());
}

#[test]
fn util_min_sends_a_small_task_to_a_big_cpu_and_util_max_keeps_a_big_one_little() {
    use fairsim_balance::uclamp::ClampId;
    // A 100-util task asking for 600: no LITTLE CPU (381) can give it that.
    let mut s = rk3399();
    let p = sleeper_on(&mut s, 0, None, MS);
    set_util(&mut s, p, 100);
    s.sched_setattr_uclamp(p, 600, 1024).unwrap();
    assert_eq!(s.uclamp_eff_value(p, ClampId::Min), 600);
    let cpu = wake(&mut s, p, 0, 0, 20 * MS);
    assert!(cpu >= 4, "util_min 600 needs a big CPU, got cpu{cpu}");
    // A 500-util task capped at 300 fits a LITTLE CPU, and is no misfit there.
    let mut s = rk3399();
    let p = sleeper_on(&mut s, 1, None, MS);
    set_util(&mut s, p, 500);
    s.sched_setattr_uclamp(p, 0, 300).unwrap();
    assert!(s.task_fits_cpu(p, 1));
    let cpu = wake(&mut s, p, 1, 0, 20 * MS);
    assert!(cpu < 4, "util_max 300 fits a LITTLE CPU, got cpu{cpu}");
}
