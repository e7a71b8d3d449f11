//! How a workload's task starts out, before its generator adjusts it.

use crate::event::Tid;
use crate::world::{LoopStack, RtState, TaskRt};

impl TaskRt {
    /// A task of workload `workload` running program `prog`, not yet forked: `parent`
    /// forks it (a root task, without one, starts at time 0), and it forks the engine
    /// ids `children` in turn. Its affinity, nice, policy, clamps and group are the
    /// defaults, which its workload's generator may change before the world starts.
    pub fn new(
        name: String,
        prog: usize,
        parent: Option<Tid>,
        children: (Tid, Tid),
        workload: usize,
    ) -> TaskRt {
        TaskRt {
            name,
            prog,
            pc: 0,
            loops: LoopStack::default(),
            parent,
            children,
            next_child: children.0,
            pipe_base: 0,
            workload,
            nice: 0,
            cpus_allowed: None,
            sched_id: None,
            state: RtState::Unborn,
            tokens: 0,
            waiting_sem: false,
            timer: None,
            timer_fired: false,
            saved: None,
            rate_memo: None,
            list: Vec::new(),
            stamp: 0,
            woken_at: None,
            marks: [None, None],
            last_cpu: None,
            thread: false,
            home_node: None,
            uclamp: None,
            policy: fairsim_balance::Policy::Normal,
            cgroup: fairsim_balance::group::ROOT_GROUP,
            autogroup: fairsim_balance::group::ROOT_GROUP,
        }
    }

    /// A root task running program `prog` in workload 0, for worlds built by hand.
    pub fn root(name: String, prog: usize) -> TaskRt {
        TaskRt::new(name, prog, None, (0, 0), 0)
    }
}
