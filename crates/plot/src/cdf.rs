//! `latency-cdf.svg`: the wakeup-latency CDF, one step line per series on a log axis,
//! under a title fitted to the picture and a note stating the histogram's bucket widths.

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::canvas::{Area, DrawResult, FONT};
use crate::data::{HdrBuckets, LatencyCdf, PlotData};
use crate::error::PlotError;
use crate::style::{fmt_num, legend_box, log_range, render, series_color, GUIDE};
use crate::text::{fit, header, width};

/// The picture's size.
const SIZE: (u32, u32) = (900, 600);

/// The legend's font size.
const LEGEND: u32 = 13;

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

/// A duration in ns as the plots write it: ns below 1 µs, µs below 1 ms, else ms.
pub(crate) fn fmt_ns(ns: u64) -> String {
    if ns < 1000 {
        format!("{ns} ns")
    } else if ns < 1_000_000 {
        format!("{} µs", fmt_num(ns as f64 / 1e3))
    } else {
        format!("{} ms", fmt_num(ns as f64 / 1e6))
    }
}

/// The note stating the bucket widths: those of the first series that records them
/// (every series of one plot comes from histograms built alike).
pub(crate) fn bucket_note(data: &PlotData) -> String {
    let b: Option<HdrBuckets> = data.latency.iter().find_map(|c| c.buckets);
    let total: u64 = data.latency.iter().map(|c| c.total).sum();
    let wakeups = format!("{total} wakeups in all");
    match b {
        Some(b) => {
            // Above linear_to_ns, a bucket is at most 2 * unit / linear_to of its value. The
            // widths are written in whole ns, exactly as the histogram has them.
            let pct = 200.0 * b.unit_ns as f64 / b.linear_to_ns as f64;
            format!(
                "buckets: {} ns wide up to {} ns, then at most {}% of the latency (HDR \
                 histogram); {wakeups}",
                b.unit_ns,
                b.linear_to_ns,
                fmt_num(pct)
            )
        }
        None => format!("buckets: as the data file's steps (widths not recorded); {wakeups}"),
    }
}

/// Draws the CDF of `data.latency` (validated: every series has steps and a total).
pub(crate) fn draw(data: &PlotData) -> Result<String, PlotError> {
    render(FILE, SIZE, |root| {
        let top = header(
            root,
            &format!("Wakeup latency: {}", data.title),
            &[bucket_note(data)],
            SIZE.0,
        )?;
        let (_, body) = root.split_vertically(top);
        draw_on(root, &body, data)
    })
}

/// Draws the chart on `body`, the part of `root` below the header, and its legend on
/// `root` (plotters' pixel ranges are the picture's own).
fn draw_on(root: &Area, body: &Area, data: &PlotData) -> DrawResult {
    let us = |ns: u64| ns as f64 / 1000.0;
    let (lo, hi) = log_range(
        data.latency
            .iter()
            .flat_map(|c| c.points.iter().map(move |p| us(p.0))),
    );
    // A latency of 0 has no place on a log axis; it is drawn at the axis' left end.
    let x_of = |ns: u64| us(ns).max(lo);
    let mut chart = ChartBuilder::on(body)
        .margin(15)
        // The last x label (say 100000) is centred on the right edge: room for half of it.
        .margin_right(35)
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
    let mut legend: Vec<(RGBColor, String)> = Vec::new();
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
        // The legend box sits inside the plot: a label is cut to half its width, so that
        // a long feature list cannot run off the picture.
        let marks = format!(" ({})", marks.join(", "));
        let room = f64::from(SIZE.0) / 2.0 - width(&marks, LEGEND);
        let label = format!("{}{marks}", fit(&cdf.label, LEGEND, room));
        chart.draw_series(LineSeries::new(steps, color.stroke_width(2)))?;
        legend.push((color, label));
        chart.draw_series(MARKS.iter().map(|&(p, _)| {
            let ns = percentile(cdf, p);
            Circle::new((x_of(ns), p as f64 / 100.0), 4, color.filled())
        }))?;
    }
    // The legend sits in the lower right corner, where every CDF has reached 1 and
    // little is drawn.
    let (px, py) = chart.plotting_area().get_pixel_range();
    legend_box(root, &legend, (px.end - 10, py.end - 10))?;
    Ok(())
}
