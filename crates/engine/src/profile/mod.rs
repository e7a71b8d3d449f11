//! Where the CPU time went, by kernel function: the engine's counterpart of
//! `perf record -a -g` + `perf report --children`.
//!
//! Every piece of kernel work the engine charges ([`crate::world::World::charge`]) names a
//! [`Site`]: the context it runs in ([`Ctx`], the call chain of the kernel path, outermost
//! first) and what the work is ([`Leaf`]: the fixed part of the path, CPUs or groups
//! scanned, tasks examined or moved, a runqueue lock taken or spun on). A site's stack
//! is the context's frames followed by the leaf's, so a charge is attributed to its leaf
//! function ("self") and to every function on its stack ("children"), as perf's call-graph
//! report does. Task work is attributed to `[user]` and the time no CPU spends on anything
//! to `[idle]`, so the self column sums to all CPU time.
//!
//! The frames are 6.12.117's function names. Where seed postings (v6.5 and older) print
//! another name for the same function, [`Sym::old_name`] gives it, so that a profile line
//! can be put next to the seed's (`sched_balance_newidle` is `newidle_balance` there).
//! Functions the kernel inlines into their caller and the cost model cannot tell apart
//! (`can_migrate_task` in `detach_tasks`, `find_idlest_group_cpu` scanning) are folded
//! into the caller's frame. `update_sg_lb_stats` is kept as its own frame because the
//! cost model charges it separately (one group, its CPUs); in the seed's v6.5 build it is
//! inlined into `update_sd_lb_stats.constprop.0`, whose "children" is the figure to
//! compare.

use crate::world::Overhead;

mod sym;

pub use sym::Sym;

/// The kernel path a piece of charged work runs in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Ctx {
    /// `__schedule` itself: the context switch and its runqueue lock.
    Schedule,
    /// `pick_next_task_fair` and the rest of `__schedule`'s fair-class calls (put, set,
    /// dequeue of the blocking task).
    Pick,
    /// `sched_balance_newidle`, inside `pick_next_task_fair`.
    Newidle,
    /// `try_to_wake_up` on the waking CPU, `select_task_rq_fair` included.
    Wakeup,
    /// `ttwu_do_activate` done by a remote waker under the target's lock.
    WakeActivate,
    /// The wake-list IPI on the target: `sched_ttwu_pending`.
    WakeListIpi,
    /// The reschedule IPI.
    ReschedIpi,
    /// The nohz kick IPI on the idle load balancer.
    NohzKickIpi,
    /// The timer interrupt's own work.
    TimerIrq,
    /// The scheduler tick.
    Tick,
    /// `sched_balance_trigger` from the tick (the nohz kick decision).
    Trigger,
    /// The balance softirq's periodic balance of the CPU's own domains.
    PeriodicBalance,
    /// The balance softirq on the idle load balancer, for the nohz idle CPUs.
    NohzBalance,
    /// The stopper thread's active balance.
    ActiveBalance,
    /// `fork`: `copy_process` in the parent.
    Fork,
    /// `wake_up_new_task`: the fork balance and the child's enqueue.
    WakeUpNewTask,
    /// `sched_exec`: the exec balance.
    Exec,
    /// `do_exit`'s scheduler work.
    Exit,
    /// Leaving an idle state.
    IdleExit,
    /// Restarting the stopped tick on the way out of idle.
    TickRestart,
    /// The idle loop's blocked-load refresh.
    IdleBalance,
    /// A TCP `send` on a loopback socket up to the device: the system call,
    /// `tcp_sendmsg` with the copy from user memory, `tcp_write_xmit` and `loopback_xmit`.
    NetTcpSend,
    /// The same for UDP: `udp_sendmsg` with the copy, `ip_make_skb`, `loopback_xmit`.
    NetUdpSend,
    /// The receive softirq a loopback TCP send runs on its own CPU when it re-enables
    /// bottom halves (`net_rx_action` -> `process_backlog` -> `tcp_v4_rcv`), which queues
    /// the data on the peer's socket; the peer's wakeup is charged as `try_to_wake_up`.
    NetTcpRx,
    /// The same for UDP (`__udp4_lib_rcv`, `__udp_enqueue_schedule_skb`).
    NetUdpRx,
    /// A TCP `recv`: the system call and `tcp_recvmsg` with the copy to user memory.
    NetTcpRecv,
    /// A UDP `recv`: the system call and `udp_recvmsg` with the copy.
    NetUdpRecv,
    /// A TCP window update a `recv` sends when it reopens the window for a sender that
    /// waits for space (`tcp_cleanup_rbuf`), with the softirq that processes it on the
    /// reader's CPU.
    NetTcpAck,
    /// The stopper's `migration_cpu_stop`, moving a task off a CPU that
    /// `sched_setaffinity` took out of its mask.
    AffinityStop,
}

impl Ctx {
    /// Number of contexts.
    pub const COUNT: usize = Ctx::AffinityStop as usize + 1;

    /// Every context, in index order.
    pub const ALL: [Ctx; Ctx::COUNT] = [
        Ctx::Schedule,
        Ctx::Pick,
        Ctx::Newidle,
        Ctx::Wakeup,
        Ctx::WakeActivate,
        Ctx::WakeListIpi,
        Ctx::ReschedIpi,
        Ctx::NohzKickIpi,
        Ctx::TimerIrq,
        Ctx::Tick,
        Ctx::Trigger,
        Ctx::PeriodicBalance,
        Ctx::NohzBalance,
        Ctx::ActiveBalance,
        Ctx::Fork,
        Ctx::WakeUpNewTask,
        Ctx::Exec,
        Ctx::Exit,
        Ctx::IdleExit,
        Ctx::TickRestart,
        Ctx::IdleBalance,
        Ctx::NetTcpSend,
        Ctx::NetUdpSend,
        Ctx::NetTcpRx,
        Ctx::NetUdpRx,
        Ctx::NetTcpRecv,
        Ctx::NetUdpRecv,
        Ctx::NetTcpAck,
        Ctx::AffinityStop,
    ];

    /// The call chain of the context, outermost first.
    pub fn frames(self) -> &'static [Sym] {
        use Sym::*;
        match self {
            Ctx::Schedule => &[Schedule],
            Ctx::Pick => &[Schedule, PickNextTaskFair],
            Ctx::Newidle => &[Schedule, PickNextTaskFair, SchedBalanceNewidle],
            Ctx::Wakeup => &[TryToWakeUp],
            Ctx::WakeActivate => &[TryToWakeUp, TtwuQueue, TtwuDoActivate],
            Ctx::WakeListIpi => &[SysvecCallFunctionSingle, SchedTtwuPending],
            Ctx::ReschedIpi => &[SysvecRescheduleIpi],
            Ctx::NohzKickIpi => &[SysvecCallFunctionSingle, NohzCsdFunc],
            Ctx::TimerIrq => &[SysvecApicTimer, HrtimerInterrupt],
            Ctx::Tick => &[
                SysvecApicTimer,
                HrtimerInterrupt,
                TickNohzHandler,
                UpdateProcessTimes,
                SchedTick,
            ],
            Ctx::Trigger => &[
                SysvecApicTimer,
                HrtimerInterrupt,
                TickNohzHandler,
                UpdateProcessTimes,
                SchedBalanceTrigger,
            ],
            Ctx::PeriodicBalance => &[HandleSoftirqs, SchedBalanceSoftirq, SchedBalanceDomains],
            Ctx::NohzBalance => &[
                HandleSoftirqs,
                SchedBalanceSoftirq,
                NohzIdleBalance,
                SchedBalanceDomains,
            ],
            Ctx::ActiveBalance => &[CpuStopperThread, ActiveLoadBalanceCpuStop],
            Ctx::Fork => &[KernelClone, CopyProcess],
            Ctx::WakeUpNewTask => &[KernelClone, WakeUpNewTask],
            Ctx::Exec => &[SchedExec],
            Ctx::Exit => &[DoExit],
            Ctx::IdleExit => &[DoIdle, CpuidleEnterState],
            Ctx::TickRestart => &[DoIdle, TickNohzIdleExit],
            Ctx::IdleBalance => &[DoIdle, NohzRunIdleBalance, UpdateBlockedAverages],
            Ctx::NetTcpSend => &[SysSendto, TcpSendmsg],
            Ctx::NetUdpSend => &[SysSendto, UdpSendmsg],
            Ctx::NetTcpRx => &[SysSendto, HandleSoftirqs, NetRxAction, TcpV4Rcv],
            Ctx::NetUdpRx => &[SysSendto, HandleSoftirqs, NetRxAction, Udp4LibRcv],
            Ctx::NetTcpRecv => &[SysRecvfrom, TcpRecvmsg],
            Ctx::NetUdpRecv => &[SysRecvfrom, UdpRecvmsg],
            Ctx::NetTcpAck => &[SysRecvfrom, TcpRecvmsg, TcpCleanupRbuf],
            Ctx::AffinityStop => &[CpuStopperThread, MigrationCpuStop],
        }
    }

    /// Whether the context is a load balance (`sched_balance_rq` below it).
    pub fn balances(self) -> bool {
        matches!(
            self,
            Ctx::Newidle | Ctx::PeriodicBalance | Ctx::NohzBalance | Ctx::ActiveBalance
        )
    }

    /// Whether the context selects a CPU for a task (`select_task_rq_fair` below it).
    fn selects(self) -> bool {
        matches!(self, Ctx::Wakeup | Ctx::WakeUpNewTask | Ctx::Exec)
    }

    /// The overhead kind of the context's fixed work.
    fn fixed_overhead(self) -> Overhead {
        match self {
            Ctx::Schedule | Ctx::Pick => Overhead::ContextSwitch,
            Ctx::Wakeup | Ctx::WakeActivate => Overhead::Wakeup,
            Ctx::WakeListIpi | Ctx::ReschedIpi | Ctx::NohzKickIpi | Ctx::ActiveBalance => {
                Overhead::Ipi
            }
            Ctx::TimerIrq => Overhead::Timer,
            Ctx::Tick | Ctx::Trigger => Overhead::Tick,
            Ctx::Fork | Ctx::WakeUpNewTask | Ctx::Exec | Ctx::Exit => Overhead::Fork,
            Ctx::IdleExit | Ctx::TickRestart | Ctx::IdleBalance => Overhead::IdleExit,
            Ctx::NetTcpSend
            | Ctx::NetUdpSend
            | Ctx::NetTcpRx
            | Ctx::NetUdpRx
            | Ctx::NetTcpRecv
            | Ctx::NetUdpRecv
            | Ctx::NetTcpAck => Overhead::Net,
            Ctx::AffinityStop => Overhead::Migration,
            Ctx::Newidle | Ctx::PeriodicBalance | Ctx::NohzBalance => Overhead::Scan,
        }
    }
}

/// What a piece of work is, within its context.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Leaf {
    /// The context's own fixed cost (the switch, the wakeup, the interrupt, the fork).
    Fixed,
    /// CPUs whose state a scan read.
    ScanCpus,
    /// Sched groups whose statistics were computed.
    ScanGroups,
    /// Tasks examined for migration.
    Examine,
    /// Tasks moved (detach and attach).
    Move,
    /// A task's cache refill on the CPU it migrated to.
    Refill,
    /// A remote runqueue lock taken.
    Lock,
    /// Spinning on a runqueue lock another CPU holds.
    Spin,
    /// A task entity's PELT update (`update_load_avg` -> `__update_load_avg_se`).
    PeltSe,
    /// A runqueue's PELT update (`update_load_avg` -> `update_cfs_rq_load_avg`).
    PeltCfsRq,
    /// `util_est_enqueue`.
    UtilEstEnqueue,
    /// `util_est_dequeue`.
    UtilEstDequeue,
    /// `util_est_update`.
    UtilEstUpdate,
}

impl Leaf {
    /// Number of leaves.
    pub const COUNT: usize = Leaf::UtilEstUpdate as usize + 1;
}

/// One attribution point: a context and the kind of work in it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Site {
    /// The kernel path.
    pub ctx: Ctx,
    /// The work.
    pub leaf: Leaf,
}

/// Number of sites.
pub const NR_SITES: usize = Ctx::COUNT * Leaf::COUNT;

impl Site {
    /// The site of `leaf` work in `ctx`.
    pub const fn new(ctx: Ctx, leaf: Leaf) -> Site {
        Site { ctx, leaf }
    }

    /// The context's fixed work.
    pub const fn fixed(ctx: Ctx) -> Site {
        Site::new(ctx, Leaf::Fixed)
    }

    /// Index in a per-site array.
    pub fn index(self) -> usize {
        self.ctx as usize * Leaf::COUNT + self.leaf as usize
    }

    /// The site at `index`.
    pub fn from_index(index: usize) -> Site {
        let ctx = Ctx::ALL[index / Leaf::COUNT];
        let leaf = [
            Leaf::Fixed,
            Leaf::ScanCpus,
            Leaf::ScanGroups,
            Leaf::Examine,
            Leaf::Move,
            Leaf::Refill,
            Leaf::Lock,
            Leaf::Spin,
            Leaf::PeltSe,
            Leaf::PeltCfsRq,
            Leaf::UtilEstEnqueue,
            Leaf::UtilEstDequeue,
            Leaf::UtilEstUpdate,
        ][index % Leaf::COUNT];
        Site { ctx, leaf }
    }

    /// The overhead kind the work counts as in the per-kind breakdown.
    pub fn overhead(self) -> Overhead {
        match self.leaf {
            // Load tracking is part of the path that does it: a switch's dequeue and pick,
            // a wakeup's enqueue, a balance's detach and attach.
            Leaf::Fixed
            | Leaf::PeltSe
            | Leaf::PeltCfsRq
            | Leaf::UtilEstEnqueue
            | Leaf::UtilEstDequeue
            | Leaf::UtilEstUpdate => self.ctx.fixed_overhead(),
            Leaf::ScanCpus | Leaf::ScanGroups | Leaf::Examine => Overhead::Scan,
            Leaf::Move | Leaf::Refill => Overhead::Migration,
            Leaf::Lock => Overhead::RemoteLock,
            Leaf::Spin => Overhead::LockSpin,
        }
    }

    /// The frames the leaf adds below its context.
    fn leaf_frames(self) -> &'static [Sym] {
        use Sym::*;
        let bal = self.ctx.balances();
        let sel = self.ctx.selects();
        match self.leaf {
            Leaf::Fixed => &[],
            Leaf::ScanCpus | Leaf::ScanGroups if bal => {
                &[SchedBalanceRq, UpdateSdLbStats, UpdateSgLbStats]
            }
            Leaf::ScanCpus if self.ctx == Ctx::Wakeup => {
                &[SelectTaskRqFair, SelectIdleSibling, SelectIdleCpu]
            }
            Leaf::ScanCpus | Leaf::ScanGroups if sel => &[SelectTaskRqFair, FindDstGroup],
            Leaf::ScanCpus | Leaf::ScanGroups if self.ctx == Ctx::IdleBalance => &[],
            Leaf::ScanCpus | Leaf::ScanGroups | Leaf::Examine => &[],
            Leaf::Move | Leaf::Lock | Leaf::Spin if bal => match self.leaf {
                Leaf::Move => &[SchedBalanceRq, AttachTasks],
                Leaf::Lock => &[SchedBalanceRq, RawSpinRqLock],
                _ => &[SchedBalanceRq, RawSpinRqLock, SpinLockSlowpath],
            },
            Leaf::Move | Leaf::Refill => &[MigrationRefill],
            Leaf::Lock => &[RawSpinRqLock],
            Leaf::Spin => &[RawSpinRqLock, SpinLockSlowpath],
            Leaf::PeltSe => &[UpdateLoadAvg, UpdateLoadAvgSe],
            Leaf::PeltCfsRq => &[UpdateLoadAvg, UpdateCfsRqLoadAvg],
            Leaf::UtilEstEnqueue => &[UtilEstEnqueue],
            Leaf::UtilEstDequeue => &[UtilEstDequeue],
            Leaf::UtilEstUpdate => &[UtilEstUpdate],
        }
    }

    /// The whole stack, outermost first; the last frame is the one charged "self".
    pub fn stack(self) -> Vec<Sym> {
        if self.leaf == Leaf::Refill {
            // The refill is the migrated task's first cache misses on its new CPU, in no
            // kernel path of that CPU's: whichever path moved it, it stands alone.
            return vec![Sym::MigrationRefill];
        }
        let mut v = self.ctx.frames().to_vec();
        if self.leaf == Leaf::Examine && self.ctx.balances() {
            v.extend([Sym::SchedBalanceRq, Sym::DetachTasks]);
        } else {
            v.extend_from_slice(self.leaf_frames());
        }
        v
    }
}

/// One line of a `perf report --children` table.
#[derive(Debug, Clone, PartialEq)]
pub struct ProfileLine {
    /// The function.
    pub sym: Sym,
    /// Time on stacks that contain it, ns.
    pub children_ns: u64,
    /// Time charged to it as the leaf, ns.
    pub self_ns: u64,
}

/// A profile: time per site, plus task and idle time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Profile {
    /// ns charged to each site.
    pub sites: Vec<u64>,
    /// Task (user) time, ns.
    pub user_ns: u64,
    /// Idle time, ns.
    pub idle_ns: u64,
}

impl Profile {
    /// An empty profile.
    pub fn new() -> Profile {
        Profile {
            sites: vec![0; NR_SITES],
            user_ns: 0,
            idle_ns: 0,
        }
    }

    /// Adds `other` to this profile.
    pub fn add(&mut self, sites: &[u64], user_ns: u64, idle_ns: u64) {
        for (a, b) in self.sites.iter_mut().zip(sites) {
            *a += b;
        }
        self.user_ns += user_ns;
        self.idle_ns += idle_ns;
    }

    /// Kernel time, ns.
    pub fn kernel_ns(&self) -> u64 {
        self.sites.iter().sum()
    }

    /// Busy time (kernel and user), ns.
    pub fn busy_ns(&self) -> u64 {
        self.kernel_ns() + self.user_ns
    }

    /// All CPU time, ns.
    pub fn total_ns(&self) -> u64 {
        self.busy_ns() + self.idle_ns
    }

    /// The `perf report --children` lines, by children time (then self time, then
    /// symbol order), every symbol with time on its stacks.
    pub fn lines(&self) -> Vec<ProfileLine> {
        let mut children = [0u64; Sym::COUNT];
        let mut selfs = [0u64; Sym::COUNT];
        for (i, &ns) in self.sites.iter().enumerate() {
            if ns == 0 {
                continue;
            }
            let stack = Site::from_index(i).stack();
            let mut seen = [false; Sym::COUNT];
            for s in &stack {
                if !seen[*s as usize] {
                    seen[*s as usize] = true;
                    children[*s as usize] += ns;
                }
            }
            if let Some(last) = stack.last() {
                selfs[*last as usize] += ns;
            }
        }
        children[Sym::User as usize] += self.user_ns;
        selfs[Sym::User as usize] += self.user_ns;
        children[Sym::Idle as usize] += self.idle_ns;
        selfs[Sym::Idle as usize] += self.idle_ns;
        let mut out: Vec<ProfileLine> = Sym::ALL
            .into_iter()
            .filter(|s| children[*s as usize] > 0)
            .map(|s| ProfileLine {
                sym: s,
                children_ns: children[s as usize],
                self_ns: selfs[s as usize],
            })
            .collect();
        out.sort_by(|a, b| {
            b.children_ns
                .cmp(&a.children_ns)
                .then(b.self_ns.cmp(&a.self_ns))
                .then(a.sym.cmp(&b.sym))
        });
        out
    }

    /// The line of `sym` (zeros when it has no time).
    pub fn line(&self, sym: Sym) -> ProfileLine {
        self.lines()
            .into_iter()
            .find(|l| l.sym == sym)
            .unwrap_or(ProfileLine {
                sym,
                children_ns: 0,
                self_ns: 0,
            })
    }

    /// The table as `perf report --children --sort symbol` prints it, over all CPU time
    /// and over busy time (idle excluded, as a cycles profile of halting idle CPUs is).
    pub fn render(&self, title: &str) -> String {
        use std::fmt::Write;
        let total = self.total_ns().max(1) as f64;
        let busy = self.busy_ns().max(1) as f64;
        let mut s = String::new();
        let _ = writeln!(s, "# {title}");
        let _ = writeln!(
            s,
            "# all CPU time {:.3} s, busy {:.3} s ({:.2}%)",
            self.total_ns() as f64 / 1e9,
            self.busy_ns() as f64 / 1e9,
            100.0 * self.busy_ns() as f64 / total
        );
        let _ = writeln!(
            s,
            "#   Children      Self  | busy: Children      Self  Symbol"
        );
        for l in self.lines() {
            let name = match l.sym.old_name() {
                Some(old) => format!("{} ({old})", l.sym.name()),
                None => l.sym.name().to_string(),
            };
            let (bc, bs) = if l.sym == Sym::Idle {
                ("-".to_string(), "-".to_string())
            } else {
                (
                    format!("{:.2}%", 100.0 * l.children_ns as f64 / busy),
                    format!("{:.2}%", 100.0 * l.self_ns as f64 / busy),
                )
            };
            let _ = writeln!(
                s,
                "  {:>9.2}% {:>8.2}%  |    {:>9} {:>8}  [k] {name}",
                100.0 * l.children_ns as f64 / total,
                100.0 * l.self_ns as f64 / total,
                bc,
                bs
            );
        }
        s
    }

    /// The profile for `--json`: every line with its times and shares.
    pub fn to_json(&self) -> serde_json::Value {
        let total = self.total_ns().max(1) as f64;
        let busy = self.busy_ns().max(1) as f64;
        let lines: Vec<serde_json::Value> = self
            .lines()
            .into_iter()
            .map(|l| {
                serde_json::json!({
                    "symbol": l.sym.name(),
                    "old_symbol": l.sym.old_name(),
                    "children_ns": l.children_ns,
                    "self_ns": l.self_ns,
                    "children_pct": 100.0 * l.children_ns as f64 / total,
                    "self_pct": 100.0 * l.self_ns as f64 / total,
                    "children_busy_pct": 100.0 * l.children_ns as f64 / busy,
                    "self_busy_pct": 100.0 * l.self_ns as f64 / busy,
                })
            })
            .collect();
        serde_json::json!({
            "total_ns": self.total_ns(),
            "busy_ns": self.busy_ns(),
            "user_ns": self.user_ns,
            "idle_ns": self.idle_ns,
            "lines": lines,
        })
    }
}

impl Default for Profile {
    fn default() -> Self {
        Profile::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_site_round_trips_and_has_a_stack() {
        for i in 0..NR_SITES {
            let s = Site::from_index(i);
            assert_eq!(s.index(), i);
            assert!(!s.stack().is_empty(), "{s:?}");
        }
    }

    #[test]
    fn self_sums_to_the_total_and_children_cover_self() {
        let mut p = Profile::new();
        p.sites[Site::new(Ctx::Newidle, Leaf::ScanCpus).index()] = 700;
        p.sites[Site::new(Ctx::Newidle, Leaf::Spin).index()] = 50;
        p.sites[Site::fixed(Ctx::Schedule).index()] = 250;
        p.user_ns = 3_000;
        p.idle_ns = 6_000;
        let lines = p.lines();
        let self_sum: u64 = lines.iter().map(|l| l.self_ns).sum();
        assert_eq!(self_sum, p.total_ns());
        let nb = p.line(Sym::SchedBalanceNewidle);
        assert_eq!((nb.children_ns, nb.self_ns), (750, 0));
        let sd = p.line(Sym::UpdateSdLbStats);
        assert_eq!((sd.children_ns, sd.self_ns), (700, 0));
        assert_eq!(p.line(Sym::UpdateSgLbStats).self_ns, 700);
        // __schedule is on every newidle stack and has its own switch cost.
        let sch = p.line(Sym::Schedule);
        assert_eq!((sch.children_ns, sch.self_ns), (1_000, 250));
        assert!(lines.iter().all(|l| l.children_ns >= l.self_ns));
        assert_eq!(
            Sym::by_name("newidle_balance"),
            Some(Sym::SchedBalanceNewidle)
        );
        let text = p.render("test");
        assert!(text.contains("sched_balance_newidle (newidle_balance)"));
    }
}
