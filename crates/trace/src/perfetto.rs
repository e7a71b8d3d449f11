//! A run's trace as a Perfetto protobuf trace (`perfetto.protos.Trace`), readable by
//! ui.perfetto.dev and trace_processor with their scheduler views.
//!
//! # Messages and field numbers
//!
//! Field numbers come from the official protos as the PyPI `perfetto` package (0.59.1)
//! ships them compiled (`perfetto.protos.perfetto.trace.perfetto_trace_pb2`), which are
//! generated from `protos/perfetto/trace/` of the Perfetto repository:
//!
//! - `Trace` (`trace.proto`): `packet` = 1.
//! - `TracePacket` (`trace_packet.proto`): `ftrace_events` = 1, `process_tree` = 2,
//!   `timestamp` = 8, `trusted_packet_sequence_id` = 10, `track_event` = 11,
//!   `sequence_flags` = 13, `track_descriptor` = 60; `SequenceFlags`
//!   `SEQ_INCREMENTAL_STATE_CLEARED` = 1, `SEQ_NEEDS_INCREMENTAL_STATE` = 2.
//! - `ProcessTree` (`ps/process_tree.proto`): `processes` = 1, `threads` = 2;
//!   `Process`: `pid` = 1, `ppid` = 2, `cmdline` = 3, `cmdline_is_comm` = 9;
//!   `Thread`: `tid` = 1, `name` = 2, `tgid` = 3.
//! - `FtraceEventBundle` (`ftrace/ftrace_event_bundle.proto`): `cpu` = 1, `event` = 2,
//!   `compact_sched` = 4.
//! - `FtraceEventBundle.CompactSched`, every array a packed repeated field:
//!   `switch_timestamp` 1 (uint64), `switch_prev_state` 2 (int64), `switch_next_pid` 3
//!   (int32), `switch_next_prio` 4 (int32), `intern_table` 5 (repeated string, not packed),
//!   `switch_next_comm_index` 6 (uint32), `waking_timestamp` 7 (uint64), `waking_pid` 8
//!   (int32), `waking_target_cpu` 9 (int32), `waking_prio` 10 (int32), `waking_comm_index`
//!   11 (uint32), `waking_common_flags` 12 (uint32).
//! - `FtraceEvent` (`ftrace/ftrace_event.proto`): `timestamp` = 1, `pid` = 2,
//!   `sched_switch` = 4, `cpu_frequency` = 11, `cpu_idle` = 13, `sched_wakeup` = 17,
//!   `sched_waking` = 20, `sched_wakeup_new` = 114, `sched_process_exit` = 238,
//!   `sched_process_fork` = 239, `sched_migrate_task` = 491.
//! - `SchedSwitchFtraceEvent` (`ftrace/sched.proto`): `prev_comm` 1, `prev_pid` 2,
//!   `prev_prio` 3, `prev_state` 4 (int64), `next_comm` 5, `next_pid` 6, `next_prio` 7.
//! - `SchedWaking`/`SchedWakeup`/`SchedWakeupNewFtraceEvent`: `comm` 1, `pid` 2, `prio` 3,
//!   `success` 4, `target_cpu` 5.
//! - `SchedMigrateTaskFtraceEvent`: `comm` 1, `pid` 2, `prio` 3, `orig_cpu` 4,
//!   `dest_cpu` 5.
//! - `SchedProcessForkFtraceEvent`: `parent_comm` 1, `parent_pid` 2, `child_comm` 3,
//!   `child_pid` 4. `SchedProcessExitFtraceEvent`: `comm` 1, `pid` 2, `tgid` 3, `prio` 4.
//! - `CpuIdleFtraceEvent`, `CpuFrequencyFtraceEvent` (`ftrace/power.proto`): `state` 1,
//!   `cpu_id` 2.
//! - `TrackDescriptor` (`track_event/track_descriptor.proto`): `uuid` 1, `name` 2,
//!   `parent_uuid` 5, `counter` 8, `child_ordering` 11 (`EXPLICIT` = 3),
//!   `sibling_order_rank` 12. `CounterDescriptor` (`counter_descriptor.proto`): `unit` 3
//!   (`UNIT_TIME_NS` = 1).
//! - `TrackEvent` (`track_event/track_event.proto`): `debug_annotations` 4, `type` 9
//!   (`TYPE_SLICE_BEGIN` = 1, `TYPE_SLICE_END` = 2, `TYPE_COUNTER` = 4), `track_uuid` 11,
//!   `name` 23, `counter_value` 30 (int64).
//! - `DebugAnnotation` (`track_event/debug_annotation.proto`): `uint_value` 3,
//!   `int_value` 4, `string_value` 6, `name` 10.
//!
//! # Layout of the stream
//!
//! Two packet sequences. Sequence 1 holds the `process_tree` packet first (every task of
//! [`Trace::tasks`] as a thread, and the thread group leaders as processes with
//! `cmdline = [comm]`), then the ftrace bundles. Sequence 2 holds fairsim's own events as
//! track events: the first packet (the parent track "fairsim") carries
//! `SEQ_INCREMENTAL_STATE_CLEARED`, every later one `SEQ_NEEDS_INCREMENTAL_STATE`, since
//! trace_processor drops track events of a sequence whose state was never cleared. The
//! sequence is absent when the trace has none of fairsim's own records.
//!
//! The records are cut into chunks in their time order; a chunk ends when one CPU has
//! [`BUNDLE_MAX`] events in it or the chunk has [`CHUNK_MAX`]. Each chunk becomes one
//! bundle per CPU that has events in it (in CPU order), followed by the track events whose
//! time falls up to the chunk's last record. So the file is in time order chunk by chunk,
//! which keeps trace_processor's sorting window small.
//!
//! # Compact sched encoding
//!
//! By default (see [`PerfettoOptions`]) `sched_switch` and `sched_waking`, most of a
//! trace's events, go into their bundle's `compact_sched` as Perfetto's own tracing
//! service writes them; every other event stays a full `FtraceEvent` in the same bundle.
//! The rules, as trace_processor reads them back (`FtraceTokenizer::
//! TokenizeFtraceCompactSchedSwitch`/`...Waking` in
//! src/trace_processor/importers/ftrace/ftrace_tokenizer.cc, and
//! `FtraceSchedEventTracker::PushSchedSwitchCompact`/`PushSchedWakingCompact` in
//! ftrace_sched_event_tracker.cc; the writer's side in
//! src/traced/probes/ftrace/compact_sched.h, whose comment reads "First timestamp in a
//! bundle is absolute. The rest are all delta-encoded, each relative to the preceding
//! sched_switch timestamp"):
//!
//! - One event is one index into the parallel arrays of its kind; the switch arrays and
//!   the waking arrays have one length each (`waking_common_flags` may be absent, and is:
//!   the full events carry no `common_flags` either).
//! - Timestamps are deltas: the tokenizer starts an accumulator at 0 for each bundle and
//!   each kind, so a bundle's first switch (and first waking) carries its absolute time
//!   and each later one the time since the previous event of the same kind in that
//!   bundle. The accumulator is signed 64-bit, the field `uint64`.
//! - `intern_table` holds the bundle's comms; `switch_next_comm_index` and
//!   `waking_comm_index` index it. This writer interns in order of first use.
//! - `switch_prev_state` is the tracepoint's `prev_state` value, as the full event's field
//!   4 carries it (trace_processor decodes both with `TaskState::FromRawPrevState`).
//! - A compact switch has no `prev_*`: trace_processor takes `prev_pid`, `prev_prio` and
//!   the prev thread from the previous switch on the same CPU, kept per CPU across bundles
//!   (so a bundle's first switch continues from the last switch of the CPU's previous
//!   bundle), and `prev_comm` from that thread's current name. The first compact switch
//!   of a CPU with no switch before it only seeds that state: no sched slice starts
//!   (stat `compact_sched_switch_skipped`).
//! - A compact waking has no `pid` of the waker: trace_processor takes the task of the
//!   previous switch on the CPU, and drops the waking when the CPU has had none
//!   (`compact_sched_waking_skipped`).
//!
//! So that nothing is lost to those last two rules, a CPU's first `sched_switch` of the
//! trace, and every `sched_waking` on a CPU before it, stay full events: they carry what
//! no earlier switch could tell. The full events and the compact ones of a CPU interleave
//! by time; trace_processor sorts them all by timestamp. Its order for equal timestamps
//! is not something this writer relies on: a waking at the same time as a switch on its
//! CPU, and a switch at the same time as its CPU's first switch, stay full events too.
//!
//! The sched_tp load-tracking events of `--trace-events pelt` (`sched_pelt_cfs`,
//! `sched_pelt_se`, `sched_util_est_*`, `sched_cpu_capacity`) are left out of this
//! file: Perfetto's `FtraceEvent` has no message for those module events, and as
//! counters they would need one track per task and signal, a plan of their own that no
//! reader has asked for yet; the ftrace text, the trace-cmd layouts and the trace.dat
//! carry them.
//!
//! # fairsim's tracks
//!
//! `trace/tracks.rs` plans them: each root domain's overutilized stretches, each task
//! group's pool counter and its runqueues' throttled stretches under a parent track of
//! the group's, and each CPU's balances, lock spins and EAS placements, every track a
//! child of the "fairsim" track (or of its group's) in that order. A counter track's
//! descriptor carries a `CounterDescriptor` in nanoseconds, and its values are
//! `TYPE_COUNTER` events; a parent with children orders them explicitly, by rank.

use std::collections::BTreeMap;
use std::io::{self, BufWriter, Write};

use super::current::{cpu_slots, CurrentTasks};
use super::proto::{put_varint, ProtoBuf};
use super::record::{Record, Trace, TraceEvent};
use super::tracks::{PlanEvent, TrackPlan, What};

/// Most events in one `FtraceEventBundle`.
pub const BUNDLE_MAX: usize = 1000;
/// Most ftrace events in one chunk of bundles (all CPUs together).
pub const CHUNK_MAX: usize = 8192;
/// `trusted_packet_sequence_id` of the process tree and the ftrace bundles.
pub const FTRACE_SEQUENCE: u32 = 1;
/// `trusted_packet_sequence_id` of fairsim's track events.
pub const TRACK_SEQUENCE: u32 = 2;
/// The uuid of the "fairsim" parent track ("fairsim" in ASCII); its children follow it.
pub const FAIRSIM_TRACK_UUID: u64 = 0x0066_6169_7273_696d;

const SEQ_INCREMENTAL_STATE_CLEARED: u64 = 1;
const SEQ_NEEDS_INCREMENTAL_STATE: u64 = 2;
const TYPE_SLICE_BEGIN: u64 = 1;
const TYPE_SLICE_END: u64 = 2;
const TYPE_COUNTER: u64 = 4;
const UNIT_TIME_NS: u64 = 1;
const CHILD_ORDERING_EXPLICIT: u64 = 3;

/// How [`write_perfetto_with`] encodes a trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PerfettoOptions {
    /// Write `sched_switch` and `sched_waking` in the bundles' `compact_sched` (the
    /// default; see the module doc), or every event as a full `FtraceEvent`.
    pub compact_sched: bool,
}

impl Default for PerfettoOptions {
    fn default() -> Self {
        Self {
            compact_sched: true,
        }
    }
}

/// Writes `trace` as a Perfetto `Trace` protobuf to `out` with the default options
/// (compact sched encoding; see the module doc for the layout). The same trace always
/// gives the same bytes.
pub fn write_perfetto(trace: &Trace, out: &mut dyn Write) -> io::Result<()> {
    write_perfetto_with(trace, out, PerfettoOptions::default())
}

/// Writes `trace` as a Perfetto `Trace` protobuf to `out`, encoded as `opts` says. The
/// same trace and options always give the same bytes.
pub fn write_perfetto_with(
    trace: &Trace,
    out: &mut dyn Write,
    opts: PerfettoOptions,
) -> io::Result<()> {
    let mut w = PacketWriter {
        out: BufWriter::new(out),
        pkt: ProtoBuf::new(),
        track_packets: 0,
    };
    w.process_tree(trace)?;
    let plan = TrackPlan::new(trace);
    w.track_descriptors(trace, &plan)?;

    let slots = cpu_slots(trace);
    let mut cur = CurrentTasks::new(trace);
    let mut bundles: Vec<Vec<Pending>> = vec![Vec::new(); slots];
    // The time of each CPU's first sched_switch and of its latest one: only after a first
    // switch can trace_processor rebuild what a compact switch or waking leaves out.
    let mut first_switch: Vec<Option<u64>> = vec![None; slots];
    let mut last_switch: Vec<Option<u64>> = vec![None; slots];
    let mut pending = 0usize;
    let mut next_slice = 0usize;
    for (i, rec) in trace.records.iter().enumerate() {
        let pid = cur.observe(rec);
        if is_fairsim(&rec.event) || rec.event.is_load_tracking() {
            continue;
        }
        let cpu = rec.cpu as usize;
        // Events of one CPU at one time reach trace_processor's sorter from two places
        // (the full events and the compact arrays); whatever order it gives them, an event
        // that ties with a switch it depends on is written in full, so that nothing is
        // rebuilt from the wrong switch.
        let compact = opts.compact_sched
            && match rec.event {
                TraceEvent::Switch { .. } => {
                    let first = *first_switch[cpu].get_or_insert(rec.ts);
                    last_switch[cpu] = Some(rec.ts);
                    first != rec.ts
                }
                TraceEvent::Waking { .. } => {
                    first_switch[cpu].is_some()
                        && last_switch[cpu] != Some(rec.ts)
                        && !switch_at(trace, i, rec.cpu)
                }
                _ => false,
            };
        let bundle = &mut bundles[cpu];
        bundle.push(Pending { rec, pid, compact });
        pending += 1;
        if bundle.len() >= BUNDLE_MAX || pending >= CHUNK_MAX {
            w.bundles(trace, &mut bundles)?;
            pending = 0;
            next_slice = w.slices(trace, &plan, next_slice, rec.ts)?;
        }
    }
    w.bundles(trace, &mut bundles)?;
    w.slices(trace, &plan, next_slice, u64::MAX)?;
    w.out.flush()
}

/// An ftrace event waiting for its bundle: the record, the task current on its CPU when
/// it was logged, and whether it goes into `compact_sched`.
#[derive(Debug, Clone, Copy)]
struct Pending<'a> {
    rec: &'a Record,
    pid: u32,
    compact: bool,
}

/// Whether a sched_switch on `cpu` follows record `i` at the same time (records are in
/// time order, so only the run of equal times after it is read).
fn switch_at(trace: &Trace, i: usize, cpu: u32) -> bool {
    let ts = trace.records[i].ts;
    trace.records[i + 1..]
        .iter()
        .take_while(|r| r.ts == ts)
        .any(|r| r.cpu == cpu && matches!(r.event, TraceEvent::Switch { .. }))
}

/// Whether the event is fairsim's own (a track event, not an ftrace event).
fn is_fairsim(e: &TraceEvent) -> bool {
    matches!(
        e,
        TraceEvent::Balance { .. }
            | TraceEvent::LockSpin { .. }
            | TraceEvent::Overutilized { .. }
            | TraceEvent::Feec { .. }
            | TraceEvent::CfsThrottle { .. }
            | TraceEvent::CfsUnthrottle { .. }
            | TraceEvent::CfsRefill { .. }
    )
}

/// Frames packets as `Trace.packet` fields onto the output.
struct PacketWriter<'a> {
    out: BufWriter<&'a mut dyn Write>,
    pkt: ProtoBuf,
    track_packets: u64,
}

impl PacketWriter<'_> {
    /// Writes the packet built in `self.pkt` and clears it.
    fn emit(&mut self) -> io::Result<()> {
        let mut head = Vec::with_capacity(11);
        put_varint(&mut head, (1 << 3) | 2);
        put_varint(&mut head, self.pkt.len() as u64);
        self.out.write_all(&head)?;
        self.out.write_all(self.pkt.bytes())?;
        self.pkt.clear();
        Ok(())
    }

    /// Starts a packet of the track event sequence with its sequence fields.
    fn track_packet_head(&mut self) {
        self.pkt.uint(10, u64::from(TRACK_SEQUENCE));
        let flags = if self.track_packets == 0 {
            SEQ_INCREMENTAL_STATE_CLEARED
        } else {
            SEQ_NEEDS_INCREMENTAL_STATE
        };
        self.pkt.uint(13, flags);
        self.track_packets += 1;
    }

    /// The `process_tree` packet: every task as a thread, leaders (and the leader of a
    /// group whose leader is not in the trace, from its first thread) as processes.
    fn process_tree(&mut self, trace: &Trace) -> io::Result<()> {
        self.pkt.uint(8, trace.window.0);
        self.pkt.uint(10, u64::from(FTRACE_SEQUENCE));
        self.pkt.message(2, |tree| {
            let mut seen_tgids: Vec<u32> = Vec::new();
            for t in &trace.tasks {
                let leader = trace.task(t.tgid).unwrap_or(t);
                if seen_tgids.binary_search(&t.tgid).is_ok() {
                    continue;
                }
                let at = seen_tgids.partition_point(|&g| g < t.tgid);
                seen_tgids.insert(at, t.tgid);
                tree.message(1, |p| {
                    p.int(1, i64::from(t.tgid));
                    p.int(2, i64::from(leader.ppid));
                    p.string(3, &leader.comm);
                    p.boolean(9, true);
                });
            }
            for t in &trace.tasks {
                tree.message(2, |th| {
                    th.int(1, i64::from(t.pid));
                    th.string(2, &t.comm);
                    th.int(3, i64::from(t.tgid));
                });
            }
        });
        self.emit()
    }

    /// The "fairsim" parent track and the planned tracks under it.
    fn track_descriptors(&mut self, trace: &Trace, plan: &TrackPlan) -> io::Result<()> {
        if plan.tracks.is_empty() {
            return Ok(());
        }
        self.track_packet_head();
        self.pkt.message(60, |d| {
            d.uint(1, FAIRSIM_TRACK_UUID);
            d.string(2, "fairsim");
            d.uint(11, CHILD_ORDERING_EXPLICIT);
        });
        self.emit()?;
        for (i, t) in plan.tracks.iter().enumerate() {
            self.track_packet_head();
            self.pkt.message(60, |d| {
                d.uint(1, track_uuid(i));
                d.string(2, &t.name(trace));
                d.uint(5, t.parent.map_or(FAIRSIM_TRACK_UUID, track_uuid));
                if t.is_counter() {
                    d.message(8, |c| c.uint(3, UNIT_TIME_NS));
                }
                if plan.tracks.iter().any(|c| c.parent == Some(i)) {
                    d.uint(11, CHILD_ORDERING_EXPLICIT);
                }
                d.int(12, i as i64);
            });
            self.emit()?;
        }
        Ok(())
    }

    /// One bundle per CPU with pending events, in CPU order; empties them.
    fn bundles(&mut self, trace: &Trace, bundles: &mut [Vec<Pending>]) -> io::Result<()> {
        for (cpu, events) in bundles.iter_mut().enumerate() {
            if events.is_empty() {
                continue;
            }
            self.pkt.uint(10, u64::from(FTRACE_SEQUENCE));
            self.pkt.message(1, |b| {
                b.uint(1, cpu as u64);
                let mut compact = CompactSched::default();
                for ev in events.iter() {
                    if ev.compact {
                        compact.push(trace, ev.rec);
                    } else {
                        b.message(2, |e| ftrace_event(e, trace, ev.rec, ev.pid));
                    }
                }
                if !compact.is_empty() {
                    b.message(4, |c| compact.encode(c));
                }
            });
            self.emit()?;
            events.clear();
        }
        Ok(())
    }

    /// The planned slice events from index `from` whose time is at most `until`; returns
    /// the index of the first one left.
    fn slices(
        &mut self,
        trace: &Trace,
        plan: &TrackPlan,
        from: usize,
        until: u64,
    ) -> io::Result<usize> {
        let mut i = from;
        while let Some(ev) = plan.events.get(i).filter(|e| e.ts <= until) {
            self.track_packet_head();
            self.pkt.uint(8, ev.ts);
            self.pkt.message(11, |te| track_event(te, trace, ev));
            self.emit()?;
            i += 1;
        }
        Ok(i)
    }
}

/// One bundle's `FtraceEventBundle.CompactSched` being filled: the intern table and the
/// parallel arrays, values already as their varints carry them (see the module doc).
#[derive(Debug, Default)]
struct CompactSched {
    comms: Vec<String>,
    comm_index: BTreeMap<String, u64>,
    switch_ts: Vec<u64>,
    switch_prev_state: Vec<u64>,
    switch_next_pid: Vec<u64>,
    switch_next_prio: Vec<u64>,
    switch_next_comm: Vec<u64>,
    last_switch_ts: u64,
    waking_ts: Vec<u64>,
    waking_pid: Vec<u64>,
    waking_target_cpu: Vec<u64>,
    waking_prio: Vec<u64>,
    waking_comm: Vec<u64>,
    last_waking_ts: u64,
}

impl CompactSched {
    /// Whether no event was pushed.
    fn is_empty(&self) -> bool {
        self.switch_ts.is_empty() && self.waking_ts.is_empty()
    }

    /// The index of `comm` in the intern table, adding it on first use.
    fn intern(&mut self, comm: String) -> u64 {
        if let Some(&i) = self.comm_index.get(&comm) {
            return i;
        }
        let i = self.comms.len() as u64;
        self.comms.push(comm.clone());
        self.comm_index.insert(comm, i);
        i
    }

    /// Appends a switch or waking record (others are not compact and are ignored).
    fn push(&mut self, trace: &Trace, rec: &Record) {
        let cpu = rec.cpu;
        // A CPU's records are in time order, so deltas never go below zero; were one to,
        // its wrapped value would still read back right through trace_processor's signed
        // accumulator.
        match rec.event {
            TraceEvent::Switch {
                prev_state, next, ..
            } => {
                self.switch_ts
                    .push(rec.ts.wrapping_sub(self.last_switch_ts));
                self.last_switch_ts = rec.ts;
                // int64 and int32 fields carry negative values as two's complement.
                self.switch_prev_state.push(prev_state.bits() as u64);
                self.switch_next_pid.push(u64::from(next));
                self.switch_next_prio
                    .push(i64::from(trace.prio(next)) as u64);
                let comm = self.intern(trace.comm(next, cpu));
                self.switch_next_comm.push(comm);
            }
            TraceEvent::Waking { pid, target_cpu } => {
                self.waking_ts
                    .push(rec.ts.wrapping_sub(self.last_waking_ts));
                self.last_waking_ts = rec.ts;
                self.waking_pid.push(u64::from(pid));
                self.waking_target_cpu.push(u64::from(target_cpu));
                self.waking_prio.push(i64::from(trace.prio(pid)) as u64);
                let comm = self.intern(trace.comm(pid, cpu));
                self.waking_comm.push(comm);
            }
            _ => {}
        }
    }

    /// Encodes the message body, fields in number order.
    fn encode(&self, c: &mut ProtoBuf) {
        c.packed_varints(1, &self.switch_ts);
        c.packed_varints(2, &self.switch_prev_state);
        c.packed_varints(3, &self.switch_next_pid);
        c.packed_varints(4, &self.switch_next_prio);
        for comm in &self.comms {
            c.string(5, comm);
        }
        c.packed_varints(6, &self.switch_next_comm);
        c.packed_varints(7, &self.waking_ts);
        c.packed_varints(8, &self.waking_pid);
        c.packed_varints(9, &self.waking_target_cpu);
        c.packed_varints(10, &self.waking_prio);
        c.packed_varints(11, &self.waking_comm);
    }
}

/// Encodes one `FtraceEvent` of a scheduler or power record, logged while `pid` was
/// current on the record's CPU.
fn ftrace_event(e: &mut ProtoBuf, trace: &Trace, rec: &Record, pid: u32) {
    let cpu = rec.cpu;
    e.uint(1, rec.ts);
    e.uint(2, u64::from(pid));
    let task = |m: &mut ProtoBuf, pid: u32| {
        m.string(1, &trace.comm(pid, cpu));
        m.int(2, i64::from(pid));
        m.int(3, i64::from(trace.prio(pid)));
    };
    let wake = |e: &mut ProtoBuf, field: u32, pid: u32, target: u32| {
        e.message(field, |m| {
            task(m, pid);
            m.int(4, 1);
            m.int(5, i64::from(target));
        });
    };
    match rec.event {
        TraceEvent::Switch {
            prev,
            prev_state,
            next,
        } => e.message(4, |m| {
            m.string(1, &trace.comm(prev, cpu));
            m.int(2, i64::from(prev));
            m.int(3, i64::from(trace.prio(prev)));
            m.int(4, prev_state.bits());
            m.string(5, &trace.comm(next, cpu));
            m.int(6, i64::from(next));
            m.int(7, i64::from(trace.prio(next)));
        }),
        TraceEvent::Waking { pid, target_cpu } => wake(e, 20, pid, target_cpu),
        TraceEvent::Wakeup { pid, target_cpu } => wake(e, 17, pid, target_cpu),
        TraceEvent::WakeupNew { pid, target_cpu } => wake(e, 114, pid, target_cpu),
        TraceEvent::Migrate {
            pid,
            orig_cpu,
            dest_cpu,
        } => e.message(491, |m| {
            task(m, pid);
            m.int(4, i64::from(orig_cpu));
            m.int(5, i64::from(dest_cpu));
        }),
        TraceEvent::Fork { parent, child } => e.message(239, |m| {
            m.string(1, &trace.comm(parent, cpu));
            m.int(2, i64::from(parent));
            m.string(3, &trace.comm(child, cpu));
            m.int(4, i64::from(child));
        }),
        TraceEvent::Exit { pid } => e.message(238, |m| {
            m.string(1, &trace.comm(pid, cpu));
            m.int(2, i64::from(pid));
            m.int(3, i64::from(trace.task(pid).map_or(pid, |t| t.tgid)));
            m.int(4, i64::from(trace.prio(pid)));
        }),
        TraceEvent::CpuIdle { state } => e.message(13, |m| {
            m.uint(1, u64::from(state));
            m.uint(2, u64::from(cpu));
        }),
        TraceEvent::CpuFrequency { khz } => e.message(11, |m| {
            m.uint(1, u64::from(khz));
            m.uint(2, u64::from(cpu));
        }),
        // Filtered out by the caller: fairsim's own events are track events.
        TraceEvent::Balance { .. }
        | TraceEvent::LockSpin { .. }
        | TraceEvent::Overutilized { .. }
        | TraceEvent::Feec { .. }
        | TraceEvent::CfsThrottle { .. }
        | TraceEvent::CfsUnthrottle { .. }
        | TraceEvent::CfsRefill { .. }
        | TraceEvent::PeltCfs { .. }
        | TraceEvent::PeltSe { .. }
        | TraceEvent::UtilEstCfs { .. }
        | TraceEvent::UtilEstSe { .. }
        | TraceEvent::CpuCapacity { .. } => {}
    }
}

/// Encodes the `TrackEvent` of a planned slice begin or end, or counter value.
fn track_event(te: &mut ProtoBuf, trace: &Trace, ev: &PlanEvent) {
    let (rec, closed_by) = match ev.what {
        What::End => {
            te.uint(9, TYPE_SLICE_END);
            te.uint(11, track_uuid(ev.track));
            return;
        }
        What::Counter(i) => {
            te.uint(9, TYPE_COUNTER);
            te.uint(11, track_uuid(ev.track));
            te.int(30, pool_value(&trace.records[i].event) as i64);
            return;
        }
        What::Begin { rec, closed_by } => (
            &trace.records[rec],
            closed_by.map(|i| &trace.records[i].event),
        ),
    };
    te.uint(9, TYPE_SLICE_BEGIN);
    te.uint(11, track_uuid(ev.track));
    let annotate_str = |te: &mut ProtoBuf, name: &str, v: &str| {
        te.message(4, |a| {
            a.string(10, name);
            a.string(6, v);
        });
    };
    let annotate_uint = |te: &mut ProtoBuf, name: &str, v: u64| {
        te.message(4, |a| {
            a.string(10, name);
            a.uint(3, v);
        });
    };
    let annotate_int = |te: &mut ProtoBuf, name: &str, v: i64| {
        te.message(4, |a| {
            a.string(10, name);
            a.int(4, v);
        });
    };
    match rec.event {
        TraceEvent::Balance {
            kind,
            level,
            groups,
            pulled,
            ..
        } => {
            let domain = level_name(trace, level);
            te.string(23, &format!("{} {}", kind.name(), domain));
            annotate_str(te, "domain", &domain);
            annotate_uint(te, "groups", u64::from(groups));
            annotate_uint(te, "pulled", u64::from(pulled));
            annotate_str(te, "kind", kind.name());
        }
        TraceEvent::LockSpin { rq, .. } => {
            te.string(23, &format!("spin on rq {rq}"));
            annotate_uint(te, "rq", u64::from(rq));
        }
        TraceEvent::Overutilized { rd, .. } => {
            te.string(23, "overutilized");
            let span = trace.root_domain_span(rd);
            annotate_str(te, "span", &format!("0x{span}"));
        }
        TraceEvent::Feec {
            pid,
            prev_cpu,
            dst_cpu,
        } => {
            let name = match dst_cpu {
                -1 => format!("feec {} pid {pid}: no choice", trace.comm(pid, rec.cpu)),
                d => format!("feec {} pid {pid} -> cpu {d}", trace.comm(pid, rec.cpu)),
            };
            te.string(23, &name);
            annotate_uint(te, "pid", u64::from(pid));
            annotate_uint(te, "prev_cpu", u64::from(prev_cpu));
            annotate_str(te, "dst_cpu", &dst_cpu.to_string());
        }
        TraceEvent::CfsThrottle {
            group,
            h_nr_queued,
            runtime_remaining,
            ..
        } => {
            te.string(23, "throttled");
            annotate_str(te, "cgroup", trace.cgroup(group));
            annotate_uint(te, "cpu", u64::from(rec.cpu));
            annotate_int(te, "runtime_remaining", runtime_remaining);
            annotate_uint(te, "h_nr_queued", u64::from(h_nr_queued));
        }
        TraceEvent::CfsUnthrottle { group, .. } => {
            // Throttled since before the trace's start: only its end is known.
            te.string(23, "throttled");
            annotate_str(te, "cgroup", trace.cgroup(group));
            annotate_uint(te, "cpu", u64::from(rec.cpu));
        }
        // Only fairsim's own records are planned as slices.
        _ => {}
    } // A throttled stretch says what its unthrottle counted.
    if let Some(TraceEvent::CfsUnthrottle { throttled_ns, .. }) = closed_by {
        annotate_uint(te, "throttled_ns", *throttled_ns);
    }
}

/// The pool value a group bandwidth record carries (`cfs_b->runtime`, ns).
fn pool_value(e: &TraceEvent) -> u64 {
    match *e {
        TraceEvent::CfsThrottle { pool, .. } | TraceEvent::CfsUnthrottle { pool, .. } => pool,
        TraceEvent::CfsRefill { runtime, .. } => runtime,
        _ => 0,
    }
}

/// The name of domain level `level`, or `level<N>` for an index outside the table.
pub fn level_name(trace: &Trace, level: u32) -> String {
    trace
        .levels
        .get(level as usize)
        .cloned()
        .unwrap_or_else(|| format!("level{level}"))
}

/// The uuid of fairsim track `index` (in [`TrackPlan::tracks`] order).
fn track_uuid(index: usize) -> u64 {
    FAIRSIM_TRACK_UUID + 1 + index as u64
}
