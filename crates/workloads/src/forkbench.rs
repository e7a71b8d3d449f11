//! forkbench: the shape of git's test suite as mmtests' `gitsource` runs it (seed 004),
//! shell scripts that fork, exec and reap short-lived commands, some of them two-process
//! pipelines.
//!
//! # What is modelled, and from which sources
//!
//! mmtests' `gitsource` benchmark (gormanm/mmtests, `shellpack_src/src/gitsource/
//! gitsource-bench` as of commit 45aee47c, 2018-02-12, the month of seed 004: git v2.15.1,
//! `GITSOURCE_ITERATIONS=5` after a warm-up run) times `make test` under `/usr/bin/time`.
//! It passes no `-j`, and git's `t/Makefile` (v2.15.1) runs the scripts as the
//! prerequisites of `aggregate-results-and-cleanup: $(T)`, so make runs the 790
//! `t[0-9]*.sh` scripts one after the other. Hence the default of one script at a time,
//! `scripts=1`; `scripts=N` runs N at once, as `make -jN test` or `prove -jN` would. The
//! seed's own figures agree: User plus System is about Elapsed (5434 + 4879 s of CPU in
//! 10259 s for six runs), a single CPU's worth of work.
//!
//! Each script is a shell task that execs itself (make forks and execs the shell), then
//! runs `cmds` commands one after another. A command is: the shell's own work (`parse`),
//! a fork, and in the child an `execve` (`Op::Exec`, the exec balance `sched_exec`),
//! the kernel's exec work (the cost table's `exec`, system time), the new image's user
//! start-up (`startup`: the dynamic loader and libc's initialisation), the command's own
//! work (drawn per command, user time), the kernel's exit work (the cost table's `exit`,
//! system time) and the exit, which wakes the shell waiting in `wait4`. The fork's
//! `copy_process` is the cost table's `fork`, charged to the shell's CPU as today.
//!
//! `pipe` percent of the commands are pipelines `a | b`: the shell forks both, waits for
//! both; `a` writes `bytes` into a pipe in `chunk`-sized writes, its work spread before
//! them, and `b` reads them, its work spread after each read. Each `read`/`write` is
//! [`PIPE_SYSCALL_WORK`] plus the copy ([`PIPE_COPY_NS_PER_KIB`]), system time. The
//! pipelines are spread evenly over the commands (command i is one when
//! `(i + 1) * pipe / 100` passes an integer), so the process count is known before the
//! run.
//!
//! # Defaults and their bases
//!
//! - `pipe=3`: of the 55,727 `&&`-chained lines of git v2.15.1's 790 test scripts, 1,759
//!   (3.2%) contain a `|` pipe (`grep` over `t/t[0-9]*.sh`; builtins count in both).
//! - `work=200us..3ms`, `dist=log`: `perf stat -r 50` on the build host (x86 KVM guest,
//!   Linux 6.18) of commands on a one-commit repository: `cat` 0.56 ms, `git rev-parse`
//!   0.75 ms, `git status` 1.04 ms, `git commit` 3.5 ms, against 0.36 ms for `/bin/true`,
//!   so a command's own work is 0.2 to about 3 ms over the process start-up; log-uniform
//!   because the cheap plumbing commands are the many.
//! - `startup=250us`: the build host's profile of a shell starting a do-nothing
//!   dynamically linked program (see `cost_tables::x86_2020s::PROCESS_PROFILE_NS_PER_COMMAND`)
//!   has 0.26 ms of user time per process in `ld-linux-x86-64.so.2` and libc.
//! - `parse=100us`: the shell's own work per command, nanosleep's `launch` (the build
//!   host's bash loop, 118 us of task-clock per started process less the fork).
//! - `bytes=8192`, `chunk=4096`: a pipeline passes a couple of pages; stdio buffers a pipe
//!   by its `st_blksize`, one page.
//!
//! # Output
//!
//! One iteration as mmtests prints it (`Elapsed` min/mean/stddev/coeffvar/max, then the
//! `User`/`System`/`Elapsed` block of `MonitorDuration`), the `time :: ...` line
//! `run-mmtests.sh` writes, and `real`/`user`/`sys` as the shell's `time` prints them.
//! Elapsed runs from the first script's start to the last one's exit. User and System
//! are summed over every process (shells and commands), as `/usr/bin/time` reports
//! `make`'s reaped children: with `cputime=tick` (default, `CONFIG_TICK_CPU_ACCOUNTING`)
//! each process's runtime split by its tick samples through `cputime_adjust`, so that a
//! process no tick caught counts all its time as user time, as on the seed's kernels;
//! with `cputime=precise` the exact split.

use fairsim_des::time::{format_duration, MS, SEC, US};
use fairsim_engine::error::EngineError;
use fairsim_engine::program::{Op, Program, SysCost};
use fairsim_engine::world::{Blueprint, Outcome, Pipe, WorkloadRt};

use super::forkbench_stats::{cputime_adjust, mmtests_text, Cputime, WorkDist};
use super::hackbench::{PIPE_CAPACITY, PIPE_SYSCALL_WORK};
use super::keys::Keys;
use super::report::WorkloadReport;
use super::tasks::{add_program, new_task, task_range};

/// Kernel copy time per KiB of a pipe `read` or `write` on top of
/// [`PIPE_SYSCALL_WORK`]: `copy_page_from_iter`/`copy_page_to_iter` of cached data at
/// about 10 GB/s, 100 ns per KiB.
pub const PIPE_COPY_NS_PER_KIB: u64 = 100;

/// The shell's own work per command (see the module docs).
const DEFAULT_PARSE: u64 = 100 * US;
/// A process's user start-up (see the module docs).
const DEFAULT_STARTUP: u64 = 250 * US;
/// Bounds of a command's own work (see the module docs).
const DEFAULT_WORK: (u64, u64) = (200 * US, 3 * MS);

/// forkbench options.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Forkbench {
    /// Scripts run at once.
    pub scripts: u64,
    /// Commands per script.
    pub cmds: u64,
    /// Bounds of a command's own user work, ns at capacity 1024.
    pub work: (u64, u64),
    /// How the work is drawn between its bounds.
    pub dist: WorkDist,
    /// Percent of the commands that are two-process pipelines.
    pub pipe: u64,
    /// Bytes a pipeline passes.
    pub bytes: u64,
    /// Size of each `write`/`read`.
    pub chunk: u64,
    /// The shell's own work per command, ns at capacity 1024.
    pub parse: u64,
    /// Each process's user start-up, ns at capacity 1024.
    pub startup: u64,
    /// How User and System are reported.
    pub cputime: Cputime,
}

impl Forkbench {
    /// Parses `scripts`, `cmds`, `work`, `dist`, `pipe`, `bytes`, `chunk`, `parse`,
    /// `startup`, `cputime`.
    pub fn parse(body: &str) -> Result<Forkbench, EngineError> {
        let k = Keys::parse(
            "forkbench",
            body,
            &[
                &["scripts", "j"],
                &["cmds"],
                &["work"],
                &["dist"],
                &["pipe"],
                &["bytes"],
                &["chunk"],
                &["parse"],
                &["startup"],
                &["cputime"],
            ],
        )?;
        let work = match k.raw("work") {
            None => DEFAULT_WORK,
            Some(None) => return Err(k.invalid("work", "", WORK_ALLOWED)),
            Some(Some(text)) => parse_work(&k, text)?,
        };
        let dist = match k.text("dist") {
            None => WorkDist::Log,
            Some("log") => WorkDist::Log,
            Some("uniform") => WorkDist::Uniform,
            Some(other) => return Err(k.invalid("dist", other, "log or uniform")),
        };
        let cputime = match k.text("cputime") {
            None => Cputime::Tick,
            Some("tick") => Cputime::Tick,
            Some("precise") => Cputime::Precise,
            Some(other) => return Err(k.invalid("cputime", other, "tick or precise")),
        };
        Ok(Forkbench {
            scripts: k.int("scripts", 1, 1, 4096)?,
            cmds: k.int("cmds", 1000, 1, 1 << 20)?,
            work,
            dist,
            pipe: k.int("pipe", 3, 0, 100)?,
            bytes: k.int("bytes", 8192, 0, 1 << 30)?,
            chunk: k.int("chunk", 4096, 1, PIPE_CAPACITY)?,
            parse: k.dur("parse", DEFAULT_PARSE, US, 0, 10 * SEC)?,
            startup: k.dur("startup", DEFAULT_STARTUP, US, 0, 10 * SEC)?,
            cputime,
        })
    }

    /// Every option spelled out.
    pub fn canonical(&self) -> String {
        format!(
            "forkbench:scripts={},cmds={},work={}..{},dist={},pipe={},bytes={},chunk={},\
             parse={},startup={},cputime={}",
            self.scripts,
            self.cmds,
            format_duration(self.work.0),
            format_duration(self.work.1),
            self.dist.name(),
            self.pipe,
            self.bytes,
            self.chunk,
            format_duration(self.parse),
            format_duration(self.startup),
            self.cputime.name()
        )
    }

    /// Whether command `i` of a script is a pipeline: `pipe` percent of the commands,
    /// spread evenly.
    pub fn is_pipeline(&self, i: u64) -> bool {
        (i + 1) * self.pipe / 100 > i * self.pipe / 100
    }

    /// Pipelines per script.
    pub fn pipelines_per_script(&self) -> u64 {
        self.cmds * self.pipe / 100
    }

    /// Shells plus every command's processes.
    pub fn nr_tasks(&self) -> u64 {
        self.scripts * (1 + self.cmds + self.pipelines_per_script())
    }

    /// The user work a `write`/`read` loop spreads over `n` chunks of a pipeline end:
    /// the share per chunk and what is left over, run once before the loop.
    fn spread(work: u64, n: u64) -> (u64, u64) {
        match n {
            0 => (0, work),
            n => (work / n, work % n),
        }
    }

    /// The program of one end of a pipeline (`writer` or reader) with `work` of its own.
    fn pipe_end(&self, writer: bool, work: u64) -> Program {
        let full = self.bytes / self.chunk;
        let tail = self.bytes % self.chunk;
        let chunks = full + u64::from(tail > 0);
        let (per, rest) = Self::spread(work, chunks);
        let sys = |bytes: u64| Op::RunSys {
            work: PIPE_SYSCALL_WORK + bytes * PIPE_COPY_NS_PER_KIB / 1024,
        };
        let io = |bytes: u64| {
            let bytes = bytes as u32;
            if writer {
                Op::PipeWrite { pipe: 0, bytes }
            } else {
                Op::PipeRead { pipe: 0, bytes }
            }
        };
        let mut p = exec_image(Program::new(), self.startup);
        if rest > 0 {
            p = p.op(Op::Run { work: rest });
        }
        // The writer computes, then writes; the reader reads, then computes.
        let step = |p: Program, bytes: u64| {
            let p = if writer && per > 0 {
                p.op(Op::Run { work: per })
            } else {
                p
            };
            let p = p.op(sys(bytes)).op(io(bytes));
            if !writer && per > 0 {
                p.op(Op::Run { work: per })
            } else {
                p
            }
        };
        if full > 0 {
            p = step(p.begin_loop(Some(full)), self.chunk).end_loop();
        }
        if tail > 0 {
            p = step(p, tail);
        }
        exit_image(p)
    }

    pub(super) fn build(&self, w: usize, bp: &mut Blueprint, rt: &mut WorkloadRt) {
        let (lo, hi) = self.work;
        for s in 0..self.scripts {
            let shell = bp.tasks.len();
            let first = shell + 1;
            let nproc = (self.cmds + self.pipelines_per_script()) as usize;
            // Mark 0 opens the script's elapsed time before its own exec.
            let mut sh = exec_image(Program::new().op(Op::Mark { slot: 0 }), self.startup);
            let mut children = Vec::with_capacity(nproc);
            for i in 0..self.cmds {
                if self.parse > 0 {
                    sh = sh.op(Op::Run { work: self.parse });
                }
                if self.is_pipeline(i) {
                    let pipe = bp.pipes.len();
                    bp.pipes.push(Pipe {
                        capacity: PIPE_CAPACITY,
                        charge_per_msg: None,
                        used: 0,
                        readers: Vec::new(),
                        writers: Vec::new(),
                        socket: false,
                    });
                    let a = self.dist.draw(&mut rt.rng, lo, hi);
                    let b = self.dist.draw(&mut rt.rng, lo, hi);
                    children.push((format!("fb{s}.{i}a"), self.pipe_end(true, a), pipe));
                    children.push((format!("fb{s}.{i}b"), self.pipe_end(false, b), pipe));
                    sh = sh
                        .op(Op::ForkNext)
                        .op(Op::ForkNext)
                        .op(Op::Wait { timeout: None })
                        .op(Op::Wait { timeout: None });
                } else {
                    let work = self.dist.draw(&mut rt.rng, lo, hi);
                    let p = exec_image(Program::new(), self.startup);
                    let p = exit_image(p.op(Op::Run { work }));
                    children.push((format!("fb{s}.{i}"), p, 0));
                    sh = sh.op(Op::ForkNext).op(Op::Wait { timeout: None });
                }
            }
            let sh = exit_image(sh.op(Op::Mark { slot: 1 }));
            let sh_prog = add_program(bp, sh);
            bp.tasks.push(new_task(
                format!("fb-sh{s}"),
                sh_prog,
                None,
                (first, first + nproc),
                w,
            ));
            for (name, prog, pipe) in children {
                let prog = add_program(bp, prog);
                let me = bp.tasks.len();
                let mut t = new_task(name, prog, Some(shell), (me, me), w);
                t.pipe_base = pipe;
                bp.tasks.push(t);
            }
        }
    }

    pub(super) fn report(&self, index: usize, outcome: &Outcome) -> WorkloadReport {
        let range = task_range(outcome, index);
        let stride = 1 + (self.cmds + self.pipelines_per_script()) as usize;
        let shells: Vec<usize> = range.clone().step_by(stride).collect();
        let start = shells
            .iter()
            .filter_map(|&t| outcome.tasks()[t].marks[0])
            .min();
        let ends: Vec<Option<u64>> = shells
            .iter()
            .map(|&t| outcome.tasks()[t].marks[1])
            .collect();
        let finished = ends.iter().all(Option::is_some);
        let end = ends.iter().flatten().max().copied();
        let mut forked = 0u64;
        let mut execs = 0u64;
        let (mut user, mut sys) = (0u64, 0u64);
        let (mut user_precise, mut sys_precise) = (0u64, 0u64);
        for t in range {
            if outcome.tasks()[t].sched_id.is_none() {
                continue;
            }
            forked += 1;
            let m = &outcome.metrics().tasks[t];
            execs += m.execs;
            user_precise += m.user_ns;
            sys_precise += m.sys_ns;
            let (u, s) = match self.cputime {
                Cputime::Precise => (m.user_ns, m.sys_ns),
                Cputime::Tick => cputime_adjust(m.user_ns + m.sys_ns, m.user_ticks, m.sys_ticks),
            };
            user += u;
            sys += s;
        }
        let elapsed = match (start, end) {
            (Some(a), Some(b)) if finished => b.saturating_sub(a),
            _ => outcome.now().0.saturating_sub(start.unwrap_or(0)),
        };
        let pipelines = self.scripts * self.pipelines_per_script();
        let mut text = format!(
            "forkbench: {} script(s) x {} commands ({} pipelines), {} processes forked, \
             {} execs, cputime={}\n",
            self.scripts,
            self.cmds,
            pipelines,
            forked,
            execs,
            self.cputime.name()
        );
        if !finished {
            text.push_str("(not finished within --duration: Elapsed is the time so far)\n");
        }
        text.push('\n');
        text.push_str(&mmtests_text("forkbench", elapsed, user, sys));
        let json = serde_json::json!({
            "finished": finished,
            "elapsed_ns": elapsed,
            "user_ns": user,
            "sys_ns": sys,
            "user_precise_ns": user_precise,
            "sys_precise_ns": sys_precise,
            "cputime": self.cputime.name(),
            "processes": forked,
            "execs": execs,
            "commands": self.scripts * self.cmds,
            "pipelines": pipelines,
            "pipe_bytes": pipelines * self.bytes,
        });
        WorkloadReport {
            text,
            json,
            finished,
        }
    }
}

/// What the `work` key takes.
const WORK_ALLOWED: &str = "a duration or LO..HI, from 0 to 10s, LO <= HI (bare numbers in us)";

/// `work=D` or `work=LO..HI`, each a duration (bare numbers in us) from 0 to 10 s, LO at
/// most HI.
fn parse_work(k: &Keys, text: &str) -> Result<(u64, u64), EngineError> {
    let allowed = WORK_ALLOWED;
    let one = |s: &str| {
        fairsim_des::time::parse_duration(s.trim(), US)
            .ok()
            .filter(|&v| v <= 10 * SEC)
            .ok_or_else(|| k.invalid("work", text, allowed))
    };
    match text.split_once("..") {
        None => one(text).map(|v| (v, v)),
        Some((a, b)) => {
            let (lo, hi) = (one(a)?, one(b)?);
            if lo > hi {
                return Err(k.invalid("work", text, allowed));
            }
            Ok((lo, hi))
        }
    }
}

/// A process's start, appended to `p`: `execve` with its exec balance and the kernel's
/// exec work, then the new image's user start-up.
fn exec_image(p: Program, startup: u64) -> Program {
    let p = p.op(Op::Exec).op(Op::RunSysCost {
        cost: SysCost::Exec,
    });
    if startup > 0 {
        p.op(Op::Run { work: startup })
    } else {
        p
    }
}

/// A process's end: the kernel's exit work, then the exit that wakes its parent.
fn exit_image(p: Program) -> Program {
    p.op(Op::RunSysCost {
        cost: SysCost::Exit,
    })
    .op(Op::Exit)
}
