//! schedutil's decisions against values computed by hand from the kernel's formulas:
//! `get_next_freq`, the rate limit, `cached_raw_freq`, the slow path's single request,
//! the shared policy's maximum and the busy-CPU hold of a one-CPU policy.

use fairsim_topology::source::{parse_spec, preset, SpecOptions};
use fairsim_topology::{
    build_sched_domains, Arch, BuildOptions, CpuMask, FreqDomain, Machine, Opp,
};

use super::{Cpufreq, Governor};
use crate::sched::{Sched, SchedParams};

fn sched_with_cpufreq(m: Machine) -> Sched {
    let topo = build_sched_domains(&m, BuildOptions::default()).unwrap();
    let mut s = Sched::new(m, topo, SchedParams::default());
    let caps: Vec<u64> = s.rqs.iter().map(|rq| rq.capacity_orig).collect();
    let cf = Cpufreq::new(&s.machine, Governor::DEFAULT, &caps, 0).unwrap();
    s.install_cpufreq(cf);
    s
}

/// Sets `cpu`'s root cfs_rq utilization (runnable and util_est left at 0) and its clock.
fn set_util(s: &mut Sched, cpu: usize, util: u64, clock: u64) {
    s.rqs[cpu].cfs.avg.avg.util_avg = util;
    s.rqs[cpu].clock = clock;
}

fn cf(s: &mut Sched) -> &mut Cpufreq {
    s.cpufreq.as_mut().unwrap()
}

/// A millisecond after the run starts: the settling update `install_cpufreq` ran at the
/// start (rq clock 2^30) is past the rate limit.
const T0: u64 = (1 << 30) + 1_000_000;

#[test]
fn shared_policy_next_freq_and_rate_limit() {
    let mut s = sched_with_cpufreq(preset("rk3399").unwrap());
    assert_eq!(cf(&mut s).policies[1].sugov.rate_limit_us, 60);
    // Idle from the start, the big cluster runs at its lowest efficient OPP: 408 and 600
    // MHz share 816 MHz's 825 mV and cost as much or more per unit of work.
    assert_eq!(cf(&mut s).policies[1].cur, 816_000);
    assert_eq!(s.rqs[4].freq_capacity, (816_000 << 10) / 1_800_000);
    assert!(cf(&mut s).take_requests().is_empty());
    // util 400 on CPU 4: 400 + 400/4 = 500; 1800000 * 500 / 1024 = 878906 kHz, and the
    // lowest efficient OPP at or above it is 1008 MHz.
    set_util(&mut s, 4, 400, T0);
    s.cpufreq_update_util(4, 0);
    let sg = cf(&mut s).policies[1].sugov.clone();
    assert_eq!((sg.next_freq, sg.cached_raw_freq), (1_008_000, 878_906));
    assert!(sg.work_in_progress && !sg.limits_changed && !sg.need_freq_update);
    assert_eq!(
        cf(&mut s).policies[1].cur,
        816_000,
        "in effect only after the work"
    );
    assert_eq!(sg.last_freq_update_time, T0);
    // 59.999 us later the rate limit (60 us) holds the update back.
    set_util(&mut s, 4, 800, T0 + 59_999);
    s.cpufreq_update_util(4, 0);
    assert_eq!(cf(&mut s).policies[1].sugov.next_freq, 1_008_000);
    // At 60 us: 800 + 200 = 1000; 1800000 * 1000 / 1024 = 1757812 -> 1800 MHz. The work
    // queued first has not run, so no second request is queued.
    set_util(&mut s, 4, 800, T0 + 60_000);
    s.cpufreq_update_util(4, 0);
    let sg = cf(&mut s).policies[1].sugov.clone();
    assert_eq!((sg.next_freq, sg.cached_raw_freq), (1_800_000, 1_757_812));
    assert_eq!(cf(&mut s).take_requests(), vec![(1, T0)]);
    // The kthread takes the latest frequency and the driver switches to it; asking
    // again for the frequency in effect does nothing.
    assert_eq!(cf(&mut s).sugov_work(1), 1_800_000);
    assert!(!cf(&mut s).policies[1].sugov.work_in_progress);
    assert_eq!(cf(&mut s).driver_target(1, 1_800_000), Some(1_800_000));
    assert_eq!(cf(&mut s).driver_target(1, 816_000), None);
    assert_eq!(s.cpufreq_transition_end(1, 1_800_000, 5), 1024);
    assert_eq!(cf(&mut s).driver_target(1, 1_800_000), None);
    // The same raw frequency again is answered from the cache: no new request.
    set_util(&mut s, 4, 800, T0 + 200_000);
    s.cpufreq_update_util(4, 0);
    assert!(cf(&mut s).take_requests().is_empty());
    // A shared policy takes the busiest CPU: CPU 5 at util 100 asks for 125 ->
    // 219726 kHz, CPU 4's request wins and nothing changes; at util 0 on both, the lowest
    // efficient OPP (816 MHz) is asked for.
    set_util(&mut s, 5, 100, T0 + 400_000);
    s.cpufreq_update_util(5, 0);
    assert_eq!(cf(&mut s).policies[1].sugov.next_freq, 1_800_000);
    set_util(&mut s, 4, 0, T0 + 600_000);
    set_util(&mut s, 5, 0, T0 + 600_000);
    s.cpufreq_update_util(5, 0);
    assert_eq!(cf(&mut s).policies[1].sugov.next_freq, 816_000);
    assert_eq!(cf(&mut s).take_requests(), vec![(1, T0 + 600_000)]);
}

/// Two CPUs, one policy each, OPPs 500/1000/2000 MHz, a 100 us transition latency.
fn per_cpu_policies() -> Machine {
    let mut m = parse_spec(&SpecOptions::new("2", Arch::Arm64)).unwrap();
    m.cpufreq = (0..2)
        .map(|c| FreqDomain {
            cpus: CpuMask::single(2, c),
            opps: [500_000, 1_000_000, 2_000_000]
                .iter()
                .map(|&khz| Opp {
                    khz,
                    microvolt: None,
                    power_uw: None,
                })
                .collect(),
            transition_latency_ns: 100_000,
            dynamic_power_coefficient: None,
        })
        .collect();
    m.validate().unwrap();
    m
}

#[test]
fn single_policy_holds_a_busy_cpus_frequency() {
    let mut s = sched_with_cpufreq(per_cpu_policies());
    // 100 us of latency: a 150 us rate limit.
    assert_eq!(cf(&mut s).policies[0].sugov.rate_limit_us, 150);
    assert_eq!(cf(&mut s).policies[0].cur, 500_000);
    // util 800: 1000 -> 2000000 * 1000 / 1024 = 1953125 kHz -> 2 GHz.
    set_util(&mut s, 0, 800, T0);
    s.cpufreq_update_util(0, 0);
    assert_eq!(cf(&mut s).policies[0].sugov.next_freq, 2_000_000);
    assert_eq!(cf(&mut s).sugov_work(0), 2_000_000);
    cf(&mut s).take_requests();
    // util 100 asks for 125 -> 244140 kHz -> 500 MHz, but the CPU has not stopped its
    // tick in idle since the last update (idle_calls unchanged): the frequency holds and
    // the cached raw frequency is put back.
    set_util(&mut s, 0, 100, T0 + 200_000);
    s.cpufreq_update_util(0, 0);
    let sg = cf(&mut s).policies[0].sugov.clone();
    assert_eq!((sg.next_freq, sg.cached_raw_freq), (2_000_000, 1_953_125));
    assert!(cf(&mut s).take_requests().is_empty());
    // Once its idle loop has stopped the tick, the drop goes through.
    s.cpufreq_idle_stop_tick(0);
    set_util(&mut s, 0, 100, T0 + 400_000);
    s.cpufreq_update_util(0, 0);
    let sg = cf(&mut s).policies[0].sugov.clone();
    assert_eq!((sg.next_freq, sg.cached_raw_freq), (500_000, 244_140));
    assert_eq!(cf(&mut s).take_requests(), vec![(0, T0 + 400_000)]);
    // The other CPU's policy stays where the idle start put it.
    assert_eq!(cf(&mut s).policies[1].sugov.next_freq, 500_000);
}

#[test]
fn other_governors_install_no_hook() {
    let m = preset("rk3399").unwrap();
    let topo = build_sched_domains(&m, BuildOptions::default()).unwrap();
    let mut s = Sched::new(m, topo, SchedParams::default());
    let caps: Vec<u64> = s.rqs.iter().map(|rq| rq.capacity_orig).collect();
    let cf0 = Cpufreq::new(&s.machine, Governor::Powersave, &caps, 0).unwrap();
    s.install_cpufreq(cf0);
    // powersave's 408 MHz: 408000 << 10 / 1416000 = 295 on the A53s.
    assert_eq!(s.rqs[0].freq_capacity, 295);
    set_util(&mut s, 4, 1024, T0);
    s.cpufreq_update_util(4, 0);
    assert!(cf(&mut s).take_requests().is_empty());
    assert_eq!(cf(&mut s).policies[1].cur, 408_000);
}
