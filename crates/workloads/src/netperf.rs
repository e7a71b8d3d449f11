//! netperf 2.7.0 over loopback: `TCP_RR`, `UDP_RR`, `TCP_STREAM`, `UDP_STREAM`, run as N
//! concurrent instances the way seed 000's shell loop starts them
//! (`for i in $(seq N); do netperf -4 -H 127.0.0.1 -t TCP_RR -c -C -l 100 & done`).
//!
//! Read in HewlettPackard/netperf at tag `netperf-2.7.0`: `src/netsh.c` (options),
//! `src/nettest_omni.c` (`send_omni_inner`'s data loop, and `send_tcp_rr`,
//! `send_tcp_stream`, `send_udp_rr`, `send_udp_stream`, which print the "MIGRATED" tests
//! in the classic layout), `src/nettest_bsd.c` (`print_top_test_header`),
//! `src/netlib.c` (`calc_service_demand`), `src/netserver.c` (one child per test).
//!
//! Compiled to the IR, tasks in this order:
//! - `sh`: forks every netperf (`ForkChildren`, the `&` loop), then reaps them.
//! - `netserver`: the daemon, already listening: for each connection it accepts it forks
//!   a child (`Wait`, `ForkNext`), then reaps them.
//! - netperf `i`: `exec`s (the shell's fork and exec, with the exec balance), connects
//!   (posts the daemon), marks the start and loops until `l` has passed
//!   (`BreakAfter`, netperf's `times_up`): RR sends a request and receives the response,
//!   exactly one of each per transaction; STREAM sends `m`-byte messages. Then it marks
//!   the end and closes the socket.
//! - netserver child `i`: receives requests and sends responses (RR), or receives (STREAM),
//!   until the close.
//!
//! The control connection's own exchanges (a handful of messages per test) are not
//! modelled. `c`/`C` (CPU utilisation, method `S`, /proc/stat) are reported from the
//! machine's busy time over the run's measurement window: on loopback the local and
//! remote figures are the same machine's, and the instances run over the same interval
//! but for their launch.

use fairsim_des::time::SEC;
use fairsim_engine::error::EngineError;
use fairsim_engine::program::{NetSize, Op, Program, Target};
use fairsim_engine::world::{Blueprint, Outcome, WorkloadRt};

use super::keys::Keys;
use super::net_pairs::{push_pair_tasks, Role};
use super::report::WorkloadReport;
use super::tasks::{add_program, task_range};
use fairsim_engine::world::sockets::{
    NetProto, TCP_RMEM_DEFAULT, TCP_WMEM_DEFAULT, UDP_MEM_DEFAULT,
};

/// `UDP_LENGTH_MAX` of nettest_omni.c (65535 - 28), the largest UDP message.
pub(crate) const UDP_LENGTH_MAX: u32 = 0xFFFF - 28;

/// A netperf test.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NetperfTest {
    /// `TCP_RR`.
    TcpRr,
    /// `UDP_RR`.
    UdpRr,
    /// `TCP_STREAM`.
    TcpStream,
    /// `UDP_STREAM`.
    UdpStream,
}

impl NetperfTest {
    /// The name `-t` takes.
    pub fn name(self) -> &'static str {
        match self {
            NetperfTest::TcpRr => "TCP_RR",
            NetperfTest::UdpRr => "UDP_RR",
            NetperfTest::TcpStream => "TCP_STREAM",
            NetperfTest::UdpStream => "UDP_STREAM",
        }
    }

    fn proto(self) -> NetProto {
        match self {
            NetperfTest::TcpRr | NetperfTest::TcpStream => NetProto::Tcp,
            NetperfTest::UdpRr | NetperfTest::UdpStream => NetProto::Udp,
        }
    }

    fn rr(self) -> bool {
        matches!(self, NetperfTest::TcpRr | NetperfTest::UdpRr)
    }

    /// The banner's test title.
    fn title(self) -> &'static str {
        match self {
            NetperfTest::TcpRr => "MIGRATED TCP REQUEST/RESPONSE TEST",
            NetperfTest::UdpRr => "MIGRATED UDP REQUEST/RESPONSE TEST",
            NetperfTest::TcpStream => "MIGRATED TCP STREAM TEST",
            NetperfTest::UdpStream => "MIGRATED UDP STREAM TEST",
        }
    }
}

/// netperf options.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Netperf {
    /// `-t`.
    pub test: NetperfTest,
    /// `-l`, ns.
    pub length: u64,
    /// Test-specific `-m` (STREAM tests).
    pub send_size: u32,
    /// Test-specific `-r req,rsp` (RR tests).
    pub rr: (u32, u32),
    /// Concurrent instances.
    pub instances: u64,
    /// `-c`: local CPU utilisation.
    pub local_cpu: bool,
    /// `-C`: remote CPU utilisation.
    pub remote_cpu: bool,
    /// `-H`, as given.
    pub host: String,
}

impl Netperf {
    /// Parses `t`, `l`, `m`, `r`, `instances`, `c`, `C`, `H`, `4`.
    pub fn parse(body: &str) -> Result<Netperf, EngineError> {
        // netperf writes `-r 64,1024`: a bare number after `r=REQ` is its RSP, not a key.
        let mut items: Vec<String> = Vec::new();
        for item in body.split(',').map(str::trim) {
            let rr_open = items.last().is_some_and(|l| {
                let key = l.split('=').next().unwrap_or("").trim_start_matches('-');
                matches!(key, "r" | "request-response") && !l.contains(';')
            });
            if rr_open && !item.is_empty() && item.bytes().all(|b| b.is_ascii_digit()) {
                if let Some(l) = items.last_mut() {
                    l.push(';');
                    l.push_str(item);
                }
            } else {
                items.push(item.to_string());
            }
        }
        let body = items.join(",");
        let k = Keys::parse(
            "netperf",
            &body,
            &[
                &["t", "test"],
                &["l", "length"],
                &["m", "send-size"],
                &["r", "request-response"],
                &["instances", "n"],
                &["c", "local-cpu"],
                &["C", "remote-cpu"],
                &["H", "host"],
                &["4", "ipv4"],
            ],
        )?;
        let test = match k.text("t").unwrap_or("TCP_STREAM") {
            "TCP_RR" | "tcp_rr" => NetperfTest::TcpRr,
            "UDP_RR" | "udp_rr" => NetperfTest::UdpRr,
            "TCP_STREAM" | "tcp_stream" => NetperfTest::TcpStream,
            "UDP_STREAM" | "udp_stream" => NetperfTest::UdpStream,
            other => return Err(k.invalid("t", other, "TCP_RR, UDP_RR, TCP_STREAM or UDP_STREAM")),
        };
        let host = k.text("H").unwrap_or("127.0.0.1").to_string();
        if !matches!(host.as_str(), "127.0.0.1" | "localhost") {
            return Err(k.invalid("H", &host, "127.0.0.1 or localhost (loopback only)"));
        }
        k.flag("4")?;
        let max = match test.proto() {
            NetProto::Tcp => 1 << 20,
            NetProto::Udp => u64::from(UDP_LENGTH_MAX),
        };
        let (send_size, rr) = if test.rr() {
            if k.text("m").is_some() {
                return Err(k.invalid(
                    "m",
                    k.text("m").unwrap_or(""),
                    "m only with TCP_STREAM or UDP_STREAM; RR tests take r=REQ,RSP",
                ));
            }
            let rr = match k.text("r") {
                None => (1, 1),
                Some(v) => {
                    let allowed = format!("REQ,RSP: two sizes in 1..={max} bytes");
                    let (a, b) = v.split_once(';').unwrap_or((v, v));
                    let p = |s: &str| {
                        s.trim()
                            .parse::<u64>()
                            .ok()
                            .filter(|n| (1..=max).contains(n))
                    };
                    match (p(a), p(b)) {
                        (Some(a), Some(b)) => (a as u32, b as u32),
                        _ => return Err(k.invalid("r", &v.replace(';', ","), &allowed)),
                    }
                }
            };
            (0, rr)
        } else {
            if let Some(v) = k.text("r") {
                return Err(k.invalid(
                    "r",
                    &v.replace(';', ","),
                    "r only with TCP_RR or UDP_RR; STREAM tests take m=SIZE",
                ));
            }
            // choose_send_size: the local send buffer, capped at UDP's largest message.
            let default = match test.proto() {
                NetProto::Tcp => TCP_WMEM_DEFAULT,
                NetProto::Udp => u64::from(UDP_LENGTH_MAX),
            };
            (k.int("m", default, 1, max)? as u32, (0, 0))
        };
        Ok(Netperf {
            test,
            length: k.dur("l", 10 * SEC, SEC, SEC / 100, 24 * 3_600 * SEC)?,
            send_size,
            rr,
            instances: k.int("instances", 1, 1, 1 << 16)?,
            local_cpu: k.flag("c")?,
            remote_cpu: k.flag("C")?,
            host,
        })
    }

    /// Every option spelled out.
    pub fn canonical(&self) -> String {
        let sizes = if self.test.rr() {
            format!("r={},{}", self.rr.0, self.rr.1)
        } else {
            format!("m={}", self.send_size)
        };
        let mut s = format!(
            "netperf:t={},l={},{},instances={},H={}",
            self.test.name(),
            fairsim_des::time::format_duration(self.length),
            sizes,
            self.instances,
            self.host
        );
        if self.local_cpu {
            s.push_str(",c");
        }
        if self.remote_cpu {
            s.push_str(",C");
        }
        s
    }

    /// sh + netserver + a netperf and a netserver child per instance.
    pub fn nr_tasks(&self) -> u64 {
        2 + 2 * self.instances
    }

    pub(super) fn build(&self, w: usize, bp: &mut Blueprint, rt: &mut WorkloadRt) {
        let n = self.instances as usize;
        let sh = bp.tasks.len();
        let daemon = sh + 1;
        let sh_prog = add_program(
            bp,
            Program::new()
                .op(Op::ForkChildren)
                .begin_loop(Some(n as u64))
                .op(Op::Wait { timeout: None })
                .end_loop()
                .op(Op::Exit),
        );
        // Each connection and each child's exit posts the daemon: it forks a child per
        // post until all are forked, then reaps the rest.
        let daemon_prog = add_program(
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
            .op(Op::Exec)
            .op(Op::Post {
                to: Target::Task(daemon),
            })
            .op(Op::Mark { slot: 0 })
            .begin_loop(None);
        let brk = client.ops.len();
        client = client.op(Op::BreakAfter {
            slot: 0,
            dur: self.length,
            after: 0,
            keep_count: false,
        });
        let (server, client) = if self.test.rr() {
            (
                Program::new()
                    .begin_loop(None)
                    .op(Op::NetRecv {
                        sock: 0,
                        calls: 1,
                        trunc: false,
                    })
                    .op(Op::NetSend {
                        sock: 0,
                        size: NetSize::Fixed(self.rr.1),
                    })
                    .end_loop(),
                client
                    .op(Op::NetSend {
                        sock: 0,
                        size: NetSize::Fixed(self.rr.0),
                    })
                    .op(Op::NetRecv {
                        sock: 0,
                        calls: 1,
                        trunc: false,
                    }),
            )
        } else {
            (
                Program::new()
                    .begin_loop(None)
                    .op(Op::NetRecv {
                        sock: 0,
                        calls: 1,
                        trunc: false,
                    })
                    .end_loop(),
                client.op(Op::NetSend {
                    sock: 0,
                    size: NetSize::Fixed(self.send_size),
                }),
            )
        };
        let mut client = client.end_loop();
        let after = client.ops.len();
        client.ops[brk] = Op::BreakAfter {
            slot: 0,
            dur: self.length,
            after,
            keep_count: false,
        };
        let client = client
            .op(Op::Mark { slot: 1 })
            .op(Op::NetClose { sock: 0 })
            .op(Op::Exit);
        let client_prog = add_program(bp, client);
        let server_prog = add_program(bp, server.op(Op::Exit));
        push_pair_tasks(
            bp,
            rt,
            w,
            n,
            self.test.proto(),
            Role {
                name: "sh",
                prog: sh_prog,
            },
            Role {
                name: "netserver",
                prog: daemon_prog,
            },
            Role {
                name: "netperf",
                prog: client_prog,
            },
            Role {
                name: "netserver",
                prog: server_prog,
            },
        );
    }

    /// Per instance: elapsed seconds, then the test's throughput (trans/s, or send and
    /// receive Mbit/s).
    fn results(&self, index: usize, outcome: &Outcome) -> Vec<(f64, f64, f64)> {
        let first = task_range(outcome, index).start + 2;
        let net = &outcome.workloads()[index].net;
        (0..self.instances as usize)
            .map(|i| {
                let marks = outcome.tasks()[first + i].marks;
                let secs = match marks {
                    [Some(a), Some(b)] if b > a => (b - a) as f64 / 1e9,
                    _ => 0.0,
                };
                let c = &net.conns[i];
                let per_s = |x: u64| if secs > 0.0 { x as f64 / secs } else { 0.0 };
                if self.test.rr() {
                    (secs, per_s(c.dirs[1].received.0), 0.0)
                } else {
                    let mbit = |bytes: u64| per_s(bytes) * 8.0 / 1e6;
                    (secs, mbit(c.dirs[0].sent.1), mbit(c.dirs[0].received.1))
                }
            })
            .collect()
    }

    pub(super) fn report(&self, index: usize, outcome: &Outcome) -> WorkloadReport {
        let res = self.results(index, outcome);
        let finished = res.iter().all(|r| r.0 > 0.0);
        let ncpus = outcome.cpus().len() as f64;
        // CPU utilisation as netperf's "S" method reads /proc/stat: the machine's busy
        // share, over the measurement window.
        let cpu_ns = outcome.window_ns() as f64 * ncpus;
        let busy: u64 = outcome
            .metrics()
            .cpus
            .iter()
            .map(|c| c.task_ns + c.overhead_total())
            .sum();
        let util = if cpu_ns > 0.0 {
            100.0 * busy as f64 / cpu_ns
        } else {
            0.0
        };
        let cpu = self.local_cpu || self.remote_cpu;
        let (lu, ru) = (
            if self.local_cpu { util } else { -1.0 },
            if self.remote_cpu { util } else { -1.0 },
        );
        // calc_service_demand: us per transaction, or per KB for streams.
        let sd = |u: f64, units_per_s: f64| {
            if u < 0.0 || units_per_s <= 0.0 {
                -1.0
            } else {
                u * 10_000.0 / units_per_s * ncpus
            }
        };
        let mut text = String::new();
        let mut json_inst = Vec::new();
        for (i, &(secs, a, b)) in res.iter().enumerate() {
            // print_top_test_header; "()" because netperf's inet_ntop gets a buffer of
            // sizeof(char *) bytes, too small for "127.0.0.1".
            text.push_str(&format!(
                "{} from 0.0.0.0 (0.0.0.0) port 0 AF_INET to {} () port 0 AF_INET : demo{}\n",
                self.test.title(),
                self.host,
                if self.test.rr() {
                    " : first burst 0"
                } else {
                    ""
                }
            ));
            match self.test {
                NetperfTest::TcpRr | NetperfTest::UdpRr => {
                    let (ls, lr) = self.bufs();
                    let (req, rsp) = self.rr;
                    if cpu {
                        text.push_str("Local /Remote\nSocket Size   Request Resp.  Elapsed Trans.   CPU    CPU    S.dem   S.dem\nSend   Recv   Size    Size   Time    Rate     local  remote local   remote\nbytes  bytes  bytes   bytes  secs.   per sec  % S    % S    us/Tr   us/Tr\n\n");
                        text.push_str(&format!(
                            "{ls:<6} {lr:<6} {req:<6}  {rsp:<6} {secs:<6.2}  {a:<6.2}  {lu:<6.2} {ru:<6.2} {:<6.3}  {:<6.3} \n{ls:<6} {lr:<6}\n\n",
                            sd(lu, a),
                            sd(ru, a)
                        ));
                    } else {
                        text.push_str("Local /Remote\nSocket Size   Request  Resp.   Elapsed  Trans.\nSend   Recv   Size     Size    Time     Rate         \nbytes  Bytes  bytes    bytes   secs.    per sec   \n\n");
                        text.push_str(&format!(
                            "{ls:<6} {lr:<6} {req:<6}   {rsp:<6}  {secs:<6.2}   {a:>7.2}   \n{ls:<6} {lr:<6}\n\n"
                        ));
                    }
                    json_inst.push(serde_json::json!({
                        "instance": i, "elapsed_s": secs, "trans_per_s": a,
                    }));
                }
                NetperfTest::TcpStream => {
                    let m = self.send_size;
                    if cpu {
                        text.push_str("Recv   Send    Send                          Utilization       Service Demand\nSocket Socket  Message  Elapsed              Send     Recv     Send    Recv\nSize   Size    Size     Time     Throughput  local    remote   local   remote\nbytes  bytes   bytes    secs.    10^6bits/s  % S      % S      us/KB   us/KB\n\n");
                        let kb = a * 1e6 / 8.0 / 1024.0;
                        text.push_str(&format!(
                            "{TCP_RMEM_DEFAULT:>6} {TCP_WMEM_DEFAULT:>6} {m:>6}    {secs:<6.2}     {a:>7.2}   {lu:<6.2}   {ru:<6.2}   {:<6.3}  {:<6.3} \n\n",
                            sd(lu, kb),
                            sd(ru, kb)
                        ));
                    } else {
                        text.push_str("Recv   Send    Send                          \nSocket Socket  Message  Elapsed              \nSize   Size    Size     Time     Throughput  \nbytes  bytes   bytes    secs.    10^6bits/sec  \n\n");
                        text.push_str(&format!(
                            "{TCP_RMEM_DEFAULT:>6} {TCP_WMEM_DEFAULT:>6} {m:>6}    {secs:<6.2}   {a:>7.2}   \n\n"
                        ));
                    }
                    json_inst.push(serde_json::json!({
                        "instance": i, "elapsed_s": secs, "mbit_per_s": a,
                    }));
                }
                NetperfTest::UdpStream => {
                    let m = self.send_size;
                    let c = &outcome.workloads()[index].net.conns[i].dirs[0];
                    let (sent, got) = (c.sent.0, c.received.0);
                    if cpu {
                        text.push_str("Socket  Message  Elapsed      Messages                   CPU      Service\nSize    Size     Time         Okay Errors   Throughput   Util     Demand\nbytes   bytes    secs            #      #   10^6bits/sec % SS     us/KB\n\n");
                        let kb = |x: f64| x * 1e6 / 8.0 / 1024.0;
                        text.push_str(&format!(
                            "{UDP_MEM_DEFAULT:>6}  {m:>6}   {secs:<7.2}   {sent:>7} {:>6}    {a:>7.1}     {lu:<6.2}   {:<6.3}\n{UDP_MEM_DEFAULT:>6}           {secs:<7.2}   {got:>7}           {b:>7.1}     {ru:<6.2}   {:<6.3}\n\n",
                            0,
                            sd(lu, kb(a)),
                            sd(ru, kb(b))
                        ));
                    } else {
                        text.push_str("Socket  Message  Elapsed      Messages                \nSize    Size     Time         Okay Errors   Throughput\nbytes   bytes    secs            #      #   10^6bits/sec\n\n");
                        text.push_str(&format!(
                            "{UDP_MEM_DEFAULT:>6}  {m:>6}   {secs:<7.2}   {sent:>7} {:>6}    {a:>7.2}\n{UDP_MEM_DEFAULT:>6}           {secs:<7.2}   {got:>7}           {b:>7.2}\n\n",
                            0
                        ));
                    }
                    json_inst.push(serde_json::json!({
                        "instance": i, "elapsed_s": secs, "send_mbit_per_s": a,
                        "recv_mbit_per_s": b, "sent_msgs": sent, "recv_msgs": got,
                        "dropped_msgs": c.dropped,
                    }));
                }
            }
        }
        let col =
            |k: usize| -> Vec<f64> { res.iter().map(|r| if k == 0 { r.1 } else { r.2 }).collect() };
        let unit = if self.test.rr() { "trans/s" } else { "Mbit/s" };
        let mut json = serde_json::Map::new();
        json.insert("test".into(), self.test.name().into());
        json.insert("instances".into(), serde_json::Value::Array(json_inst));
        let mut summary =
            |name: &str, v: Vec<f64>, json: &mut serde_json::Map<String, serde_json::Value>| {
                let (h, s) = (hmean(&v), v.iter().sum::<f64>());
                let label = match name.trim_end_matches('_') {
                    "" => String::new(),
                    l => format!(" {l}"),
                };
                text.push_str(&format!(
                "fairsim netperf summary (mmtests style): {}{label} over {} instances: Hmean {h:.2} {unit}, sum {s:.2} {unit}\n",
                self.test.name(),
                v.len()
            ));
                json.insert(format!("{name}hmean"), h.into());
                json.insert(format!("{name}sum"), s.into());
            };
        match self.test {
            NetperfTest::UdpStream => {
                summary("send_", col(0), &mut json);
                summary("recv_", col(1), &mut json);
            }
            _ => summary("", col(0), &mut json),
        }
        if cpu {
            json.insert("cpu_util_percent".into(), util.into());
        }
        WorkloadReport {
            text,
            json: serde_json::Value::Object(json),
            finished,
        }
    }

    /// Local send and receive socket sizes as netperf prints them.
    fn bufs(&self) -> (u64, u64) {
        match self.test.proto() {
            NetProto::Tcp => (TCP_WMEM_DEFAULT, TCP_RMEM_DEFAULT),
            NetProto::Udp => (UDP_MEM_DEFAULT, UDP_MEM_DEFAULT),
        }
    }
}

/// The harmonic mean (mmtests' Hmean): 0 when any value is 0.
pub fn hmean(v: &[f64]) -> f64 {
    if v.is_empty() || v.iter().any(|&x| x <= 0.0) {
        return 0.0;
    }
    v.len() as f64 / v.iter().map(|x| 1.0 / x).sum::<f64>()
}
