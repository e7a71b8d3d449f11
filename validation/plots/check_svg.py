#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Checks the SVGs `fairsim run --plot DIR` / `compare --plot DIR` wrote against their data.

Usage: check_svg.py DIR

Every *.svg in DIR must parse as XML with an <svg> root, and each plot must carry the
series its data file (DIR/plot-data.json) says it holds: latency-cdf.svg names every
latency series (label) in its text; timeline.svg draws at least one rectangle per CPU row
that ran something and names its window; newidle.svg names every domain level;
metrics.svg names every metric; frequency.svg names every cpufreq policy. A plot the
data calls for but that is missing fails too.
Python 3.11 standard library only. Exits 1 with a one-line message on the first failure.
"""
import json
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

SVG = "{http://www.w3.org/2000/svg}"


def fail(msg):
    print(f"check_svg: FAILED: {msg}", file=sys.stderr)
    sys.exit(1)


def load(path):
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError as e:
        fail(f"{path}: not well-formed XML ({e})")
    if root.tag not in ("svg", SVG + "svg"):
        fail(f"{path}: root element is {root.tag!r}, not <svg>")
    return root


def texts(root):
    return [("".join(t.itertext())).strip() for t in root.iter() if t.tag in ("text", SVG + "text")]


def rects(root):
    return [r for r in root.iter() if r.tag in ("rect", SVG + "rect")]


def need_texts(path, root, wanted, what):
    have = "\n".join(texts(root))
    for w in wanted:
        if w not in have:
            fail(f"{path}: no text names the {what} {w!r}")


def main():
    if len(sys.argv) != 2:
        fail("usage: check_svg.py DIR")
    d = Path(sys.argv[1])
    data = json.load(open(d / "plot-data.json"))
    if data.get("format") != "fairsim-plot-data":
        fail(f"{d / 'plot-data.json'}: format is {data.get('format')!r}")
    svgs = sorted(d.glob("*.svg"))
    roots = {p.name: load(p) for p in svgs}
    expect = []
    if data["latency"]:
        expect.append("latency-cdf.svg")
    if data.get("timeline"):
        expect.append("timeline.svg")
    if data.get("newidle"):
        expect.append("newidle.svg")
    if data["metrics"]:
        expect.append("metrics.svg")
    if data.get("frequency"):
        expect.append("frequency.svg")
    for name in expect:
        if name not in roots:
            fail(f"{d}: the data holds {name[:-4]} but {name} is missing")
    if "latency-cdf.svg" in roots:
        need_texts("latency-cdf.svg", roots["latency-cdf.svg"], [s["label"] for s in data["latency"]], "series")
    if "timeline.svg" in roots:
        tl = data["timeline"]
        busy_rows = {s["cpu"] for s in tl["slices"]}
        if len(rects(roots["timeline.svg"])) < len(busy_rows):
            fail(f"timeline.svg: {len(rects(roots['timeline.svg']))} rectangles for {len(busy_rows)} busy CPUs")
    if "newidle.svg" in roots:
        need_texts("newidle.svg", roots["newidle.svg"], [s["name"] for s in data["newidle"]["domains"]], "domain")
    if "metrics.svg" in roots:
        need_texts("metrics.svg", roots["metrics.svg"], [m["name"] for m in data["metrics"]], "metric")
    if "frequency.svg" in roots:
        need_texts("frequency.svg", roots["frequency.svg"], [p["name"] for p in data["frequency"]["policies"]], "policy")
    print(f"check_svg: OK. {len(svgs)} SVGs in {d} parse and carry the series of plot-data.json ({', '.join(expect)}).")


if __name__ == "__main__":
    main()
