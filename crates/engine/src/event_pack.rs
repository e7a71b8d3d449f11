//! An [`Event`] packed into one `u128` for the queue's entries.
//!
//! The queue moves its entries between buckets as time advances, and its cost is mostly
//! those moves' memory traffic. `Event` as an enum of `usize` fields is 32 bytes; packed,
//! with its CPU, task, timer and policy numbers as `u32` (a machine has at most 8192 CPUs
//! and a run's tasks are bounded by its memory budget far below 2^32), it is 16, and a
//! queue entry with its 16-byte key is 32 bytes instead of 48.
//!
//! Layout: bits 0-7 the variant, bits 8-39 the first number (CPU, task, timer or policy),
//! bit 40 `via_wakelist`; bits 64-127 the generation, or a second and third `u32`.

use crate::event::Event;

const A: u32 = 8;
const FLAG: u32 = 40;
const HI: u32 = 64;

/// A number of the event as the packed form's `u32`.
fn n32(x: usize) -> u128 {
    u128::from(u32::try_from(x).expect("CPU, task, timer and policy numbers fit in u32"))
}

fn tagged(tag: u8, a: usize, hi: u64) -> u128 {
    u128::from(tag) | (n32(a) << A) | (u128::from(hi) << HI)
}

impl fairsim_des::queue::Packed for Event {
    #[inline]
    fn pack(self) -> u128 {
        pack(self)
    }

    #[inline]
    fn unpack(p: u128) -> Event {
        unpack(p)
    }
}

/// The packed form of `e`.
pub(crate) fn pack(e: Event) -> u128 {
    match e {
        Event::Continue { cpu, gen } => tagged(0, cpu, gen),
        Event::SegmentEnd { cpu, gen } => tagged(1, cpu, gen),
        Event::Tick { cpu, gen } => tagged(2, cpu, gen),
        Event::TimerExpire { timer, gen } => tagged(3, timer, gen),
        Event::TimerHandler { cpu } => tagged(4, cpu, 0),
        Event::WakeArrive {
            task,
            wake_flags,
            via_wakelist,
            from_cpu,
        } => {
            let hi = u64::from(wake_flags) | ((n32(from_cpu) as u64) << 32);
            tagged(5, task, hi) | (u128::from(via_wakelist) << FLAG)
        }
        Event::NewTaskArrive { task, from_cpu } => tagged(6, task, n32(from_cpu) as u64),
        Event::Launch { task, cpu } => tagged(7, task, n32(cpu) as u64),
        Event::WindowStart => tagged(8, 0, 0),
        Event::Resched { cpu } => tagged(9, cpu, 0),
        Event::NewidleStep { cpu, gen } => tagged(10, cpu, gen),
        Event::NohzKick { cpu } => tagged(11, cpu, 0),
        Event::ActiveBalance { cpu } => tagged(12, cpu, 0),
        Event::IdleReenter { cpu, gen } => tagged(13, cpu, gen),
        Event::PollLimit { cpu, gen } => tagged(14, cpu, gen),
        Event::CpufreqWork { policy } => tagged(15, policy, 0),
        Event::CpufreqTransitionEnd { policy, khz } => tagged(16, policy, u64::from(khz)),
        Event::BandwidthTimer { group, slack, at } => {
            tagged(18, group, at) | (u128::from(slack) << FLAG)
        }
        Event::End => tagged(17, 0, 0),
    }
}

/// The event `p` packs.
pub(crate) fn unpack(p: u128) -> Event {
    let a = ((p >> A) as u32) as usize;
    let hi = (p >> HI) as u64;
    let lo32 = hi as u32;
    let hi32 = (hi >> 32) as usize;
    match p as u8 {
        0 => Event::Continue { cpu: a, gen: hi },
        1 => Event::SegmentEnd { cpu: a, gen: hi },
        2 => Event::Tick { cpu: a, gen: hi },
        3 => Event::TimerExpire { timer: a, gen: hi },
        4 => Event::TimerHandler { cpu: a },
        5 => Event::WakeArrive {
            task: a,
            wake_flags: lo32,
            via_wakelist: (p >> FLAG) & 1 == 1,
            from_cpu: hi32,
        },
        6 => Event::NewTaskArrive {
            task: a,
            from_cpu: hi as usize,
        },
        7 => Event::Launch {
            task: a,
            cpu: hi as usize,
        },
        8 => Event::WindowStart,
        9 => Event::Resched { cpu: a },
        10 => Event::NewidleStep { cpu: a, gen: hi },
        11 => Event::NohzKick { cpu: a },
        12 => Event::ActiveBalance { cpu: a },
        13 => Event::IdleReenter { cpu: a, gen: hi },
        14 => Event::PollLimit { cpu: a, gen: hi },
        15 => Event::CpufreqWork { policy: a },
        16 => Event::CpufreqTransitionEnd {
            policy: a,
            khz: lo32,
        },
        18 => Event::BandwidthTimer {
            group: a,
            slack: (p >> FLAG) & 1 == 1,
            at: hi,
        },
        _ => Event::End,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_variant_round_trips_at_its_extremes() {
        let big = u32::MAX as usize;
        let events = [
            Event::Continue {
                cpu: big,
                gen: u64::MAX,
            },
            Event::SegmentEnd {
                cpu: 0,
                gen: 1 << 63,
            },
            Event::Tick { cpu: 8191, gen: 7 },
            Event::TimerExpire {
                timer: big,
                gen: u64::MAX,
            },
            Event::TimerHandler { cpu: 3 },
            Event::WakeArrive {
                task: big,
                wake_flags: u32::MAX,
                via_wakelist: true,
                from_cpu: big,
            },
            Event::WakeArrive {
                task: 0,
                wake_flags: 0x21,
                via_wakelist: false,
                from_cpu: 5,
            },
            Event::NewTaskArrive {
                task: big,
                from_cpu: big,
            },
            Event::Launch { task: 9, cpu: big },
            Event::WindowStart,
            Event::Resched { cpu: big },
            Event::NewidleStep {
                cpu: 2,
                gen: u64::MAX,
            },
            Event::NohzKick { cpu: 4 },
            Event::ActiveBalance { cpu: big },
            Event::IdleReenter { cpu: 1, gen: 12345 },
            Event::PollLimit { cpu: big, gen: 0 },
            Event::CpufreqWork { policy: big },
            Event::CpufreqTransitionEnd {
                policy: 1,
                khz: u32::MAX,
            },
            Event::BandwidthTimer {
                group: big,
                slack: true,
                at: u64::MAX,
            },
            Event::BandwidthTimer {
                group: 1,
                slack: false,
                at: 100_000_000,
            },
            Event::End,
        ];
        for e in events {
            assert_eq!(unpack(pack(e)), e, "{e:?}");
        }
        // Distinct events pack differently.
        let packed: std::collections::BTreeSet<u128> = events.iter().map(|&e| pack(e)).collect();
        assert_eq!(packed.len(), events.len());
    }
}
