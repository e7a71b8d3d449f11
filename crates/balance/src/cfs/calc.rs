//! Wall time to virtual time by era: 3.9's `calc_delta_mine` rounds where 3.13's
//! `__calc_delta` (used from 4.5 on, and by 6.12) truncates.

use crate::kernel::Kernel;
use crate::weight::{calc_delta, calc_delta_fair, scale_load_down, LoadWeight, NICE_0_LOAD};

/// 3.9's `WMULT_CONST` on 64-bit (`1UL << 32`; 3.13 made it `~0U`).
const WMULT_CONST_V3_9: u64 = 1 << 32;
/// `WMULT_SHIFT`.
const WMULT_SHIFT: u32 = 32;

/// `SRR(x, y)`: shift right and round.
fn srr(x: u64, y: u32) -> u64 {
    x.wrapping_add(1u64 << (y - 1)) >> y
}

/// `calc_delta_mine(delta_exec, weight, lw)` of Linux 3.9 (kernel/sched/fair.c), on
/// 64-bit with `SCHED_LOAD_RESOLUTION` 0: `delta_exec * weight / lw->weight` through
/// the inverse of `lw`, rounded at each shift. fairsim keeps weights in the later 20-bit
/// form; `scale_load_down` of them is 3.9's weight exactly. A task's load carries its
/// inverse from `prio_to_wmult[]`, used as it is; a runqueue's, zeroed by every
/// `update_load_add`/`_sub`, is computed as 3.9 computes it (`2^32 / weight`, 3.9's
/// 64-bit `WMULT_CONST`), without caching it back: nothing else reads it.
pub fn calc_delta_mine_v3_9(delta_exec: u64, weight: u64, lw: &LoadWeight) -> u64 {
    let w = scale_load_down(weight);
    let tmp = if w > 1 { delta_exec * w } else { delta_exec };
    let inv = if lw.inv_weight != 0 {
        u64::from(lw.inv_weight)
    } else {
        let lw_w = scale_load_down(lw.weight);
        // A zero weight gets the largest inverse, as the kernel does.
        if lw_w >= WMULT_CONST_V3_9 {
            1
        } else {
            WMULT_CONST_V3_9
                .checked_div(lw_w)
                .unwrap_or(WMULT_CONST_V3_9)
        }
    };
    let r = if tmp > WMULT_CONST_V3_9 {
        srr(srr(tmp, WMULT_SHIFT / 2).wrapping_mul(inv), WMULT_SHIFT / 2)
    } else {
        srr(tmp.wrapping_mul(inv), WMULT_SHIFT)
    };
    r.min(i64::MAX as u64)
}

/// The era's `__calc_delta` / `calc_delta_mine`.
pub fn calc_delta_era(kernel: Kernel, delta: u64, weight: u64, lw: &mut LoadWeight) -> u64 {
    if kernel == Kernel::V3_9 {
        calc_delta_mine_v3_9(delta, weight, lw)
    } else {
        calc_delta(delta, weight, lw)
    }
}

/// The era's `calc_delta_fair(delta, se)`.
pub fn calc_delta_fair_era(kernel: Kernel, delta: u64, lw: &mut LoadWeight) -> u64 {
    if kernel == Kernel::V3_9 {
        if lw.weight != NICE_0_LOAD {
            calc_delta_mine_v3_9(delta, NICE_0_LOAD, lw)
        } else {
            delta
        }
    } else {
        calc_delta_fair(delta, lw)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn v3_9_rounds_where_later_kernels_truncate() {
        // A nice -5 task (weight 3121) runs 1 ms: 1e6 * 1024 / 3121 = 328099.97 ns.
        let lw = LoadWeight::from_nice(-5);
        let v39 = calc_delta_mine_v3_9(1_000_000, NICE_0_LOAD, &lw);
        // tmp = 1024e6 is under 2^32, so SRR(tmp * 1376151, 32) with nice -5's wmult.
        let expect = (1_024_000_000u128 * 1_376_151 + (1 << 31)) >> 32;
        assert_eq!(v39 as u128, expect);
        let mut lw2 = LoadWeight::from_nice(-5);
        let later = calc_delta_fair(1_000_000, &mut lw2);
        assert!(v39 >= later && v39 - later <= 1, "{v39} {later}");
        // A slice of 6 ms for one of two nice-0 tasks: 3 ms either way.
        let mut two = LoadWeight::default();
        two.add(NICE_0_LOAD);
        two.add(NICE_0_LOAD);
        assert_eq!(
            calc_delta_mine_v3_9(6_000_000, NICE_0_LOAD, &two),
            3_000_000
        );
        // Large products take the split path: 100 ms at weight 88761 over 1024.
        let n0 = LoadWeight::from_nice(0);
        let big = calc_delta_mine_v3_9(100_000_000, LoadWeight::from_nice(-20).weight, &n0);
        assert_eq!(big, 8_668_066_432);
    }
}
