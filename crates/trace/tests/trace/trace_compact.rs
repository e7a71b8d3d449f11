//! Perfetto's compact sched encoding against the full form (the same stream as
//! trace_processor rebuilds it, and smaller), and the Python checker of validation/perfetto
//! on written files of both forms.

use crate::trace_support;

use trace_support::*;

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
        root_domains: vec![],
        cgroups: vec![],
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
