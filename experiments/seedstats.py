#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""The seeds' statistics: a sample of seeds' mean, standard error and quantiles, Student's
t distribution, and the paired test that the scoring rule (compare.py) uses.

Plain Python (CI runs python3 without numpy or scipy): the t distribution's tail comes
from the regularized incomplete beta function, evaluated by its continued fraction
(Lentz's method), and its quantile by bisection on that tail.
"""
import math

# The two-sided significance level of fairsim's paired test.
ALPHA = 0.05


def mean_se(values):
    """Mean and standard error of the mean (None with fewer than two values)."""
    vals = [v for v in values if v is not None]
    if not vals:
        return None, None
    n = len(vals)
    m = sum(vals) / n
    if n < 2:
        return m, None
    sd = math.sqrt(sum((v - m) ** 2 for v in vals) / (n - 1))
    return m, sd / math.sqrt(n)


def sd(values):
    n = len(values)
    if n < 2:
        return 0.0
    m = sum(values) / n
    return math.sqrt(sum((v - m) ** 2 for v in values) / (n - 1))


def sd_se(s, n):
    """Normal-theory standard error of a sample standard deviation s over n runs."""
    return s / math.sqrt(2 * (n - 1)) if n > 1 else None


def quantile(xs, q):
    """pandas' and numpy's default quantile: linear between the closest ranks."""
    s = sorted(xs)
    pos = (len(s) - 1) * q
    lo = math.floor(pos)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)


def quantile_se(s, n, q):
    """Normal-theory standard error of the q-quantile of n runs with sd s:
    sqrt(q (1 - q) / n) / phi(z_q) * s."""
    if n < 2:
        return None
    z = _norm_ppf(q)
    phi = math.exp(-z * z / 2) / math.sqrt(2 * math.pi)
    return s * math.sqrt(q * (1 - q) / n) / phi


def _norm_ppf(q):
    # Bisection on erf: plenty for a standard error.
    lo, hi = -10.0, 10.0
    for _ in range(100):
        mid = (lo + hi) / 2
        if 0.5 * (1 + math.erf(mid / math.sqrt(2))) < q:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def _betacf(a, b, x):
    """The continued fraction of the incomplete beta function I_x(a, b)."""
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 400):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < 1e-15:
            break
    return h


def betainc(a, b, x):
    """The regularized incomplete beta function I_x(a, b), 0 <= x <= 1."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    lbeta = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
    front = math.exp(lbeta + a * math.log(x) + b * math.log1p(-x))
    # The fraction converges fast on the side of the distribution's mean.
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _betacf(a, b, x) / a
    return 1.0 - front * _betacf(b, a, 1.0 - x) / b


def t_two_sided_p(t, df):
    """P(|T| >= |t|) for Student's t with df degrees of freedom."""
    if math.isinf(t):
        return 0.0
    if math.isnan(t):
        return 1.0
    return betainc(df / 2.0, 0.5, df / (df + t * t))


def t_quantile(p, df):
    """The p-quantile of Student's t with df degrees of freedom (0 < p < 1)."""
    if p == 0.5:
        return 0.0
    if p < 0.5:
        return -t_quantile(1.0 - p, df)
    # Two-sided tail 2 (1 - p): bisection on t_two_sided_p, which falls with |t|.
    target = 2.0 * (1.0 - p)
    lo, hi = 0.0, 1.0
    while t_two_sided_p(hi, df) > target:
        hi *= 2.0
    for _ in range(200):
        mid = (lo + hi) / 2.0
        if t_two_sided_p(mid, df) > target:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2.0


class PairedResult:
    """A paired test's outcome: n pairs, the scale the pairs were compared on ('ln ratio'
    or 'difference'), the mean per-seed change on it, t, the two-sided p and whether
    p < ALPHA (None when there are too few pairs to test)."""

    def __init__(self, n, scale, mean, t, p):
        self.n, self.scale, self.mean, self.t, self.p = n, scale, mean, t, p

    @property
    def significant(self):
        if self.p is None:
            return None
        return self.p < ALPHA

    def __repr__(self):
        return (f"PairedResult(n={self.n}, scale={self.scale!r}, mean={self.mean}, "
                f"t={self.t}, p={self.p})")


def paired_test(before, after):
    """The paired t test of after against before, matched by key (seed).

    before and after map a seed to that seed's value; only the seeds both sides ran are
    paired. Where every paired value is positive the test runs on the per-seed log ratios
    ln(after/before), so that a change is measured as a fold change, as the posting's is;
    where any is zero or negative (no log ratio) it runs on the per-seed differences
    after - before. t = mean / (sd / sqrt(n)) with n - 1 degrees of freedom, two-sided.
    Fewer than 2 pairs cannot be tested (p None). Pairs that all change by exactly the
    same amount have sd 0: t is infinite (p 0) unless that amount is 0 (p 1)."""
    seeds = sorted(set(before) & set(after), key=str)
    pairs = [(before[s], after[s]) for s in seeds
             if before[s] is not None and after[s] is not None]
    n = len(pairs)
    if all(b > 0 and a > 0 for b, a in pairs):
        scale, d = "ln ratio", [math.log(a / b) for b, a in pairs]
    else:
        scale, d = "difference", [a - b for b, a in pairs]
    if n < 2:
        return PairedResult(n, scale, d[0] if d else None, None, None)
    mean = sum(d) / n
    var = sum((x - mean) ** 2 for x in d) / (n - 1)
    # Differences below a part in 10^12 of the values are rounding, not spread.
    scale_ref = max(abs(x) for x in d) or 1.0
    if var <= (1e-12 * scale_ref) ** 2:
        if abs(mean) <= 1e-12 * scale_ref or mean == 0:
            return PairedResult(n, scale, 0.0, 0.0, 1.0)
        return PairedResult(n, scale, mean, math.copysign(math.inf, mean), 0.0)
    t = mean / math.sqrt(var / n)
    return PairedResult(n, scale, mean, t, t_two_sided_p(t, n - 1))
