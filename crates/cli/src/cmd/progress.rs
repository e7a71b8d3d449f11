//! A run's progress on stderr: a bar on a terminal, a line now and then in logs, nothing
//! for a short run that is piped.

use std::io::IsTerminal;
use std::time::{Duration, Instant};

use fairsim_engine::RunSpec;

use crate::error::CliError;

/// A progress bar on stderr when it is a terminal; nothing otherwise.
fn progress_bar(duration: u64) -> Option<indicatif::ProgressBar> {
    if !std::io::stderr().is_terminal() {
        return None;
    }
    let bar = indicatif::ProgressBar::new(duration / 1_000_000);
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "{spinner} emulating [{bar:40}] {pos}/{len} ms ({elapsed})",
        )
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    Some(bar)
}

/// Wall time before the first progress line when stderr is not a terminal: short runs
/// stay silent, a run that will take minutes says so early.
const FIRST_PROGRESS_LINE: Duration = Duration::from_secs(10);

/// Wall time between later progress lines.
const PROGRESS_LINE_EVERY: Duration = Duration::from_secs(60);

/// One progress line for logs: how far the emulation is and, at the rate so far, how much
/// wall time is left.
fn progress_line(now: u64, end: u64, elapsed: Duration) -> String {
    let done = now as f64 / end.max(1) as f64;
    let left = if done > 0.0 {
        format!(
            "about {:.0} s left at this rate",
            elapsed.as_secs_f64() * (1.0 - done) / done
        )
    } else {
        "no estimate yet".to_string()
    };
    format!(
        "fairsim: progress: emulated {:.3}s of {:.3}s ({:.1}%) in {:.0} s of wall time; {left}",
        now as f64 / 1e9,
        end as f64 / 1e9,
        done * 100.0,
        elapsed.as_secs_f64()
    )
}

/// Runs `spec` to its end, showing progress on stderr, and prints the build's topology
/// warnings first.
pub(crate) fn execute(spec: &RunSpec) -> Result<fairsim_engine::RunResult, CliError> {
    let bar = progress_bar(spec.config.duration);
    let mut last = 0u64;
    let started = Instant::now();
    let mut next_line = FIRST_PROGRESS_LINE;
    let mut progress = |now: u64, end: u64| {
        if let Some(b) = &bar {
            let ms = now / 1_000_000;
            if ms != last {
                last = ms;
                b.set_position(ms);
            }
        } else {
            // Logs and batch jobs get a line now and then instead of a bar.
            let elapsed = started.elapsed();
            if elapsed >= next_line {
                eprintln!("{}", progress_line(now, end, elapsed));
                next_line = elapsed + PROGRESS_LINE_EVERY;
            }
        }
    };
    let mut world = fairsim_engine::prepare(spec)?;
    // What `fairsim topology` prints about a machine the kernel would complain about
    // (an arch topology it calls broken, capacity asymmetry on SMT) applies to a run too.
    for w in &world.sched.topo.warnings {
        eprintln!("fairsim: warning: {w}");
    }
    let ran = world.run(&mut progress);
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    ran?;
    Ok(fairsim_engine::RunResult::from_world(spec, world))
}
