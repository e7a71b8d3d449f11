//! The memory-locality report ([`fairsim_engine::memory`]): per node, the task time its CPUs ran
//! and how much of it belonged to tasks whose memory is on another node; per task (in the
//! JSON's task list) the home node, the time off it and the moves across nodes.

use serde_json::{json, Value};

use fairsim_engine::world::Outcome;

/// Machine-wide memory-locality figures over the window, or `None` where the model
/// cannot change a runtime (one node, or no workload that touches DRAM): task time, the
/// part of it run away from the tasks' home nodes, and moves across nodes.
pub fn locality_totals(w: &Outcome) -> Option<(u64, u64, u64)> {
    if w.locality().nr_nodes() < 2 || w.workload_mem().iter().all(|&m| m == 0) {
        return None;
    }
    let task = w.metrics().cpus.iter().map(|c| c.task_ns).sum();
    let away = w.metrics().cpus.iter().map(|c| c.remote_ns).sum();
    let moves = w.metrics().tasks.iter().map(|m| m.node_migrations).sum();
    Some((task, away, moves))
}

/// Per node: `(task_ns, remote_ns, home_tasks)` over the window.
fn node_rows(w: &Outcome) -> Vec<(u64, u64, u64)> {
    let loc = w.locality();
    let mut rows = vec![(0u64, 0u64, 0u64); loc.nr_nodes()];
    for (cpu, m) in w.metrics().cpus.iter().enumerate() {
        if let Some(r) = loc.cpu_node.get(cpu).and_then(|&n| rows.get_mut(n)) {
            r.0 += m.task_ns;
            r.1 += m.remote_ns;
        }
    }
    for t in w.tasks() {
        if let Some(r) = t.home_node.and_then(|n| rows.get_mut(n)) {
            r.2 += 1;
        }
    }
    rows
}

/// The JSON's `memory` object: the model's inputs and the per-node table.
pub(super) fn json(w: &Outcome) -> Value {
    let nodes: Vec<Value> = node_rows(w)
        .into_iter()
        .enumerate()
        .map(|(n, (task_ns, remote_ns, home_tasks))| {
            json!({
                "node": n,
                "task_ns": task_ns,
                "remote_ns": remote_ns,
                "home_tasks": home_tasks,
            })
        })
        .collect();
    json!({
        "workload_mem_permille": w.workload_mem(),
        "nodes": nodes,
    })
}

/// The summary's per-node block, on machines with more than one node where some workload
/// touches DRAM (so runs the model cannot change print what they printed before).
pub(super) fn summary_section(w: &Outcome) -> String {
    let Some((_, off, moves)) = locality_totals(w) else {
        return String::new();
    };
    let mut s = format!(
        "memory locality (mem={} per mille): {} task-ms off their home node, {} moves across nodes\n",
        w.workload_mem()
            .iter()
            .map(u32::to_string)
            .collect::<Vec<_>>()
            .join("/"),
        off / 1_000_000,
        moves
    );
    s.push_str("  node  task-ms  away-from-home-ms  home-tasks\n");
    for (n, (task_ns, remote_ns, home)) in node_rows(w).into_iter().enumerate() {
        s.push_str(&format!(
            "  {n:>4}  {:>7}  {:>17}  {home:>10}\n",
            task_ns / 1_000_000,
            remote_ns / 1_000_000
        ));
    }
    s
}
