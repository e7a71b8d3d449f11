#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""The seeds' shared scoring rule and summary line.

Every `experiments/seed-00N/table.py` lists the posting's headline comparisons (a
comparison is the change of one headline figure from the posting's before kernel to its
after kernel), puts fairsim's change of the same figure beside it, and ends with exactly
one line:

    N comparisons, D same direction, W within 2x, X not produced

printed after the rule (RULE) and the seed's definition of noise. This module holds the
rule, the marks, the line's format and its parser, so that the five tables count alike.

The rule (issue 48) is strict: fairsim's change counts in the posting's direction only
when it is detectable (a paired test over the seeds both kernels ran, seedstats.py) and at
least a tenth of the posting's in log terms; within 2x compares fold changes in log terms;
a claim of no effect is judged by noise and by the posting's printed resolution; and rows
that are one measurement (a `group`) count once. The rule before issue 48 stays available
for comparison: COMPARE_RULE=old in the environment makes every table print it and count
by it (`COMPARE_RULE=old python3 experiments/seed-001/table.py OUT`).

Usage as a script:
    compare.py check [FILE]   exit 0 when the last line of FILE (default: stdin) is a
                              well-formed summary line, else print why and exit 1
    compare.py rule           print the rule (COMPARE_RULE=old: the old one)
"""
import math
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# The tables import the seed statistics from here.
from seedstats import (ALPHA, mean_se, paired_test, quantile, quantile_se, sd,  # noqa: E402,F401
                       sd_se)

# The environment variable that selects the rule, and its values.
RULE_ENV = "COMPARE_RULE"
RULES = ("new", "old")

# Fairsim's change must be at least this share of the posting's, in log terms, to count
# as the same direction: a change that is detectable but a hundredth of the posting's
# reproduces nothing of it.
MIN_SHARE = 0.1

RULE_CLAUSES = [
    "same direction = same sign of change, with fairsim's change detectable (by the test "
    "below) and at least a tenth of the posting's in log terms, |ln(fairsim after/before)| "
    ">= 0.1 |ln(posting after/before)|; or, where the posting's change is inside its noise "
    "or below its resolution (a claim of no effect), fairsim's inside its own noise or below "
    "the posting's resolution",
    "detectable = paired by seed where both kernels ran the same seeds: Student's t on the "
    "per-seed ln(after/before) (on after - before where a value is not positive), "
    f"two-sided p < {ALPHA} with n - 1 degrees of freedom; fewer than 2 paired seeds: not "
    "testable, so neither detectable nor inside noise; a figure without per-seed values "
    "(a quantile, min, max or spread of the seeds): |after - before| >= 2 standard errors "
    "of the difference",
    "within 2x = same direction and |ln(fairsim after/before)| between half and twice "
    "|ln(posting after/before)| (signed relative changes where a figure is not positive); "
    "for a claim of no effect, fairsim's relative change below the posting's relative "
    "resolution",
    "resolution = one unit of the last digit the posting prints (the coarser of its before "
    "and after; the table's, where the posting's figure is computed from others); relative "
    "resolution = that unit over the posting's before",
    "rows that are one measurement count once, by their representative row (listed under "
    "the table)",
    "not produced = a posting figure fairsim cannot compute (counted in N)",
]
RULE = "; ".join(RULE_CLAUSES)

OLD_RULE = ("same direction = same sign of change, or both inside their own noise; "
            "within 2x = fairsim's relative change between half and twice the posting's; "
            "= / same marks only when both sides are inside noise; "
            "not produced = a posting figure fairsim cannot compute (counted in N)")

# fairsim's side of every seed: its seeds are its runs.
FAIRSIM_NOISE = ("fairsim: a change is inside noise when the paired test above finds no "
                 "change (p >= 0.05), or, for a figure without per-seed values, when "
                 "|after - before| < 2 standard errors of the difference, sqrt(se_before^2 + "
                 "se_after^2), each side's se over its seeds (a statistic of the seeds' "
                 "distribution: its normal-theory se, given beside it); one seed has no se: "
                 "not testable; on either side, a change of exactly 0 is inside noise")
OLD_FAIRSIM_NOISE = ("fairsim: a change is inside noise when |after - before| < 2 standard "
                     "errors of the difference, sqrt(se_before^2 + se_after^2), each side's se "
                     "over its seeds (a mean: sd/sqrt(n); a statistic of the seeds' "
                     "distribution: its normal-theory se, given beside it); one seed has no se:"
                     " outside noise; on either side, a change of exactly 0 is inside noise")


def rule_name():
    """The rule in force: COMPARE_RULE's value, 'new' when unset."""
    r = os.environ.get(RULE_ENV, "new") or "new"
    if r not in RULES:
        raise SystemExit(f"compare.py: {RULE_ENV}={r!r}: expected one of {', '.join(RULES)}")
    return r


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


def resolution(x):
    """One unit of the last digit of x as written: 1 for an int or a whole float, 0.1 for
    74.9, 0.01 for 2.09; a figure computed from others (45210 / 822) gets the unit of its
    12th decimal, that is, no resolution to speak of."""
    if isinstance(x, int) or float(x).is_integer():
        return 1.0
    for k in range(1, 13):
        if abs(round(x, k) - x) <= 1e-12 * max(1.0, abs(x)):
            return 10.0 ** -k
    return 1e-12


def _sign(x):
    return (x > 0) - (x < 0)


def _fold(b, a):
    """ln(a/b) where both are positive, else None."""
    if b is None or a is None or b <= 0 or a <= 0:
        return None
    return math.log(a / b)


class Comparison:
    """One headline figure: the posting's before/after and fairsim's, each side with its
    standard errors where it has them (None: no noise known). A figure fairsim cannot
    compute has fairsim's values None: not produced.

    fs_seeds: fairsim's per-seed values, (before, after), each a dict seed -> value, where
    the figure is the mean (or the sum) of per-seed values and both kernels ran the same
    seeds: the detection test pairs them seed by seed. Without them fairsim's noise is the
    unpaired 2-se test on fs_se.
    post_res: one unit of the last digit the posting prints for this figure (default: the
    coarser of resolution(post_before) and resolution(post_after)).
    group: the name of the measurement this row shares with others (rows of one group
    count once in the summary, by the row given group_rep=True, else the group's first
    row)."""

    def __init__(self, name, post_before, post_after, fs_before=None, fs_after=None,
                 post_se=(None, None), fs_se=(None, None), why="", fs_seeds=None,
                 post_res=None, group=None, group_rep=False):
        self.name = name
        self.pb, self.pa = post_before, post_after
        self.fb, self.fa = fs_before, fs_after
        self.pse, self.fse = post_se, fs_se
        self.why = why
        self.fs_seeds = fs_seeds
        if post_res is None and post_before is not None and post_after is not None:
            post_res = max(resolution(post_before), resolution(post_after))
        self.post_res = post_res
        self.group, self.group_rep = group, group_rep
        self._paired = None

    @property
    def produced(self):
        return self.fb is not None and self.fa is not None

    # -- the old rule (before issue 48), kept so that a table can print its line --

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

    def _old_fs_inside(self):
        return self.produced and self._inside(self.fb, self.fa, self.fse)

    def _old_same_direction(self):
        if not self.produced:
            return False
        if self.post_inside() and self._old_fs_inside():
            return True
        ps, fs = self._rel(self.pb, self.pa), self._rel(self.fb, self.fa)
        return _sign(ps) == _sign(fs)

    def _old_within_2x(self):
        if not self.produced:
            return False
        ps, fs = self._rel(self.pb, self.pa), self._rel(self.fb, self.fa)
        if ps == 0:
            return fs == 0
        if math.isinf(ps) or math.isinf(fs):
            return False
        return 0.5 <= fs / ps <= 2.0

    # -- the posting's side (both rules) --

    def post_inside(self):
        """The posting's change is inside its noise (old rule: that alone; new rule: or
        below its printed resolution, so that both claim no effect)."""
        if self._inside(self.pb, self.pa, self.pse):
            return True
        if rule_name() == "old":
            return False
        return self.post_res is not None and abs(self.pa - self.pb) < self.post_res

    # -- fairsim's side (new rule) --

    def paired(self):
        """The paired test over fs_seeds (a PairedResult), or None without them."""
        if self.fs_seeds is None:
            return None
        if self._paired is None:
            self._paired = paired_test(*self.fs_seeds)
        return self._paired

    def fs_state(self):
        """'detected', 'noise' (tested, no change found) or 'untested' (too few seeds, or
        no se); None when not produced."""
        if not self.produced:
            return None
        if self.fa == self.fb:
            return "noise"
        pt = self.paired()
        if pt is not None:
            if pt.significant is None:
                return "untested"
            if not pt.significant:
                return "noise"
            # A paired change against the figure's own sign is no change of the figure.
            return "detected" if _sign(pt.mean) == _sign(self.fa - self.fb) else "noise"
        if self.fse[0] is None or self.fse[1] is None:
            return "untested"
        if abs(self.fa - self.fb) >= 2 * math.sqrt(self.fse[0] ** 2 + self.fse[1] ** 2):
            return "detected"
        return "noise"

    def fs_inside(self):
        if rule_name() == "old":
            return self._old_fs_inside()
        return self.fs_state() == "noise"

    def post_rel_res(self):
        """The posting's resolution relative to its figure (None where the figure is 0)."""
        ref = abs(self.pb) if self.pb else abs(self.pa)
        if self.post_res is None or not ref:
            return None
        return self.post_res / ref

    def fs_below_res(self):
        """fairsim's relative change is below the posting's relative resolution: scaled to
        the posting's figure, it would print unchanged."""
        if not self.produced:
            return False
        if self.fa == self.fb:
            return True
        r = self.post_rel_res()
        if r is None or self.fb == 0:
            return False
        return abs(self.fa / self.fb - 1) < r

    def folds(self):
        """(posting's change, fairsim's change) on one scale: ln(after/before) where all
        four figures are positive, else signed relative changes."""
        p, f = _fold(self.pb, self.pa), _fold(self.fb, self.fa)
        if p is not None and f is not None:
            return p, f
        return self._rel(self.pb, self.pa), self._rel(self.fb, self.fa)

    def verdict(self):
        """The new rule's verdict: 'n/p', '=' (both claim no effect), 'same', 'ns' (same
        sign, fairsim's change not detectable), 'tiny' (detectable, below a tenth of the
        posting's), '?' (the posting claims no effect, and fairsim's change is above its
        resolution and cannot be tested: fewer than 2 seeds), '!' (differs)."""
        if not self.produced:
            return "n/p"
        state = self.fs_state()
        if self.post_inside():
            if state == "noise" or self.fs_below_res():
                return "="
            return "?" if state == "untested" else "!"
        p, f = self.folds()
        if _sign(p) != _sign(f) or _sign(f) == 0:
            return "!"
        if state != "detected":
            return "ns"
        if abs(f) < MIN_SHARE * abs(p):
            return "tiny"
        return "same"

    def _new_within_2x(self):
        v = self.verdict()
        if v == "=":
            return self.fs_below_res()
        if v != "same":
            return False
        p, f = self.folds()
        if math.isinf(p) or math.isinf(f):
            return False
        return 0.5 <= abs(f) / abs(p) <= 2.0

    # -- the rule in force --

    def same_direction(self):
        if rule_name() == "old":
            return self._old_same_direction()
        return self.verdict() in ("same", "=")

    def within_2x(self):
        if rule_name() == "old":
            return self._old_within_2x()
        return self._new_within_2x()

    def mark(self):
        if not self.produced:
            return "n/p"
        if rule_name() == "old":
            if self.post_inside() and self._old_fs_inside():
                return "="
            return "same" if self._old_same_direction() else "!"
        return self.verdict()

    def test_cell(self):
        """fairsim's detection test, short: 'p=0.003/10' (paired: p over n seeds), '2se'
        (unpaired), '-' (not produced or not testable)."""
        if not self.produced:
            return "-"
        pt = self.paired()
        if pt is not None:
            if pt.p is None:
                return f"n={pt.n}"
            return f"p={pt.p:.3f}/{pt.n}" if pt.p >= 0.001 else f"p<.001/{pt.n}"
        if self.fse[0] is None or self.fse[1] is None:
            return "-"
        return "2se"


def units(comparisons):
    """The comparisons the summary counts: each ungrouped row, and one row per group (its
    representative); the old rule counts every row."""
    if rule_name() == "old":
        return list(comparisons)
    out, seen = [], set()
    for c in comparisons:
        if c.group is None:
            out.append(c)
        elif c.group not in seen:
            seen.add(c.group)
            members = [m for m in comparisons if m.group == c.group]
            out.append(next((m for m in members if m.group_rep), members[0]))
    return out


def groups(comparisons):
    """{group: [rows]} in table order, for groups of more than one row."""
    g = {}
    for c in comparisons:
        if c.group is not None:
            g.setdefault(c.group, []).append(c)
    return g


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
    old = rule_name() == "old"
    print(title)
    w = max(24, max(len(c.name) for c in comparisons))
    # The old rule counts every row: no measurement column's letters then.
    tags = {}
    for i, (g, rows) in enumerate(groups(comparisons).items() if not old else ()):
        rep = units(rows)[0]
        for c in rows:
            tags[id(c)] = chr(ord("A") + i) + ("*" if c is rep else "")
    head = (f"{'figure':<{w}} | {'posting before':>14} {'after':>10} {'change':>9} | "
            f"{'fairsim before':>14} {'after':>10} {'change':>9} {'test':>11} | "
            f"{'dir':>4} {'2x':>3} {'meas':>4}")
    for h in extra_heads:
        head += f" | {h}"
    print(head)
    print("-" * len(head))
    for i, c in enumerate(comparisons):
        pn = "~" if c.post_inside() else " "
        fn = "~" if c.fs_inside() else " "
        row = (f"{c.name:<{w}} | {_fmt(c.pb):>14} {_fmt(c.pa):>10} {_pct(c.pb, c.pa):>8}{pn} | "
               f"{_fmt(c.fb):>14} {_fmt(c.fa):>10} {_pct(c.fb, c.fa):>8}{fn} "
               f"{c.test_cell():>11} | "
               f"{c.mark():>4} {'2x' if c.within_2x() else '':>3} {tags.get(id(c), ''):>4}")
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
    if old:
        print("~ marks a change inside its side's noise; dir: same, = (both inside noise), "
              "! (differs), n/p (not produced)")
        print(f"rule: {OLD_RULE}")
        print(f"noise, {OLD_FAIRSIM_NOISE}")
    else:
        shared = groups(comparisons)
        if shared:
            print("rows that are one measurement (meas: the same letter; counted once, by "
                  "the row marked *):")
            for g, rows in shared.items():
                rep = units(rows)[0]
                print(f"  {tags[id(rep)][0]} {g}: " + ", ".join(
                    c.name + (" (counted)" if c is rep else "") for c in rows))
        print("~ marks a change inside its side's noise (posting: or below its printed "
              "resolution); test: fairsim's paired t, p over n paired seeds (2se: unpaired; "
              "n=1: not testable); dir: same, = (both claim no effect), ns (same sign, "
              "fairsim's change not detectable), tiny (detectable, under a tenth of the "
              "posting's in log terms), ? (no effect posted, fairsim's change untestable), "
              "! (differs), n/p (not produced)")
        print("rule: " + ";\n      ".join(RULE_CLAUSES))
        print(f"noise, {FAIRSIM_NOISE}")
    for line in noise_lines:
        print(f"noise, {line}")
    print(summary_line(comparisons))


def summary_line(comparisons):
    us = units(comparisons)
    n = len(us)
    x = sum(1 for c in us if not c.produced)
    d = sum(1 for c in us if c.same_direction())
    w = sum(1 for c in us if c.within_2x())
    return f"{n} comparisons, {d} same direction, {w} within 2x, {x} not produced"


def main(argv):
    if len(argv) >= 2 and argv[1] == "rule":
        print(OLD_RULE if rule_name() == "old" else RULE)
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
