//! The behaviour IR: what a task does, as a flat list of operations with loops.
//!
//! Every workload compiles to this IR. A task executes its program on whatever CPU it is
//! current on; operations that take CPU time (`Run`, `Spin`) become run segments that can
//! be preempted, and operations that block (`Sleep`, `Wait`, a pipe on a full or empty
//! buffer) call into the scheduler. A blocked operation is retried when the task is woken,
//! as the kernel's wait loops re-check their condition.

use crate::event::Tid;

/// A duration that may be drawn at random each time it is used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DurSpec {
    /// Always the same, in ns.
    Fixed(u64),
    /// `(base_us + rand() % max_jitter_us) * 1000` ns, as schbench draws its messenger
    /// sleep (`sleeptime + rand_r(&seed) % (sleeptime / 4)`).
    JitterUs {
        /// Base in microseconds.
        base_us: u64,
        /// Exclusive bound of the jitter in microseconds (0 = no jitter).
        max_jitter_us: u64,
    },
}

/// One operation of a task program.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// Run `work` ns of work as measured at capacity 1024 and full frequency; on a CPU of
    /// capacity C it takes `work * 1024 / C` ns (rounded up).
    Run {
        /// Work in ns at capacity 1024.
        work: u64,
    },
    /// Busy-loop until `dur` ns of wall time have passed since the loop started, whatever
    /// the CPU and however long the task is preempted meanwhile (schbench's `usec_spin`).
    Spin {
        /// Wall-clock duration in ns.
        dur: u64,
    },
    /// `nanosleep`/`usleep`: block on an hrtimer armed with the task's timer slack.
    Sleep {
        /// The requested sleep.
        dur: DurSpec,
    },
    /// Futex-style wait on the task's own token counter: consume a token if one is there,
    /// else block until posted (or until `timeout`, an hrtimer with slack, expires).
    Wait {
        /// Optional timeout.
        timeout: Option<DurSpec>,
    },
    /// Drop pending tokens (`futex = FUTEX_BLOCKED` before a wait cycle).
    ClearTokens,
    /// Post a token to a task and wake it if it waits (`FUTEX_WAKE`, `sem_post`).
    Post {
        /// Whom to post.
        to: Target,
    },
    /// Post every child (a "go" broadcast, e.g. hackbench's start signal).
    PostChildren,
    /// Put this task on a target's wait list (schbench's `xlist_add`).
    ListAdd {
        /// Whose list.
        to: Target,
    },
    /// Take this task's whole wait list, stamp the current time into every entry and post
    /// each (schbench's `xlist_wake_all`).
    WakeList,
    /// Record the time since this task's wake stamp into the workload's latency histogram
    /// `hist` (schbench's `msg_and_wait` tail).
    RecordLatency {
        /// Histogram index within the workload.
        hist: usize,
    },
    /// Write `bytes` to pipe `pipe_base + pipe`; block while the buffer is full.
    PipeWrite {
        /// Pipe index relative to the task's pipe base.
        pipe: usize,
        /// Message size.
        bytes: u32,
    },
    /// Read `bytes` from pipe `pipe_base + pipe`; block while fewer are buffered.
    PipeRead {
        /// Pipe index relative to the task's pipe base.
        pipe: usize,
        /// Message size.
        bytes: u32,
    },
    /// Fork every child of this task, in order (`fork`/`pthread_create`).
    ForkChildren,
    /// Fork the next child of this task, if any is left (one `fork` of a shell loop).
    ForkNext,
    /// `execve`: `sched_exec` balances the task with `SD_BALANCE_EXEC`, possibly moving it
    /// to another CPU through the stopper. The new image's start-up is a `Run` after it.
    Exec,
    /// Record the current time in the task's mark slot `slot` (0 or 1).
    Mark {
        /// Slot index.
        slot: usize,
    },
    /// A tool's own operation, answered by its workload's model
    /// ([`crate::hook::WorkloadModel::hook`]): rt-app's phase log and thread affinity,
    /// cyclictest's poll of the run's end, tbench's draw of its next load-file line.
    Hook {
        /// The operation, as an index into the model's own table.
        call: u32,
        /// Whether the operation touches only its own task and its workload's model, so
        /// that it may run while its CPU still finishes kernel work (a clock reading, a
        /// log entry); an operation that may move the task or leave a loop is not.
        local: bool,
    },
    /// An absolute-timer sleep whose instant the workload's model chooses
    /// ([`crate::hook::WorkloadModel::sleep`]), on an hrtimer with the task's slack; when
    /// the timer fires the model hears of it ([`crate::hook::WorkloadModel::woke`]) and
    /// the task goes on. rt-app's `timer` event and cyclictest's
    /// `clock_nanosleep(TIMER_ABSTIME)` are such sleeps.
    HookSleep {
        /// The sleep, as an index into the model's own table.
        call: u32,
        /// Whether a post interrupts the sleep and ends the task (a signal to a thread
        /// in `clock_nanosleep`, as cyclictest's `main` sends at its end); an
        /// uninterruptible sleep that is woken early sleeps on.
        interruptible: bool,
    },
    /// Start of a loop body, run `times` times (`None`: forever).
    LoopBegin {
        /// Iteration count.
        times: Option<u64>,
    },
    /// End of the loop body that starts at `begin`.
    LoopEnd {
        /// Index of the matching `LoopBegin`.
        begin: usize,
    },
    /// Exit (posting the parent, as a child's exit wakes a `wait()`ing parent).
    Exit,
    /// Run `work` ns (at capacity 1024 and full frequency, as `Run`) of kernel work in the
    /// task's own context: a system call's or a page fault's path. It takes the CPU as
    /// `Run` does and is preemptible, but the time is the task's system time, not its
    /// user time.
    RunSys {
        /// Work in ns at capacity 1024.
        work: u64,
    },
    /// `RunSys` of a cost-table entry (the run's `--costs` table with its overrides), read
    /// when the operation runs.
    RunSysCost {
        /// Which entry.
        cost: SysCost,
    },
    /// `send` of one message on loopback socket `pipe_base + sock` of the workload's
    /// sockets ([`crate::world::sockets::NetRt`]): the send path and the receive softirq it runs on this
    /// CPU are charged here, the message is queued at the peer (a UDP datagram that does
    /// not fit the peer's receive buffer is dropped), and a peer waiting in
    /// [`Op::NetRecv`] is woken from this CPU. A TCP sender blocks while the peer's
    /// window is full.
    NetSend {
        /// Socket index relative to the task's `pipe_base`.
        sock: usize,
        /// The message's size.
        size: NetSize,
    },
    /// Receive one whole message from socket `pipe_base + sock`, in `calls` system
    /// calls (tbench reads a 4-byte header, then the rest); block while none is queued.
    /// A socket whose peer has closed and that holds nothing ends the task, as
    /// netserver's and tbench_srv's loops end on a zero-length read.
    NetRecv {
        /// Socket index relative to the task's `pipe_base`.
        sock: usize,
        /// System calls per message.
        calls: u32,
        /// `MSG_TRUNC`: the data is discarded, not copied to user memory (tbench's
        /// client reads its replies so).
        trunc: bool,
    },
    /// `close` of socket `pipe_base + sock`: the peer's receives see the end once the
    /// queue is empty.
    NetClose {
        /// Socket index relative to the task's `pipe_base`.
        sock: usize,
    },
    /// netperf's `times_up` test at the head of its loop: once `dur` ns have passed since
    /// the task's mark `slot`, leave the innermost loop and go on at `after`.
    BreakAfter {
        /// Mark slot the deadline counts from.
        slot: usize,
        /// Duration in ns.
        dur: u64,
        /// Index of the operation after the loop's end.
        after: usize,
        /// Leave the loop's counter on the stack instead of closing the loop, so that the
        /// workload's report can read how many iterations ran (sysbench's `--time`).
        keep_count: bool,
    },
}

/// Kernel work in a task's own context whose amount is a cost-table entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SysCost {
    /// `exec`: `execve` and the new image's start-up faults.
    Exec,
    /// `exit`: `do_exit`'s teardown before the parent is woken.
    Exit,
}

impl SysCost {
    /// The entry's value in `table`.
    pub fn of(self, table: &crate::cost::CostTable) -> u64 {
        match self {
            SysCost::Exec => table.exec,
            SysCost::Exit => table.exit,
        }
    }
}

impl Op {
    /// Whether the operation's run segment is the task's system time rather than its user
    /// time.
    pub fn is_sys(self) -> bool {
        matches!(self, Op::RunSys { .. } | Op::RunSysCost { .. })
    }
}

/// The size of a message a [`Op::NetSend`] sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NetSize {
    /// Always this many bytes.
    Fixed(u32),
    /// The request of the task's current exchange (drawn by the workload's model, [`crate::hook::HookAct::Exchange`]); the
    /// message carries the response size the peer is to send back.
    Request,
    /// The response size the last message this task received asked for.
    Reply,
}

/// The target of a post or list operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// The task that forked this one.
    Parent,
    /// A task by engine id.
    Task(Tid),
}

/// A task program: a flat list of operations whose loops are matched.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Program {
    /// The operations.
    pub ops: Vec<Op>,
    open: Vec<usize>,
}

impl Program {
    /// An empty program.
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends an operation.
    pub fn op(mut self, op: Op) -> Self {
        self.ops.push(op);
        self
    }

    /// Opens a loop run `times` times (`None`: forever).
    pub fn begin_loop(mut self, times: Option<u64>) -> Self {
        self.open.push(self.ops.len());
        self.ops.push(Op::LoopBegin { times });
        self
    }

    /// Closes the innermost open loop.
    ///
    /// # Panics
    /// When no loop is open: a workload generator bug, not user input.
    pub fn end_loop(mut self) -> Self {
        let begin = self.open.pop().expect("end_loop without begin_loop");
        self.ops.push(Op::LoopEnd { begin });
        self
    }

    /// Whether every loop is closed.
    pub fn is_closed(&self) -> bool {
        self.open.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loops_are_matched() {
        let p = Program::new()
            .begin_loop(None)
            .op(Op::Run { work: 1 })
            .begin_loop(Some(3))
            .op(Op::Exit)
            .end_loop()
            .end_loop();
        assert!(p.is_closed());
        assert_eq!(p.ops[4], Op::LoopEnd { begin: 2 });
        assert_eq!(p.ops[5], Op::LoopEnd { begin: 0 });
    }
}
