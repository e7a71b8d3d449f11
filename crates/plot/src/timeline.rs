//! `timeline.svg`: what the CPUs did during the window. Up to [`MAX_CPU_ROWS`] CPUs get a
//! row each (CPU 0 on top), a rectangle per slice, idle left blank, pids written in the
//! slices wide enough to hold them. A bigger machine gets a row per run of CPUs of one
//! last-level cache ([`crate::data::Timeline::groups`]), each time bucket stacked by the
//! share of the row's CPU time every kind of work took: 224 rows of one or two pixels
//! cannot be read, shares can.

use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::canvas::{Area, DrawResult, FONT};
use crate::cdf::fmt_ns;
use crate::data::{PlotData, Slice, SliceKind, Timeline};
use crate::error::PlotError;
use crate::style::{
    fmt_num, legend_rows, render, task_color, Entry, BALANCE, LOCK_SPIN, NEWIDLE, TASKS,
};
use crate::text::{fit, header};

/// The file name.
pub(crate) const FILE: &str = "timeline.svg";

/// The picture's size: fixed, so that 4 CPUs get tall rows and 64 CPUs thin ones.
const SIZE: (u32, u32) = (1600, 1000);

/// The most CPUs drawn a row each: at 64 a row is about 11 pixels high, enough to tell
/// a task from its neighbour's.
pub(crate) const MAX_CPU_ROWS: u32 = 64;

/// The rows a bigger machine is drawn in, about: each LLC is split into runs of CPUs
/// until there are this many.
const TARGET_ROWS: usize = 32;

/// Task families named in the legend (and given their own colour in the shares); the
/// rest are listed as one entry.
const MAX_FAMILIES: usize = 12;

/// Swatches shown per family: the colours of its first pids.
const MAX_SWATCHES: usize = 4;

/// A comm's family: the comm without its trailing instance number (`nano_sleep12` and
/// `nano_sleep3` are `nano_sleep`, `schbench-w0.1` is `schbench-w`), so that a workload's
/// threads share one legend entry however many there are.
pub(crate) fn family(comm: &str) -> &str {
    let f = comm.trim_end_matches(|c: char| c.is_ascii_digit() || matches!(c, '.' | ':' | '/'));
    if f.is_empty() {
        comm
    } else {
        f
    }
}

/// Task families in order of their first pid, each with its pids.
fn families(t: &Timeline) -> Vec<(&str, Vec<u32>)> {
    let mut out: Vec<(&str, Vec<u32>)> = Vec::new();
    for (pid, comm) in &t.tasks {
        let f = family(comm);
        match out.iter_mut().find(|e| e.0 == f) {
            Some(e) => e.1.push(*pid),
            None => out.push((f, vec![*pid])),
        }
    }
    out
}

/// The text of a family's legend entry: `sh (pid 1)`, `nano_sleep (224 tasks, pids 2-225)`.
fn family_text(name: &str, pids: &[u32]) -> String {
    match pids {
        [one] => format!("{name} (pid {one})"),
        _ => {
            let (lo, hi) = (pids[0], pids[pids.len() - 1]);
            format!("{name} ({} tasks, pids {lo}-{hi})", pids.len())
        }
    }
}

/// The kernel's kinds of work, first in every legend.
fn kernel_entries() -> Vec<Entry> {
    [
        (NEWIDLE, "newidle balance"),
        (BALANCE, "periodic/nohz balance"),
        (LOCK_SPIN, "rq lock spin"),
    ]
    .into_iter()
    .map(|(c, t)| Entry {
        colors: vec![c],
        text: t.into(),
    })
    .collect()
}

/// The "and N more" entry for families past [`MAX_FAMILIES`].
fn more_entry(fams: &[(&str, Vec<u32>)], color: Option<RGBColor>) -> Option<Entry> {
    let rest = fams.get(MAX_FAMILIES..).filter(|r| !r.is_empty())?;
    let tasks: usize = rest.iter().map(|f| f.1.len()).sum();
    Some(Entry {
        colors: color.into_iter().collect(),
        text: format!("{} more families ({tasks} tasks)", rest.len()),
    })
}

/// Draws `data.timeline` (validated).
pub(crate) fn draw(data: &PlotData, t: &Timeline) -> Result<String, PlotError> {
    render(FILE, SIZE, |root| {
        if t.cpus <= MAX_CPU_ROWS {
            per_cpu(root, data, t)
        } else {
            by_group(root, data, t)
        }
    })
}

/// The window as the titles write it.
fn window(t: &Timeline) -> String {
    format!("{} to {} µs", t.start_ns / 1000, t.end_ns / 1000)
}

/// Builds the chart below the header and legend: x in µs from the window's start, y in
/// rows (row 0 on top), with the axes drawn.
fn chart_below<'a>(
    root: &Area<'a>,
    top: i32,
    span_us: f64,
    rows: f64,
    y_desc: &str,
    y_area: u32,
) -> DrawResult<ChartContext<'a, SVGBackend<'a>, Cartesian2d<RangedCoordf64, RangedCoordf64>>> {
    let (_, body) = root.split_vertically(top);
    let mut chart = ChartBuilder::on(&body)
        .margin(10)
        .x_label_area_size(45)
        .y_label_area_size(y_area)
        .build_cartesian_2d(0.0..span_us, 0.0..rows)?;
    chart
        .configure_mesh()
        .disable_y_mesh()
        .max_light_lines(0)
        .y_labels(0)
        .x_desc("time from the window start (µs)")
        .y_desc(y_desc)
        .x_label_formatter(&|v| fmt_num(*v))
        .label_style((FONT, 13))
        .axis_desc_style((FONT, 15))
        .draw()?;
    Ok(chart)
}

/// One row per CPU, one rectangle per slice, coloured by pid.
fn per_cpu(root: &Area, data: &PlotData, t: &Timeline) -> DrawResult {
    let span_us = (t.end_ns - t.start_ns) as f64 / 1000.0;
    let cpus = f64::from(t.cpus);
    // The plot is about 1470 px wide; the note's pixel width is the chart's, below.
    let px_us = span_us / 1470.0;
    let note = format!(
        "one row per CPU; a pixel is about {}; slices shorter than a pixel are drawn a pixel \
         wide; pids written in slices wide enough; idle is blank",
        fmt_ns((px_us * 1000.0).round() as u64)
    );
    let top = header(
        root,
        &format!("Per-CPU timeline, {}: {}", window(t), data.title),
        &[note],
        SIZE.0,
    )?;
    let fams = families(t);
    let mut entries = kernel_entries();
    for (name, pids) in fams.iter().take(MAX_FAMILIES) {
        let mut colors: Vec<RGBColor> = Vec::new();
        for c in pids.iter().map(|&p| task_color(p)) {
            if !colors.contains(&c) && colors.len() < MAX_SWATCHES {
                colors.push(c);
            }
        }
        entries.push(Entry {
            colors,
            text: fit(&family_text(name, pids), 13, 500.0),
        });
    }
    entries.extend(more_entry(&fams, None));
    let below = legend_rows(root, &entries, (80, top + 8), SIZE.0 as i32 - 20)?;
    let mut chart = chart_below(root, below, span_us, cpus, "CPU", 60)?;
    let (px, py) = chart.plotting_area().get_pixel_range();
    let plot_w = f64::from((px.end - px.start).max(1));
    let row_px = f64::from((py.end - py.start).max(1)) / cpus;
    // Rows tall enough to show a gap get one, so that neighbouring CPUs running the same
    // task stay apart.
    let inset = if row_px >= 6.0 { 0.12 } else { 0.0 };
    // Every slice is at least a pixel wide: a 2 µs newidle balance in a 100 ms window is
    // what the plot is for, and must not vanish.
    let min_us = span_us / plot_w;
    let (ws, we) = (t.start_ns, t.end_ns);
    let visible = || {
        t.slices
            .iter()
            .filter(move |s| s.end_ns > ws && s.start_ns < we)
    };
    let x_of = |s: &Slice| {
        let x0 = (s.start_ns.max(ws) - ws) as f64 / 1000.0;
        let x1 = ((s.end_ns.min(we) - ws) as f64 / 1000.0).max(x0 + min_us);
        (x0, x1)
    };
    chart.draw_series(visible().map(|s| {
        let (x0, x1) = x_of(s);
        let top = cpus - f64::from(s.cpu) - inset;
        let bottom = cpus - f64::from(s.cpu) - 1.0 + inset;
        let color = match s.kind {
            SliceKind::Task => task_color(s.pid),
            SliceKind::Newidle => NEWIDLE,
            SliceKind::Balance => BALANCE,
            SliceKind::LockSpin => LOCK_SPIN,
        };
        Rectangle::new([(x0, top), (x1, bottom)], color.filled())
    }))?;
    // A task's pid inside its slice where the slice holds the text: with 16 colours for
    // any number of pids, the number is what tells two tasks of one colour apart.
    if row_px >= 12.0 {
        let size = ((row_px * 0.6).min(13.0)) as u32;
        let style =
            TextStyle::from((FONT, size).into_font()).pos(Pos::new(HPos::Left, VPos::Center));
        let labels: Vec<(f64, f64, String)> = visible()
            .filter(|s| s.kind == SliceKind::Task)
            .filter_map(|s| {
                let (x0, x1) = x_of(s);
                let text = s.pid.to_string();
                let fits = crate::text::width(&text, size) + 6.0 < (x1 - x0) / min_us;
                fits.then(|| (x0 + 3.0 * min_us, cpus - f64::from(s.cpu) - 0.5, text))
            })
            .collect();
        chart.draw_series(
            labels
                .into_iter()
                .map(|(x, y, text)| Text::new(text, (x, y), style.clone())),
        )?;
    }
    // CPU numbers at row centres, every `step`-th row so that labels do not overlap.
    let mut step = 1u32;
    while f64::from(step) * row_px < 14.0 {
        step *= 2;
    }
    let style = TextStyle::from((FONT, 12).into_font()).pos(Pos::new(HPos::Right, VPos::Center));
    for cpu in (0..t.cpus).step_by(step as usize) {
        let (_, y) = chart.backend_coord(&(0.0, cpus - f64::from(cpu) - 0.5));
        root.draw(&Text::new(
            cpu.to_string(),
            (px.start - 6, y),
            style.clone(),
        ))?;
    }
    Ok(())
}

/// A CPU list as the kernel prints one (`0-6,112-118`).
fn cpu_list(cpus: &[u32]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < cpus.len() {
        let mut j = i;
        while j + 1 < cpus.len() && cpus[j + 1] == cpus[j] + 1 {
            j += 1;
        }
        parts.push(if j > i {
            format!("{}-{}", cpus[i], cpus[j])
        } else {
            cpus[i].to_string()
        });
        i = j + 1;
    }
    parts.join(",")
}

/// One aggregated row: its label, its CPUs, and the group it belongs to.
struct Row {
    label: String,
    cpus: Vec<u32>,
    group: usize,
}

/// The rows of a big machine: each LLC (or, for a file without groups, every 8 CPUs)
/// split into runs of CPUs until there are about [`TARGET_ROWS`], or neighbouring groups
/// merged when there are more than [`MAX_CPU_ROWS`].
fn rows(t: &Timeline) -> (Vec<Row>, &'static str) {
    let (groups, kind): (Vec<(String, Vec<u32>)>, &str) = if t.groups.is_empty() {
        let all: Vec<u32> = (0..t.cpus).collect();
        let chunks = all.chunks(8).map(|c| (String::new(), c.to_vec())).collect();
        (chunks, "CPUs")
    } else {
        let g = t.groups.iter().map(|g| (g.name.clone(), g.cpus.clone()));
        (g.collect(), "LLC")
    };
    let per_row = groups.len().div_ceil(MAX_CPU_ROWS as usize).max(1);
    let split = TARGET_ROWS.div_ceil(groups.len().max(1)).max(1);
    let mut out = Vec::new();
    for (gi, chunk) in groups.chunks(per_row).enumerate() {
        let cpus: Vec<u32> = chunk.iter().flat_map(|g| g.1.iter().copied()).collect();
        let name = if per_row > 1 || chunk[0].0.is_empty() {
            String::new()
        } else {
            format!("{}: ", chunk[0].0)
        };
        let size = cpus.len().div_ceil(split).max(1);
        for part in cpus.chunks(size) {
            out.push(Row {
                label: format!("{name}{}", cpu_list(part)),
                cpus: part.to_vec(),
                group: gi,
            });
        }
    }
    (out, kind)
}

/// A bucket width of 1, 2 or 5 times a power of ten ns, at least `min_ns`.
fn nice_ns(min_ns: f64) -> u64 {
    let mut unit = 1u64;
    loop {
        for m in [1, 2, 5] {
            if (unit * m) as f64 >= min_ns {
                return unit * m;
            }
        }
        unit = unit.saturating_mul(10);
    }
}

/// One row per run of CPUs of an LLC; each time bucket stacked by the share of the row's
/// CPU time each task family and each kind of kernel work took.
fn by_group(root: &Area, data: &PlotData, t: &Timeline) -> DrawResult {
    let span_ns = t.end_ns - t.start_ns;
    let span_us = span_ns as f64 / 1000.0;
    // About four pixels a bucket across the ~1400 px plot.
    let bucket_ns = nice_ns(span_ns as f64 / 350.0);
    let buckets = span_ns.div_ceil(bucket_ns) as usize;
    let (rows, kind) = rows(t);
    let fams = families(t);
    let named = fams.len().min(MAX_FAMILIES);
    // Categories: the named families, the other tasks, then the kernel's three kinds.
    let cats = named + 4;
    let fam_color = |i: usize| TASKS[i % TASKS.len()];
    let other = RGBColor(0xc7, 0xc7, 0xc7);
    let color_of = |c: usize| match c {
        c if c < named => fam_color(c),
        c if c == named => other,
        c if c == named + 1 => NEWIDLE,
        c if c == named + 2 => BALANCE,
        _ => LOCK_SPIN,
    };
    let mut cat_of_pid: Vec<(u32, usize)> = Vec::new();
    for (i, (_, pids)) in fams.iter().enumerate() {
        cat_of_pid.extend(pids.iter().map(|&p| (p, i.min(named))));
    }
    cat_of_pid.sort_unstable();
    let mut row_of = vec![usize::MAX; t.cpus as usize];
    for (r, row) in rows.iter().enumerate() {
        for &c in &row.cpus {
            row_of[c as usize] = r;
        }
    }
    // ns[(row * buckets + bucket) * cats + cat]: the time each category took.
    let mut ns = vec![0u64; rows.len() * buckets * cats];
    for s in &t.slices {
        let r = row_of[s.cpu as usize];
        let (a, b) = (s.start_ns.max(t.start_ns), s.end_ns.min(t.end_ns));
        if r == usize::MAX || b <= a {
            continue;
        }
        let cat = match s.kind {
            SliceKind::Task => cat_of_pid
                .binary_search_by_key(&s.pid, |e| e.0)
                .map_or(named, |i| cat_of_pid[i].1),
            SliceKind::Newidle => named + 1,
            SliceKind::Balance => named + 2,
            SliceKind::LockSpin => named + 3,
        };
        let first = ((a - t.start_ns) / bucket_ns) as usize;
        let last = ((b - 1 - t.start_ns) / bucket_ns) as usize;
        for k in first..=last.min(buckets - 1) {
            let lo = t.start_ns + k as u64 * bucket_ns;
            let overlap = b.min(lo + bucket_ns) - a.max(lo);
            ns[(r * buckets + k) * cats + cat] += overlap;
        }
    }
    let sizes: Vec<usize> = rows.iter().map(|r| r.cpus.len()).collect();
    let (lo, hi) = (
        sizes.iter().copied().min().unwrap_or(0),
        sizes.iter().copied().max().unwrap_or(0),
    );
    let per_row = if lo == hi {
        format!("{hi} CPUs")
    } else {
        format!("{lo} to {hi} CPUs")
    };
    let note = format!(
        "{} CPUs in {} rows of {per_row} ({}); buckets of {}, each stacked by the share of \
         the row's CPU time a task family or the kernel's work took (full height: every CPU \
         of the row busy); idle is blank",
        t.cpus,
        rows.len(),
        if kind == "LLC" {
            "each within one last-level cache"
        } else {
            "consecutive CPUs"
        },
        fmt_ns(bucket_ns)
    );
    let title = format!("Timeline by {kind}, {}: {}", window(t), data.title);
    let top = header(root, &title, &[note], SIZE.0)?;
    let mut entries = kernel_entries();
    for (i, (name, pids)) in fams.iter().take(named).enumerate() {
        entries.push(Entry {
            colors: vec![fam_color(i)],
            text: fit(&family_text(name, pids), 13, 500.0),
        });
    }
    entries.extend(more_entry(&fams, Some(other)));
    let below = legend_rows(root, &entries, (150, top + 8), SIZE.0 as i32 - 20)?;
    let n = rows.len() as f64;
    let mut chart = chart_below(root, below, span_us, n, "CPUs", 140)?;
    let inset = 0.06;
    let mut rects = Vec::new();
    for (r, row) in rows.iter().enumerate() {
        let cap = (bucket_ns * row.cpus.len() as u64) as f64;
        let base = n - r as f64 - 1.0 + inset;
        let height = 1.0 - 2.0 * inset;
        for k in 0..buckets {
            let x0 = (k as u64 * bucket_ns) as f64 / 1000.0;
            let x1 = (((k + 1) as u64 * bucket_ns).min(span_ns)) as f64 / 1000.0;
            let mut y = base;
            for c in 0..cats {
                let v = ns[(r * buckets + k) * cats + c];
                if v == 0 {
                    continue;
                }
                let h = (v as f64 / cap).min(1.0) * height;
                rects.push(Rectangle::new([(x0, y), (x1, y + h)], color_of(c).filled()));
                y += h;
            }
        }
    }
    chart.draw_series(rects)?;
    // A line between LLCs, so that they read as blocks (runs of consecutive CPUs from a
    // file without groups have no such boundary).
    let bounds: Vec<f64> = rows
        .windows(2)
        .enumerate()
        .filter(|(_, w)| kind == "LLC" && w[0].group != w[1].group)
        .map(|(i, _)| n - i as f64 - 1.0)
        .collect();
    chart.draw_series(
        bounds
            .into_iter()
            .map(|y| PathElement::new([(0.0, y), (span_us, y)], BLACK.stroke_width(1))),
    )?;
    let (px, py) = chart.plotting_area().get_pixel_range();
    let row_px = f64::from((py.end - py.start).max(1)) / n;
    let mut step = 1usize;
    while step as f64 * row_px < 14.0 {
        step *= 2;
    }
    let style = TextStyle::from((FONT, 12).into_font()).pos(Pos::new(HPos::Right, VPos::Center));
    for (r, row) in rows.iter().enumerate().step_by(step) {
        let (_, y) = chart.backend_coord(&(0.0, n - r as f64 - 0.5));
        let text = fit(&row.label, 12, 130.0);
        root.draw(&Text::new(text, (px.start - 6, y), style.clone()))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn families_drop_instance_numbers() {
        assert_eq!(family("nano_sleep12"), "nano_sleep");
        assert_eq!(family("schbench-w0.1"), "schbench-w");
        assert_eq!(family("sh"), "sh");
        assert_eq!(family("42"), "42");
    }

    #[test]
    fn cpu_lists_read_as_the_kernels() {
        assert_eq!(cpu_list(&[0, 1, 2, 5, 112, 113]), "0-2,5,112-113");
        assert_eq!(nice_ns(4200.0), 5000);
        assert_eq!(nice_ns(1.0), 1);
    }
}
