//! rt-app's results: the per-thread, per-phase distributions of the log's `slack` and
//! `wu_lat` columns with each thread's first activations (`rtapp_log`), and the log files
//! themselves.

use fairsim_engine::world::Outcome;

use super::report::WorkloadReport;
use super::rtapp::{RtTask, Rtapp};
use super::rtapp_log::{activations_json, activations_left_out, log_text};
use super::rtapp_stats::{Periodic, UsDist};
use super::tasks::task_range;

impl Rtapp {
    /// Every thread, in creation order: (name, definition).
    pub(super) fn threads(&self) -> Vec<(String, &RtTask)> {
        let mut out = Vec::new();
        for task in &self.tasks {
            for _ in 0..task.instances {
                out.push((format!("{}-{}", task.name, out.len()), task));
            }
        }
        out
    }

    /// rt-app's log files for workload `index` of `world`, one per thread in creation
    /// order: (file name, text), the name `rt-app-NAME-IDX-IDX.log` as rt-app's
    /// `main` opens it with the default `log_basename`.
    pub fn log_files(&self, index: usize, outcome: &Outcome) -> Vec<(String, String)> {
        let empty = Periodic::default();
        let log = &outcome.workloads()[index]
            .model::<Periodic>()
            .unwrap_or(&empty)
            .log;
        self.threads()
            .into_iter()
            .enumerate()
            .map(|(k, (name, task))| {
                let t = log.threads.get(k).cloned().unwrap_or_default();
                let policy = super::rtapp_sched::policy_name(task.policy);
                (
                    format!("rt-app-{name}-{k}.log"),
                    log_text(k, policy, task.nice, &t),
                )
            })
            .collect()
    }

    /// rt-app's log per thread and phase: passes, and slack and wu_lat distributions;
    /// per thread, its first activations (at most `rtapp_log::JSON_PER_THREAD`) and how
    /// many the list leaves out.
    pub(super) fn report(&self, index: usize, outcome: &Outcome) -> WorkloadReport {
        let range = task_range(outcome, index);
        let empty = Periodic::default();
        let periodic = outcome.workloads()[index]
            .model::<Periodic>()
            .unwrap_or(&empty);
        let rows = &periodic.rows;
        let mut text = format!(
            "rt-app {}: {} threads (slack and wu_lat in us: mean p50 p99 max, over the phase passes with a timer)\n",
            self.file,
            range.len()
        );
        let mut threads_json = Vec::new();
        let mut row = 0;
        let mut finished = true;
        for (k, ((name, task), t)) in self.threads().into_iter().zip(range).enumerate() {
            if task.repeat < 0 || task.phases.iter().any(|p| p.repeat <= 0) {
                // An endless thread is complete whenever the run stops.
            } else if outcome.metrics().tasks[t].exited_at.is_none() {
                finished = false;
            }
            let mut phases_json = Vec::new();
            for phase in &task.phases {
                let r = rows.get(row).cloned().unwrap_or_default();
                row += 1;
                let label = if phase.name.is_empty() {
                    name.clone()
                } else {
                    format!("{name} {}", phase.name)
                };
                text.push_str(&format!("\t{label}: {} passes", r.passes));
                if r.slack.count() > 0 {
                    text.push_str(&format!(
                        "; slack {}; wu_lat {}",
                        dist_text(&r.slack),
                        dist_text(&r.wu_lat)
                    ));
                }
                text.push('\n');
                phases_json.push(serde_json::json!({
                    "phase": phase.name,
                    "passes": r.passes,
                    "slack_us": r.slack.json(),
                    "wu_lat_us": r.wu_lat.json(),
                }));
            }
            let log = periodic.log.threads.get(k).cloned().unwrap_or_default();
            threads_json.push(serde_json::json!({
                "name": name,
                "nice": task.nice,
                "phases": phases_json,
                "activations": activations_json(&log),
                "activations_left_out": activations_left_out(&log),
            }));
        }
        WorkloadReport {
            text,
            json: serde_json::json!({ "file": self.file, "threads": threads_json }),
            finished,
        }
    }
}

fn dist_text(d: &UsDist) -> String {
    format!(
        "{} {} {} {}",
        d.mean(),
        d.percentile(50),
        d.percentile(99),
        d.max()
    )
}
