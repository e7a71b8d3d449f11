//! Properties of placement: whatever the affinity mask and the load, wakeups choose an
//! allowed CPU (the fast path never leaves the mask when the previous CPU is allowed);
//! fork and exec choose an allowed CPU or the kernel's `this_cpu` default, which
//! `select_task_rq` then replaces; SIS_UTIL's scan-depth update only writes the LLC.

use crate::select_support;

use fairsim_balance::{wf, Features, SchedParams};
use fairsim_topology::CpuMask;
use proptest::prelude::*;
use select_support::*;

const MS: u64 = 1_000_000;
const MACHINES: [&str; 3] = ["smt-mc-1s4c2t", "numa-2s4c2t", "tc2"];

#[derive(Debug, Clone)]
struct Case {
    machine: usize,
    mask_bits: u64,
    prev_pick: usize,
    hogs: Vec<usize>,
    waker: usize,
    sum_util: u64,
    sync: bool,
    wide: bool,
}

fn case() -> impl Strategy<Value = Case> {
    (
        0..MACHINES.len(),
        1u64..u64::MAX,
        0usize..64,
        proptest::collection::vec(0usize..64, 0..24),
        0usize..64,
        0u64..20_000,
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(
            |(machine, mask_bits, prev_pick, hogs, waker, sum_util, sync, wide)| Case {
                machine,
                mask_bits,
                prev_pick,
                hogs,
                waker,
                sum_util,
                sync,
                wide,
            },
        )
}

fn run_case(c: &Case) -> Result<(), TestCaseError> {
    let mut s = sched(MACHINES[c.machine]);
    let n = s.nr_cpus();
    let mut allowed = CpuMask::from_cpus(n, (0..n).filter(|&i| c.mask_bits >> i & 1 == 1));
    if allowed.is_empty() {
        allowed.set(c.mask_bits.trailing_zeros() as usize % n);
    }
    let cpus: Vec<usize> = allowed.iter().collect();
    let prev = cpus[c.prev_pick % cpus.len()];
    for cpu in 0..n {
        if let Some(llc) = s.topo.cpus[cpu].sd_llc {
            s.update_idle_cpu_scan(llc, c.sum_util);
        }
    }
    let p = sleeper_on(&mut s, prev, Some(allowed.clone()), MS);
    for &h in &c.hogs {
        run_on(&mut s, h % n, 2 * MS);
    }
    let waker_cpu = c.waker % n;
    let w = run_on(&mut s, waker_cpu, 2 * MS);
    settle_idle(&mut s, 2 * MS);
    if c.wide {
        s.tasks[w].wakee_flips = 1 << 12;
        s.tasks[p].wakee_flips = 64;
    }

    // The fast path only returns prev, the waker's CPU when it is allowed, or CPUs it
    // checked against the mask.
    let flags = wf::TTWU | if c.sync { wf::SYNC } else { 0 };
    let raw = s.select_task_rq_fair(p, prev, flags, waker_cpu, 3 * MS);
    prop_assert!(
        allowed.test(raw),
        "wakeup picked cpu{} outside {}",
        raw,
        allowed.to_list()
    );

    let cpu = wake(
        &mut s,
        p,
        waker_cpu,
        if c.sync { wf::SYNC } else { 0 },
        3 * MS,
    );
    prop_assert!(
        allowed.test(cpu),
        "ttwu placed on cpu{} outside {}",
        cpu,
        allowed.to_list()
    );
    prop_assert_eq!(s.tasks[p].cpu, cpu);

    // Fork: the slow path may fall back to this_cpu (all candidates idle without an idle
    // stamp); select_task_rq's fallback then keeps the child inside its mask.
    let child = s.create_task("child", 0, Some(allowed.clone()), waker_cpu);
    let raw = s.select_task_rq_fair(child, waker_cpu, wf::FORK, waker_cpu, 4 * MS);
    prop_assert!(
        allowed.test(raw) || raw == waker_cpu,
        "fork picked cpu{}",
        raw
    );
    let cpu = s.wake_up_new_task_select(child, waker_cpu, 4 * MS);
    prop_assert!(
        allowed.test(cpu),
        "fork placed on cpu{} outside {}",
        cpu,
        allowed.to_list()
    );
    s.wake_up_new_task_activate(child, 4 * MS);

    // Exec of the running waker with a widened mask.
    let mut wmask = allowed.clone();
    wmask.set(waker_cpu);
    s.tasks[w].nr_cpus_allowed = wmask.weight();
    s.tasks[w].cpus_allowed = wmask.clone();
    let raw = s.select_task_rq_fair(w, waker_cpu, wf::EXEC, waker_cpu, 5 * MS);
    prop_assert!(
        wmask.test(raw),
        "exec picked cpu{} outside {}",
        raw,
        wmask.to_list()
    );

    s.check_invariants()
        .map_err(|e| TestCaseError::fail(e.to_string()))?;
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn placement_respects_cpus_allowed(c in case()) {
        run_case(&c)?;
    }
}

#[test]
fn update_idle_cpu_scan_writes_only_the_llc() {
    let s = sched("smt-mc-1s4c2t");
    let llc0 = llc(&s, 0);
    let smt0 = s.topo.cpus[0].sd.expect("base domain");
    assert_ne!(smt0, llc0);
    // 8-CPU LLC, pct 117, x = 4096/8 = 512: tmp = 512^2 * 117^2 / 10240000 = 350,
    // y = 674, nr = 674 * 8 / 1024 = 5.
    s.update_idle_cpu_scan(llc0, 4096);
    assert_eq!(nr_idle_scan(&s, 0), 5);
    // The SMT domain is not the LLC: nothing is written.
    s.update_idle_cpu_scan(smt0, 0);
    assert_eq!(nr_idle_scan(&s, 0), 5);
    // x = 7000/8 = 875 (85%): scanning stops.
    s.update_idle_cpu_scan(llc0, 7000);
    assert_eq!(nr_idle_scan(&s, 0), 0);

    let params = SchedParams {
        features: Features::parse("NO_SIS_UTIL").unwrap(),
        ..SchedParams::default()
    };
    let s = sched_with("smt-mc-1s4c2t", params);
    s.update_idle_cpu_scan(llc(&s, 0), 0);
    assert_eq!(
        nr_idle_scan(&s, 0),
        0,
        "NO_SIS_UTIL leaves nr_idle_scan alone"
    );
}

#[test]
fn update_idle_cpu_scan_on_sapphire_rapids() {
    let s = sched("spr-2s56c2t");
    let llc = llc(&s, 0);
    assert_eq!(s.topo.cpus[0].sd_llc_size, 112);
    // x = 700: tmp = 490000 * 13689 / 10240000 = 655, y = 369, nr = 369 * 112 / 1024 = 40.
    s.update_idle_cpu_scan(llc, 700 * 112);
    assert_eq!(nr_idle_scan(&s, 0), 40);
    // The other socket's LLC is separate: it keeps the idle machine's full depth.
    assert_eq!(nr_idle_scan(&s, 112), 112);
}
