//! The geometric decay of PELT: the `y^n` table, `decay_load` and the three-segment
//! accumulation of `kernel/sched/pelt.c`.
//!
//! `y` is chosen so that `y^32 = 1/2`: a contribution made 32 periods (about 32 ms) ago
//! weighs half as much as one made in the current period.

/// Number of periods after which a contribution is halved (`LOAD_AVG_PERIOD`,
/// `kernel/sched/sched-pelt.h`).
pub const LOAD_AVG_PERIOD: u64 = 32;

/// `runnable_avg_yN_inv` from `kernel/sched/sched-pelt.h`: `y^n * (2^32 - 1)` truncated,
/// for `n` in `0..32`.
///
/// The kernel generates this table with floating point in
/// `Documentation/scheduler/sched-pelt.c`; the literal is kept here so that no floating
/// point runs at all in the crate, and a unit test regenerates it the same way and
/// checks every entry.
pub const RUNNABLE_AVG_YN_INV: [u32; 32] = [
    0xffffffff, 0xfa83b2da, 0xf5257d14, 0xefe4b99a, 0xeac0c6e6, 0xe5b906e6, 0xe0ccdeeb, 0xdbfbb796,
    0xd744fcc9, 0xd2a81d91, 0xce248c14, 0xc9b9bd85, 0xc5672a10, 0xc12c4cc9, 0xbd08a39e, 0xb8fbaf46,
    0xb504f333, 0xb123f581, 0xad583ee9, 0xa9a15ab4, 0xa5fed6a9, 0xa2704302, 0x9ef5325f, 0x9b8d39b9,
    0x9837f050, 0x94f4efa8, 0x91c3d373, 0x8ea4398a, 0x8b95c1e3, 0x88980e80, 0x85aac367, 0x82cd8698,
];

/// Computes `LOAD_AVG_MAX` the way `calc_converged_max()` in
/// `Documentation/scheduler/sched-pelt.c` does: iterate `max = (max * y_inv >> 32) + 1024`
/// from one full period until the integer series stops moving.
///
/// `y_inv` is `(2^32 - 1) * y` truncated, which is exactly table entry 1.
const fn calc_converged_max(y_inv: u64) -> u64 {
    let mut max: u64 = 1024;
    let mut last: u64 = 0;
    let mut first = true;
    loop {
        if !first {
            max = ((max * y_inv) >> 32) + 1024;
        }
        first = false;
        if last == max {
            return max;
        }
        last = max;
    }
}

/// The maximum value the integer series `1024 * sum(y^n)` converges to (`LOAD_AVG_MAX`,
/// 47742 in `sched-pelt.h`), derived at compile time from the table.
pub const LOAD_AVG_MAX: u32 = calc_converged_max(RUNNABLE_AVG_YN_INV[1] as u64) as u32;

/// `mul_u64_u32_shr(a, mul, shift)` from `include/linux/math64.h`: the full 96-bit
/// product shifted right, without losing the high bits of `a * mul`.
#[inline]
pub fn mul_u64_u32_shr(a: u64, mul: u32, shift: u32) -> u64 {
    ((a as u128 * mul as u128) >> shift) as u64
}

/// `decay_load(val, n)` (`kernel/sched/pelt.c`): approximately `val * y^n`.
///
/// Past `32 * 63` periods everything has decayed to zero; otherwise whole half-lives are
/// applied as right shifts and the remainder through the table, so the result carries
/// the kernel's truncations exactly.
#[inline]
pub fn decay_load(val: u64, n: u64) -> u64 {
    if n > LOAD_AVG_PERIOD * 63 {
        return 0;
    }
    let mut val = val;
    let mut local_n = n as u32;
    if local_n as u64 >= LOAD_AVG_PERIOD {
        val >>= local_n / LOAD_AVG_PERIOD as u32;
        local_n %= LOAD_AVG_PERIOD as u32;
    }
    mul_u64_u32_shr(val, RUNNABLE_AVG_YN_INV[local_n as usize], 32)
}

/// `__accumulate_pelt_segments(periods, d1, d3)` (`kernel/sched/pelt.c`): the weight of
/// the time elapsed across `periods` period boundaries, split into the end of the old
/// period (`d1`, decayed `periods` times), the full periods in between (from
/// `LOAD_AVG_MAX`) and the start of the current period (`d3`, not decayed).
///
/// The arithmetic is 32-bit, as in the kernel.
#[inline]
pub fn accumulate_pelt_segments(periods: u64, d1: u32, d3: u32) -> u32 {
    let c1 = decay_load(d1 as u64, periods) as u32;
    let c2 = LOAD_AVG_MAX
        .wrapping_sub(decay_load(LOAD_AVG_MAX as u64, periods) as u32)
        .wrapping_sub(1024);
    let c3 = d3;
    c1.wrapping_add(c2).wrapping_add(c3)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Regenerates the table as `calc_runnable_avg_yN_inv()` does: `y = pow(0.5, 1/32)`,
    /// `x = (unsigned int)(((1UL << 32) - 1) * pow(y, i))`.
    #[test]
    fn table_matches_generator_and_header() {
        let y = 0.5f64.powf(1.0 / 32.0);
        for (i, &entry) in RUNNABLE_AVG_YN_INV.iter().enumerate() {
            let x = (((1u64 << 32) - 1) as f64 * y.powf(i as f64)) as u32;
            assert_eq!(x, entry, "entry {i}");
        }
        // Spot values quoted in the kernel header and in fair-map.md section E.
        assert_eq!(RUNNABLE_AVG_YN_INV[0], 0xffffffff);
        assert_eq!(RUNNABLE_AVG_YN_INV[16], 0xb504f333);
        assert_eq!(RUNNABLE_AVG_YN_INV[31], 0x82cd8698);
    }

    #[test]
    fn load_avg_max_is_the_headers_value() {
        // `#define LOAD_AVG_MAX 47742` in kernel/sched/sched-pelt.h.
        assert_eq!(LOAD_AVG_MAX, 47742);
    }

    #[test]
    fn decay_load_canonical_values() {
        // y^0 uses 0xffffffff, so even n = 0 loses one unit: 1024 * (2^32-1) >> 32 = 1023.
        assert_eq!(decay_load(1024, 0), 1023);
        // n = 32 is one half-life: 1024 >> 1 = 512, then * (2^32-1) >> 32 = 511.
        assert_eq!(decay_load(1024, 32), 511);
        // n = 16: 1024 * 0xb504f333 >> 32 = floor(1024 * 3037000499 / 2^32)
        // = floor(724.077...) = 724.
        assert_eq!(decay_load(1024, 16), 724);
        // n = 1: 47742 * 0xfa83b2da >> 32; 0xfa83b2da = 4202935002, and
        // 47742 * 4202935002 / 2^32 = 46718.57... so 46718 (= LOAD_AVG_MAX - 1024, which is
        // why LOAD_AVG_MAX is the fixed point of the series).
        assert_eq!(decay_load(47742, 1), 46718);
        // The cut-off: n = 2016 still shifts by 63, n = 2017 is zero by the early return.
        assert_eq!(decay_load(u64::MAX, 2016), 0);
        assert_eq!(decay_load(1 << 63, 2016), 0); // (1<<63 >> 63) = 1, * y^0 >> 32 = 0.
        assert_eq!(decay_load(u64::MAX, 2017), 0);
        // (2^64 - 1) >> 62 = 3, then 3 * (2^32 - 1) >> 32 = 2.
        assert_eq!(decay_load(u64::MAX, 32 * 62), 2);
    }

    #[test]
    fn accumulate_segments_canonical() {
        // One boundary crossed: c1 = d1 * y, c2 = 47742 - 46718 - 1024 = 0, c3 = d3.
        // d1 = 1024: 1024 * 0xfa83b2da >> 32 = floor(1002.06...) = 1002.
        assert_eq!(accumulate_pelt_segments(1, 1024, 0), 1002);
        // Two boundaries: c2 = 47742 - decay(47742, 2) - 1024. decay(47742, 2) =
        // 47742 * 0xf5257d14 >> 32 = 47742 * 4112874772 / 2^32 = 45717.28... -> 45717,
        // c2 = 1001; c1 = decay(0, 2) = 0; c3 = 5.
        assert_eq!(accumulate_pelt_segments(2, 0, 5), 1001 + 5);
    }
}
