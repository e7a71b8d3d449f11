//! The `format` files of every event fairsim writes, and each record's payload in the
//! layout its format describes.
//!
//! The kernel events keep the fields, offsets, sizes, signedness and `print fmt` of their
//! `events/<system>/<event>/format` files on an x86-64 build of 6.12 (64-bit `long`,
//! `char` unsigned since the kernel builds with `-funsigned-char`):
//! include/trace/events/sched.h for `sched_switch`, the `sched_wakeup_template` class
//! (`sched_waking`, `sched_wakeup`, `sched_wakeup_new`), `sched_migrate_task`, the
//! `sched_process_template` class (`sched_process_exit`) and `sched_process_fork`;
//! include/trace/events/power.h's `cpu` class for `cpu_idle` and `cpu_frequency`; and
//! the sched_tp module's `sched_overutilized` (`sched_tp/sched_events.h`, `TRACE_SYSTEM
//! sched`, `span` a `char[SPAN_SIZE]` of 32, copied with `strlcpy`, so at most 31
//! characters of the span reach the event).
//!
//! The sched_tp load-tracking events (`sched_pelt_cfs`, `sched_pelt_se`,
//! `sched_util_est_cfs`, `sched_util_est_se`, `sched_cpu_capacity`, written only under
//! `--trace-events pelt`) have the fields, offsets and `print fmt` of the sched_tp
//! module that LISA 3.1 ships and its load_tracking analysis reads
//! (`lisa/_assets/kmodules/sched_tp/ftrace_events.h`, `TRACE_SYSTEM sched`, `path` a
//! `char[64]`), as built for a kernel after 5.6, where its `RBL_LOAD_ENTRY` is
//! `runnable`. 6.8 merged util_est's `enqueued` and `ewma` into one `unsigned int
//! util_est` (the EWMA, which is also what a task adds to its runqueue's sum): a task's
//! `enqueued` and `ewma` both print it, a runqueue's `enqueued` its sum and its `ewma` 0
//! (a runqueue never had an EWMA of its own). LISA's later module (`lisa__*` events) prints
//! one `util_est` field instead, which LISA 3.1 does not read. `sched_cpu_capacity`'s
//! `capacity_orig` is `arch_scale_cpu_capacity` (6.8 removed `rq->cpu_capacity_orig`).
//! The fields sit in their declaration order at their natural alignment on x86-64.
//!
//! fairsim's own events are in the system `fairsim`, with the fields of their text lines
//! (see [`crate::ftrace`]); their strings (a balance's kind and domain, a group's path)
//! are `__data_loc char[]` fields, whose 32-bit value holds the string's length
//! (with its NUL) in the high half and its offset from the start of the record in the low
//! half, as the kernel's `__string` fields are.
//!
//! Event ids are fairsim's own, fixed (a kernel numbers its events at boot, so readers
//! take them from the formats, never from a table).

use std::fmt::Write as _;

use crate::current::CurrentTasks;
use crate::perfetto::level_name;
use crate::record::{Record, Trace, TraceEvent};

/// One field of an event's record after the common header.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Field {
    /// The C declaration as the format file prints it (`char prev_comm[16]`).
    pub(crate) decl: &'static str,
    /// Offset from the start of the record, bytes.
    pub(crate) offset: u16,
    /// Size, bytes.
    pub(crate) size: u16,
    /// `signed:` of the format file.
    pub(crate) signed: bool,
}

/// An event's format: where it lives (`system/name`), its id, its fields and its
/// `print fmt`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct EventFormat {
    /// Its system (the directory under `events/`).
    pub(crate) system: &'static str,
    /// Its name.
    pub(crate) name: &'static str,
    /// `common_type` of its records.
    pub(crate) id: u16,
    /// Its fields after the common ones.
    pub(crate) fields: &'static [Field],
    /// The fixed part of its record (common header and fields; strings follow).
    pub(crate) size: u16,
    /// `print fmt:` as the format file prints it.
    pub(crate) print_fmt: &'static str,
}

const fn f(decl: &'static str, offset: u16, size: u16, signed: bool) -> Field {
    Field {
        decl,
        offset,
        size,
        signed,
    }
}

/// The common fields of every event (`struct trace_entry`).
const COMMON: [Field; 4] = [
    f("unsigned short common_type", 0, 2, false),
    f("unsigned char common_flags", 2, 1, false),
    f("unsigned char common_preempt_count", 3, 1, false),
    f("int common_pid", 4, 4, true),
];

const SCHED_SWITCH_FMT: &str = "\"prev_comm=%s prev_pid=%d prev_prio=%d prev_state=%s%s ==> next_comm=%s next_pid=%d next_prio=%d\", REC->prev_comm, REC->prev_pid, REC->prev_prio, (REC->prev_state & ((((0x00000000 | 0x00000001 | 0x00000002 | 0x00000004 | 0x00000008 | 0x00000010 | 0x00000020 | 0x00000040) + 1) << 1) - 1)) ? __print_flags(REC->prev_state & ((((0x00000000 | 0x00000001 | 0x00000002 | 0x00000004 | 0x00000008 | 0x00000010 | 0x00000020 | 0x00000040) + 1) << 1) - 1), \"|\", { 0x00000001, \"S\" }, { 0x00000002, \"D\" }, { 0x00000004, \"T\" }, { 0x00000008, \"t\" }, { 0x00000010, \"X\" }, { 0x00000020, \"Z\" }, { 0x00000040, \"P\" }, { 0x00000080, \"I\" }) : \"R\", REC->prev_state & (((0x00000000 | 0x00000001 | 0x00000002 | 0x00000004 | 0x00000008 | 0x00000010 | 0x00000020 | 0x00000040) + 1) << 1) ? \"+\" : \"\", REC->next_comm, REC->next_pid, REC->next_prio";

const WAKEUP_FIELDS: &[Field] = &[
    f("char comm[16]", 8, 16, false),
    f("pid_t pid", 24, 4, true),
    f("int prio", 28, 4, true),
    f("int target_cpu", 32, 4, true),
];
const WAKEUP_FMT: &str =
    "\"comm=%s pid=%d prio=%d target_cpu=%03d\", REC->comm, REC->pid, REC->prio, REC->target_cpu";

const CPU_FIELDS: &[Field] = &[f("u32 state", 8, 4, false), f("u32 cpu_id", 12, 4, false)];
const CPU_FMT: &str =
    "\"state=%lu cpu_id=%lu\", (unsigned long)REC->state, (unsigned long)REC->cpu_id";

/// Every event fairsim writes, in the order the file lists them (by system).
pub(crate) const EVENTS: [EventFormat; 21] = [
    EventFormat {
        system: "sched",
        name: "sched_switch",
        id: 316,
        fields: &[
            f("char prev_comm[16]", 8, 16, false),
            f("pid_t prev_pid", 24, 4, true),
            f("int prev_prio", 28, 4, true),
            f("long prev_state", 32, 8, true),
            f("char next_comm[16]", 40, 16, false),
            f("pid_t next_pid", 56, 4, true),
            f("int next_prio", 60, 4, true),
        ],
        size: 64,
        print_fmt: SCHED_SWITCH_FMT,
    },
    EventFormat {
        system: "sched",
        name: "sched_waking",
        id: 319,
        fields: WAKEUP_FIELDS,
        size: 36,
        print_fmt: WAKEUP_FMT,
    },
    EventFormat {
        system: "sched",
        name: "sched_wakeup",
        id: 318,
        fields: WAKEUP_FIELDS,
        size: 36,
        print_fmt: WAKEUP_FMT,
    },
    EventFormat {
        system: "sched",
        name: "sched_wakeup_new",
        id: 317,
        fields: WAKEUP_FIELDS,
        size: 36,
        print_fmt: WAKEUP_FMT,
    },
    EventFormat {
        system: "sched",
        name: "sched_migrate_task",
        id: 315,
        fields: &[
            f("char comm[16]", 8, 16, false),
            f("pid_t pid", 24, 4, true),
            f("int prio", 28, 4, true),
            f("int orig_cpu", 32, 4, true),
            f("int dest_cpu", 36, 4, true),
        ],
        size: 40,
        print_fmt: "\"comm=%s pid=%d prio=%d orig_cpu=%d dest_cpu=%d\", REC->comm, REC->pid, REC->prio, REC->orig_cpu, REC->dest_cpu",
    },
    EventFormat {
        system: "sched",
        name: "sched_process_fork",
        id: 310,
        fields: &[
            f("char parent_comm[16]", 8, 16, false),
            f("pid_t parent_pid", 24, 4, true),
            f("char child_comm[16]", 28, 16, false),
            f("pid_t child_pid", 44, 4, true),
        ],
        size: 48,
        print_fmt: "\"comm=%s pid=%d child_comm=%s child_pid=%d\", REC->parent_comm, REC->parent_pid, REC->child_comm, REC->child_pid",
    },
    EventFormat {
        system: "sched",
        name: "sched_process_exit",
        id: 312,
        fields: &[
            f("char comm[16]", 8, 16, false),
            f("pid_t pid", 24, 4, true),
            f("int prio", 28, 4, true),
        ],
        size: 32,
        print_fmt: "\"comm=%s pid=%d prio=%d\", REC->comm, REC->pid, REC->prio",
    },
    EventFormat {
        system: "sched",
        name: "sched_overutilized",
        id: 330,
        fields: &[
            f("int overutilized", 8, 4, true),
            f("char span[32]", 12, 32, false),
        ],
        size: 44,
        print_fmt: "\"overutilized=%d span=0x%s\", REC->overutilized, REC->span",
    },
    EventFormat {
        system: "sched",
        name: "sched_pelt_cfs",
        id: 331,
        fields: &[
            f("int cpu", 8, 4, true),
            f("char path[64]", 12, 64, false),
            f("unsigned long load", 80, 8, false),
            f("unsigned long runnable", 88, 8, false),
            f("unsigned long util", 96, 8, false),
            f("unsigned long long update_time", 104, 8, false),
        ],
        size: 112,
        print_fmt: "\"cpu=%d path=%s load=%lu runnable=%lu util=%lu update_time=%llu\", REC->cpu, REC->path, REC->load, REC->runnable, REC->util, REC->update_time",
    },
    EventFormat {
        system: "sched",
        name: "sched_pelt_se",
        id: 332,
        fields: &[
            f("int cpu", 8, 4, true),
            f("char path[64]", 12, 64, false),
            f("char comm[16]", 76, 16, false),
            f("int pid", 92, 4, true),
            f("unsigned long load", 96, 8, false),
            f("unsigned long runnable", 104, 8, false),
            f("unsigned long util", 112, 8, false),
            f("unsigned long long update_time", 120, 8, false),
        ],
        size: 128,
        print_fmt: "\"cpu=%d path=%s comm=%s pid=%d load=%lu runnable=%lu util=%lu update_time=%llu\", REC->cpu, REC->path, REC->comm, REC->pid, REC->load, REC->runnable, REC->util, REC->update_time",
    },
    EventFormat {
        system: "sched",
        name: "sched_util_est_cfs",
        id: 333,
        fields: &[
            f("int cpu", 8, 4, true),
            f("char path[64]", 12, 64, false),
            f("unsigned int enqueued", 76, 4, false),
            f("unsigned int ewma", 80, 4, false),
            f("unsigned long util", 88, 8, false),
        ],
        size: 96,
        print_fmt: "\"cpu=%d path=%s enqueued=%u ewma=%u util=%lu\", REC->cpu, REC->path, REC->enqueued, REC->ewma, REC->util",
    },
    EventFormat {
        system: "sched",
        name: "sched_util_est_se",
        id: 334,
        fields: &[
            f("int cpu", 8, 4, true),
            f("char path[64]", 12, 64, false),
            f("char comm[16]", 76, 16, false),
            f("int pid", 92, 4, true),
            f("unsigned int enqueued", 96, 4, false),
            f("unsigned int ewma", 100, 4, false),
            f("unsigned long util", 104, 8, false),
        ],
        size: 112,
        print_fmt: "\"cpu=%d path=%s comm=%s pid=%d enqueued=%u ewma=%u util=%lu\", REC->cpu, REC->path, REC->comm, REC->pid, REC->enqueued, REC->ewma, REC->util",
    },
    EventFormat {
        system: "sched",
        name: "sched_cpu_capacity",
        id: 335,
        fields: &[
            f("int cpu", 8, 4, true),
            f("unsigned long capacity", 16, 8, false),
            f("unsigned long capacity_orig", 24, 8, false),
            f("unsigned long capacity_curr", 32, 8, false),
        ],
        size: 40,
        print_fmt: "\"cpu=%d capacity=%lu capacity_orig=%lu capacity_curr=%lu\", REC->cpu, REC->capacity, REC->capacity_orig, REC->capacity_curr",
    },
    EventFormat {
        system: "power",
        name: "cpu_idle",
        id: 175,
        fields: CPU_FIELDS,
        size: 16,
        print_fmt: CPU_FMT,
    },
    EventFormat {
        system: "power",
        name: "cpu_frequency",
        id: 172,
        fields: CPU_FIELDS,
        size: 16,
        print_fmt: CPU_FMT,
    },
    EventFormat {
        system: "fairsim",
        name: "fairsim_balance",
        id: 2001,
        fields: &[
            f("__data_loc char[] kind", 8, 4, false),
            f("__data_loc char[] domain", 12, 4, false),
            f("unsigned int groups", 16, 4, false),
            f("unsigned int pulled", 20, 4, false),
            f("u64 dur_ns", 24, 8, false),
        ],
        size: 32,
        print_fmt: "\"kind=%s domain=%s groups=%u pulled=%u dur_ns=%llu\", __get_str(kind), __get_str(domain), REC->groups, REC->pulled, REC->dur_ns",
    },
    EventFormat {
        system: "fairsim",
        name: "fairsim_lock_spin",
        id: 2002,
        fields: &[f("int rq", 8, 4, true), f("u64 dur_ns", 16, 8, false)],
        size: 24,
        print_fmt: "\"rq=%d dur_ns=%llu\", REC->rq, REC->dur_ns",
    },
    EventFormat {
        system: "fairsim",
        name: "fairsim_feec",
        id: 2003,
        fields: &[
            f("char comm[16]", 8, 16, false),
            f("pid_t pid", 24, 4, true),
            f("int prev_cpu", 28, 4, true),
            f("int dst_cpu", 32, 4, true),
        ],
        size: 36,
        print_fmt: "\"comm=%s pid=%d prev_cpu=%d dst_cpu=%d\", REC->comm, REC->pid, REC->prev_cpu, REC->dst_cpu",
    },
    EventFormat {
        system: "fairsim",
        name: "fairsim_cfs_throttle",
        id: 2004,
        fields: &[
            f("__data_loc char[] cgroup", 8, 4, false),
            f("int cpu", 12, 4, true),
            f("s64 runtime_remaining", 16, 8, true),
            f("unsigned int h_nr_queued", 24, 4, false),
            f("u64 pool", 32, 8, false),
        ],
        size: 40,
        print_fmt: "\"cgroup=%s cpu=%d runtime_remaining=%lld h_nr_queued=%u pool=%llu\", __get_str(cgroup), REC->cpu, REC->runtime_remaining, REC->h_nr_queued, REC->pool",
    },
    EventFormat {
        system: "fairsim",
        name: "fairsim_cfs_unthrottle",
        id: 2005,
        fields: &[
            f("__data_loc char[] cgroup", 8, 4, false),
            f("int cpu", 12, 4, true),
            f("u64 throttled_ns", 16, 8, false),
            f("unsigned int h_nr_queued", 24, 4, false),
            f("u64 pool", 32, 8, false),
        ],
        size: 40,
        print_fmt: "\"cgroup=%s cpu=%d throttled_ns=%llu h_nr_queued=%u pool=%llu\", __get_str(cgroup), REC->cpu, REC->throttled_ns, REC->h_nr_queued, REC->pool",
    },
    EventFormat {
        system: "fairsim",
        name: "fairsim_cfs_refill",
        id: 2006,
        fields: &[
            f("__data_loc char[] cgroup", 8, 4, false),
            f("u64 runtime", 16, 8, false),
            f("u64 periods", 24, 8, false),
            f("unsigned int throttled", 32, 4, false),
        ],
        size: 36,
        print_fmt: "\"cgroup=%s runtime=%llu periods=%llu throttled=%u\", __get_str(cgroup), REC->runtime, REC->periods, REC->throttled",
    },
];

/// The indices into [`EVENTS`] of the load-tracking events.
const LOAD_TRACKING: std::ops::RangeInclusive<usize> = 8..=12;

/// The systems of [`EVENTS`] in their order, each with its events; the load-tracking
/// events only when `load_tracking` (the trace holds one), so that a trace without them
/// lists the formats it listed before they existed.
pub(crate) fn systems(load_tracking: bool) -> Vec<(&'static str, Vec<&'static EventFormat>)> {
    let mut out: Vec<(&'static str, Vec<&'static EventFormat>)> = Vec::new();
    for (i, ev) in EVENTS.iter().enumerate() {
        if !load_tracking && LOAD_TRACKING.contains(&i) {
            continue;
        }
        match out.last_mut() {
            Some((sys, list)) if *sys == ev.system => list.push(ev),
            _ => out.push((ev.system, vec![ev])),
        }
    }
    out
}

/// The text of `events/<system>/<name>/format` for `ev`.
pub(crate) fn format_text(ev: &EventFormat) -> String {
    let mut s = format!("name: {}\nID: {}\nformat:\n", ev.name, ev.id);
    let line = |s: &mut String, fl: &Field| {
        // Writing to a String cannot fail.
        let _ = writeln!(
            s,
            "\tfield:{};\toffset:{};\tsize:{};\tsigned:{};",
            fl.decl,
            fl.offset,
            fl.size,
            u8::from(fl.signed)
        );
    };
    for fl in &COMMON {
        line(&mut s, fl);
    }
    s.push('\n');
    for fl in ev.fields {
        line(&mut s, fl);
    }
    let _ = write!(s, "\nprint fmt: {}\n", ev.print_fmt);
    s
}

/// The index into [`EVENTS`] of the event a record becomes.
pub(crate) fn event_index(e: &TraceEvent) -> usize {
    match e {
        TraceEvent::Switch { .. } => 0,
        TraceEvent::Waking { .. } => 1,
        TraceEvent::Wakeup { .. } => 2,
        TraceEvent::WakeupNew { .. } => 3,
        TraceEvent::Migrate { .. } => 4,
        TraceEvent::Fork { .. } => 5,
        TraceEvent::Exit { .. } => 6,
        TraceEvent::Overutilized { .. } => 7,
        TraceEvent::PeltCfs { .. } => 8,
        TraceEvent::PeltSe { .. } => 9,
        TraceEvent::UtilEstCfs { .. } => 10,
        TraceEvent::UtilEstSe { .. } => 11,
        TraceEvent::CpuCapacity { .. } => 12,
        TraceEvent::CpuIdle { .. } => 13,
        TraceEvent::CpuFrequency { .. } => 14,
        TraceEvent::Balance { .. } => 15,
        TraceEvent::LockSpin { .. } => 16,
        TraceEvent::Feec { .. } => 17,
        TraceEvent::CfsThrottle { .. } => 18,
        TraceEvent::CfsUnthrottle { .. } => 19,
        TraceEvent::CfsRefill { .. } => 20,
    }
}

/// `PATH_SIZE` of the sched_tp module: its `path` fields are `char[64]`.
pub(crate) const PATH_SIZE: u16 = 64;

/// The `path` the sched_tp module gives a task's entity (it has no group runqueue).
pub(crate) const TASK_PATH: &str = "(null)";

/// `TRACE_FLAG_IRQS_OFF` of `common_flags`.
const IRQS_OFF: u8 = 0x01;

/// The `common_flags` and `common_preempt_count` of an event: the latency columns the
/// ftrace text prints for it (`d..2.` is irqs off at preempt depth 2; see
/// [`crate::ftrace`]).
pub(crate) fn flags_and_preempt(e: &TraceEvent) -> (u8, u8) {
    match e {
        TraceEvent::Switch { .. }
        | TraceEvent::Waking { .. }
        | TraceEvent::Migrate { .. }
        | TraceEvent::Overutilized { .. }
        | TraceEvent::PeltCfs { .. }
        | TraceEvent::PeltSe { .. }
        | TraceEvent::UtilEstCfs { .. }
        | TraceEvent::UtilEstSe { .. }
        | TraceEvent::CpuCapacity { .. } => (IRQS_OFF, 2),
        TraceEvent::Wakeup { .. } | TraceEvent::WakeupNew { .. } => (IRQS_OFF, 3),
        TraceEvent::CpuIdle { .. } | TraceEvent::CpuFrequency { .. } => (IRQS_OFF, 1),
        _ => (0, 0),
    }
}

/// A record's bytes being filled in at their offsets.
struct Payload {
    buf: Vec<u8>,
}

impl Payload {
    fn new(size: u16) -> Self {
        Self {
            buf: vec![0; size as usize],
        }
    }
    fn put(&mut self, off: u16, bytes: &[u8]) {
        let o = off as usize;
        self.buf[o..o + bytes.len()].copy_from_slice(bytes);
    }
    fn u32(&mut self, off: u16, v: u32) {
        self.put(off, &v.to_le_bytes());
    }
    fn i32(&mut self, off: u16, v: i32) {
        self.put(off, &v.to_le_bytes());
    }
    fn u64(&mut self, off: u16, v: u64) {
        self.put(off, &v.to_le_bytes());
    }
    /// A `char[len]` array: the string cut to `len - 1` bytes and NUL-padded
    /// (`strscpy`/`strlcpy`).
    fn chars(&mut self, off: u16, len: u16, s: &str) {
        let b = s.as_bytes();
        let n = b.len().min(len as usize - 1);
        self.put(off, &b[..n]);
    }
    /// A `__data_loc char[]`: the string and its NUL appended, its location at `off`.
    fn data_loc(&mut self, off: u16, s: &str) {
        let at = self.buf.len();
        self.buf.extend_from_slice(s.as_bytes());
        self.buf.push(0);
        let len = s.len() + 1;
        let loc = ((len as u32 & 0xffff) << 16) | (at as u32 & 0xffff);
        self.u32(off, loc);
    }
}

/// Converts a pid or CPU number to the `int` the tracepoints store.
fn int(v: u32) -> i32 {
    v as i32
}

/// The record's bytes (common header and fields), logged while `pid` was current.
pub(crate) fn encode(trace: &Trace, rec: &Record, pid: u32) -> Vec<u8> {
    let ev = &EVENTS[event_index(&rec.event)];
    let mut p = Payload::new(ev.size);
    let (flags, preempt) = flags_and_preempt(&rec.event);
    p.put(0, &ev.id.to_le_bytes());
    p.put(2, &[flags, preempt]);
    p.i32(4, int(pid));
    let cpu = rec.cpu;
    let comm = |pid: u32| trace.comm(pid, cpu);
    match rec.event {
        TraceEvent::Switch {
            prev,
            prev_state,
            next,
        } => {
            p.chars(8, 16, &comm(prev));
            p.i32(24, int(prev));
            p.i32(28, trace.prio(prev));
            p.u64(32, prev_state.bits() as u64);
            p.chars(40, 16, &comm(next));
            p.i32(56, int(next));
            p.i32(60, trace.prio(next));
        }
        TraceEvent::Waking { pid, target_cpu }
        | TraceEvent::Wakeup { pid, target_cpu }
        | TraceEvent::WakeupNew { pid, target_cpu } => {
            p.chars(8, 16, &comm(pid));
            p.i32(24, int(pid));
            p.i32(28, trace.prio(pid));
            p.i32(32, int(target_cpu));
        }
        TraceEvent::Migrate {
            pid,
            orig_cpu,
            dest_cpu,
        } => {
            p.chars(8, 16, &comm(pid));
            p.i32(24, int(pid));
            p.i32(28, trace.prio(pid));
            p.i32(32, int(orig_cpu));
            p.i32(36, int(dest_cpu));
        }
        TraceEvent::Fork { parent, child } => {
            p.chars(8, 16, &comm(parent));
            p.i32(24, int(parent));
            p.chars(28, 16, &comm(child));
            p.i32(44, int(child));
        }
        TraceEvent::Exit { pid } => {
            p.chars(8, 16, &comm(pid));
            p.i32(24, int(pid));
            p.i32(28, trace.prio(pid));
        }
        TraceEvent::Overutilized { rd, overutilized } => {
            p.i32(8, i32::from(overutilized));
            let span = trace.root_domain_span(rd);
            p.chars(12, 32, span);
        }
        TraceEvent::PeltCfs {
            group,
            load,
            runnable,
            util,
            update_time,
        } => {
            p.i32(8, int(cpu));
            p.chars(12, PATH_SIZE, trace.cfs_rq_path(group));
            p.u64(80, u64::from(load));
            p.u64(88, u64::from(runnable));
            p.u64(96, u64::from(util));
            p.u64(104, update_time);
        }
        TraceEvent::PeltSe {
            pid,
            load,
            runnable,
            util,
            update_time,
        } => {
            p.i32(8, int(cpu));
            p.chars(12, PATH_SIZE, TASK_PATH);
            p.chars(76, 16, &comm(pid));
            p.i32(92, int(pid));
            p.u64(96, u64::from(load));
            p.u64(104, u64::from(runnable));
            p.u64(112, u64::from(util));
            p.u64(120, update_time);
        }
        TraceEvent::UtilEstCfs {
            group,
            util,
            util_est,
        } => {
            p.i32(8, int(cpu));
            p.chars(12, PATH_SIZE, trace.cfs_rq_path(group));
            p.u32(76, util_est);
            p.u32(80, 0);
            p.u64(88, u64::from(util));
        }
        TraceEvent::UtilEstSe {
            pid,
            util,
            util_est,
        } => {
            p.i32(8, int(cpu));
            p.chars(12, PATH_SIZE, TASK_PATH);
            p.chars(76, 16, &comm(pid));
            p.i32(92, int(pid));
            p.u32(96, util_est);
            p.u32(100, util_est);
            p.u64(104, u64::from(util));
        }
        TraceEvent::CpuCapacity {
            capacity,
            capacity_orig,
            capacity_curr,
        } => {
            p.i32(8, int(cpu));
            p.u64(16, u64::from(capacity));
            p.u64(24, u64::from(capacity_orig));
            p.u64(32, u64::from(capacity_curr));
        }
        TraceEvent::CpuIdle { state } => {
            p.u32(8, state);
            p.u32(12, cpu);
        }
        TraceEvent::CpuFrequency { khz } => {
            p.u32(8, khz);
            p.u32(12, cpu);
        }
        TraceEvent::Balance {
            kind,
            level,
            groups,
            pulled,
            dur,
        } => {
            p.data_loc(8, kind.name());
            p.data_loc(12, &level_name(trace, level));
            p.u32(16, groups);
            p.u32(20, pulled);
            p.u64(24, dur);
        }
        TraceEvent::LockSpin { rq, dur } => {
            p.i32(8, int(rq));
            p.u64(16, dur);
        }
        TraceEvent::Feec {
            pid,
            prev_cpu,
            dst_cpu,
        } => {
            p.chars(8, 16, &comm(pid));
            p.i32(24, int(pid));
            p.i32(28, int(prev_cpu));
            p.i32(32, dst_cpu);
        }
        TraceEvent::CfsThrottle {
            group,
            h_nr_queued,
            runtime_remaining,
            pool,
        } => {
            p.data_loc(8, trace.cgroup(group));
            p.i32(12, int(cpu));
            p.u64(16, runtime_remaining as u64);
            p.u32(24, h_nr_queued);
            p.u64(32, pool);
        }
        TraceEvent::CfsUnthrottle {
            group,
            h_nr_queued,
            throttled_ns,
            pool,
        } => {
            p.data_loc(8, trace.cgroup(group));
            p.i32(12, int(cpu));
            p.u64(16, throttled_ns);
            p.u32(24, h_nr_queued);
            p.u64(32, pool);
        }
        TraceEvent::CfsRefill {
            group,
            throttled,
            runtime,
            periods,
        } => {
            p.data_loc(8, trace.cgroup(group));
            p.u64(16, runtime);
            p.u64(24, periods);
            p.u32(32, throttled);
        }
    }
    p.buf
}

/// Every record's bytes with the task current on its CPU, in the records' order.
pub(crate) fn encode_all(trace: &Trace) -> impl Iterator<Item = (&Record, Vec<u8>)> {
    let mut cur = CurrentTasks::new(trace);
    trace.records.iter().map(move |rec| {
        let pid = cur.observe(rec);
        (rec, encode(trace, rec, pid))
    })
}
