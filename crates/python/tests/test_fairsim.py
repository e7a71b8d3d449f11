"""Tests of the Python package `fairsim` against the command line.

Run after `pip install ./crates/python`, from the repository root:

    FAIRSIM=target/release/fairsim python -m unittest discover -s crates/python/tests -v

FAIRSIM names the `fairsim` binary the package is compared with, byte for byte (its JSON,
stdout and error lines); without it those tests skip, unless FAIRSIM_REQUIRE_BINARY=1
(CI) makes them fail. The DataFrame tests skip without pandas, the LISA one without lisa-linux (unless
FAIRSIM_REQUIRE_LISA=1).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import tempfile
import threading
import time
import unittest

import fairsim

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
RAMP = os.path.join(ROOT, "examples", "rtapp", "ramp.json")

try:
    import pandas  # noqa: F401

    HAVE_PANDAS = True
except ImportError:
    HAVE_PANDAS = False

try:
    import lisa.trace  # noqa: F401

    HAVE_LISA = True
except ImportError:
    if os.environ.get("FAIRSIM_REQUIRE_LISA") == "1":
        raise
    HAVE_LISA = False


def binary():
    path = os.environ.get("FAIRSIM")
    if path:
        return os.path.abspath(path)
    if os.environ.get("FAIRSIM_REQUIRE_BINARY") == "1":
        raise AssertionError("FAIRSIM_REQUIRE_BINARY=1 but FAIRSIM names no binary")
    raise unittest.SkipTest("FAIRSIM names no fairsim binary to compare with")


def cli(args, cwd=None):
    """The binary's (status, stdout bytes, stderr text) for `args`."""
    p = subprocess.run([binary()] + args, capture_output=True, cwd=cwd)
    return p.returncode, p.stdout, p.stderr.decode()


# The runs compared with the command line: keyword options, and the same as argv.
HACKBENCH = dict(smp="4", workload=["hackbench:g=1,l=10"], duration="100ms", seed=3)
HACKBENCH_ARGV = ["--smp", "4", "--workload", "hackbench:g=1,l=10", "--duration", "100ms", "--seed", "3"]
RAMP_RUN = dict(topology="rk3399", governor="schedutil", workload=[f"rtapp:{RAMP}"], duration="500ms", seed=42)
RAMP_ARGV = ["--topology", "rk3399", "--governor", "schedutil", "--workload", f"rtapp:{RAMP}",
             "--duration", "500ms", "--seed", "42"]


class Argv(unittest.TestCase):
    def test_options(self):
        self.assertEqual(
            fairsim.argv(["run"], dict(smp="4", workload=["a", "b"], seed=-1, profile=True,
                                        check_invariants=False, trace=None, trace_dat="x.dat")),
            ["run", "--smp=4", "--workload=a", "--workload=b", "--seed=-1", "--profile", "--trace-dat=x.dat"],
        )


class SameAsTheCommandLine(unittest.TestCase):
    def check_run(self, options, args):
        r = fairsim.run(**options)
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "cli.json")
            status, stdout, _ = cli(["run"] + args + ["--json", path])
            self.assertEqual(status, 0)
            with open(path, "rb") as f:
                expected = f.read()
        self.assertEqual(r.json_bytes, expected)
        self.assertEqual(r.json_text.encode(), expected)
        self.assertEqual(r.json, json.loads(expected))
        self.assertEqual(r.stdout.encode(), stdout)
        return r

    def test_run_json_byte_identical(self):
        r = self.check_run(HACKBENCH, HACKBENCH_ARGV)
        self.assertEqual(r.json["seed"], 3)
        self.assertEqual(len(r.json["cpus"]), 4)

    def test_rtapp_ramp_on_rk3399_byte_identical(self):
        r = self.check_run(RAMP_RUN, RAMP_ARGV)
        self.assertEqual(r.json["machine"]["cpus"], 6)

    def test_same_bytes_twice(self):
        self.assertEqual(fairsim.run(**HACKBENCH).json_bytes, fairsim.run(**HACKBENCH).json_bytes)

    def test_compare_json_byte_identical(self):
        opts = dict(smp="4", workload=["hackbench:g=1,l=10"], duration="50ms", seeds=2, new="NO_NI_RANDOM")
        r = fairsim.compare(**opts)
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "cmp.json")
            status, stdout, _ = cli(["compare", "--smp", "4", "--workload", "hackbench:g=1,l=10",
                                     "--duration", "50ms", "--seeds", "2", "--new", "NO_NI_RANDOM",
                                     "--json", path])
            self.assertEqual(status, 0)
            with open(path, "rb") as f:
                self.assertEqual(r.json_bytes, f.read())
        self.assertEqual(r.stdout.encode(), stdout)
        self.assertTrue(r.json["rows"])

    def check_error(self, call, args):
        with self.assertRaises(fairsim.FairsimError) as caught:
            call()
        status, stdout, stderr = cli(args)
        self.assertNotEqual(status, 0)
        self.assertEqual(caught.exception.status, status)
        self.assertEqual(caught.exception.line, stderr.strip())
        self.assertEqual(str(caught.exception), stderr.strip().removeprefix("fairsim: error: "))

    def test_errors_are_the_command_lines(self):
        # The run's own check, clap's unknown option, clap's bad value, a missing file.
        self.check_error(lambda: fairsim.run(smp="banana"), ["run", "--smp", "banana"])
        self.check_error(lambda: fairsim.run(no_such_option=1), ["run", "--no-such-option", "1"])
        self.check_error(lambda: fairsim.run(seed="x"), ["run", "--seed", "x"])
        self.check_error(lambda: fairsim.run(workload=["rtapp:/nonexistent.json"]),
                         ["run", "--workload", "rtapp:/nonexistent.json"])
        self.check_error(lambda: fairsim.compare(smp="4"), ["compare", "--smp", "4"])

    def test_interrupted_compare_is_the_command_lines(self):
        # The test hook raises the interrupt flag once the first seed finished on both
        # sides, as Ctrl-C would: the table of the seeds that finished (how many depends
        # on the runs in flight), status 130 and the line the command line prints.
        os.environ["FAIRSIM_INTERRUPT_AFTER"] = "1"
        opts = dict(smp="4", workload=["hackbench:g=2,l=200"], duration="200ms", seeds=4, new="NO_NI_RANDOM")
        try:
            with self.assertRaises(fairsim.FairsimError) as caught:
                fairsim.compare(**opts)
            status, _, stderr = cli(fairsim.argv(["compare"], opts))
        finally:
            del os.environ["FAIRSIM_INTERRUPT_AFTER"]
        self.assertEqual((caught.exception.status, status), (130, 130))
        pattern = r"fairsim: interrupted: table from [123] of 4 seeds"
        self.assertRegex(caught.exception.line, "^" + pattern + "$")
        self.assertRegex(stderr, pattern + "\n$")
        # The process goes on, and the next call is not interrupted.
        self.assertEqual(fairsim.run(**HACKBENCH).json["seed"], 3)

    def test_cli_output(self):
        status, stdout, _ = cli(["topology", "--smp", "4"])
        self.assertEqual(status, 0)
        self.assertEqual(fairsim.cli("topology", "--smp", "4").encode(), stdout)


class CtrlC(unittest.TestCase):
    @unittest.skipUnless(hasattr(signal, "pthread_kill"), "needs signal.pthread_kill")
    def test_sigint_stops_a_run_and_raises_keyboard_interrupt(self):
        # A run of an emulated hour, SIGINT to this process after half a second: the run
        # stops at the next batch of events and Python sees KeyboardInterrupt.
        main = threading.main_thread().ident
        timer = threading.Timer(0.5, lambda: signal.pthread_kill(main, signal.SIGINT))
        started = time.monotonic()
        timer.start()
        try:
            with self.assertRaises(KeyboardInterrupt):
                fairsim.run(smp="8", workload=["hackbench:g=4,l=100000000"], duration="3600s", json=False)
        finally:
            timer.cancel()
        self.assertLess(time.monotonic() - started, 30)
        self.assertEqual(fairsim.run(**HACKBENCH).json["seed"], 3)


class Outputs(unittest.TestCase):
    def test_files_in_the_results_directory(self):
        r = fairsim.run(**HACKBENCH, trace_dat=True, trace_text=True, schedstat=True)
        for option in ("json", "trace_dat", "trace_text", "schedstat"):
            self.assertTrue(os.path.isfile(r.files[option]), option)
            self.assertTrue(r.files[option].startswith(r.dir))
        with open(r.files["trace_text"]) as f:
            self.assertIn("sched_switch", f.read())
        d = r.dir
        del r
        self.assertFalse(os.path.exists(d))

    def test_no_json(self):
        r = fairsim.run(**HACKBENCH, json=False)
        self.assertNotIn("json", r.files)
        with self.assertRaises(ValueError):
            r.json

    def test_sweep(self):
        plan = '\n'.join([
            'name = "py"',
            '[run]',
            'duration = "30ms"',
            '[axes]',
            'machines = [{ name = "four", smp = "4" }]',
            'workloads = ["hackbench:g=1,l=10"]',
            'seeds = 2',
            'hz = [250, 1000]',
            '',
        ])
        r = fairsim.sweep(plan, jobs=1)
        self.assertEqual(len(r.points), 4)
        self.assertEqual(r.plan["name"], "py")
        self.assertIn("hz", r.summary)
        if HAVE_PANDAS:
            m = r.metrics
            self.assertEqual(len(m), 4)
            self.assertEqual(list(m["hz"]), ["250", "250", "1000", "1000"])
            self.assertIn("time-s", m.columns)


@unittest.skipUnless(HAVE_PANDAS, "pandas is not installed")
class DataFrames(unittest.TestCase):
    def test_run_frames(self):
        r = fairsim.run(smp="4", cgroup=["/a:cpu.weight=200"], workload=["hackbench:g=1,l=10,cgroup=/a"],
                        duration="100ms", seed=3)
        d = r.json
        self.assertEqual(len(r.tasks), len(d["tasks"]))
        self.assertEqual(list(r.tasks["run_delay_ns"]), [t["run_delay_ns"] for t in d["tasks"]])
        self.assertEqual(len(r.cpus), 4)
        self.assertIn("overhead_by_kind_ns.wakeup", r.cpus.columns)
        self.assertEqual(list(r.cgroups["path"]), ["/", "/a"])
        s = r.schedstat
        self.assertEqual(set(s["idle_type"]), {"CPU_IDLE", "CPU_NEWLY_IDLE", "CPU_NOT_IDLE"})
        self.assertIn("lb_count", s.columns)
        self.assertEqual(len(r.cpuidle), sum(len(c["cpuidle"]) for c in d["cpus"]))
        self.assertEqual(len(r.workloads), 1)

    def test_compare_table(self):
        r = fairsim.compare(smp="4", workload=["hackbench:g=1,l=10"], duration="50ms", seeds=2,
                            new="NO_NI_RANDOM")
        t = r.table
        self.assertEqual(len(t), len(r.json["rows"]))
        self.assertEqual(list(t.columns[:3]), ["metric", "better", "mean"])
        self.assertEqual(list(t["metric"]), [row["metric"] for row in r.json["rows"]])


@unittest.skipUnless(HAVE_LISA, "lisa-linux is not installed")
class Lisa(unittest.TestCase):
    def test_lisa_trace(self):
        import warnings

        r = fairsim.run(**RAMP_RUN, trace_dat=True, trace_text=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            trace = r.lisa_trace()
            switches = trace.df_event("sched_switch")
        # LISA reads every switch of the trace.dat, as many as the text trace prints.
        with open(r.files["trace_text"]) as f:
            text = sum(1 for line in f if " sched_switch: " in line)
        self.assertGreater(text, 0)
        self.assertEqual(len(switches), text)
        self.assertIn("ramp-0", set(switches["next_comm"]))


if __name__ == "__main__":
    unittest.main()
