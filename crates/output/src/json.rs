//! The `--json` document. Its layout is versioned by [`JSON_SCHEMA_VERSION`]; keys are
//! sorted (serde_json's default map), so equal runs give equal bytes.

use serde_json::{json, Value};

use fairsim_balance::CpuIdleType;
use fairsim_engine::cost::CostTable;
use fairsim_engine::world::Overhead;
use fairsim_workloads::run::{RunResult, RunSpec};

use super::{idle_ns, totals};

/// Version of the JSON layout; bumped when a key changes meaning or disappears.
pub const JSON_SCHEMA_VERSION: u32 = 2;

fn cost_json(c: &CostTable) -> Value {
    let mut m = serde_json::Map::new();
    for n in CostTable::NAMES {
        m.insert((*n).to_string(), c.get(n).unwrap_or(0).into());
    }
    Value::Object(m)
}

/// The machine's name and size, and its speed table when it has one (the key is left
/// out otherwise, so that runs without one read as they always did).
fn machine_json(m: &fairsim_topology::Machine) -> Value {
    let mut v = json!({
        "name": m.name,
        "cpus": m.nr_cpus(),
        "nodes": m.nr_nodes(),
    });
    if !m.speed.is_empty() {
        let speed: serde_json::Map<String, Value> = m
            .speed
            .iter()
            .map(|(kind, row)| {
                let row: Vec<Value> = row.iter().map(|&s| s.into()).collect();
                (kind.to_string(), Value::Array(row))
            })
            .collect();
        v["speed"] = Value::Object(speed);
    }
    v
}

/// The load-balance counters of `cpu`'s domains, bottom up: every `lb_*` counter per idle
/// type (seed 000's `lb_sg_scan` included), the active-balance and wakeup counters, and
/// the runtime fields balancing adapts.
fn domains_json(w: &fairsim_engine::Outcome, cpu: usize) -> Value {
    let s = &w.sched();
    let doms: Vec<Value> = s
        .topo
        .domains_of(cpu)
        .enumerate()
        .map(|(i, sd)| {
            let d = s.topo.domain(sd);
            let st = &s.sd_stats[sd];
            let rt = &s.lb.sd[sd];
            let mut lb = serde_json::Map::new();
            for it in CpuIdleType::ALL {
                let k = it as usize;
                lb.insert(
                    it.name().to_string(),
                    json!({
                        "lb_count": st.lb_count[k],
                        "lb_balanced": st.lb_balanced[k],
                        "lb_failed": st.lb_failed[k],
                        "lb_imbalance_load": st.lb_imbalance_load[k],
                        "lb_imbalance_util": st.lb_imbalance_util[k],
                        "lb_imbalance_task": st.lb_imbalance_task[k],
                        "lb_imbalance_misfit": st.lb_imbalance_misfit[k],
                        "lb_gained": st.lb_gained[k],
                        "lb_hot_gained": st.lb_hot_gained[k],
                        "lb_nobusyq": st.lb_nobusyq[k],
                        "lb_nobusyg": st.lb_nobusyg[k],
                        "lb_sg_scan": st.lb_sg_scan[k],
                    }),
                );
            }
            json!({
                "domain": i,
                "name": d.name,
                "level": d.level,
                "span": d.span.to_string(),
                "lb": Value::Object(lb),
                "alb_count": st.alb_count,
                "alb_failed": st.alb_failed,
                "alb_pushed": st.alb_pushed,
                "ttwu_wake_remote": st.ttwu_wake_remote,
                "ttwu_move_affine": st.ttwu_move_affine,
                "balance_interval_ms": rt.balance_interval,
                "nr_balance_failed": rt.nr_balance_failed,
                "max_newidle_lb_cost_ns": rt.max_newidle_lb_cost,
            })
        })
        .collect();
    Value::Array(doms)
}

/// The whole run as JSON.
pub fn to_json(spec: &RunSpec, r: &RunResult) -> Value {
    let w = &r.outcome;
    let elapsed = w.window_ns();
    let ncpus = w.cpus().len();
    let t = totals(r);
    let h = &w.metrics().wakeup_latency;
    let q = |x: f64| {
        if h.is_empty() {
            0
        } else {
            h.value_at_quantile(x)
        }
    };
    let workloads: Vec<Value> = spec
        .workloads
        .iter()
        .zip(&r.reports)
        .map(|(ws, rep)| {
            json!({
                "name": ws.name(),
                "spec": ws.canonical(ncpus),
                "finished": rep.finished,
                "results": rep.json,
                "text": rep.text,
            })
        })
        .collect();
    let idle_usage = w.cpuidle_usage();
    let cpus: Vec<Value> = (0..ncpus)
        .map(|c| {
            let m = &w.metrics().cpus[c];
            let st = &w.sched().rqs[c].stats;
            let mut oh = serde_json::Map::new();
            let by_kind = m.overhead_ns();
            for k in Overhead::ALL {
                oh.insert(k.name().into(), by_kind[k as usize].into());
            }
            json!({
                "cpu": c,
                "task_ns": m.task_ns,
                "overhead_ns": m.overhead_total(),
                "overhead_by_kind_ns": Value::Object(oh),
                "idle_ns": idle_ns(m, elapsed),
                "context_switches": m.switches,
                "wakeup_migrations_in": m.migrations_in,
                "rq_lock_spins": m.lock_spins,
                "wakeups_run": m.wakeups_run,
                "wakeup_latency_sum_ns": m.wake_lat_sum_ns,
                "wakeup_latency_max_ns": m.wake_lat_max_ns,
                "sched_count": st.sched_count,
                "sched_goidle": st.sched_goidle,
                "ttwu_count": st.ttwu_count,
                "ttwu_local": st.ttwu_local,
                "run_delay_ns": st.run_delay,
                "pcount": st.pcount,
                "domains": domains_json(w, c),
                "cpuidle": super::cpuidle::json_cpu(w, &idle_usage, c),
            })
        })
        .collect();
    // On machines where energy-aware scheduling can apply (a policy with an energy
    // model), each task's time per CPU capacity: where EAS put it.
    let by_capacity = w
        .sched()
        .cpufreq
        .as_ref()
        .is_some_and(|cf| cf.policies.iter().any(|p| p.em.is_some()));
    let groups = w.sched().task_groups().active();
    let tasks: Vec<Value> = (0..w.tasks().len())
        .filter(|&x| w.tasks()[x].sched_id.is_some())
        .map(|x| {
            let m = w.task_metrics(x);
            let mut v = json!({
                "id": x,
                "name": w.tasks()[x].name,
                "workload": w.tasks()[x].workload,
                "wakeups": m.wakeups,
                "wakeup_latency_mean_ns": m.wake_lat_sum_ns.checked_div(m.wakeups).unwrap_or(0),
                "wakeup_latency_max_ns": m.wake_lat_max_ns,
                "run_delay_ns": m.run_delay_ns,
                "pcount": m.pcount,
                "migrations": m.migrations,
                "runtime_ns": m.runtime_ns,
                "exited_at_ns": m.exited_at,
                "cpu_time_ns": m.cpu_ns.iter().map(|(c, ns)| [c as u64, ns]).collect::<Vec<_>>(),
                "home_node": w.tasks()[x].home_node,
                "off_node_ns": m.off_node_ns,
                "node_migrations": m.node_migrations,
                "user_ns": m.user_ns,
                "sys_ns": m.sys_ns,
            });
            // With task groups, each task names its group.
            if let (true, Some(sid)) = (groups, w.tasks()[x].sched_id) {
                let tg = w.sched().task_groups();
                v["cgroup"] = json!(tg.tgs[tg.group_of(sid)].path);
            }
            // A task that is not SCHED_NORMAL says which policy it ran under.
            if w.tasks()[x].policy != fairsim_balance::Policy::Normal {
                v["policy"] = json!(w.tasks()[x].policy.name());
            }
            // With clamps in use, each task's effective util_min and util_max.
            if let (true, Some(sid)) = (w.sched().uclamp_used, w.tasks()[x].sched_id) {
                use fairsim_balance::uclamp::ClampId;
                v["uclamp"] = json!([
                    w.sched().uclamp_eff_value(sid, ClampId::Min),
                    w.sched().uclamp_eff_value(sid, ClampId::Max)
                ]);
            }
            if by_capacity {
                let mut caps: std::collections::BTreeMap<u64, u64> = Default::default();
                for (c, ns) in m.cpu_ns.iter() {
                    *caps.entry(w.sched().rqs[c].capacity_orig).or_default() += ns;
                }
                v["capacity_ns"] = caps
                    .into_iter()
                    .map(|(cap, ns)| [cap, ns])
                    .collect::<Vec<_>>()
                    .into();
            }
            v
        })
        .collect();
    let mut doc = json!({
        "schema_version": JSON_SCHEMA_VERSION,
        "fairsim_version": env!("CARGO_PKG_VERSION"),
        "machine": machine_json(&spec.machine),
        "features": spec.config.params.features.to_string(),
        "util_est": w.sched().fair.util_est.name(),
        "launch_cpu": spec.config.launch.name(),
        "hz": spec.config.params.hz,
        "seed": spec.config.seed,
        "duration_ns": spec.config.duration,
        "elapsed_ns": elapsed,
        "warmup_ns": w.window_start(),
        "noise": spec.config.noise.describe(),
        "profile": w.profile(None).to_json(),
        "timer_slack_ns": spec.config.timer_slack,
        "cpuidle": super::cpuidle::json_tables(w),
        "cost_table": spec.config.cost_table.name(),
        "cost_ns": cost_json(&spec.config.cost),
        "workloads": workloads,
        "scheduler": {
            "cpu_ns": t.cpu_ns,
            "task_ns": t.task_ns,
            "overhead_ns": t.overhead_ns,
            "context_switches": t.switches,
            "migrations": t.migrations,
            "wakeups_local": w.metrics().wakeups_local,
            "wakeups_remote": w.metrics().wakeups_remote,
            "timers_fired": w.metrics().timers_fired,
            "cpus_visited": w.metrics().cpus_visited,
            "newidle_ns": w.metrics().cpus.iter().map(|c| c.newidle_ns).sum::<u64>(),
            "newidle_gated_ns": w.metrics().cpus.iter().map(|c| c.newidle_gated_ns).sum::<u64>(),
            "newidle_balances": w.metrics().cpus.iter().map(|c| c.newidle_balances).sum::<u64>(),
            "newidle_calls": w.sched().rqs.iter().map(|rq| rq.stats.newidle_calls).sum::<u64>(),
            "groups_visited": w.metrics().groups_visited,
            "events": w.events(),
            "wakeup_latency_ns": {
                "count": h.len(),
                "p50": q(0.5),
                "p90": q(0.9),
                "p99": q(0.99),
                "p999": q(0.999),
                "max": h.max(),
            },
            "wakeup_placement": super::placement::json(w),
        },
        "memory": super::memory::json(w),
        "cpus": cpus,
        "tasks": tasks,
    });
    // The busy time as time(1) splits it (the summary's line under `CPU time:`), added
    // here rather than in the literal above, which is at serde_json's macro depth.
    let scheduler = &mut doc["scheduler"];
    scheduler["user_ns"] = t.user_ns.into();
    scheduler["sys_ns"] = t.sys_ns.into();
    scheduler["no_task_kernel_ns"] = t.no_task_kernel_ns.into();
    // Which half of the newidle balance's entry gate stopped the calls it stopped.
    let rqs = &w.sched().rqs;
    scheduler["newidle_gate_not_overloaded"] = rqs
        .iter()
        .map(|rq| rq.stats.newidle_gate_not_overloaded)
        .sum::<u64>()
        .into();
    scheduler["newidle_gate_avg_idle"] = rqs
        .iter()
        .map(|rq| rq.stats.newidle_gate_avg_idle)
        .sum::<u64>()
        .into();
    // Only a run of an older kernel than 6.12 (`--kernel`) names it, so that 6.12's JSON
    // reads as it always has.
    let kernel = spec.config.params.features.kernel();
    if kernel != fairsim_balance::Kernel::V6_12 {
        doc["kernel"] = kernel.name().into();
        doc["kernel_release"] = kernel.release().into();
    }
    // Only a run that wrote tunables names them, so that other runs read as they did:
    // each write in order, with its file and the value as reading it back shows it.
    let tunables = &spec.config.params.tunables;
    if !tunables.is_empty() {
        let writes: Vec<Value> = tunables
            .writes()
            .map(|w| {
                json!({
                    "option": w.home.place.option(),
                    "write": w.describe(),
                    "path": w.path(),
                })
            })
            .collect();
        doc["tunables"] = Value::Array(writes);
    }
    // Only a run with task groups has the key, so that other runs read as they did.
    if let Some(cg) = super::cgroups::json(w) {
        doc["cgroups"] = cg;
    }
    // Only a machine with cpufreq has the key, so that other runs read as they did.
    if let Some(cf) = super::cpufreq::json(w) {
        doc["cpufreq"] = cf;
    }
    // Only a run with cpuset partitions names them, for the same reason: the partitions
    // as given, and the root domains built from them (the top cpuset's leftover first).
    let partitions = fairsim_workloads::run::partitions(spec, w);
    if !partitions.is_empty() {
        let lists: Vec<Value> = partitions.iter().map(|c| c.to_list().into()).collect();
        let rds: Vec<Value> = w
            .sched()
            .topo
            .root_domains
            .iter()
            .map(|c| c.to_list().into())
            .collect();
        doc["machine"]["cpusets"] = Value::Array(lists);
        doc["machine"]["root_domains"] = Value::Array(rds);
    }
    doc
}
