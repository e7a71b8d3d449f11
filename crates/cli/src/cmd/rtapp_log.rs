//! `fairsim run --rtapp-log DIR`: rt-app's per-thread log files
//! (`fairsim_workloads::Rtapp::log_files`) written into DIR.

use std::path::Path;

use fairsim_workloads::Workload;
use fairsim_workloads::{RunResult, RunSpec};

use crate::error::CliError;

/// Refuses `--rtapp-log` for a run without an rt-app workload, whose option would
/// otherwise be dropped without a word.
pub(crate) fn check(dir: Option<&Path>, spec: &RunSpec) -> Result<(), CliError> {
    let has_rtapp = spec
        .workloads
        .iter()
        .any(|w| matches!(w.workload, Workload::Rtapp(_)));
    if dir.is_some() && !has_rtapp {
        return Err(CliError::msg(
            "--rtapp-log: the run has no rt-app workload; allowed: with --workload rtapp:FILE.json",
        ));
    }
    Ok(())
}

/// Writes each rt-app thread's log file into `dir` (created when missing); with several
/// rt-app workloads, each one's files go into `dir/workload-N`, N its position among
/// the run's workloads, so that equal thread names cannot overwrite each other.
pub(crate) fn write(dir: &Path, spec: &RunSpec, result: &RunResult) -> Result<(), CliError> {
    let rtapp: Vec<(usize, &fairsim_workloads::Rtapp)> = spec
        .workloads
        .iter()
        .enumerate()
        .filter_map(|(i, w)| match &w.workload {
            Workload::Rtapp(r) => Some((i, r)),
            _ => None,
        })
        .collect();
    for &(i, r) in &rtapp {
        let sub = if rtapp.len() > 1 {
            dir.join(format!("workload-{i}"))
        } else {
            dir.to_path_buf()
        };
        std::fs::create_dir_all(&sub)
            .map_err(|e| CliError::output(format!("--rtapp-log {}: {e}", sub.display())))?;
        for (name, text) in r.log_files(i, &result.outcome) {
            super::outputs::write_file(&sub.join(name), "--rtapp-log", &text)?;
        }
    }
    Ok(())
}
