//! The per-CPU state types the world holds (run segments, the engine's CPU state) and the
//! kinds of kernel overhead the metrics and the profile count; the code that drives them
//! is `cpu`'s. They live apart from that code so that `World`'s fields, the metrics and
//! the profile can name them without depending on the world's methods.

use crate::event::Tid;

/// Kinds of kernel overhead, for the per-CPU breakdown.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Overhead {
    /// Context switches.
    ContextSwitch = 0,
    /// The fixed part of wakeups.
    Wakeup,
    /// Idle-CPU scans, group statistics and task examination (select and balance).
    Scan,
    /// Task migration (moving and cache refill).
    Migration,
    /// IPI handling.
    Ipi,
    /// Remote runqueue locks.
    RemoteLock,
    /// hrtimer interrupts.
    Timer,
    /// Scheduler ticks.
    Tick,
    /// Exits from idle states.
    IdleExit,
    /// Forks.
    Fork,
    /// Spinning on a runqueue lock that another CPU holds.
    LockSpin,
    /// The loopback network stack in the tasks' system calls (send, the receive softirq
    /// it runs, receive): kernel time, but the workload's own work, not the scheduler's.
    Net,
}

impl Overhead {
    /// Number of kinds.
    pub const COUNT: usize = 12;
    /// Every kind, in index order.
    pub const ALL: [Overhead; Overhead::COUNT] = [
        Overhead::ContextSwitch,
        Overhead::Wakeup,
        Overhead::Scan,
        Overhead::Migration,
        Overhead::Ipi,
        Overhead::RemoteLock,
        Overhead::Timer,
        Overhead::Tick,
        Overhead::IdleExit,
        Overhead::Fork,
        Overhead::LockSpin,
        Overhead::Net,
    ];

    /// Name in outputs.
    pub fn name(self) -> &'static str {
        match self {
            Overhead::ContextSwitch => "context_switch",
            Overhead::Wakeup => "wakeup",
            Overhead::Scan => "scan",
            Overhead::Migration => "migration",
            Overhead::Ipi => "ipi",
            Overhead::RemoteLock => "remote_lock",
            Overhead::Timer => "timer",
            Overhead::Tick => "tick",
            Overhead::IdleExit => "idle_exit",
            Overhead::Fork => "fork",
            Overhead::LockSpin => "lock_spin",
            Overhead::Net => "net",
        }
    }
}

/// The progress state of a run segment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SegKind {
    /// Work left, in units of 1/1024 ns at capacity 1024 (so that a CPU of capacity C at
    /// full frequency does exactly C units per ns and no rounding accumulates).
    Work {
        /// Units left.
        left: u64,
    },
    /// A busy loop that ends at a wall-clock deadline.
    Spin {
        /// Deadline in ns.
        deadline: u64,
    },
}

/// The run segment a CPU is executing for its current task.
///
/// Packed into 32 bytes, so that it shares the first cache line of [`CpuRt`] with the
/// current task, the kernel work and the generation: every event of a busy CPU reads all
/// four. The [`SegKind`] is kept as its value and a flag; [`Seg::kind`] gives it back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(C)]
pub struct Seg {
    /// When the task (re)gains the CPU from kernel work; progress counts from here.
    pub resume_at: u64,
    /// Work units left ([`SegKind::Work`]) or the deadline ([`SegKind::Spin`]).
    pub(super) value: u64,
    /// Work units per ns ([`World::rate`](super::World::rate)), fixed while the segment
    /// runs: the CPU, the task, its home node and the CPU's frequency scale do not change
    /// under it (a new frequency re-times the segment,
    /// [`World::retime_seg`](super::World::retime_seg)). Kept here because the task's and
    /// runqueue's fields it is computed from are cold by the time the segment is advanced.
    pub rate: u64,
    /// The task; its number fits in `u32`, as the event queue's packed form requires.
    task: u32,
    /// The segment is a spin, not work.
    pub(super) spin: bool,
    /// The segment is system time: the operation it runs (which stays at the task's
    /// program counter until the segment ends) is a `RunSys` or `RunSysCost`.
    pub sys: bool,
    /// The task runs away from its home node.
    pub away: bool,
}

impl Seg {
    /// A segment of `task` resuming at `resume_at`.
    pub fn new(task: Tid, resume_at: u64, kind: SegKind, rate: u64, sys: bool, away: bool) -> Self {
        let (value, spin) = match kind {
            SegKind::Work { left } => (left, false),
            SegKind::Spin { deadline } => (deadline, true),
        };
        Seg {
            resume_at,
            value,
            rate,
            task: u32::try_from(task)
                .expect("task numbers fit in u32, as the event queue packs them"),
            spin,
            sys,
            away,
        }
    }

    /// The task.
    pub fn task(&self) -> Tid {
        self.task as Tid
    }

    /// What is left.
    pub fn kind(&self) -> SegKind {
        if self.spin {
            SegKind::Spin {
                deadline: self.value,
            }
        } else {
            SegKind::Work { left: self.value }
        }
    }
}

/// Engine state of one CPU.
///
/// Laid out in declaration order, 64-byte aligned: the fields every event of the CPU
/// reads (its current task, kernel work, generation and run segment) fill the first cache
/// line exactly (a test checks it).
#[derive(Debug, Clone, Default)]
#[repr(C, align(64))]
pub struct CpuRt {
    /// The current task (mirrors `rq->curr`).
    pub curr: Option<Tid>,
    /// The CPU is busy with kernel work until this time.
    pub kernel_until: u64,
    /// Generation of the CPU's `Continue`/`SegmentEnd` events.
    pub gen: u64,
    /// The current task's active run segment.
    pub seg: Option<Seg>,
    /// A `Continue` is pending for the current generation.
    pub continue_pending: bool,
    /// The tick runs (the CPU is not idle).
    pub tick_on: bool,
    /// A tick event of this CPU is in the queue.
    pub tick_queued: bool,
    /// Generation of the tick (reserved for a tick that must be cancelled; today ticks are
    /// never cancelled, only found idle).
    pub tick_gen: u64,
    /// Timers armed on this CPU.
    pub timers: Vec<usize>,
    /// A newidle balance in progress inside `schedule()`, with the previous task and the
    /// time it started.
    pub newidle: Option<(fairsim_balance::lb::NewidleBalance, Option<Tid>, u64)>,
    /// The runqueue lock this CPU acquired (after spinning) for its next balance act.
    pub act_lock: Option<usize>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cpus_hot_fields_fill_its_first_cache_line() {
        use std::mem::{align_of, offset_of, size_of};
        assert_eq!(size_of::<Option<Seg>>(), 32);
        assert_eq!(align_of::<CpuRt>(), 64);
        for end in [
            offset_of!(CpuRt, curr) + size_of::<Option<Tid>>(),
            offset_of!(CpuRt, kernel_until) + 8,
            offset_of!(CpuRt, gen) + 8,
            offset_of!(CpuRt, seg) + size_of::<Option<Seg>>(),
        ] {
            assert!(end <= 64, "a hot field of CpuRt ends at byte {end}");
        }
    }

    #[test]
    fn a_segment_gives_back_its_kind() {
        for kind in [
            SegKind::Work { left: u64::MAX },
            SegKind::Work { left: 0 },
            SegKind::Spin { deadline: 7 },
        ] {
            let seg = Seg::new(u32::MAX as Tid, 3, kind, 1024, true, false);
            assert_eq!(seg.kind(), kind);
            assert_eq!(seg.task(), u32::MAX as Tid);
            assert!(seg.sys && !seg.away);
        }
    }
}
