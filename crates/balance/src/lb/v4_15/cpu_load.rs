//! `rq->cpu_load[]` of Linux 4.15 (kernel/sched/fair.c of `sndrzt/linux-4.15` @ 6ea06264,
//! identical in 4.16.13): `cpu_load_update` and the tickless bookkeeping around it,
//! `cpu_load_update_nohz_start` when the tick stops and `cpu_load_update_nohz_stop` when
//! it restarts. The rest of the history (tables, `decay_load_missed`, the reads, the
//! tick's and the nohz idle balance's updates) is 3.9's, in [`crate::lb::v3_9::cpu_load`].
//!
//! What changed from 4.5: 4.5 fed the ticks a CPU missed in tickless idle as load 0 and
//! ignored the load it had when its tick restarted; 4.15 remembers the load the tick
//! stopped with (`cpu_load[0]`), decays each index as if that load had stayed for the
//! missed ticks, and feeds the load found at the restart as the new sample (the
//! "tickless load" of NO_HZ_FULL, used for idle periods too since 4.6).

use crate::lb::era::Balancer;
use crate::lb::v3_9::cpu_load::{decay_load_missed, update_cpu_load_array};
use crate::lb::v3_9::CPU_LOAD_IDX_MAX;
use crate::sched::Sched;

/// `cpu_load_update(this_rq, this_load, pending_updates)` of 4.15 on one `cpu_load[]`
/// array: index 0 takes the new load; index `i` first decays over the missed updates,
/// with the decayed share of the tickless load (the old `cpu_load[0]`) put back at full
/// value, then moves `1/2^i` of the way to the new load, rounding up while the load
/// grows. The kernel's `unsigned long` subtraction wraps where the decayed history is
/// below the decayed tickless load, and the addition wraps it back; so do these.
pub fn cpu_load_update_array(
    cpu_load: &mut [u64; CPU_LOAD_IDX_MAX],
    this_load: u64,
    pending_updates: u64,
) {
    let tickless_load = cpu_load[0];
    cpu_load[0] = this_load;
    let mut scale = 2u64;
    let missed = pending_updates.wrapping_sub(1);
    for (i, slot) in cpu_load.iter_mut().enumerate().skip(1) {
        let mut old_load = decay_load_missed(*slot, missed, i);
        if tickless_load != 0 {
            old_load = old_load.wrapping_sub(decay_load_missed(tickless_load, missed, i));
            old_load = old_load.wrapping_add(tickless_load);
        }
        let mut new_load = this_load;
        if new_load > old_load {
            new_load += scale - 1;
        }
        *slot = old_load.wrapping_mul(scale - 1).wrapping_add(new_load) >> i;
        scale += scale;
    }
}

impl Sched {
    /// `cpu_load_update_nohz_start()` of 4.15, when `cpu` stops its tick: the load it
    /// stops with becomes `cpu_load[0]`, the tickless load of the next update.
    pub fn cpu_load_update_nohz_start_v4_15(&mut self, cpu: usize) {
        let load = self.rq_load_v3_9(cpu);
        self.legacy_mut().cpu_load[cpu][0] = load;
    }

    /// `cpu_load_update_nohz_stop()` of 4.15, when `cpu`'s tick restarts at `now`: unless
    /// it is up to date, one update over the missed ticks with the load the CPU has now
    /// (`cpu_load_update_nohz(this_rq, curr_jiffies, load)`).
    pub fn cpu_load_update_nohz_stop_v4_15(&mut self, cpu: usize, now: u64) {
        let curr = self.jiffies_now();
        let last = self.legacy().last_load_update_tick[cpu];
        if curr == last {
            return;
        }
        let load = self.rq_load_v3_9(cpu);
        self.update_rq_clock(cpu, now);
        self.legacy_mut().last_load_update_tick[cpu] = curr;
        self.update_cpu_load_v3_9(cpu, load, curr - last);
    }

    /// `__update_cpu_load` of `cpu` (3.9, 4.5), or 4.15's `cpu_load_update`.
    pub(crate) fn update_cpu_load_v3_9(&mut self, cpu: usize, this_load: u64, pending: u64) {
        let v4_15 = self.balancer() == Balancer::V4_15;
        let cpu_load = &mut self.legacy_mut().cpu_load[cpu];
        if v4_15 {
            cpu_load_update_array(cpu_load, this_load, pending);
        } else {
            update_cpu_load_array(cpu_load, this_load, pending);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lb::v3_9::cpu_load::update_cpu_load_array;

    /// With one pending update (the tick) 4.15's update is 3.9's and 4.5's: the tickless
    /// load is subtracted and added back undecayed.
    #[test]
    fn one_pending_update_is_the_old_update() {
        let mut a = [700u64, 650, 500, 300, 100];
        let mut b = a;
        cpu_load_update_array(&mut a, 1024, 1);
        update_cpu_load_array(&mut b, 1024, 1);
        assert_eq!(a, b);
    }

    /// A CPU whose tick stopped with load 0 and restarts with a task queued: 4.5 feeds
    /// load 0 (`update_cpu_load_nohz(0)`), 4.15 the task's load after decaying the
    /// history over the 3 missed ticks (2 decays: pending - 1).
    #[test]
    fn a_restart_with_load_feeds_it_after_the_decay() {
        let mut a = [0u64, 512, 512, 512, 512];
        cpu_load_update_array(&mut a, 1024, 3);
        // idx 1: 512 >> 2 = 128, then (128 + 1024 + 1) >> 1 = 576.
        assert_eq!(a[1], 576);
        // idx 2: two missed ticks are 2^1, column 1 of row 2: 72/128.
        let old2 = (512 * 72) >> 7;
        assert_eq!(a[2], (old2 * 3 + 1024 + 3) >> 2);
        assert_eq!(a[0], 1024);
    }

    /// A tick that stopped with a load keeps that load's share: after 2 missed ticks the
    /// decayed tickless load is taken out and the full one put back.
    #[test]
    fn the_tickless_load_is_held_over_the_missed_ticks() {
        let mut a = [1024u64, 1024, 1024, 1024, 1024];
        cpu_load_update_array(&mut a, 1024, 3);
        assert_eq!(a, [1024; CPU_LOAD_IDX_MAX]);
    }
}
