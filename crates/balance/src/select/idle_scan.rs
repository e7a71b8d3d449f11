//! SIS_UTIL: `update_idle_cpu_scan`, which the periodic load balance runs on the LLC
//! domain to set how many CPUs `select_idle_cpu` may scan (fair.c).

use std::sync::atomic::Ordering;

use fairsim_pelt::SCHED_CAPACITY_SCALE;
use fairsim_topology::SdId;

use crate::features::Feature;
use crate::lb::view::LbRead;
use crate::sched::Sched;

/// The scan depth SIS_UTIL derives from the LLC's summed utilization (the arithmetic of
/// `update_idle_cpu_scan`): with `x = sum_util / llc_weight` (per-CPU utilization, scale
/// 1024) and `pct = imbalance_pct`, `nr = llc_weight * (1024 - min(x^2 pct^2 /
/// (10000 * 1024), 1024)) / 1024`, all in integer division. The depth drops to 0 once
/// `x >= 1024 * 100 / pct` (about 85% at pct 117).
pub fn idle_cpu_scan_depth(sum_util: u64, llc_weight: u64, imbalance_pct: u64) -> i32 {
    let x = sum_util / llc_weight.max(1);
    let pct = imbalance_pct;
    let tmp =
        x.wrapping_mul(x).wrapping_mul(pct).wrapping_mul(pct) / (10000 * SCHED_CAPACITY_SCALE);
    // min_t(long, ...): the kernel compares in signed long.
    let tmp = (tmp as i64).min(SCHED_CAPACITY_SCALE as i64);
    let y = (SCHED_CAPACITY_SCALE as i64).wrapping_sub(tmp) as u64;
    (y.wrapping_mul(llc_weight) / SCHED_CAPACITY_SCALE) as i32
}

/// `update_idle_cpu_scan(env, sum_util)` (fair.c) for the domain `sd` of the
/// balancing CPU (`env->dst_cpu` is the domain's CPU): with SIS_UTIL, when `sd` is
/// that CPU's LLC domain and it has a `sched_domain_shared`, store
/// [`idle_cpu_scan_depth`] in `nr_idle_scan`, writing the shared line only if the
/// value changed.
///
/// The kernel also returns early when `env->idle == CPU_NEWLY_IDLE`, because newidle
/// balances run far more often; the caller (update_sd_lb_stats) makes that check.
pub fn update_idle_cpu_scan<V: LbRead + ?Sized>(v: &V, sd: SdId, sum_util: u64) {
    if !v.features().has(Feature::SIS_UTIL) {
        return;
    }
    let d = v.topo().domain(sd);
    let dst_cpu = d.cpu;
    let llc_weight = v.topo().cpus[dst_cpu].sd_llc_size;
    if d.span_weight as usize != llc_weight {
        return;
    }
    let Some(sds) = v.topo().cpus[dst_cpu].sd_llc_shared else {
        return;
    };
    let y = idle_cpu_scan_depth(sum_util, llc_weight as u64, u64::from(d.imbalance_pct));
    let shared = &v.topo().shared[sds];
    if y != shared.nr_idle_scan.load(Ordering::Relaxed) {
        shared.nr_idle_scan.store(y, Ordering::Relaxed);
    }
}

impl Sched {
    /// [`update_idle_cpu_scan`] on this machine.
    pub fn update_idle_cpu_scan(&self, sd: SdId, sum_util: u64) {
        update_idle_cpu_scan(self, sd, sum_util);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn depth_by_hand() {
        // 16-CPU LLC, pct 117.
        // Idle LLC: scan everything.
        assert_eq!(idle_cpu_scan_depth(0, 16, 117), 16);
        // x = 8192/16 = 512: tmp = 512^2 * 117^2 / 10240000 = 262144 * 13689 / 10240000
        // = 3588489216 / 10240000 = 350 (350.438...); y = 674; 674 * 16 / 1024 = 10.
        assert_eq!(idle_cpu_scan_depth(8192, 16, 117), 10);
        // x = 256: tmp = 65536 * 13689 / 10240000 = 87 (87.6...); y = 937;
        // 937 * 16 / 1024 = 14 (14.64).
        assert_eq!(idle_cpu_scan_depth(4096, 16, 117), 14);
        // x = 875 (85.4%): tmp = 765625 * 13689 / 10240000 = 1023 (1023.5); y = 1;
        // 16 / 1024 = 0: scanning stops.
        assert_eq!(idle_cpu_scan_depth(875 * 16, 16, 117), 0);
        // x = 870: tmp = 756900 * 13689 / 10240000 = 1011; y = 13; 13*16/1024 = 0.
        assert_eq!(idle_cpu_scan_depth(870 * 16, 16, 117), 0);
        // A 112-CPU LLC at x = 700: tmp = 490000 * 13689 / 10240000 = 655 (655.03);
        // y = 369; 369 * 112 / 1024 = 40 (40.36).
        assert_eq!(idle_cpu_scan_depth(700 * 112, 112, 117), 40);
        // Overfull: clamped at 1024, depth 0.
        assert_eq!(idle_cpu_scan_depth(2048 * 8, 8, 117), 0);
    }
}
