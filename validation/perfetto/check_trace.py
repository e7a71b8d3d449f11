#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Checks a fairsim Perfetto trace against its run's counters (and its ftrace text).

Usage: check_trace.py TRACE.perfetto-trace RUN.json [--text TRACE.txt]

Decodes TRACE with the official protos of the PyPI `perfetto` package
(perfetto_trace_pb2) and checks its structure: every packet decodes; a bundle's
compact_sched (sched_switch and sched_waking as packed arrays) expands into full events as
trace_processor reads it: timestamps are deltas from 0 per bundle and kind, a switch's
prev_pid/prev_comm/prev_prio are the previous switch's next_* on that CPU, a waking's pid
(the waker) is that switch's next_pid; a compact switch or waking on a CPU with no switch
before it is an error (trace_processor would drop it, so fairsim writes those in full);
per CPU the ftrace timestamps never decrease; each full sched_switch's prev_pid is the
previous switch's next_pid on that CPU; every pid a sched event names (but the idle task, 0) has a thread in the
process tree; the track-event sequence starts with SEQ_INCREMENTAL_STATE_CLEARED; and
track-event slices begin and end balanced, in time order, per track. Then it compares the
event counts with RUN.json's `scheduler` counters (`fairsim run --json`, for a trace that
covers the whole run): sched_switch == context_switches (the engine counts switches between
tasks and idle: a stopper's switch in, migration/N taking a CPU from its task, and its
switch to idle when it leaves the CPU idle are the trace's own), sched_waking == wakeups_local +
wakeups_remote, sched_migrate_task == migrations; on a run with energy-aware scheduling,
the EAS placement slices == cpufreq.eas.feec_calls and the overutilized stretches ==
cpufreq.eas.overutilized_sets; on a run with cpu.max groups, per group the throttled
slices' throttled_ns summed, in microseconds, == cgroups[].throttled_usec. Counter tracks
(a group's pool) are declared with a CounterDescriptor and carry only counter values.
With --text, the ftrace text's count of each event name must equal the protobuf's (for
sched_overutilized, the lines that turn a root domain's flag on must equal the
overutilized stretches; the throttled slices must equal the fairsim_cfs_throttle lines
plus the fairsim_cfs_unthrottle lines of runqueues throttled before the trace began; the
pool counter's values must equal the fairsim_cfs_throttle, _unthrottle and _refill
lines), each group runqueue's throttle and unthrottle lines must alternate, and per
group the refill lines' periods must sum to cgroups[].nr_periods (those with throttled
runqueues to nr_throttled) and the unthrottle lines' throttled_ns to throttled_usec.

Prints a one-paragraph summary; exits 1 with a message on the first class of mismatch.
Python 3.11; needs only `perfetto` (and the `protobuf` it depends on).
"""
import argparse
import json
import re
import sys
from collections import Counter

try:
    from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb
except ImportError as e:  # pragma: no cover - depends on the environment
    sys.exit(f"check_trace: the PyPI 'perfetto' package is needed ({e})")

SCHED_EVENTS = {
    "sched_switch", "sched_waking", "sched_wakeup", "sched_wakeup_new",
    "sched_migrate_task", "sched_process_fork", "sched_process_exit",
}
FTRACE_EVENTS = SCHED_EVENTS | {"cpu_idle", "cpu_frequency"}
# The ftrace text's name for the slices (or counter values) of each kind of fairsim
# track, by the end of the track's name. An "overutilized" slice is one stretch of a root
# domain's flag, so it matches the text's sched_overutilized lines that turned the flag
# on ("sched_overutilized_on" below), not all of them; a "throttled" slice is one
# throttled stretch of a group runqueue ("cfs_throttled_stretch"), and a "pool" counter
# has a value at each throttle, unthrottle and refill line ("cfs_pool_sample").
TRACK_KINDS = (
    ("balancing", "fairsim_balance"), ("rq lock spins", "fairsim_lock_spin"),
    ("EAS placements", "fairsim_feec"), ("overutilized", "sched_overutilized_on"),
    ("throttled", "cfs_throttled_stretch"), ("pool", "cfs_pool_sample"),
)
TRACK_TEXT_NAMES = {name for _, name in TRACK_KINDS}
TEXT_ONLY = {"sched_overutilized", "fairsim_cfs_throttle", "fairsim_cfs_unthrottle", "fairsim_cfs_refill"}
OVERLAP = re.compile(r" \(overlap \d+\)$")

LINE = re.compile(r"^\s*(.*)-(\d+)\s+\[(\d+)\] (\S{5}) +(\d+)\.(\d{6}): (\w+): ")


class Failure(Exception):
    """A check that did not hold."""


def fail(msg):
    raise Failure(msg)


def read_varint(data, pos):
    shift = 0
    value = 0
    while True:
        if pos >= len(data):
            fail("truncated varint in the Trace's packet framing")
        b = data[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        if b < 0x80:
            return value, pos
        shift += 7


def packets(data):
    """Yields (index, TracePacket) walking the Trace's top-level `packet` fields one by one,
    so that a packet that fails to decode is named."""
    pos = 0
    index = 0
    while pos < len(data):
        key, pos = read_varint(data, pos)
        if key != (1 << 3 | 2):
            fail(f"top-level field key {key} at byte {pos}: a Trace holds only packet = 1")
        length, pos = read_varint(data, pos)
        if pos + length > len(data):
            fail(f"packet {index} runs past the end of the file")
        pkt = pb.TracePacket()
        try:
            pkt.ParseFromString(data[pos:pos + length])
        except Exception as e:  # the protobuf runtime's DecodeError
            fail(f"packet {index} does not decode: {e}")
        yield index, pkt
        pos += length
        index += 1


def expand_compact(index, cpu, cs):
    """The events of a CompactSched as (timestamp, kind, fields) in array order, with
    absolute timestamps (each kind's deltas summed from 0, as trace_processor's tokenizer
    does)."""
    switch = [cs.switch_timestamp, cs.switch_prev_state, cs.switch_next_pid,
              cs.switch_next_prio, cs.switch_next_comm_index]
    waking = [cs.waking_timestamp, cs.waking_pid, cs.waking_target_cpu, cs.waking_prio,
              cs.waking_comm_index]
    for name, arrays in (("switch", switch), ("waking", waking)):
        if len({len(a) for a in arrays}) > 1:
            fail(f"packet {index} cpu {cpu}: compact_sched {name} arrays differ in length "
                 f"({[len(a) for a in arrays]})")
    if cs.waking_common_flags and len(cs.waking_common_flags) != len(cs.waking_pid):
        fail(f"packet {index} cpu {cpu}: waking_common_flags has the wrong length")
    table = list(cs.intern_table)

    def comm(i):
        if i >= len(table):
            fail(f"packet {index} cpu {cpu}: comm index {i} past the intern table ({len(table)})")
        return table[i]

    out = []
    ts = 0
    for delta, state, pid, prio, ci in zip(*switch):
        ts += delta
        out.append((ts, "sched_switch", (state, pid, prio, comm(ci))))
    ts = 0
    for delta, pid, target, prio, ci in zip(*waking):
        ts += delta
        out.append((ts, "sched_waking", (pid, target, prio, comm(ci))))
    return out


def bundle_events(index, bundle, running):
    """Yields (FtraceEvent, is_compact) for a bundle's full events and its compact_sched
    merged by time (stable: at equal times full events first, then switches, then
    wakings). A compact event becomes the full event trace_processor would rebuild, from
    `running[cpu]` = (pid, comm, prio) of the previous switch's next task on the CPU,
    which the caller keeps up to date as it goes through the yielded switches."""
    cpu = bundle.cpu
    full = [(ev.timestamp, 0, ev) for ev in bundle.event]
    for a, b in zip(full, full[1:]):
        if b[0] < a[0]:
            fail(f"cpu {cpu}: timestamp {b[0]} after {a[0]} in packet {index}")
    merged = full
    if bundle.HasField("compact_sched"):
        rank = {"sched_switch": 1, "sched_waking": 2}
        merged = full + [(ts, rank[kind], (kind, fields))
                         for ts, kind, fields in expand_compact(index, cpu, bundle.compact_sched)]
        merged.sort(key=lambda e: (e[0], e[1]))
    for ts, rank, item in merged:
        if rank == 0:
            yield item, False
            continue
        kind, fields = item
        if cpu not in running:
            fail(f"cpu {cpu} at {ts}: compact {kind} before any sched_switch on the CPU "
                 "(trace_processor would drop it; its context must be a full event)")
        cur_pid, cur_comm, cur_prio = running[cpu]
        if kind == "sched_switch":
            state, pid, prio, comm = fields
            body = pb.SchedSwitchFtraceEvent(
                prev_comm=cur_comm, prev_pid=cur_pid, prev_prio=cur_prio, prev_state=state,
                next_comm=comm, next_pid=pid, next_prio=prio)
            yield pb.FtraceEvent(timestamp=ts, pid=cur_pid, sched_switch=body), True
        else:
            pid, target, prio, comm = fields
            body = pb.SchedWakingFtraceEvent(comm=comm, pid=pid, prio=prio, success=1,
                                             target_cpu=target)
            yield pb.FtraceEvent(timestamp=ts, pid=cur_pid, sched_waking=body), True


def check_proto(path):
    data = open(path, "rb").read()
    counts = Counter()
    threads = set()
    last_ts = {}
    running = {}
    named_pids = []
    tracks = {}
    open_slices = {}
    track_last_ts = {}
    begins = Counter()
    counter_tracks = set()
    n_counter_values = 0
    throttled_ns = Counter()
    seq_seen = {}
    n_packets = 0
    cpus = set()
    compact = Counter()
    for index, pkt in packets(data):
        n_packets += 1
        if not pkt.HasField("trusted_packet_sequence_id"):
            fail(f"packet {index} has no trusted_packet_sequence_id")
        seq = pkt.trusted_packet_sequence_id
        first_on_seq = seq not in seq_seen
        seq_seen[seq] = seq_seen.get(seq, 0) + 1
        if pkt.HasField("process_tree"):
            for t in pkt.process_tree.threads:
                threads.add(t.tid)
            for p in pkt.process_tree.processes:
                threads.add(p.pid)
        if pkt.HasField("ftrace_events"):
            bundle = pkt.ftrace_events
            cpu = bundle.cpu
            cpus.add(cpu)
            for ev, is_compact in bundle_events(index, bundle, running):
                kind = ev.WhichOneof("event")
                if kind not in FTRACE_EVENTS:
                    fail(f"packet {index}: unexpected ftrace event {kind!r}")
                counts[kind] += 1
                if is_compact:
                    compact[kind] += 1
                if ev.timestamp < last_ts.get(cpu, 0):
                    fail(f"cpu {cpu}: timestamp {ev.timestamp} after {last_ts[cpu]} (packet {index})")
                last_ts[cpu] = ev.timestamp
                named_pids.append((ev.pid, kind, ev.timestamp))
                body = getattr(ev, kind)
                if kind == "sched_switch":
                    # A compact switch's prev_pid was taken from `running`; a full one's
                    # must agree with it.
                    if cpu in running and running[cpu][0] != body.prev_pid:
                        fail(f"cpu {cpu} at {ev.timestamp}: sched_switch prev_pid={body.prev_pid} "
                             f"but the previous switch's next_pid was {running[cpu][0]}")
                    running[cpu] = (body.next_pid, body.next_comm, body.next_prio)
                    stopper_in = body.next_comm.startswith("migration/")
                    stopper_to_idle = body.prev_comm.startswith("migration/") and body.next_pid == 0
                    if not stopper_in and not stopper_to_idle:
                        counts["engine_switches"] += 1
                    named_pids += [(body.prev_pid, kind, ev.timestamp), (body.next_pid, kind, ev.timestamp)]
                elif kind == "sched_process_fork":
                    named_pids += [(body.parent_pid, kind, ev.timestamp), (body.child_pid, kind, ev.timestamp)]
                elif kind in SCHED_EVENTS:
                    named_pids.append((body.pid, kind, ev.timestamp))
        if pkt.HasField("track_descriptor") or pkt.HasField("track_event"):
            if first_on_seq and pkt.sequence_flags != pb.TracePacket.SEQ_INCREMENTAL_STATE_CLEARED:
                fail(f"packet {index}: first packet of track sequence {seq} lacks SEQ_INCREMENTAL_STATE_CLEARED")
            if not first_on_seq and pkt.sequence_flags != pb.TracePacket.SEQ_NEEDS_INCREMENTAL_STATE:
                fail(f"packet {index}: track sequence {seq} packet lacks SEQ_NEEDS_INCREMENTAL_STATE")
        if pkt.HasField("track_descriptor"):
            d = pkt.track_descriptor
            tracks[d.uuid] = d.name
            if d.HasField("counter"):
                counter_tracks.add(d.uuid)
        if pkt.HasField("track_event"):
            te = pkt.track_event
            if te.track_uuid not in tracks:
                fail(f"packet {index}: track event on undeclared track {te.track_uuid}")
            if pkt.timestamp < track_last_ts.get(te.track_uuid, 0):
                fail(f"track {tracks[te.track_uuid]!r}: time goes back at packet {index}")
            track_last_ts[te.track_uuid] = pkt.timestamp
            stack = open_slices.setdefault(te.track_uuid, [])
            is_counter = te.track_uuid in counter_tracks
            if (te.type == pb.TrackEvent.TYPE_COUNTER) != is_counter:
                fail(f"packet {index}: track event of type {te.type} on "
                     f"{'counter' if is_counter else 'slice'} track {tracks[te.track_uuid]!r}")
            if te.type == pb.TrackEvent.TYPE_COUNTER:
                if not te.HasField("counter_value"):
                    fail(f"packet {index}: counter event without counter_value")
                begins[tracks[te.track_uuid]] += 1
                n_counter_values += 1
            elif te.type == pb.TrackEvent.TYPE_SLICE_BEGIN:
                stack.append(pkt.timestamp)
                begins[tracks[te.track_uuid]] += 1
                args = {a.name: a for a in te.debug_annotations}
                if te.name == "throttled" and "throttled_ns" in args:
                    throttled_ns[args["cgroup"].string_value] += args["throttled_ns"].uint_value
            elif te.type == pb.TrackEvent.TYPE_SLICE_END:
                if not stack:
                    fail(f"track {tracks[te.track_uuid]!r}: slice end without a begin at {pkt.timestamp}")
                stack.pop()
            else:
                fail(f"packet {index}: unexpected track event type {te.type}")
    for uuid, stack in open_slices.items():
        if stack:
            fail(f"track {tracks[uuid]!r}: {len(stack)} slice(s) never end")
    for pid, kind, ts in named_pids:
        if pid != 0 and pid not in threads:
            fail(f"{kind} at {ts} names pid {pid}, which the process tree does not hold")
    fairsim = Counter()
    for name, n in begins.items():
        base = OVERLAP.sub("", name)
        for part, text_name in TRACK_KINDS:
            if base.endswith(" " + part):
                fairsim[text_name] += n
                break
        else:
            fail(f"track {name!r} is of no known kind")
    return {
        "counts": counts, "compact": compact, "fairsim": fairsim, "packets": n_packets, "cpus": len(cpus),
        "threads": len(threads), "tracks": len(tracks), "bytes": len(data), "throttled_ns": throttled_ns,
        "counter_values": n_counter_values,
    }


OVERUTILIZED = re.compile(r"overutilized=(\d) span=(\S+)")
CFS_FIELDS = re.compile(r"cgroup=(\S+) (?:cpu=(\d+) )?(.*)$")


def cfs_line(path, raw, event, counts, throttled, groups):
    """Checks one fairsim_cfs_* line: a group runqueue's throttle and unthrottle lines
    alternate (the first may be an unthrottle, of a runqueue throttled before the trace
    began: it opens a stretch of its own); sums each group's periods and throttled time."""
    m = CFS_FIELDS.search(raw.rstrip())
    if not m:
        fail(f"{path}: {event} line without its fields: {raw.rstrip()!r}")
    fields = dict(kv.split("=", 1) for kv in m.group(3).split())
    g = groups.setdefault(m.group(1), Counter())
    counts["cfs_pool_sample"] += 1
    if event == "fairsim_cfs_refill":
        periods = int(fields["periods"])
        g["nr_periods"] += periods
        if int(fields["throttled"]) > 0:
            g["nr_throttled"] += periods
        return
    rq = (m.group(1), m.group(2))
    if event == "fairsim_cfs_throttle":
        if throttled.get(rq):
            fail(f"{path}: {rq} throttled twice: {raw.rstrip()!r}")
        counts["cfs_throttled_stretch"] += 1
    else:
        if rq not in throttled:
            counts["cfs_throttled_stretch"] += 1
        elif not throttled[rq]:
            fail(f"{path}: {rq} unthrottled while not throttled: {raw.rstrip()!r}")
        g["throttled_ns"] += int(fields["throttled_ns"])
    throttled[rq] = event == "fairsim_cfs_throttle"


def check_text(path):
    counts = Counter()
    entries = None
    lines = 0
    flag = {}
    throttled = {}
    groups = {}
    for raw in open(path, encoding="utf-8"):
        if raw.startswith("#"):
            m = re.match(r"# entries-in-buffer/entries-written: (\d+)/(\d+)", raw)
            if m:
                entries = int(m.group(1))
            continue
        m = LINE.match(raw)
        if not m:
            fail(f"{path}: line not in the ftrace layout: {raw.rstrip()!r}")
        counts[m.group(7)] += 1
        lines += 1
        if m.group(7) == "sched_overutilized":
            o = OVERUTILIZED.search(raw)
            if not o:
                fail(f"{path}: sched_overutilized line without its fields: {raw.rstrip()!r}")
            on = o.group(1) == "1"
            if on and not flag.get(o.group(2), False):
                counts["sched_overutilized_on"] += 1
            flag[o.group(2)] = on
        if m.group(7).startswith("fairsim_cfs_"):
            cfs_line(path, raw, m.group(7), counts, throttled, groups)
    if entries is None:
        fail(f"{path}: no entries-in-buffer header")
    if entries != lines:
        fail(f"{path}: header says {entries} entries, {lines} lines follow")
    return counts, groups


def check_cgroups(doc, got, text_groups):
    """Each cpu.max group's cpu.stat lines against the throttled slices (and the text's
    sums); returns a note for the summary."""
    rows = [r for r in doc.get("cgroups") or [] if r.get("throttled_usec") is not None]
    for r in rows:
        path = r["path"]
        usec = got["throttled_ns"][path] // 1000
        if usec != r["throttled_usec"]:
            fail(f"cgroup {path}: the throttled slices add up to {usec} us but the run counted "
                 f"throttled_usec = {r['throttled_usec']}")
        if text_groups is None:
            continue
        g = text_groups.get(path, Counter())
        for key, want in (("nr_periods", r["nr_periods"]), ("nr_throttled", r["nr_throttled"]),
                          ("throttled_usec", r["throttled_usec"])):
            have = g["throttled_ns"] // 1000 if key == "throttled_usec" else g[key]
            if have != want:
                fail(f"cgroup {path}: the fairsim_cfs_* lines add up to {key} = {have} "
                     f"but the run counted {want}")
    if not rows:
        return ""
    return " The throttled time of " + ", ".join(
        f"{r['path']} ({r['throttled_usec']} us in {r['nr_throttled']} of {r['nr_periods']} periods)"
        for r in rows) + " matches its throttled slices" + (" and text lines." if text_groups is not None else ".")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("trace")
    ap.add_argument("run_json")
    ap.add_argument("--text")
    args = ap.parse_args()
    try:
        got = check_proto(args.trace)
        c = got["counts"]
        doc = json.load(open(args.run_json))
        if "scheduler" not in doc:
            fail(f"{args.run_json}: no 'scheduler' key (is it `fairsim run --json` output?)")
        s = doc["scheduler"]
        expect = [
            ("engine_switches", "context_switches", s["context_switches"]),
            ("sched_waking", "wakeups_local + wakeups_remote", s["wakeups_local"] + s["wakeups_remote"]),
            ("sched_migrate_task", "migrations", s["migrations"]),
        ]
        eas = doc.get("cpufreq", {}).get("eas") if isinstance(doc.get("cpufreq"), dict) else None
        if isinstance(eas, dict) and "feec_calls" in eas:
            f = got["fairsim"]
            if f["fairsim_feec"] != eas["feec_calls"]:
                fail(f"{f['fairsim_feec']} EAS placement slices but the run counted feec_calls = {eas['feec_calls']}")
            if f["sched_overutilized_on"] != eas["overutilized_sets"]:
                fail(f"{f['sched_overutilized_on']} overutilized slices but the run counted "
                     f"overutilized_sets = {eas['overutilized_sets']}")
        for event, counter, want in expect:
            if c[event] != want:
                what = "sched_switch events between tasks and idle" if event == "engine_switches" else f"{event} events"
                fail(f"{c[event]} {what} but the run counted {counter} = {want}")
        text_note = ""
        text_groups = None
        if args.text:
            tc, text_groups = check_text(args.text)
            for name in sorted(FTRACE_EVENTS | TRACK_TEXT_NAMES):
                want = got["fairsim"][name] if name in TRACK_TEXT_NAMES else c[name]
                if tc[name] != want:
                    fail(f"{args.text}: {tc[name]} {name} lines, the protobuf has {want}")
            extra = set(tc) - FTRACE_EVENTS - TRACK_TEXT_NAMES - TEXT_ONLY
            if extra:
                fail(f"{args.text}: unknown event names {sorted(extra)}")
            n_text = sum(v for k, v in tc.items() if k not in TRACK_TEXT_NAMES - {
                "fairsim_balance", "fairsim_lock_spin", "fairsim_feec"})
            text_note = f" The text file {args.text} has the same count of each of its {n_text} events."
        text_note += check_cgroups(doc, got, text_groups)
    except Failure as e:
        print(f"check_trace: FAILED: {e}", file=sys.stderr)
        return 1
    cc = got["compact"]
    compact_note = (f" ({cc['sched_switch']} sched_switch and {cc['sched_waking']} sched_waking of them "
                    "from compact_sched)") if cc else ""
    counter_note = f" and {got['counter_values']} counter values" if got["counter_values"] else ""
    c = Counter({k: v for k, v in c.items() if k != "engine_switches"})
    total = sum(c.values())
    per = ", ".join(f"{k} {v}" for k, v in sorted(c.items()))
    print(
        f"check_trace: OK. {args.trace} ({got['bytes']} bytes, {got['packets']} packets) decodes with the "
        f"official protos: {total} ftrace events on {got['cpus']} CPUs ({per}){compact_note}, {got['threads']} threads in the "
        f"process tree, {sum(got['fairsim'].values()) - got['counter_values']} fairsim slices balanced{counter_note} on {got['tracks']} tracks (the fairsim parent included); "
        f"per-CPU time and the switch chain hold, and the counts match {args.run_json} "
        f"(context_switches {s['context_switches']}, wakeups {s['wakeups_local'] + s['wakeups_remote']}, "
        f"migrations {s['migrations']}).{text_note}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
