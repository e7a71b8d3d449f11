//! CFS bandwidth control in the trace: a traced cpu.max run decides as the untraced one
//! does, and its trace holds each throttle, unthrottle and refill the scheduler counted,
//! as ftrace lines and as Perfetto tracks.

use crate::common;

use fairsim_balance::group::ROOT_GROUP;
use fairsim_output::{summary, to_json};
use fairsim_trace::{write_ftrace_text, write_perfetto, TraceConfig, TraceEvent};
use fairsim_workloads::run::{run, RunSpec};

use crate::trace_support;

use trace_support::Msg;

/// Four CPU hogs in a group held to half a CPU, beside one in a group without a limit,
/// on a 4-CPU machine for `ms` milliseconds.
fn cpu_max_spec(ms: u64) -> RunSpec {
    let mut s = common::spec(
        "dies-1s2d2c1t",
        &[
            "sysbench-cpu:threads=4,events=0,time=100s,cgroup=/lim",
            "sysbench-cpu:threads=1,events=0,time=100s,cgroup=/free",
        ],
        ms,
        7,
    );
    let options = ["/lim:cpu.max=50000 100000".to_string(), "/free".to_string()];
    s.config.cgroups =
        fairsim_workloads::cgroups::from_sources(&Default::default(), &options).unwrap();
    s.config.check_invariants = true;
    s
}

#[test]
fn a_traced_cpu_max_run_shows_each_throttle_unthrottle_and_refill() {
    let mut s = cpu_max_spec(1000);
    let plain = run(&s, &mut |_, _| {}).unwrap();
    // Without a tracer the scheduler keeps no log.
    assert!(!plain.outcome.sched().has_bandwidth_tracepoints());
    let plain_json = to_json(&s, &plain).to_string();
    let plain_text = summary(&s, &plain);
    s.config.trace = Some(TraceConfig::events());
    let mut r = run(&s, &mut |_, _| {}).unwrap();
    // The tracer only observes.
    assert_eq!(to_json(&s, &r).to_string(), plain_json);
    assert_eq!(summary(&s, &r), plain_text);
    let groups = r.outcome.sched().task_groups();
    let lim = groups.find("/lim").unwrap();
    let b = groups.tgs[lim].bw.clone();
    assert!(b.nr_throttled >= 8, "{b:?}");
    let trace = r.outcome.take_trace().unwrap();
    assert_eq!(trace.cgroups, ["/", "/lim", "/free"]);
    // Per runqueue, throttles and unthrottles alternate; the unthrottles add up to the
    // group's throttled time and the refills to its periods.
    let mut throttled = [false; 4];
    let (mut throttles, mut throttled_ns, mut periods, mut periods_throttled) = (0, 0, 0, 0);
    for rec in &trace.records {
        let cpu = rec.cpu as usize;
        match rec.event {
            TraceEvent::CfsThrottle {
                group,
                runtime_remaining,
                pool,
                ..
            } => {
                assert_eq!(group as usize, lim);
                assert!(!throttled[cpu], "{rec:?}");
                assert!(runtime_remaining <= 0 && pool == 0, "{rec:?}");
                throttled[cpu] = true;
                throttles += 1;
            }
            TraceEvent::CfsUnthrottle {
                group,
                throttled_ns: ns,
                ..
            } => {
                assert_eq!(group as usize, lim);
                assert!(throttled[cpu], "{rec:?}");
                throttled[cpu] = false;
                throttled_ns += ns;
            }
            TraceEvent::CfsRefill {
                group,
                runtime,
                periods: n,
                throttled,
            } => {
                assert_eq!(group as usize, lim);
                assert_eq!(runtime, 50_000_000);
                periods += n;
                periods_throttled += if throttled > 0 { n } else { 0 };
            }
            _ => {}
        }
    }
    assert!(throttles >= b.nr_throttled, "{throttles} {b:?}");
    assert_eq!(throttled_ns, b.throttled_time);
    assert_eq!((periods, periods_throttled), (b.nr_periods, b.nr_throttled));
    assert_ne!(lim, ROOT_GROUP);

    let mut text = Vec::new();
    write_ftrace_text(&trace, &mut text).unwrap();
    let text = String::from_utf8(text).unwrap();
    for needle in [
        ": fairsim_cfs_throttle: cgroup=/lim cpu=",
        ": fairsim_cfs_unthrottle: cgroup=/lim cpu=",
        ": fairsim_cfs_refill: cgroup=/lim runtime=50000000 periods=1 throttled=",
    ] {
        assert!(text.contains(needle), "no {needle:?} line");
    }
    assert!(!text.contains("cgroup=/free"));
    let mut pb = Vec::new();
    write_perfetto(&trace, &mut pb).unwrap();
    let has = |needle: &str| pb.windows(needle.len()).any(|w| w == needle.as_bytes());
    assert!(has("cgroup /lim cpu 0 throttled"));
    assert!(has("cgroup /lim pool"));
    assert!(!has("cgroup /free"));
}

/// The fairsim tracks of a Perfetto file by name, each with its parent's name, whether
/// it is a counter, and its events as (time, `TrackEvent.type`).
#[allow(clippy::type_complexity)]
fn tracks(pb: &[u8]) -> Vec<(String, String, bool, Vec<(u64, u64)>)> {
    let mut out: Vec<(u64, u64, String, bool, Vec<(u64, u64)>)> = Vec::new();
    for pkt in Msg::new(pb).all(1).into_iter().map(Msg::new) {
        if pkt.has(60) {
            let d = pkt.msg(60);
            let parent = if d.has(5) { d.int(5) } else { 0 };
            out.push((d.int(1), parent, d.str(2).to_string(), d.has(8), Vec::new()));
        }
        if pkt.has(11) {
            let te = pkt.msg(11);
            let t = out.iter_mut().find(|t| t.0 == te.int(11)).unwrap();
            t.4.push((pkt.int(8), te.int(9)));
        }
    }
    let name = |uuid: u64| {
        out.iter()
            .find(|t| t.0 == uuid)
            .map_or(String::new(), |t| t.2.clone())
    };
    out.iter()
        .map(|t| (t.2.clone(), name(t.1), t.3, t.4.clone()))
        .collect()
}

#[test]
fn a_group_s_tracks_sit_under_its_own_and_a_window_opened_mid_throttle_starts_its_slices() {
    let mut s = cpu_max_spec(400);
    // The window opens inside the third period's throttled stretch of every CPU.
    let start = 250_000_000;
    s.config.trace = Some(TraceConfig {
        window: Some((start, 350_000_000)),
        ..TraceConfig::events()
    });
    let mut r = run(&s, &mut |_, _| {}).unwrap();
    let trace = r.outcome.take_trace().unwrap();
    let mut pb = Vec::new();
    write_perfetto(&trace, &mut pb).unwrap();
    let tracks = tracks(&pb);
    let names: Vec<&str> = tracks.iter().map(|t| t.0.as_str()).take(7).collect();
    assert_eq!(
        names,
        [
            "fairsim",
            "cgroup /lim",
            "cgroup /lim pool",
            "cgroup /lim cpu 0 throttled",
            "cgroup /lim cpu 1 throttled",
            "cgroup /lim cpu 2 throttled",
            "cgroup /lim cpu 3 throttled",
        ]
    );
    // Each CPU's first throttle or unthrottle in the window: an unthrottle means the
    // runqueue was throttled when the window opened.
    let first = |cpu: u32| {
        trace.records.iter().find_map(|r| match r.event {
            TraceEvent::CfsThrottle { .. } if r.cpu == cpu => Some(r.ts),
            TraceEvent::CfsUnthrottle { .. } if r.cpu == cpu => Some(start),
            _ => None,
        })
    };
    let mut opened_at_start = 0;
    for (name, parent, counter, events) in &tracks[2..7] {
        assert_eq!(parent, "cgroup /lim", "{name}");
        assert_eq!(*counter, name.ends_with("pool"), "{name}");
        if *counter {
            assert!(events.iter().all(|e| e.1 == 4), "{name}: {events:?}");
            continue;
        }
        // TYPE_SLICE_BEGIN (1) first, then alternating ends (2) and begins.
        let cpu: u32 = name.split(' ').nth(3).unwrap().parse().unwrap();
        assert_eq!(
            Some(events[0]),
            first(cpu).map(|t| (t, 1)),
            "{name}: {events:?}"
        );
        opened_at_start += usize::from(events[0].0 == start);
        for (i, e) in events.iter().enumerate() {
            assert_eq!(e.1, if i % 2 == 0 { 1 } else { 2 }, "{name}: {events:?}");
        }
    }
    assert!(opened_at_start > 0, "no runqueue throttled at {start}");
    assert_eq!(tracks[1].1, "fairsim");
}
