#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Unit tests of the seeds' scoring rule (compare.py) and its statistics (seedstats.py),
on hand-made tables: python3 -m unittest experiments/test_compare.py (CI runs it)."""
import contextlib
import io
import math
import os
import random
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import compare  # noqa: E402
from compare import Comparison, summary_line, parse_summary, resolution  # noqa: E402
from seedstats import mean_se, paired_test, t_quantile, t_two_sided_p  # noqa: E402


@contextlib.contextmanager
def rule(name):
    """Run the block under COMPARE_RULE=name."""
    old = os.environ.get(compare.RULE_ENV)
    os.environ[compare.RULE_ENV] = name
    try:
        yield
    finally:
        if old is None:
            del os.environ[compare.RULE_ENV]
        else:
            os.environ[compare.RULE_ENV] = old


def seeded(before, after, seeds=None):
    """A fairsim side from per-seed lists: (mean before, mean after, se pair, seeds)."""
    seeds = seeds or list(range(1, len(before) + 1))
    fb, sb = mean_se(before)
    fa, sa = mean_se(after)
    return dict(fs_before=fb, fs_after=fa, fs_se=(sb, sa),
                fs_seeds=(dict(zip(seeds, before)), dict(zip(seeds, after))))


def git_elapsed():
    """Seed 004's git Elapsed mean: the posting falls 15.9% (6 iterations, stddev 2.16 and
    1.01 s); fairsim falls 0.07%, lower in each of 6 seeds."""
    before = [1000.0, 1003.0, 998.0, 1001.0, 1005.0, 997.0]
    after = [b * (1 - 0.0007) * (1 + 0.00002 * (-1) ** i) for i, b in enumerate(before)]
    return Comparison("git Elapsed mean", 1709.53, 1436.98,
                      post_se=(2.16 / math.sqrt(6), 1.01 / math.sqrt(6)),
                      **seeded(before, after))


def p99_tail():
    """Seed 001's p99: the posting's tail falls 47-fold, fairsim's 2.1-fold, consistently."""
    before = [14000.0, 15000.0, 14500.0, 13800.0, 14800.0]
    after = [b / 2.1 * (1 + 0.02 * (-1) ** i) for i, b in enumerate(before)]
    return Comparison("*99.0th", 4680, 99, **seeded(before, after))


class StatisticsTest(unittest.TestCase):
    def test_t_quantiles_match_the_tables(self):
        # Student's t, two-sided 5%: the printed tables' values.
        for df, q in ((1, 12.706), (2, 4.303), (4, 2.776), (9, 2.262), (19, 2.093),
                      (30, 2.042), (120, 1.980)):
            self.assertAlmostEqual(t_quantile(0.975, df), q, places=3)
        self.assertAlmostEqual(t_quantile(0.995, 5), 4.032, places=3)
        self.assertAlmostEqual(t_quantile(0.025, 9), -2.262, places=3)

    def test_p_value_is_the_quantile_inverted(self):
        for df in (1, 3, 10, 50):
            self.assertAlmostEqual(t_two_sided_p(t_quantile(0.975, df), df), 0.05, places=9)
        self.assertEqual(t_two_sided_p(0.0, 5), 1.0)
        self.assertEqual(t_two_sided_p(math.inf, 5), 0.0)

    def test_paired_test_pairs_by_seed_not_by_position(self):
        # The same per-seed values, listed in different orders: the seed matches them.
        b = {1: 10.0, 2: 20.0, 3: 30.0, 4: 40.0}
        a = {4: 44.0, 3: 33.0, 2: 22.0, 1: 11.0}
        r = paired_test(b, a)
        self.assertEqual((r.n, r.scale), (4, "ln ratio"))
        self.assertAlmostEqual(r.mean, math.log(1.1))
        self.assertEqual(r.p, 0.0)  # every seed rises by exactly 10%
        # Seeds only one side ran are left out.
        r = paired_test({1: 1.0, 2: 2.0, 5: 9.0}, {1: 1.5, 2: 2.9, 6: 1.0})
        self.assertEqual(r.n, 2)

    def test_paired_test_falls_back_to_differences(self):
        # A zero (or negative) value has no log ratio: the differences are tested.
        r = paired_test({1: 0.0, 2: 1.0, 3: 2.0}, {1: 1.0, 2: 2.1, 3: 2.9})
        self.assertEqual(r.scale, "difference")
        self.assertAlmostEqual(r.mean, 1.0)
        self.assertLess(r.p, 0.05)

    def test_one_pair_cannot_be_tested(self):
        r = paired_test({1: 1.0}, {1: 2.0})
        self.assertIsNone(r.p)
        self.assertIsNone(r.significant)

    def test_no_change_in_any_seed_is_no_change(self):
        r = paired_test({1: 1.0, 2: 2.0}, {1: 1.0, 2: 2.0})
        self.assertEqual((r.mean, r.p), (0.0, 1.0))

    def test_resolution_is_the_last_printed_digit(self):
        self.assertEqual(resolution(50), 1.0)
        self.assertEqual(resolution(50.0), 1.0)
        self.assertAlmostEqual(resolution(74.9), 0.1)
        self.assertAlmostEqual(resolution(2.09), 0.01)
        self.assertAlmostEqual(resolution(11.010342), 1e-6)
        self.assertAlmostEqual(Comparison("x", 74.9, 75.75).post_res, 0.1)


class RuleTest(unittest.TestCase):
    def test_a_tiny_change_against_a_large_one_is_not_reproduced(self):
        c = git_elapsed()
        with rule("new"):
            self.assertEqual(c.fs_state(), "detected")  # lower in 6 of 6 seeds
            self.assertEqual(c.verdict(), "tiny")  # 0.07% is not a tenth of 15.9%
            self.assertFalse(c.same_direction())
            self.assertFalse(c.within_2x())
        with rule("old"):
            self.assertTrue(c.same_direction())

    def test_a_47_fold_fall_is_not_within_2x_of_a_2_fold_one(self):
        c = p99_tail()
        with rule("new"):
            self.assertEqual(c.verdict(), "same")
            self.assertTrue(c.same_direction())
            self.assertFalse(c.within_2x())
        with rule("old"):
            # -52% against -98% relative: the old rule called it within 2x.
            self.assertTrue(c.within_2x())

    def test_fold_changes_within_2x_in_log_terms(self):
        # Posting halves (ln 2); fairsim falls by a factor 1.5 (ln 1.5 / ln 2 = 0.58).
        before = [100.0, 110.0, 90.0, 105.0]
        c = Comparison("x", 200, 100, **seeded(before, [b / 1.5 for b in before]))
        with rule("new"):
            self.assertTrue(c.within_2x())
        # A factor 1.3: ln 1.3 / ln 2 = 0.38, under half.
        c = Comparison("x", 200, 100, **seeded(before, [b / 1.3 for b in before]))
        with rule("new"):
            self.assertTrue(c.same_direction())
            self.assertFalse(c.within_2x())

    def test_pairing_detects_a_consistent_small_change(self):
        # Seeds spread 100..500; each seed rises 1% (+-0.1%). The means' se hides it, the
        # pairs do not.
        rng = random.Random(1)
        before = [100.0 + 40.0 * i for i in range(10)]
        after = [b * (1.01 + rng.uniform(-0.001, 0.001)) for b in before]
        side = seeded(before, after)
        c = Comparison("x", 100.0, 110.0, **side)
        unpaired = Comparison("x", 100.0, 110.0, fs_before=side["fs_before"],
                              fs_after=side["fs_after"], fs_se=side["fs_se"])
        with rule("new"):
            self.assertEqual(unpaired.fs_state(), "noise")
            self.assertEqual(c.fs_state(), "detected")
            self.assertLess(c.paired().p, 0.001)
            # 1% against 10%: ln 1.01 / ln 1.1 = 0.104, just over a tenth.
            self.assertEqual(c.verdict(), "same")

    def test_pairing_does_not_detect_a_noisy_change(self):
        # The same 1% on average, but each seed moves +-8%.
        rng = random.Random(2)
        before = [100.0 + 40.0 * i for i in range(10)]
        after = [b * (1.01 + rng.uniform(-0.08, 0.08)) for b in before]
        c = Comparison("x", 100.0, 110.0, **seeded(before, after))
        with rule("new"):
            self.assertEqual(c.fs_state(), "noise")
            self.assertGreater(c.paired().p, 0.05)
            self.assertEqual(c.verdict(), "ns")
            self.assertFalse(c.same_direction())

    def test_too_few_seeds_are_not_testable(self):
        c = Comparison("x", 100.0, 50.0, **seeded([10.0], [5.0]))
        with rule("new"):
            self.assertEqual(c.fs_state(), "untested")
            self.assertEqual(c.verdict(), "ns")
            self.assertFalse(c.same_direction())
        # Nor is a posting's claim of no effect reproduced by an untested change.
        c = Comparison("x", 50, 50, **seeded([10.0], [5.0]))
        with rule("new"):
            self.assertEqual(c.verdict(), "?")
            self.assertFalse(c.same_direction())

    def test_claims_of_no_effect(self):
        # The posting's p50: 50 -> 50 us, resolution 1 us (2% of 50).
        rng = random.Random(3)
        before = [139.0 + rng.uniform(-0.2, 0.2) for _ in range(10)]
        # fairsim moves -0.7%, detectably: below the posting's resolution all the same.
        c = Comparison("p50", 50, 50, **seeded(before, [b * 0.993 for b in before]))
        with rule("new"):
            self.assertTrue(c.post_inside())
            self.assertEqual(c.fs_state(), "detected")
            self.assertEqual(c.verdict(), "=")
            self.assertTrue(c.within_2x())
        with rule("old"):
            self.assertFalse(c.same_direction())
        # fairsim moves -5%, detectably: the posting would have printed that.
        c = Comparison("p50", 50, 50, **seeded(before, [b * 0.95 for b in before]))
        with rule("new"):
            self.assertEqual(c.verdict(), "!")
        # The posting's change inside its noise (not its resolution): fairsim inside its
        # own noise is the same direction, but within 2x needs fairsim's change below the
        # posting's resolution.
        noisy = [b * (1.004 + rng.uniform(-0.05, 0.05)) for b in before]
        c = Comparison("mean", 11.010342, 11.041117, post_se=(0.0343, 0.0343),
                       **seeded(before, noisy))
        with rule("new"):
            self.assertTrue(c.post_inside())
            self.assertEqual(c.fs_state(), "noise")
            self.assertTrue(c.same_direction())
            self.assertFalse(c.within_2x())

    def test_opposite_signs_differ(self):
        before = [10.0, 11.0, 12.0]
        c = Comparison("x", 100, 80, **seeded(before, [b * 1.2 for b in before]))
        with rule("new"):
            self.assertEqual(c.verdict(), "!")
        with rule("old"):
            self.assertEqual(c.mark(), "!")

    def test_not_produced(self):
        c = Comparison("NUMA hint faults", 4301, 1383)
        with rule("new"):
            self.assertEqual(c.verdict(), "n/p")
            self.assertFalse(c.same_direction() or c.within_2x())


def hand_made_table():
    """Seed 004's git block in miniature: the Elapsed mean, its total (one measurement),
    the posting's spread, a not-produced counter, and seed 001's tail."""
    e = git_elapsed()
    mean = Comparison(e.name, e.pb, e.pa, e.fb, e.fa, post_se=e.pse, fs_se=e.fse,
                      fs_seeds=e.fs_seeds, group="git Elapsed", group_rep=True)
    b, a = e.fs_seeds
    total = Comparison("git Elapsed total", 10259.06, 8624.21, 6 * e.fb, 6 * e.fa,
                       fs_seeds=e.fs_seeds, group="git Elapsed")
    mn = Comparison("git Elapsed min", 1706.06, 1435.94, min(b.values()), min(a.values()),
                    fs_se=(2.0, 2.0), group="git Elapsed")
    return [mn, mean, total, p99_tail(), Comparison("NUMA hint faults", 4301, 1383)]


class SummaryTest(unittest.TestCase):
    def test_a_measurement_counts_once_by_its_representative(self):
        rows = hand_made_table()
        with rule("new"):
            units = compare.units(rows)
            self.assertEqual([c.name for c in units],
                             ["git Elapsed mean", "*99.0th", "NUMA hint faults"])
            self.assertEqual(summary_line(rows),
                             "3 comparisons, 1 same direction, 0 within 2x, 1 not produced")

    def test_the_old_rule_counts_every_row(self):
        with rule("old"):
            # min: unpaired, fairsim's 0.07% inside its noise, the posting's outside:
            # signs agree; mean and total: signs agree; p99 within 2x by relative change.
            self.assertEqual(summary_line(hand_made_table()),
                             "5 comparisons, 4 same direction, 1 within 2x, 1 not produced")

    def test_the_printed_table_ends_with_a_parseable_line(self):
        for name in ("new", "old"):
            with rule(name):
                buf = io.StringIO()
                with contextlib.redirect_stdout(buf):
                    compare.print_comparisons("t", hand_made_table(), ["posting: test"])
                lines = buf.getvalue().splitlines()
                parse_summary(lines[-1])
                text = buf.getvalue()
                # crates/cli/tests/cli/experiments_summary.rs looks for this prefix.
                self.assertIn("rule: same direction = same sign of change", text)
                if name == "new":
                    self.assertIn("A git Elapsed: git Elapsed min, git Elapsed mean "
                                  "(counted), git Elapsed total", text)

    def test_check_command_and_rule_selection(self):
        script = os.path.join(HERE, "compare.py")
        ok = subprocess.run([sys.executable, script, "check", "-"], text=True,
                            input="x\n4 comparisons, 3 same direction, 1 within 2x, 0 not "
                            "produced\n", capture_output=True)
        self.assertEqual(ok.returncode, 0, ok.stderr)
        bad = subprocess.run([sys.executable, script, "check", "-"], text=True,
                             input="4 comparisons, 3 same direction, 4 within 2x, 0 not "
                             "produced\n", capture_output=True)
        self.assertEqual(bad.returncode, 1)
        env = dict(os.environ, **{compare.RULE_ENV: "old"})
        old = subprocess.run([sys.executable, script, "rule"], env=env, text=True,
                             capture_output=True)
        self.assertEqual(old.stdout.strip(), compare.OLD_RULE)
        env[compare.RULE_ENV] = "strict"
        wrong = subprocess.run([sys.executable, script, "rule"], env=env, text=True,
                               capture_output=True)
        self.assertNotEqual(wrong.returncode, 0)


if __name__ == "__main__":
    unittest.main()
