//! `frequency.svg`: each cpufreq policy's frequency over the measurement window, as a
//! step line in MHz against time in milliseconds, so that a governor's ramp-up after a
//! wakeup can be read off the run.

use plotters::prelude::*;

use crate::data::{FrequencySeries, PlotData};
use crate::error::PlotError;
use crate::style::{fmt_num, linear_range, render, series_color, Area, DrawResult, FONT};

/// The file name.
pub(crate) const FILE: &str = "frequency.svg";

/// Draws `f` (validated).
pub(crate) fn draw(data: &PlotData, f: &FrequencySeries) -> Result<String, PlotError> {
    render(FILE, (1000, 500), |root| draw_on(root, data, f))
}

fn draw_on(root: &Area, data: &PlotData, f: &FrequencySeries) -> DrawResult {
    let ms = |ns: u64| ns as f64 / 1e6;
    let mhz = |khz: u32| f64::from(khz) / 1000.0;
    let (x0, x1) = (ms(f.start_ns), ms(f.end_ns));
    // The axis starts at 0 MHz so that the steps' heights compare as frequencies do.
    let (_, y1) = linear_range(
        f.policies
            .iter()
            .flat_map(|p| p.steps.iter().map(move |&(_, k)| mhz(k))),
    );
    let mut chart = ChartBuilder::on(root)
        .caption(
            format!("{}: CPU frequency per policy", data.title),
            (FONT, 18).into_font(),
        )
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(70)
        .build_cartesian_2d(x0..x1, 0.0..y1)?;
    chart
        .configure_mesh()
        .max_light_lines(1)
        .x_desc("time (ms)")
        .y_desc("frequency (MHz)")
        .x_label_formatter(&|v| fmt_num(*v))
        .y_label_formatter(&|v| fmt_num(*v))
        .label_style((FONT, 13))
        .axis_desc_style((FONT, 15))
        .draw()?;
    for (i, p) in f.policies.iter().enumerate() {
        let color = series_color(i);
        // Each frequency holds until the next step, and the last until the window's end.
        let mut points = Vec::with_capacity(p.steps.len() * 2 + 1);
        for (j, &(ns, khz)) in p.steps.iter().enumerate() {
            if j > 0 {
                points.push((ms(ns), mhz(p.steps[j - 1].1)));
            }
            points.push((ms(ns), mhz(khz)));
        }
        if let Some(&(_, khz)) = p.steps.last() {
            points.push((x1, mhz(khz)));
        }
        chart
            .draw_series(LineSeries::new(points, color.stroke_width(2)))?
            .label(p.name.clone())
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 20, y)], color.stroke_width(2)));
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
