//! tbench from dbench 4.0 over loopback: N client processes, each with its own
//! `tbench_srv` child, replaying the NetBench load file as SMB-like request/reply pairs.
//!
//! Read in sahlberg/dbench at commit 23ba06d (2007-07-27, `VERSION=4.00`, the source of
//! Debian's dbench 4.0 package): `dbench.c` (options, `create_procs`, `sig_alarm`, the
//! output), `child.c` (`child_run`, `nb_target_rate`, `finish_op`), `sockio.c`
//! (`do_packets` and each operation's packet sizes), `tbench_srv.c` (one forked server per
//! connection: read a 4-byte length, read that much, write back the length the request
//! asks for). The load file's mix is in [`super::tbench_mix`].
//!
//! Compiled to the IR, tasks in this order:
//! - `tbench`, the parent: forks the clients, waits for each to be ready (the semaphore
//!   barrier), marks `tv_start`, releases them and reaps them.
//! - `tbench_srv`, the listener: forks a server per connection, then reaps them.
//! - client `i` (`client{i}`): connects, reports ready, waits for the release, marks it,
//!   then per load-file line: draws the line (a hook of the workload's model, which also counts the
//!   finished one), sends the request and reads the reply in two calls (the 4-byte header,
//!   then `recv(MSG_WAITALL|MSG_TRUNC)`, which copies nothing), until the parent stops
//!   the clients at `warmup + t` seconds after the release.
//! - server `i`: reads a request in two calls and writes the reply, until the close.
//!
//! The parent's once-a-second reading of the counters (the throughput lines, warm-up of
//! `t / 5` seconds, the final throughput and `max_latency`) is replayed from per-second
//! counters ([`super::tbench_stats::TbenchRt`]).

use fairsim_des::rng::SimRng;
use fairsim_engine::error::{EngineError, SpecError};
use fairsim_engine::hook::{HookAct, HookCx, WorkloadModel};
use fairsim_engine::program::{NetSize, Op, Program, Target};
use fairsim_engine::world::{Blueprint, Outcome, WorkloadRt};

use super::keys::Keys;
use super::net_pairs::{push_pair_tasks, Role};
use super::report::WorkloadReport;
use super::tasks::{add_program, task_range};
use super::tbench_mix::{LoadOp, LINES, MIX};
use super::tbench_stats::{Exchange, TbenchRt};
use fairsim_engine::world::sockets::NetProto;

/// tbench options.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tbench {
    /// `-t`: the time limit after warm-up, whole seconds.
    pub timelimit: u64,
    /// The positional `nprocs`: client processes.
    pub clients: u64,
    /// The positional `<server>`, as given.
    pub server: String,
}

impl Tbench {
    /// Parses `t`, `clients` (or `n`), `server`.
    pub fn parse(body: &str) -> Result<Tbench, EngineError> {
        let k = Keys::parse(
            "tbench",
            body,
            &[
                &["t", "timelimit"],
                &["clients", "n", "nprocs"],
                &["server", "H"],
            ],
        )?;
        if k.text("clients").is_none() {
            return Err(SpecError::missing(
                "tbench",
                "clients",
                "clients=N, the number of client processes (tbench's NPROCS), 1..=65536",
            )
            .into());
        }
        let server = k.text("server").unwrap_or("127.0.0.1").to_string();
        if !matches!(server.as_str(), "127.0.0.1" | "localhost") {
            return Err(k.invalid("server", &server, "127.0.0.1 or localhost (loopback only)"));
        }
        Ok(Tbench {
            timelimit: k.int("t", 600, 1, 86_400)?,
            clients: k.int("clients", 1, 1, 1 << 16)?,
            server,
        })
    }

    /// Every option spelled out.
    pub fn canonical(&self) -> String {
        format!(
            "tbench:t={},clients={},server={}",
            self.timelimit, self.clients, self.server
        )
    }

    /// The parent, the listener, and a client and a server per client.
    pub fn nr_tasks(&self) -> u64 {
        2 + 2 * self.clients
    }

    pub(super) fn build(&self, w: usize, bp: &mut Blueprint, rt: &mut WorkloadRt) {
        let n = self.clients as usize;
        let parent = bp.tasks.len();
        let listener = parent + 1;
        let mut stats = TbenchRt::new(self.timelimit);
        // The one hook a client calls: draw its next load-file line.
        let exchange = Op::Hook {
            call: 0,
            local: true,
        };
        let parent_prog = add_program(
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
        let listener_prog = add_program(
            bp,
            Program::new()
                .begin_loop(Some(n as u64))
                .op(Op::Wait { timeout: None })
                .op(Op::ForkNext)
                .end_loop()
                .begin_loop(Some(n as u64))
                .op(Op::Wait { timeout: None })
                .end_loop()
                .op(Op::Exit),
        );
        let mut client = Program::new()
            .op(Op::Post {
                to: Target::Task(listener),
            })
            .op(Op::Post { to: Target::Parent })
            .op(Op::Wait { timeout: None })
            .op(Op::Mark { slot: 0 })
            .op(exchange)
            .begin_loop(None);
        let brk = client.ops.len();
        client = client
            .op(Op::BreakAfter {
                slot: 0,
                dur: stats.run_ns(),
                after: 0,
                keep_count: false,
            })
            .op(Op::NetSend {
                sock: 0,
                size: NetSize::Request,
            })
            .op(Op::NetRecv {
                sock: 0,
                calls: 2,
                trunc: true,
            })
            .op(exchange)
            .end_loop();
        let after = client.ops.len();
        client.ops[brk] = Op::BreakAfter {
            slot: 0,
            dur: stats.run_ns(),
            after,
            keep_count: false,
        };
        let client_prog = add_program(
            bp,
            client
                .op(Op::Mark { slot: 1 })
                .op(Op::NetClose { sock: 0 })
                .op(Op::Exit),
        );
        let server_prog = add_program(
            bp,
            Program::new()
                .begin_loop(None)
                .op(Op::NetRecv {
                    sock: 0,
                    calls: 2,
                    trunc: false,
                })
                .op(Op::NetSend {
                    sock: 0,
                    size: NetSize::Reply,
                })
                .end_loop()
                .op(Op::Exit),
        );
        push_pair_tasks(
            bp,
            rt,
            w,
            n,
            NetProto::Tcp,
            Role {
                name: "tbench",
                prog: parent_prog,
            },
            Role {
                name: "tbench_srv",
                prog: listener_prog,
            },
            Role {
                name: "tbench",
                prog: client_prog,
            },
            Role {
                name: "tbench_srv",
                prog: server_prog,
            },
        );
        stats.cum = MIX
            .iter()
            .scan(0u64, |acc, r| {
                *acc += u64::from(r.count);
                Some(*acc)
            })
            .collect();
        stats.exchanges = vec![Exchange::default(); rt.net.tasks.len()];
        rt.model = Some(Box::new(stats));
    }

    pub(super) fn report(&self, index: usize, outcome: &Outcome) -> WorkloadReport {
        let empty = TbenchRt::default();
        let tb = outcome.workloads()[index]
            .model::<TbenchRt>()
            .unwrap_or(&empty);
        let parent = task_range(outcome, index).start;
        let finished = outcome.tasks()[parent].marks[1].is_some();
        let n = self.clients;
        let mut text = format!(
            "dbench version 4.00 - Copyright Andrew Tridgell 1999-2004\n\n\
             Running for {} seconds with load '/usr/share/dbench/client.txt' and minimum warmup {} secs\n\
             {n} of {n} processes prepared for launch   0 sec\nreleasing clients\n",
            self.timelimit, tb.warmup
        );
        for (_, lines, mbs, phase, t, lat) in tb.ticks() {
            text.push_str(&format!(
                "{n:4}  {:8}  {mbs:7.2} MB/sec  {phase} {t:3} sec  latency {:.3} ms\n",
                lines / n,
                lat as f64 / 1e6
            ));
        }
        // The clients clean up only after the timed run, which --duration may end first.
        if finished {
            text.push_str(&format!("{n:4}  cleanup {:3} sec\n\n", self.timelimit));
        } else {
            text.push('\n');
        }
        text.push_str(" Operation      Count    AvgLat    MaxLat\n ----------------------------------------\n");
        let mut ops = 0;
        for op in LoadOp::ALL {
            let s = tb.ops[op as usize];
            if s.count == 0 {
                continue;
            }
            ops += s.count;
            text.push_str(&format!(
                " {:<12} {:7} {:9.3} {:9.3}\n",
                op.name(),
                s.count,
                s.total_ns as f64 / s.count as f64 / 1e6,
                s.max_ns as f64 / 1e6
            ));
        }
        let mbs = tb.throughput().map_or(0.0, |(_, m)| m);
        let max_lat = tb.max_latency();
        if finished {
            text.push_str(&format!(
                "\nThroughput {} MB/sec  {n} clients  {n} procs  max_latency={:.3} ms\n",
                fmt_g(mbs),
                max_lat as f64 / 1e6
            ));
        } else {
            // dbench prints its throughput and max_latency at the end of the timed run; a
            // run cut before it has none, and a 0 would read as a measurement.
            text.push_str(&format!(
                "\nThroughput: (not finished within --duration: the run ended at {} of tbench's {} s; the table holds the operations so far)\n",
                fairsim_des::time::format_duration(outcome.config().duration),
                self.timelimit
            ));
        }
        WorkloadReport {
            text,
            json: serde_json::json!({
                "mb_per_s": mbs,
                "max_latency_ms": max_lat as f64 / 1e6,
                "ops": ops,
                "clients": n,
            }),
            finished,
        }
    }
}

impl WorkloadModel for TbenchRt {
    /// [`TbenchRt::exchange`]: the only hook a tbench client calls.
    fn hook(&mut self, _call: u32, cx: &mut HookCx<'_>) -> HookAct {
        self.exchange(cx.rng, cx.me, cx.at.saturating_sub(cx.epoch))
    }
}

impl TbenchRt {
    /// Draws client `me`'s next load-file line at `rel` ns after the release, after
    /// counting the one it finished (tbench's `child_run` loop: `nb_target_rate`, then the
    /// operation, then `finish_op` and the byte count); the line's sizes are the
    /// client's next exchange on its socket. Lines that send nothing (Deltree) are counted
    /// and skipped.
    fn exchange(&mut self, rng: &mut SimRng, me: usize, rel: u64) -> HookAct {
        if self.cum.is_empty() {
            return HookAct::Next;
        }
        let Some(&ex) = self.exchanges.get(me) else {
            return HookAct::Next;
        };
        // Tasks 0 and 1 are the parent and the listener; client i is task i + 2.
        let id = me.saturating_sub(2);
        if let Some(start) = ex.started {
            let row = &MIX[ex.row];
            let bytes = row.sizes(id).map_or(0, |s| s.2);
            self.done(row.op, start, rel, u64::from(bytes));
        }
        let mut gap = ex.started.map(|s| rel.saturating_sub(s));
        loop {
            let x = rng.below(LINES);
            let i = self.cum.partition_point(|&c| c <= x).min(MIX.len() - 1);
            self.line(rel, gap);
            gap = Some(0);
            match MIX[i].sizes(id) {
                Some((request, response, _)) => {
                    let ex = &mut self.exchanges[me];
                    ex.row = i;
                    ex.started = Some(rel);
                    return HookAct::Exchange { request, response };
                }
                None => self.done(MIX[i].op, rel, rel, 0),
            }
        }
    }
}

/// C's `%g`: six significant digits, trailing zeros dropped, an exponent outside
/// 1e-4..1e6.
pub fn fmt_g(x: f64) -> String {
    if x == 0.0 || !x.is_finite() {
        return if x == 0.0 { "0".into() } else { format!("{x}") };
    }
    let exp = x.abs().log10().floor() as i32;
    let trim = |s: String| -> String {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s
        }
    };
    if !(-4..6).contains(&exp) {
        let m = format!("{:.5e}", x);
        let (mant, e) = m.split_once('e').unwrap_or((&m, "0"));
        let e: i32 = e.parse().unwrap_or(0);
        let sign = if e < 0 { '-' } else { '+' };
        return format!("{}e{sign}{:02}", trim(mant.to_string()), e.abs());
    }
    let decimals = (5 - exp).max(0) as usize;
    trim(format!("{x:.decimals$}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fmt_g_is_cs_percent_g() {
        assert_eq!(fmt_g(1234.5678), "1234.57");
        assert_eq!(fmt_g(0.5), "0.5");
        assert_eq!(fmt_g(100.0), "100");
        assert_eq!(fmt_g(0.0), "0");
        assert_eq!(fmt_g(12345678.0), "1.23457e+07");
        assert_eq!(fmt_g(0.00001234), "1.234e-05");
    }

    #[test]
    fn parse_requires_clients_and_loopback() {
        let e = Tbench::parse("t=10").unwrap_err().to_string();
        assert!(e.contains("clients"), "{e}");
        let e = Tbench::parse("clients=2,server=10.0.0.1")
            .unwrap_err()
            .to_string();
        assert!(e.contains("server: invalid value '10.0.0.1'"), "{e}");
        let t = Tbench::parse("t=100,n=8").unwrap();
        assert_eq!((t.timelimit, t.clients), (100, 8));
    }
}
