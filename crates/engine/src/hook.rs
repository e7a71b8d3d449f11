//! The one door through which a tool's own behaviour enters the world.
//!
//! The behaviour IR ([`crate::program::Op`]) keeps generic operations: run, spin, sleep,
//! wait and post, pipes and sockets, fork, exec, exit and loops. What belongs to one tool
//! alone (rt-app's periodic clocks and phase log, cyclictest's measuring loop, tbench's
//! load file) is a [`WorkloadModel`] that the tool's crate implements and the world holds
//! per workload. A task reaches its workload's model through [`Op::Hook`] and
//! [`Op::HookSleep`]; the model answers with what the world is to do next, in the
//! world's own terms ([`HookAct`], [`SleepAct`]). So the world never calls into workload
//! code by name, and workloads depend on the engine and never the reverse.
//!
//! An operation's `call` is an index into a table the model built along with the program
//! (which clock and period, which phase row, which loop end), so the operation itself stays
//! a few bytes and the interpreter's hot operations keep their static dispatch.
//!
//! [`Op::Hook`]: crate::program::Op::Hook
//! [`Op::HookSleep`]: crate::program::Op::HookSleep

use std::any::Any;
use std::fmt::Debug;

use fairsim_des::rng::SimRng;
use fairsim_topology::CpuMask;

/// What a hook sees of the world when one of its workload's tasks calls it.
#[derive(Debug)]
pub struct HookCx<'a> {
    /// The calling task's index within its workload (its engine id less the workload's
    /// first task's).
    pub me: usize,
    /// The CPU the task runs on.
    pub cpu: usize,
    /// The instant the operation executes: the event's time, or later when the CPU
    /// finishes kernel work first (the interpreter's `at`).
    pub at: u64,
    /// The event's time (the interpreter's `now`), at which a sleep is armed.
    pub now: u64,
    /// The end of the warm-up: a measurement at or after it is counted.
    pub warmup: u64,
    /// The current frequency of the CPU's cpufreq policy in kHz, when the machine has
    /// cpufreq.
    pub freq_khz: Option<u32>,
    /// The workload's random stream.
    pub rng: &'a mut SimRng,
    /// The first mark of the task's parent (the instant a launcher released its
    /// children), 0 when there is none.
    pub epoch: u64,
}

/// What the world does after a [`WorkloadModel::hook`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HookAct {
    /// Go on to the next operation.
    Next,
    /// `sched_setaffinity` on the calling task itself, then go on; a task whose CPU left
    /// the mask is moved by its CPU's stopper and stops here.
    SetAffinity(CpuMask),
    /// Leave the innermost loop and go on at operation `after`.
    LeaveLoop {
        /// Index of the operation after the loop's end.
        after: usize,
    },
    /// The task's next socket exchange sends `request` bytes and asks for `response`
    /// bytes back (what `NetSize::Request` sends); then go on.
    Exchange {
        /// Bytes of the request.
        request: u32,
        /// Bytes of the response the request asks for.
        response: u32,
    },
}

/// What the world does at an [`Op::HookSleep`](crate::program::Op::HookSleep) whose timer
/// has not fired.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SleepAct {
    /// `clock_nanosleep(TIMER_ABSTIME)` until this instant, on an hrtimer with the task's
    /// slack. An instant not after `now` returns at once, as [`SleepAct::Return`].
    Until(u64),
    /// The sleep returns at once (its instant has passed; the model has done its own
    /// accounting of that), and the task goes on.
    Return,
    /// The task leaves its loop and exits.
    Exit,
}

/// A model seen as [`Any`], so that its workload's report can read its own type back;
/// every `'static` type has it.
pub trait AsAny {
    /// The value as [`Any`].
    fn as_any(&self) -> &dyn Any;
    /// The value as [`Any`], mutable.
    fn as_any_mut(&mut self) -> &mut dyn Any;
}

impl<T: Any> AsAny for T {
    fn as_any(&self) -> &dyn Any {
        self
    }

    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
}

/// The tool-specific state of one workload and the operations its tasks call on it.
///
/// Implemented by the workload crate for the tools that need more than the generic IR;
/// the world calls it only from [`Op::Hook`](crate::program::Op::Hook) and
/// [`Op::HookSleep`](crate::program::Op::HookSleep), and reports read it back through
/// [`AsAny::as_any`]. A model whose tasks never sleep through it keeps the default
/// `sleep` and `woke`.
pub trait WorkloadModel: AsAny + Debug + Send {
    /// Answers [`Op::Hook`](crate::program::Op::Hook) `call` of task `cx.me`.
    fn hook(&mut self, call: u32, cx: &mut HookCx<'_>) -> HookAct;

    /// Answers [`Op::HookSleep`](crate::program::Op::HookSleep) `call` of task `cx.me`
    /// before it sleeps: when it is to wake. By default the sleep returns at once.
    fn sleep(&mut self, call: u32, cx: &mut HookCx<'_>) -> SleepAct {
        let _ = (call, cx);
        SleepAct::Return
    }

    /// Task `cx.me` runs again at `cx.at` after the timer of its sleep `call` fired. By
    /// default the model takes no note of it.
    fn woke(&mut self, call: u32, cx: &mut HookCx<'_>) {
        let _ = (call, cx);
    }
}
