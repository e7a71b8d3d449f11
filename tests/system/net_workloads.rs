//! The loopback network workloads, netperf and tbench: their protocols' exchanges are
//! counted as the tools count them, flow control and UDP drops behave as the kernel's,
//! bad options are refused in one line, runs are deterministic, and on the build host's
//! model they land near what the host measured (`validation/host/data/net-*.json`,
//! `tbench-*.json`).

use crate::common;

use std::path::{Path, PathBuf};

use fairsim_des::time::{MS, SEC};
use fairsim_engine::world::RtState;
use fairsim_engine::{CostTable, WorldConfig};
use fairsim_output::to_json;
use fairsim_topology::source::{parse_spec, SpecOptions};
use fairsim_topology::{Arch, BuildOptions};
use fairsim_workloads::run::{RunSpec, DEFAULT_MEMORY_BUDGET};
use fairsim_workloads::scenario::Scenario;
use fairsim_workloads::tbench_mix::LoadOp;
use fairsim_workloads::{run, RunResult, WorkloadSpec};

fn run_checked(machine: &str, w: &str, ms: u64, seed: u64) -> RunResult {
    let mut s = common::spec(machine, &[w], ms, seed);
    s.config.check_invariants = true;
    run(&s, &mut |_, _| {}).unwrap_or_else(|e| panic!("{machine} {w}: {e}"))
}

#[test]
fn an_rr_transaction_is_one_request_and_one_response() {
    for w in [
        "netperf:t=TCP_RR,l=20ms,instances=3",
        "netperf:t=UDP_RR,l=20ms,instances=3,r=64,1024",
    ] {
        let r = run_checked("numa-2s4c2t", w, 1_000, 3);
        assert!(r.reports[0].finished, "{w}");
        assert_eq!(r.outcome.live_tasks(), 0, "{w}: every task exits");
        let net = &r.outcome.workloads()[0].net;
        let json = &r.reports[0].json;
        for (i, c) in net.conns.iter().enumerate() {
            let (req, rsp) = (&c.dirs[0], &c.dirs[1]);
            assert!(
                rsp.received.0 > 100,
                "{w}: {i}: {} transactions",
                rsp.received.0
            );
            // Every request was answered by one response, and the client read each.
            assert_eq!(req.sent.0, req.received.0, "{w}: {i}");
            assert_eq!(req.received.0, rsp.sent.0, "{w}: {i}");
            assert_eq!(rsp.sent.0, rsp.received.0, "{w}: {i}");
            assert_eq!((req.dropped, rsp.dropped), (0, 0), "{w}: {i}");
            // The response size is the test's, not the request's.
            if w.contains("r=64,1024") {
                assert_eq!(rsp.received.1, 1024 * rsp.received.0, "{w}: {i}");
                assert_eq!(req.sent.1, 64 * req.sent.0, "{w}: {i}");
            }
            // netperf's rate is its transactions over its own elapsed time.
            let inst = &json["instances"][i];
            let rate = inst["trans_per_s"].as_f64().unwrap();
            let secs = inst["elapsed_s"].as_f64().unwrap();
            assert!(
                (rate * secs - rsp.received.0 as f64).abs() < 1e-6 * rate.max(1.0),
                "{w}: {i}: {rate} x {secs}"
            );
            assert!((0.02..0.021).contains(&secs), "{w}: {i}: {secs}");
        }
        let sum: f64 = (0..net.conns.len())
            .map(|i| json["instances"][i]["trans_per_s"].as_f64().unwrap())
            .sum();
        assert!((json["sum"].as_f64().unwrap() - sum).abs() < 1e-6 * sum);
        assert!(json["hmean"].as_f64().unwrap() <= sum / 3.0 + 1e-6);
        assert!(r.reports[0].text.contains("MIGRATED"), "{w}");
    }
}

#[test]
fn stream_throughput_grows_with_the_message_size() {
    let mbit = |m: u32, t: &str| {
        let r = run_checked(
            "smt-mc-1s4c2t",
            &format!("netperf:t={t},l=20ms,m={m}"),
            500,
            5,
        );
        assert!(r.reports[0].finished);
        r.reports[0].json["instances"][0]["mbit_per_s"]
            .as_f64()
            .or_else(|| r.reports[0].json["instances"][0]["send_mbit_per_s"].as_f64())
            .unwrap()
    };
    for t in ["TCP_STREAM", "UDP_STREAM"] {
        let (small, large) = (mbit(64, t), mbit(16_384, t));
        assert!(small > 0.0, "{t}");
        // Per-message costs dominate: 256 times the bytes per message is far more than
        // 10 times the throughput.
        assert!(large > 10.0 * small, "{t}: {small} vs {large} Mbit/s");
    }
}

#[test]
fn udp_drops_when_the_receiver_is_slower() {
    let dropped = |w: &str| {
        let r = run_checked("smt-mc-1s4c2t", w, 500, 9);
        let d = r.outcome.workloads()[0].net.conns[0].dirs[0].clone();
        assert!(d.received.0 + d.dropped <= d.sent.0, "{w}");
        let j = &r.reports[0].json["instances"][0];
        assert!(
            j["recv_mbit_per_s"].as_f64().unwrap() <= j["send_mbit_per_s"].as_f64().unwrap(),
            "{w}"
        );
        (d.dropped, d.sent.0)
    };
    // Sender and receiver on one CPU: the receiver runs only when the sender is
    // preempted, and its buffer overflows meanwhile.
    let (one, sent) = dropped("netperf:t=UDP_STREAM,l=20ms,m=1024,cpus=0");
    assert!(one * 10 > sent, "{one} of {sent} dropped on one CPU");
    // A cheap receive on its own CPU keeps up with the sender.
    let (two, _) = dropped("netperf:t=UDP_STREAM,l=20ms,m=1024,cpus=0-1");
    assert!(two < one, "{two} dropped on two CPUs, {one} on one");
}

#[test]
fn tcp_stream_waits_for_window_instead_of_dropping() {
    let r = run_checked(
        "smt-mc-1s4c2t",
        "netperf:t=TCP_STREAM,l=20ms,m=16384,cpus=0",
        500,
        2,
    );
    let d = &r.outcome.workloads()[0].net.conns[0].dirs[0];
    assert_eq!(d.dropped, 0);
    // Everything sent was received once the close ended the test.
    assert_eq!(d.sent, d.received);
    assert!(d.sent.0 > 100);
}

#[test]
fn tbench_ops_complete_and_its_throughput_is_tbenchs() {
    let r = run_checked("smt-mc-1s4c2t", "tbench:t=3,clients=3", 10_000, 4);
    assert!(r.reports[0].finished, "tbench stops by itself");
    assert_eq!(r.outcome.live_tasks(), 0);
    for t in r.outcome.tasks() {
        assert_eq!(t.state, RtState::Exited, "{}", t.name);
    }
    let tb = r.outcome.workloads()[0]
        .model::<fairsim_workloads::tbench_stats::TbenchRt>()
        .expect("tbench's model");
    assert_eq!((tb.warmup, tb.timelimit), (0, 3));
    let json = &r.reports[0].json;
    // Every common operation of the load file ran.
    for op in [
        LoadOp::ReadX,
        LoadOp::WriteX,
        LoadOp::NtCreateX,
        LoadOp::Close,
    ] {
        assert!(tb.ops[op as usize].count > 100, "{op:?}");
    }
    let ops: u64 = tb.ops.iter().map(|o| o.count).sum();
    assert_eq!(json["ops"].as_u64(), Some(ops));
    // tbench's throughput: the bytes of the execute ticks before the stop, over their
    // seconds (ticks 0..2 with -t 3 and no warm-up).
    let bytes: u64 = tb.bytes[0..2].iter().sum();
    let mbs = json["mb_per_s"].as_f64().unwrap();
    assert!((mbs - 1e-6 * bytes as f64 / 2.0).abs() < 1e-9, "{mbs}");
    assert!(mbs > 1.0, "{mbs}");
    // ReadX and WriteX bytes are about 5.4 KB per load-file line.
    let lines: u64 = tb.lines.iter().sum();
    let all: u64 = tb.bytes.iter().sum();
    let per_line = all as f64 / lines as f64;
    assert!((3_000.0..8_000.0).contains(&per_line), "{per_line}");
    let text = &r.reports[0].text;
    assert!(text.contains(&format!(
        "Throughput {} MB/sec  3 clients  3 procs  max_latency=",
        fairsim_workloads::fmt_g(mbs)
    )));
    assert!(json["max_latency_ms"].as_f64().unwrap() > 0.0);
}

#[test]
fn bad_options_get_one_line_naming_the_key() {
    for (w, key) in [
        ("netperf:t=SCTP_RR", "t:"),
        ("netperf:t=TCP_RR,m=100", "m:"),
        ("netperf:t=TCP_STREAM,r=1,1", "r:"),
        ("netperf:t=UDP_RR,r=0,1", "r:"),
        ("netperf:t=UDP_STREAM,m=70000", "m:"),
        ("netperf:H=192.168.1.1", "H:"),
        ("netperf:l=-1", "l:"),
        ("netperf:l=0", "l:"),
        ("netperf:instances=0", "instances:"),
        ("netperf:c=maybe", "c:"),
        ("netperf:q=1", "unknown key 'q'"),
        ("tbench:t=10", "clients"),
        ("tbench:clients=0", "clients:"),
        ("tbench:clients=2,t=0", "t:"),
        ("tbench:clients=2,server=example.com", "server:"),
    ] {
        let e = WorkloadSpec::parse(w).unwrap_err().to_string();
        assert!(e.contains(key), "{w}: {e}");
        assert!(!e.contains('\n'), "{w}: {e}");
    }
}

#[test]
fn same_seed_same_json_bytes() {
    for w in [
        "netperf:t=UDP_STREAM,l=10ms,m=512,instances=4",
        "tbench:t=1,clients=4",
    ] {
        let s = common::spec("numa-2s4c2t", &[w], 2_000, 11);
        let a = run(&s, &mut |_, _| {}).unwrap();
        let b = run(&s, &mut |_, _| {}).unwrap();
        let ja = serde_json::to_string(&to_json(&s, &a)).unwrap();
        let jb = serde_json::to_string(&to_json(&s, &b)).unwrap();
        assert_eq!(ja, jb, "{w}");
        assert_eq!(a.reports[0].text, b.reports[0].text, "{w}");
    }
}

#[test]
fn the_stack_is_charged_as_net_kernel_time_on_the_sending_cpu() {
    use fairsim_engine::world::Overhead;
    // One pair pinned to CPU 0: every send, its softirq and every receive run there, and
    // the other CPUs see no network work.
    let r = run_checked("smt-mc-1s4c2t", "netperf:t=TCP_RR,l=10ms,cpus=0", 200, 1);
    let net: Vec<u64> = r
        .outcome
        .metrics()
        .cpus
        .iter()
        .map(|c| c.overhead_ns()[Overhead::Net as usize])
        .collect();
    assert!(net[0] > 0);
    assert!(net[1..].iter().all(|&n| n == 0), "{net:?}");
    let c = CostTable::default();
    let trans = r.outcome.workloads()[0].net.conns[0].dirs[1].received.0;
    // Per transaction: two sends with their softirqs and two receives of one byte (the
    // copies round to 0 ns), plus the close's FIN.
    let per = 2 * (c.tcp_send + c.tcp_rx + c.tcp_recv);
    let expect = trans * per + c.tcp_send + c.tcp_rx;
    assert!(
        net[0].abs_diff(expect) <= per,
        "{} ns charged, {expect} expected for {trans} transactions",
        net[0]
    );
}

fn host_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("validation/host")
}

/// A run on the build host's model (`validation/host/host.toml`), noise off.
fn host_run(w: &str, duration: u64) -> RunResult {
    let sc = Scenario::load(&host_dir().join("host.toml")).unwrap();
    let machine = parse_spec(&SpecOptions::new(sc.smp.as_deref().unwrap(), Arch::X86)).unwrap();
    let mut cost = CostTable::default();
    for (k, v) in &sc.cost {
        cost.apply(&format!("{k}={v}")).unwrap();
    }
    let config = WorldConfig {
        cost,
        duration,
        cpuidle: fairsim_engine::world::Cpuidle::parse(sc.cpuidle.as_deref().unwrap()).unwrap(),
        ..WorldConfig::default()
    };
    let spec = RunSpec {
        cpusets: Vec::new(),
        machine: machine.into(),
        build: BuildOptions::default(),
        workloads: vec![WorkloadSpec::parse(w).unwrap()],
        config,
        memory_budget: DEFAULT_MEMORY_BUDGET,
    };
    run(&spec, &mut |_, _| {}).unwrap()
}

fn measured(name: &str, key: &str) -> f64 {
    let path = host_dir().join("data").join(format!("{name}.json"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
    let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    doc["tool_metrics"][key]
        .as_f64()
        .unwrap_or_else(|| panic!("{name}: no tool_metrics.{key}"))
}

#[test]
fn ping_pongs_on_the_host_model_are_within_2x_of_the_host() {
    for (name, w) in [
        ("net-tcp-rr-s1-cpus0-0", "netperf:t=TCP_RR,l=200ms,cpus=0"),
        ("net-udp-rr-s1-cpus0-0", "netperf:t=UDP_RR,l=200ms,cpus=0"),
        ("net-tcp-rr-s1-cpus0-1", "netperf:t=TCP_RR,l=200ms"),
        ("net-udp-rr-s1-cpus0-1", "netperf:t=UDP_RR,l=200ms"),
        (
            "net-tcp-rr-s60000-cpus0-0",
            "netperf:t=TCP_RR,l=200ms,r=60000,60000,cpus=0",
        ),
    ] {
        let host_us = measured(name, "usecs_per_op");
        let r = host_run(w, 5 * SEC);
        let rate = r.reports[0].json["instances"][0]["trans_per_s"]
            .as_f64()
            .unwrap();
        let ours_us = 1e6 / rate;
        assert!(
            ours_us < 2.0 * host_us && host_us < 2.0 * ours_us,
            "{name}: fairsim {ours_us:.2} us per round trip, host {host_us:.2} us"
        );
    }
}

#[test]
fn tbench_on_the_host_model_is_within_2x_of_the_host() {
    for c in [2, 4] {
        let name = format!("tbench-c{c}-t5");
        let host = measured(&name, "mb_per_s");
        let r = host_run(&format!("tbench:t=5,clients={c}"), 60 * SEC);
        let ours = r.reports[0].json["mb_per_s"].as_f64().unwrap();
        assert!(
            ours < 2.0 * host && host < 2.0 * ours,
            "{name}: fairsim {ours:.1} MB/s, host {host:.1} MB/s"
        );
        assert!(r.outcome.now().0 < 10 * SEC + 100 * MS);
    }
}
