//! `metrics.svg`: `compare`'s metrics, one small panel per metric (their units differ),
//! each a bar per feature set with mean ± standard deviation, and the mean's change as
//! compare's text table prints it, starred and shaded where the table stars it.

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::canvas::{Area, DrawResult, FONT};
use crate::data::{MeanChange, MetricBars, PlotData};
use crate::error::PlotError;
use crate::style::{fmt_num, legend_rows, linear_range, render, series_color, Entry};
use crate::text::{fit, header, line_height};

/// The file name.
pub(crate) const FILE: &str = "metrics.svg";

/// Panels per row.
const COLUMNS: usize = 3;
/// The picture's width and each panel's height.
const WIDTH: u32 = 1200;
const PANEL_H: u32 = 300;
/// The space above the panels: two title lines, two note lines and a legend row.
const HEAD: u32 = 150;

/// The background of a panel whose change the table stars: a pale yellow that leaves the
/// bars' colours readable.
const STARRED: RGBColor = RGBColor(0xff, 0xf3, 0xc4);

/// The font size of a panel's caption lines.
const CAPTION: u32 = 15;

/// The change as compare's text table writes it: `*19.93%*` when starred, `(19.93%)`
/// otherwise (without the table's column padding).
pub(crate) fn table_cell(c: &MeanChange) -> String {
    if c.significant {
        format!("*{:.2}%*", c.change_pct)
    } else {
        format!("({:.2}%)", c.change_pct)
    }
}

/// The note under the title: what the bars and the marks mean.
fn note(data: &PlotData) -> String {
    let seeds = data.metrics.iter().flat_map(|m| m.sets.iter().map(|b| b.n));
    let (lo, hi) = seeds.fold((u32::MAX, 0), |(lo, hi), n| (lo.min(n), hi.max(n)));
    let n = if lo >= hi {
        hi.to_string()
    } else {
        format!("{lo} to {hi}")
    };
    let starred = data
        .metrics
        .iter()
        .filter(|m| m.change.as_ref().is_some_and(|c| c.significant))
        .count();
    format!(
        "bars: mean ± sample stddev over {n} seeds a side; under each name, the new side's \
         change of the table's mean (positive is better); *starred* and shaded: significant \
         as compare's table stars it (Welch's t-test, 95%), {starred} of {} metrics",
        data.metrics.len()
    )
}

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
    let size = (WIDTH, HEAD + rows as u32 * PANEL_H);
    render(FILE, size, |root| {
        let below = header(
            root,
            &format!("Metrics: {}", data.title),
            &[note(data)],
            WIDTH,
        )?;
        let entries: Vec<Entry> = sets
            .iter()
            .enumerate()
            .map(|(i, s)| Entry {
                colors: vec![series_color(i)],
                text: fit(s, 13, f64::from(WIDTH) / 2.0 - 40.0),
            })
            .collect();
        legend_rows(root, &entries, (20, below + 6), WIDTH as i32 - 20)?;
        let (_, body) = root.split_vertically(HEAD);
        let panels = body.split_evenly((rows, cols));
        for (m, area) in data.metrics.iter().zip(&panels) {
            panel(area, m, &sets)?;
        }
        Ok(())
    })
}

/// One metric's panel: its caption (name, which way is better, the table's change),
/// shaded when the table stars the change, then the bars.
fn panel(area: &Area, m: &MetricBars, sets: &[&str]) -> DrawResult {
    let n = m.sets.len() as i32;
    let (x_range, _) = area.get_pixel_range();
    let panel_w = f64::from(x_range.end - x_range.start);
    let starred = m.change.as_ref().is_some_and(|c| c.significant);
    if starred {
        area.fill(&STARRED)?;
    }
    let better = if m.higher_better {
        "higher is better"
    } else {
        "lower is better"
    };
    let mut caption = vec![fit(
        &format!("{} ({better})", m.name),
        CAPTION,
        panel_w - 20.0,
    )];
    if let Some(c) = &m.change {
        let mut line = format!("{}: new {}", c.mean, table_cell(c));
        if c.significant {
            line.push_str(" significant");
        }
        caption.push(line);
    }
    let centre = (panel_w / 2.0) as i32;
    let mut y = 6;
    for (i, line) in caption.iter().enumerate() {
        let mut font = (FONT, CAPTION).into_font();
        if i > 0 && starred {
            font = font.style(FontStyle::Bold);
        }
        area.draw(&Text::new(
            line.clone(),
            (centre, y),
            TextStyle::from(font).pos(Pos::new(HPos::Center, VPos::Top)),
        ))?;
        y += line_height(CAPTION);
    }
    let (_, body) = area.split_vertically(y + 2);
    let (y0, y1) = linear_range(
        m.sets
            .iter()
            .flat_map(|b| [b.mean - b.stddev, b.mean + b.stddev]),
    );
    let mut chart = ChartBuilder::on(&body)
        .margin(10)
        .x_label_area_size(30)
        .y_label_area_size(60)
        // plotters' integer ranges include their end: `0..n - 1` is `n` segments.
        .build_cartesian_2d((0..n - 1).into_segmented(), y0..y1)?;
    // Each label gets its bar's width, less a little space between neighbours.
    let room = (panel_w - 80.0) / f64::from(n.max(1)) - 8.0;
    let labels: Vec<String> = m.sets.iter().map(|b| fit(&b.label, 12, room)).collect();
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
