//! CPU frequency's state in the engine: the governors' kthreads, the timeline of
//! transitions and the busy time per OPP. `cpufreq` drives it; it lives apart so that
//! `World`'s fields can name it without depending on that code.

use fairsim_balance::cpufreq::Cpufreq;

/// The most transitions the timeline keeps; later ones are counted as dropped, so that a
/// long run's memory stays bounded. 65,536 entries of 16 bytes are 1 MiB.
pub const MAX_TIMELINE: usize = 1 << 16;

/// Bytes of one timeline entry (time, policy, kHz).
pub const TIMELINE_ENTRY_BYTES: u64 = 16;

/// One frequency change as the timeline keeps it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FreqChange {
    /// When it took effect (engine ns).
    pub at: u64,
    /// The policy (its index, in order of first CPU).
    pub policy: u32,
    /// The new frequency, kHz.
    pub khz: u32,
}

/// The engine's cpufreq state: the governors' kthreads, the timeline and the busy time
/// per OPP.
#[derive(Debug, Clone, Default)]
pub struct CpufreqRt {
    /// Per policy: when its kthread's current work (the driver's transition) ends.
    pub(super) busy_until: Vec<u64>,
    /// Per policy: a work is queued on its kthread and has not started.
    pub(super) work_queued: Vec<bool>,
    /// Transitions in the window, in time order, at most [`MAX_TIMELINE`].
    pub timeline: Vec<FreqChange>,
    /// Transitions in the window the timeline had no room for.
    pub timeline_dropped: u64,
    /// Each policy's frequency when the window opened.
    pub window_khz: Vec<u32>,
    /// Per CPU: its busy time (task plus overhead, ns) when last accounted.
    pub(super) busy_snap: Vec<u64>,
    /// Per CPU and OPP index of its policy: busy ns in the window at that OPP.
    pub opp_busy_ns: Vec<Vec<u64>>,
}

impl CpufreqRt {
    /// The state of a run on `cf`'s policies over `ncpus` CPUs.
    pub fn new(cf: &Cpufreq, ncpus: usize) -> CpufreqRt {
        let np = cf.policies.len();
        CpufreqRt {
            busy_until: vec![0; np],
            work_queued: vec![false; np],
            timeline: Vec::new(),
            timeline_dropped: 0,
            window_khz: cf.policies.iter().map(|p| p.cur).collect(),
            busy_snap: vec![0; ncpus],
            opp_busy_ns: (0..ncpus)
                .map(|c| vec![0; cf.policies[cf.policy_of[c]].table.freqs.len()])
                .collect(),
        }
    }
}
