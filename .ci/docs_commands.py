#!/usr/bin/env python3
"""Runs every `fairsim` command of README.md and docs/*.md, shortened, so no example can rot.

    python3 .ci/docs_commands.py FAIRSIM_BINARY [--scale 20] [--page PAGE] [--list]

Each ```sh block is read line by line (a trailing backslash joins lines, a `#` comment is
dropped). Commands that start with `fairsim` run in order, in one scratch directory per
page (so that `fairsim schedstat show ss.txt` finds the file the line before wrote), with
the repository's `examples/`, `experiments/`, `validation/` and `crates/` linked in.
Virtual times are divided by the scale (`--duration 2s` runs 100 ms, `--warmup` and
`--trace-window` shrink alike) and `compare`'s `--seeds` is capped at 2 (with `--until`,
its `--min-seeds` too, given or not), which keeps the whole pass within a few minutes on
2 cores. Anything else (cargo, the experiments' own
scripts, which CI runs on their own, batch-job lines) is listed as not run, with why.
docs/try-an-idea.md needs the build its diffs make, so `.ci/try-an-idea` runs it with
`--page`.
A command fails the pass if it exits non-zero or runs past its time limit.
"""

import os
import re
import shlex
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TIME_OPTIONS = ("--duration", "--warmup")
UNITS = {"ns": 1, "us": 1_000, "ms": 1_000_000, "s": 1_000_000_000}
# Commands whose inputs only exist elsewhere: (pattern, why it is not run here).
NOT_HERE = [
    (re.compile(r"--criterion"), "needs `cargo bench` results"),
]
LIMIT_S = 180
# Pages whose commands need a build of their own: .ci/try-an-idea applies the guide's
# diffs, builds, and runs its commands with `--page`.
OWN_BUILD = {"docs/try-an-idea.md"}


def blocks(path):
    """Yields the commands of a page's ```sh blocks, continuation lines joined."""
    inside = False
    pending = ""
    with open(path, encoding="utf-8") as f:
        for raw in f:
            line = raw.rstrip("\n")
            if line.startswith("```"):
                inside = (not inside) and line.strip() == "```sh"
                pending = ""
                continue
            if not inside:
                continue
            if line.rstrip().endswith("\\"):
                pending += line.rstrip()[:-1] + " "
                continue
            full = (pending + line).strip()
            pending = ""
            if full:
                yield full


def words(command):
    """The command's words, its `#` comment dropped."""
    lexer = shlex.shlex(command, posix=True, punctuation_chars=False)
    lexer.whitespace_split = True
    lexer.commenters = "#"
    return list(lexer)


def parse_ns(text):
    m = re.fullmatch(r"([0-9]*\.?[0-9]+)(ns|us|ms|s)", text)
    if not m:
        return None
    return int(float(m.group(1)) * UNITS[m.group(2)])


def fmt_ns(ns):
    return f"{max(ns, 1)}ns"


def shorten(argv, scale):
    """Scales the virtual times of one fairsim command and caps compare's seeds."""
    out = list(argv)
    for i, w in enumerate(out[:-1]):
        nxt = out[i + 1]
        if w in TIME_OPTIONS:
            ns = parse_ns(nxt)
            if ns is not None:
                out[i + 1] = fmt_ns(ns // scale)
        elif w == "--trace-window":
            a, sep, b = nxt.partition("..")
            parts = []
            for p in (a, b):
                ns = parse_ns(p) if p else None
                parts.append(fmt_ns(ns // scale) if ns is not None else p)
            out[i + 1] = parts[0] + sep + parts[1]
        elif w in ("--seeds", "--min-seeds") and out[1] == "compare" and nxt.isdigit():
            out[i + 1] = str(min(int(nxt), 2))
    # --until's default --min-seeds (5) is above the capped --seeds: give it the cap.
    if len(out) > 1 and out[1] == "compare" and "--until" in out and "--min-seeds" not in out:
        out += ["--min-seeds", "2"]
    return out


def main():
    args = sys.argv[1:]
    if not args:
        print("usage: docs_commands.py FAIRSIM_BINARY [--scale N] [--list]", file=sys.stderr)
        return 2
    binary = os.path.abspath(args[0])
    scale = 20
    if "--scale" in args:
        scale = int(args[args.index("--scale") + 1])
    list_only = "--list" in args
    if "--page" in args:
        pages = [args[args.index("--page") + 1]]
    else:
        pages = ["README.md"] + sorted(
            os.path.join("docs", p)
            for p in os.listdir(os.path.join(ROOT, "docs"))
            if p.endswith(".md") and os.path.join("docs", p) not in OWN_BUILD
        )
    failures = []
    ran = 0
    started = time.monotonic()
    for page in pages:
        commands = list(blocks(os.path.join(ROOT, page)))
        if not commands:
            continue
        with tempfile.TemporaryDirectory(prefix="fairsim-docs-") as scratch:
            for link in ("examples", "experiments", "validation", "crates"):
                os.symlink(os.path.join(ROOT, link), os.path.join(scratch, link))
            for command in commands:
                argv = words(command)
                if not argv or argv[0] != "fairsim":
                    print(f"-- {page}: not run here (not a fairsim command): {command}")
                    continue
                why = next((w for p, w in NOT_HERE if p.search(command)), None)
                if why:
                    print(f"-- {page}: not run here ({why}): {command}")
                    continue
                argv = shorten(argv, scale)
                shown = " ".join(shlex.quote(w) for w in argv)
                if list_only:
                    print(f"{page}: {shown}")
                    continue
                t0 = time.monotonic()
                try:
                    done = subprocess.run(
                        [binary] + argv[1:],
                        cwd=scratch,
                        stdout=subprocess.PIPE,
                        stderr=subprocess.PIPE,
                        timeout=LIMIT_S,
                        check=False,
                    )
                    rc, err = done.returncode, done.stderr.decode(errors="replace")
                except subprocess.TimeoutExpired:
                    rc, err = "timeout", f"ran past {LIMIT_S} s"
                took = time.monotonic() - t0
                ran += 1
                status = "ok" if rc == 0 else f"FAILED ({rc})"
                print(f"{status:>10} {took:6.1f}s  {page}: {shown}")
                if rc != 0:
                    last = err.strip().splitlines()[-1:] or [""]
                    print(f"           {last[0]}")
                    failures.append((page, shown))
    if list_only:
        return 0
    print(f"{ran} commands run in {time.monotonic() - started:.0f} s, {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
