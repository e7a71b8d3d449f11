//! fairsim's own Perfetto tracks and what goes on them, planned from a trace's records
//! before the writer starts: every track (with its parent), and every slice begin, slice
//! end and counter value in time order.
//!
//! # Tracks
//!
//! Listed in this order, each a child of the "fairsim" track unless said otherwise:
//!
//! - "root domain N overutilized": each stretch during which the root domain was
//!   overutilized, from the `sched_overutilized` record that set the flag to the next
//!   that cleared it (or the trace's end); records that write the value the flag
//!   already has open nothing.
//! - Per task group with bandwidth records, a parent track "cgroup PATH" holding
//!   "cgroup PATH pool", a counter of the group's pool (`cfs_b->runtime`, ns) with a
//!   value at each refill, throttle and unthrottle (the slices runqueues take between
//!   them are not sampled, so the counter drops to 0 at the first throttle of a period
//!   rather than slice by slice), and "cgroup PATH cpu N throttled", one per CPU: a
//!   slice from each throttle of the group's runqueue on that CPU to its unthrottle (or
//!   the trace's end; from the trace's start when the runqueue was throttled before
//!   it). A runqueue is never throttled twice at once, so its track needs no overflow
//!   lanes; one track per group would hold the runqueues' stretches overlapping without
//!   nesting, which Perfetto would draw as parents and children that are not.
//! - Per CPU: "cpu N balancing" (a balance from `ts` to `ts + dur`), "cpu N rq lock
//!   spins", and "cpu N EAS placements" (zero-length slices, one per
//!   `find_energy_efficient_cpu` decision, on the waking CPU).
//!
//! Slices on one track must nest. A record that starts inside an open slice of its
//! track but would end after it is not clipped (its times stay true): it goes to the
//! first overflow track, "cpu N balancing (overlap 1)", where it nests, or to a further
//! one ("(overlap 2)", ...).

use std::collections::BTreeMap;

use super::record::{Trace, TraceEvent};

/// Whom a track belongs to; the derived order is the order of the tracks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Owner {
    /// A root domain, by index.
    RootDomain(u32),
    /// A task group (index into [`Trace::cgroups`]): the whole group (`cpu` = `None`)
    /// or its runqueue on one CPU.
    Cgroup { group: u32, cpu: Option<u32> },
    /// A CPU.
    Cpu(u32),
}

/// What a track holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum TrackKind {
    /// A root domain's overutilized stretches.
    Overutilized,
    /// A task group's parent track, with nothing of its own.
    Group,
    /// A task group's pool, a counter.
    Pool,
    /// A group runqueue's throttled stretches.
    Throttled,
    /// A CPU's balances.
    Balance,
    /// A CPU's spins on other runqueues' locks.
    Spin,
    /// `find_energy_efficient_cpu` decisions, zero-length slices on the waking CPU.
    Feec,
}

/// One track: its owner and kind, lane 0 or an overflow lane, and its parent (an index
/// into [`TrackPlan::tracks`]; `None` for a child of the "fairsim" track).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct PlanTrack {
    pub(super) owner: Owner,
    pub(super) kind: TrackKind,
    pub(super) lane: u32,
    pub(super) parent: Option<usize>,
}

impl PlanTrack {
    /// The track's name in the Perfetto UI.
    pub(super) fn name(&self, trace: &Trace) -> String {
        let base = match (self.owner, self.kind) {
            (Owner::RootDomain(rd), _) => format!("root domain {rd} overutilized"),
            (Owner::Cgroup { group, .. }, TrackKind::Group) => {
                format!("cgroup {}", trace.cgroup(group))
            }
            (Owner::Cgroup { group, .. }, TrackKind::Pool) => {
                format!("cgroup {} pool", trace.cgroup(group))
            }
            (Owner::Cgroup { group, cpu }, _) => format!(
                "cgroup {} cpu {} throttled",
                trace.cgroup(group),
                cpu.unwrap_or(0)
            ),
            (Owner::Cpu(cpu), kind) => {
                let what = match kind {
                    TrackKind::Spin => "rq lock spins",
                    TrackKind::Feec => "EAS placements",
                    _ => "balancing",
                };
                format!("cpu {cpu} {what}")
            }
        };
        match self.lane {
            0 => base,
            n => format!("{base} (overlap {n})"),
        }
    }

    /// Whether the track is a counter rather than slices.
    pub(super) fn is_counter(&self) -> bool {
        self.kind == TrackKind::Pool
    }
}

/// What happens on a track at a time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum What {
    /// A slice begins, named and annotated from record `rec`; a throttled stretch also
    /// carries what the record that ends it (`closed_by`) says.
    Begin {
        rec: usize,
        closed_by: Option<usize>,
    },
    /// The innermost open slice ends.
    End,
    /// The counter takes the value record `rec` carries.
    Counter(usize),
}

/// One planned track event.
#[derive(Debug, Clone)]
pub(super) struct PlanEvent {
    pub(super) ts: u64,
    pub(super) track: usize,
    pub(super) what: What,
}

/// Every track and every track event, in time order (per track in nesting order).
pub(super) struct TrackPlan {
    pub(super) tracks: Vec<PlanTrack>,
    pub(super) events: Vec<PlanEvent>,
}

/// A track being filled: the ends of its open slices (innermost last) and its events
/// in their order on the track.
#[derive(Default)]
struct Lane {
    open: Vec<u64>,
    events: Vec<(u64, What)>,
}

impl Lane {
    /// Closes the open slices that end by `ts`, innermost first.
    fn close_until(&mut self, ts: u64) {
        while let Some(&end) = self.open.last().filter(|&&e| e <= ts) {
            self.events.push((end, What::End));
            self.open.pop();
        }
    }

    /// Whether a slice ending at `end` nests in the innermost open slice.
    fn fits(&self, end: u64) -> bool {
        self.open.last().is_none_or(|&top| end <= top)
    }
}

/// When each overutilized stretch that a record opens ends: the next record of its
/// root domain that writes 0, or the trace's end. Records that write 1 into a domain
/// already overutilized, and those that write 0, open nothing (`None`).
fn overutilized_ends(trace: &Trace) -> Vec<Option<u64>> {
    let mut ends = vec![None; trace.records.len()];
    let mut open: BTreeMap<u32, usize> = BTreeMap::new();
    for (i, rec) in trace.records.iter().enumerate() {
        if let TraceEvent::Overutilized { rd, overutilized } = rec.event {
            if overutilized {
                open.entry(rd).or_insert(i);
            } else if let Some(j) = open.remove(&rd) {
                ends[j] = Some(rec.ts);
            }
        }
    }
    for j in open.into_values() {
        ends[j] = Some(trace.window.1.max(trace.records[j].ts));
    }
    ends
}

/// A group runqueue's throttled stretch as the record that owns it sees it.
#[derive(Debug, Clone, Copy)]
struct Stretch {
    start: u64,
    end: u64,
    closed_by: Option<usize>,
}

/// The throttled stretch each record owns: a throttle owns the stretch up to its
/// runqueue's next unthrottle (or the trace's end); an unthrottle with no throttle
/// before it in the trace owns the stretch from the trace's start, the runqueue having
/// been throttled before. Other records own none.
fn throttle_stretches(trace: &Trace) -> Vec<Option<Stretch>> {
    let mut out = vec![None; trace.records.len()];
    let mut open: BTreeMap<(u32, u32), usize> = BTreeMap::new();
    for (i, rec) in trace.records.iter().enumerate() {
        match rec.event {
            TraceEvent::CfsThrottle { group, .. } => {
                open.insert((group, rec.cpu), i);
            }
            TraceEvent::CfsUnthrottle { group, .. } => match open.remove(&(group, rec.cpu)) {
                Some(j) => {
                    out[j] = Some(Stretch {
                        start: trace.records[j].ts,
                        end: rec.ts,
                        closed_by: Some(i),
                    });
                }
                None => {
                    out[i] = Some(Stretch {
                        start: trace.window.0.min(rec.ts),
                        end: rec.ts,
                        closed_by: Some(i),
                    });
                }
            },
            _ => {}
        }
    }
    for j in open.into_values() {
        let ts = trace.records[j].ts;
        out[j] = Some(Stretch {
            start: ts,
            end: trace.window.1.max(ts),
            closed_by: None,
        });
    }
    out
}

/// The group of a record that samples a group's pool.
fn pool_sample(e: &TraceEvent) -> Option<u32> {
    match *e {
        TraceEvent::CfsThrottle { group, .. }
        | TraceEvent::CfsUnthrottle { group, .. }
        | TraceEvent::CfsRefill { group, .. } => Some(group),
        _ => None,
    }
}

impl TrackPlan {
    /// Plans the tracks and their events of `trace`'s fairsim records.
    pub(super) fn new(trace: &Trace) -> Self {
        let mut lanes: BTreeMap<(Owner, TrackKind), Vec<Lane>> = Default::default();
        let ou_ends = overutilized_ends(trace);
        let stretches = throttle_stretches(trace);
        for (i, rec) in trace.records.iter().enumerate() {
            if let Some(group) = pool_sample(&rec.event) {
                let owner = Owner::Cgroup { group, cpu: None };
                let lane = &mut lanes.entry((owner, TrackKind::Pool)).or_default();
                if lane.is_empty() {
                    lane.push(Lane::default());
                }
                lane[0].events.push((rec.ts, What::Counter(i)));
            }
            let (kind, owner, start, end, closed_by) = match rec.event {
                TraceEvent::Balance { dur, .. } => (
                    TrackKind::Balance,
                    Owner::Cpu(rec.cpu),
                    rec.ts,
                    rec.ts.saturating_add(dur),
                    None,
                ),
                TraceEvent::LockSpin { dur, .. } => (
                    TrackKind::Spin,
                    Owner::Cpu(rec.cpu),
                    rec.ts,
                    rec.ts.saturating_add(dur),
                    None,
                ),
                TraceEvent::Feec { .. } => {
                    (TrackKind::Feec, Owner::Cpu(rec.cpu), rec.ts, rec.ts, None)
                }
                TraceEvent::Overutilized { rd, .. } => match ou_ends[i] {
                    Some(end) => (
                        TrackKind::Overutilized,
                        Owner::RootDomain(rd),
                        rec.ts,
                        end,
                        None,
                    ),
                    None => continue,
                },
                TraceEvent::CfsThrottle { group, .. } | TraceEvent::CfsUnthrottle { group, .. } => {
                    match stretches[i] {
                        Some(s) => (
                            TrackKind::Throttled,
                            Owner::Cgroup {
                                group,
                                cpu: Some(rec.cpu),
                            },
                            s.start,
                            s.end,
                            s.closed_by,
                        ),
                        None => continue,
                    }
                }
                _ => continue,
            };
            let owner_lanes = lanes.entry((owner, kind)).or_default();
            let mut chosen = None;
            for (n, lane) in owner_lanes.iter_mut().enumerate() {
                lane.close_until(start);
                if lane.fits(end) {
                    chosen = Some(n);
                    break;
                }
            }
            let n = chosen.unwrap_or_else(|| {
                owner_lanes.push(Lane::default());
                owner_lanes.len() - 1
            });
            let lane = &mut owner_lanes[n];
            lane.events.push((start, What::Begin { rec: i, closed_by }));
            lane.open.push(end);
        }
        let mut tracks: Vec<PlanTrack> = Vec::new();
        let mut events = Vec::new();
        let mut group_parent: Option<(u32, usize)> = None;
        for ((owner, kind), owner_lanes) in lanes {
            // A task group's tracks go under its own parent, made before the first.
            let parent = match owner {
                Owner::Cgroup { group, .. } => match group_parent {
                    Some((g, p)) if g == group => Some(p),
                    _ => {
                        tracks.push(PlanTrack {
                            owner: Owner::Cgroup { group, cpu: None },
                            kind: TrackKind::Group,
                            lane: 0,
                            parent: None,
                        });
                        group_parent = Some((group, tracks.len() - 1));
                        Some(tracks.len() - 1)
                    }
                },
                _ => None,
            };
            for (n, mut lane) in owner_lanes.into_iter().enumerate() {
                lane.close_until(u64::MAX);
                let track = tracks.len();
                tracks.push(PlanTrack {
                    owner,
                    kind,
                    lane: n as u32,
                    parent,
                });
                events.extend(lane.events.into_iter().map(|(ts, what)| PlanEvent {
                    ts,
                    track,
                    what,
                }));
            }
        }
        // Each track's events are already in time and nesting order; a stable sort by time
        // interleaves the tracks without reordering any one of them.
        events.sort_by_key(|e| e.ts);
        Self { tracks, events }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Record;

    fn rec(ts: u64, cpu: u32, event: TraceEvent) -> Record {
        Record { ts, cpu, event }
    }

    #[test]
    fn throttled_stretches_open_at_the_window_start_and_close_at_its_end() {
        let throttle = TraceEvent::CfsThrottle {
            group: 1,
            h_nr_queued: 1,
            runtime_remaining: -5,
            pool: 0,
        };
        let unthrottle = TraceEvent::CfsUnthrottle {
            group: 1,
            h_nr_queued: 1,
            throttled_ns: 30,
            pool: 70,
        };
        let trace = Trace {
            cpus: 2,
            window: (100, 200),
            tasks: vec![],
            levels: vec![],
            root_domains: vec![],
            cgroups: vec!["/".into(), "/lim".into()],
            initial: vec![0, 0],
            records: vec![
                // CPU 1 was throttled before the window opened.
                rec(120, 1, unthrottle.clone()),
                rec(130, 0, throttle.clone()),
                rec(150, 0, unthrottle),
                // CPU 1 is still throttled when the window closes.
                rec(160, 1, throttle),
            ],
        };
        let plan = TrackPlan::new(&trace);
        let names: Vec<String> = plan.tracks.iter().map(|t| t.name(&trace)).collect();
        assert_eq!(
            names,
            [
                "cgroup /lim",
                "cgroup /lim pool",
                "cgroup /lim cpu 0 throttled",
                "cgroup /lim cpu 1 throttled"
            ]
        );
        assert_eq!(plan.tracks[3].parent, Some(0));
        let on = |track: usize| -> Vec<(u64, bool)> {
            plan.events
                .iter()
                .filter(|e| e.track == track)
                .map(|e| (e.ts, matches!(e.what, What::Begin { .. })))
                .collect()
        };
        assert_eq!(on(1).len(), 4, "a pool value per record");
        assert_eq!(on(2), [(130, true), (150, false)]);
        assert_eq!(
            on(3),
            [(100, true), (120, false), (160, true), (200, false)]
        );
        // The stretch opened by the window carries its unthrottle's count.
        let closed: Vec<Option<usize>> = plan
            .events
            .iter()
            .filter_map(|e| match e.what {
                What::Begin { closed_by, .. } if e.track == 3 => Some(closed_by),
                _ => None,
            })
            .collect();
        assert_eq!(closed, [Some(0), None]);
    }
}
