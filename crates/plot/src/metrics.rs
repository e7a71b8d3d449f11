//! `metrics.svg`: `compare`'s metrics, one small panel per metric (their units differ),
//! each a bar per feature set with mean ± standard deviation.

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::data::{MetricBars, PlotData};
use crate::error::PlotError;
use crate::style::{
    fmt_num, legend_rows, linear_range, render, series_color, Area, DrawResult, Entry, FONT,
};

/// The file name.
pub(crate) const FILE: &str = "metrics.svg";

/// Panels per row.
const COLUMNS: usize = 3;
/// The picture's width and each panel's height.
const WIDTH: u32 = 1200;
const PANEL_H: u32 = 300;

/// Draws `data.metrics` (validated: every metric has bars with finite values).
pub(crate) fn draw(data: &PlotData) -> Result<String, PlotError> {
    let cols = data.metrics.len().clamp(1, COLUMNS);
    let rows = data.metrics.len().div_ceil(cols).max(1);
    // Feature sets, in order of first appearance; every metric colours a set alike.
    let mut sets: Vec<&str> = Vec::new();
    for b in data.metrics.iter().flat_map(|m| &m.sets) {
        if !sets.contains(&b.label.as_str()) {
            sets.push(&b.label);
        }
    }
    let head = 80;
    let size = (WIDTH, head + rows as u32 * PANEL_H);
    render(FILE, size, |root| {
        root.draw(&Text::new(
            format!("{}: metrics (mean ± stddev)", data.title),
            (WIDTH as i32 / 2, 12),
            TextStyle::from((FONT, 20).into_font()).pos(Pos::new(HPos::Center, VPos::Top)),
        ))?;
        let entries: Vec<Entry> = sets
            .iter()
            .enumerate()
            .map(|(i, s)| Entry {
                colors: vec![series_color(i)],
                text: (*s).to_string(),
            })
            .collect();
        legend_rows(root, &entries, (20, 50), WIDTH as i32 - 20)?;
        let (_, body) = root.split_vertically(head);
        let panels = body.split_evenly((rows, cols));
        for (m, area) in data.metrics.iter().zip(&panels) {
            panel(area, m, &sets)?;
        }
        Ok(())
    })
}

/// One metric's panel.
fn panel(area: &Area, m: &MetricBars, sets: &[&str]) -> DrawResult {
    let n = m.sets.len() as i32;
    let (y0, y1) = linear_range(
        m.sets
            .iter()
            .flat_map(|b| [b.mean - b.stddev, b.mean + b.stddev]),
    );
    let better = if m.higher_better {
        "higher is better"
    } else {
        "lower is better"
    };
    let mut chart = ChartBuilder::on(area)
        .caption(format!("{} ({better})", m.name), (FONT, 15).into_font())
        .margin(10)
        .x_label_area_size(30)
        .y_label_area_size(60)
        // plotters' integer ranges include their end: `0..n - 1` is `n` segments.
        .build_cartesian_2d((0..n - 1).into_segmented(), y0..y1)?;
    let labels: Vec<String> = m.sets.iter().map(|b| short(&b.label)).collect();
    chart
        .configure_mesh()
        .disable_x_mesh()
        .max_light_lines(1)
        .x_labels(m.sets.len())
        .x_label_formatter(&|v| match v {
            SegmentValue::CenterOf(i) if *i >= 0 && *i < n => labels[*i as usize].clone(),
            _ => String::new(),
        })
        .y_label_formatter(&|v| fmt_num(*v))
        .label_style((FONT, 12))
        .draw()?;
    let color_of = |label: &str| series_color(sets.iter().position(|s| *s == label).unwrap_or(0));
    chart.draw_series(m.sets.iter().enumerate().map(|(i, b)| {
        let i = i as i32;
        let mut bar = Rectangle::new(
            [
                (SegmentValue::Exact(i), 0.0f64.clamp(y0, y1)),
                (SegmentValue::Exact(i + 1), b.mean),
            ],
            color_of(&b.label).mix(0.8).filled(),
        );
        bar.set_margin(0, 0, 12, 12);
        bar
    }))?;
    chart.draw_series(m.sets.iter().enumerate().map(|(i, b)| {
        ErrorBar::new_vertical(
            SegmentValue::CenterOf(i as i32),
            b.mean - b.stddev,
            b.mean,
            b.mean + b.stddev,
            BLACK.stroke_width(1),
            10,
        )
    }))?;
    Ok(())
}

/// A feature-set label short enough to sit under its bar.
fn short(label: &str) -> String {
    const MAX: usize = 18;
    if label.chars().count() <= MAX {
        label.to_string()
    } else {
        let head: String = label.chars().take(MAX - 1).collect();
        format!("{head}…")
    }
}
