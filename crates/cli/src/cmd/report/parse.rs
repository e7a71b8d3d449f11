//! Reads the scheduler events of a trace in ftrace's text layout: what
//! `fairsim run --trace-text` writes, what a real kernel's `/sys/kernel/tracing/trace`
//! and `trace_pipe` print with the `sched` events enabled, and what `perf script` prints
//! for a `perf sched record` file.
//!
//! # Line format
//!
//! An event line is `TASK-PID [CPU] FLAGS SECONDS.FRACTION: EVENT: FIELDS` (ftrace's
//! `trace_print_context`; `FLAGS` is absent with the `irq-info` option off, and a
//! `(TGID)` column sits before `[CPU]` with `record-tgid` on) or
//! `COMM PID [CPU] SECONDS.FRACTION: sched:EVENT: FIELDS` (`perf script`). Only the CPU,
//! the time, the event's name and its fields are read: the task in front of the CPU is
//! the one current when the event fired, which the fields name better. `FIELDS` is the
//! `TP_printk` text of include/trace/events/sched.h: `sched_switch`'s
//! `prev_comm=%s prev_pid=%d prev_prio=%d prev_state=%s ==> next_comm=%s next_pid=%d
//! next_prio=%d`, the wakeup class's `comm=%s pid=%d prio=%d target_cpu=%03d` (with
//! `success=%d` before 4.7), `sched_migrate_task`'s `comm=%s pid=%d prio=%d
//! orig_cpu=%d dest_cpu=%d` and `sched_stat_runtime`'s `comm=%s pid=%d runtime=%Lu
//! [ns]` (with `vruntime=` before 6.8). A comm may hold spaces, so each is read up to
//! the last ` pid=` (or ` prev_pid=`, ` next_pid=`) after it.
//!
//! Lines starting with `#` (headers, `##### CPU 2 buffer started ####`) are skipped but
//! for `#P:N`, the number of CPUs, which `perf sched map` needs for its columns; a
//! `CPU:N [LOST M EVENTS]` line counts lost events; other events (irq, timer,
//! `cpu_idle`, fairsim's own `fairsim_*` lines) are skipped. Anything else is refused
//! with the line's number, so that a binary file (a Perfetto trace) or `trace-cmd
//! report`'s default layout (whose `sched_switch` plugin prints `comm:pid [prio]`
//! instead of the fields) is not read as an empty trace.

use std::collections::BTreeMap;
use std::io::{BufRead, Read};

/// The largest CPU number accepted (fairsim's and the kernel's `NR_CPUS` limit is 8192):
/// `perf sched map` prints one column per CPU, so a corrupt number must not ask for
/// millions.
pub(crate) const MAX_CPU: u32 = 8191;

/// The longest line read, newline included. ftrace prints each event through a
/// `trace_seq` of one page (4096 bytes on x86, 64 KiB with arm64's largest pages), so no
/// trace line is longer; a longer one is binary data or a file with no newlines, and is
/// refused once this much of it is read rather than buffered whole.
pub(crate) const MAX_LINE_BYTES: usize = 64 << 10;

/// The most a trace may hold, in bytes. The events are kept for the reports (about a
/// third of the text's size), so the input is capped as every other file fairsim reads
/// is; a longer capture can be cut to a window before it is read (`--trace-window`, or
/// the tracer stopped sooner).
pub(crate) const MAX_TRACE_BYTES: u64 = 1 << 30;

/// A task's state as `perf sched` reads `prev_state` (`evsel__taskstate` of perf 6.12):
/// the letter of the lowest bit set, or `R` for none and for the preempted `R+`.
pub(crate) type StateChar = u8;

/// Why a line holding a NUL byte is refused.
const BINARY: &str = "binary data, not ftrace text (a Perfetto trace is not read); allowed: the text of `fairsim run --trace-text FILE`, /sys/kernel/tracing/trace or `perf script`";

/// How a task was woken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum WakeKind {
    /// `sched_waking`, on the waker's CPU.
    Waking,
    /// `sched_wakeup`, once the task is on its runqueue.
    Wakeup,
    /// `sched_wakeup_new`, a forked task's first wakeup.
    WakeupNew,
}

/// One scheduler event the reports read. Comms are indices into [`Events::comms`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Kind {
    /// `sched_switch`.
    Switch {
        /// The task leaving the CPU (0: idle).
        prev_pid: u32,
        /// Its comm.
        prev_comm: u32,
        /// Its state ([`StateChar`]).
        prev_state: StateChar,
        /// The task taking the CPU (0: idle).
        next_pid: u32,
        /// Its comm.
        next_comm: u32,
    },
    /// `sched_waking`, `sched_wakeup` or `sched_wakeup_new`.
    Wakeup {
        /// Which one.
        kind: WakeKind,
        /// The woken task.
        pid: u32,
        /// Its comm.
        comm: u32,
    },
    /// `sched_migrate_task`.
    Migrate {
        /// The task.
        pid: u32,
        /// Its comm.
        comm: u32,
    },
    /// `sched_stat_runtime`: `runtime` ns of CPU time charged to the task.
    Runtime {
        /// The task.
        pid: u32,
        /// Its comm.
        comm: u32,
        /// Nanoseconds.
        runtime: u64,
    },
}

/// One event at `ts` ns on `cpu`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Event {
    /// Time, ns (the text's resolution: microseconds for ftrace's default clock).
    pub ts: u64,
    /// The CPU that logged it.
    pub cpu: u32,
    /// The event.
    pub kind: Kind,
}

/// The scheduler events of a trace, in time order (ties in the file's order, as perf's
/// ordered-events queue keeps them).
#[derive(Debug, Clone, Default)]
pub(crate) struct Events {
    /// `#P:N` from the header, if the file had one.
    pub cpus_header: Option<u32>,
    /// The highest CPU number seen in an event line.
    pub max_cpu: Option<u32>,
    /// Distinct comm strings, by index.
    pub comms: Vec<String>,
    /// The events.
    pub events: Vec<Event>,
    /// Whether any `sched_waking` was read: perf then ignores `sched_wakeup` ("prefer
    /// sched_waking if it is captured", `perf_sched__read_events`).
    pub has_waking: bool,
    /// Whether any `sched_stat_runtime` was read (the latency report's run time).
    pub has_runtime: bool,
    /// Event lines read, of any event.
    pub lines: u64,
    /// Events ftrace reported lost (`CPU:N [LOST M EVENTS]`), and in how many reports.
    pub lost: (u64, u64),
}

impl Events {
    /// The CPU count the reports use: `#P:N`, or one past the highest CPU seen if more.
    pub(crate) fn nr_cpus(&self) -> u32 {
        let seen = self.max_cpu.map_or(0, |c| c + 1);
        self.cpus_header.unwrap_or(0).max(seen).max(1)
    }

    /// The comm at index `i`.
    pub(crate) fn comm(&self, i: u32) -> &str {
        self.comms.get(i as usize).map_or("", String::as_str)
    }
}

/// Builds [`Events`] one line at a time, for a file read line by line or for the text
/// `fairsim run --report` streams from the trace writer without keeping it.
#[derive(Debug, Default)]
pub(crate) struct Reader {
    events: Events,
    intern: BTreeMap<String, u32>,
    line_no: u64,
    sorted: bool,
}

impl Reader {
    /// An empty reader.
    pub(crate) fn new() -> Self {
        Reader {
            sorted: true,
            ..Reader::default()
        }
    }

    /// Reads one line (without its newline). Errors name the line number and what is
    /// wrong, without the file name, which the caller adds.
    pub(crate) fn line(&mut self, line: &str) -> Result<(), String> {
        self.line_no += 1;
        let n = self.line_no;
        let line = line.trim_end_matches(['\r', '\n']);
        if line.contains('\0') {
            return Err(format!("line {n}: {BINARY}"));
        }
        let trimmed = line.trim_start();
        if trimmed.is_empty() {
            return Ok(());
        }
        if let Some(rest) = trimmed.strip_prefix('#') {
            if let Some(p) = header_cpus(rest) {
                self.events.cpus_header = Some(p);
            }
            return Ok(());
        }
        if let Some(lost) = lost_events(trimmed) {
            self.events.lost.0 += lost;
            self.events.lost.1 += 1;
            return Ok(());
        }
        let Some(head) = split_event_line(line) else {
            return Err(format!(
                "line {n}: not an event line '{}'; allowed: 'TASK-PID [CPU] FLAGS SECONDS.FRACTION: EVENT: FIELDS' (ftrace) or 'COMM PID [CPU] SECONDS.FRACTION: EVENT: FIELDS' (perf script)",
                excerpt(trimmed)
            ));
        };
        if head.cpu > MAX_CPU {
            return Err(format!(
                "line {n}: CPU {} is out of range; allowed: 0 to {MAX_CPU}",
                head.cpu
            ));
        }
        self.events.lines += 1;
        let kind = match head.event {
            "sched_switch" => self.switch(head.fields),
            "sched_waking" => {
                self.events.has_waking = true;
                self.wakeup(WakeKind::Waking, head.fields)
            }
            "sched_wakeup" => self.wakeup(WakeKind::Wakeup, head.fields),
            "sched_wakeup_new" => self.wakeup(WakeKind::WakeupNew, head.fields),
            "sched_migrate_task" => self.migrate(head.fields),
            "sched_stat_runtime" => {
                self.events.has_runtime = true;
                self.runtime(head.fields)
            }
            _ => return Ok(()),
        }
        .map_err(|why| format!("line {n}: {}: {why}", head.event))?;
        self.events.max_cpu = Some(self.events.max_cpu.map_or(head.cpu, |m| m.max(head.cpu)));
        if let Some(last) = self.events.events.last() {
            if head.ts < last.ts {
                self.sorted = false;
            }
        }
        self.events.events.push(Event {
            ts: head.ts,
            cpu: head.cpu,
            kind,
        });
        Ok(())
    }

    /// The events read, in time order.
    pub(crate) fn finish(mut self) -> Events {
        if !self.sorted {
            // Per-CPU buffers printed one after another (or a hand-edited file): perf
            // orders events by time before its handlers see them; a stable sort keeps
            // the file's order among equal times.
            self.events.events.sort_by_key(|e| e.ts);
        }
        self.events
    }

    /// Reads every line of `input`, holding at most [`MAX_LINE_BYTES`] of a line and
    /// [`MAX_TRACE_BYTES`] in all, so that an input that never ends (`/dev/zero`, a pipe)
    /// or has no newlines costs bounded memory before it is refused.
    pub(crate) fn read_all(self, input: &mut dyn BufRead) -> Result<Events, String> {
        self.read_capped(input, MAX_LINE_BYTES, MAX_TRACE_BYTES)
    }

    /// [`Reader::read_all`] with the caps as arguments, so tests can reach them.
    fn read_capped(
        mut self,
        input: &mut dyn BufRead,
        max_line: usize,
        max_total: u64,
    ) -> Result<Events, String> {
        let mut buf = Vec::new();
        let mut total = 0u64;
        loop {
            buf.clear();
            let got = input
                .take(max_line as u64 + 1)
                .read_until(b'\n', &mut buf)
                .map_err(|e| format!("reading: {e}"))?;
            if got == 0 {
                return Ok(self.finish());
            }
            total += got as u64;
            if total > max_total {
                return Err(format!(
                    "larger than {max_total} bytes; allowed: a trace of at most {max_total} bytes (cut a longer capture to a window first)"
                ));
            }
            if buf.len() > max_line && buf.last() != Some(&b'\n') {
                let n = self.line_no + 1;
                if buf.contains(&0) {
                    return Err(format!("line {n}: {BINARY}"));
                }
                return Err(format!(
                    "line {n}: longer than {max_line} bytes; allowed: ftrace text, whose lines are at most a page (4096 bytes on x86)"
                ));
            }
            // A comm is bytes to the kernel; a stray non-UTF-8 byte must not lose the
            // line.
            let line = String::from_utf8_lossy(&buf);
            self.line(&line)?;
        }
    }

    fn comm(&mut self, s: &str) -> u32 {
        if let Some(&i) = self.intern.get(s) {
            return i;
        }
        let i = self.events.comms.len() as u32;
        self.events.comms.push(s.to_string());
        self.intern.insert(s.to_string(), i);
        i
    }

    fn switch(&mut self, fields: &str) -> Result<Kind, String> {
        let (prev, next) = fields
            .split_once(" ==> ")
            .ok_or("no ' ==> ' between the prev_ and next_ fields")?;
        let (prev_comm, prev_rest) = comm_before(prev, "prev_comm=", " prev_pid=")?;
        let (next_comm, next_rest) = comm_before(next, "next_comm=", " next_pid=")?;
        let prev_kv = KeyValues(prev_rest);
        let next_kv = KeyValues(next_rest);
        let prev_pid = prev_kv.num("prev_pid")?;
        let prev_state = task_state(prev_kv.get("prev_state")?)?;
        let next_pid = next_kv.num("next_pid")?;
        Ok(Kind::Switch {
            prev_pid,
            prev_comm: self.comm(prev_comm),
            prev_state,
            next_pid,
            next_comm: self.comm(next_comm),
        })
    }

    fn wakeup(&mut self, kind: WakeKind, fields: &str) -> Result<Kind, String> {
        let (comm, rest) = comm_before(fields, "comm=", " pid=")?;
        let pid = KeyValues(rest).num("pid")?;
        Ok(Kind::Wakeup {
            kind,
            pid,
            comm: self.comm(comm),
        })
    }

    fn migrate(&mut self, fields: &str) -> Result<Kind, String> {
        let (comm, rest) = comm_before(fields, "comm=", " pid=")?;
        let pid = KeyValues(rest).num("pid")?;
        Ok(Kind::Migrate {
            pid,
            comm: self.comm(comm),
        })
    }

    fn runtime(&mut self, fields: &str) -> Result<Kind, String> {
        let (comm, rest) = comm_before(fields, "comm=", " pid=")?;
        let kv = KeyValues(rest);
        let pid = kv.num("pid")?;
        let runtime = kv.num("runtime")?;
        Ok(Kind::Runtime {
            pid,
            comm: self.comm(comm),
            runtime,
        })
    }
}

/// The part of an event line the reports read.
struct Head<'a> {
    cpu: u32,
    ts: u64,
    event: &'a str,
    fields: &'a str,
}

/// Splits an event line at its `[CPU]` column: after it come ftrace's flag characters
/// (optional), the time with its colon, and the event's name with its colon (perf
/// script's `sched:` prefix dropped). The first bracket that is followed by such a time
/// and name is the CPU column, so a comm holding `[1]` does not confuse it.
fn split_event_line(line: &str) -> Option<Head<'_>> {
    let mut from = 0;
    while let Some(open) = line[from..].find('[').map(|i| from + i) {
        from = open + 1;
        let close = open + line[open..].find(']')?;
        if let Some(head) = head_at(line, open, close) {
            return Some(head);
        }
    }
    None
}

/// The event line's parts if `line[open..=close]` is its `[CPU]` column.
fn head_at(line: &str, open: usize, close: usize) -> Option<Head<'_>> {
    let inner = line[open + 1..close].trim();
    if inner.is_empty() || !inner.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let cpu = inner.parse::<u32>().ok()?;
    let mut rest = &line[close + 1..];
    let mut ts = None;
    // At most two tokens before the event name: the flags (absent in perf script and
    // with ftrace's irq-info off), then the time.
    for _ in 0..2 {
        let (tok, after) = next_token(rest)?;
        rest = after;
        if let Some(t) = tok.strip_suffix(':').and_then(parse_time) {
            ts = Some(t);
            break;
        }
    }
    let ts = ts?;
    let (tok, after) = next_token(rest)?;
    let name = tok.strip_suffix(':')?;
    let event = name.rsplit(':').next().unwrap_or(name);
    Some(Head {
        cpu,
        ts,
        event,
        fields: after.trim(),
    })
}

/// The next whitespace-separated token and the text after it.
fn next_token(s: &str) -> Option<(&str, &str)> {
    let s = s.trim_start();
    if s.is_empty() {
        return None;
    }
    let end = s.find(char::is_whitespace).unwrap_or(s.len());
    Some((&s[..end], &s[end..]))
}

/// `SECONDS.FRACTION` as ns; the fraction's digits past the ninth are dropped.
pub(crate) fn parse_time(s: &str) -> Option<u64> {
    let (secs, frac) = s.split_once('.')?;
    if secs.is_empty()
        || frac.is_empty()
        || !secs.bytes().all(|b| b.is_ascii_digit())
        || !frac.bytes().all(|b| b.is_ascii_digit())
    {
        return None;
    }
    let secs: u64 = secs.parse().ok()?;
    let mut ns = 0u64;
    for i in 0..9 {
        let d = frac.as_bytes().get(i).map_or(0, |b| u64::from(b - b'0'));
        ns = ns * 10 + d;
    }
    secs.checked_mul(1_000_000_000)?.checked_add(ns)
}

/// `N` of a `# entries-in-buffer/entries-written: A/B   #P:N` header line.
fn header_cpus(rest: &str) -> Option<u32> {
    let i = rest.find("#P:")?;
    let digits: String = rest[i + 3..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits
        .parse()
        .ok()
        .filter(|p: &u32| (1..=MAX_CPU + 1).contains(p))
}

/// `M` of ftrace's `CPU:N [LOST M EVENTS]` line.
fn lost_events(line: &str) -> Option<u64> {
    let rest = line.strip_prefix("CPU:")?;
    let i = rest.find("[LOST ")?;
    let tail = &rest[i + 6..];
    let end = tail.find(' ')?;
    tail[..end].parse().ok()
}

/// The comm after `key` up to the last `next_key` (a comm may hold spaces), and the text
/// from that key on.
fn comm_before<'a>(s: &'a str, key: &str, next_key: &str) -> Result<(&'a str, &'a str), String> {
    let field = key.trim_end_matches('=');
    let rest = s
        .trim_start()
        .strip_prefix(key)
        .ok_or_else(|| format!("no {field} field"))?;
    let at = rest
        .rfind(next_key)
        .ok_or_else(|| format!("no {} field", next_key.trim().trim_end_matches('=')))?;
    Ok((&rest[..at], &rest[at + 1..]))
}

/// Space-separated `key=value` fields.
struct KeyValues<'a>(&'a str);

impl<'a> KeyValues<'a> {
    fn get(&self, key: &str) -> Result<&'a str, String> {
        self.0
            .split_whitespace()
            .find_map(|kv| {
                kv.split_once('=')
                    .filter(|(k, _)| *k == key)
                    .map(|(_, v)| v)
            })
            .ok_or_else(|| format!("no {key} field"))
    }

    fn num<T: std::str::FromStr>(&self, key: &str) -> Result<T, String> {
        let v = self.get(key)?;
        v.parse()
            .map_err(|_| format!("{key}={v} is not a non-negative integer"))
    }
}

/// `prev_state`'s letter as perf reads it: the first letter printed (the lowest bit
/// set, as `__print_flags` prints them in bit order), `R` for `R` and `R+`. A raw
/// number (`trace-cmd report -R`) is decoded the same way from `SDTtXZPI`.
fn task_state(v: &str) -> Result<StateChar, String> {
    const STATES: &[u8] = b"SDTtXZPI";
    let first = v.bytes().next().ok_or("prev_state is empty")?;
    if first.is_ascii_digit() {
        let bits: u64 = v
            .parse()
            .map_err(|_| format!("prev_state={v} is neither letters nor a number"))?;
        let bit = bits.trailing_zeros() as usize;
        return Ok(if bits == 0 || bit >= STATES.len() {
            b'R'
        } else {
            STATES[bit]
        });
    }
    // sched_switch prints `R`, or the state bits as letters joined by `|` (6.12's
    // SDTtXZPI; kernels before 4.14 also x, K, W and N), with `+` after a preempted task's
    // state; anything else is not a kernel's and is refused rather than read by its
    // first letter.
    let body = v.strip_suffix('+').unwrap_or(v);
    let letters_ok = !body.is_empty()
        && body
            .split('|')
            .all(|p| p.len() == 1 && "RSDTtXZPIxKWN".contains(p));
    if !letters_ok {
        return Err(format!(
            "prev_state={v} is not a state; allowed: R, or letters of SDTtXZPI (xKWN before 4.14) joined by |, then + if preempted, or a number"
        ));
    }
    Ok(first)
}

/// The start of a refused line, short enough for a one-line error.
fn excerpt(s: &str) -> String {
    let mut e: String = s.chars().take(60).collect();
    if e.len() < s.len() {
        e.push_str("...");
    }
    e
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Result<Events, String> {
        Reader::new().read_all(&mut text.as_bytes())
    }

    #[test]
    fn ftrace_and_perf_script_lines_give_the_same_event() {
        let ftrace = "          <idle>-0       [003] d..2.     1.000500: sched_switch: prev_comm=swapper/3 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=my task next_pid=7 next_prio=120\n";
        let perf = "         swapper     0 [003]     1.000500:       sched:sched_switch: prev_comm=swapper/3 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=my task next_pid=7 next_prio=120\n";
        let a = read(ftrace).unwrap();
        let b = read(perf).unwrap();
        assert_eq!(a.events, b.events);
        assert_eq!(a.events[0].ts, 1_000_500_000);
        assert_eq!(a.events[0].cpu, 3);
        let Kind::Switch {
            next_pid,
            next_comm,
            ..
        } = a.events[0].kind
        else {
            panic!("not a switch");
        };
        assert_eq!((next_pid, a.comm(next_comm)), (7, "my task"));
    }

    #[test]
    fn tgid_columns_and_absent_flags_are_read() {
        let tgid = "       bash-1234    (   1200) [002] d..2. 7.000001: sched_waking: comm=cat pid=5 prio=120 target_cpu=002\n";
        let noflags = "       bash-1234    [002] 7.000001: sched_waking: comm=cat pid=5 prio=120 target_cpu=002\n";
        let a = read(tgid).unwrap();
        assert_eq!(a.events, read(noflags).unwrap().events);
        assert_eq!((a.events[0].cpu, a.events[0].ts), (2, 7_000_001_000));
    }

    #[test]
    fn states_read_as_perf_reads_them() {
        assert_eq!(task_state("R+"), Ok(b'R'));
        assert_eq!(task_state("S|D"), Ok(b'S'));
        assert_eq!(task_state("D"), Ok(b'D'));
        assert_eq!(task_state("256"), Ok(b'R'));
        assert_eq!(task_state("2"), Ok(b'D'));
        assert!(task_state("?").is_err());
        // Issue 50 row 9: letters no kernel prints are refused, not read by the first.
        assert_eq!(task_state("D|K"), Ok(b'D'));
        for bad in ["QQQ", "SQ", "S|", "S||D", "+", "Sleeping"] {
            let e = task_state(bad).unwrap_err();
            assert!(
                e.starts_with(&format!("prev_state={bad} is not a state; allowed: R, ")),
                "{e}"
            );
        }
    }

    #[test]
    fn headers_lost_lines_and_other_events_are_kept_apart() {
        let text = "# entries-in-buffer/entries-written: 3/3   #P:4\n\
                    CPU:2 [LOST 17 EVENTS]\n\
                    bash-12 [001] d..1. 5.000001: cpu_idle: state=1 cpu_id=1\n\
                    bash-12 [001] d..2. 5.000002: sched_waking: comm=cat pid=13 prio=120 target_cpu=001\n";
        let e = read(text).unwrap();
        assert_eq!(e.cpus_header, Some(4));
        assert_eq!(e.lost, (17, 1));
        assert_eq!(e.lines, 2);
        assert_eq!(e.events.len(), 1);
        assert!(e.has_waking);
    }

    #[test]
    fn bad_lines_are_refused_with_their_number() {
        let e = read("# x\nhello world\n").unwrap_err();
        assert!(
            e.starts_with("line 2: not an event line 'hello world'"),
            "{e}"
        );
        let e = read("a-1 [000] d..2. 1.0: sched_switch: prev_comm=a prev_pid=x prev_prio=1 prev_state=S ==> next_comm=b next_pid=2 next_prio=1\n").unwrap_err();
        assert!(
            e.contains("prev_pid=x is not a non-negative integer"),
            "{e}"
        );
        let e = read("a-1 [99999] d..2. 1.0: sched_waking: comm=a pid=1 prio=1 target_cpu=0\n")
            .unwrap_err();
        assert!(e.contains("CPU 99999 is out of range"), "{e}");
        assert!(read("\0\0\0").unwrap_err().contains("binary data"));
    }

    /// An input that never ends, or a long run without a newline, is refused once the
    /// cap is read, not buffered whole: `take` stops the read one byte past each cap.
    #[test]
    fn lines_and_inputs_past_their_caps_are_refused_while_reading() {
        let line = "# header\n";
        let mut zeros = std::io::BufReader::new(std::io::repeat(0));
        let e = Reader::new()
            .read_capped(&mut zeros, 64, 1 << 20)
            .unwrap_err();
        assert_eq!(e, format!("line 1: {BINARY}"));
        let mut letters = std::io::BufReader::new(std::io::repeat(b'a'));
        let e = Reader::new()
            .read_capped(&mut letters, 64, 1 << 20)
            .unwrap_err();
        assert!(
            e.starts_with("line 1: longer than 64 bytes; allowed: ftrace text"),
            "{e}"
        );
        // A line of exactly the cap, newline included, is read.
        let exact = format!("#{}\n", "x".repeat(62));
        assert!(Reader::new()
            .read_capped(&mut exact.as_bytes(), 64, 1 << 20)
            .is_ok());
        let mut endless = line
            .as_bytes()
            .chain(std::io::BufReader::new(std::io::repeat(b'\n')));
        let e = Reader::new()
            .read_capped(&mut endless, 64, 4096)
            .unwrap_err();
        assert!(
            e.starts_with("larger than 4096 bytes; allowed: a trace of at most 4096 bytes"),
            "{e}"
        );
    }

    #[test]
    fn unordered_lines_are_sorted_stably() {
        let text = "a-1 [001] 2.000000: sched_waking: comm=a pid=1 prio=1 target_cpu=0\n\
                    b-2 [000] 1.000000: sched_waking: comm=b pid=2 prio=1 target_cpu=0\n\
                    c-3 [000] 1.000000: sched_waking: comm=c pid=3 prio=1 target_cpu=0\n";
        let e = read(text).unwrap();
        let pids: Vec<u32> = e
            .events
            .iter()
            .map(|e| match e.kind {
                Kind::Wakeup { pid, .. } => pid,
                _ => 0,
            })
            .collect();
        assert_eq!(pids, [2, 3, 1]);
    }
}
