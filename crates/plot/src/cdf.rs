//! `latency-cdf.svg`: the wakeup-latency CDF, one step line per series on a log axis.

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::data::{LatencyCdf, PlotData};
use crate::error::PlotError;
use crate::style::{fmt_num, log_range, render, series_color, Area, DrawResult, FONT, GUIDE};

/// The file name.
pub(crate) const FILE: &str = "latency-cdf.svg";

/// The percentiles marked on every series, with their names.
const MARKS: [(u64, &str); 2] = [(50, "p50"), (99, "p99")];

/// The smallest latency of the step at or above `pct` percent of the wakeups, in ns
/// (integer arithmetic, so that the marker sits exactly on a step).
pub(crate) fn percentile(cdf: &LatencyCdf, pct: u64) -> u64 {
    let need = u128::from(cdf.total) * u128::from(pct);
    cdf.points
        .iter()
        .find(|p| u128::from(p.1) * 100 >= need)
        .or(cdf.points.last())
        .map_or(0, |p| p.0)
}

/// Draws the CDF of `data.latency` (validated: every series has steps and a total).
pub(crate) fn draw(data: &PlotData) -> Result<String, PlotError> {
    render(FILE, (900, 600), |root| draw_on(root, data))
}

fn draw_on(root: &Area, data: &PlotData) -> DrawResult {
    let us = |ns: u64| ns as f64 / 1000.0;
    let (lo, hi) = log_range(
        data.latency
            .iter()
            .flat_map(|c| c.points.iter().map(move |p| us(p.0))),
    );
    // A latency of 0 has no place on a log axis; it is drawn at the axis' left end.
    let x_of = |ns: u64| us(ns).max(lo);
    let mut chart = ChartBuilder::on(root)
        .caption(
            format!("{}: wakeup latency", data.title),
            (FONT, 20).into_font(),
        )
        .margin(15)
        .x_label_area_size(45)
        .y_label_area_size(60)
        .build_cartesian_2d((lo..hi).log_scale(), 0.0f64..1.0)?;
    chart
        .configure_mesh()
        .max_light_lines(1)
        .x_desc("wakeup latency (µs, log scale)")
        .y_desc("fraction of wakeups")
        .x_label_formatter(&|v| fmt_num(*v))
        .y_label_formatter(&|v| fmt_num(*v))
        .label_style((FONT, 13))
        .axis_desc_style((FONT, 15))
        .draw()?;
    for (frac, name) in MARKS.map(|(p, n)| (p as f64 / 100.0, n)) {
        chart.draw_series(LineSeries::new(
            [(lo, frac), (hi, frac)],
            GUIDE.stroke_width(1),
        ))?;
        chart.draw_series(std::iter::once(Text::new(
            name,
            (lo, frac),
            TextStyle::from((FONT, 12).into_font())
                .color(&GUIDE)
                .pos(Pos::new(HPos::Left, VPos::Bottom)),
        )))?;
    }
    for (i, cdf) in data.latency.iter().enumerate() {
        let color = series_color(i);
        let total = cdf.total as f64;
        // Steps: the fraction holds until the next latency, then jumps.
        let mut steps = Vec::with_capacity(cdf.points.len() * 2 + 1);
        let mut frac = 0.0;
        for &(ns, count) in &cdf.points {
            steps.push((x_of(ns), frac));
            frac = count as f64 / total;
            steps.push((x_of(ns), frac));
        }
        steps.push((hi, frac));
        let marks: Vec<String> = MARKS
            .iter()
            .map(|&(p, n)| format!("{n} {} µs", fmt_num(us(percentile(cdf, p)))))
            .collect();
        chart
            .draw_series(LineSeries::new(steps, color.stroke_width(2)))?
            .label(format!("{} ({})", cdf.label, marks.join(", ")))
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 20, y)], color.stroke_width(2)));
        chart.draw_series(MARKS.iter().map(|&(p, _)| {
            let ns = percentile(cdf, p);
            Circle::new((x_of(ns), p as f64 / 100.0), 4, color.filled())
        }))?;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::LowerRight)
        .label_font((FONT, 13))
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()?;
    Ok(())
}
