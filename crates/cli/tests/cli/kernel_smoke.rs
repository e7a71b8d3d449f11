//! Every kernel runs every workload on three machines of different shapes (SMT and MC on
//! one socket, two NUMA nodes, TC2's asymmetric big.LITTLE), short, with the scheduler's
//! and the engine's invariants checked after every event: the CI smoke test of issue 31.

use std::process::Command;

const KERNELS: [&str; 6] = ["6.12", "6.5", "4.16", "4.15", "4.5", "3.9"];
const MACHINES: [&str; 3] = ["smt-mc-1s4c2t", "numa-2s4c2t", "tc2-2big3little"];
const WORKLOADS: [&str; 9] = [
    "schbench:m=2,t=4,c=2ms,s=2ms",
    "hackbench:g=2,l=20",
    "nanosleep:tasks=8",
    "sysbench-cpu:threads=4,events=20",
    "netperf:t=TCP_RR,instances=2",
    "tbench:clients=2",
    "cyclictest:t=2,a,n",
    "forkbench:scripts=2",
    "rtapp:RTAPP",
];

#[test]
fn every_kernel_runs_every_workload_on_three_machines() {
    let rtapp = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../experiments/seed-003/rampup.json"
    );
    let mut failures = Vec::new();
    for k in KERNELS {
        for m in MACHINES {
            for w in WORKLOADS {
                let w = w.replace("RTAPP", rtapp);
                let out = Command::new(env!("CARGO_BIN_EXE_fairsim"))
                    .args(["run", "--kernel", k, "--topology", m, "-w", &w])
                    .args(["--duration", "150ms", "--check-invariants", "--seed", "2"])
                    .output()
                    .expect("run fairsim");
                let stdout = String::from_utf8_lossy(&out.stdout);
                let named = k == "6.12" || stdout.contains(&format!("--kernel {k})"));
                if !out.status.success() || !named {
                    failures.push(format!(
                        "--kernel {k} --topology {m} -w {w}: {} {}",
                        out.status,
                        String::from_utf8_lossy(&out.stderr).trim()
                    ));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
