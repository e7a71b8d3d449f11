//! The run's tracer: the world's hooks that log the scheduler's tracepoints
//! (`sched_switch`, `sched_waking`, ...) and fairsim's balancing events into a
//! [`Trace`], and the per-domain newidle series the plots draw.
//!
//! The tracer only observes: it draws no random number, queues no event and changes no
//! state the run reads, so a traced run makes the same decisions, byte for byte, as an
//! untraced one. Each hook is a no-op without a tracer.
//!
//! Balances are read from the schedstat counters of the balancing CPU's domains, as
//! `/proc/schedstat` would show them before and after: a newidle step that grows a
//! domain's `lb_count` began a balance at that level, and what its `lb_sg_scan` and
//! `lb_gained` grew by is what that balance scanned and pulled. A periodic balance
//! softirq balances every due level in one stretch of kernel time; its levels are laid
//! out one after the other over that stretch, each taking a share in proportion to the
//! groups it scanned plus one (the cost model charges per group, so this is how its
//! charged time divides), and the nohz idle balance's levels on behalf of other CPUs
//! likewise.

use fairsim_balance::energy::tp::EasTracepoint;
use fairsim_balance::pelt_tp::PeltTracepoint;
use fairsim_balance::CpuIdleType;
use fairsim_trace::{
    BalanceKind, NewidleSeries, PrevState, TaskInfo, Trace, TraceConfig, TraceEvent, CPU_IDLE_EXIT,
};

use crate::event::Tid;

use super::trace_state::{pid_of, Counts, OpenBalance, Recorder, SeriesAcc};
use super::{RtState, World};

fn counts(world: &World, sd: usize, itype: CpuIdleType) -> Counts {
    let st = &world.sched.sd_stats[sd];
    let i = itype as usize;
    [st.lb_count[i], st.lb_sg_scan[i], st.lb_gained[i]]
}

fn diff(now: Counts, then: Counts) -> Counts {
    [
        now[0].saturating_sub(then[0]),
        now[1].saturating_sub(then[1]),
        now[2].saturating_sub(then[2]),
    ]
}

/// A periodic or nohz balance softirq's counters before it ran: per (CPU, domain), the
/// idle and busy counters.
pub(super) type SoftirqSnapshot = Vec<(usize, usize, Counts, Counts)>;

impl World {
    /// A recorder for the world's machine, tasks and window.
    pub(super) fn new_recorder(&self, cfg: &TraceConfig) -> Recorder {
        let n = self.cpus.len();
        let duration = self.config.duration;
        let warmup = if self.config.warmup < duration {
            self.config.warmup
        } else {
            0
        };
        // Without a window the trace has no end: kernel work decided before the run's end
        // may finish after it (a switch's stamp is when the CPU gets to it), and the
        // run's counters count it.
        let (start, end) = match cfg.window {
            Some((a, b)) => (a, b.min(duration)),
            None => (warmup, u64::MAX),
        };
        let topo = &self.sched.topo;
        let mut level_of = vec![0u32; topo.domains.len()];
        let mut levels: Vec<String> = Vec::new();
        for cpu in 0..n {
            for (i, sd) in topo.domains_of(cpu).enumerate() {
                level_of[sd] = i as u32;
                if levels.len() <= i {
                    levels.push(topo.domain(sd).name.to_string());
                }
            }
        }
        let series = cfg.series_bucket.map(|bucket| SeriesAcc {
            start: warmup,
            bucket: bucket.max(1),
            balances: vec![Vec::new(); levels.len()],
            groups: vec![Vec::new(); levels.len()],
        });
        Recorder {
            events: cfg.events,
            start,
            end,
            records: Vec::new(),
            max_records: usize::MAX,
            overflow_at: None,
            curr: vec![0; n],
            initial: vec![0; n],
            idle: vec![None; n],
            newidle: vec![None; n],
            snap: vec![[0; 3]; topo.domains.len()],
            level_of,
            levels,
            series,
            stopper_base: pid_of(self.tasks.len()),
            stopper_used: vec![false; n],
        }
    }

    /// Whether the tracer records scheduler events at `ts`.
    fn tracing_at(&self, ts: u64) -> bool {
        self.tracer.as_ref().is_some_and(|t| t.on(ts))
    }

    /// The tracepoint `prev_state` of a task leaving its CPU.
    fn prev_state(&self, t: Tid) -> PrevState {
        match self.tasks[t].state {
            RtState::Runnable => PrevState::Preempted,
            RtState::Exited if self.tasks[t].thread => PrevState::Dead,
            RtState::Exited => PrevState::Zombie,
            _ => PrevState::Sleeping,
        }
    }

    /// `sched_switch` on `cpu` at `ts` to `next`, when the task the trace shows on the CPU
    /// (`prev`, or the stopper that took the CPU from it) is another; an idle CPU leaves
    /// its idle state first (`cpu_idle` exit).
    pub(super) fn trace_switch(
        &mut self,
        cpu: usize,
        ts: u64,
        prev: Option<Tid>,
        next: Option<Tid>,
    ) {
        if self.tracer.is_none() {
            return;
        }
        let stopper = self
            .tracer
            .as_deref()
            .is_some_and(|tr| tr.curr[cpu] >= tr.stopper_base);
        let state = match prev {
            Some(p) => self.prev_state(p),
            // The stopper sleeps again once it has moved its task; the idle task is
            // always runnable.
            None if stopper => PrevState::Sleeping,
            None => PrevState::Running,
        };
        let Some(tr) = self.tracer.as_deref_mut() else {
            return;
        };
        if next.is_some() && tr.idle[cpu].is_some() {
            tr.idle[cpu] = None;
            tr.push(
                ts,
                cpu,
                TraceEvent::CpuIdle {
                    state: CPU_IDLE_EXIT,
                },
            );
        }
        let prev_pid = tr.curr[cpu];
        let next_pid = next.map_or(0, pid_of);
        if prev_pid == next_pid {
            return;
        }
        tr.push(
            ts,
            cpu,
            TraceEvent::Switch {
                prev: prev_pid,
                prev_state: state,
                next: next_pid,
            },
        );
        tr.curr[cpu] = next_pid;
        if ts < tr.start {
            tr.initial[cpu] = next_pid;
        }
    }

    /// The stopper (`migration/N`) takes `cpu` from its current task at `ts`.
    pub(super) fn trace_stopper(&mut self, cpu: usize, ts: u64) {
        let Some(tr) = self.tracer.as_deref_mut() else {
            return;
        };
        let stopper = tr.stopper_base + cpu as u32;
        tr.stopper_used[cpu] = true;
        let prev = tr.curr[cpu];
        tr.push(
            ts,
            cpu,
            TraceEvent::Switch {
                prev,
                prev_state: PrevState::Preempted,
                next: stopper,
            },
        );
        tr.curr[cpu] = stopper;
        if ts < tr.start {
            tr.initial[cpu] = stopper;
        }
    }

    /// `sched_waking` on the waker's `cpu`: `target_cpu` is the task's CPU before the
    /// wakeup chose one, as the tracepoint reads `task_cpu(p)` on entry.
    pub(super) fn trace_waking(&mut self, cpu: usize, ts: u64, x: Tid, prev_cpu: usize) {
        if !self.tracing_at(ts) {
            return;
        }
        if let Some(tr) = self.tracer.as_deref_mut() {
            tr.push(
                ts,
                cpu,
                TraceEvent::Waking {
                    pid: pid_of(x),
                    target_cpu: prev_cpu as u32,
                },
            );
        }
    }

    /// `sched_wakeup` on the CPU that ran `ttwu_do_activate`, or `sched_wakeup_new` on the
    /// forking CPU.
    pub(super) fn trace_wakeup(&mut self, cpu: usize, ts: u64, x: Tid, target: usize, new: bool) {
        if !self.tracing_at(ts) {
            return;
        }
        if let Some(tr) = self.tracer.as_deref_mut() {
            let (pid, target_cpu) = (pid_of(x), target as u32);
            let ev = if new {
                TraceEvent::WakeupNew { pid, target_cpu }
            } else {
                TraceEvent::Wakeup { pid, target_cpu }
            };
            tr.push(ts, cpu, ev);
        }
    }

    /// `sched_process_fork` of task `x` on `cpu`.
    pub(super) fn trace_fork(&mut self, cpu: usize, ts: u64, x: Tid) {
        if !self.tracing_at(ts) {
            return;
        }
        let parent = self.tasks[x].parent.map_or(0, pid_of);
        if let Some(tr) = self.tracer.as_deref_mut() {
            tr.push(
                ts,
                cpu,
                TraceEvent::Fork {
                    parent,
                    child: pid_of(x),
                },
            );
        }
    }

    /// `sched_process_exit` of task `x` on `cpu`.
    pub(super) fn trace_exit(&mut self, cpu: usize, ts: u64, x: Tid) {
        if let Some(tr) = self.tracer.as_deref_mut() {
            tr.push(ts, cpu, TraceEvent::Exit { pid: pid_of(x) });
        }
    }

    /// `cpu_idle` entry into `state` on `cpu` at `ts`.
    pub(super) fn trace_idle_enter(&mut self, cpu: usize, ts: u64, state: u32) {
        if let Some(tr) = self.tracer.as_deref_mut() {
            if tr.idle[cpu].is_some() {
                tr.push(
                    ts,
                    cpu,
                    TraceEvent::CpuIdle {
                        state: CPU_IDLE_EXIT,
                    },
                );
            }
            tr.idle[cpu] = Some(state);
            tr.push(ts, cpu, TraceEvent::CpuIdle { state });
        }
    }

    /// `cpu_frequency` on `cpu` at `ts`: its policy's new clock took effect
    /// (`cpufreq_notify_transition`'s `CPUFREQ_POSTCHANGE`, once per CPU of the policy).
    pub(super) fn trace_frequency(&mut self, cpu: usize, ts: u64, khz: u32) {
        if let Some(tr) = self.tracer.as_deref_mut() {
            tr.push(ts, cpu, TraceEvent::CpuFrequency { khz });
        }
    }

    /// `cpu_idle` exit on `cpu` at `ts`, if the CPU is in an idle state.
    pub(super) fn trace_idle_exit(&mut self, cpu: usize, ts: u64) {
        if let Some(tr) = self.tracer.as_deref_mut() {
            if tr.idle[cpu].take().is_some() {
                tr.push(
                    ts,
                    cpu,
                    TraceEvent::CpuIdle {
                        state: CPU_IDLE_EXIT,
                    },
                );
            }
        }
    }

    /// `cpu` spun on `rq`'s lock from `ts` for `dur` ns.
    pub(super) fn trace_spin(&mut self, cpu: usize, ts: u64, rq: usize, dur: u64) {
        if let Some(tr) = self.tracer.as_deref_mut() {
            tr.push(ts, cpu, TraceEvent::LockSpin { rq: rq as u32, dur });
        }
    }

    /// `sched_migrate_task` for every `set_task_cpu` the scheduler made since the last
    /// call, logged on the destination CPU at `ts`.
    pub(super) fn trace_migrations(&mut self, ts: u64) {
        let Some(log) = self.sched.migration_log.as_mut() else {
            return;
        };
        if log.is_empty() {
            return;
        }
        let moves = std::mem::take(log);
        if let Some(tr) = self.tracer.as_deref_mut() {
            for (sid, from, to) in moves {
                let pid = pid_of(self.by_sched_id[sid]);
                tr.push(
                    ts,
                    to,
                    TraceEvent::Migrate {
                        pid,
                        orig_cpu: from as u32,
                        dest_cpu: to as u32,
                    },
                );
            }
        }
    }

    /// The EAS tracepoints the scheduler logged since the last call
    /// ([`fairsim_balance::energy::tp`]), at `ts` (the event that made them) on the CPU
    /// that made each.
    pub(super) fn trace_eas(&mut self, ts: u64) {
        if !self.sched.has_eas_tracepoints() {
            return;
        }
        let tps = self.sched.take_eas_tracepoints();
        let Some(tr) = self.tracer.as_deref_mut() else {
            return;
        };
        for tp in tps {
            match tp {
                EasTracepoint::Overutilized {
                    cpu,
                    rd,
                    overutilized,
                } => tr.push(
                    ts,
                    cpu,
                    TraceEvent::Overutilized {
                        rd: rd as u32,
                        overutilized,
                    },
                ),
                EasTracepoint::Feec {
                    cpu,
                    p,
                    prev_cpu,
                    target,
                } => tr.push(
                    ts,
                    cpu,
                    TraceEvent::Feec {
                        pid: pid_of(self.by_sched_id[p]),
                        prev_cpu: prev_cpu as u32,
                        dst_cpu: target.map_or(-1, |c| c as i32),
                    },
                ),
            }
        }
    }

    /// The load-tracking tracepoints the scheduler logged since the last call
    /// ([`fairsim_balance::pelt_tp`], only under `--trace-events pelt`), at `ts` (the
    /// event that made them) on the CPU each is about. Their values are the kernel's
    /// `unsigned long`s, held as `u32` in a record (saturating: no signal of a run comes
    /// near 2^32).
    pub(super) fn trace_pelt(&mut self, ts: u64) {
        if !self.sched.pelt_tp.pending() {
            return;
        }
        let tps = self.sched.pelt_tp.take();
        let Some(tr) = self.tracer.as_deref_mut() else {
            return;
        };
        let w = |v: u64| u32::try_from(v).unwrap_or(u32::MAX);
        for (cpu, tp) in tps {
            let event = match tp {
                PeltTracepoint::Cfs { group, sig } => TraceEvent::PeltCfs {
                    group: group as u32,
                    load: w(sig.load),
                    runnable: w(sig.runnable),
                    util: w(sig.util),
                    update_time: sig.update_time,
                },
                PeltTracepoint::Se { task, sig } => TraceEvent::PeltSe {
                    pid: pid_of(self.by_sched_id[task]),
                    load: w(sig.load),
                    runnable: w(sig.runnable),
                    util: w(sig.util),
                    update_time: sig.update_time,
                },
                PeltTracepoint::UtilEstCfs {
                    group,
                    util,
                    util_est,
                } => TraceEvent::UtilEstCfs {
                    group: group as u32,
                    util: w(util),
                    util_est,
                },
                PeltTracepoint::UtilEstSe {
                    task,
                    util,
                    util_est,
                } => TraceEvent::UtilEstSe {
                    pid: pid_of(self.by_sched_id[task]),
                    util: w(util),
                    util_est,
                },
                PeltTracepoint::CpuCapacity {
                    capacity,
                    capacity_orig,
                    capacity_curr,
                } => TraceEvent::CpuCapacity {
                    capacity: w(capacity),
                    capacity_orig: w(capacity_orig),
                    capacity_curr: w(capacity_curr),
                },
            };
            tr.push(ts, cpu, event);
        }
    }

    /// A newidle step of `cpu` did its work in `[t0, t1)`: the levels whose `lb_count`
    /// grew began a balance, and what was scanned and pulled goes to the open one.
    pub(super) fn trace_newidle_progress(&mut self, cpu: usize, t0: u64, t1: u64) {
        // The counters and the tracer are separate fields: read one, update the other,
        // with nothing allocated per step.
        let Some(tr) = self.tracer.as_deref_mut() else {
            return;
        };
        let newly = CpuIdleType::NewlyIdle as usize;
        for sd in self.sched.topo.domains_of(cpu) {
            let st = &self.sched.sd_stats[sd];
            let cur = [
                st.lb_count[newly],
                st.lb_sg_scan[newly],
                st.lb_gained[newly],
            ];
            let d = diff(cur, tr.snap[sd]);
            tr.snap[sd] = cur;
            if d == [0; 3] {
                continue;
            }
            let level = tr.level_of[sd];
            if let Some(s) = &mut tr.series {
                s.add(level as usize, t0, d[0], d[1]);
            }
            if d[0] > 0 {
                // A new level's balance began: the previous one ends here.
                tr.close_newidle(cpu);
            }
            let open = tr.newidle[cpu].get_or_insert(OpenBalance {
                level,
                start: t0,
                end: t1,
                groups: 0,
                pulled: 0,
            });
            open.groups += d[1];
            open.pulled += d[2];
        }
        if let Some(open) = &mut tr.newidle[cpu] {
            open.end = open.end.max(t1);
        }
    }

    /// The newidle balance of `cpu` is over.
    pub(super) fn trace_newidle_end(&mut self, cpu: usize) {
        if let Some(tr) = self.tracer.as_deref_mut() {
            tr.close_newidle(cpu);
        }
    }

    /// The counters a balance softirq on `cpu` at `ts` may grow, before it runs: its own
    /// domains, or every CPU's when it balances for the nohz idle CPUs. `None` when the
    /// tracer does not record at `ts`.
    pub(super) fn trace_softirq_before(
        &self,
        cpu: usize,
        ts: u64,
        nohz: bool,
    ) -> Option<SoftirqSnapshot> {
        if !self.tracing_at(ts) {
            return None;
        }
        let cpus: Vec<usize> = if nohz {
            (0..self.cpus.len()).collect()
        } else {
            vec![cpu]
        };
        let mut snap = Vec::new();
        for c in cpus {
            for sd in self.sched.topo.domains_of(c) {
                snap.push((
                    c,
                    sd,
                    counts(self, sd, CpuIdleType::Idle),
                    counts(self, sd, CpuIdleType::NotIdle),
                ));
            }
        }
        Some(snap)
    }

    /// The balance softirq of `cpu` did its work in `[t0, t1)`: one balance record per
    /// domain whose counters grew, laid out over that time (see the module doc).
    pub(super) fn trace_softirq_after(
        &mut self,
        cpu: usize,
        t0: u64,
        t1: u64,
        before: SoftirqSnapshot,
    ) {
        let mut done: Vec<(BalanceKind, u32, u64, u64)> = Vec::new();
        for (c, sd, idle, busy) in before {
            let di = diff(counts(self, sd, CpuIdleType::Idle), idle);
            let db = diff(counts(self, sd, CpuIdleType::NotIdle), busy);
            let n = di[0] + db[0];
            if n == 0 {
                continue;
            }
            let kind = if c == cpu {
                BalanceKind::Periodic
            } else {
                BalanceKind::NohzIdle
            };
            let Some(tr) = self.tracer.as_deref() else {
                return;
            };
            done.push((kind, tr.level_of[sd], di[1] + db[1], di[2] + db[2]));
        }
        let Some(tr) = self.tracer.as_deref_mut() else {
            return;
        };
        let weight: u64 = done.iter().map(|d| d.2 + 1).sum();
        let span = t1.saturating_sub(t0);
        let mut at = t0;
        let mut acc = 0u64;
        for (kind, level, groups, pulled) in done {
            acc += groups + 1;
            let until = t0 + (span as u128 * acc as u128 / weight.max(1) as u128) as u64;
            tr.push(
                at,
                cpu,
                TraceEvent::Balance {
                    kind,
                    level,
                    groups: groups as u32,
                    pulled: pulled as u32,
                    dur: until - at,
                },
            );
            at = until;
        }
    }

    /// The window opened and the schedstat counters restarted from zero: the tracer's
    /// view of them follows.
    pub(super) fn trace_window_reset(&mut self) {
        if let Some(tr) = self.tracer.as_deref_mut() {
            for s in &mut tr.snap {
                *s = [0; 3];
            }
        }
    }

    /// The tasks as traces name them: pid, thread group, parent process, comm, prio; and
    /// the stoppers that ran.
    fn trace_tasks(&self, tr: &Recorder) -> Vec<TaskInfo> {
        let tgid = |mut t: Tid| {
            while self.tasks[t].thread {
                match self.tasks[t].parent {
                    Some(p) => t = p,
                    None => break,
                }
            }
            t
        };
        let mut out = Vec::new();
        for (t, rt) in self.tasks.iter().enumerate() {
            if rt.sched_id.is_none() {
                continue;
            }
            let leader = tgid(t);
            let ppid = self.tasks[leader].parent.map_or(0, |p| pid_of(tgid(p)));
            let mut comm = rt.name.clone();
            while comm.len() > 15 {
                comm.pop();
            }
            out.push(TaskInfo {
                pid: pid_of(t),
                tgid: pid_of(leader),
                ppid,
                comm,
                prio: 120 + rt.nice,
            });
        }
        for (cpu, used) in tr.stopper_used.iter().enumerate() {
            if *used {
                let pid = tr.stopper_base + cpu as u32;
                out.push(TaskInfo {
                    pid,
                    tgid: pid,
                    ppid: 2,
                    comm: format!("migration/{cpu}"),
                    prio: 0,
                });
            }
        }
        out
    }

    /// Takes the trace recorded so far (records sorted by time, ties in logging order),
    /// or `None` without a tracer or when it recorded no events. The records move out
    /// (a run's trace can be most of its memory); a second call returns an empty trace.
    pub fn take_trace(&mut self) -> Option<Trace> {
        let tasks = {
            let tr = self.tracer.as_deref()?;
            if !tr.events {
                return None;
            }
            self.trace_tasks(tr)
        };
        let now = self.now.0;
        let tr = self.tracer.as_deref_mut()?;
        let mut records = std::mem::take(&mut tr.records);
        // A stable sort: ties keep the order in which they were logged.
        records.sort_by_key(|r| r.ts);
        // The window ends at its given end, or (without one) where the run stopped, or
        // after the last record when kernel work stamped after the run's end was traced.
        let last = records.last().map_or(0, |r| r.ts + 1);
        Some(Trace {
            cpus: self.cpus.len() as u32,
            window: (tr.start, last.max(tr.end.min(now)).max(tr.start)),
            tasks,
            levels: tr.levels.clone(),
            root_domains: self
                .sched
                .topo
                .root_domains
                .iter()
                .map(|m| m.to_hex())
                .collect(),
            cgroups: {
                let groups = self.sched.task_groups();
                if groups.active() {
                    groups.tgs.iter().map(|t| t.path.clone()).collect()
                } else {
                    Vec::new()
                }
            },
            initial: tr.initial.clone(),
            records,
        })
    }

    /// The per-level newidle series, when the run kept one.
    pub fn newidle_series(&self) -> Option<NewidleSeries> {
        let tr = self.tracer.as_deref()?;
        let s = tr.series.as_ref()?;
        let buckets = s
            .balances
            .iter()
            .map(Vec::len)
            .max()
            .unwrap_or(0)
            .max((self.now.0.saturating_sub(s.start)).div_ceil(s.bucket) as usize);
        let pad = |v: &Vec<Vec<u64>>| -> Vec<Vec<u64>> {
            v.iter()
                .map(|l| {
                    let mut l = l.clone();
                    l.resize(buckets, 0);
                    l
                })
                .collect()
        };
        Some(NewidleSeries {
            start_ns: s.start,
            bucket_ns: s.bucket,
            levels: tr.levels.clone(),
            balances: pad(&s.balances),
            groups: pad(&s.groups),
        })
    }
}
