//! A run's trace as a `trace.dat`, the file `trace-cmd record` writes and `trace-cmd
//! report`, KernelShark and LISA read.
//!
//! # Version 6, not 7
//!
//! trace-cmd's file format has two versions (trace-cmd.dat.v6(5), trace-cmd.dat.v7(5)).
//! fairsim writes version 6: every trace-cmd since 2.x reads it (version 7 needs
//! trace-cmd 3.0 or later, and so a KernelShark 2.x built against it), as do LISA's own
//! Rust parser and its `trace-cmd report` fallback; and it has all fairsim needs, with no
//! section table, string table or compression header. Version 7's additions (compressed
//! sections, several buffers) serve nothing a simulated trace holds.
//!
//! # Layout (all numbers little-endian, a 64-bit `long`)
//!
//! 1. `\x17\x08\x44tracing6\0`, the endianness (0), the long size (8) and the page size
//!    (u32 4096).
//! 2. `header_page\0` and `header_event\0`, each with a u64 size and the text of
//!    `events/header_page` and `events/header_event` of a 6.12 x86-64 kernel.
//! 3. The ftrace events (u32 count, none) and the event systems: u32 count, then each
//!    system's NUL-terminated name, a u32 count of its events and each event's `format`
//!    text with a u64 size (`format.rs`).
//! 4. kallsyms and printk formats: u32 sizes of 0 (fairsim has no kernel symbols).
//! 5. `saved_cmdlines`: a u64 size, then `pid comm` lines for every task of the trace.
//!    The format has no place for `saved_tgids` (trace-cmd never saves it; a reader that
//!    wants the thread groups reads `--trace`'s process tree).
//! 6. The CPU count (u32), then `options  \0` with two options, each a u16 id, a u32
//!    size and its data: `TRACECLOCK` (4), the text of 6.12's `trace_clock` file with
//!    `[local]` selected, and `CPUCOUNT` (8); a u16 0 ends them.
//! 7. `flyrecord\0`, then for every CPU a u64 offset and a u64 size of its data, which
//!    starts on a page boundary: the CPU's ring-buffer pages (`ring.rs`).
//!
//! Each record becomes one event of the format `format.rs` gives it, with `common_pid`
//! the task current on its CPU (as in the text formats) and the latency flags the ftrace
//! text prints. The same trace always gives the same bytes.

pub(crate) mod format;
pub mod read;
pub(crate) mod ring;

use std::io::{self, Write};

use crate::current::cpu_slots;
use crate::record::Trace;

use ring::{CpuPages, PAGE_DATA, PAGE_SIZE};

/// The file's magic, `tracing` and the version string.
pub(crate) const MAGIC: &[u8] = b"\x17\x08\x44tracing6\0";

/// `TRACECMD_OPTION_TRACECLOCK`.
pub(crate) const OPTION_TRACECLOCK: u16 = 4;
/// `TRACECMD_OPTION_CPUCOUNT`.
pub(crate) const OPTION_CPUCOUNT: u16 = 8;

/// `trace_clock` of 6.12 on x86-64, with the `local` clock fairsim's time stands for.
pub(crate) const TRACE_CLOCK: &str =
    "[local] global counter uptime perf mono mono_raw boot tai x86-tsc\n";

/// `events/header_page`: `struct buffer_data_page` with a 64-bit `local_t` and 4 KiB pages.
pub(crate) fn header_page() -> String {
    format!(
        "\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n\
         \tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n\
         \tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n\
         \tfield: char data;\toffset:16;\tsize:{PAGE_DATA};\tsigned:0;\n"
    )
}

/// `events/header_event`: the compressed event header of the ring buffer.
pub(crate) const HEADER_EVENT: &str = "# compressed entry header\n\
\ttype_len    :    5 bits\n\
\ttime_delta  :   27 bits\n\
\tarray       :   32 bits\n\
\n\
\tpadding     : type == 29\n\
\ttime_extend : type == 30\n\
\ttime_stamp : type == 31\n\
\tdata max type_len  == 28\n";

fn put_u16(out: &mut Vec<u8>, v: u16) {
    out.extend_from_slice(&v.to_le_bytes());
}
fn put_u32(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&v.to_le_bytes());
}
fn put_u64(out: &mut Vec<u8>, v: u64) {
    out.extend_from_slice(&v.to_le_bytes());
}
/// A u64 size, then the bytes.
fn put_sized8(out: &mut Vec<u8>, bytes: &[u8]) {
    put_u64(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}

/// Everything before the CPU data: the header up to the `flyrecord` table's start.
fn header(trace: &Trace, cpus: u32) -> Vec<u8> {
    let mut h = Vec::new();
    h.extend_from_slice(MAGIC);
    h.push(0); // little-endian
    h.push(8); // long size
    put_u32(&mut h, PAGE_SIZE as u32);

    h.extend_from_slice(b"header_page\0");
    put_sized8(&mut h, header_page().as_bytes());
    h.extend_from_slice(b"header_event\0");
    put_sized8(&mut h, HEADER_EVENT.as_bytes());

    put_u32(&mut h, 0); // ftrace event formats
    let load_tracking = trace.records.iter().any(|r| r.event.is_load_tracking());
    let systems = format::systems(load_tracking);
    put_u32(&mut h, systems.len() as u32);
    for (name, events) in &systems {
        h.extend_from_slice(name.as_bytes());
        h.push(0);
        put_u32(&mut h, events.len() as u32);
        for ev in events {
            put_sized8(&mut h, format::format_text(ev).as_bytes());
        }
    }
    put_u32(&mut h, 0); // kallsyms
    put_u32(&mut h, 0); // printk formats

    let mut cmdlines = String::new();
    for t in &trace.tasks {
        cmdlines.push_str(&format!("{} {}\n", t.pid, t.comm));
    }
    put_sized8(&mut h, cmdlines.as_bytes());

    put_u32(&mut h, cpus);
    h.extend_from_slice(b"options  \0");
    put_u16(&mut h, OPTION_TRACECLOCK);
    put_u32(&mut h, TRACE_CLOCK.len() as u32 + 1);
    h.extend_from_slice(TRACE_CLOCK.as_bytes());
    h.push(0);
    put_u16(&mut h, OPTION_CPUCOUNT);
    put_u32(&mut h, 4);
    put_u32(&mut h, cpus);
    put_u16(&mut h, 0);
    h.extend_from_slice(b"flyrecord\0");
    h
}

/// Writes `trace` as a trace-cmd version 6 `trace.dat` (see the module doc). The same
/// trace always gives the same bytes.
pub fn write_trace_dat(trace: &Trace, out: &mut dyn Write) -> io::Result<()> {
    let cpus = cpu_slots(trace);
    let mut pages: Vec<CpuPages> = (0..cpus).map(|_| CpuPages::default()).collect();
    for (rec, data) in format::encode_all(trace) {
        pages[rec.cpu as usize].push(rec.ts, &data);
    }
    let data: Vec<Vec<u8>> = pages
        .into_iter()
        .map(|p| {
            if p.events() == 0 {
                Vec::new()
            } else {
                p.finish()
            }
        })
        .collect();

    let head = header(trace, cpus as u32);
    let table = 16 * cpus;
    let start = (head.len() + table).div_ceil(PAGE_SIZE) * PAGE_SIZE;
    let mut tail = Vec::with_capacity(start - head.len());
    let mut offset = start as u64;
    for d in &data {
        put_u64(&mut tail, offset);
        put_u64(&mut tail, d.len() as u64);
        offset += d.len() as u64;
    }
    tail.resize(start - head.len(), 0);
    out.write_all(&head)?;
    out.write_all(&tail)?;
    for d in &data {
        out.write_all(d)?;
    }
    out.flush()
}
