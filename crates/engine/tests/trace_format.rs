//! The trace writers on a small hand-built trace: the Perfetto bytes decoded field by field
//! with a protobuf walker written here, the ftrace text against golden lines, determinism,
//! and the Python checker of validation/perfetto on the written files.

use std::path::PathBuf;
use std::process::Command;

use fairsim_engine::trace::perfetto::{write_perfetto_with, PerfettoOptions, BUNDLE_MAX};
use fairsim_engine::trace::{
    write_ftrace_text, write_perfetto, BalanceKind, PrevState, Record, TaskInfo, Trace, TraceEvent,
    CPU_IDLE_EXIT,
};

/// A decoded field value: a varint or a length-delimited payload.
#[derive(Debug, Clone, Copy)]
enum Val<'a> {
    Int(u64),
    Len(&'a [u8]),
}

impl<'a> Val<'a> {
    fn int(&self) -> u64 {
        let Val::Int(i) = self else {
            panic!("not a varint: {self:?}")
        };
        *i
    }
    fn len(&self) -> &'a [u8] {
        let Val::Len(b) = self else {
            panic!("not length-delimited: {self:?}")
        };
        b
    }
}

/// Reads a varint at `*pos`.
fn varint(buf: &[u8], pos: &mut usize) -> u64 {
    let mut v = 0u64;
    let mut shift = 0;
    loop {
        let b = buf[*pos];
        *pos += 1;
        v |= u64::from(b & 0x7f) << shift;
        if b < 0x80 {
            return v;
        }
        shift += 7;
        assert!(shift < 70, "varint too long");
    }
}

/// Every field of a message, in order; panics on a wire type the writer never uses.
fn decode(buf: &[u8]) -> Vec<(u32, Val<'_>)> {
    let mut pos = 0;
    let mut out = Vec::new();
    while pos < buf.len() {
        let key = varint(buf, &mut pos);
        let field = u32::try_from(key >> 3).unwrap();
        match key & 7 {
            0 => out.push((field, Val::Int(varint(buf, &mut pos)))),
            2 => {
                let len = usize::try_from(varint(buf, &mut pos)).unwrap();
                out.push((field, Val::Len(&buf[pos..pos + len])));
                pos += len;
            }
            w => panic!("wire type {w} of field {field}"),
        }
    }
    assert_eq!(pos, buf.len(), "message overruns its length");
    out
}

/// A decoded message with lookups by field number.
struct Msg<'a>(Vec<(u32, Val<'a>)>);

impl<'a> Msg<'a> {
    fn new(buf: &'a [u8]) -> Self {
        Msg(decode(buf))
    }
    fn has(&self, f: u32) -> bool {
        self.0.iter().any(|(n, _)| *n == f)
    }
    fn int(&self, f: u32) -> u64 {
        let v: Vec<u64> = self
            .0
            .iter()
            .filter(|(n, _)| *n == f)
            .map(|(_, v)| v.int())
            .collect();
        assert_eq!(v.len(), 1, "field {f} occurs {} times", v.len());
        v[0]
    }
    fn sint(&self, f: u32) -> i64 {
        self.int(f) as i64
    }
    fn all(&self, f: u32) -> Vec<&'a [u8]> {
        self.0
            .iter()
            .filter(|(n, _)| *n == f)
            .map(|(_, v)| v.len())
            .collect()
    }
    fn bytes(&self, f: u32) -> &'a [u8] {
        let v = self.all(f);
        assert_eq!(v.len(), 1, "field {f} occurs {} times", v.len());
        v[0]
    }
    fn str(&self, f: u32) -> &'a str {
        std::str::from_utf8(self.bytes(f)).unwrap()
    }
    fn msg(&self, f: u32) -> Msg<'a> {
        Msg::new(self.bytes(f))
    }
}

fn task(pid: u32, tgid: u32, ppid: u32, comm: &str, prio: i32) -> TaskInfo {
    TaskInfo {
        pid,
        tgid,
        ppid,
        comm: comm.to_string(),
        prio,
    }
}

fn rec(ts: u64, cpu: u32, event: TraceEvent) -> Record {
    Record { ts, cpu, event }
}

fn switch(prev: u32, prev_state: PrevState, next: u32) -> TraceEvent {
    TraceEvent::Switch {
        prev,
        prev_state,
        next,
    }
}
fn waking(pid: u32, target_cpu: u32) -> TraceEvent {
    TraceEvent::Waking { pid, target_cpu }
}
fn wakeup(pid: u32, target_cpu: u32) -> TraceEvent {
    TraceEvent::Wakeup { pid, target_cpu }
}
fn wake_new(pid: u32, target_cpu: u32) -> TraceEvent {
    TraceEvent::WakeupNew { pid, target_cpu }
}
fn migrate(pid: u32, orig_cpu: u32, dest_cpu: u32) -> TraceEvent {
    TraceEvent::Migrate {
        pid,
        orig_cpu,
        dest_cpu,
    }
}
fn fork(parent: u32, child: u32) -> TraceEvent {
    TraceEvent::Fork { parent, child }
}
fn exit(pid: u32) -> TraceEvent {
    TraceEvent::Exit { pid }
}
fn idle(state: u32) -> TraceEvent {
    TraceEvent::CpuIdle { state }
}
fn freq(khz: u32) -> TraceEvent {
    TraceEvent::CpuFrequency { khz }
}
fn balance(kind: BalanceKind, level: u32, groups: u32, pulled: u32, dur: u64) -> TraceEvent {
    TraceEvent::Balance {
        kind,
        level,
        groups,
        pulled,
        dur,
    }
}
fn spin(rq: u32, dur: u64) -> TraceEvent {
    TraceEvent::LockSpin { rq, dur }
}

const T0: u64 = 1_000_000_000;

/// Three CPUs, a process with two threads and another process, each event kind once or
/// more, a balance that overlaps another without nesting, and a lock spin.
fn sample() -> Trace {
    Trace {
        cpus: 3,
        window: (T0, 2 * T0),
        tasks: vec![
            task(1, 1, 0, "worker", 120),
            task(2, 1, 0, "worker-t", 125),
            task(3, 3, 1, "hog", 110),
        ],
        levels: vec!["SMT".into(), "MC".into(), "PKG".into()],
        initial: vec![1, 0, 0],
        records: vec![
            rec(T0, 0, fork(1, 2)),
            rec(T0 + 500, 0, wake_new(2, 1)),
            rec(T0 + 1_000, 1, idle(CPU_IDLE_EXIT)),
            rec(T0 + 2_000, 1, switch(0, PrevState::Running, 2)),
            rec(T0 + 10_000, 0, waking(3, 2)),
            rec(T0 + 11_000, 2, idle(CPU_IDLE_EXIT)),
            rec(T0 + 11_400, 2, wakeup(3, 2)),
            rec(T0 + 12_000, 2, switch(0, PrevState::Running, 3)),
            rec(T0 + 20_000, 1, switch(2, PrevState::Sleeping, 0)),
            rec(T0 + 20_100, 1, idle(1)),
            rec(
                T0 + 30_000,
                0,
                balance(BalanceKind::Newidle, 1, 2, 1, 4_000),
            ),
            rec(T0 + 30_500, 0, spin(2, 300)),
            rec(
                T0 + 31_000,
                0,
                balance(BalanceKind::Periodic, 2, 3, 0, 5_000),
            ),
            rec(T0 + 32_000, 0, migrate(2, 1, 2)),
            rec(T0 + 40_000, 2, freq(2_400_000)),
            rec(T0 + 50_000, 2, exit(3)),
            rec(T0 + 50_100, 2, switch(3, PrevState::Zombie, 0)),
            rec(T0 + 60_000, 0, switch(1, PrevState::Running, 0)),
            rec(
                1_234_567_890_123,
                1,
                balance(BalanceKind::NohzIdle, 0, 2, 0, 0),
            ),
        ],
    }
}

/// The default encoding (compact sched).
fn perfetto_bytes(t: &Trace) -> Vec<u8> {
    let mut out = Vec::new();
    write_perfetto(t, &mut out).unwrap();
    out
}

/// Every event a full `FtraceEvent`.
fn perfetto_full(t: &Trace) -> Vec<u8> {
    let mut out = Vec::new();
    write_perfetto_with(
        t,
        &mut out,
        PerfettoOptions {
            compact_sched: false,
        },
    )
    .unwrap();
    out
}

fn ftrace_text(t: &Trace) -> String {
    let mut out = Vec::new();
    write_ftrace_text(t, &mut out).unwrap();
    String::from_utf8(out).unwrap()
}

/// One decoded ftrace event: its bundle's CPU, and the event message.
struct Ev<'a> {
    cpu: u64,
    msg: Msg<'a>,
}

/// The varints of packed repeated field `f` (empty when absent).
fn packed(m: &Msg, f: u32) -> Vec<u64> {
    let mut out = Vec::new();
    for payload in m.all(f) {
        let mut pos = 0;
        while pos < payload.len() {
            out.push(varint(payload, &mut pos));
        }
    }
    out
}

/// A sched_switch or sched_waking with every field the full event carries.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Sched {
    Switch {
        prev_comm: String,
        prev_pid: u64,
        prev_prio: i64,
        prev_state: i64,
        next_comm: String,
        next_pid: u64,
        next_prio: i64,
    },
    Waking {
        comm: String,
        pid: u64,
        prio: i64,
        target_cpu: u64,
    },
}

/// One event of the sched stream: CPU, time, the event's `pid` (the task current on the
/// CPU), and the event.
type SchedEv = (u64, u64, u64, Sched);

/// Which encoding the events of a decoded stream came in.
#[derive(Debug, Default)]
struct StreamStats {
    full_switches: usize,
    full_wakings: usize,
    compact_switches: usize,
    compact_wakings: usize,
}

/// Every sched_switch and sched_waking of a trace in either encoding, as trace_processor
/// rebuilds them: a compact bundle's timestamps summed from 0 per kind, a compact switch's
/// prev task and a compact waking's waker from the previous switch on the CPU (kept across
/// bundles), full and compact events of a bundle merged by time (full events first at
/// equal times, then switches, then wakings).
fn sched_stream(bytes: &[u8]) -> (Vec<SchedEv>, StreamStats) {
    let mut running: std::collections::BTreeMap<u64, (u64, String, i64)> = Default::default();
    let mut out = Vec::new();
    let mut stats = StreamStats::default();
    for p in Msg::new(bytes).all(1).into_iter().map(Msg::new) {
        if !p.has(1) {
            continue;
        }
        let b = p.msg(1);
        let cpu = b.int(1);
        // (ts, rank, full event or compact (kind, index)).
        let mut merged: Vec<(u64, u8, Option<Msg>, usize)> = Vec::new();
        for e in b.all(2).into_iter().map(Msg::new) {
            if e.has(4) || e.has(20) {
                merged.push((e.int(1), 0, Some(e), 0));
            }
        }
        let c = if b.has(4) { b.msg(4) } else { Msg(Vec::new()) };
        let table: Vec<String> = c
            .all(5)
            .into_iter()
            .map(|s| String::from_utf8(s.to_vec()).unwrap())
            .collect();
        let sw: Vec<Vec<u64>> = [1, 2, 3, 4, 6].map(|f| packed(&c, f)).into();
        let wk: Vec<Vec<u64>> = [7, 8, 9, 10, 11].map(|f| packed(&c, f)).into();
        assert!(sw.iter().all(|a| a.len() == sw[0].len()), "switch arrays");
        assert!(wk.iter().all(|a| a.len() == wk[0].len()), "waking arrays");
        assert!(!c.has(12), "no waking_common_flags");
        for (rank, arrays) in [(1, &sw), (2, &wk)] {
            let mut ts = 0u64;
            for (i, d) in arrays[0].iter().enumerate() {
                ts += d;
                merged.push((ts, rank, None, i));
            }
        }
        merged.sort_by_key(|m| (m.0, m.1));
        for (ts, rank, full, i) in merged {
            let ev = match (rank, full) {
                (0, Some(e)) => {
                    let pid = e.int(2);
                    if e.has(4) {
                        stats.full_switches += 1;
                        let m = e.msg(4);
                        let s = Sched::Switch {
                            prev_comm: m.str(1).into(),
                            prev_pid: m.int(2),
                            prev_prio: m.sint(3),
                            prev_state: m.sint(4),
                            next_comm: m.str(5).into(),
                            next_pid: m.int(6),
                            next_prio: m.sint(7),
                        };
                        (cpu, ts, pid, s)
                    } else {
                        stats.full_wakings += 1;
                        let m = e.msg(20);
                        assert_eq!(m.int(4), 1, "success");
                        let s = Sched::Waking {
                            comm: m.str(1).into(),
                            pid: m.int(2),
                            prio: m.sint(3),
                            target_cpu: m.int(5),
                        };
                        (cpu, ts, pid, s)
                    }
                }
                (rank, _) => {
                    let (cur, cur_comm, cur_prio) =
                        running.get(&cpu).cloned().unwrap_or_else(|| {
                            panic!("compact event at {ts} before cpu {cpu}'s first switch")
                        });
                    let s = if rank == 1 {
                        stats.compact_switches += 1;
                        Sched::Switch {
                            prev_comm: cur_comm,
                            prev_pid: cur,
                            prev_prio: cur_prio,
                            prev_state: sw[1][i] as i64,
                            next_comm: table[sw[4][i] as usize].clone(),
                            next_pid: sw[2][i],
                            next_prio: sw[3][i] as i64,
                        }
                    } else {
                        stats.compact_wakings += 1;
                        Sched::Waking {
                            comm: table[wk[4][i] as usize].clone(),
                            pid: wk[1][i],
                            prio: wk[3][i] as i64,
                            target_cpu: wk[2][i],
                        }
                    };
                    (cpu, ts, cur, s)
                }
            };
            if let Sched::Switch {
                next_pid,
                next_comm,
                next_prio,
                ..
            } = &ev.3
            {
                running.insert(cpu, (*next_pid, next_comm.clone(), *next_prio));
            }
            out.push(ev);
        }
    }
    (out, stats)
}

/// Bytes of a length-delimited field with a `len`-byte payload, key and length included.
fn field_bytes(field: u32, len: usize) -> usize {
    let vlen = |v: u64| (64 - (v | 1).leading_zeros() as usize).div_ceil(7);
    vlen(u64::from(field) << 3 | 2) + vlen(len as u64) + len
}

/// Bytes the sched_switch and sched_waking events take in a trace: (switch bytes, waking
/// bytes, intern table bytes, compact_sched framing bytes). A full event counts with its
/// `event` key and length; a compact one by its share of its arrays.
fn sched_bytes(bytes: &[u8]) -> (usize, usize, usize, usize) {
    let (mut sw, mut wk, mut table, mut frame) = (0, 0, 0, 0);
    for p in Msg::new(bytes).all(1).into_iter().map(Msg::new) {
        if !p.has(1) {
            continue;
        }
        let b = p.msg(1);
        for e in b.all(2) {
            let m = Msg::new(e);
            if m.has(4) {
                sw += field_bytes(2, e.len());
            } else if m.has(20) {
                wk += field_bytes(2, e.len());
            }
        }
        for c in b.all(4) {
            frame += field_bytes(4, c.len()) - c.len();
            for (f, v) in Msg::new(c).0 {
                let n = field_bytes(f, v.len().len());
                match f {
                    1..=4 | 6 => sw += n,
                    5 => table += n,
                    _ => wk += n,
                }
            }
        }
    }
    (sw, wk, table, frame)
}

#[test]
fn compact_sched_decodes_to_the_full_stream_and_is_smaller() {
    for (name, t) in [("sample", sample()), ("busy", busy_trace(4, 20_000))] {
        let full = perfetto_full(&t);
        let compact = perfetto_bytes(&t);
        let (a, fs) = sched_stream(&full);
        let (b, cs) = sched_stream(&compact);
        assert_eq!(fs.compact_switches + fs.compact_wakings, 0);
        assert!(cs.compact_switches > 0, "{name}: some switches are compact");
        assert_eq!(a.len(), b.len(), "{name}");
        for (x, y) in a.iter().zip(&b) {
            assert_eq!(x, y, "{name}");
        }
        let n_switch = t
            .records
            .iter()
            .filter(|r| matches!(r.event, TraceEvent::Switch { .. }))
            .count();
        assert_eq!(fs.full_switches, n_switch);
        // Each CPU's first switch stays full, and the wakings before it.
        let cpus_switching = a
            .iter()
            .filter(|e| matches!(e.3, Sched::Switch { .. }))
            .map(|e| e.0)
            .collect::<std::collections::BTreeSet<_>>()
            .len();
        assert_eq!(cs.full_switches, cpus_switching, "{name}");
        assert!(
            compact.len() < full.len(),
            "{name}: compact {} >= full {}",
            compact.len(),
            full.len()
        );
        let (fsw, fwk, _, _) = sched_bytes(&full);
        let (csw, cwk, table, frame) = sched_bytes(&compact);
        let per = |b: usize, n: usize| b as f64 / n.max(1) as f64;
        let n_waking = fs.full_wakings;
        eprintln!(
            "{name}: full {} bytes, compact {} bytes (compact/full {:.3}); sched_switch {:.1} B \
             full vs {:.1} B compact, sched_waking {:.1} B full vs {:.1} B compact \
             ({n_switch} switches, {n_waking} wakings; compact bundles add {table} B of intern \
             tables and {frame} B of framing, {:.2} B per compact event)",
            full.len(),
            compact.len(),
            compact.len() as f64 / full.len() as f64,
            per(fsw, n_switch),
            per(csw, n_switch),
            per(fwk, n_waking),
            per(cwk, n_waking),
            per(table + frame, cs.compact_switches + cs.compact_wakings),
        );
    }
}

#[test]
fn compact_sched_keeps_events_that_tie_with_a_switch_full() {
    let t = Trace {
        cpus: 2,
        window: (T0, 2 * T0),
        tasks: vec![task(1, 1, 0, "a", 120), task(2, 2, 0, "b", 120)],
        levels: vec![],
        initial: vec![0, 0],
        records: vec![
            rec(T0, 0, waking(1, 0)),
            rec(T0 + 10, 0, switch(0, PrevState::Running, 1)),
            // Ties with cpu 0's first switch: full.
            rec(T0 + 10, 0, switch(1, PrevState::Preempted, 2)),
            // Ties with the switch after it: full.
            rec(T0 + 20, 0, waking(1, 1)),
            rec(T0 + 20, 0, switch(2, PrevState::Sleeping, 0)),
            // Ties with the switch before it: full.
            rec(T0 + 30, 0, switch(0, PrevState::Running, 2)),
            rec(T0 + 30, 0, waking(1, 1)),
            // Compact.
            rec(T0 + 40, 0, waking(1, 1)),
            rec(T0 + 50, 0, switch(2, PrevState::Sleeping, 0)),
        ],
    };
    let (mut a, fs) = sched_stream(&perfetto_full(&t));
    let (mut b, cs) = sched_stream(&perfetto_bytes(&t));
    // At one time a full waking and a compact switch may decode in either order (the
    // waking names its waker, so its content does not depend on it); each kind keeps
    // its order.
    let key = |e: &SchedEv| (e.0, e.1, matches!(e.3, Sched::Waking { .. }));
    a.sort_by_key(key);
    b.sort_by_key(key);
    assert_eq!(a, b);
    assert_eq!((fs.full_switches, fs.full_wakings), (5, 4));
    assert_eq!(
        (
            cs.full_switches,
            cs.full_wakings,
            cs.compact_switches,
            cs.compact_wakings
        ),
        (2, 3, 3, 1)
    );
}

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

/// `rounds` wakeup cycles spread over `cpus` CPUs with tasks 1..=2*cpus.
fn busy_trace(cpus: u32, rounds: u64) -> Trace {
    let ntasks = 2 * cpus;
    let tasks = (1..=ntasks)
        .map(|p| task(p, 1, 0, &format!("w{p}"), 120))
        .collect();
    let mut records = Vec::new();
    let mut ts = T0;
    for i in 0..rounds {
        // Every CPU is idle between rounds, so each CPU's switches chain up.
        let cpu = u32::try_from(i % u64::from(cpus)).unwrap();
        let waker = 1 + cpu;
        let wakee = 1 + cpus + cpu;
        let target = (cpu + 1) % cpus;
        ts += 700;
        records.push(rec(ts, cpu, idle(CPU_IDLE_EXIT)));
        records.push(rec(ts + 5, cpu, switch(0, PrevState::Running, waker)));
        records.push(rec(ts + 10, cpu, waking(wakee, target)));
        if i % 5 == 0 {
            records.push(rec(ts + 15, cpu, migrate(wakee, cpu, target)));
        }
        records.push(rec(ts + 20, cpu, switch(waker, PrevState::Sleeping, 0)));
        if i % 3 == 0 {
            records.push(rec(
                ts + 25,
                cpu,
                balance(BalanceKind::Newidle, 0, 2, 0, 15),
            ));
        }
        records.push(rec(ts + 30, cpu, idle(1)));
        records.push(rec(ts + 40, target, idle(CPU_IDLE_EXIT)));
        records.push(rec(ts + 50, target, wakeup(wakee, target)));
        records.push(rec(ts + 60, target, switch(0, PrevState::Running, wakee)));
        records.push(rec(ts + 600, target, switch(wakee, PrevState::Sleeping, 0)));
        records.push(rec(ts + 610, target, idle(1)));
    }
    records.sort_by_key(|r| r.ts);
    Trace {
        cpus,
        window: (T0, ts + 1_000),
        tasks,
        levels: vec!["MC".into()],
        initial: vec![0; cpus as usize],
        records,
    }
}

/// A scratch directory of this test process.
fn scratch() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("fairsim-trace-format-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A function that encodes a trace as Perfetto bytes.
type Writer = fn(&Trace) -> Vec<u8>;

fn python_has_perfetto() -> bool {
    Command::new("python3")
        .args([
            "-c",
            "import perfetto.protos.perfetto.trace.perfetto_trace_pb2",
        ])
        .output()
        .is_ok_and(|o| o.status.success())
}

#[test]
fn python_checker_accepts_the_trace_and_rejects_wrong_counts() {
    if !python_has_perfetto() {
        // CI installs the package and sets FAIRSIM_REQUIRE_PERFETTO, so that the decode
        // check cannot be skipped there.
        assert!(
            std::env::var_os("FAIRSIM_REQUIRE_PERFETTO").is_none(),
            "FAIRSIM_REQUIRE_PERFETTO is set but python3 cannot import perfetto_trace_pb2"
        );
        eprintln!("skipped: python3 with the PyPI 'perfetto' package is not available");
        return;
    }
    let script =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../validation/perfetto/check_trace.py");
    let dir = scratch();
    let cases = [("sample", sample()), ("busy", busy_trace(4, 3_000))];
    let encodings: [(&str, Writer); 2] = [("compact", perfetto_bytes), ("full", perfetto_full)];
    for ((trace_name, t), (form, write)) in cases
        .iter()
        .flat_map(|c| encodings.iter().map(move |e| (c, e)))
    {
        let name = format!("{trace_name}-{form}");
        let pf = dir.join(format!("{name}.perfetto-trace"));
        let txt = dir.join(format!("{name}.txt"));
        std::fs::write(&pf, write(t)).unwrap();
        std::fs::write(&txt, ftrace_text(t)).unwrap();
        let count = |f: fn(&TraceEvent) -> bool| t.records.iter().filter(|r| f(&r.event)).count();
        let switches = count(|e| matches!(e, TraceEvent::Switch { .. }));
        let wakings = count(|e| matches!(e, TraceEvent::Waking { .. }));
        let migrations = count(|e| matches!(e, TraceEvent::Migrate { .. }));
        let run = |switches: usize| {
            format!(
                "{{\"scheduler\": {{\"context_switches\": {switches}, \"migrations\": {migrations}, \
                 \"wakeups_local\": 0, \"wakeups_remote\": {wakings}}}}}"
            )
        };
        let json = dir.join(format!("{name}.json"));
        std::fs::write(&json, run(switches)).unwrap();
        let out = Command::new("python3")
            .arg(&script)
            .arg(&pf)
            .arg(&json)
            .arg("--text")
            .arg(&txt)
            .output()
            .unwrap();
        let said = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        eprintln!("{said}");
        assert!(out.status.success(), "checker failed on {name}: {said}");
        assert!(said.contains("check_trace: OK"), "{said}");

        // A run that counted one switch more than the trace holds must be refused.
        std::fs::write(&json, run(switches + 1)).unwrap();
        let out = Command::new("python3")
            .arg(&script)
            .arg(&pf)
            .arg(&json)
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(1),
            "checker accepted a wrong count on {name}"
        );
        assert!(String::from_utf8_lossy(&out.stderr).contains("context_switches"));
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
