//! The memory budget covers building the sched domains, for `fairsim topology` and
//! `fairsim run`: a machine whose hierarchy would not fit (hundreds of NUMA levels from
//! a distance table with many distinct values) is refused before anything is built, with
//! one line on stderr and a non-zero exit.

use std::process::Output;

use crate::common::fairsim;

/// An `n`-node distance table with many distinct distances, in `--numa-distance` form:
/// 10 on the diagonal, 11..=255 elsewhere, symmetric. From 64 nodes on it uses all 245
/// remote distances the kernel accepts, so `sched_init_numa` makes 245 NUMA levels.
/// (The same table as `numa_matrix` in the topology crate's `build_memory` test.)
fn numa_matrix(nodes: usize) -> String {
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

/// Asserts a refusal for the memory budget: exit status 2, nothing on stdout, and one
/// line on stderr naming the machine's size and both figures.
fn assert_refused(o: &Output, cpus: &str, budget_mib: &str) -> String {
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        o.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with(&format!(
            "fairsim: error: --machine: the sched domains of {cpus} CPUs in 128 NUMA node(s) \
             with 249 topology levels need about "
        )),
        "{err}"
    );
    assert!(
        err.contains(&format!(
            "MiB, more than the {budget_mib} MiB budget; allowed: "
        )),
        "{err}"
    );
    err
}

#[test]
fn topology_refuses_a_128_node_machine_over_its_budget() {
    let matrix = numa_matrix(128);
    // 2048 CPUs in 128 nodes: about 700 MiB to build, estimated above 1 GiB.
    let o = fairsim(&[
        "topology",
        "--smp",
        "2048",
        "--numa-distance",
        &matrix,
        "--memory-budget",
        "1000",
    ]);
    assert_refused(&o, "2048", "1000");
    // 8192 CPUs: more than the default budget; building it would take minutes and
    // gigabytes, the refusal comes first.
    let o = fairsim(&["topology", "--smp", "8192", "--numa-distance", &matrix]);
    assert_refused(&o, "8192", "4096");
}

#[test]
fn run_counts_the_sched_domains_against_its_budget() {
    let matrix = numa_matrix(128);
    let o = fairsim(&[
        "run",
        "--smp",
        "2048",
        "--numa-distance",
        &matrix,
        "--workload",
        "nanosleep",
        "--memory-budget",
        "1000",
    ]);
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("fairsim: error: --machine: ") && err.contains("1000 MiB budget"),
        "{err}"
    );
}

#[test]
fn topology_within_its_budget_builds() {
    let o = fairsim(&[
        "topology",
        "--smp",
        "64",
        "--numa-distance",
        &numa_matrix(8),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // A budget of 0 MiB is an invalid value, named as such.
    let o = fairsim(&["topology", "--smp", "64", "--memory-budget", "0"]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("--memory-budget: invalid value '0'"), "{err}");
}

#[test]
fn race_counts_its_sched_domains_against_the_budget() {
    let matrix = numa_matrix(128);
    let o = fairsim(&[
        "race",
        "--smp",
        "2048",
        "--numa-distance",
        &matrix,
        "--memory-budget",
        "1000",
        "--duration",
        "10ms",
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("2048 CPUs") && err.contains("more than the 1000 MiB budget"),
        "{err}"
    );
}

#[test]
fn run_counts_its_json_results_against_the_budget() {
    // 2048 CPUs in 64 nodes keep about 51 domain levels each: the run fits in about
    // 600 MiB, its JSON document takes gigabytes more, so --json is what gets refused.
    let matrix = numa_matrix(64);
    let o = fairsim(&[
        "run",
        "--smp",
        "sockets=64,cores=16,threads=2",
        "--numa-distance",
        &matrix,
        "--duration",
        "10ms",
        "--json",
        "never-written.json",
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("fairsim: error: --json: the run and its JSON results need about")
            && err.contains("more than the 4096 MiB budget"),
        "{err}"
    );
    assert!(!std::path::Path::new("never-written.json").exists());
}

/// The dmesg listing and the JSON grow with the square of the CPU count (each CPU lists
/// its domains' groups), and both were once built whole before a byte was written: 40 MB
/// of JSON for 512 CPUs took 220 MB resident, 610 MB for 2048 CPUs took 3 GB. They are
/// written as they are produced, so the shell's `ulimit -v` of 100 MB, far below what
/// holding either listing takes (and its doubling as a String grows), is enough.
#[test]
#[cfg(target_os = "linux")]
fn topology_streams_its_json_and_dmesg_in_bounded_memory() {
    use std::process::{Command, Stdio};
    for (smp, format) in [
        // 512 CPUs: 40 MB of JSON, 128 groups (a socket's cores) in each CPU's MC domain.
        ("sockets=2,cores=128,threads=2", "json"),
        // 2048 CPUs in one package: 79 MB of dmesg, 2048 groups per CPU's MC domain.
        ("2048", "dmesg"),
    ] {
        let cmd = format!(
            "ulimit -v 100000; exec {} topology --smp {smp} --format {format} > /dev/null",
            env!("CARGO_BIN_EXE_fairsim")
        );
        let o = Command::new("sh")
            .args(["-c", &cmd])
            .stderr(Stdio::piped())
            .output()
            .expect("run sh");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(o.status.success(), "--smp {smp} --format {format}: {err}");
        assert!(err.is_empty(), "--smp {smp} --format {format}: {err}");
    }
}
