//! The statistics of `compare --until`: the two-sided tails of the normal and of Student's
//! t (any real degrees of freedom, as Welch's test gives), their inverses, and the
//! Lan-DeMets alpha-spending function of the O'Brien-Fleming type
//! (K. K. G. Lan and D. L. DeMets, "Discrete sequential boundaries for clinical trials",
//! Biometrika 70(3), 659-663, 1983) with the nominal level of each look. Pure Rust, so
//! that the tool needs no statistics crate; each function is checked against closed forms
//! and hand-computed values below.
//!
//! Statistics on results are reporting, not scheduling decisions, so they use floating
//! point. The module imports nothing else of the crate (the table's marks read its t
//! quantile); Welch's statistic, which reads compare's summaries, is in
//! `cmd::compare_until`.

/// The two-sided upper tail of the standard normal, `2 (1 - Phi(z))` for `z >= 0`,
/// through `erfc` (Numerical Recipes' Chebyshev fit, fractional error below 1.2e-7
/// everywhere, enough for the levels a spending function gives).
pub(crate) fn normal_two_sided(z: f64) -> f64 {
    let x = z.abs() / std::f64::consts::SQRT_2;
    let t = 1.0 / (1.0 + 0.5 * x);
    let poly = -x * x - 1.265_512_23
        + t * (1.000_023_68
            + t * (0.374_091_96
                + t * (0.096_784_18
                    + t * (-0.186_288_06
                        + t * (0.278_868_07
                            + t * (-1.135_203_98
                                + t * (1.488_515_87 + t * (-0.822_152_23 + t * 0.170_872_77))))))));
    (t * poly.exp()).min(1.0)
}

/// The z with `normal_two_sided(z) == p`, by bisection (the tail falls monotonically).
fn normal_two_sided_inverse(p: f64) -> f64 {
    let (mut lo, mut hi) = (0.0f64, 40.0f64);
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if normal_two_sided(mid) > p {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    0.5 * (lo + hi)
}

/// `ln Gamma(x)` for `x >= 0.5`, Lanczos' approximation with g = 7 and nine terms
/// (relative error about 1e-15).
fn ln_gamma(x: f64) -> f64 {
    const P: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    let x = x - 1.0;
    let mut a = P[0];
    for (i, p) in P.iter().enumerate().skip(1) {
        a += p / (x + i as f64);
    }
    let t = x + 7.5;
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + a.ln()
}

/// The continued fraction of the incomplete beta function, by the modified Lentz method
/// (Numerical Recipes' `betacf`).
fn beta_cf(a: f64, b: f64, x: f64) -> f64 {
    const TINY: f64 = 1e-300;
    let (qab, qap, qam) = (a + b, a + 1.0, a - 1.0);
    let mut c = 1.0;
    let mut d = 1.0 - qab * x / qap;
    if d.abs() < TINY {
        d = TINY;
    }
    d = 1.0 / d;
    let mut h = d;
    for m in 1..=300 {
        let m = f64::from(m);
        let m2 = 2.0 * m;
        for aa in [
            m * (b - m) * x / ((qam + m2) * (a + m2)),
            -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2)),
        ] {
            d = 1.0 + aa * d;
            if d.abs() < TINY {
                d = TINY;
            }
            c = 1.0 + aa / c;
            if c.abs() < TINY {
                c = TINY;
            }
            d = 1.0 / d;
            h *= d * c;
        }
        if (d * c - 1.0).abs() < 1e-15 {
            break;
        }
    }
    h
}

/// The regularized incomplete beta function `I_x(a, b)`.
fn inc_beta(a: f64, b: f64, x: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let front =
        (ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (1.0 - x).ln()).exp();
    if x < (a + 1.0) / (a + b + 2.0) {
        front * beta_cf(a, b, x) / a
    } else {
        1.0 - front * beta_cf(b, a, 1.0 - x) / b
    }
}

/// The two-sided p-value of Student's t with `df` degrees of freedom (any real
/// `df > 0`, as Welch's gives): `P(|T| > |t|) = I_{df/(df+t^2)}(df/2, 1/2)`.
pub(crate) fn t_two_sided(t: f64, df: f64) -> f64 {
    inc_beta(df / 2.0, 0.5, df / (df + t * t))
}

/// The t with `t_two_sided(t, df) == p`, by bisection: 2.776 for p = 0.05 and df = 4.
pub(crate) fn t_quantile_two_sided(p: f64, df: f64) -> f64 {
    let (mut lo, mut hi) = (0.0f64, 1e7f64);
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if t_two_sided(mid, df) > p {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    0.5 * (lo + hi)
}

/// The Lan-DeMets O'Brien-Fleming-type spending function: the alpha spent once a
/// fraction `t` of the maximum information (the seed cap) is in, `2 - 2 Phi(z / sqrt(t))`
/// with `z` the two-sided normal quantile of `alpha`; 0 at `t = 0`, `alpha` at `t = 1`.
pub(crate) fn obf_spent(alpha: f64, t: f64) -> f64 {
    if t <= 0.0 {
        return 0.0;
    }
    if t >= 1.0 {
        return alpha;
    }
    normal_two_sided(normal_two_sided_inverse(alpha) / t.sqrt())
}

/// The nominal level of the look at `n` seeds: what the spending function grew by since
/// the previous look (at `n - 1` seeds, or none before `min_seeds`).
pub(crate) fn look_alpha(alpha: f64, n: usize, min_seeds: usize, cap: usize) -> f64 {
    let frac = |k: usize| k as f64 / cap as f64;
    let before = if n > min_seeds {
        obf_spent(alpha, frac(n - 1))
    } else {
        0.0
    };
    obf_spent(alpha, frac(n)) - before
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, rel: f64) -> bool {
        (a - b).abs() <= rel * b.abs().max(1e-300)
    }

    #[test]
    fn t_tails_match_closed_forms() {
        // df 1 is Cauchy: P(|T| > 1) = 1 - 2 atan(1) / pi = 0.5.
        assert!(close(t_two_sided(1.0, 1.0), 0.5, 1e-9));
        // df 2: P(|T| > t) = 1 - t / sqrt(t^2 + 2); at t = 2, 1 - 2 / sqrt(6).
        assert!(close(t_two_sided(2.0, 2.0), 0.183_503_419_072_273_85, 1e-9));
        // The tables' 97.5% quantiles.
        assert!(close(t_quantile_two_sided(0.05, 4.0), 2.776_445, 1e-6));
        assert!(close(t_quantile_two_sided(0.05, 10.0), 2.228_139, 1e-6));
    }

    #[test]
    fn normal_tail_and_spending_match_hand_values() {
        assert!(close(normal_two_sided(1.959_963_984_540_054), 0.05, 1e-6));
        // 2 - 2 Phi(1.959964 / sqrt(t)), from Python's math.erfc.
        assert!(close(obf_spent(0.05, 0.25), 8.857_543_832_140_409e-5, 1e-5));
        assert!(close(obf_spent(0.05, 0.5), 0.005_574_596_680_784_421, 1e-5));
        assert_eq!(obf_spent(0.05, 1.0), 0.05);
        assert_eq!(obf_spent(0.05, 0.0), 0.0);
        // The looks at 5..=20 seeds spend exactly alpha between them; the first takes
        // what the function reached at 5 of 20.
        let total: f64 = (5..=20).map(|n| look_alpha(0.05, n, 5, 20)).sum();
        assert!(close(total, 0.05, 1e-12));
        assert!(close(
            look_alpha(0.05, 5, 5, 20),
            8.857_543_832_140_409e-5,
            1e-5
        ));
        // obf_spent(6/20) - obf_spent(5/20), from Python's math.erfc.
        assert!(close(
            look_alpha(0.05, 6, 5, 20),
            2.571_441_418_476_398_7e-4,
            1e-5
        ));
        // A cap equal to the minimum is the fixed-sample test.
        assert_eq!(look_alpha(0.05, 5, 5, 5), 0.05);
    }
}
