//! Shared by the trace writer tests: a protobuf walker written here (no dependency),
//! builders of hand-made traces, and the sched stream as trace_processor rebuilds it.

#![allow(dead_code, unused_imports)]

pub(crate) use std::path::PathBuf;
pub(crate) use std::process::Command;

pub(crate) use fairsim_trace::perfetto::{write_perfetto_with, PerfettoOptions, BUNDLE_MAX};
pub(crate) use fairsim_trace::{
    write_ftrace_text, write_perfetto, BalanceKind, PrevState, Record, TaskInfo, Trace, TraceEvent,
    CPU_IDLE_EXIT,
};

/// A decoded field value: a varint or a length-delimited payload.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Val<'a> {
    Int(u64),
    Len(&'a [u8]),
}

impl<'a> Val<'a> {
    pub(crate) fn int(&self) -> u64 {
        let Val::Int(i) = self else {
            panic!("not a varint: {self:?}")
        };
        *i
    }
    pub(crate) fn len(&self) -> &'a [u8] {
        let Val::Len(b) = self else {
            panic!("not length-delimited: {self:?}")
        };
        b
    }
}

/// Reads a varint at `*pos`.
pub(crate) fn varint(buf: &[u8], pos: &mut usize) -> u64 {
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
pub(crate) fn decode(buf: &[u8]) -> Vec<(u32, Val<'_>)> {
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
pub(crate) struct Msg<'a>(pub Vec<(u32, Val<'a>)>);

impl<'a> Msg<'a> {
    pub(crate) fn new(buf: &'a [u8]) -> Self {
        Msg(decode(buf))
    }
    pub(crate) fn has(&self, f: u32) -> bool {
        self.0.iter().any(|(n, _)| *n == f)
    }
    pub(crate) fn int(&self, f: u32) -> u64 {
        let v: Vec<u64> = self
            .0
            .iter()
            .filter(|(n, _)| *n == f)
            .map(|(_, v)| v.int())
            .collect();
        assert_eq!(v.len(), 1, "field {f} occurs {} times", v.len());
        v[0]
    }
    pub(crate) fn sint(&self, f: u32) -> i64 {
        self.int(f) as i64
    }
    pub(crate) fn all(&self, f: u32) -> Vec<&'a [u8]> {
        self.0
            .iter()
            .filter(|(n, _)| *n == f)
            .map(|(_, v)| v.len())
            .collect()
    }
    pub(crate) fn bytes(&self, f: u32) -> &'a [u8] {
        let v = self.all(f);
        assert_eq!(v.len(), 1, "field {f} occurs {} times", v.len());
        v[0]
    }
    pub(crate) fn str(&self, f: u32) -> &'a str {
        std::str::from_utf8(self.bytes(f)).unwrap()
    }
    pub(crate) fn msg(&self, f: u32) -> Msg<'a> {
        Msg::new(self.bytes(f))
    }
}

pub(crate) fn task(pid: u32, tgid: u32, ppid: u32, comm: &str, prio: i32) -> TaskInfo {
    TaskInfo {
        pid,
        tgid,
        ppid,
        comm: comm.to_string(),
        prio,
    }
}

pub(crate) fn rec(ts: u64, cpu: u32, event: TraceEvent) -> Record {
    Record { ts, cpu, event }
}

pub(crate) fn switch(prev: u32, prev_state: PrevState, next: u32) -> TraceEvent {
    TraceEvent::Switch {
        prev,
        prev_state,
        next,
    }
}
pub(crate) fn waking(pid: u32, target_cpu: u32) -> TraceEvent {
    TraceEvent::Waking { pid, target_cpu }
}
pub(crate) fn wakeup(pid: u32, target_cpu: u32) -> TraceEvent {
    TraceEvent::Wakeup { pid, target_cpu }
}
pub(crate) fn wake_new(pid: u32, target_cpu: u32) -> TraceEvent {
    TraceEvent::WakeupNew { pid, target_cpu }
}
pub(crate) fn migrate(pid: u32, orig_cpu: u32, dest_cpu: u32) -> TraceEvent {
    TraceEvent::Migrate {
        pid,
        orig_cpu,
        dest_cpu,
    }
}
pub(crate) fn fork(parent: u32, child: u32) -> TraceEvent {
    TraceEvent::Fork { parent, child }
}
pub(crate) fn exit(pid: u32) -> TraceEvent {
    TraceEvent::Exit { pid }
}
pub(crate) fn idle(state: u32) -> TraceEvent {
    TraceEvent::CpuIdle { state }
}
pub(crate) fn freq(khz: u32) -> TraceEvent {
    TraceEvent::CpuFrequency { khz }
}
pub(crate) fn balance(
    kind: BalanceKind,
    level: u32,
    groups: u32,
    pulled: u32,
    dur: u64,
) -> TraceEvent {
    TraceEvent::Balance {
        kind,
        level,
        groups,
        pulled,
        dur,
    }
}
pub(crate) fn spin(rq: u32, dur: u64) -> TraceEvent {
    TraceEvent::LockSpin { rq, dur }
}

pub(crate) const T0: u64 = 1_000_000_000;

/// Three CPUs, a process with two threads and another process, each event kind once or
/// more, a balance that overlaps another without nesting, and a lock spin.
pub(crate) fn sample() -> Trace {
    Trace {
        cpus: 3,
        window: (T0, 2 * T0),
        tasks: vec![
            task(1, 1, 0, "worker", 120),
            task(2, 1, 0, "worker-t", 125),
            task(3, 3, 1, "hog", 110),
        ],
        levels: vec!["SMT".into(), "MC".into(), "PKG".into()],
        root_domains: vec![],
        cgroups: vec![],
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
pub(crate) fn perfetto_bytes(t: &Trace) -> Vec<u8> {
    let mut out = Vec::new();
    write_perfetto(t, &mut out).unwrap();
    out
}

/// Every event a full `FtraceEvent`.
pub(crate) fn perfetto_full(t: &Trace) -> Vec<u8> {
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

pub(crate) fn ftrace_text(t: &Trace) -> String {
    let mut out = Vec::new();
    write_ftrace_text(t, &mut out).unwrap();
    String::from_utf8(out).unwrap()
}

/// One decoded ftrace event: its bundle's CPU, and the event message.
pub(crate) struct Ev<'a> {
    pub cpu: u64,
    pub msg: Msg<'a>,
}

/// The varints of packed repeated field `f` (empty when absent).
pub(crate) fn packed(m: &Msg, f: u32) -> Vec<u64> {
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
pub(crate) enum Sched {
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
pub(crate) type SchedEv = (u64, u64, u64, Sched);

/// Which encoding the events of a decoded stream came in.
#[derive(Debug, Default)]
pub(crate) struct StreamStats {
    pub full_switches: usize,
    pub full_wakings: usize,
    pub compact_switches: usize,
    pub compact_wakings: usize,
}

/// Every sched_switch and sched_waking of a trace in either encoding, as trace_processor
/// rebuilds them: a compact bundle's timestamps summed from 0 per kind, a compact switch's
/// prev task and a compact waking's waker from the previous switch on the CPU (kept across
/// bundles), full and compact events of a bundle merged by time (full events first at
/// equal times, then switches, then wakings).
pub(crate) fn sched_stream(bytes: &[u8]) -> (Vec<SchedEv>, StreamStats) {
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
pub(crate) fn field_bytes(field: u32, len: usize) -> usize {
    let vlen = |v: u64| (64 - (v | 1).leading_zeros() as usize).div_ceil(7);
    vlen(u64::from(field) << 3 | 2) + vlen(len as u64) + len
}

/// Bytes the sched_switch and sched_waking events take in a trace: (switch bytes, waking
/// bytes, intern table bytes, compact_sched framing bytes). A full event counts with its
/// `event` key and length; a compact one by its share of its arrays.
pub(crate) fn sched_bytes(bytes: &[u8]) -> (usize, usize, usize, usize) {
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

/// `rounds` wakeup cycles spread over `cpus` CPUs with tasks 1..=2*cpus.
pub(crate) fn busy_trace(cpus: u32, rounds: u64) -> Trace {
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
        root_domains: vec![],
        cgroups: vec![],
        initial: vec![0; cpus as usize],
        records,
    }
}

/// A scratch directory of this test process.
pub(crate) fn scratch() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("fairsim-trace-format-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A function that encodes a trace as Perfetto bytes.
pub(crate) type Writer = fn(&Trace) -> Vec<u8>;

pub(crate) fn python_has_perfetto() -> bool {
    Command::new("python3")
        .args([
            "-c",
            "import perfetto.protos.perfetto.trace.perfetto_trace_pb2",
        ])
        .output()
        .is_ok_and(|o| o.status.success())
}
