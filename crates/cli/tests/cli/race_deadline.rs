//! `fairsim race` keeps to its `--duration` on a host with far fewer CPUs than the
//! machine it emulates, and a run that cannot stop ends with the watchdog's one-line
//! error.
//!
//! The wall-time bounds below are hang guards with a wide margin, not speed targets:
//! before the driving threads kept their own deadline, the 2048-thread run took 85 s on
//! a 2-CPU host for its 200 ms.

use std::process::{Command, Output};
use std::time::{Duration, Instant};

use crate::common::text;

/// Far above what these runs take (under 3 s on a loaded 2-CPU host), far below the
/// minutes an overrun took.
const HANG_GUARD: Duration = Duration::from_secs(20);

fn fairsim(args: &[&str]) -> (Output, Duration) {
    let t0 = Instant::now();
    let o = Command::new(env!("CARGO_BIN_EXE_fairsim"))
        .args(args)
        .output()
        .expect("run fairsim");
    (o, t0.elapsed())
}

#[test]
fn a_512_cpu_race_with_default_threads_ends_near_its_duration() {
    let (o, took) = fairsim(&[
        "race",
        "--smp",
        "sockets=2,cores=128,threads=2",
        "--duration",
        "100ms",
    ]);
    let (out, err) = (text(&o.stdout), text(&o.stderr));
    assert!(o.status.success(), "{err}");
    assert!(took < HANG_GUARD, "took {took:?}\n{out}");
    assert!(out.contains("conservation: ok (512 tokens"), "{out}");
    let host = std::thread::available_parallelism().map_or(1, usize::from);
    if host * 8 < 512 {
        let threads = host * 8;
        let note = format!(
            "fairsim: note: race drives 512 CPUs with {threads} threads (at most 8 per host CPU, {host} host CPUs); use --threads to change"
        );
        assert_eq!(err.trim_end(), note, "{err}");
        assert!(out.contains(&format!("on {threads} threads")), "{out}");
    }
}

#[test]
fn one_thread_per_cpu_on_2048_cpus_still_ends_near_its_duration() {
    let (o, took) = fairsim(&[
        "race",
        "--smp",
        "sockets=8,cores=128,threads=2",
        "--duration",
        "200ms",
        "--threads",
        "2048",
    ]);
    let (out, err) = (text(&o.stdout), text(&o.stderr));
    assert!(o.status.success(), "{err}");
    assert!(took < HANG_GUARD, "took {took:?}\n{out}");
    assert!(out.contains("on 2048 threads"), "{out}");
    assert!(out.contains("conservation: ok (2048 tokens"), "{out}");
    // An explicit --threads gets no note.
    assert!(!err.contains("note:"), "{err}");
}

#[test]
fn a_thread_that_cannot_stop_is_reported_by_the_watchdog_in_one_line() {
    // One thread drives every CPU and each token spins for 1 s: the thread is mid-spin
    // when the 100 ms run ends, and the 1 ms the watchdog allows runs out. The run is
    // long enough that starting the thread on a loaded host (which the run and the
    // watchdog together bound too) does not end it first.
    let (o, took) = fairsim(&[
        "race",
        "--threads",
        "1",
        "--run",
        "1s",
        "--duration",
        "100ms",
        "--watchdog",
        "1ms",
    ]);
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("race watchdog: 1 of 1 threads"), "{err}");
    assert!(err.contains("--watchdog"), "{err}");
    assert!(took < HANG_GUARD, "took {took:?}");
}
