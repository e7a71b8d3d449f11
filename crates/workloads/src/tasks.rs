//! Helpers every tool uses to add its programs and tasks to a blueprint and to find its
//! tasks again in the finished world.

use fairsim_engine::event::Tid;
use fairsim_engine::program::Program;
use fairsim_engine::world::{Blueprint, Outcome, TaskRt};

/// Adds a program and returns its index.
pub(crate) fn add_program(bp: &mut Blueprint, p: Program) -> usize {
    debug_assert!(p.is_closed());
    bp.programs.push(p);
    bp.programs.len() - 1
}

/// A task of workload `workload` running program `prog` ([`TaskRt::new`]).
pub(crate) fn new_task(
    name: String,
    prog: usize,
    parent: Option<Tid>,
    children: (Tid, Tid),
    workload: usize,
) -> TaskRt {
    TaskRt::new(name, prog, parent, children, workload)
}

/// Engine ids of the tasks of workload `index`.
pub(crate) fn task_range(outcome: &Outcome, index: usize) -> std::ops::Range<Tid> {
    let (a, b) = outcome.workloads()[index].tasks;
    a..b
}
