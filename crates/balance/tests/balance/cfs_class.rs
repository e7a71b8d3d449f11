//! The CFS class of the era kernels (`--kernel 3.9..6.5`), driven through the `Sched`
//! entry points the engine uses: hogs sharing a CPU switch at the era's slice, sleepers
//! get the era's credit, and the runqueue invariants hold.

use fairsim_balance::{Kernel, Sched, SchedParams, TaskId};
use fairsim_topology::source::preset;
use fairsim_topology::{build_sched_domains, BuildOptions, CpuMask};

use crate::run_support::run;

/// An 8-CPU machine (CFS's tunables scale by 1 + ilog2(8) = 4 there).
fn sched(kernel: Kernel) -> Sched {
    let m = preset("smt-mc-1s4c2t").unwrap();
    let topo = build_sched_domains(&m, BuildOptions::default()).unwrap();
    let params = SchedParams {
        features: kernel.features(),
        util_est: kernel.util_est(),
        ..SchedParams::default()
    };
    Sched::new(m, topo, params)
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

#[test]
fn two_hogs_switch_at_the_era_slice() {
    for k in Kernel::ALL {
        let mut s = sched(k);
        let a = spawn(&mut s, 0, 0, 0);
        let b = spawn(&mut s, 0, 0, 0);
        run(&mut s, 0, 0, 1_000_000_000);
        let ra = s.tasks[a].se.sum_exec_runtime as i64;
        let rb = s.tasks[b].se.sum_exec_runtime as i64;
        assert!(ra + rb > 990_000_000, "{k}: {ra} + {rb}");
        assert!((ra - rb).abs() < 30_000_000, "{k}: a {ra} b {rb}");
        let sw = s.rqs[0].nr_switches;
        if k == Kernel::V3_9 {
            // 8 CPUs: latency 24 ms, so each of two tasks gets a 12 ms slice. 3.9's
            // calc_delta_mine rounds it to exactly 12 ms, which a task run from a tick
            // has not exceeded at the third tick (delta_exec > ideal_runtime fails, and
            // so does the vruntime test, 12 ms > 12 ms): it switches at 16 ms.
            assert!((60..=63).contains(&sw), "{k}: {sw} switches");
        } else if k.is_cfs() {
            // __calc_delta truncates: 24 ms * 1024 * (0xffffffff / 2048) >> 32 is
            // 11,999,994 ns, so 12 ms of running exceeds it at the third tick. This
            // crate alone picks at the tick's own instant; the engine picks after the
            // tick's work, as the kernel does, and gets a real kernel's 16 ms
            // (crates/cli/tests/cli/tick_clock_cli.rs).
            assert!((81..=84).contains(&sw), "{k}: {sw} switches");
        } else {
            // EEVDF's 3 ms slice: a switch at every tick.
            assert!(sw > 200, "{k}: {sw} switches");
        }
    }
}
