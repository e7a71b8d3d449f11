//! Task groups (`CONFIG_FAIR_GROUP_SCHED`, Linux 6.12.117) driven through the `Sched`
//! entry points the engine uses: the shares arithmetic against hand-computed cases, CPU
//! time split by group weight, the hierarchical counts and `task_h_load`.

use fairsim_balance::group::{
    cpu_weight_from_shares, cpu_weight_nice_from_shares, shares_from_cpu_weight,
    shares_from_cpu_weight_nice, BwTimer, GroupId, ROOT_GROUP, RUNTIME_INF,
};
use fairsim_balance::{Sched, SchedParams, TaskId};
use fairsim_topology::source::preset;
use fairsim_topology::{build_sched_domains, BuildOptions, CpuMask};

use crate::run_support::run;

fn sched() -> Sched {
    let m = preset("smt-mc-1s4c2t").unwrap();
    let topo = build_sched_domains(&m, BuildOptions::default()).unwrap();
    Sched::new(m, topo, SchedParams::default())
}

/// Forks a task pinned to `cpu` in group `g` at `now` and enqueues it there.
fn spawn(s: &mut Sched, cpu: usize, g: GroupId, nice: i32, now: u64) -> TaskId {
    let n = s.nr_cpus();
    let p = s.create_task("t", nice, Some(CpuMask::single(n, cpu)), cpu);
    s.set_task_group(p, g).unwrap();
    s.task_fork(p, cpu, now);
    assert_eq!(s.wake_up_new_task_select(p, cpu, now), cpu);
    s.wake_up_new_task_activate(p, now);
    p
}

fn runtime(s: &Sched, p: TaskId) -> u64 {
    s.tasks[p].se.sum_exec_runtime
}

#[test]
fn cpu_weight_conversions_are_the_kernels() {
    // DIV_ROUND_CLOSEST(w * 1024, 100).
    assert_eq!(shares_from_cpu_weight(100), Ok(1024));
    assert_eq!(shares_from_cpu_weight(1), Ok(10));
    assert_eq!(shares_from_cpu_weight(200), Ok(2048));
    assert_eq!(shares_from_cpu_weight(10000), Ok(102400));
    assert_eq!(shares_from_cpu_weight(33), Ok(338));
    assert!(shares_from_cpu_weight(0).is_err());
    assert!(shares_from_cpu_weight(10001).is_err());
    assert_eq!(cpu_weight_from_shares(1024), 100);
    assert_eq!(cpu_weight_from_shares(2), 1);
    assert_eq!(shares_from_cpu_weight_nice(0), Ok(1024));
    assert_eq!(shares_from_cpu_weight_nice(5), Ok(335));
    assert_eq!(shares_from_cpu_weight_nice(-20), Ok(88761));
    assert!(shares_from_cpu_weight_nice(20).is_err());
    assert_eq!(cpu_weight_nice_from_shares(1024), 0);
    assert_eq!(cpu_weight_nice_from_shares(335), 5);
    assert_eq!(cpu_weight_nice_from_shares(1000), 0);
}

#[test]
fn the_root_group_refuses_a_weight() {
    let mut s = sched();
    assert!(s.set_group_shares(ROOT_GROUP, 2048, 0).is_err());
}

#[test]
fn two_groups_share_a_cpu_by_weight() {
    let mut s = sched();
    let a = s.create_task_group(ROOT_GROUP, "/a").unwrap();
    let b = s.create_task_group(ROOT_GROUP, "/b").unwrap();
    s.set_group_shares(a, shares_from_cpu_weight(100).unwrap(), 0)
        .unwrap();
    s.set_group_shares(b, shares_from_cpu_weight(200).unwrap(), 0)
        .unwrap();
    let pa = spawn(&mut s, 0, a, 0, 0);
    let pb = spawn(&mut s, 0, b, 0, 0);
    run(&mut s, 0, 0, 3_000_000_000);
    let (ra, rb) = (runtime(&s, pa) as f64, runtime(&s, pb) as f64);
    let ratio = rb / ra;
    assert!((1.9..2.1).contains(&ratio), "b/a = {ratio} ({rb} / {ra})");
}

#[test]
fn a_group_of_many_tasks_gets_its_weight_not_its_task_count() {
    // Four tasks in /many against one task in /one, equal group weights: each group gets
    // half the CPU.
    let mut s = sched();
    let many = s.create_task_group(ROOT_GROUP, "/many").unwrap();
    let one = s.create_task_group(ROOT_GROUP, "/one").unwrap();
    let ps: Vec<_> = (0..4).map(|_| spawn(&mut s, 0, many, 0, 0)).collect();
    let q = spawn(&mut s, 0, one, 0, 0);
    run(&mut s, 0, 0, 3_000_000_000);
    let rm: u64 = ps.iter().map(|&p| runtime(&s, p)).sum();
    let rq = runtime(&s, q);
    let ratio = rm as f64 / rq as f64;
    assert!((0.95..1.05).contains(&ratio), "many/one = {ratio}");
}

#[test]
fn nice_zero_against_nice_five_is_1024_to_335() {
    let mut s = sched();
    let g = s.create_task_group(ROOT_GROUP, "/g").unwrap();
    let a = spawn(&mut s, 0, g, 0, 0);
    let b = spawn(&mut s, 0, g, 5, 0);
    run(&mut s, 0, 0, 3_000_000_000);
    let ratio = runtime(&s, a) as f64 / runtime(&s, b) as f64;
    let want = 1024.0 / 335.0;
    assert!((ratio / want - 1.0).abs() < 0.05, "{ratio} vs {want}");
}

#[test]
fn nested_groups_split_their_parent_share() {
    // /p (weight 100) holds /p/x (100) and /p/y (300); /q (100) one task. /q gets half,
    // /p/x an eighth, /p/y three eighths.
    let mut s = sched();
    let p = s.create_task_group(ROOT_GROUP, "/p").unwrap();
    let q = s.create_task_group(ROOT_GROUP, "/q").unwrap();
    let x = s.create_task_group(p, "/p/x").unwrap();
    let y = s.create_task_group(p, "/p/y").unwrap();
    s.set_group_shares(y, shares_from_cpu_weight(300).unwrap(), 0)
        .unwrap();
    let tx = spawn(&mut s, 0, x, 0, 0);
    let ty = spawn(&mut s, 0, y, 0, 0);
    let tq = spawn(&mut s, 0, q, 0, 0);
    run(&mut s, 0, 0, 4_000_000_000);
    let total = (runtime(&s, tx) + runtime(&s, ty) + runtime(&s, tq)) as f64;
    let fx = runtime(&s, tx) as f64 / total;
    let fy = runtime(&s, ty) as f64 / total;
    let fq = runtime(&s, tq) as f64 / total;
    assert!((fq - 0.5).abs() < 0.03, "q {fq}");
    assert!((fx - 0.125).abs() < 0.02, "x {fx}");
    assert!((fy - 0.375).abs() < 0.03, "y {fy}");
}

#[test]
fn without_groups_the_root_is_all_there_is() {
    let s = sched();
    assert!(!s.task_groups().active());
    assert_eq!(s.task_groups().tgs.len(), 1);
}

#[test]
fn task_h_load_two_levels_down_is_the_product_of_the_shares() {
    // cpu 0 runs a root task and a task in /p/q; the balancer's view of the latter is its
    // load scaled by /p/q's entity's share of /p, and /p's entity's share of the root.
    let mut s = sched();
    let p = s.create_task_group(ROOT_GROUP, "/p").unwrap();
    let q = s.create_task_group(p, "/p/q").unwrap();
    let r = spawn(&mut s, 0, ROOT_GROUP, 0, 0);
    let t = spawn(&mut s, 0, q, 0, 0);
    run(&mut s, 0, 0, 200_000_000);
    let root = s.rqs[0].cfs.avg.avg.load_avg;
    let gp = s.task_groups().entity(p, 0).avg.load_avg;
    let cp = s.task_groups().cfs_rq(p, 0).avg.avg.load_avg;
    let gq = s.task_groups().entity(q, 0).avg.load_avg;
    let cq = s.task_groups().cfs_rq(q, 0).avg.avg.load_avg;
    let lt = s.tasks[t].se.avg.load_avg;
    let h_p = root * gp / (root + 1);
    let h_q = h_p * gq / (cp + 1);
    let want = lt * h_q / (cq + 1);
    assert!(want > 100, "a meaningful load: {want}");
    assert_eq!(s.task_h_load(t), want);
    // A root task's hierarchical load is its own share of the root.
    let lr = s.tasks[r].se.avg.load_avg;
    assert_eq!(s.task_h_load(r), lr * root / (root + 1));
}

#[test]
fn group_runs_are_deterministic() {
    let go = || {
        let mut s = sched();
        let a = s.create_task_group(ROOT_GROUP, "/a").unwrap();
        let b = s.create_task_group(a, "/a/b").unwrap();
        s.set_group_shares(b, shares_from_cpu_weight(50).unwrap(), 0)
            .unwrap();
        let ps = [
            spawn(&mut s, 0, a, 0, 0),
            spawn(&mut s, 0, b, 3, 0),
            spawn(&mut s, 0, ROOT_GROUP, 0, 0),
        ];
        run(&mut s, 0, 0, 500_000_000);
        ps.map(|p| (s.tasks[p].se.sum_exec_runtime, s.tasks[p].se.vruntime))
    };
    assert_eq!(go(), go());
}

#[test]
fn an_idle_group_gets_the_minimum_weight_and_counts_as_idle() {
    // cpu.idle=1: the group's entity weighs WEIGHT_IDLEPRIO (3) against a nice-0 task's
    // 1024, and the CPU counts its tasks in idle_h_nr_running.
    let mut s = sched();
    let bg = s.create_task_group(ROOT_GROUP, "/bg").unwrap();
    s.set_group_idle(bg, true, 0).unwrap();
    assert!(
        s.set_group_shares(bg, 1024, 0).is_err(),
        "an idle group refuses a weight"
    );
    let hog = spawn(&mut s, 0, bg, 0, 0);
    let fg = spawn(&mut s, 0, ROOT_GROUP, 0, 0);
    assert_eq!(s.rqs[0].cfs.idle_h_nr_running, 1);
    run(&mut s, 0, 0, 2_000_000_000);
    let share = runtime(&s, hog) as f64 / (runtime(&s, hog) + runtime(&s, fg)) as f64;
    assert!(share < 0.01, "idle group's share {share}");
    // Back to a normal group: its task is no longer counted idle and gets its half.
    s.set_group_idle(bg, false, 2_000_000_000).unwrap();
    assert_eq!(s.rqs[0].cfs.idle_h_nr_running, 0);
    let (h0, f0) = (runtime(&s, hog), runtime(&s, fg));
    run(&mut s, 0, 2_000_000_000, 4_000_000_000);
    let ratio = (runtime(&s, hog) - h0) as f64 / (runtime(&s, fg) - f0) as f64;
    assert!((0.9..1.1).contains(&ratio), "after cpu.idle=0: {ratio}");
}

/// Runs `cpu` from `from` to `to` like [`run`], firing bandwidth timers at their times
/// (rescheduling the CPU when a timer asks it to).
fn run_bw(s: &mut Sched, cpu: usize, from: u64, to: u64, timers: &mut Vec<BwTimer>) {
    if s.rqs[cpu].curr.is_none() || s.rqs[cpu].need_resched {
        s.schedule(cpu, from);
    }
    let tick = s.tick_nsec;
    let mut t = (from / tick + 1) * tick;
    while t <= to {
        timers.extend(s.take_bandwidth_timers());
        timers.sort_by_key(|x| (x.at, x.group, x.kind));
        while let Some(&x) = timers.first() {
            if x.at > t {
                break;
            }
            timers.remove(0);
            s.bandwidth_timer(x, x.at);
            s.check_invariants().unwrap();
            timers.extend(s.take_bandwidth_timers());
            timers.sort_by_key(|x| (x.at, x.group, x.kind));
            if s.rqs[cpu].need_resched {
                s.schedule(cpu, x.at);
            }
        }
        if s.tick(cpu, t) {
            s.schedule(cpu, t);
        }
        s.check_invariants().unwrap();
        t += tick;
    }
    s.update_rq_clock(cpu, to);
}

#[test]
fn cpu_max_half_a_cpu_gets_half_and_counts_throttled_periods() {
    let mut s = sched();
    let g = s.create_task_group(ROOT_GROUP, "/lim").unwrap();
    s.set_group_bandwidth(g, 100_000_000, 50_000_000, 0, 0)
        .unwrap();
    let hog = spawn(&mut s, 0, g, 0, 0);
    let mut timers = Vec::new();
    run_bw(&mut s, 0, 0, 5_000_000_000, &mut timers);
    let share = runtime(&s, hog) as f64 / 5e9;
    let b = &s.task_groups().tgs[g].bw;
    eprintln!(
        "share {share} periods {} throttled {} throttled_time {}",
        b.nr_periods, b.nr_throttled, b.throttled_time
    );
    assert!((share - 0.5).abs() < 0.02, "share {share}");
    assert!(
        (49..=51).contains(&b.nr_periods),
        "{} periods",
        b.nr_periods
    );
    assert!(b.nr_throttled >= 45, "{} throttled periods", b.nr_throttled);
    assert!(
        b.throttled_time > 2_000_000_000,
        "throttled {} ns",
        b.throttled_time
    );
}

#[test]
fn a_throttled_group_leaves_the_cpu_to_others() {
    // A root task shares the CPU with a group limited to 20%: the root task gets the rest.
    let mut s = sched();
    let g = s.create_task_group(ROOT_GROUP, "/lim").unwrap();
    s.set_group_bandwidth(g, 100_000_000, 20_000_000, 0, 0)
        .unwrap();
    let hog = spawn(&mut s, 0, g, 0, 0);
    let other = spawn(&mut s, 0, ROOT_GROUP, 0, 0);
    let mut timers = Vec::new();
    run_bw(&mut s, 0, 0, 4_000_000_000, &mut timers);
    let share = runtime(&s, hog) as f64 / 4e9;
    let rest = runtime(&s, other) as f64 / 4e9;
    assert!((share - 0.2).abs() < 0.02, "limited share {share}");
    assert!((rest - 0.8).abs() < 0.02, "other share {rest}");
}

#[test]
fn cpu_max_refuses_what_the_kernel_refuses() {
    let mut s = sched();
    let g = s.create_task_group(ROOT_GROUP, "/lim").unwrap();
    assert!(s
        .set_group_bandwidth(g, 100_000_000, 999_000, 0, 0)
        .is_err());
    assert!(s.set_group_bandwidth(g, 999_000, 50_000_000, 0, 0).is_err());
    assert!(s
        .set_group_bandwidth(g, 1_000_000_001, 50_000_000, 0, 0)
        .is_err());
    assert!(s
        .set_group_bandwidth(g, 100_000_000, 50_000_000, 60_000_000, 0)
        .is_err());
    assert!(s
        .set_group_bandwidth(ROOT_GROUP, 100_000_000, 50_000_000, 0, 0)
        .is_err());
    assert!(s
        .set_group_bandwidth(g, 100_000_000, RUNTIME_INF, 0, 0)
        .is_ok());
    assert!(s
        .set_group_bandwidth(g, 100_000_000, 50_000_000, 50_000_000, 0)
        .is_ok());
}
