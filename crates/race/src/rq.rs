//! Race mode's runqueues: what other CPUs read without the lock (published atomics) and
//! what sits behind it (the queue, the current token, the cfs_rq's PELT averages, the
//! CPU's sleeping tokens).
//!
//! The kernel's remote readers load `rq->nr_running` or `cfs_rq->avg.util_avg` with plain
//! (`READ_ONCE`) loads while the owner changes them under the lock. Here the owner changes
//! [`RqInner`] under the mutex and, when it lets go of the lock, stores the fields remote
//! readers need into the [`RaceRq`]'s atomics with relaxed ordering ([`Locked`]'s `Drop`).
//! A reader may therefore see a runqueue a few instructions stale, never torn, exactly the
//! guarantee `READ_ONCE` gives.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};
use std::sync::atomic::Ordering;
use std::sync::TryLockError;

use super::sync::{AtomicBool, AtomicU32, AtomicU64, Mutex, MutexGuard};

use fairsim_balance::sched::fold_idle_time;
use fairsim_balance::TaskId;
use fairsim_pelt::{
    update_cfs_rq_load_avg, update_load_avg_task, util_est_dequeue, util_est_enqueue,
    util_est_update, CfsRqAvg, CfsRqInputs, SchedAvg, SeInputs, UpdateFlags, UtilEstMode,
};

/// `se_weight` of a nice-0 token (`scale_load_down(NICE_0_LOAD)`).
pub const TOKEN_WEIGHT: u64 = 1024;

/// `SeInputs` of a nice-0 token: runnable whenever it is queued (tokens are never
/// delayed).
fn token_se(on_rq: bool, running: bool) -> SeInputs {
    SeInputs {
        weight: TOKEN_WEIGHT,
        on_rq,
        runnable: u64::from(on_rq),
        running,
    }
}

/// A task in race mode: the PELT signals and the stamps the balancer reads.
#[derive(Debug, Clone, Default)]
pub struct Token {
    /// `p->se.avg`.
    pub avg: SchedAvg,
    /// `p->se.exec_start` (rq clock ns) for `task_hot`.
    pub exec_start: u64,
    /// Completed run/sleep loops.
    pub loops: u64,
    /// Migrations.
    pub migrations: u64,
    /// When its current sleep's timer expires (ns since start).
    pub wake_at: u64,
}

/// The locked part of a runqueue.
#[derive(Debug, Default)]
pub struct RqInner {
    /// Queued or running tokens, by id.
    pub tokens: BTreeMap<TaskId, Token>,
    /// `rq->cfs_tasks`: most recently run first; includes the current token.
    pub cfs_tasks: Vec<TaskId>,
    /// `rq->curr`.
    pub curr: Option<TaskId>,
    /// `rq->cfs.avg` with its pending removals.
    pub cfs: CfsRqAvg,
    /// `rq->clock` (ns since the run started, plus the boot offset).
    pub clock: u64,
    /// `rq->idle_stamp`.
    pub idle_stamp: u64,
    /// `rq->avg_idle`.
    pub avg_idle: u64,
    /// `rq->max_idle_balance_cost`.
    pub max_idle_balance_cost: u64,
    /// The CPU's hrtimers: sleeping tokens by wake time (ns since start).
    pub sleepers: BinaryHeap<Reverse<(u64, TaskId)>>,
    /// Their state while asleep.
    pub asleep: BTreeMap<TaskId, Token>,
}

impl RqInner {
    /// `rq->nr_running`.
    pub fn nr_running(&self) -> u32 {
        self.tokens.len() as u32
    }

    fn cfs_inputs(&self) -> CfsRqInputs {
        CfsRqInputs {
            load: TOKEN_WEIGHT * self.tokens.len() as u64,
            runnable: self.tokens.len() as u64,
            running: self.curr.is_some(),
        }
    }

    /// `update_load_avg(cfs_rq, se, flags)` for token `t`, with the cfs_rq as `inp`
    /// describes it before the caller's change.
    fn update_token_load_avg(
        &mut self,
        inp: CfsRqInputs,
        t: &mut Token,
        se: SeInputs,
        flags: UpdateFlags,
        ue: UtilEstMode,
    ) {
        update_load_avg_task(
            self.clock,
            &mut self.cfs,
            inp,
            &mut t.avg,
            se,
            flags,
            ue.enabled(),
        );
    }

    /// `update_rq_clock` to `clock`.
    pub fn update_clock(&mut self, clock: u64) {
        self.clock = self.clock.max(clock);
    }

    /// `enqueue_task_fair` for a token: `update_load_avg(cfs_rq, se, UPDATE_TG | DO_ATTACH)`
    /// (a migrated token arrives with `last_update_time == 0` and is attached),
    /// `util_est_enqueue`, then the token joins the head of `cfs_tasks`.
    pub fn enqueue(&mut self, p: TaskId, mut t: Token, ue: UtilEstMode) {
        util_est_enqueue(&mut self.cfs.avg, &t.avg, ue);
        let se_inp = token_se(false, false);
        let flags = UpdateFlags {
            update_tg: true,
            do_attach: true,
            ..UpdateFlags::default()
        };
        let inp = self.cfs_inputs();
        self.update_token_load_avg(inp, &mut t, se_inp, flags, ue);
        self.tokens.insert(p, t);
        self.cfs_tasks.insert(0, p);
    }

    /// `dequeue_task_fair` for a token: `util_est_dequeue`, `update_load_avg(cfs_rq, se,
    /// UPDATE_TG)` with `DO_DETACH` when it migrates, and `util_est_update` when it goes to
    /// sleep. Returns the token, or `None` if it is not queued here.
    pub fn dequeue(&mut self, p: TaskId, migrating: bool, ue: UtilEstMode) -> Option<Token> {
        let running = self.curr == Some(p);
        let inp = self.cfs_inputs();
        let mut t = self.tokens.remove(&p)?;
        util_est_dequeue(&mut self.cfs.avg, &t.avg, ue);
        let se_inp = token_se(true, running);
        let flags = UpdateFlags {
            update_tg: true,
            do_detach: migrating,
            ..UpdateFlags::default()
        };
        self.update_token_load_avg(inp, &mut t, se_inp, flags, ue);
        if !migrating {
            util_est_update(&mut t.avg, true, 1024, ue);
        }
        if migrating {
            // set_task_cpu -> migrate_task_rq_fair: the new CPU attaches it afresh.
            t.avg.last_update_time = 0;
            t.migrations += 1;
        }
        if running {
            self.curr = None;
        }
        if let Some(i) = self.cfs_tasks.iter().position(|&q| q == p) {
            self.cfs_tasks.remove(i);
        }
        Some(t)
    }

    /// `ttwu_do_activate` for a woken token: enqueue it and fold the idle period into
    /// `avg_idle`. Returns whether the runqueue now runs two or more (`add_nr_running`
    /// then sets `rd->overloaded`).
    pub fn ttwu_do_activate(&mut self, p: TaskId, t: Token, ue: UtilEstMode) -> bool {
        self.enqueue(p, t, ue);
        fold_idle_time(
            &mut self.avg_idle,
            &mut self.idle_stamp,
            self.clock,
            self.max_idle_balance_cost,
        );
        self.nr_running() >= 2
    }

    /// `sched_balance_update_blocked_averages`: decay this CPU's signals.
    pub fn update_blocked(&mut self) {
        let inp = self.cfs_inputs();
        update_cfs_rq_load_avg(self.clock, &mut self.cfs, inp);
    }

    /// `set_next_entity` for the least recently run queued token: it becomes current and
    /// moves to the head of `cfs_tasks`.
    pub fn pick_next(&mut self, ue: UtilEstMode) -> Option<TaskId> {
        let p = *self.cfs_tasks.last()?;
        let inp = self.cfs_inputs();
        let mut t = self.tokens.remove(&p)?;
        let se_inp = token_se(true, false);
        self.update_token_load_avg(inp, &mut t, se_inp, UpdateFlags::default(), ue);
        t.exec_start = self.clock;
        self.tokens.insert(p, t);
        self.cfs_tasks.pop();
        self.cfs_tasks.insert(0, p);
        self.curr = Some(p);
        Some(p)
    }

    /// Every token this runqueue holds (queued, running or asleep on its timers).
    pub fn all_tokens(&self) -> impl Iterator<Item = TaskId> + '_ {
        self.tokens.keys().chain(self.asleep.keys()).copied()
    }
}

/// One CPU's runqueue: published lockless fields and the lock.
#[derive(Debug)]
pub struct RaceRq {
    /// `rq->nr_running`.
    pub nr_running: AtomicU32,
    /// `idle_cpu()`: no current token and nothing queued.
    pub idle: AtomicBool,
    /// `cfs_rq->avg.load_avg`.
    pub load_avg: AtomicU64,
    /// `cfs_rq->avg.runnable_avg`.
    pub runnable_avg: AtomicU64,
    /// `cfs_rq->avg.util_avg`.
    pub util_avg: AtomicU64,
    /// `cfs_rq->avg.util_est`.
    pub util_est: AtomicU64,
    /// `rq->avg_idle`, which the CPU's own newidle balance reads.
    pub avg_idle: AtomicU64,
    /// `rq->max_idle_balance_cost`.
    pub max_idle_balance_cost: AtomicU64,
    /// `rq->cpu_capacity` (no RT or IRQ pressure in race mode).
    pub cpu_capacity: u64,
    /// Acquisitions of this lock whose try-lock failed (the holder was another CPU).
    pub contended: AtomicU64,
    /// The lock.
    inner: Mutex<RqInner>,
}

/// A held runqueue lock; dropping it publishes the lockless fields, then unlocks.
pub struct Locked<'a> {
    rq: &'a RaceRq,
    g: MutexGuard<'a, RqInner>,
}

impl std::ops::Deref for Locked<'_> {
    type Target = RqInner;
    fn deref(&self) -> &RqInner {
        &self.g
    }
}

impl std::ops::DerefMut for Locked<'_> {
    fn deref_mut(&mut self) -> &mut RqInner {
        &mut self.g
    }
}

impl Drop for Locked<'_> {
    fn drop(&mut self) {
        let g = &self.g;
        let rq = self.rq;
        let a = &g.cfs.avg;
        rq.nr_running.store(g.nr_running(), Ordering::Relaxed);
        rq.idle
            .store(g.curr.is_none() && g.tokens.is_empty(), Ordering::Relaxed);
        rq.load_avg.store(a.load_avg, Ordering::Relaxed);
        rq.runnable_avg.store(a.runnable_avg, Ordering::Relaxed);
        rq.util_avg.store(a.util_avg, Ordering::Relaxed);
        rq.util_est.store(u64::from(a.util_est), Ordering::Relaxed);
        rq.avg_idle.store(g.avg_idle, Ordering::Relaxed);
        rq.max_idle_balance_cost
            .store(g.max_idle_balance_cost, Ordering::Relaxed);
    }
}

impl RaceRq {
    /// An empty runqueue of a CPU with `capacity`, its lock free.
    pub fn new(capacity: u64, inner: RqInner) -> RaceRq {
        let rq = RaceRq {
            nr_running: AtomicU32::new(0),
            idle: AtomicBool::new(true),
            load_avg: AtomicU64::new(0),
            runnable_avg: AtomicU64::new(0),
            util_avg: AtomicU64::new(0),
            util_est: AtomicU64::new(0),
            avg_idle: AtomicU64::new(inner.avg_idle),
            max_idle_balance_cost: AtomicU64::new(inner.max_idle_balance_cost),
            cpu_capacity: capacity,
            contended: AtomicU64::new(0),
            inner: Mutex::new(inner),
        };
        drop(rq.lock());
        rq
    }

    /// `rq_lock(rq)`: a try-lock first, counted in `contended` when another CPU holds it,
    /// then a blocking lock. A poisoned lock (a panicked holder) is taken over: the state
    /// it guards is checked for conservation at the end anyway.
    pub fn lock(&self) -> Locked<'_> {
        let g = match self.inner.try_lock() {
            Ok(g) => g,
            Err(TryLockError::Poisoned(e)) => e.into_inner(),
            Err(TryLockError::WouldBlock) => {
                self.contended.fetch_add(1, Ordering::Relaxed);
                self.inner.lock().unwrap_or_else(|e| e.into_inner())
            }
        };
        Locked { rq: self, g }
    }

    /// The locked state, once every thread has stopped.
    pub fn into_inner(self) -> RqInner {
        self.inner.into_inner().unwrap_or_else(|e| e.into_inner())
    }
}
