//! The trace writers on a small hand-built trace: the Perfetto bytes decoded field by field
//! with the protobuf walker of `trace_support`, the ftrace text against golden lines, and
//! determinism.

use crate::trace_support;

use trace_support::*;

#[test]
fn perfetto_packets_decode_to_the_records() {
    let t = sample();
    let bytes = perfetto_full(&t);
    let top = Msg::new(&bytes);
    assert!(
        top.0.iter().all(|(f, _)| *f == 1),
        "a Trace holds only packets"
    );
    let packets: Vec<Msg> = top.all(1).into_iter().map(Msg::new).collect();

    // The process tree comes first, on the ftrace sequence.
    let tree_pkt = &packets[0];
    assert_eq!(tree_pkt.int(10), 1);
    assert_eq!(tree_pkt.int(8), T0);
    let tree = tree_pkt.msg(2);
    let procs: Vec<(u64, u64, Vec<&str>)> = tree
        .all(1)
        .into_iter()
        .map(Msg::new)
        .map(|p| {
            let cmd = p
                .all(3)
                .into_iter()
                .map(|b| std::str::from_utf8(b).unwrap())
                .collect();
            assert_eq!(p.int(9), 1, "cmdline_is_comm");
            (p.int(1), p.int(2), cmd)
        })
        .collect();
    assert_eq!(procs, vec![(1, 0, vec!["worker"]), (3, 1, vec!["hog"])]);
    let threads: Vec<(u64, u64, String)> = tree
        .all(2)
        .into_iter()
        .map(Msg::new)
        .map(|th| (th.int(1), th.int(3), th.str(2).to_string()))
        .collect();
    assert_eq!(
        threads,
        vec![
            (1, 1, "worker".into()),
            (2, 1, "worker-t".into()),
            (3, 3, "hog".into())
        ]
    );

    // Every packet names its sequence; bundles are on sequence 1.
    let mut events: Vec<Ev> = Vec::new();
    for p in &packets {
        let seq = p.int(10);
        if p.has(1) {
            assert_eq!(seq, 1);
            let bundle = p.msg(1);
            let cpu = bundle.int(1);
            let evs: Vec<Ev> = bundle
                .all(2)
                .into_iter()
                .map(|e| Ev {
                    cpu,
                    msg: Msg::new(e),
                })
                .collect();
            assert!(evs.windows(2).all(|w| w[0].msg.int(1) <= w[1].msg.int(1)));
            events.extend(evs);
        }
    }
    events.sort_by_key(|e| e.msg.int(1));
    assert_eq!(events.len(), 15, "every record but the 4 fairsim ones");
    let at = |off: u64| {
        events
            .iter()
            .find(|e| e.msg.int(1) == T0 + off)
            .expect("event at offset")
    };

    let fork = at(0);
    assert_eq!(
        (fork.cpu, fork.msg.int(2)),
        (0, 1),
        "logged on cpu 0 while pid 1 ran"
    );
    let f = fork.msg.msg(239);
    assert_eq!(
        (f.str(1), f.int(2), f.str(3), f.int(4)),
        ("worker", 1, "worker-t", 2)
    );

    for (off, field, pid, comm, prio, target) in [
        (500, 114, 2, "worker-t", 125, 1),
        (10_000, 20, 3, "hog", 110, 2),
        (11_400, 17, 3, "hog", 110, 2),
    ] {
        let w = at(off).msg.msg(field);
        assert_eq!(
            (w.str(1), w.int(2), w.sint(3), w.int(4), w.int(5)),
            (comm, pid, prio, 1, target),
            "wake event at +{off}"
        );
    }
    assert_eq!(
        at(10_000).msg.int(2),
        1,
        "sched_waking logged by the waker, pid 1"
    );
    assert_eq!(at(11_400).msg.int(2), 0, "sched_wakeup on the idle cpu 2");

    let idle = at(1_000);
    assert_eq!(idle.cpu, 1);
    let c = idle.msg.msg(13);
    assert_eq!((c.int(1), c.int(2)), (u64::from(u32::MAX), 1));
    let c = at(20_100).msg.msg(13);
    assert_eq!((c.int(1), c.int(2)), (1, 1));
    let fr = at(40_000).msg.msg(11);
    assert_eq!((fr.int(1), fr.int(2)), (2_400_000, 2));

    // (offset, event pid, prev comm, prev pid, prev prio, prev_state, next comm, next pid, next prio)
    let switches = [
        (2_000, 0, "swapper/1", 0, 120, 0, "worker-t", 2, 125),
        (12_000, 0, "swapper/2", 0, 120, 0, "hog", 3, 110),
        (20_000, 2, "worker-t", 2, 125, 1, "swapper/1", 0, 120),
        (50_100, 3, "hog", 3, 110, 32, "swapper/2", 0, 120),
        (60_000, 1, "worker", 1, 120, 0, "swapper/0", 0, 120),
    ];
    for (off, cur, pc, pp, ppr, ps, nc, np, npr) in switches {
        let e = at(off);
        assert_eq!(e.msg.int(2), cur, "switch at +{off} is logged by prev");
        let s = e.msg.msg(4);
        assert_eq!(
            (
                s.str(1),
                s.int(2),
                s.sint(3),
                s.sint(4),
                s.str(5),
                s.int(6),
                s.sint(7)
            ),
            (pc, pp, ppr, ps, nc, np, npr),
            "switch at +{off}"
        );
    }

    let m = at(32_000).msg.msg(491);
    assert_eq!(
        (m.str(1), m.int(2), m.sint(3), m.int(4), m.int(5)),
        ("worker-t", 2, 125, 1, 2)
    );
    let x = at(50_000).msg.msg(238);
    assert_eq!(
        (x.str(1), x.int(2), x.int(3), x.sint(4)),
        ("hog", 3, 3, 110)
    );
}

#[test]
fn perfetto_track_events_nest_and_clear_their_sequence() {
    let t = sample();
    let bytes = perfetto_bytes(&t);
    let packets: Vec<Msg> = Msg::new(&bytes).all(1).into_iter().map(Msg::new).collect();
    let track: Vec<&Msg> = packets.iter().filter(|p| p.int(10) == 2).collect();
    assert!(!track.is_empty());
    assert_eq!(track[0].int(13), 1, "SEQ_INCREMENTAL_STATE_CLEARED first");
    assert!(
        track[1..].iter().all(|p| p.int(13) == 2),
        "SEQ_NEEDS_INCREMENTAL_STATE after"
    );

    let mut names = std::collections::BTreeMap::new();
    let mut parent = None;
    for p in track.iter().filter(|p| p.has(60)) {
        let d = p.msg(60);
        if d.has(5) {
            assert_eq!(Some(d.int(5)), parent, "children of the fairsim track");
        } else {
            assert_eq!(d.str(2), "fairsim");
            parent = Some(d.int(1));
        }
        names.insert(d.int(1), d.str(2).to_string());
    }
    let mut got = Vec::new();
    let mut last_ts = 0;
    for p in track.iter().filter(|p| p.has(11)) {
        let ts = p.int(8);
        assert!(ts >= last_ts, "track events in time order");
        last_ts = ts;
        let te = p.msg(11);
        let name = if te.has(23) {
            te.str(23).to_string()
        } else {
            String::new()
        };
        got.push((ts - T0, te.int(9), names[&te.int(11)].clone(), name));
        if te.has(23) && te.str(23) == "newidle MC" {
            let ann: Vec<(String, String)> = te
                .all(4)
                .into_iter()
                .map(Msg::new)
                .map(|a| {
                    let v = if a.has(6) {
                        a.str(6).to_string()
                    } else {
                        a.int(3).to_string()
                    };
                    (a.str(10).to_string(), v)
                })
                .collect();
            let want = [
                ("domain", "MC"),
                ("groups", "2"),
                ("pulled", "1"),
                ("kind", "newidle"),
            ];
            assert_eq!(ann, want.map(|(a, b)| (a.to_string(), b.to_string())));
        }
    }
    let s = |x: &str| x.to_string();
    let want = vec![
        (30_000, 1, s("cpu 0 balancing"), s("newidle MC")),
        (30_500, 1, s("cpu 0 rq lock spins"), s("spin on rq 2")),
        (30_800, 2, s("cpu 0 rq lock spins"), s("")),
        (
            31_000,
            1,
            s("cpu 0 balancing (overlap 1)"),
            s("periodic PKG"),
        ),
        (34_000, 2, s("cpu 0 balancing"), s("")),
        (36_000, 2, s("cpu 0 balancing (overlap 1)"), s("")),
        (
            1_234_567_890_123 - T0,
            1,
            s("cpu 1 balancing"),
            s("nohz_idle SMT"),
        ),
        (1_234_567_890_123 - T0, 2, s("cpu 1 balancing"), s("")),
    ];
    assert_eq!(got, want);
}

#[test]
fn ftrace_text_matches_golden_lines() {
    let text = ftrace_text(&sample());
    let want = "\
# tracer: nop
#
# entries-in-buffer/entries-written: 19/19   #P:3
#
#                                _-----=> irqs-off/BH-disabled
#                               / _----=> need-resched
#                              | / _---=> hardirq/softirq
#                              || / _--=> preempt-depth
#                              ||| / _-=> migrate-disable
#                              |||| /     delay
#           TASK-PID     CPU#  |||||  TIMESTAMP  FUNCTION
#              | |         |   |||||     |         |
          worker-1       [000] .....     1.000000: sched_process_fork: comm=worker pid=1 child_comm=worker-t child_pid=2
          worker-1       [000] d..3.     1.000001: sched_wakeup_new: comm=worker-t pid=2 prio=125 target_cpu=001
          <idle>-0       [001] d..1.     1.000001: cpu_idle: state=4294967295 cpu_id=1
          <idle>-0       [001] d..2.     1.000002: sched_switch: prev_comm=swapper/1 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=worker-t next_pid=2 next_prio=125
          worker-1       [000] d..2.     1.000010: sched_waking: comm=hog pid=3 prio=110 target_cpu=002
          <idle>-0       [002] d..1.     1.000011: cpu_idle: state=4294967295 cpu_id=2
          <idle>-0       [002] d..3.     1.000011: sched_wakeup: comm=hog pid=3 prio=110 target_cpu=002
          <idle>-0       [002] d..2.     1.000012: sched_switch: prev_comm=swapper/2 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=hog next_pid=3 next_prio=110
        worker-t-2       [001] d..2.     1.000020: sched_switch: prev_comm=worker-t prev_pid=2 prev_prio=125 prev_state=S ==> next_comm=swapper/1 next_pid=0 next_prio=120
          <idle>-0       [001] d..1.     1.000020: cpu_idle: state=1 cpu_id=1
          worker-1       [000] .....     1.000030: fairsim_balance: kind=newidle domain=MC groups=2 pulled=1 dur_ns=4000
          worker-1       [000] .....     1.000031: fairsim_lock_spin: rq=2 dur_ns=300
          worker-1       [000] .....     1.000031: fairsim_balance: kind=periodic domain=PKG groups=3 pulled=0 dur_ns=5000
          worker-1       [000] d..2.     1.000032: sched_migrate_task: comm=worker-t pid=2 prio=125 orig_cpu=1 dest_cpu=2
             hog-3       [002] d..1.     1.000040: cpu_frequency: state=2400000 cpu_id=2
             hog-3       [002] .....     1.000050: sched_process_exit: comm=hog pid=3 prio=110
             hog-3       [002] d..2.     1.000050: sched_switch: prev_comm=hog prev_pid=3 prev_prio=110 prev_state=Z ==> next_comm=swapper/2 next_pid=0 next_prio=120
          worker-1       [000] d..2.     1.000060: sched_switch: prev_comm=worker prev_pid=1 prev_prio=120 prev_state=R ==> next_comm=swapper/0 next_pid=0 next_prio=120
          <idle>-0       [001] .....  1234.567890: fairsim_balance: kind=nohz_idle domain=SMT groups=2 pulled=0 dur_ns=0
";
    for (i, (g, w)) in text.lines().zip(want.lines()).enumerate() {
        assert_eq!(g, w, "line {}", i + 1);
    }
    assert_eq!(text, want);
}

#[test]
fn trace_writers_are_deterministic_and_compact() {
    let t = sample();
    assert_eq!(perfetto_bytes(&t), perfetto_bytes(&t.clone()));
    assert_eq!(ftrace_text(&t), ftrace_text(&t.clone()));

    // A typical mix on 4 CPUs: each wakeup is a waking, a wakeup, four switches and four
    // idle changes, with a migration or a newidle balance now and then.
    let big = busy_trace(4, 20_000);
    let a = perfetto_bytes(&big);
    assert_eq!(a, perfetto_bytes(&big));
    let n = big.records.len();
    let text = ftrace_text(&big);
    eprintln!(
        "typical mix: {n} records, perfetto {} bytes ({:.1} B/event), ftrace text {} bytes ({:.1} B/event)",
        a.len(),
        a.len() as f64 / n as f64,
        text.len(),
        text.len() as f64 / n as f64
    );
    assert!(
        a.len() < 80 * n,
        "perfetto stays compact: {} bytes for {n} events",
        a.len()
    );
    // Bundles never exceed BUNDLE_MAX events, full and compact together.
    let full = perfetto_full(&big);
    assert_eq!(full, perfetto_full(&big));
    for bytes in [&a, &full] {
        for p in Msg::new(bytes).all(1).into_iter().map(Msg::new) {
            if p.has(1) {
                let b = p.msg(1);
                let compact = if b.has(4) {
                    let c = b.msg(4);
                    packed(&c, 1).len() + packed(&c, 7).len()
                } else {
                    0
                };
                assert!(b.all(2).len() + compact <= BUNDLE_MAX);
            }
        }
    }
}
