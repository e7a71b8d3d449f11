//! `newidle.svg`: newidle balances per bucket (top panel) and the groups they scanned
//! (bottom panel), one line per domain level, over time in milliseconds, under a title
//! fitted to the picture and a note stating the bucket width.

use plotters::prelude::*;

use crate::canvas::{Area, DrawResult, FONT};
use crate::cdf::fmt_ns;
use crate::data::{DomainSeries, NewidleSeries, PlotData};
use crate::error::PlotError;
use crate::style::{fmt_num, linear_range, render, series_color};
use crate::text::header;

/// The picture's size.
const SIZE: (u32, u32) = (1000, 800);

/// The file name.
pub(crate) const FILE: &str = "newidle.svg";

/// Draws `data.newidle` (validated).
pub(crate) fn draw(data: &PlotData, n: &NewidleSeries) -> Result<String, PlotError> {
    let bucket = fmt_ns(n.bucket_ns);
    render(FILE, SIZE, |root| {
        let note = format!(
            "buckets of {bucket}; one line per domain level, each bucket's count drawn at \
             its middle"
        );
        let top = header(
            root,
            &format!("Newidle balancing: {}", data.title),
            &[note],
            SIZE.0,
        )?;
        let (_, body) = root.split_vertically(top);
        let (_, h) = body.dim_in_pixel();
        let (upper, lower) = body.split_vertically(h / 2);
        panel(
            &upper,
            n,
            "newidle balances (sched_balance_rq from newidle)",
            &format!("balances per {bucket}"),
            |d| &d.balances,
        )?;
        panel(
            &lower,
            n,
            "sched groups scanned by newidle balances",
            &format!("groups scanned per {bucket}"),
            |d| &d.groups,
        )
    })
}

/// One panel: a line per domain of the values `pick` chooses.
fn panel(
    area: &Area,
    n: &NewidleSeries,
    caption: &str,
    y_desc: &str,
    pick: impl Fn(&DomainSeries) -> &Vec<u64>,
) -> DrawResult {
    let ms = |i: f64| (n.start_ns as f64 + i * n.bucket_ns as f64) / 1e6;
    let buckets = n.domains.iter().map(|d| pick(d).len()).max().unwrap_or(0);
    // At least one bucket wide, so that the axis has a width even with no data.
    let (x0, x1) = (ms(0.0), ms(buckets.max(1) as f64));
    let (y0, y1) = linear_range(
        n.domains
            .iter()
            .flat_map(|d| pick(d).iter().map(|&v| v as f64)),
    );
    let mut chart = ChartBuilder::on(area)
        .caption(caption, (FONT, 16).into_font())
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(70)
        .build_cartesian_2d(x0..x1, y0..y1)?;
    chart
        .configure_mesh()
        .max_light_lines(1)
        .x_desc("time (ms)")
        .y_desc(y_desc)
        .x_label_formatter(&|v| fmt_num(*v))
        .y_label_formatter(&|v| fmt_num(*v))
        .label_style((FONT, 13))
        .axis_desc_style((FONT, 15))
        .draw()?;
    for (i, d) in n.domains.iter().enumerate() {
        let color = series_color(i);
        // Each bucket's count is drawn at the bucket's middle.
        let points = pick(d)
            .iter()
            .enumerate()
            .map(|(b, &v)| (ms(b as f64 + 0.5), v as f64));
        chart
            .draw_series(LineSeries::new(points, color.stroke_width(2)))?
            .label(d.name.clone())
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 20, y)], color.stroke_width(2)));
    }
    if !n.domains.is_empty() {
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperRight)
            .label_font((FONT, 13))
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .draw()?;
    }
    Ok(())
}
