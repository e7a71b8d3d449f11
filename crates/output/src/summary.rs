//! The readable summary: a header, each workload's tool-style output, and a scheduler
//! section.

use fairsim_balance::Kernel;

use fairsim_des::time::format_duration;
use fairsim_engine::cost::{CostTable, CostTableName};
use fairsim_engine::world::Overhead;
use fairsim_workloads::run::{RunResult, RunSpec};

use super::totals;

/// The line naming an older kernel than 6.12 (`--kernel`), or nothing for 6.12, whose
/// summary reads as it always has: `kernel: Linux 4.5.0 (CFS; --kernel 4.5)`.
pub fn kernel_line(k: Kernel) -> String {
    if k == Kernel::V6_12 {
        String::new()
    } else {
        format!(
            "kernel: Linux {} ({}; --kernel {})\n",
            k.release(),
            if k.is_cfs() { "CFS" } else { "EEVDF" },
            k.name()
        )
    }
}

/// The cost table the run started from, and the constants it overrode, as `--cost`
/// takes them: `x86-2020s`, or `arm-2013 with context_switch=2us`.
fn cost_diff(c: &CostTable, base: CostTableName) -> String {
    let d = base.table();
    let words: Vec<String> = CostTable::NAMES
        .iter()
        .filter(|n| c.get(n) != d.get(n))
        .map(|n| format!("{n}={}", format_duration(c.get(n).unwrap_or(0))))
        .collect();
    if words.is_empty() {
        base.name().to_string()
    } else {
        format!("{} with {}", base.name(), words.join(","))
    }
}

/// The tunable writes of the run (`--sysctl`, `--debugfs`) as those options take them,
/// in order, or nothing when there were none (so that other runs read as they did).
fn tunables_line(t: &fairsim_balance::Tunables) -> String {
    if t.is_empty() {
        return String::new();
    }
    let words: Vec<String> = t
        .writes()
        .map(|w| format!("{} {}", w.home.place.option(), w.describe()))
        .collect();
    format!("tunables (written after boot): {}\n", words.join(" "))
}

/// The machine's speed table as `--speed` takes it, one entry per kind, or nothing.
fn speed_line(m: &fairsim_topology::Machine) -> String {
    let entries: Vec<String> = m
        .speed
        .iter()
        .map(|(kind, row)| format!("{kind}={}", fairsim_topology::SpeedTable::describe(row)))
        .collect();
    if entries.is_empty() {
        String::new()
    } else {
        format!(
            "speed (work rate apart from capacity): {}\n",
            entries.join(" ")
        )
    }
}

fn pct(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 * 100.0 / whole as f64
    }
}

fn us(ns: u64) -> String {
    format!("{:.1} us", ns as f64 / 1e3)
}

/// The summary printed on stdout.
pub fn summary(spec: &RunSpec, r: &RunResult) -> String {
    let w = &r.outcome;
    let ncpus = w.cpus().len();
    let elapsed = w.window_ns();
    let mut s = String::new();
    s.push_str(&format!(
        "fairsim run: machine {} ({} CPUs, {} nodes), HZ {}, seed {}, duration {}\n",
        spec.machine.name,
        ncpus,
        spec.machine.nr_nodes(),
        spec.config.params.hz,
        spec.config.seed,
        format_duration(elapsed)
    ));
    // The util_est form is named when it is not the kernel's own (6.12's for 6.12: the
    // default says nothing, as `Features::diff_summary` does for default features).
    let kernel = spec.config.params.features.kernel();
    let mut util_est = match spec.config.params.util_est {
        m if m == kernel.util_est() => String::new(),
        m => format!("; util_est {}", m.name()),
    };
    // So is the launching CPU when it is not the default CPU 0.
    if spec.config.launch != fairsim_engine::world::Launch::Cpu(0) {
        util_est.push_str(&format!(
            "; launched from CPU {}",
            spec.config.launch.name()
        ));
    }
    s.push_str(&kernel_line(spec.config.params.features.kernel()));
    s.push_str(&format!(
        "features: {}{util_est}\ncosts: {}; timer slack {} ({:?} expiry); cpuidle {}\n",
        spec.config.params.features.diff_summary(),
        cost_diff(&spec.config.cost, spec.config.cost_table),
        format_duration(spec.config.timer_slack),
        spec.config.timer_expiry,
        spec.config.cpuidle.name()
    ));
    s.push_str(&tunables_line(&spec.config.params.tunables));
    s.push_str(&speed_line(&spec.machine));
    if !fairsim_workloads::run::partitions(spec, w).is_empty() {
        let rds: Vec<String> = w
            .sched()
            .topo
            .root_domains
            .iter()
            .map(|c| c.to_list())
            .collect();
        s.push_str(&format!(
            "cpuset partitions: root domains {} (the top cpuset's CPUs first)\n",
            rds.join(" | ")
        ));
    }
    if spec.config.noise.is_on() || w.window_start() > 0 {
        s.push_str(&format!(
            "noise: {}; measured window [{}, {}) ({}), warm-up discarded\n",
            if spec.config.noise.is_on() {
                format!(
                    "spread {} (kernel work, timer expiry in the slack, launch phase)",
                    spec.config.noise.describe()
                )
            } else {
                "off".to_string()
            },
            format_duration(w.window_start()),
            format_duration(w.now().0),
            format_duration(elapsed),
        ));
    }
    for (i, (ws, rep)) in spec.workloads.iter().zip(&r.reports).enumerate() {
        s.push_str(&format!(
            "\n== workload {}: {} ==\n",
            i + 1,
            ws.canonical(ncpus)
        ));
        s.push_str(&rep.text);
    }
    let t = totals(r);
    let secs = (elapsed as f64 / 1e9).max(1e-9);
    s.push_str("\n== scheduler ==\n");
    s.push_str(&format!(
        "CPU time: tasks {:.1}%, kernel overhead {:.2}%, idle {:.1}% (of {} CPUs x {})\n",
        pct(t.task_ns, t.cpu_ns),
        pct(t.overhead_ns, t.cpu_ns),
        pct(t.cpu_ns.saturating_sub(t.task_ns + t.overhead_ns), t.cpu_ns),
        ncpus,
        format_duration(elapsed)
    ));
    // The same busy time split as time(1) splits a process's: a tool whose work is
    // system calls (netperf, tbench) shows as kernel overhead above and as sys here.
    s.push_str(&format!(
        "CPU time as time(1) splits it: user {:.1}%, sys {:.1}% (the tasks' system calls and the kernel work done while they ran), kernel work of no task {:.2}%\n",
        pct(t.user_ns, t.cpu_ns),
        pct(t.sys_ns, t.cpu_ns),
        pct(t.no_task_kernel_ns, t.cpu_ns),
    ));
    let mut kinds = [0u64; Overhead::COUNT];
    for c in &w.metrics().cpus {
        for (k, v) in kinds.iter_mut().zip(c.overhead_ns().iter()) {
            *k += v;
        }
    }
    let parts: Vec<String> = Overhead::ALL
        .iter()
        .filter(|k| kinds[**k as usize] > 0)
        .map(|k| format!("{} {:.2}%", k.name(), pct(kinds[*k as usize], t.cpu_ns)))
        .collect();
    if !parts.is_empty() {
        s.push_str(&format!("overhead: {}\n", parts.join(", ")));
    }
    let newidle_ns: u64 = w.metrics().cpus.iter().map(|c| c.newidle_ns).sum();
    let newidle_n: u64 = w.metrics().cpus.iter().map(|c| c.newidle_balances).sum();
    // The time runs from each call's start, so it holds the calls the early exits ended
    // as well: it is divided by every call, and the balances past the gates are counted
    // apart, as race mode's report counts them.
    let newidle_calls: u64 = w.sched().rqs.iter().map(|rq| rq.stats.newidle_calls).sum();
    // The calls the gates stopped took a span of their own; the rest is the balances'.
    let gated_ns: u64 = w.metrics().cpus.iter().map(|c| c.newidle_gated_ns).sum();
    s.push_str(&format!(
        "newidle balance: {:.2}% of CPU time, calls {}; past the rd->overloaded and avg_idle gates {}\n",
        pct(newidle_ns, t.cpu_ns),
        count_rate_mean(newidle_calls, newidle_ns, secs),
        count_rate_mean(newidle_n, newidle_ns.saturating_sub(gated_ns), secs),
    ));
    let spins: u64 = w.metrics().cpus.iter().map(|c| c.lock_spins).sum();
    let spin_ns = w.metrics().overhead_of(Overhead::LockSpin);
    s.push_str(&format!(
        "rq lock contention: spins {}\n",
        count_rate_mean(spins, spin_ns, secs)
    ));
    s.push_str(&format!(
        "context switches: {} ({:.0}/s), migrations: {} ({:.0}/s)\n",
        t.switches,
        t.switches as f64 / secs,
        t.migrations,
        t.migrations as f64 / secs
    ));
    let h = &w.metrics().wakeup_latency;
    s.push_str(&format!(
        "wakeups: {} local, {} remote",
        w.metrics().wakeups_local,
        w.metrics().wakeups_remote
    ));
    if !h.is_empty() {
        s.push_str(&format!(
            "; wake-to-run latency p50 {}, p99 {}, max {}",
            us(h.value_at_quantile(0.5)),
            us(h.value_at_quantile(0.99)),
            us(h.max())
        ));
    }
    s.push('\n');
    s.push_str(&super::placement::summary_section(w));
    let run_delay: u64 = w.sched().rqs.iter().map(|rq| rq.stats.run_delay).sum();
    let pcount: u64 = w.sched().rqs.iter().map(|rq| rq.stats.pcount).sum();
    s.push_str(&format!(
        "run delay: {} total, {} per timeslice; events processed: {}\n",
        format_duration(run_delay),
        us(run_delay.checked_div(pcount).unwrap_or(0)),
        w.events()
    ));
    s.push_str(&super::cgroups::summary_section(w));
    s.push_str(&super::cpuidle::summary_section(w));
    s.push_str(&super::memory::summary_section(w));
    s.push_str(&super::cpufreq::summary_section(w));
    s
}

/// `N (R/s), M us each`: a count, its rate over `secs`, and the mean of `total_ns` per item.
fn count_rate_mean(n: u64, total_ns: u64, secs: f64) -> String {
    let mean_us = if n > 0 {
        total_ns as f64 / n as f64 / 1e3
    } else {
        0.0
    };
    format!("{n} ({:.0}/s), {mean_us:.2} us each", n as f64 / secs)
}
