//! The trace.dat writer on a hand-built trace with every event kind: the file read back
//! part by part with the crate's own reader (header, formats, cmdlines, options, each
//! CPU's pages and events), determinism, and, where trace-cmd is installed (CI sets
//! FAIRSIM_REQUIRE_TRACE_CMD so that it cannot be skipped there), `trace-cmd report` and
//! `trace-cmd report -R` of the file against the trace-cmd text layouts byte for byte and
//! against the ftrace text event by event.

use std::collections::BTreeMap;
use std::process::Command;

use fairsim_trace::current::CurrentTasks;
use fairsim_trace::ftrace::prev_state_text;
use fairsim_trace::tracecmd::{write_report, write_report_raw};
use fairsim_trace::tracedat::read::{read_trace_dat, DatEvent};
use fairsim_trace::{
    write_ftrace_text, write_trace_dat, BalanceKind, PrevState, Trace, TraceEvent,
};

use crate::trace_support::*;

const LONG_GROUP: &str = "/a/group/whose/path/is/long/enough/that/its/throttle/event/needs/more/than/one/hundred/and/twelve/bytes/of/data";

/// Four CPUs (the last without events), every event kind, gaps of more than 2^27 ns
/// (time extends) and 2^32 ns, a record longer than 112 bytes (length in `array[0]`),
/// a span longer than the sched_tp module's 31 characters, and enough switches on CPU 0
/// to fill several pages.
fn every_event() -> Trace {
    let mut t = sample();
    t.cpus = 4;
    t.initial.push(0);
    t.root_domains = vec!["f".into(), "ffffffff,ffffffff,ffffffff,ffffffff,ff".into()];
    t.cgroups = vec!["/".into(), LONG_GROUP.into()];
    // The sample's last record is at 1234 s; the rest follow it.
    let mut ts = 1_300_000_000_000;
    let mut push = |cpu: u32, gap: u64, event: TraceEvent| {
        ts += gap;
        t.records.push(rec(ts, cpu, event));
    };
    push(
        0,
        200_000_000,
        TraceEvent::Overutilized {
            rd: 0,
            overutilized: true,
        },
    );
    push(
        1,
        5_000_000_000,
        TraceEvent::Overutilized {
            rd: 1,
            overutilized: false,
        },
    );
    push(
        2,
        1,
        TraceEvent::Feec {
            pid: 3,
            prev_cpu: 2,
            dst_cpu: -1,
        },
    );
    push(
        0,
        10,
        TraceEvent::CfsThrottle {
            group: 1,
            h_nr_queued: 2,
            runtime_remaining: -159_423,
            pool: 0,
        },
    );
    push(
        0,
        90_799_308,
        TraceEvent::CfsUnthrottle {
            group: 1,
            h_nr_queued: 2,
            throttled_ns: 90_799_308,
            pool: 46_999_999,
        },
    );
    push(
        2,
        0,
        TraceEvent::CfsRefill {
            group: 0,
            throttled: 4,
            runtime: 50_000_000,
            periods: 1,
        },
    );
    push(1, 3, TraceEvent::CpuIdle { state: 2 });
    push(2, 0, TraceEvent::LockSpin { rq: 1, dur: 250 });
    push(
        2,
        0,
        TraceEvent::Balance {
            kind: BalanceKind::NohzIdle,
            level: 9,
            groups: 1,
            pulled: 0,
            dur: 1,
        },
    );
    for i in 0..200 {
        let (prev, next, st) = if i % 2 == 0 {
            (0, 1, PrevState::Running)
        } else {
            (1, 0, PrevState::Preempted)
        };
        push(0, 700, switch(prev, st, next));
        push(1, 0, wakeup(2, 1));
    }
    push(0, 1, switch(0, PrevState::Dead, 2));
    t
}

fn dat(t: &Trace) -> Vec<u8> {
    let mut out = Vec::new();
    write_trace_dat(t, &mut out).unwrap();
    out
}

/// Each event's `ID` by name, from the format texts.
fn ids(systems: &[(String, Vec<String>)]) -> BTreeMap<u16, String> {
    let mut out = BTreeMap::new();
    for (_, formats) in systems {
        for f in formats {
            let mut lines = f.lines();
            let name = lines.next().unwrap().strip_prefix("name: ").unwrap();
            let id = lines.next().unwrap().strip_prefix("ID: ").unwrap();
            assert_eq!(lines.next(), Some("format:"), "{name}");
            assert!(f.contains("\n\nprint fmt: \""), "{name}");
            assert!(f.ends_with('\n'), "{name}");
            out.insert(id.parse().unwrap(), name.to_string());
        }
    }
    out
}

fn i32_at(e: &DatEvent, off: usize) -> i32 {
    i32::from_le_bytes(e.data[off..off + 4].try_into().unwrap())
}

fn cstr_at(e: &DatEvent, off: usize, len: usize) -> String {
    let b = &e.data[off..off + len];
    let n = b.iter().position(|&c| c == 0).unwrap_or(len);
    String::from_utf8(b[..n].to_vec()).unwrap()
}

#[test]
fn trace_dat_reads_back_part_by_part() {
    let t = every_event();
    let bytes = dat(&t);
    let f = read_trace_dat(&bytes).unwrap();
    assert_eq!(f.page_size, 4096);
    assert!(f
        .header_page
        .contains("\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n"));
    assert!(f
        .header_page
        .contains("\tfield: char data;\toffset:16;\tsize:4080;"));
    assert!(f.header_event.contains("\ttime_extend : type == 30\n"));
    let names: Vec<&str> = f.systems.iter().map(|(s, _)| s.as_str()).collect();
    assert_eq!(names, ["sched", "power", "fairsim"]);
    let ids = ids(&f.systems);
    assert_eq!(ids.len(), 16, "every event once, ids unique");
    let switch_fmt = &f.systems[0].1[0];
    assert!(switch_fmt.contains("\tfield:long prev_state;\toffset:32;\tsize:8;\tsigned:1;\n"));
    assert!(switch_fmt.contains("{ 0x00000080, \"I\" }) : \"R\""));
    assert_eq!(f.cmdlines, "1 worker\n2 worker-t\n3 hog\n");
    assert_eq!(f.cpus, 4);
    let clock = &f.options.iter().find(|(id, _)| *id == 4).unwrap().1;
    assert!(clock.starts_with(b"[local] global"));
    assert_eq!(clock.last(), Some(&0));
    let cpus = &f.options.iter().find(|(id, _)| *id == 8).unwrap().1;
    assert_eq!(cpus, &4u32.to_le_bytes());

    // The CPU data starts on a page and runs back to back; CPU 3 has none.
    assert_eq!(f.cpu_data[0].0 % 4096, 0);
    assert!(f.cpu_data[0].1 >= 3 * 4096, "CPU 0's switches fill pages");
    for w in f.cpu_data.windows(2) {
        assert_eq!(w[0].0 + w[0].1, w[1].0);
    }
    assert_eq!(f.cpu_data[3].1, 0);
    assert_eq!(
        f.cpu_data[2].0 + f.cpu_data[2].1,
        bytes.len() as u64,
        "the file ends with the data"
    );

    // Every record is an event on its CPU, in order, at its time, with its name and the
    // task current on the CPU.
    let mut cur = CurrentTasks::new(&t);
    let mut per_cpu: Vec<Vec<(u64, u32)>> = vec![Vec::new(); 4];
    for r in &t.records {
        per_cpu[r.cpu as usize].push((r.ts, cur.observe(r)));
    }
    for (cpu, evs) in f.events.iter().enumerate() {
        let want = &per_cpu[cpu];
        assert_eq!(evs.len(), want.len(), "CPU {cpu}");
        for (e, (ts, pid)) in evs.iter().zip(want) {
            assert_eq!(e.ts, *ts, "CPU {cpu}");
            assert_eq!(e.pid(), *pid as i32, "CPU {cpu} at {ts}");
            assert!(ids.contains_key(&e.id()));
        }
    }
    let records: Vec<_> = t.records.iter().filter(|r| r.cpu == 0).collect();
    for (e, r) in f.events[0].iter().zip(records) {
        if let TraceEvent::Switch {
            prev,
            prev_state,
            next,
        } = r.event
        {
            assert_eq!(ids[&e.id()], "sched_switch");
            assert_eq!(i32_at(e, 24), prev as i32);
            let state = i64::from_le_bytes(e.data[32..40].try_into().unwrap());
            assert_eq!(state, prev_state.bits());
            assert_eq!(i32_at(e, 56), next as i32);
            assert_eq!(cstr_at(e, 40, 16), t.comm(next, 0));
        }
    }
    // The throttle's record is longer than 112 bytes, its cgroup a __data_loc string.
    let throttle = f.events[0]
        .iter()
        .find(|e| ids[&e.id()] == "fairsim_cfs_throttle")
        .unwrap();
    assert!(throttle.data.len() > 112);
    let loc = u32::from_le_bytes(throttle.data[8..12].try_into().unwrap()) as usize;
    let (off, len) = (loc & 0xffff, loc >> 16);
    assert_eq!(cstr_at(throttle, off, len), LONG_GROUP);
    // The sched_tp span keeps 31 characters.
    let ou = f.events[1]
        .iter()
        .find(|e| ids[&e.id()] == "sched_overutilized")
        .unwrap();
    assert_eq!(cstr_at(ou, 12, 32), &t.root_domains[1][..31]);
}

#[test]
fn trace_dat_same_trace_same_bytes() {
    let t = every_event();
    assert_eq!(dat(&t), dat(&t));
    let mut other = t.clone();
    other.records.pop();
    assert_ne!(dat(&t), dat(&other));
}

#[test]
fn trace_dat_refuses_what_it_did_not_write() {
    let bytes = dat(&sample());
    assert!(read_trace_dat(&bytes[..bytes.len() - 1]).is_err());
    let mut v7 = bytes.clone();
    v7[10] = b'7';
    let e = read_trace_dat(&v7).unwrap_err();
    assert!(e.starts_with("trace.dat: magic and version"), "{e}");
}

/// `trace-cmd report ARGS FILE`, or None where trace-cmd is not installed (outside CI).
fn trace_cmd(args: &[&str], file: &std::path::Path) -> Option<String> {
    let out = match Command::new("trace-cmd")
        .arg("report")
        .args(args)
        .arg(file)
        .output()
    {
        Ok(out) => out,
        Err(_) => {
            assert!(
                std::env::var_os("FAIRSIM_REQUIRE_TRACE_CMD").is_none(),
                "FAIRSIM_REQUIRE_TRACE_CMD is set but trace-cmd cannot run"
            );
            eprintln!("skipped: trace-cmd is not installed");
            return None;
        }
    };
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "trace-cmd report {args:?}: {stderr}");
    assert!(
        stderr.trim().is_empty(),
        "trace-cmd report {args:?} warned: {stderr}"
    );
    Some(String::from_utf8(out.stdout).unwrap())
}

/// `(CPU, time, event, text)` of the lines of an ftrace or trace-cmd text, sorted.
fn events_of(text: &str, raw_to_ftrace: bool) -> Vec<(String, String, String, String)> {
    let mut out: Vec<_> = text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.starts_with("cpus="))
        .map(|l| {
            let open = l.find(" [").unwrap();
            let cpu = l[open + 2..open + 5].to_string();
            let rest = &l[open + 6..];
            let (time, rest) = rest.split_once(": ").unwrap();
            let time = time.split_whitespace().last().unwrap().to_string();
            let (name, info) = rest.split_once(": ").unwrap();
            let mut info = info.trim_start().to_string();
            if raw_to_ftrace {
                info = ftrace_info(name, &info);
            }
            (cpu, time, name.to_string(), info)
        })
        .collect();
    out.sort();
    out
}

/// A `trace-cmd report -R` text as the ftrace text prints the same fields.
fn ftrace_info(name: &str, raw: &str) -> String {
    match name {
        "sched_switch" => {
            let (head, state) = raw.split_once(" prev_state=").unwrap();
            let (bits, tail) = state.split_once(' ').unwrap();
            let bits: i64 = bits.parse().unwrap();
            format!("{head} prev_state={} ==> {tail}", prev_state_text(bits))
        }
        "sched_process_fork" => {
            raw.replacen("parent_comm=", "comm=", 1)
                .replacen("parent_pid=", "pid=", 1)
        }
        "sched_overutilized" => raw.replacen("span=", "span=0x", 1),
        _ => raw.to_string(),
    }
}

#[test]
fn trace_cmd_reports_every_event_as_the_text_layouts_say() {
    let mut t = every_event();
    // The sched_tp span's cut is the one difference from the ftrace text.
    t.root_domains[1].truncate(31);
    let dir = std::env::temp_dir().join(format!("fairsim-trace-dat-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("every.dat");
    std::fs::write(&file, dat(&t)).unwrap();
    let Some(report) = trace_cmd(&[], &file) else {
        return;
    };
    let raw = trace_cmd(&["-R"], &file).unwrap();
    let _ = std::fs::remove_dir_all(&dir);

    let mut ours = Vec::new();
    write_report(&t, &mut ours).unwrap();
    assert_eq!(String::from_utf8(ours).unwrap(), report);
    let mut ours = Vec::new();
    write_report_raw(&t, &mut ours).unwrap();
    assert_eq!(String::from_utf8(ours).unwrap(), raw);

    // Every event of the ftrace text, with the same fields.
    assert_eq!(raw.lines().count(), t.records.len() + 1);
    assert_eq!(events_of(&raw, true), events_of(&ftrace_text(&t), false));
}

#[test]
fn an_empty_trace_is_a_file_trace_cmd_reads() {
    let mut t = sample();
    t.records.clear();
    let bytes = dat(&t);
    let f = read_trace_dat(&bytes).unwrap();
    assert!(f.cpu_data.iter().all(|&(_, size)| size == 0));
    assert!(f.events.iter().all(Vec::is_empty));
    let dir = std::env::temp_dir().join(format!("fairsim-trace-dat-empty-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("empty.dat");
    std::fs::write(&file, &bytes).unwrap();
    let report = trace_cmd(&[], &file);
    let _ = std::fs::remove_dir_all(&dir);
    let Some(report) = report else {
        return;
    };
    let mut ours = Vec::new();
    write_report(&t, &mut ours).unwrap();
    assert_eq!(String::from_utf8(ours).unwrap(), report);
    assert_eq!(report, "cpus=3\n");
}

/// `every_event` with the sched_tp load-tracking events of `--trace-events pelt`, a group
/// path longer than their 63-byte `path` among them.
fn with_load_tracking() -> Trace {
    let mut t = every_event();
    let long = "/".to_string() + &"g".repeat(70);
    t.cgroups.push(long);
    let ts = t.records.last().unwrap().ts;
    let events = [
        (
            1,
            TraceEvent::PeltCfs {
                group: 0,
                load: 1024,
                runnable: 207,
                util: 207,
                update_time: 1_074_929_664,
            },
        ),
        (
            1,
            TraceEvent::PeltCfs {
                group: 2,
                load: 3,
                runnable: 2,
                util: 1,
                update_time: 5,
            },
        ),
        (
            2,
            TraceEvent::PeltSe {
                pid: 3,
                load: 762,
                runnable: 161,
                util: 161,
                update_time: 1_089_789_952,
            },
        ),
        (
            2,
            TraceEvent::UtilEstCfs {
                group: 0,
                util: 207,
                util_est: 199,
            },
        ),
        (
            1,
            TraceEvent::UtilEstSe {
                pid: 1,
                util: 180,
                util_est: 200,
            },
        ),
        (
            0,
            TraceEvent::CpuCapacity {
                capacity: 381,
                capacity_orig: 381,
                capacity_curr: 270,
            },
        ),
    ];
    for (i, (cpu, e)) in events.into_iter().enumerate() {
        t.records.push(rec(ts + 1 + i as u64, cpu, e));
    }
    t
}

/// The load-tracking events' formats are in a trace.dat only when it holds one of them
/// (a trace without them keeps its bytes), and trace-cmd reports them as the text
/// layouts print them.
#[test]
fn load_tracking_events_are_listed_when_traced_and_reported_as_written() {
    let f = read_trace_dat(&dat(&every_event())).unwrap();
    assert_eq!(ids(&f.systems).len(), 16);
    let t = with_load_tracking();
    let f = read_trace_dat(&dat(&t)).unwrap();
    let ids = ids(&f.systems);
    assert_eq!(ids.len(), 21);
    let se = &f.systems[0]
        .1
        .iter()
        .find(|s| s.starts_with("name: sched_pelt_se\n"))
        .unwrap();
    assert!(
        se.contains("\tfield:unsigned long long update_time;\toffset:120;\tsize:8;\tsigned:0;\n")
    );
    let pelt_se = f.events[2]
        .iter()
        .find(|e| ids[&e.id()] == "sched_pelt_se")
        .unwrap();
    assert_eq!(cstr_at(pelt_se, 12, 64), "(null)");
    assert_eq!(cstr_at(pelt_se, 76, 16), t.comm(3, 2));
    let cfs = f.events[1]
        .iter()
        .filter(|e| ids[&e.id()] == "sched_pelt_cfs")
        .map(|e| cstr_at(e, 12, 64))
        .collect::<Vec<_>>();
    assert_eq!(cfs, ["/", &t.cgroups[2][..63]]);

    let mut text = Vec::new();
    write_ftrace_text(&t, &mut text).unwrap();
    let text = String::from_utf8(text).unwrap();
    assert!(text.contains(
        "sched_pelt_se: cpu=2 path=(null) comm=hog pid=3 load=762 runnable=161 util=161 update_time=1089789952\n"
    ));
    assert!(text.contains(
        "sched_util_est_se: cpu=1 path=(null) comm=worker pid=1 enqueued=200 ewma=200 util=180\n"
    ));
    assert!(text.contains("sched_util_est_cfs: cpu=2 path=/ enqueued=199 ewma=0 util=207\n"));
    assert!(text
        .contains("sched_cpu_capacity: cpu=0 capacity=381 capacity_orig=381 capacity_curr=270\n"));

    let mut t = t;
    t.root_domains[1].truncate(31);
    let dir = std::env::temp_dir().join(format!("fairsim-trace-dat-pelt-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("pelt.dat");
    std::fs::write(&file, dat(&t)).unwrap();
    let Some(report) = trace_cmd(&[], &file) else {
        return;
    };
    let raw = trace_cmd(&["-R"], &file).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    let mut ours = Vec::new();
    write_report(&t, &mut ours).unwrap();
    assert_eq!(String::from_utf8(ours).unwrap(), report);
    let mut ours = Vec::new();
    write_report_raw(&t, &mut ours).unwrap();
    assert_eq!(String::from_utf8(ours).unwrap(), raw);
}
