//! `timeline.svg`: what every CPU did during the window, one row per CPU (CPU 0 on top),
//! a rectangle per slice, idle left blank.

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::data::{PlotData, SliceKind, Timeline};
use crate::error::PlotError;
use crate::style::{
    legend_rows, render, task_color, Area, DrawResult, Entry, BALANCE, FONT, LOCK_SPIN, NEWIDLE,
};

/// The file name.
pub(crate) const FILE: &str = "timeline.svg";

/// The picture's size: fixed, so that 4 CPUs get tall rows and 224 CPUs thin ones.
const SIZE: (u32, u32) = (1600, 1000);

/// Tasks are named in the legend only up to this many distinct comms; beyond, the
/// legend would be a wall of text.
const MAX_COMMS: usize = 12;

/// Swatches shown per comm: the colours of its first pids.
const MAX_SWATCHES: usize = 4;

/// The legend: the kernel's kinds of work, then the tasks by comm when there are few.
fn legend(t: &Timeline) -> Vec<Entry> {
    let mut entries = vec![
        Entry {
            colors: vec![NEWIDLE],
            text: "newidle balance".into(),
        },
        Entry {
            colors: vec![BALANCE],
            text: "periodic/nohz balance".into(),
        },
        Entry {
            colors: vec![LOCK_SPIN],
            text: "rq lock spin".into(),
        },
    ];
    // Comms in order of their first pid, each with the colours of its pids.
    let mut comms: Vec<(&str, Vec<u32>)> = Vec::new();
    for (pid, comm) in &t.tasks {
        match comms.iter_mut().find(|c| c.0 == comm.as_str()) {
            Some(c) => c.1.push(*pid),
            None => comms.push((comm.as_str(), vec![*pid])),
        }
    }
    if comms.len() <= MAX_COMMS {
        for (comm, pids) in comms {
            let mut colors: Vec<RGBColor> = Vec::new();
            for c in pids.iter().map(|&p| task_color(p)) {
                if !colors.contains(&c) && colors.len() < MAX_SWATCHES {
                    colors.push(c);
                }
            }
            let text = if pids.len() == 1 {
                format!("{comm} ({})", pids[0])
            } else {
                format!("{comm} ({} tasks)", pids.len())
            };
            entries.push(Entry { colors, text });
        }
    }
    entries
}

/// Draws `data.timeline` (validated).
pub(crate) fn draw(data: &PlotData, t: &Timeline) -> Result<String, PlotError> {
    render(FILE, SIZE, |root| draw_on(root, data, t))
}

fn draw_on(root: &Area, data: &PlotData, t: &Timeline) -> DrawResult {
    let span_us = (t.end_ns - t.start_ns) as f64 / 1000.0;
    let cpus = f64::from(t.cpus);
    root.draw(&Text::new(
        format!(
            "{}: per-CPU timeline, {} to {} µs",
            data.title,
            t.start_ns / 1000,
            t.end_ns / 1000
        ),
        (SIZE.0 as i32 / 2, 12),
        TextStyle::from((FONT, 20).into_font()).pos(Pos::new(HPos::Center, VPos::Top)),
    ))?;
    let below = legend_rows(root, &legend(t), (80, 48), SIZE.0 as i32 - 20)?;
    let (_, body) = root.split_vertically(below);
    let mut chart = ChartBuilder::on(&body)
        .margin(10)
        .x_label_area_size(45)
        .y_label_area_size(60)
        .build_cartesian_2d(0.0..span_us, 0.0..cpus)?;
    chart
        .configure_mesh()
        .disable_y_mesh()
        .max_light_lines(0)
        .y_labels(0)
        .x_desc("time from the window start (µs)")
        .y_desc("CPU")
        .x_label_formatter(&|v| crate::style::fmt_num(*v))
        .label_style((FONT, 13))
        .axis_desc_style((FONT, 15))
        .draw()?;
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
    chart.draw_series(
        t.slices
            .iter()
            .filter(|s| s.end_ns > ws && s.start_ns < we)
            .map(|s| {
                let x0 = (s.start_ns.max(ws) - ws) as f64 / 1000.0;
                let x1 = ((s.end_ns.min(we) - ws) as f64 / 1000.0).max(x0 + min_us);
                let top = cpus - f64::from(s.cpu) - inset;
                let bottom = cpus - f64::from(s.cpu) - 1.0 + inset;
                let color = match s.kind {
                    SliceKind::Task => task_color(s.pid),
                    SliceKind::Newidle => NEWIDLE,
                    SliceKind::Balance => BALANCE,
                    SliceKind::LockSpin => LOCK_SPIN,
                };
                Rectangle::new([(x0, top), (x1, bottom)], color.filled())
            }),
    )?;
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
