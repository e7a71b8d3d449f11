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

Every plot's texts must fit the picture: each horizontal <text> is measured with DejaVu
Sans' advance widths (the face Linux viewers pick for `sans-serif`, and wider than
Helvetica or Arial) at its font-size and must lie inside the canvas, within TOLERANCE px.
Every histogram, CDF and timeline states its bucket width (or pixel width) in a text:
latency-cdf.svg says "buckets:", newidle.svg "buckets of", timeline.svg "buckets of" or
"a pixel is about". metrics.svg shades and stars every metric compare's table stars
(the data's `change.significant`).
Python 3.11 standard library only. Exits 1 with a one-line message on the first failure.
"""
import json
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

SVG = "{http://www.w3.org/2000/svg}"

# DejaVu Sans' advances of ' ' to '~' in thousandths of an em (its hmtx table, 2048 units
# an em); the same table as crates/plot/src/text.rs.
ASCII_ADVANCE = [
    318, 401, 460, 838, 636, 950, 780, 275, 390, 390, 500, 838, 318, 361, 318, 337, 636, 636,
    636, 636, 636, 636, 636, 636, 636, 636, 337, 337, 838, 838, 838, 531, 1000, 684, 686, 698,
    770, 632, 575, 775, 752, 295, 295, 656, 557, 863, 748, 787, 603, 787, 695, 635, 611, 732,
    684, 989, 685, 611, 685, 390, 337, 390, 838, 500, 500, 613, 635, 550, 635, 615, 352, 635,
    634, 278, 278, 579, 278, 974, 634, 612, 635, 635, 411, 521, 392, 634, 592, 818, 592, 592,
    525, 636, 337, 636, 838,
]
OTHER_ADVANCE = {"µ": 636, "·": 318, "–": 500, "±": 838, "×": 838, "≤": 838, "≥": 838, "−": 838}

# How far past the canvas' edge a text may reach, in px: less than half a character.
TOLERANCE = 3.0

# The text that states each plot's bucket (or pixel) width.
BUCKET_WORDS = {
    "latency-cdf.svg": ("buckets:",),
    "newidle.svg": ("buckets of",),
    "timeline.svg": ("buckets of", "a pixel is about"),
}


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


def text_width(text, size):
    """The width of `text` at `size` px in DejaVu Sans; a character not in the table
    counts a full em, so that the estimate errs wide."""
    em = 0
    for c in text:
        if " " <= c <= "~":
            em += ASCII_ADVANCE[ord(c) - 32]
        else:
            em += OTHER_ADVANCE.get(c, 1000)
    return em / 1000.0 * size


def canvas_width(path, root):
    w = root.get("width")
    if w is None and root.get("viewBox"):
        w = root.get("viewBox").split()[2]
    try:
        return float(w)
    except (TypeError, ValueError):
        fail(f"{path}: the <svg> has no width")


def check_fit(path, root):
    """Every horizontal text lies inside the canvas (rotated axis titles are left out)."""
    width = canvas_width(path, root)
    for t in root.iter():
        if t.tag not in ("text", SVG + "text") or t.get("transform"):
            continue
        text = "".join(t.itertext()).strip()
        if not text:
            continue
        try:
            x, size = float(t.get("x", "0")), float(t.get("font-size", "16"))
        except ValueError:
            fail(f"{path}: text {text!r} has a non-numeric x or font-size")
        w = text_width(text, size)
        anchor = t.get("text-anchor", "start")
        left = x - w / 2 if anchor == "middle" else x - w if anchor == "end" else x
        if left < -TOLERANCE or left + w > width + TOLERANCE:
            fail(
                f"{path}: text {text!r} spans x {left:.0f} to {left + w:.0f}, outside the "
                f"canvas' 0 to {width:.0f}"
            )


def need_texts(path, root, wanted, what, cut_ok=False):
    """Each of `wanted` is in some text; with `cut_ok`, a text may carry its first 8 or
    more characters followed by "…" instead (a legend shortened to fit the picture)."""
    all_texts = texts(root)
    have = "\n".join(all_texts)
    cuts = [t.split("…")[0].rstrip() for t in all_texts if "…" in t] if cut_ok else []
    for w in wanted:
        if w not in have and not any(len(c) >= 8 and w.startswith(c) for c in cuts):
            fail(f"{path}: no text names the {what} {w!r}")


def main():
    if len(sys.argv) != 2:
        fail("usage: check_svg.py DIR")
    d = Path(sys.argv[1])
    try:
        with open(d / "plot-data.json") as f:
            data = json.load(f)
    except (OSError, ValueError) as e:
        fail(f"{d / 'plot-data.json'}: cannot read the plot data ({e})")
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
    for name, root in roots.items():
        check_fit(name, root)
        words = BUCKET_WORDS.get(name)
        if words and not any(w in t for t in texts(root) for w in words):
            fail(f"{name}: no text states the bucket width (looked for {' or '.join(map(repr, words))})")
    if "metrics.svg" in roots:
        have = texts(roots["metrics.svg"])
        for m in data["metrics"]:
            c = m.get("change")
            if c and c["significant"] and not any(t.startswith(f"{c['mean']}: new *") for t in have):
                fail(f"metrics.svg: {m['name']!r} is significant in the table but no caption stars it")
    if "latency-cdf.svg" in roots:
        need_texts("latency-cdf.svg", roots["latency-cdf.svg"], [s["label"] for s in data["latency"]], "series", cut_ok=True)
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
    print(
        f"check_svg: OK. {len(svgs)} SVGs in {d} parse, carry the series of plot-data.json "
        f"({', '.join(expect)}), fit their canvas and state their bucket widths."
    )


if __name__ == "__main__":
    main()
