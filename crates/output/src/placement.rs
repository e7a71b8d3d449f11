//! Where wakeups went ([`fairsim_balance::select::stats`]): `select_task_rq_fair`'s paths,
//! `select_idle_sibling`'s outcomes and how far its LLC scans read, as the JSON's
//! `"wakeup_placement"` object, the summary's lines (with the longest wake-to-run delay by
//! the CPU the task ran on) and compare's and sweep's metrics.

use serde_json::{json, Value};

use fairsim_balance::select::stats::{SelectKind, SisOutcome, WakeStats};
use fairsim_engine::world::Outcome;

/// `n` as a percentage of `of`, 0 when `of` is.
pub(crate) fn pct(n: u64, of: u64) -> f64 {
    if of == 0 {
        0.0
    } else {
        n as f64 * 100.0 / of as f64
    }
}

/// `n` over `of`, 0 when `of` is.
pub(crate) fn ratio(n: u64, of: u64) -> f64 {
    if of == 0 {
        0.0
    } else {
        n as f64 / of as f64
    }
}

/// The JSON's `"wakeup_placement"` object.
pub(crate) fn json(w: &Outcome) -> Value {
    let s: &WakeStats = &w.sched().wake_stats;
    let sis: serde_json::Map<String, Value> = SisOutcome::ALL
        .iter()
        .map(|&o| (o.name().to_string(), json!(s.sis_count(o))))
        .collect();
    json!({
        "wakeups": s.calls_of(SelectKind::Wakeup),
        "forks": s.calls_of(SelectKind::Fork),
        "execs": s.calls_of(SelectKind::Exec),
        "eas": s.eas,
        "wake_wide": s.wake_wide,
        "wake_affine": s.affine_calls,
        "wake_affine_pulled": s.affine_pulled,
        "wake_slow_path": s.wake_slow_path,
        "select_idle_sibling": sis,
        "llc_scans": s.scans,
        "llc_scans_skipped": s.scans_skipped,
        "llc_scans_limited": s.scans_limited,
        "nr_idle_scan_sum": s.nr_idle_scan_sum,
        "nr_idle_scan_reads": s.nr_idle_scan_reads,
        "cpus_read": {
            "wakeups": s.cpus_scanned_of(SelectKind::Wakeup),
            "forks": s.cpus_scanned_of(SelectKind::Fork),
            "execs": s.cpus_scanned_of(SelectKind::Exec),
        },
        "wakeups_on_busy": s.wakeups_on_busy,
    })
}

/// The summary's lines on wakeup placement (none without a wakeup in the window).
pub(crate) fn summary_section(w: &Outcome) -> String {
    let s = &w.sched().wake_stats;
    let wakeups = s.calls_of(SelectKind::Wakeup);
    if wakeups == 0 {
        return String::new();
    }
    let mut out = format!(
        "wakeup placement: {wakeups} wakeups; wake_affine {} ({:.1}% to the waker's CPU), \
         wake_wide {}, slow path {}, EAS {}; {:.1}% onto a busy CPU\n",
        s.affine_calls,
        pct(s.affine_pulled, s.affine_calls),
        s.wake_wide,
        s.wake_slow_path,
        s.eas,
        pct(s.wakeups_on_busy, wakeups),
    );
    let calls = s.sis_calls();
    if calls > 0 {
        let outcomes: Vec<String> = SisOutcome::ALL
            .iter()
            .map(|&o| format!("{} {:.1}%", o.name(), pct(s.sis_count(o), calls)))
            .collect();
        out.push_str(&format!(
            "select_idle_sibling: {calls} calls: {}; {:.2} CPUs read per wakeup",
            outcomes.join(", "),
            ratio(s.cpus_scanned_of(SelectKind::Wakeup), wakeups),
        ));
        if s.nr_idle_scan_reads > 0 {
            out.push_str(&format!(
                "; SIS_UTIL nr_idle_scan mean {:.1}, {} of {} LLC scans skipped, {} stopped at the limit",
                ratio(s.nr_idle_scan_sum, s.nr_idle_scan_reads),
                s.scans_skipped,
                s.scans + s.scans_skipped,
                s.scans_limited,
            ));
        }
        out.push('\n');
    }
    // perf sched latency's max delay, by the CPU the woken task ran on: where a
    // placement left wakeups waiting.
    let worst = w
        .metrics()
        .cpus
        .iter()
        .enumerate()
        .max_by_key(|(c, m)| (m.wake_lat_max_ns, std::cmp::Reverse(*c)));
    if let Some((cpu, m)) = worst.filter(|(_, m)| m.wakeups_run > 0) {
        out.push_str(&format!(
            "wake-to-run delay by CPU: longest {:.1} us on cpu{cpu} (its mean {:.1} us over {} wakeups)\n",
            m.wake_lat_max_ns as f64 / 1000.0,
            ratio(m.wake_lat_sum_ns, m.wakeups_run) / 1000.0,
            m.wakeups_run,
        ));
    }
    out
}
