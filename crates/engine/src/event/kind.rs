//! What can happen in the emulated machine: the [`Event`] enum and the task index its
//! variants carry.
//!
//! A child of `event` of its own because the queue in `event` stores events packed by
//! `event_pack`, which reads the enum's variants: with the enum in `event`, `event`
//! and `event_pack` imported each other.

/// Index of a task in the engine's task table (not the scheduler's `TaskId`).
pub type Tid = usize;

/// Everything that can happen in the emulated machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    /// The CPU is free of kernel work and its current task should run its next
    /// operations. `gen` must equal the CPU's segment generation.
    Continue {
        /// The CPU.
        cpu: usize,
        /// CPU segment generation when scheduled.
        gen: u64,
    },
    /// The current task's run segment (work or spin) completes.
    SegmentEnd {
        /// The CPU.
        cpu: usize,
        /// CPU segment generation when scheduled.
        gen: u64,
    },
    /// The periodic scheduler tick of a busy CPU (`sched_tick`).
    Tick {
        /// The CPU.
        cpu: usize,
        /// Tick generation: the tick stops when the CPU goes idle (NO_HZ_IDLE).
        gen: u64,
    },
    /// An hrtimer's hard expiry: the timer interrupt on the CPU that armed it.
    TimerExpire {
        /// Index in the world's timer table.
        timer: usize,
        /// Timer generation (a cancelled or re-armed timer has moved on).
        gen: u64,
    },
    /// The timer interrupt's handler (`hrtimer_interrupt` running the expired timers'
    /// callbacks) once the CPU has left idle and entered the interrupt.
    TimerHandler {
        /// The CPU.
        cpu: usize,
    },
    /// A wakeup reaches its selected CPU: `ttwu_do_activate` there.
    WakeArrive {
        /// The woken task.
        task: Tid,
        /// Wake flags `try_to_wake_up` returned.
        wake_flags: u32,
        /// The wakeup went through the target's wake list (IPI).
        via_wakelist: bool,
        /// CPU that issued the wakeup.
        from_cpu: usize,
    },
    /// The parent's `copy_process` is done: `wake_up_new_task` selects the child's CPU and
    /// enqueues it there.
    NewTaskArrive {
        /// The new task.
        task: Tid,
        /// The forking CPU.
        from_cpu: usize,
    },
    /// A root task of the run is launched (forked from outside the machine), at a random
    /// phase of the first tick when noise is on.
    Launch {
        /// The task.
        task: Tid,
        /// The CPU it is forked from (`--launch-cpu`).
        cpu: usize,
    },
    /// The measurement window opens (`--warmup`): every counter starts again from zero.
    WindowStart,
    /// A reschedule IPI reaches `cpu` (`resched_curr` on a remote CPU).
    Resched {
        /// The CPU to reschedule.
        cpu: usize,
    },
    /// The next step of `cpu`'s newidle balance, once the previous step's work is done.
    NewidleStep {
        /// The balancing CPU.
        cpu: usize,
        /// CPU generation when scheduled.
        gen: u64,
    },
    /// The nohz balance kick IPI reaches the idle load balancer `cpu`.
    NohzKick {
        /// The idle CPU that balances for the others.
        cpu: usize,
    },
    /// The stopper of an active balance runs on the busiest `cpu`.
    ActiveBalance {
        /// The busiest CPU.
        cpu: usize,
    },
    /// `do_idle` goes round its loop on a CPU an interrupt left idle: the governor
    /// chooses a state again (stale when `gen` is not the CPU's idle generation).
    IdleReenter {
        /// The CPU.
        cpu: usize,
        /// The CPU's idle generation when scheduled.
        gen: u64,
    },
    /// The polling idle state's time limit (`cpuidle_poll_time`) passes.
    PollLimit {
        /// The CPU.
        cpu: usize,
        /// The CPU's idle generation when the state was entered.
        gen: u64,
    },
    /// The governor's kthread of a cpufreq policy runs its queued work (`sugov_work`).
    CpufreqWork {
        /// The policy.
        policy: usize,
    },
    /// A cpufreq policy's transition completes: the new frequency takes effect.
    CpufreqTransitionEnd {
        /// The policy.
        policy: usize,
        /// The new frequency, kHz.
        khz: u32,
    },
    /// A task group's CFS bandwidth timer expires (`sched_cfs_period_timer` or
    /// `sched_cfs_slack_timer`); stale when the group's timer was re-armed since.
    BandwidthTimer {
        /// The task group.
        group: usize,
        /// The slack timer (else the period timer).
        slack: bool,
        /// The expiry it was armed for (engine ns).
        at: u64,
    },
    /// The end of the emulated run.
    End,
}
