//! CPU frequency in the outputs: per policy `cpufreq/stats/time_in_state` and
//! `total_trans` over the measurement window (as a user reads them after writing
//! `stats/reset` when the window opens), the frequency timeline, and an energy estimate.
//!
//! The energy estimate is what the energy model can say: each CPU's busy time (task work
//! and kernel overhead) at each OPP times that OPP's active power
//! (`em_perf_state.power`), summed. Like the kernel's energy model, it has no idle
//! power: the time a CPU spends idle, in whichever idle state, costs nothing here, so the
//! figure is the active energy only.

use serde_json::{json, Value};

use fairsim_engine::world::Outcome;

/// Femtojoules per joule: busy ns times micro-watts are femtojoules.
const FJ_PER_J: f64 = 1e15;

/// Per CPU, its active energy in femtojoules (busy ns x uW), when its policy has an
/// energy model.
fn energy_fj(w: &Outcome) -> Vec<Option<u128>> {
    let Some(cf) = w.sched().cpufreq.as_ref() else {
        return Vec::new();
    };
    (0..w.cpus().len())
        .map(|cpu| {
            let p = &cf.policies[cf.policy_of[cpu]];
            let em = p.em.as_ref()?;
            let busy = w.cpufreq_busy_by_opp(cpu);
            Some(
                busy.iter()
                    .zip(em)
                    .map(|(&ns, st)| u128::from(ns) * u128::from(st.power))
                    .sum(),
            )
        })
        .collect()
}

/// `0-3,8` for a mask's CPUs.
fn cpus_of(mask: &fairsim_topology::CpuMask) -> String {
    mask.to_list()
}

/// The summary's `== cpufreq ==` section, empty without cpufreq.
pub(crate) fn summary_section(w: &Outcome) -> String {
    let Some(cf) = w.sched().cpufreq.as_ref() else {
        return String::new();
    };
    let now = w.now().0;
    let mut s = format!("\n== cpufreq: governor {} ==\n", cf.governor.describe());
    let energy = energy_fj(w);
    for p in &cf.policies {
        let rate = match cf.governor {
            fairsim_balance::cpufreq::Governor::Schedutil { .. } => {
                format!(", rate_limit_us {}", p.sugov.rate_limit_us)
            }
            _ => String::new(),
        };
        s.push_str(&format!(
            "policy{} (CPUs {}): {}-{} kHz, transition latency {} us{rate}; cur {} kHz, total_trans {}\n",
            p.cpu,
            cpus_of(&p.cpus),
            p.cpuinfo_min,
            p.cpuinfo_max,
            p.transition_latency_ns / 1000,
            p.cur,
            p.stats.total_trans
        ));
        s.push_str("  time_in_state:\n");
        for line in p.stats.show_time_in_state(now).lines() {
            s.push_str(&format!("    {line}\n"));
        }
        if p.em.is_some() {
            let parts: Vec<String> = p
                .cpus
                .iter()
                .filter_map(|c| energy.get(c).copied().flatten().map(|e| (c, e)))
                .map(|(c, e)| format!("cpu{c} {:.4} J", e as f64 / FJ_PER_J))
                .collect();
            let total: u128 = p
                .cpus
                .iter()
                .filter_map(|c| energy.get(c).copied().flatten())
                .sum();
            s.push_str(&format!(
                "  active energy (busy time x OPP power; idle power not modelled): {:.4} J ({})\n",
                total as f64 / FJ_PER_J,
                parts.join(", ")
            ));
        }
    }
    s.push_str(&eas_lines(w, cf, now));
    if let Some(rt) = w.cpufreq_rt() {
        if rt.timeline_dropped > 0 {
            s.push_str(&format!(
                "frequency timeline: the first {} transitions kept, {} more not recorded\n",
                rt.timeline.len(),
                rt.timeline_dropped
            ));
        }
    }
    s
}

/// The `cpufreq` object of the JSON: the governor, each policy with its OPPs, stats and
/// energy, the timeline, and the machine's active energy.
pub(crate) fn json(w: &Outcome) -> Option<Value> {
    let cf = w.sched().cpufreq.as_ref()?;
    let rt = w.cpufreq_rt()?;
    let now = w.now().0;
    let energy = energy_fj(w);
    let policies: Vec<Value> = cf
        .policies
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let tis = p.stats.time_in_state_ns(now);
            let opps: Vec<Value> = p
                .table
                .freqs
                .iter()
                .enumerate()
                .map(|(k, &f)| {
                    let mut o = json!({
                        "khz": f,
                        "inefficient": p.table.inefficient[k],
                    });
                    if let Some(em) = &p.em {
                        o["power_uw"] = em[k].power.into();
                        o["performance"] = em[k].performance.into();
                        o["cost"] = em[k].cost.into();
                    }
                    o
                })
                .collect();
            let cpus: Vec<Value> = p
                .cpus
                .iter()
                .map(|c| {
                    let mut v = json!({
                        "cpu": c,
                        "busy_ns_by_opp": w.cpufreq_busy_by_opp(c),
                    });
                    if let Some(Some(e)) = energy.get(c) {
                        v["energy_uj"] = ((*e / 1_000_000_000) as u64).into();
                    }
                    v
                })
                .collect();
            let mut v = json!({
                "policy": i,
                "name": format!("policy{}", p.cpu),
                "related_cpus": cpus_of(&p.cpus),
                "cpuinfo_min_freq": p.cpuinfo_min,
                "cpuinfo_max_freq": p.cpuinfo_max,
                "scaling_min_freq": p.min,
                "scaling_max_freq": p.max,
                "scaling_cur_freq": p.cur,
                "cpuinfo_transition_latency": p.transition_latency_ns,
                "window_start_freq": rt.window_khz.get(i).copied().unwrap_or(p.cur),
                "opps": opps,
                "stats": {
                    "total_trans": p.stats.total_trans,
                    "time_in_state": tis
                        .iter()
                        .map(|&(f, t)| [u64::from(f), t / fairsim_balance::cpufreq::NSEC_PER_CLOCK_T])
                        .collect::<Vec<_>>(),
                    "time_in_state_ns": tis
                        .iter()
                        .map(|&(f, t)| [u64::from(f), t])
                        .collect::<Vec<_>>(),
                    "trans_table": p.stats.trans_table,
                },
                "cpus": cpus,
            });
            if let fairsim_balance::cpufreq::Governor::Schedutil { .. } = cf.governor {
                v["rate_limit_us"] = p.sugov.rate_limit_us.into();
            }
            v
        })
        .collect();
    let total: Option<u128> = energy.iter().copied().sum();
    let mut v = json!({
        "governor": cf.governor.name(),
        "governor_spec": cf.governor.describe(),
        "driver": "cpufreq-dt (slow path: schedutil's kthread, the new frequency in effect after the transition latency)",
        "policies": policies,
        "timeline": {
            "transitions": rt
                .timeline
                .iter()
                .map(|c| [c.at, u64::from(c.policy), u64::from(c.khz)])
                .collect::<Vec<_>>(),
            "dropped": rt.timeline_dropped,
            "limit": fairsim_engine::world::MAX_TIMELINE,
        },
    });
    if cf.policies.iter().any(|p| p.em.is_some()) {
        v["eas"] = eas_json(w);
    }
    if let Some(t) = total {
        v["energy_uj"] = ((t / 1_000_000_000) as u64).into();
        v["energy_note"] =
            "active energy only: busy time at each OPP times its power; idle power is not modelled, as in the kernel's energy model".into();
    }
    Some(v)
}

/// The energy-aware scheduling lines: shown when some policy has an energy model (the
/// machines EAS could apply to), saying whether it is on and, if so, what it did.
fn eas_lines(w: &Outcome, cf: &fairsim_balance::cpufreq::Cpufreq, now: u64) -> String {
    if cf.policies.iter().all(|p| p.em.is_none()) {
        return String::new();
    }
    let eas = &w.sched().eas;
    if !eas.present {
        let why = eas.not_possible.as_deref().unwrap_or("no perf domain");
        return format!("energy-aware scheduling: off ({why})\n");
    }
    let st = &eas.stats;
    let over_ns = eas.overutilized_ns_at(now);
    format!(
        "energy-aware scheduling (whole run): on; wakeups placed by find_energy_efficient_cpu {} of {} ({} moved from prev_cpu), skipped as overutilized {}; root domain overutilized {:.1}% of the time ({} times)\n",
        st.feec_placed,
        st.feec_calls,
        st.feec_moved,
        st.overutilized_wakeups,
        100.0 * over_ns as f64 / now.max(1) as f64,
        st.overutilized_sets
    )
}

/// `--json`'s `cpufreq.eas`: whether EAS is on (or why not), the perf domains in the
/// kernel's list order and its counters over the whole run, warm-up included.
fn eas_json(w: &Outcome) -> Value {
    let eas = &w.sched().eas;
    let st = &eas.stats;
    json!({
        "enabled": eas.present,
        "not_possible": eas.not_possible,
        "perf_domains": eas
            .rd_pd
            .iter()
            .map(|pds| pds.iter().map(|pd| cpus_of(&pd.cpus)).collect::<Vec<_>>())
            .collect::<Vec<_>>(),
        "feec_calls": st.feec_calls,
        "feec_placed": st.feec_placed,
        "feec_moved": st.feec_moved,
        "overutilized_wakeups": st.overutilized_wakeups,
        "overutilized_sets": st.overutilized_sets,
        "overutilized_ns": eas.overutilized_ns_at(w.now().0),
    })
}
