//! Load weights: nice levels to weights (`sched_prio_to_weight`), `struct load_weight`, and
//! the fixed-point division `__calc_delta` that turns wall time into virtual time.

/// `SCHED_FIXEDPOINT_SHIFT` / `NICE_0_LOAD_SHIFT` on 64-bit: weights carry 10 extra bits.
pub const NICE_0_LOAD_SHIFT: u32 = 20;
/// `NICE_0_LOAD`: the weight of a nice-0 task in the 64-bit scaled form.
pub const NICE_0_LOAD: u64 = 1 << NICE_0_LOAD_SHIFT;
/// `WMULT_CONST`.
const WMULT_CONST: u64 = 0xffff_ffff;
/// `WMULT_SHIFT`.
const WMULT_SHIFT: u32 = 32;

/// `WEIGHT_IDLEPRIO` (kernel/sched/sched.h): a SCHED_IDLE task's weight, below nice 19's
/// 15.
pub const WEIGHT_IDLEPRIO: u64 = 3;
/// `WMULT_IDLEPRIO`: its inverse.
pub const WMULT_IDLEPRIO: u32 = 1_431_655_765;

/// `sched_prio_to_weight[]`: each nice level is ~1.25 times the next.
pub const SCHED_PRIO_TO_WEIGHT: [u64; 40] = [
    88761, 71755, 56483, 46273, 36291, 29154, 23254, 18705, 14949, 11916, 9548, 7620, 6100, 4904,
    3906, 3121, 2501, 1991, 1586, 1277, 1024, 820, 655, 526, 423, 335, 272, 215, 172, 137, 110, 87,
    70, 56, 45, 36, 29, 23, 18, 15,
];

/// `sched_prio_to_wmult[]` (kernel/sched/core.c, the same from 3.9's `prio_to_wmult[]` to
/// 6.12): 2^32 / weight, as the kernel tabulates it (13 entries are one above the
/// truncated quotient, nice 5's 12820798 among them).
pub const SCHED_PRIO_TO_WMULT: [u32; 40] = [
    48388, 59856, 76040, 92818, 118348, 147320, 184698, 229616, 287308, 360437, 449829, 563644,
    704093, 875809, 1099582, 1376151, 1717300, 2157191, 2708050, 3363326, 4194304, 5237765,
    6557202, 8165337, 10153587, 12820798, 15790321, 19976592, 24970740, 31350126, 39045157,
    49367440, 61356676, 76695844, 95443717, 119304647, 148102320, 186737708, 238609294, 286331153,
];

/// `scale_load(w)`: to the 64-bit high-resolution form.
pub fn scale_load(w: u64) -> u64 {
    w << 10
}

/// `scale_load_down(w)`: back to the user-visible form; a non-zero weight stays >= 2.
pub fn scale_load_down(w: u64) -> u64 {
    if w == 0 {
        0
    } else {
        (w >> 10).max(2)
    }
}

/// `struct load_weight`: a weight in the scaled form and its cached inverse.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LoadWeight {
    /// Scaled weight (`scale_load` of the nice weight for a task).
    pub weight: u64,
    /// The inverse, `2^32 / scale_load_down(weight)`: a task's from
    /// `sched_prio_to_wmult[]`, a runqueue's computed when needed; 0 when stale.
    pub inv_weight: u32,
}

impl LoadWeight {
    /// The weight of a task of `nice` (-20..=19), as `set_load_weight` sets it: the
    /// weight and its precomputed inverse from `sched_prio_to_wmult[]`.
    pub fn from_nice(nice: i32) -> LoadWeight {
        let idx = (nice.clamp(-20, 19) + 20) as usize;
        LoadWeight {
            weight: scale_load(SCHED_PRIO_TO_WEIGHT[idx]),
            inv_weight: SCHED_PRIO_TO_WMULT[idx],
        }
    }

    /// The weight `set_load_weight` gives a SCHED_IDLE task, whatever its nice:
    /// `scale_load(WEIGHT_IDLEPRIO)` (3) with `WMULT_IDLEPRIO` (1431655765, `2^32 / 3`).
    pub fn idle_prio() -> LoadWeight {
        LoadWeight {
            weight: scale_load(WEIGHT_IDLEPRIO),
            inv_weight: WMULT_IDLEPRIO,
        }
    }

    /// `update_load_add`.
    pub fn add(&mut self, inc: u64) {
        self.weight += inc;
        self.inv_weight = 0;
    }

    /// `update_load_sub`.
    pub fn sub(&mut self, dec: u64) {
        self.weight -= dec;
        self.inv_weight = 0;
    }

    /// `__update_inv_weight`.
    fn update_inv_weight(&mut self) {
        if self.inv_weight != 0 {
            return;
        }
        let w = scale_load_down(self.weight);
        // A zero weight gets the largest inverse, as the kernel does.
        self.inv_weight = if w >= WMULT_CONST {
            1
        } else {
            WMULT_CONST.checked_div(w).unwrap_or(WMULT_CONST) as u32
        };
    }
}

/// `fls`: the position of the highest set bit, 1-based; 0 for 0.
fn fls(x: u32) -> u32 {
    32 - x.leading_zeros()
}

/// `__calc_delta`: `delta_exec * weight / lw.weight` through the inverse-weight multiply,
/// with the kernel's shifts so that the rounding is the kernel's.
pub fn calc_delta(delta_exec: u64, weight: u64, lw: &mut LoadWeight) -> u64 {
    let mut fact = scale_load_down(weight);
    let mut fact_hi = (fact >> 32) as u32;
    let mut shift = WMULT_SHIFT;
    lw.update_inv_weight();
    if fact_hi != 0 {
        let fs = fls(fact_hi);
        shift -= fs;
        fact >>= fs;
    }
    fact = (fact & 0xffff_ffff) * u64::from(lw.inv_weight);
    fact_hi = (fact >> 32) as u32;
    if fact_hi != 0 {
        let fs = fls(fact_hi);
        shift -= fs;
        fact >>= fs;
    }
    mul_u64_u32_shr(delta_exec, fact as u32, shift)
}

/// `mul_u64_u32_shr`: `(a * mul) >> shift` with a 96-bit intermediate.
fn mul_u64_u32_shr(a: u64, mul: u32, shift: u32) -> u64 {
    ((u128::from(a) * u128::from(mul)) >> shift) as u64
}

/// `calc_delta_fair`: wall time to virtual time for an entity of weight `lw`.
pub fn calc_delta_fair(delta: u64, lw: &mut LoadWeight) -> u64 {
    if lw.weight != NICE_0_LOAD {
        calc_delta(delta, NICE_0_LOAD, lw)
    } else {
        delta
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inverse_table_is_the_quotient_within_one() {
        // The kernel's table is not computed at build time: most entries are 2^32 / w
        // rounded to nearest, four (nice 13, 14, 16, 17) truncated; each is within one.
        for (i, &w) in SCHED_PRIO_TO_WEIGHT.iter().enumerate() {
            let q = (1u64 << 32) / w;
            let inv = u64::from(SCHED_PRIO_TO_WMULT[i]);
            assert!(inv == q || inv == q + 1, "nice {}", i as i32 - 20);
        }
        assert_eq!(SCHED_PRIO_TO_WMULT[25], 12820798);
        assert_eq!(SCHED_PRIO_TO_WMULT[33], 76695844);
    }

    #[test]
    fn inverse_table_matches_kernel_wmult() {
        // sched_prio_to_wmult[] entries for nice -20, 0 and 19.
        assert_eq!(LoadWeight::from_nice(-20).inv_weight, 48388);
        assert_eq!(LoadWeight::from_nice(0).inv_weight, 4194304);
        assert_eq!(LoadWeight::from_nice(19).inv_weight, 286331153);
    }

    #[test]
    fn nice_0_is_identity_and_heavier_runs_slower_in_virtual_time() {
        let mut w0 = LoadWeight::from_nice(0);
        assert_eq!(calc_delta_fair(1_000_000, &mut w0), 1_000_000);
        let mut wm5 = LoadWeight::from_nice(-5);
        // 1 ms * 1024 / 3121 = 328.1 us; the inverse multiply truncates to 328099 ns.
        let v = calc_delta_fair(1_000_000, &mut wm5);
        assert_eq!(v, ((1_000_000u128 * 1024 * 1376151) >> 32) as u64);
        assert!((328_000..328_200).contains(&v));
    }
}
