//! forkbench's arithmetic: the integer log-uniform draw of a command's work, the kernel's
//! `cputime_adjust`, and the mmtests and `time` layouts of the report.

use fairsim_des::rng::SimRng;

/// Fractional bits of the fixed-point base-2 logarithms below.
const FRAC_BITS: u32 = 16;

/// `log2(x)` in Q16 for `x >= 1`, by the bit-by-bit squaring method: the integer part is
/// the highest set bit; each fractional bit comes from squaring the mantissa and checking
/// whether it reached 2. Integer arithmetic only, so that every platform draws the same
/// works.
pub fn log2_q16(x: u64) -> u64 {
    let x = x.max(1);
    let n = u64::from(63 - x.leading_zeros());
    // The mantissa x / 2^n in [1, 2), as Q32.
    let mut m: u128 = (u128::from(x) << 32) >> n;
    let mut frac = 0u64;
    for bit in (0..FRAC_BITS).rev() {
        m = (m * m) >> 32;
        if m >= 2u128 << 32 {
            m >>= 1;
            frac |= 1 << bit;
        }
    }
    (n << FRAC_BITS) | frac
}

/// `2^(y / 2^16)`, rounded down, for `y` in Q16 below 64 in its integer part: the
/// fraction's bits pick factors `2^(2^-k)`, each the integer square root of the one
/// before, multiplied in Q62 (so that the rounding of sixteen factors stays far below one
/// unit of a result that is at least 1).
pub fn exp2_q16(y: u64) -> u64 {
    const Q: u32 = 62;
    let int = (y >> FRAC_BITS).min(63);
    let frac = y & ((1 << FRAC_BITS) - 1);
    // root = 2^(2^-k) in Q62, starting from sqrt(2).
    let mut root: u128 = (2u128 << (2 * Q)).isqrt();
    let mut acc: u128 = 1u128 << Q;
    for k in 1..=FRAC_BITS {
        if frac & (1 << (FRAC_BITS - k)) != 0 {
            acc = (acc * root) >> Q;
        }
        root = (root << Q).isqrt();
    }
    let v = (acc << int) >> Q;
    u64::try_from(v).unwrap_or(u64::MAX)
}

/// How a command's work is drawn between its bounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WorkDist {
    /// Uniform in log space: as many commands between 200 us and 400 us as between 1 ms
    /// and 2 ms.
    Log,
    /// Uniform.
    Uniform,
}

impl WorkDist {
    /// The name the `dist` key takes.
    pub fn name(self) -> &'static str {
        match self {
            WorkDist::Log => "log",
            WorkDist::Uniform => "uniform",
        }
    }

    /// A value in `lo..=hi` drawn from `rng`.
    pub fn draw(self, rng: &mut SimRng, lo: u64, hi: u64) -> u64 {
        if hi <= lo {
            return lo;
        }
        match self {
            WorkDist::Uniform => lo + rng.below(hi - lo + 1),
            WorkDist::Log => {
                let (a, b) = (log2_q16(lo), log2_q16(hi));
                let y = a + rng.below(b - a + 1);
                exp2_q16(y).clamp(lo, hi)
            }
        }
    }
}

/// How the report splits a process's CPU time into user and system time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cputime {
    /// `CONFIG_TICK_CPU_ACCOUNTING`, the x86 default: each tick samples the current task
    /// in user or kernel mode, and `cputime_adjust` scales the samples to the task's
    /// runtime when its times are read (here at its exit, as `wait4` reads them).
    Tick,
    /// Exact user and system time, as `CONFIG_VIRT_CPU_ACCOUNTING_GEN` measures it.
    Precise,
}

impl Cputime {
    /// The name the `cputime` key takes.
    pub fn name(self) -> &'static str {
        match self {
            Cputime::Tick => "tick",
            Cputime::Precise => "precise",
        }
    }
}

/// Linux 6.12's `cputime_adjust` (kernel/sched/cputime.c) for one read with a zero
/// `prev_cputime`: the runtime `rtime` split in the ratio of the tick samples `stime` and
/// `utime`; with no system samples it is all user time, with no user samples all system
/// time. Returns `(utime, stime)`. `mul_u64_u64_div_u64` is exact in 128 bits, and the
/// `stime > rtime` clamp of v6.11 cannot trigger then.
pub fn cputime_adjust(rtime: u64, utime: u64, stime: u64) -> (u64, u64) {
    let stime = if stime == 0 {
        0
    } else if utime == 0 {
        rtime
    } else {
        let s = u128::from(stime) * u128::from(rtime) / (u128::from(stime) + u128::from(utime));
        u64::try_from(s).unwrap_or(rtime).min(rtime)
    };
    (rtime - stime, stime)
}

/// Seconds with two decimals, as mmtests prints times.
fn secs(ns: u64) -> f64 {
    ns as f64 / 1e9
}

/// The report's text: mmtests' `Elapsed` summary of one iteration (min, mean, stddev,
/// coeffvar, max, each with its change against itself), its `User`/`System`/`Elapsed`
/// duration block, the line `run-mmtests.sh`'s `/usr/bin/time -f` writes for it, and the
/// shell's `time` lines.
pub(crate) fn mmtests_text(name: &str, elapsed: u64, user: u64, sys: u64) -> String {
    let mut t = String::new();
    for op in ["min", "mean", "stddev", "coeffvar", "max"] {
        // One iteration: min, mean and max are the elapsed time; it varies by nothing.
        let v = match op {
            "stddev" | "coeffvar" => 0.0,
            _ => secs(elapsed),
        };
        t.push_str(&format!(
            "{:<16}{v:>12.2} ({:>7.2}%)\n",
            format!("Elapsed {op}"),
            0.0
        ));
    }
    t.push('\n');
    t.push_str(&format!("{:<8}{name:>12}\n", ""));
    for (label, ns) in [("User", user), ("System", sys), ("Elapsed", elapsed)] {
        t.push_str(&format!("{label:<8}{:>12.2}\n", secs(ns)));
    }
    t.push('\n');
    t.push_str(&format!(
        "time :: {name} {:.2} user {:.2} system {:.2} elapsed\n",
        secs(user),
        secs(sys),
        secs(elapsed)
    ));
    t.push('\n');
    for (label, ns) in [("real", elapsed), ("user", user), ("sys", sys)] {
        let ms = ns / 1_000_000;
        t.push_str(&format!(
            "{label}\t{}m{}.{:03}s\n",
            ms / 60_000,
            ms / 1000 % 60,
            ms % 1000
        ));
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log2_and_exp2_are_inverse_within_a_unit() {
        assert_eq!(log2_q16(1), 0);
        assert_eq!(log2_q16(2), 1 << 16);
        assert_eq!(log2_q16(1024), 10 << 16);
        assert_eq!(exp2_q16(0), 1);
        assert_eq!(exp2_q16(10 << 16), 1024);
        // sqrt(2) * 2^20 = 1482910.4
        assert_eq!(exp2_q16((20 << 16) | (1 << 15)), 1_482_910);
        for x in [3u64, 1000, 300_000, 3_000_000, 123_456_789] {
            let back = exp2_q16(log2_q16(x));
            // Q16 logarithms lose at most 2^-16 of a doubling: 0.0011% of the value.
            assert!(back <= x && x - back <= x / 50_000 + 1, "{x} -> {back}");
        }
    }

    #[test]
    fn log_uniform_draws_stay_in_bounds_and_spread_by_octave() {
        let mut rng = SimRng::new(1);
        let (lo, hi) = (200_000, 3_200_000);
        let mut below_400us = 0;
        let n = 4000;
        for _ in 0..n {
            let v = WorkDist::Log.draw(&mut rng, lo, hi);
            assert!((lo..=hi).contains(&v));
            if v < 400_000 {
                below_400us += 1;
            }
        }
        // Four octaves: a quarter of the draws in the first one (1000 expected).
        assert!((850..1150).contains(&below_400us), "{below_400us}");
        assert_eq!(WorkDist::Uniform.draw(&mut rng, 5, 5), 5);
    }

    #[test]
    fn cputime_adjust_follows_the_kernel_cases() {
        assert_eq!(cputime_adjust(1000, 0, 0), (1000, 0));
        assert_eq!(cputime_adjust(1000, 0, 3), (0, 1000));
        assert_eq!(cputime_adjust(1000, 3, 0), (1000, 0));
        assert_eq!(cputime_adjust(1000, 1, 3), (250, 750));
        let (u, s) = cputime_adjust(999, 2, 1);
        assert_eq!((u, s), (666, 333));
    }

    #[test]
    fn text_has_the_mmtests_and_time_layouts() {
        let t = mmtests_text(
            "forkbench",
            1_706_060_000_000,
            905_690_000_000,
            813_130_000_000,
        );
        assert!(
            t.contains("Elapsed min          1706.06 (   0.00%)\n"),
            "{t}"
        );
        assert!(t.contains("User          905.69\n"), "{t}");
        assert!(t.contains("time :: forkbench 905.69 user 813.13 system 1706.06 elapsed\n"));
        assert!(t.contains("real\t28m26.060s\n"), "{t}");
    }
}
