//! Model checking of race mode with loom: every interleaving (up to a preemption bound)
//! of real balancing code on real threads over race mode's runqueues. Built only with
//! `--cfg loom`, which swaps the shared atomics and locks for loom's:
//!
//! ```text
//! RUSTFLAGS="--cfg loom" cargo test -p fairsim-race --test race_loom --release
//! ```
//!
//! `.ci/run` runs them so.
#![cfg(loom)]

use std::sync::atomic::Ordering;

use loom::sync::Arc;

use fairsim_balance::lb::rq_balance::ScanOutcome;
use fairsim_balance::lb::LbState;
use fairsim_balance::{
    BalanceAct, BalanceScan, CpuIdleType, Features, GroupStats, PeriodicBalance, ScanCounters,
    SchedParams,
};
use fairsim_race::build_world;
use fairsim_race::cpu::{CpuCtx, RaceWorld};
use fairsim_topology::source::{parse_spec, SpecOptions};
use fairsim_topology::{Arch, BuildOptions};

/// Engine time of the newidle balances: 1 ms after boot (periodic balances run later,
/// once their interval has passed).
const NOW: u64 = 1_000_000;

/// A world on `cores` single-thread cores with `tasks` tokens, token `p` on `place(p)`.
fn world(
    cores: usize,
    features: &str,
    tasks: usize,
    place: impl Fn(usize) -> usize,
) -> (RaceWorld, LbState) {
    let features = Features::parse(features).expect("features");
    let opts = SpecOptions::new(&format!("sockets=1,cores={cores}"), Arch::X86);
    let build = BuildOptions {
        shared_all_non_numa: features.uses_ilb(),
        ..BuildOptions::default()
    };
    let params = SchedParams {
        features,
        ..SchedParams::default()
    };
    build_world(
        &parse_spec(&opts).expect("machine"),
        build,
        &params,
        tasks,
        place,
    )
    .expect("world")
}

/// Runs `f` under every interleaving loom explores and returns how many there were.
fn model(f: impl Fn() + Sync + Send + 'static) -> usize {
    let runs = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counter = std::sync::Arc::clone(&runs);
    let mut b = loom::model::Builder::new();
    b.preemption_bound = Some(2);
    b.check(move || {
        counter.fetch_add(1, Ordering::Relaxed);
        f();
    });
    let n = runs.load(Ordering::Relaxed);
    eprintln!("loom explored {n} interleavings");
    n
}

/// CPUs 1 and 2 went newly idle together, scanned the same state and both picked CPU 0,
/// which holds three tokens; they now act at once (`sched_balance_rq`'s act half: lock the
/// busiest runqueue, `detach_tasks`, unlock, lock their own, `attach_tasks`) while CPU 0
/// runs one token and puts it to sleep. Whatever the interleaving: no deadlock (loom would
/// report one), no lock taken while another is held, nothing left between detach and
/// attach, and every token in exactly one place at the end. (The scans run before the
/// threads start: they only read, and with them the state space is too large to explore.)
#[test]
fn two_newidle_balances_racing_for_one_runqueue_conserve_tokens() {
    let runs = model(|| {
        let (world, lb) = world(3, "NO_NI_RANDOM", 3, |_| 0);
        let w = Arc::new(world);
        let lb = Arc::new(lb);
        let scans: Vec<_> = [1usize, 2]
            .into_iter()
            .map(|cpu| {
                let mut ctx = CpuCtx::new(&w, cpu, &lb.sd, lb.rnd[cpu]);
                let sd = w.topo.cpus[cpu].sd.expect("a domain");
                let mut scan = ctx.sched_balance_rq_scan(cpu, sd, CpuIdleType::NewlyIdle, NOW);
                // The runqueue search, before the threads race for the lock.
                ctx.lb_resolve_src_rq(&mut scan);
                scan
            })
            .collect();
        for scan in &scans {
            assert_eq!(scan.outcome, ScanOutcome::Busiest(0), "{scan:?}");
        }
        let handles: Vec<_> = [1usize, 2]
            .into_iter()
            .zip(scans)
            .map(|(cpu, scan)| {
                let (w, lb) = (Arc::clone(&w), Arc::clone(&lb));
                loom::thread::spawn(move || {
                    let mut ctx = CpuCtx::new(&w, cpu, &lb.sd, lb.rnd[cpu]);
                    let r = ctx.sched_balance_rq_act(scan, NOW);
                    (r.moved, ctx.in_flight(), ctx.stats.nested_locks)
                })
            })
            .collect();
        // CPU 0 runs its least recently run token, which then sleeps.
        let ue = w.util_est;
        let p = w.rqs[0].lock().pick_next(ue);
        if let Some(p) = p {
            let mut g = w.rqs[0].lock();
            if let Some(t) = g.dequeue(p, false, ue) {
                g.asleep.insert(p, t);
            }
        }
        let mut moved = 0;
        for h in handles {
            let (m, in_flight, nested) = h.join().expect("thread");
            assert!(in_flight.is_empty(), "tokens left in flight: {in_flight:?}");
            assert_eq!(nested, 0);
            moved += m;
        }
        let world = Arc::try_unwrap(w).expect("sole owner");
        let mut seen = [0u32; 3];
        let mut on_cpu = [0u32; 3];
        for (cpu, rq) in world.rqs.into_iter().enumerate() {
            for p in rq.into_inner().all_tokens() {
                seen[p] += 1;
                on_cpu[cpu] += 1;
            }
        }
        assert_eq!(seen, [1, 1, 1]);
        assert_eq!(
            on_cpu[1] + on_cpu[2],
            moved,
            "pulled tokens are where the pulls say"
        );
    });
    assert!(runs > 1);
}

/// A wakeup from another CPU, a newidle pull and the owner's timer interrupt meet on one
/// runqueue: CPU 0 holds two tokens queued and a third asleep on its timers; CPU 1 wakes
/// the sleeper (a partner wakeup: a lockless read of where it sleeps, then CPU 0's lock)
/// while CPU 2 pulls from CPU 0 and CPU 0 fires its expired timer for the sleeper. The
/// sleeper must be woken exactly once (by the wakeup or the timer) and every token end in
/// exactly one place.
#[test]
fn a_remote_wakeup_a_pull_and_the_timer_conserve_tokens() {
    let runs = model(|| {
        let (world, lb) = world(3, "NO_NI_RANDOM", 3, |_| 0);
        let ue = world.util_est;
        {
            // One token runs on CPU 0 and goes to sleep with a timer due at NOW.
            let mut g = world.rqs[0].lock();
            let p = g.pick_next(ue).expect("a token");
            let mut t = g.dequeue(p, false, ue).expect("queued");
            t.wake_at = NOW;
            g.sleepers.push(std::cmp::Reverse((NOW, p)));
            g.asleep.insert(p, t);
            world.asleep_on[p].store(0, Ordering::Relaxed);
        }
        let w = Arc::new(world);
        let lb = Arc::new(lb);
        let sleeper = w
            .asleep_on
            .iter()
            .position(|c| c.load(Ordering::Relaxed) == 0)
            .expect("sleeper");
        let scan = {
            let mut ctx = CpuCtx::new(&w, 2, &lb.sd, lb.rnd[2]);
            let sd = w.topo.cpus[2].sd.expect("a domain");
            let mut scan = ctx.sched_balance_rq_scan(2, sd, CpuIdleType::NewlyIdle, NOW);
            ctx.lb_resolve_src_rq(&mut scan);
            scan
        };
        assert_eq!(scan.outcome, ScanOutcome::Busiest(0), "{scan:?}");
        let waker = {
            let (w, lb) = (Arc::clone(&w), Arc::clone(&lb));
            loom::thread::spawn(move || {
                let mut ctx = CpuCtx::new(&w, 1, &lb.sd, lb.rnd[1]);
                ctx.wake_partner(sleeper, NOW);
                (ctx.stats.partner_wakeups, ctx.stats.nested_locks)
            })
        };
        let puller = {
            let (w, lb) = (Arc::clone(&w), Arc::clone(&lb));
            loom::thread::spawn(move || {
                let mut ctx = CpuCtx::new(&w, 2, &lb.sd, lb.rnd[2]);
                ctx.sched_balance_rq_act(scan, NOW);
                (ctx.in_flight(), ctx.stats.nested_locks)
            })
        };
        let mut own = CpuCtx::new(&w, 0, &lb.sd, lb.rnd[0]);
        own.fire_timers(NOW);
        let timer_wakes = own.stats.wakeups;
        let (partner_wakes, n1) = waker.join().expect("waker");
        let (in_flight, n2) = puller.join().expect("puller");
        assert_eq!(timer_wakes + partner_wakes, 1, "token {sleeper} woken once");
        assert!(in_flight.is_empty());
        assert_eq!((n1, n2, own.stats.nested_locks), (0, 0, 0));
        drop(own);
        let world = Arc::try_unwrap(w).expect("sole owner");
        let mut seen = [0u32; 3];
        for rq in world.rqs {
            let inner = rq.into_inner();
            assert!(inner.asleep.is_empty(), "token {sleeper} still asleep");
            for p in inner.all_tokens() {
                seen[p] += 1;
            }
        }
        assert_eq!(seen, [1, 1, 1]);
    });
    assert!(runs > 1);
}

/// Seed 000's snapshot protocol: CPU 0's periodic balance rewrites the LLC's
/// `sched_domain_shared` totals and scan depth (ILB_SNAPSHOT, ILB_UTIL) while CPU 1's
/// newidle `update_sd_lb_stats` reads them with relaxed loads (ILB_UTIL, ILB_FAST). The
/// reader may mix old and new fields, as in the kernel; what it must never do is borrow a
/// value nobody wrote, a zero capacity, or scan more groups than the domain has or than
/// either scan depth allows.
#[test]
fn the_ilb_snapshot_read_under_a_concurrent_rewrite_is_old_or_new() {
    model(|| {
        let (world, lb) = world(4, "ILB_SNAPSHOT,ILB_UTIL,ILB_FAST,NO_NI_RANDOM", 2, |_| 3);
        let w = Arc::new(world);
        let lb = Arc::new(lb);
        let mc = w.topo.cpus[0].sd.expect("a domain");
        let shared = w.topo.domain(mc).shared.expect("sd_share");
        let snap = |w: &RaceWorld| {
            let sh = &w.topo.shared[shared];
            (
                sh.total_load.load(Ordering::Relaxed),
                sh.total_capacity.load(Ordering::Relaxed),
                sh.nr_sg_scan.load(Ordering::Relaxed),
            )
        };
        // The first snapshot, taken with CPU 3's runqueue as built.
        {
            let mut ctx = CpuCtx::new(&w, 0, &lb.sd, lb.rnd[0]);
            ctx.sched_balance_domains(0, CpuIdleType::Idle, 50 * NOW);
        }
        let old = snap(&w);
        assert_ne!(old.1, 0);
        // CPU 3's load and utilization grow: the next periodic balance writes new totals
        // and a shallower scan depth.
        {
            let mut g = w.rqs[3].lock();
            g.cfs.avg.load_avg = 2048;
            g.cfs.avg.util_avg = 1024;
        }
        let reader = {
            let (w, lb) = (Arc::clone(&w), Arc::clone(&lb));
            loom::thread::spawn(move || {
                let ctx = CpuCtx::new(&w, 1, &lb.sd, lb.rnd[1]);
                let mut env = ctx.lb_env(
                    1,
                    w.topo.cpus[1].sd.expect("domain"),
                    CpuIdleType::NewlyIdle,
                );
                let mut c = ScanCounters::default();
                let sds = GroupStats::update_sd_lb_stats(&ctx, &mut c, &mut env);
                (sds.total_load, sds.total_capacity, c.sg_scan)
            })
        };
        {
            let mut ctx = CpuCtx::new(&w, 0, &lb.sd, lb.rnd[0]);
            ctx.sched_balance_domains(0, CpuIdleType::Idle, 300 * NOW);
        }
        let new = snap(&w);
        let (load, cap, scanned) = reader.join().expect("reader");
        assert_ne!(
            new.0, old.0,
            "the second snapshot must differ for the test to mean anything"
        );
        assert!(cap != 0);
        assert!(
            [old.0, new.0, 2048].contains(&load) || load == 0,
            "total_load {load} is neither snapshot ({} or {}) nor the reader's own sum",
            old.0,
            new.0
        );
        let groups = w.topo.domain(mc).groups.len() as u64;
        assert!(
            scanned >= 1 && scanned < groups,
            "scanned {scanned} of {groups}"
        );
        let depth = old.2.max(new.2).max(1) as u64;
        assert!(
            scanned <= depth,
            "scanned {scanned} with depths {} / {}",
            old.2,
            new.2
        );
    });
}
