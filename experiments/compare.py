#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""The seeds' shared comparison rule and summary line.

Every `experiments/seed-00N/table.py` lists the posting's headline comparisons (a
comparison is the change of one headline figure from the posting's before kernel to its
after kernel), puts fairsim's change of the same figure beside it, and ends with exactly
one line:

    N comparisons, D same direction, W within 2x, X not produced

printed after the rule (RULE) and the seed's definition of noise. This module holds the
rule, the marks, the line's format and its parser, so that the five tables count alike.

Usage as a script:
    compare.py check [FILE]   exit 0 when the last line of FILE (default: stdin) is a
                              well-formed summary line, else print why and exit 1
    compare.py rule           print the rule
"""
import math
import re
import sys

RULE = ("same direction = same sign of change, or both inside their own noise; "
        "within 2x = fairsim's relative change between half and twice the posting's; "
        "= / same marks only when both sides are inside noise; "
        "not produced = a posting figure fairsim cannot compute (counted in N)")

# fairsim's side of every seed: its seeds are its runs.
FAIRSIM_NOISE = ("fairsim: a change is inside noise when |after - before| < 2 standard errors "
                 "of the difference, sqrt(se_before^2 + se_after^2), each side's se over its "
                 "seeds (a mean: sd/sqrt(n); a statistic of the seeds' distribution: its "
                 "normal-theory se, given beside it); one seed has no se: outside noise; on "
                 "either side, a change of exactly 0 is inside noise")

SUMMARY_RE = re.compile(r"^(\d+) comparisons, (\d+) same direction, (\d+) within 2x, "
                        r"(\d+) not produced$")


def parse_summary(line):
    """(N, D, W, X) from a summary line; ValueError if the line is malformed or its
    counts cannot hold together (D and W count produced comparisons only, and a
    comparison within 2x has the posting's sign, so W <= D <= N - X)."""
    m = SUMMARY_RE.match(line.rstrip("\n"))
    if not m:
        raise ValueError(f"not a summary line: {line.rstrip()!r}; expected "
                         "'N comparisons, D same direction, W within 2x, X not produced'")
    n, d, w, x = (int(g) for g in m.groups())
    if x > n or d > n - x or w > d:
        raise ValueError(f"inconsistent counts in {line.rstrip()!r}: need "
                         "W <= D <= N - X and X <= N")
    return n, d, w, x


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


class Comparison:
    """One headline figure: the posting's before/after and fairsim's, each side with
    its standard errors where it has them (None: no noise known, so outside noise).
    A figure fairsim cannot compute has fairsim's values None: not produced."""

    def __init__(self, name, post_before, post_after, fs_before=None, fs_after=None,
                 post_se=(None, None), fs_se=(None, None), why=""):
        self.name = name
        self.pb, self.pa = post_before, post_after
        self.fb, self.fa = fs_before, fs_after
        self.pse, self.fse = post_se, fs_se
        self.why = why

    @property
    def produced(self):
        return self.fb is not None and self.fa is not None

    @staticmethod
    def _inside(b, a, se):
        # No change is inside any noise, known or not.
        if a == b:
            return True
        if se[0] is None or se[1] is None:
            return False
        return abs(a - b) < 2 * math.sqrt(se[0] ** 2 + se[1] ** 2)

    @staticmethod
    def _rel(b, a):
        if b == 0:
            return 0.0 if a == 0 else math.copysign(math.inf, a)
        return (a - b) / abs(b)

    def post_inside(self):
        return self._inside(self.pb, self.pa, self.pse)

    def fs_inside(self):
        return self.produced and self._inside(self.fb, self.fa, self.fse)

    def same_direction(self):
        if not self.produced:
            return False
        if self.post_inside() and self.fs_inside():
            return True
        ps, fs = self._rel(self.pb, self.pa), self._rel(self.fb, self.fa)
        # The sign of no change is 0: both sides unchanged is the same direction.
        return (ps > 0) - (ps < 0) == (fs > 0) - (fs < 0)

    def within_2x(self):
        if not self.produced:
            return False
        ps, fs = self._rel(self.pb, self.pa), self._rel(self.fb, self.fa)
        if ps == 0:
            # Half and twice no change is no change.
            return fs == 0
        if math.isinf(ps) or math.isinf(fs):
            return False
        r = fs / ps
        return 0.5 <= r <= 2.0

    def mark(self):
        if not self.produced:
            return "n/p"
        if self.post_inside() and self.fs_inside():
            return "="
        return "same" if self.same_direction() else "!"


def _fmt(v):
    if v is None:
        return "-"
    a = abs(v)
    if a != 0 and (a >= 1e5 or a < 1e-2):
        return f"{v:.3g}"
    return f"{v:.4g}" if a < 10 else f"{v:.1f}"


def _pct(b, a):
    if b is None or a is None:
        return "-"
    r = Comparison._rel(b, a)
    return "inf" if math.isinf(r) else f"{100 * r:+.1f}%"


def print_comparisons(title, comparisons, noise_lines, extra_heads=(), extra_cells=None):
    """The headline table, the rule, the noise definitions and the summary line (last).
    extra_heads/extra_cells: columns printed beside fairsim's (the 6.12 reference, never
    counted)."""
    print(title)
    w = max(24, max(len(c.name) for c in comparisons))
    head = (f"{'figure':<{w}} | {'posting before':>14} {'after':>10} {'change':>9} | "
            f"{'fairsim before':>14} {'after':>10} {'change':>9} | {'dir':>4} {'2x':>3}")
    for h in extra_heads:
        head += f" | {h}"
    print(head)
    print("-" * len(head))
    for i, c in enumerate(comparisons):
        pn = "~" if c.post_inside() else " "
        fn = "~" if c.fs_inside() else " "
        row = (f"{c.name:<{w}} | {_fmt(c.pb):>14} {_fmt(c.pa):>10} {_pct(c.pb, c.pa):>8}{pn} | "
               f"{_fmt(c.fb):>14} {_fmt(c.fa):>10} {_pct(c.fb, c.fa):>8}{fn} | "
               f"{c.mark():>4} {'2x' if c.within_2x() else '':>3}")
        if extra_cells is not None:
            for cell in extra_cells[i]:
                row += f" | {cell}"
        print(row)
    notes = [c for c in comparisons if c.why]
    if notes:
        print()
        for c in notes:
            print(f"  {c.name}: {c.why}")
    print()
    print("~ marks a change inside its side's noise; dir: same, = (both inside noise), "
          "! (differs), n/p (not produced)")
    print(f"rule: {RULE}")
    print(f"noise, {FAIRSIM_NOISE}")
    for line in noise_lines:
        print(f"noise, {line}")
    print(summary_line(comparisons))


def summary_line(comparisons):
    n = len(comparisons)
    x = sum(1 for c in comparisons if not c.produced)
    d = sum(1 for c in comparisons if c.same_direction())
    w = sum(1 for c in comparisons if c.within_2x())
    return f"{n} comparisons, {d} same direction, {w} within 2x, {x} not produced"


def main(argv):
    if len(argv) >= 2 and argv[1] == "rule":
        print(RULE)
        return 0
    if len(argv) >= 2 and argv[1] == "check":
        text = open(argv[2]).read() if len(argv) > 2 and argv[2] != "-" else sys.stdin.read()
        lines = [l for l in text.splitlines()]
        if not lines:
            print("compare.py check: empty input", file=sys.stderr)
            return 1
        try:
            n, d, w, x = parse_summary(lines[-1])
        except ValueError as e:
            print(f"compare.py check: {e}", file=sys.stderr)
            return 1
        print(f"ok: N={n} D={d} W={w} X={x}")
        return 0
    print(__doc__.split("\n\n")[-1], file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
