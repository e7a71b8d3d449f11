"""fairsim from Python: the command line's commands as functions.

    import fairsim
    r = fairsim.run(smp="4", workload=["hackbench:g=1,l=10"], duration="100ms", seed=3)
    r.json              # the run's JSON document, as a dict
    r.json_bytes        # its bytes: those `fairsim run ... --json FILE` writes
    r.tasks             # a pandas DataFrame, when pandas is installed

Each keyword argument is the command line's long option of the same name, underscores
for hyphens (``trace_dat="t.dat"`` is ``--trace-dat t.dat``): ``True`` gives a flag,
``False`` and ``None`` leave the option out, a list or tuple repeats it, and any other
value is passed as ``str(value)``. The argument vector is the one ``fairsim`` itself
parses, in this process (the extension calls the CLI's own entry point), so every check,
default and output is the command line's, and an error is raised as :class:`FairsimError`
carrying the command line's one-line message.

An output option given ``True`` (``json``, ``trace``, ``trace_text``, ``trace_dat``,
``schedstat``, ``csv``, ``plot``, ``rtapp_log``, ``out``) writes into the result's own
temporary directory, ``result.dir``, which lasts as long as the result object (give a
path to keep a file). ``run`` and ``compare`` ask for ``--json`` unless ``json=False``.
"""

from __future__ import annotations

import json as _json
import os
import shutil
import tempfile
import weakref
from typing import Any, Dict, List, Optional, Sequence

from ._fairsim import __version__
from ._fairsim import run_argv as _run_argv

__all__ = [
    "FairsimError",
    "Result",
    "RunResult",
    "CompareResult",
    "SweepResult",
    "argv",
    "cli",
    "run",
    "compare",
    "sweep",
    "__version__",
]

# The file or directory name each output option gets under the result's directory when
# it is given True.
_OUTPUT_NAMES = {
    "json": "result.json",
    "trace": "trace.perfetto-trace",
    "trace_text": "trace.txt",
    "trace_dat": "trace.dat",
    "schedstat": "schedstat.txt",
    "csv": "compare.csv",
    "plot": "plots",
    "rtapp_log": "rtapp-log",
    "out": "sweep",
}


# compare's --csv columns, in order (`fairsim compare --help`).
_COMPARE_COLUMNS = [
    "metric", "better", "mean", "base_mean", "new_mean", "change_pct", "significant",
    "base_stddev", "new_stddev", "base_samples", "new_samples",
]


class FairsimError(Exception):
    """A command the command line would have refused or failed.

    ``str(err)`` is the one-line message the command line prints after
    ``fairsim: error: ``; ``err.line`` is that whole line and ``err.status`` the exit
    status it would have returned (2: the input, 3: fairsim's fault, 4: an output; 130:
    interrupted, the message then ``interrupted: ...``). A Ctrl-C during a call stops the
    command as it stops the command line (what has finished is written) and raises
    ``KeyboardInterrupt``.
    """

    def __init__(self, message: str, status: int = 2, args: Sequence[str] = ()):
        super().__init__(message)
        self.message = message
        self.status = status
        # An interrupted command (status 130) says `fairsim: interrupted: ...`.
        self.line = f"fairsim: {message}" if status == 130 else f"fairsim: error: {message}"
        self.argv = list(args)


def _option(name: str) -> str:
    return "--" + name.replace("_", "-")


def argv(command: Sequence[str], options: Dict[str, Any]) -> List[str]:
    """The argument vector (without the program name) that ``command`` (e.g. ``["run"]``)
    with keyword ``options`` stands for: what :func:`run` and the others pass to the CLI."""
    out = [os.fspath(c) if isinstance(c, os.PathLike) else str(c) for c in command]
    for name, value in options.items():
        if value is None or value is False:
            continue
        flag = _option(name)
        if value is True:
            out.append(flag)
            continue
        values = value if isinstance(value, (list, tuple)) else [value]
        for v in values:
            v = os.fspath(v) if isinstance(v, os.PathLike) else str(v)
            # `--opt=VALUE` keeps a value that starts with '-' (`--seed -1`) a value, as
            # the command line does for `--opt VALUE`.
            out.append(f"{flag}={v}")
    return out


def cli(*args: Any) -> str:
    """Runs ``fairsim ARGS...`` as the command line would and returns what it prints on
    stdout; raises :class:`FairsimError` where it would fail. For the commands without a
    function of their own: ``fairsim.cli("topology", "--smp", "4")``."""
    return _call([str(a) for a in args])[0]


def _call(args: List[str]):
    status, stdout, error = _run_argv(args)
    text = bytes(stdout).decode("utf-8", errors="replace")
    if error is not None or status != 0:
        raise FairsimError(error if error is not None else text.strip(), status, args)
    return text, status


def _outputs(options: Dict[str, Any], tmp: str, defaults: Sequence[str]) -> Dict[str, str]:
    """Replaces each output option given True (or asked for by ``defaults`` and not
    given) with a path under ``tmp``; returns every output option's path."""
    files = {}
    for name in defaults:
        if name not in options:
            options[name] = True
    for name, leaf in _OUTPUT_NAMES.items():
        value = options.get(name)
        if value is True:
            options[name] = os.path.join(tmp, leaf)
        if options.get(name) not in (None, False):
            files[name] = os.fspath(options[name])
    return files


def _pandas():
    try:
        import pandas  # noqa: F401
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError(
            "fairsim's DataFrames need pandas: pip install pandas (or the package's "
            "'pandas' extra)"
        ) from e
    return pandas


class Result:
    """What a command gave: its stdout, the argument vector it ran and the files its
    output options named (``files``, option name to path)."""

    def __init__(self, args: List[str], stdout: str, files: Dict[str, str], tmp: str):
        self.argv = args
        self.stdout = stdout
        self.files = files
        # The result's directory goes when the result does.
        self.dir = tmp
        weakref.finalize(self, shutil.rmtree, tmp, True)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} fairsim {' '.join(self.argv)}>"

    def _read(self, option: str) -> bytes:
        path = self.files.get(option)
        if path is None:
            raise ValueError(f"no {_option(option)} output in this result; run with {option}=True")
        with open(path, "rb") as f:
            return f.read()

    @property
    def json_bytes(self) -> bytes:
        """The ``--json`` file's bytes, exactly as the command line writes them."""
        return self._read("json")

    @property
    def json_text(self) -> str:
        """The ``--json`` file's text."""
        return self.json_bytes.decode("utf-8")

    @property
    def json(self) -> dict:
        """The ``--json`` document as a dict."""
        return _json.loads(self.json_bytes)


class RunResult(Result):
    """The result of :func:`run`: ``stdout`` (the summary), ``json`` (the document),
    ``json_bytes``, ``files``, and DataFrames when pandas is installed."""

    @property
    def tasks(self):
        """One row per task (the document's ``tasks``)."""
        return _pandas().DataFrame(self.json["tasks"])

    @property
    def cpus(self):
        """One row per CPU, its overhead by kind as ``overhead_by_kind_ns.KIND`` columns
        (the per-domain and per-idle-state lists are in ``schedstat`` and ``cpuidle``)."""
        pd = _pandas()
        rows = [{k: v for k, v in c.items() if k not in ("domains", "cpuidle")} for c in self.json["cpus"]]
        return pd.json_normalize(rows)

    @property
    def cpuidle(self):
        """One row per CPU and idle state."""
        rows = [dict(cpu=c["cpu"], **s) for c in self.json["cpus"] for s in c.get("cpuidle", [])]
        return _pandas().DataFrame(rows)

    @property
    def cgroups(self):
        """One row per cgroup (empty without --cgroup)."""
        return _pandas().DataFrame(self.json.get("cgroups") or [])

    @property
    def schedstat(self):
        """/proc/schedstat's domain counters: one row per CPU, domain and idle type
        (CPU_IDLE, CPU_NEWLY_IDLE, CPU_NOT_IDLE), with the domain's own counters
        (ttwu_wake_remote, alb_count, ...) repeated on its rows."""
        rows = []
        for c in self.json["cpus"]:
            for d in c.get("domains", []):
                common = {k: v for k, v in d.items() if k != "lb"}
                for idle, counters in (d.get("lb") or {}).items():
                    rows.append(dict(cpu=c["cpu"], **common, idle_type=idle, **counters))
        return _pandas().DataFrame(rows)

    @property
    def workloads(self):
        """One row per workload, its results as ``results.NAME`` columns."""
        return _pandas().json_normalize(self.json["workloads"])

    @property
    def rtapp(self):
        """rt-app's activations: one row per period of each rt-app thread (workload,
        thread, then the document's c_duration_us, run_us, freq_khz, cpu, ...)."""
        rows = []
        for i, w in enumerate(self.json["workloads"]):
            results = w.get("results")
            if not isinstance(results, dict):
                continue
            for t in results.get("threads") or []:
                for a in t.get("activations") or []:
                    rows.append(dict(workload=i, thread=t.get("name"), **a))
        return _pandas().DataFrame(rows)

    def lisa_trace(self, **kwargs):
        """The run's ``--trace-dat`` as a LISA ``lisa.trace.Trace`` (needs
        ``lisa-linux``, and the run made with ``trace_dat=True`` or a path)."""
        try:
            from lisa.trace import Trace
        except ImportError as e:  # pragma: no cover - depends on the environment
            raise ImportError("the trace as a LISA Trace needs lisa-linux: pip install lisa-linux") from e
        if "trace_dat" not in self.files:
            raise ValueError("no --trace-dat output in this result; run with trace_dat=True")
        return Trace(self.files["trace_dat"], **kwargs)


class CompareResult(Result):
    """The result of :func:`compare`: ``stdout`` (the table), ``json`` (the table's
    document) and, with pandas, ``table``."""

    @property
    def table(self):
        """One row per metric: the columns of ``--csv`` (metric, better, mean,
        base_mean, new_mean, change_pct, significant, ...)."""
        frame = _pandas().DataFrame(self.json["rows"])
        # --csv's column order; the JSON's rows keep their keys sorted.
        first = [c for c in _COMPARE_COLUMNS if c in frame.columns]
        return frame[first + [c for c in frame.columns if c not in first]]


class SweepResult(Result):
    """The result of :func:`sweep`: ``stdout``, ``out`` (the output directory), ``plan``
    (plan.json), ``points`` (every points/*.json, in order), ``summary`` (summary.txt)
    and, with pandas, ``metrics``."""

    @property
    def out(self) -> str:
        return self.files["out"]

    @property
    def plan(self) -> dict:
        with open(os.path.join(self.out, "plan.json"), "rb") as f:
            return _json.loads(f.read())

    @property
    def points(self) -> List[dict]:
        d = os.path.join(self.out, "points")
        out = []
        for name in sorted(os.listdir(d)):
            if name.endswith(".json"):
                with open(os.path.join(d, name), "rb") as f:
                    out.append(_json.loads(f.read()))
        return out

    @property
    def summary(self) -> Optional[str]:
        path = os.path.join(self.out, "summary.txt")
        if not os.path.exists(path):
            return None
        with open(path, encoding="utf-8") as f:
            return f.read()

    @property
    def metrics(self):
        """One row per point: its index, name and command line, a column per axis
        (machines, workloads, features, ..., seeds: the point's coordinates) and a column
        per metric of compare's (Wakeup-99.0th-us, newidle-time-%, ...)."""
        rows = []
        for p in self.points:
            row = {k: p[k] for k in ("index", "point", "command") if k in p}
            for axis, value in p.get("coordinates") or []:
                row[axis] = value
            for m in p.get("metrics") or []:
                row[m["name"]] = m["value"]
            rows.append(row)
        return _pandas().DataFrame(rows)


def _command(cls, command, options: Dict[str, Any], defaults: Sequence[str]):
    """Runs ``command`` (a list, or a function of the result's directory giving it) with
    ``options`` in a new result directory, removed again on a failure."""
    options = dict(options)
    tmp = tempfile.mkdtemp(prefix="fairsim-")
    try:
        files = _outputs(options, tmp, defaults)
        args = argv(command(tmp) if callable(command) else command, options)
        stdout, _ = _call(args)
    except BaseException:
        shutil.rmtree(tmp, True)
        raise
    return cls(args, stdout, files, tmp)


def run(**options: Any) -> RunResult:
    """``fairsim run`` with ``options`` as its long options (see the module's doc);
    ``json`` defaults to a file in the result's directory."""
    return _command(RunResult, ["run"], options, ["json"])


def compare(**options: Any) -> CompareResult:
    """``fairsim compare`` with ``options`` as its long options (``new=...``,
    ``seeds=5``, ...); ``json`` (the table's document) defaults to a file in the result's
    directory."""
    return _command(CompareResult, ["compare"], options, ["json"])


def sweep(plan: Any, **options: Any) -> SweepResult:
    """``fairsim sweep PLAN`` with ``options`` as its long options; ``plan`` is a path, or
    the plan's TOML text (a string with a newline), written to the result's directory.
    ``out`` defaults to a directory in the result's directory."""
    if isinstance(plan, str) and "\n" in plan:
        # The plan's text, written where the sweep reads it.
        text = plan
        plan = None
    else:
        text = None

    def command(tmp: str) -> List[str]:
        if text is None:
            return ["sweep", os.fspath(plan)]
        path = os.path.join(tmp, "plan.toml")
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        return ["sweep", path]

    return _command(SweepResult, command, options, ["out"])
