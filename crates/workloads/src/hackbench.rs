//! hackbench (rt-tests): groups of senders and receivers passing small messages through
//! pipes or unix stream sockets.
//!
//! Compiled to the IR:
//! - main: forks every task (per group, receivers first, then senders, as hackbench's
//!   `group()` does), collects one "ready" token from each (`Wait` x N), marks the start
//!   time, posts every child (the write to the wake pipe that all children poll on), reaps
//!   N exits (`Wait` x N) and marks the end: `Time:` is end - start.
//! - receiver: posts ready, waits for go, then reads `loops * fds` messages of `datasize`
//!   bytes from its own pipe and exits.
//! - sender: posts ready, waits for go, then `loops` times writes one message to each of
//!   its group's `fds` receivers and exits.
//!
//! Each `read`/`write` system call costs a small `Run` of task work before the buffer
//! operation: [`PIPE_SYSCALL_WORK`] or [`SOCKET_SYSCALL_WORK`]. Buffers: a pipe holds 64 KiB
//! (16 pages; small writes merge into the last page); a unix stream socket's sender may have
//! `wmem_default` = 212992 bytes in flight, each 100-byte message counting its skb truesize
//! ([`SOCKET_TRUESIZE`]), and blocked writers wake once half of it is free. Both wake the
//! other side with sync wakeups (`wake_up_interruptible_sync_poll`). Threads and processes
//! differ only in the header: an mm switch is not modelled separately.

use fairsim_engine::error::{EngineError, SpecError};
use fairsim_engine::program::{Op, Program, Target};
use fairsim_engine::world::{Blueprint, Outcome, Pipe};

use super::keys::Keys;
use super::report::WorkloadReport;
use super::tasks::{add_program, new_task, task_range};

/// Task work of one pipe `read`/`write` of a small message (syscall entry/exit, the pipe
/// mutex, a copy of 100 bytes): ~0.8 us on current x86 (`perf bench sched pipe` minus
/// the wakeup and switch costs).
pub(crate) const PIPE_SYSCALL_WORK: u64 = 800;
/// Task work of one unix-socket `sendmsg`/`recvmsg` of a small message: skb allocation and
/// freeing on top of the copy, ~1.5 us.
pub(crate) const SOCKET_SYSCALL_WORK: u64 = 1_500;
/// Pipe capacity: `PIPE_DEF_BUFFERS` (16) pages of 4 KiB.
pub(crate) const PIPE_CAPACITY: u64 = 65_536;
/// `net.core.wmem_default`.
pub(crate) const SOCKET_SNDBUF: u64 = 212_992;
/// skb truesize charged per small message (`SKB_TRUESIZE` of a 100-byte linear skb,
/// about 768 bytes of sk_buff and shared info plus the data rounded to 128).
pub(crate) const SOCKET_TRUESIZE: u64 = 896;

/// hackbench options.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hackbench {
    /// `-g`: groups.
    pub groups: u64,
    /// `-l`: messages each sender sends to each receiver.
    pub loops: u64,
    /// `-f`: senders (and receivers) per group.
    pub fds: u64,
    /// `-s`: message size in bytes.
    pub datasize: u64,
    /// `-p`: pipes instead of sockets.
    pub pipe: bool,
    /// `-T`: threads instead of processes.
    pub threads: bool,
}

impl Hackbench {
    /// Parses `g`, `l`, `f`, `s`, `pipe`, `threads`/`process` (or their long names).
    pub fn parse(body: &str) -> Result<Hackbench, EngineError> {
        let k = Keys::parse(
            "hackbench",
            body,
            &[
                &["g", "groups"],
                &["l", "loops"],
                &["f", "fds"],
                &["s", "datasize"],
                &["pipe", "p"],
                &["threads", "T"],
                &["process", "P"],
            ],
        )?;
        let threads = k.flag("threads")?;
        if threads && k.flag("process")? {
            return Err(SpecError::refused(
                "hackbench",
                "threads and process are exclusive; allowed: one of them",
            )
            .into());
        }
        Ok(Hackbench {
            groups: k.int("g", 10, 1, 1 << 20)?,
            loops: k.int("l", 100, 1, 1 << 32)?,
            fds: k.int("f", 20, 1, 1024)?,
            datasize: k.int("s", 100, 1, 4096)?,
            pipe: k.flag("pipe")?,
            threads,
        })
    }

    /// Every option spelled out.
    pub fn canonical(&self) -> String {
        format!(
            "hackbench:g={},l={},f={},s={},{},{}",
            self.groups,
            self.loops,
            self.fds,
            self.datasize,
            if self.pipe { "pipe" } else { "socket" },
            if self.threads { "threads" } else { "process" }
        )
    }

    /// main + 2 * fds per group.
    pub fn nr_tasks(&self) -> u64 {
        1 + self.groups * 2 * self.fds
    }

    pub(super) fn build(&self, w: usize, bp: &mut Blueprint) {
        let fds = self.fds as usize;
        let n = self.groups as usize * 2 * fds;
        let main = bp.tasks.len();
        let first = main + 1;
        let syscall = if self.pipe {
            PIPE_SYSCALL_WORK
        } else {
            SOCKET_SYSCALL_WORK
        };
        let bytes = self.datasize as u32;
        let main_prog = add_program(
            bp,
            Program::new()
                .op(Op::ForkChildren)
                .begin_loop(Some(n as u64))
                .op(Op::Wait { timeout: None })
                .end_loop()
                .op(Op::Mark { slot: 0 })
                .op(Op::PostChildren)
                .begin_loop(Some(n as u64))
                .op(Op::Wait { timeout: None })
                .end_loop()
                .op(Op::Mark { slot: 1 })
                .op(Op::Exit),
        );
        let recv_prog = add_program(
            bp,
            Program::new()
                .op(Op::Post { to: Target::Parent })
                .op(Op::Wait { timeout: None })
                .begin_loop(Some(self.loops * self.fds))
                .op(Op::Run { work: syscall })
                .op(Op::PipeRead { pipe: 0, bytes })
                .end_loop()
                .op(Op::Exit),
        );
        let mut send = Program::new()
            .op(Op::Post { to: Target::Parent })
            .op(Op::Wait { timeout: None })
            .begin_loop(Some(self.loops));
        for r in 0..fds {
            send = send
                .op(Op::Run { work: syscall })
                .op(Op::PipeWrite { pipe: r, bytes });
        }
        let send_prog = add_program(bp, send.end_loop().op(Op::Exit));
        bp.tasks.push(new_task(
            "hackbench".into(),
            main_prog,
            None,
            (first, first + n),
            w,
        ));
        let (capacity, charge, socket) = if self.pipe {
            (PIPE_CAPACITY, None, false)
        } else {
            (SOCKET_SNDBUF, Some(SOCKET_TRUESIZE), true)
        };
        for g in 0..self.groups as usize {
            let pipe0 = bp.pipes.len();
            for _ in 0..fds {
                bp.pipes.push(Pipe {
                    capacity,
                    charge_per_msg: charge,
                    used: 0,
                    readers: Vec::new(),
                    writers: Vec::new(),
                    socket,
                });
            }
            for r in 0..fds {
                let me = bp.tasks.len();
                let mut t = new_task(
                    format!("hb-recv{g}.{r}"),
                    recv_prog,
                    Some(main),
                    (me, me),
                    w,
                );
                t.pipe_base = pipe0 + r;
                t.thread = self.threads;
                bp.tasks.push(t);
            }
            for s in 0..fds {
                let me = bp.tasks.len();
                let mut t = new_task(
                    format!("hb-send{g}.{s}"),
                    send_prog,
                    Some(main),
                    (me, me),
                    w,
                );
                t.pipe_base = pipe0;
                t.thread = self.threads;
                bp.tasks.push(t);
            }
        }
    }

    pub(super) fn report(&self, index: usize, outcome: &Outcome) -> WorkloadReport {
        let main = task_range(outcome, index).start;
        let marks = outcome.tasks()[main].marks;
        let mode = if self.threads { "threaded" } else { "process" };
        let mut text = format!(
            "Running in {mode} mode with {} groups using {} file descriptors each (== {} tasks)\n\
             Each sender will pass {} messages of {} bytes\n",
            self.groups,
            2 * self.fds,
            2 * self.fds * self.groups,
            self.loops,
            self.datasize
        );
        let (finished, secs) = match marks {
            [Some(a), Some(b)] => (true, Some(b - a)),
            _ => (false, None),
        };
        let mut json = serde_json::Map::new();
        match secs {
            Some(ns) => {
                // hackbench prints tv_usec / 1000: truncated milliseconds.
                let ms = ns / 1_000_000;
                text.push_str(&format!("Time: {}.{:03}\n", ms / 1000, ms % 1000));
                json.insert("time_ns".into(), ns.into());
            }
            None => {
                text.push_str("Time: (not finished within --duration)\n");
                json.insert("time_ns".into(), serde_json::Value::Null);
            }
        }
        json.insert("tasks".into(), (2 * self.fds * self.groups).into());
        WorkloadReport {
            text,
            json: serde_json::Value::Object(json),
            finished,
        }
    }
}
