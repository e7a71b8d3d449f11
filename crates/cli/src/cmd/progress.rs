//! Feedback while a command runs, on stderr only (stdout's bytes never depend on it): a
//! bar with an ETA at a terminal, plain lines with `--progress` when stderr is piped, and
//! otherwise a line now and then for a run that takes minutes. Also the process-wide
//! interrupt flag that Ctrl-C and SIGTERM raise, which the runs here check between
//! events so that `compare`, `sweep` and `run` can write what has finished.

use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use fairsim_engine::World;
use fairsim_workloads::run::lasts_its_duration;
use fairsim_workloads::{RunResult, RunSpec};

use crate::error::CliError;

/// Exit status after an interrupt (128 + SIGINT, as a shell reports a Ctrl-C'd command).
pub(crate) const EXIT_INTERRUPTED: i32 = 130;

/// The environment variable of a hidden test hook: `FAIRSIM_INTERRUPT_AFTER=N` raises the
/// interrupt flag, as Ctrl-C would, once N units have finished (seeds of a `compare` on
/// both sides, points of a `sweep`), so that the tests of the interrupted outputs do not
/// depend on when a signal lands.
pub(crate) const INTERRUPT_AFTER_ENV: &str = "FAIRSIM_INTERRUPT_AFTER";

/// The flag Ctrl-C and SIGTERM raise; one for the process.
fn stop_flag() -> &'static Arc<AtomicBool> {
    static FLAG: OnceLock<Arc<AtomicBool>> = OnceLock::new();
    FLAG.get_or_init(|| Arc::new(AtomicBool::new(false)))
}

/// Makes SIGINT and SIGTERM raise the interrupt flag instead of killing the process; a
/// second signal, with the flag already up, exits at once with status 130 (a writer that
/// hangs can still be stopped). Called by the commands that write what has finished;
/// calling it again does nothing. If the handlers cannot be installed the signals keep
/// their default action, which is what they did before.
pub(crate) fn watch_interrupts() {
    static INSTALLED: OnceLock<()> = OnceLock::new();
    if KEEP_HANDLERS.load(Ordering::Relaxed) {
        return;
    }
    INSTALLED.get_or_init(|| {
        let flag = stop_flag();
        for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
            // The shutdown goes first: it acts on the second signal only, when the flag
            // the first one raised is already set.
            let _ = signal_hook::flag::register_conditional_shutdown(
                sig,
                EXIT_INTERRUPTED,
                Arc::clone(flag),
            );
            let _ = signal_hook::flag::register(sig, Arc::clone(flag));
        }
    });
}

/// Set by a caller that embeds fairsim (the Python package): its own SIGINT and SIGTERM
/// handlers stay, and [`watch_interrupts`] installs none.
static KEEP_HANDLERS: AtomicBool = AtomicBool::new(false);

/// Keeps the process's signal handlers for good: an embedding caller's Ctrl-C is its own
/// (Python's KeyboardInterrupt), and a second one must not end its process.
pub(crate) fn keep_signal_handlers() {
    KEEP_HANDLERS.store(true, Ordering::Relaxed);
}

/// Whether Ctrl-C or SIGTERM (or the test hook) asked the command to stop.
pub(crate) fn interrupted() -> bool {
    stop_flag().load(Ordering::Relaxed)
}

/// Raises the interrupt flag as a signal would (the test hook's way in).
fn interrupt() {
    stop_flag().store(true, Ordering::Relaxed);
}

/// `FAIRSIM_INTERRUPT_AFTER`'s count, when set.
pub(crate) fn interrupt_after() -> Result<Option<usize>, CliError> {
    match std::env::var(INTERRUPT_AFTER_ENV) {
        Ok(text) => text.trim().parse().map(Some).map_err(|_| {
            crate::error::invalid(INTERRUPT_AFTER_ENV, text, "a count of finished units")
        }),
        Err(_) => Ok(None),
    }
}

/// Raises the interrupt flag when `done` reached the test hook's count.
pub(crate) fn maybe_interrupt(hook: Option<usize>, done: usize) {
    if hook.is_some_and(|n| done >= n) {
        interrupt();
    }
}

/// Ends the process after an interrupt: flushes what the command wrote to stdout, says
/// `message` on stderr and exits with status 130. The commands call it once their
/// outputs are written.
///
/// Embedded ([`keep_signal_handlers`]), the process is the caller's: the same message is
/// said and the command unwinds with [`Interrupted`] instead, which `run_argv` catches.
pub(crate) fn exit_interrupted(out: &mut dyn Write, message: &str) -> ! {
    let _ = out.flush();
    eprintln!("fairsim: interrupted: {message}");
    if KEEP_HANDLERS.load(Ordering::Relaxed) {
        // resume_unwind, not panic!: no panic hook runs and nothing more is printed.
        std::panic::resume_unwind(Box::new(Interrupted(message.to_string())));
    }
    std::process::exit(EXIT_INTERRUPTED)
}

/// What an embedded command that was interrupted unwinds with: the message the command
/// line prints after `fairsim: interrupted: `.
pub(crate) struct Interrupted(pub(crate) String);

/// Lowers the interrupt flag: an embedded caller's next command starts uninterrupted.
pub(crate) fn clear_interrupt() {
    stop_flag().store(false, Ordering::Relaxed);
}

/// Raises the interrupt flag as Ctrl-C would: an embedding caller's Ctrl-C.
pub(crate) fn raise_interrupt() {
    interrupt();
}

/// How progress shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// stderr is a terminal: a bar redrawn in place.
    Bar,
    /// `--progress` with stderr piped: plain lines every few seconds and at each finished
    /// unit, no escape sequences.
    Lines,
    /// stderr piped, no `--progress`: a line only when the command runs for a while.
    Quiet,
}

impl Mode {
    /// The mode for stderr as it is: a bar at a terminal, else lines when `forced`
    /// (`--progress`), else quiet.
    pub(crate) fn detect(forced: bool) -> Mode {
        if std::io::stderr().is_terminal() {
            Mode::Bar
        } else if forced {
            Mode::Lines
        } else {
            Mode::Quiet
        }
    }

    /// When the first periodic line is due and how often the next ones are.
    fn cadence(self) -> (Duration, Duration) {
        match self {
            // Logs and batch jobs: a short run stays silent, one that takes minutes
            // says so early and then now and then.
            Mode::Quiet => (Duration::from_secs(10), Duration::from_secs(60)),
            // `--progress`: a line as soon as the command is under way, then every 5 s.
            Mode::Lines | Mode::Bar => (Duration::ZERO, Duration::from_secs(5)),
        }
    }
}

/// Wall time as a person reads it: `0.4 s`, `42 s`, `3 min 20 s`, `1 h 05 min`.
fn human(secs: f64) -> String {
    let s = secs.max(0.0).round() as u64;
    if secs < 9.95 {
        format!("{:.1} s", secs.max(0.0))
    } else if s < 90 {
        format!("{s} s")
    } else if s < 90 * 60 {
        format!("{} min {:02} s", s / 60, s % 60)
    } else {
        format!("{} h {:02} min", s / 3600, (s % 3600) / 60)
    }
}

/// What is left at the rate so far, with `done` the finished share (0..=1).
fn left(elapsed: Duration, done: f64) -> String {
    if done > 0.0 && done < 1.0 {
        format!(
            "about {} left",
            human(elapsed.as_secs_f64() * (1.0 - done) / done)
        )
    } else if done >= 1.0 {
        "done".to_string()
    } else {
        "no estimate yet".to_string()
    }
}

/// A bar's style: `template` with `{left}`, this module's estimate of what is left.
fn bar_style(template: &str) -> indicatif::ProgressStyle {
    indicatif::ProgressStyle::with_template(template)
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
        .with_key(
            "left",
            |s: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
                let _ = w.write_str(&left(s.elapsed(), f64::from(s.fraction())));
            },
        )
}

/// What stands for an estimate while a run's end is only a cap: its workloads end by
/// themselves, at a time nothing tells in advance, so the emulated share says nothing of
/// what is left (a hackbench run under the 3600 s cap would read "about 44 h left").
const NO_ESTIMATE_CAPPED: &str = "no estimate: the run ends when its workloads do";

/// One progress line of a run: how far the emulation is and, at the rate so far, how
/// much wall time is left (`capped`: the end is only a cap, so no estimate).
fn progress_line(now: u64, end: u64, elapsed: Duration, capped: bool) -> String {
    let done = now as f64 / end.max(1) as f64;
    format!(
        "fairsim: progress: emulated {:.3}s of {}{:.3}s ({:.1}%) in {:.0} s of wall time; {}",
        now as f64 / 1e9,
        if capped { "at most " } else { "" },
        end as f64 / 1e9,
        done * 100.0,
        elapsed.as_secs_f64(),
        if capped {
            NO_ESTIMATE_CAPPED.to_string()
        } else {
            left(elapsed, done)
        }
    )
}

/// Steps `world` to its end as [`World::run`] does (the same events, so the same
/// outputs), calling `progress` with (now, end) every 4096 events and at the end, and
/// stops between two events once the interrupt flag is up. Returns whether it stopped
/// early; a world stopped so is the world of a run whose end came at its current time.
fn step_to_end(
    world: &mut World,
    end: u64,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<bool, CliError> {
    while !world.ended() {
        world.step_batch(4096)?;
        if world.events() % 4096 == 0 {
            progress(world.now().0, end);
            if interrupted() {
                return Ok(true);
            }
        }
    }
    progress(world.now().0, end);
    Ok(false)
}

/// A run of `fairsim run`: its result and whether Ctrl-C stopped it before its end.
pub(crate) struct Executed {
    /// The world at the end (or where the interrupt stopped it) and the reports.
    pub result: RunResult,
    /// Whether the run stopped early, at `result.outcome.now()`.
    pub interrupted: bool,
}

/// Runs `spec` to its end (or to the interrupt), showing progress on stderr as `mode`
/// says, and prints the build's topology warnings first.
pub(crate) fn execute(spec: &RunSpec, mode: Mode) -> Result<Executed, CliError> {
    let capped = !lasts_its_duration(&spec.workloads, spec.config.duration);
    let bar = (mode == Mode::Bar).then(|| {
        let bar = indicatif::ProgressBar::new(spec.config.duration / 1_000_000);
        bar.set_style(bar_style(&if capped {
            format!("{{spinner}} emulating [{{bar:40}}] {{pos}}/{{len}} ms at most ({{elapsed}}, {NO_ESTIMATE_CAPPED})")
        } else {
            "{spinner} emulating [{bar:40}] {pos}/{len} ms ({elapsed}, {left})".to_string()
        }));
        bar
    });
    let mut last = 0u64;
    let started = Instant::now();
    let (first, every) = mode.cadence();
    let mut next_line = first;
    let mut progress = |now: u64, end: u64| {
        if let Some(b) = &bar {
            let ms = now / 1_000_000;
            if ms != last {
                last = ms;
                b.set_position(ms);
            }
        } else {
            let elapsed = started.elapsed();
            if elapsed >= next_line {
                eprintln!("{}", progress_line(now, end, elapsed, capped));
                next_line = elapsed + every;
            }
        }
    };
    let mut world = fairsim_workloads::prepare(spec)?;
    // What `fairsim topology` prints about a machine the kernel would complain about
    // (an arch topology it calls broken, capacity asymmetry on SMT) applies to a run too.
    for w in &world.sched().topo.warnings {
        eprintln!("fairsim: warning: {w}");
    }
    let ran = step_to_end(&mut world, spec.config.duration, &mut progress);
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    let stopped = ran?;
    if mode == Mode::Lines {
        // `--progress` always ends with where the run got to.
        eprintln!(
            "{}",
            // A capped run that ended by itself is done where it ended.
            match (capped, stopped) {
                (true, false) =>
                    progress_line(world.now().0, world.now().0, started.elapsed(), false),
                _ => progress_line(
                    world.now().0,
                    spec.config.duration,
                    started.elapsed(),
                    capped
                ),
            }
        );
    }
    Ok(Executed {
        result: RunResult::from_world(spec, world),
        interrupted: stopped,
    })
}

/// Runs `spec` for a batch (a compare's seed, a sweep's point): `progress` sees (now,
/// end) every 4096 events. `None` when the interrupt came first: a run stopped early has
/// no place in a table of finished runs.
pub(crate) fn run_batch_job(
    spec: &RunSpec,
    batch: &Batch,
    job: usize,
) -> Result<Option<RunResult>, CliError> {
    if interrupted() {
        return Ok(None);
    }
    if !lasts_its_duration(&spec.workloads, spec.config.duration) {
        batch.capped.store(true, Ordering::Relaxed);
    }
    let mut world = fairsim_workloads::prepare(spec)?;
    let mut progress = |now, end| batch.advance(job, now, end);
    if step_to_end(&mut world, spec.config.duration, &mut progress)? {
        return Ok(None);
    }
    Ok(Some(RunResult::from_world(spec, world)))
}

/// Progress over a batch of runs done in parallel (a compare's seeds, a sweep's points):
/// how many have finished and, counting the emulated time of those under way, how much
/// wall time is left.
pub(crate) struct Batch {
    /// `compare` or `sweep`, at the start of each line.
    what: &'static str,
    /// What the units are called (`runs`, `points`).
    unit: &'static str,
    mode: Mode,
    bar: Option<indicatif::ProgressBar>,
    total: usize,
    /// Each job's emulated share in thousandths (1000 once finished).
    shares: Vec<AtomicU32>,
    /// The sum of `shares`, kept as they change so that no update walks them all.
    sum: AtomicU64,
    /// Jobs finished, shared with the bar's estimate.
    done: Arc<AtomicUsize>,
    /// Whether a job whose end is only a cap has started ([`lasts_its_duration`]): until
    /// a job finishes, the emulated share then says nothing of what is left.
    capped: Arc<AtomicBool>,
    started: Instant,
    next_line: Mutex<Duration>,
}

impl Batch {
    /// Progress over `total` jobs, shown as `mode` says.
    pub(crate) fn new(what: &'static str, unit: &'static str, total: usize, mode: Mode) -> Batch {
        let done = Arc::new(AtomicUsize::new(0));
        let capped = Arc::new(AtomicBool::new(false));
        let bar = (mode == Mode::Bar).then(|| {
            let bar = indicatif::ProgressBar::new(total as u64 * 1000);
            let (d, c) = (Arc::clone(&done), Arc::clone(&capped));
            let style = indicatif::ProgressStyle::with_template(&format!(
                "{{spinner}} {what} [{{bar:30}}] {{msg}} ({{elapsed}}, {{left}})"
            ))
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
            .with_key(
                "left",
                move |s: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
                    let e = estimate(&d, &c, s.elapsed(), f64::from(s.fraction()));
                    let _ = w.write_str(&e);
                },
            );
            bar.set_style(style);
            bar.set_message(format!("0/{total} {unit} done"));
            bar.enable_steady_tick(Duration::from_millis(250));
            bar
        });
        Batch {
            what,
            unit,
            mode,
            bar,
            total,
            shares: (0..total).map(|_| AtomicU32::new(0)).collect(),
            sum: AtomicU64::new(0),
            done,
            capped,
            started: Instant::now(),
            next_line: Mutex::new(mode.cadence().0),
        }
    }

    /// Sets job `job`'s share to `thousandths` and returns the batch's finished share.
    fn set_share(&self, job: usize, thousandths: u32) -> f64 {
        let Some(slot) = self.shares.get(job) else {
            return self.fraction();
        };
        let old = slot.swap(thousandths, Ordering::Relaxed);
        if thousandths >= old {
            self.sum
                .fetch_add(u64::from(thousandths - old), Ordering::Relaxed);
        } else {
            self.sum
                .fetch_sub(u64::from(old - thousandths), Ordering::Relaxed);
        }
        self.fraction()
    }

    fn fraction(&self) -> f64 {
        self.sum.load(Ordering::Relaxed) as f64 / (self.total.max(1) as f64 * 1000.0)
    }

    /// Job `job` emulated `now` of `end` ns (an engine progress callback).
    pub(crate) fn advance(&self, job: usize, now: u64, end: u64) {
        let share = (now.min(end) as u128 * 1000 / u128::from(end.max(1))) as u32;
        let f = self.set_share(job, share.min(999));
        match &self.bar {
            Some(bar) => bar.set_position(self.sum.load(Ordering::Relaxed)),
            None => self.periodic(f),
        }
    }

    /// Job `job`, called `label` in lines (`base seed 3`), finished.
    pub(crate) fn finished(&self, job: usize, label: &str) {
        let f = self.set_share(job, 1000);
        let done = self.done.fetch_add(1, Ordering::Relaxed) + 1;
        match &self.bar {
            Some(bar) => {
                bar.set_message(format!("{done}/{} {} done", self.total, self.unit));
                bar.set_position(self.sum.load(Ordering::Relaxed));
            }
            None if self.mode == Mode::Lines => {
                eprintln!(
                    "fairsim: {}: {label} done: {done}/{} {} in {}; {}",
                    self.what,
                    self.total,
                    self.unit,
                    human(self.started.elapsed().as_secs_f64()),
                    estimate(&self.done, &self.capped, self.started.elapsed(), f)
                );
            }
            None => self.periodic(f),
        }
    }

    /// A line when one is due (every few seconds with `--progress`, now and then in
    /// logs).
    fn periodic(&self, f: f64) {
        let elapsed = self.started.elapsed();
        let Ok(mut next) = self.next_line.try_lock() else {
            // Another thread is writing the line.
            return;
        };
        if elapsed < *next {
            return;
        }
        *next = elapsed + self.mode.cadence().1;
        eprintln!(
            "fairsim: {}: {}/{} {} done, {:.0}% of the emulated time in {}; {}",
            self.what,
            self.done.load(Ordering::Relaxed),
            self.total,
            self.unit,
            f * 100.0,
            human(elapsed.as_secs_f64()),
            estimate(&self.done, &self.capped, elapsed, f)
        );
    }

    /// Clears the bar (before the command's own messages).
    pub(crate) fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

/// A batch's estimate: what is left at the rate so far, except while a job whose end is
/// only a cap runs and none has finished (its share stays near zero until it ends, and
/// would read as days); once jobs finish, their rate carries the estimate.
fn estimate(done: &AtomicUsize, capped: &AtomicBool, elapsed: Duration, f: f64) -> String {
    if capped.load(Ordering::Relaxed) && done.load(Ordering::Relaxed) == 0 {
        return "no estimate until a run finishes (runs end when their workloads do)".into();
    }
    left(elapsed, f)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn estimates_read_as_wall_time() {
        assert_eq!(human(0.42), "0.4 s");
        assert_eq!(human(42.4), "42 s");
        assert_eq!(human(200.0), "3 min 20 s");
        assert_eq!(human(3900.0), "65 min 00 s");
        assert_eq!(human(7500.0), "2 h 05 min");
        assert_eq!(
            left(Duration::from_secs(10), 0.25),
            "about 30 s left".to_string()
        );
        assert_eq!(left(Duration::from_secs(10), 0.0), "no estimate yet");
    }

    /// Issue 50 row 10: a hackbench point 0.003% through its 3600 s cap after 5 s gave
    /// "about 44 h 26 min left" for a sweep that took 107 s.
    #[test]
    fn a_capped_run_gives_no_estimate_from_its_cap() {
        let b = Batch::new("sweep", "points", 2, Mode::Quiet);
        b.capped.store(true, Ordering::Relaxed);
        b.advance(0, 100_000_000, 3_600_000_000_000);
        let e = estimate(&b.done, &b.capped, Duration::from_secs(5), b.fraction());
        assert_eq!(
            e,
            "no estimate until a run finishes (runs end when their workloads do)"
        );
        b.finished(0, "point 0");
        let e = estimate(&b.done, &b.capped, Duration::from_secs(5), b.fraction());
        assert_eq!(e, "about 5.0 s left");
        let line = progress_line(
            1_000_000_000,
            3_600_000_000_000,
            Duration::from_secs(5),
            true,
        );
        assert!(
            line.ends_with("emulated 1.000s of at most 3600.000s (0.0%) in 5 s of wall time; no estimate: the run ends when its workloads do"),
            "{line}"
        );
    }

    #[test]
    fn a_batch_counts_running_jobs_by_their_emulated_time() {
        let b = Batch::new("compare", "runs", 4, Mode::Quiet);
        b.advance(0, 500, 1000);
        b.advance(1, 250, 1000);
        assert!((b.fraction() - 0.75 / 4.0).abs() < 1e-9);
        b.finished(0, "base seed 1");
        // A job's share never counts twice, nor as finished before it is.
        b.advance(1, 2000, 1000);
        assert!((b.fraction() - (1.0 + 0.999) / 4.0).abs() < 1e-9);
    }
}
