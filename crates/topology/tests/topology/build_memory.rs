//! `estimate_build_memory` bounds what `build_sched_domains` allocates, for machines from
//! a few CPUs to thousands, flat and with up to 128 NUMA nodes and hundreds of distinct
//! distances; the estimate must be at least the build's peak, and not so loose that
//! ordinary machines look too big.
//!
//! The workspace forbids `unsafe`, so no counting global allocator can be installed;
//! the build's memory is measured as the kernel sees it instead, which is also what a
//! budget is for. Each machine is described and built in a child process (this test
//! binary run again on `one_machine`), which reports how far its peak resident set
//! (`VmHWM`) rose above its resident set at the start. That rise covers the build's peak
//! heap plus whatever the allocator keeps of freed blocks, and also the machine itself
//! and the parser's temporaries; the test allows twice the machine's own masks for the
//! latter, so the figure the estimate must reach is never below what the build alone
//! allocates. A fresh process per machine keeps memory freed by earlier builds out.

use std::process::Command;

use fairsim_topology::source::{parse_spec, preset, SpecOptions, PRESETS};
use fairsim_topology::{build_sched_domains, estimate_build_memory, Arch, BuildOptions, Machine};

/// The variable that tells a run of this binary which machine to measure.
const CHILD: &str = "FAIRSIM_BUILD_MEMORY_MACHINE";

/// An `n`-node distance table with many distinct distances: 10 on the diagonal, and
/// 11..=255 elsewhere, symmetric, in `--numa-distance` form. 64 nodes and more use all
/// 245 possible remote distances.
pub(crate) fn numa_matrix(nodes: usize) -> String {
    let d = |i: usize, j: usize| {
        if i == j {
            10
        } else {
            11 + ((i + j) * 7 + i.abs_diff(j) * 13) % 245
        }
    };
    (0..nodes)
        .map(|i| {
            (0..nodes)
                .map(|j| d(i, j).to_string())
                .collect::<Vec<_>>()
                .join(",")
        })
        .collect::<Vec<_>>()
        .join(";")
}

fn spec(smp: &str, arch: Arch, distance: Option<String>) -> Machine {
    let mut o = SpecOptions::new(smp, arch);
    o.numa_distance = distance;
    parse_spec(&o).unwrap()
}

/// Describes one of the measured machines.
type MachineFn = Box<dyn Fn() -> (Machine, BuildOptions)>;

/// The machines measured, by index, each with its build options; each is described only
/// when asked for, so a child process holds just the one it measures.
fn machines() -> Vec<MachineFn> {
    let plain = BuildOptions::default();
    let ilb = BuildOptions {
        shared_all_non_numa: true,
        ..BuildOptions::default()
    };
    let mut v: Vec<MachineFn> = PRESETS
        .iter()
        .map(|&(name, _)| -> MachineFn { Box::new(move || (preset(name).unwrap(), plain)) })
        .collect();
    let specs: [(&str, Arch, usize, BuildOptions); 11] = [
        ("8192", Arch::X86, 1, plain),
        ("sockets=2,cores=56,threads=2", Arch::X86, 1, ilb),
        ("4096", Arch::X86, 1, plain),
        ("sockets=2,cores=1024,threads=2", Arch::X86, 1, plain),
        ("sockets=4,cores=256,threads=2", Arch::X86, 4, plain),
        ("sockets=2,clusters=8,cores=4", Arch::Arm64, 8, plain),
        // Nodes inside packages: x86 drops PKG and NODE spans a slice of the package.
        ("sockets=2,cores=16,threads=2", Arch::X86, 8, ilb),
        ("sockets=64,cores=4,threads=2", Arch::X86, 64, plain),
        ("sockets=64,cores=16,threads=2", Arch::X86, 64, plain),
        ("sockets=128,cores=2", Arch::X86, 128, plain),
        ("sockets=128,cores=8", Arch::X86, 128, plain),
    ];
    for (smp, arch, nodes, opts) in specs {
        v.push(Box::new(move || {
            let distance = (nodes > 1).then(|| numa_matrix(nodes));
            (spec(smp, arch, distance), opts)
        }));
    }
    v
}

/// The heap a `Machine` holds: four sibling masks per CPU, a mask per node and the
/// distance rows, with the allocator's per-block header and rounding.
fn machine_bytes(m: &Machine) -> u64 {
    let block = |bytes: u64| (bytes + 8).div_ceil(16).max(2) * 16;
    let n = m.nr_cpus() as u64;
    let nodes = m.nr_nodes() as u64;
    let mask = block(n.div_ceil(64) * 8);
    let cpu = std::mem::size_of::<fairsim_topology::CpuTopology>() as u64;
    block(n * cpu) + 4 * n * mask + nodes * (mask + 32) + nodes * block(4 * nodes)
}

fn status_kib(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or_else(|| panic!("{field} in /proc/self/status"))
}

/// The child's side: builds the machine named by [`CHILD`] and prints the rise of its
/// peak resident set. Does nothing in an ordinary test run.
#[test]
fn one_machine() {
    let Ok(index) = std::env::var(CHILD) else {
        return;
    };
    let before = status_kib("VmRSS:");
    let file_before = status_kib("RssFile:");
    let (m, opts) = machines()[index.parse::<usize>().unwrap()]();
    let sds = build_sched_domains(&m, opts).unwrap();
    let peak = status_kib("VmHWM:");
    // The resident set also counts the binary's own code and data pages, which the build
    // faults in as it first runs them; they are not memory the build allocated, and their
    // number depends on how the test binary was linked. File-backed pages stay resident
    // over a run this short, so what they grew by is read off after the build.
    let file_grew = status_kib("RssFile:").saturating_sub(file_before);
    drop(sds);
    let heap = peak.saturating_sub(before).saturating_sub(file_grew);
    println!("build-peak-bytes={}", heap << 10);
}

#[test]
#[cfg(target_os = "linux")]
fn the_estimate_bounds_the_builds_peak_memory() {
    let me = std::env::current_exe().unwrap();
    for (index, describe) in machines().iter().enumerate() {
        let (m, opts) = describe();
        let out = Command::new(&me)
            .args([
                "--exact",
                "build_memory::one_machine",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(CHILD, index.to_string())
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{}: {stdout}", m.name);
        let peak: u64 = stdout
            .split("build-peak-bytes=")
            .nth(1)
            .and_then(|rest| rest.split_whitespace().next())
            .unwrap_or_else(|| panic!("{}: no figure in {stdout}", m.name))
            .parse()
            .unwrap();
        let estimate = estimate_build_memory(&m, opts);
        // The machine, and as much again for the parser's temporaries.
        let machine = 2 * machine_bytes(&m);
        let peak = peak.saturating_sub(machine);
        eprintln!(
            "{:40} {:>5} CPUs: peak {:>11} B, estimate {:>11} B ({:.2}x)",
            m.name,
            m.nr_cpus(),
            peak,
            estimate,
            estimate as f64 / peak.max(1) as f64
        );
        assert!(
            estimate >= peak,
            "{}: the resident set rose by {peak} B beyond the machine's {machine} B, \
             the estimate is {estimate} B",
            m.name
        );
        // Loose enough to stay an upper bound, tight enough to be worth checking: a
        // bound many times the real figure would refuse machines that fit.
        assert!(
            estimate <= 4 * peak.max(4 << 20),
            "{}: the estimate {estimate} B is over 4x the peak {peak} B",
            m.name
        );
    }
}

#[test]
fn many_distinct_distances_are_counted_before_anything_is_built() {
    // The machine: 2048 CPUs in 128 nodes, 246 distances, so 249 levels. Its
    // build holds about 700 MiB; the estimate used to be 60 MiB.
    let m = spec("2048", Arch::X86, Some(numa_matrix(128)));
    let estimate = estimate_build_memory(&m, BuildOptions::default());
    assert!(estimate > 1 << 30, "estimate {estimate} B");
    // Four times the CPUs: beyond the default 4 GiB budget, found without building.
    let m = spec("8192", Arch::X86, Some(numa_matrix(128)));
    let estimate = estimate_build_memory(&m, BuildOptions::default());
    assert!(estimate > 4 << 30, "estimate {estimate} B");
}
