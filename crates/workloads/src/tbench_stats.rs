//! tbench's counters: what dbench 4.0's parent process reads from its clients' shared
//! `child_struct`s once a second (`sig_alarm`), kept per second of the run so that the
//! report can replay those reads.
//!
//! The parent's clock starts when it releases the clients (`tv_start`); its alarm fires
//! every second (`PRINT_FREQ`). Each firing is a little over a whole second after the
//! last, so the tests `t > warmup` and `t > timelimit` already hold at the tick of that
//! whole second: warm-up ends at tick `warmup` (the counters restart there, `tv_start`
//! too), the clients are told to stop at tick `warmup + timelimit`, and the throughput
//! tbench prints is the one computed at the tick before, over `timelimit - 1` seconds.
//! fairsim assumes every client has done some I/O by the end of warm-up (tbench waits
//! for that; at thousands of operations per second each, it holds).

use super::tbench_mix::LoadOp;
use fairsim_des::time::SEC;

/// One load-file operation's latency counters (`struct op`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct OpStat {
    /// Completed operations.
    pub count: u64,
    /// Their summed latency, ns.
    pub total_ns: u64,
    /// The largest, ns.
    pub max_ns: u64,
}

/// tbench's counters over a run, and the workload model its clients call to draw their
/// load-file lines.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TbenchRt {
    /// Warm-up, whole seconds (`timelimit / 5`).
    pub warmup: u64,
    /// `-t`, whole seconds.
    pub timelimit: u64,
    /// Counted bytes (WriteX and ReadX sizes) of operations completed in second `s` of the
    /// run (from the release).
    pub bytes: Vec<u64>,
    /// Load-file lines started in second `s` (`child->line`).
    pub lines: Vec<u64>,
    /// The longest time between two successive line starts of one client observed in
    /// second `s` (`nb_target_rate`'s `max_latency`), ns.
    pub max_gap: Vec<u64>,
    /// Per operation, over the operations completed after warm-up.
    pub ops: [OpStat; LoadOp::COUNT],
    /// Cumulative line counts of the load-file mix's rows, for drawing lines.
    pub cum: Vec<u64>,
    /// Per task of the workload (index: task id less the workload's first task): the
    /// load-file line its current exchange carries out.
    pub exchanges: Vec<Exchange>,
}

/// A tbench client's current exchange: which load-file line, and since when.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Exchange {
    /// Index of the line's row in the load-file mix.
    pub row: usize,
    /// When the exchange started, ns after the release.
    pub started: Option<u64>,
}

impl TbenchRt {
    /// Counters for a run of `timelimit` seconds with its warm-up.
    pub fn new(timelimit: u64) -> TbenchRt {
        TbenchRt {
            warmup: timelimit / 5,
            timelimit,
            ..TbenchRt::default()
        }
    }

    fn bucket(v: &mut Vec<u64>, rel: u64) -> &mut u64 {
        let s = (rel / SEC) as usize;
        if v.len() <= s {
            v.resize(s + 1, 0);
        }
        &mut v[s]
    }

    /// The tick at which warm-up ends and the execute phase's clock starts (0: no
    /// warm-up, the phase starts at the release).
    pub fn start_tick(&self) -> u64 {
        self.warmup
    }

    /// How long after its release a client stops: at the tick that ends the run.
    pub fn run_ns(&self) -> u64 {
        (self.warmup + self.timelimit) * SEC
    }

    /// A client starts a line `rel` ns after the release, `gap` ns after its previous one.
    pub fn line(&mut self, rel: u64, gap: Option<u64>) {
        *Self::bucket(&mut self.lines, rel) += 1;
        if let Some(g) = gap {
            let m = Self::bucket(&mut self.max_gap, rel);
            *m = (*m).max(g);
        }
    }

    /// An operation started at `start` and completed at `end` (ns after the release),
    /// counting `bytes`.
    pub fn done(&mut self, op: LoadOp, start: u64, end: u64, bytes: u64) {
        *Self::bucket(&mut self.bytes, end) += bytes;
        if end > self.start_tick() * SEC {
            let s = &mut self.ops[op as usize];
            s.count += 1;
            s.total_ns += end - start;
            s.max_ns = s.max_ns.max(end - start);
        }
    }

    /// Bytes completed in seconds `a..b` of the run.
    fn bytes_in(&self, a: u64, b: u64) -> u64 {
        (a..b)
            .map(|s| self.bytes.get(s as usize).copied().unwrap_or(0))
            .sum()
    }

    /// The last tick whose line tbench prints as executing, and its MB/s: `None` when
    /// no execute tick comes before the stop (`-t 1`), where tbench prints 0.
    pub fn throughput(&self) -> Option<(u64, f64)> {
        let start = self.start_tick();
        let last = start + self.timelimit - 1;
        if last <= start {
            return None;
        }
        let bytes = self.bytes_in(start, last);
        Some((last, 1.0e-6 * bytes as f64 / (last - start) as f64))
    }

    /// The `max_latency` tbench prints, ns: the longest line-to-line gap over the ticks
    /// of the execute phase.
    pub fn max_latency(&self) -> u64 {
        let start = self.start_tick();
        let last = start + self.timelimit.saturating_sub(1);
        (start..last)
            .map(|s| self.max_gap.get(s as usize).copied().unwrap_or(0))
            .max()
            .unwrap_or(0)
    }

    /// The per-second lines tbench prints: `(tick, lines so far, MB/s, phase, t,
    /// latency ns)`, phase "warmup" or "execute".
    pub fn ticks(&self) -> Vec<(u64, u64, f64, &'static str, u64, u64)> {
        let mut out = Vec::new();
        let start = self.start_tick();
        let mut lines = 0;
        for k in 1..start + self.timelimit {
            lines += self.lines.get(k as usize - 1).copied().unwrap_or(0);
            let lat = self.max_gap.get(k as usize - 1).copied().unwrap_or(0);
            if k < start {
                let b = self.bytes_in(0, k);
                out.push((k, lines, 1.0e-6 * b as f64 / k as f64, "warmup", k, lat));
            } else if k > start {
                let t = k - start;
                let b = self.bytes_in(start, k);
                out.push((k, lines, 1.0e-6 * b as f64 / t as f64, "execute", t, lat));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn throughput_is_the_tick_before_the_stop_over_its_seconds() {
        let mut t = TbenchRt::new(10);
        assert_eq!(t.warmup, 2);
        assert_eq!(t.run_ns(), 12 * SEC);
        // 1 MB in each second of the run.
        for s in 0..12 {
            t.done(LoadOp::WriteX, s * SEC, s * SEC + 1, 1_000_000);
        }
        let (tick, mbs) = t.throughput().unwrap();
        assert_eq!(tick, 11);
        assert!((mbs - 1.0).abs() < 1e-9, "{mbs}");
        // Warm-up bytes are not in it: doubling them changes nothing.
        t.done(LoadOp::WriteX, 0, 1, 5_000_000);
        assert!((t.throughput().unwrap().1 - 1.0).abs() < 1e-9);
        // The operation completed in warm-up is not in the latency table.
        assert_eq!(t.ops[LoadOp::WriteX as usize].count, 10);
        assert!(TbenchRt::new(1).throughput().is_none());
    }

    #[test]
    fn max_latency_covers_the_execute_ticks_only() {
        let mut t = TbenchRt::new(5);
        t.line(SEC / 2, Some(9 * SEC));
        t.line(3 * SEC, Some(7));
        t.line(5 * SEC + 1, Some(1_000));
        assert_eq!(t.max_latency(), 7);
        assert_eq!(t.ticks().len(), 4);
    }
}
