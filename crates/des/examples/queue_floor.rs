//! The floor under any engine built on this queue: a discrete-event loop that does nothing
//! but take the earliest event, check that it is not stale, count it and schedule its
//! successor, with hackbench's shape on `spr-2s56c2t` (224 CPUs each a few hundred ns to a
//! few us from the end of its next system call, 135 M events per emulated second).
//!
//! `benches/kernel-bound.sh` runs it beside every run it measures, under cachegrind at two
//! event counts, and takes the difference: the instructions per event that the queue, the
//! loop and the stale check cost before an event does any work (the engine's dispatch on
//! the event's kind is not in it: it is part of the engine's own work). An instruction target per emulated second,
//! divided by the events per emulated second, is a budget per event; what is left of it
//! after this floor and the ported kernel is all the engine's own work may cost.
//!
//!   cargo run --release -p fairsim-des --example queue_floor -- EVENTS [PENDING [MEAN_GAP_NS]]

use fairsim_des::queue::{EventQueue, Packed};
use fairsim_des::time::Time;

/// One CPU's next event, with the generation that makes a superseded one stale, as the
/// engine's run-segment ends carry theirs.
#[derive(Clone, Copy)]
struct SegEnd {
    cpu: u32,
    gen: u64,
}

impl Packed for SegEnd {
    fn pack(self) -> u128 {
        u128::from(self.cpu) | (u128::from(self.gen) << 64)
    }
    fn unpack(p: u128) -> Self {
        SegEnd {
            cpu: p as u32,
            gen: (p >> 64) as u64,
        }
    }
}

/// The mean gap in ns from one of a CPU's events to its next, by default: 224 CPUs at
/// 1.65 us each make hackbench's 135 M events per emulated second. Gaps are uniform from
/// 30% to 170% of the mean.
const MEAN_GAP: u64 = 1650;

/// The gaps' generator: xorshift64, a few instructions a draw. The engine computes an
/// event's time from the task's work and the CPU's rate and draws nothing for it, so the
/// floor must not include a ChaCha draw (about 60 instructions) the engine does not make.
struct Gaps {
    state: u64,
    min: u64,
    span: u64,
}

impl Gaps {
    fn next(&mut self) -> u64 {
        self.state ^= self.state << 13;
        self.state ^= self.state >> 7;
        self.state ^= self.state << 17;
        self.min + self.state % self.span
    }
}

/// The `i`th argument, named `name` in the one-line error when it is not an integer from 1
/// to `max`; `default` when it is absent and optional.
fn arg(i: usize, name: &str, max: u64, default: Option<u64>) -> u64 {
    let fail = |what: String| -> ! {
        eprintln!(
            "queue_floor: {name} {what}; usage: queue_floor EVENTS [PENDING [MEAN_GAP_NS]] (defaults: 224 pending, a {MEAN_GAP} ns mean gap)"
        );
        std::process::exit(2);
    };
    match std::env::args().nth(i) {
        Some(s) => match s.parse::<u64>() {
            Ok(n) if (1..=max).contains(&n) => n,
            _ => fail(format!("must be an integer from 1 to {max}, not '{s}'")),
        },
        None => default.unwrap_or_else(|| fail("is missing".to_string())),
    }
}

fn main() {
    let events = arg(1, "EVENTS", u64::MAX, None);
    // One pending event per CPU, numbered as the engine numbers CPUs (a `u32` here).
    let cpus = arg(2, "PENDING", 1 << 20, Some(224)) as usize;
    // Up to a thousand seconds, so that a gap and its spread stay far from overflow.
    let mean = arg(3, "MEAN_GAP_NS", 1_000_000_000_000, Some(MEAN_GAP));
    let mut gaps = Gaps {
        state: 0x9e37_79b9_7f4a_7c15,
        min: mean * 3 / 10,
        span: (mean * 14 / 10).max(1),
    };
    let mut queue = EventQueue::<SegEnd>::new();
    let mut gens = vec![0u64; cpus];
    let mut counts = vec![0u64; cpus];
    for cpu in 0..cpus {
        let at = gaps.next();
        queue.push(
            Time(at),
            SegEnd {
                cpu: cpu as u32,
                gen: 0,
            },
        );
    }
    let mut done = 0;
    let mut now = 0;
    while done < events {
        let Some((t, ev)) = queue.pop() else { break };
        now = t.0;
        let cpu = ev.cpu as usize;
        if gens[cpu] != ev.gen {
            continue;
        }
        gens[cpu] += 1;
        counts[cpu] += 1;
        done += 1;
        let at = now + gaps.next();
        queue.push(
            Time(at),
            SegEnd {
                cpu: ev.cpu,
                gen: gens[cpu],
            },
        );
    }
    // The sum keeps the loop's work observable, so that none of it can be optimised away.
    let sum: u64 = counts.iter().sum();
    println!(
        "{done} events, {sum} counted, {:.3} ms emulated",
        now as f64 / 1e6
    );
}
