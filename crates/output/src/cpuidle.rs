//! The idle states in the outputs: per CPU and state, the entries and the time spent, as
//! `/sys/devices/system/cpu/cpuN/cpuidle/stateK/{usage,time,above,below}` count them
//! (read at the window's start and end, as a user diffs two reads).

use serde_json::{json, Value};

use fairsim_engine::world::Outcome;

/// CPUs up to which the summary lists every CPU; bigger machines get the per-state
/// totals with the range over CPUs (every CPU is in the JSON).
const SUMMARY_CPU_ROWS: usize = 16;

/// The summary's `== cpuidle ==` section.
pub(crate) fn summary_section(w: &Outcome) -> String {
    let usage = w.cpuidle_usage();
    let states = w.idle_states();
    let mut s = String::new();
    let governor = w.config().cpuidle;
    if usage.is_empty() {
        s.push_str(&format!(
            "\n== cpuidle: governor {} ==\nno cpuidle driver: idle CPUs run default_idle_call and stop the tick; a wakeup pays the flat idle_exit cost\n",
            governor.name()
        ));
        return s;
    }
    let secs = (w.window_ns() as f64 / 1e9).max(1e-9);
    for (ti, table) in states.tables.iter().enumerate() {
        let cpus: Vec<usize> = (0..usage.len())
            .filter(|&c| states.cpu_table[c] == ti)
            .collect();
        if cpus.is_empty() {
            continue;
        }
        s.push_str(&format!(
            "\n== cpuidle: governor {}, driver {} ({}), CPUs {} ==\n",
            governor.name(),
            table.driver,
            table.source,
            cpu_list(&cpus)
        ));
        s.push_str(&format!(
            "{:<8} {:>9} {:>10} {:>8} {:>11} {:>12} {:>9} {:>9}\n",
            "state",
            "exit_us",
            "target_us",
            "time_%",
            "entries/s",
            "avg_resid_us",
            "above",
            "below"
        ));
        for (k, st) in table.states.iter().enumerate() {
            let (mut n, mut t, mut above, mut below) = (0u64, 0u64, 0u64, 0u64);
            for &c in &cpus {
                let u = &usage[c][k];
                n += u.usage;
                t += u.time_ns;
                above += u.above;
                below += u.below;
            }
            let share = 100.0 * t as f64 / (w.window_ns().max(1) as f64 * cpus.len() as f64);
            s.push_str(&format!(
                "{:<8} {:>9.1} {:>10.1} {:>8.2} {:>11.0} {:>12.1} {:>9} {:>9}{}\n",
                st.name,
                st.exit_latency_ns as f64 / 1e3,
                st.target_residency_ns as f64 / 1e3,
                share,
                n as f64 / secs,
                if n == 0 {
                    0.0
                } else {
                    t as f64 / n as f64 / 1e3
                },
                above,
                below,
                if st.disabled { "  (disabled)" } else { "" }
            ));
        }
        if cpus.len() <= SUMMARY_CPU_ROWS {
            s.push_str("per CPU, time_% in each state:\n");
            for &c in &cpus {
                let row: Vec<String> = table
                    .states
                    .iter()
                    .enumerate()
                    .map(|(k, st)| {
                        format!(
                            "{} {:.1}",
                            st.name,
                            100.0 * usage[c][k].time_ns as f64 / w.window_ns().max(1) as f64
                        )
                    })
                    .collect();
                s.push_str(&format!("  cpu{c}: {}\n", row.join(", ")));
            }
        }
    }
    s
}

/// `0-3,8` for a sorted CPU list.
fn cpu_list(cpus: &[usize]) -> String {
    let mut parts = Vec::new();
    let mut i = 0;
    while i < cpus.len() {
        let mut j = i;
        while j + 1 < cpus.len() && cpus[j + 1] == cpus[j] + 1 {
            j += 1;
        }
        parts.push(if i == j {
            cpus[i].to_string()
        } else {
            format!("{}-{}", cpus[i], cpus[j])
        });
        i = j + 1;
    }
    parts.join(",")
}

/// The `cpuidle` object of the JSON: governor, tables and which CPUs use them.
pub(crate) fn json_tables(w: &Outcome) -> Value {
    let states = w.idle_states();
    json!({
        "governor": w.config().cpuidle.name(),
        "driver_loaded": !w.cpuidle_usage().is_empty(),
        "tables": states.tables,
        "cpu_table": states.cpu_table,
    })
}

/// One CPU's states for its JSON entry: name and sysfs counters (`time` in us, as sysfs
/// prints it, and `time_ns`).
pub(crate) fn json_cpu(
    w: &Outcome,
    usage: &[Vec<fairsim_cpuidle::StateUsage>],
    cpu: usize,
) -> Value {
    let Some(u) = usage.get(cpu) else {
        return Value::Array(Vec::new());
    };
    let table = w.idle_states().table_of(cpu);
    Value::Array(
        table
            .states
            .iter()
            .zip(u)
            .map(|(st, x)| {
                json!({
                    "name": st.name,
                    "usage": x.usage,
                    "time": x.time_ns / 1000,
                    "time_ns": x.time_ns,
                    "above": x.above,
                    "below": x.below,
                })
            })
            .collect(),
    )
}
