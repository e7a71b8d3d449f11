//! End-to-end tests of `--governor` and machine files with frequency domains.

use crate::common::{fairsim, stderr};

/// The one line a refused command prints, with exit status 2.
fn refused(args: &[&str]) -> String {
    let o = fairsim(args);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {e}");
    assert_eq!(e.trim_end().lines().count(), 1, "{e}");
    e
}

#[test]
fn rk3399_prints_time_in_state_per_policy() {
    let o = fairsim(&[
        "run",
        "--topology",
        "rk3399",
        "--workload",
        "sysbench-cpu:threads=1,cpus=4",
        "--duration",
        "300ms",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8(o.stdout).unwrap();
    assert!(out.contains("== cpufreq: governor schedutil =="), "{out}");
    assert!(out.contains("policy0 (CPUs 0-3)") && out.contains("policy4 (CPUs 4-5)"));
    assert!(out.contains("  time_in_state:\n    408000 "), "{out}");
}

#[test]
fn governor_settings_are_refused_in_one_line() {
    let base = ["run", "--workload", "sysbench-cpu:events=10"];
    let with = |extra: &[&'static str]| {
        let mut v: Vec<&str> = base.to_vec();
        v.extend_from_slice(extra);
        v
    };
    let e = refused(&with(&["--topology", "tc2", "--governor", "schedutil"]));
    assert!(e.contains("--governor") && e.contains("no cpufreq"), "{e}");
    let e = refused(&with(&["--topology", "rk3399", "--governor", "ondemand"]));
    assert!(
        e.contains("--governor: 'ondemand'") && e.contains("allowed"),
        "{e}"
    );
    let e = refused(&with(&[
        "--topology",
        "rk3399",
        "--governor",
        "userspace:1200",
    ]));
    assert!(e.contains("408000 to 1800000 kHz"), "{e}");
}

#[test]
fn machine_files_give_per_cpu_policies() {
    let dir = std::env::temp_dir().join(format!("fairsim-cpufreq-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("box.toml");
    std::fs::write(
        &path,
        "[smp]\ncores = 2\n[[cpufreq]]\ncpus = \"all\"\npolicy = \"cpu\"\ntransition_latency_ns = 20000\nopps = [{ khz = 800000 }, { khz = 1600000 }]\n",
    )
    .unwrap();
    let m = path.to_str().unwrap();
    let o = fairsim(&[
        "run",
        "--machine",
        m,
        "--workload",
        "sysbench-cpu:events=20",
        "--governor",
        "powersave",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8(o.stdout).unwrap();
    assert!(
        out.contains("policy1 (CPUs 1): 800000-1600000 kHz"),
        "{out}"
    );
    assert!(out.contains("cur 800000 kHz"), "{out}");
    std::fs::write(
        &path,
        "[smp]\ncores = 2\n[[cpufreq]]\ncpus = \"0\"\ntransition_latency_ns = 20000\nopps = [{ khz = 800000 }]\n",
    )
    .unwrap();
    let e = refused(&["run", "--machine", m, "--workload", "sysbench-cpu"]);
    assert!(e.contains("CPUs 1 are in no frequency domain"), "{e}");
    std::fs::remove_dir_all(&dir).ok();
}
