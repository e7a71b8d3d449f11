//! `frequency.svg`: each cpufreq policy's frequency over the measurement window, as a
//! step line in MHz against time in milliseconds, so that a governor's ramp-up after a
//! wakeup can be read off the run.

use plotters::prelude::*;

use crate::canvas::{Area, DrawResult, FONT};
use crate::data::{FrequencySeries, PlotData};
use crate::error::PlotError;
use crate::style::{fmt_num, legend_box, linear_range, render, series_color};
use crate::text::{fit, header};

/// The picture's size.
const SIZE: (u32, u32) = (1000, 540);

/// The file name.
pub(crate) const FILE: &str = "frequency.svg";

/// Draws `f` (validated).
pub(crate) fn draw(data: &PlotData, f: &FrequencySeries) -> Result<String, PlotError> {
    render(FILE, SIZE, |root| {
        let note = "each frequency holds until the next step (no buckets: every transition the \
                    run kept)"
            .to_string();
        let top = header(
            root,
            &format!("CPU frequency per policy: {}", data.title),
            &[note],
            SIZE.0,
        )?;
        let (_, body) = root.split_vertically(top);
        draw_on(root, &body, f)
    })
}

/// Draws the chart on `body` and its legend on `root` (plotters' pixel ranges are the
/// picture's own).
fn draw_on(root: &Area, body: &Area, f: &FrequencySeries) -> DrawResult {
    let ms = |ns: u64| ns as f64 / 1e6;
    let mhz = |khz: u32| f64::from(khz) / 1000.0;
    let (x0, x1) = (ms(f.start_ns), ms(f.end_ns));
    // The axis starts at 0 MHz so that the steps' heights compare as frequencies do.
    let (_, y1) = linear_range(
        f.policies
            .iter()
            .flat_map(|p| p.steps.iter().map(move |&(_, k)| mhz(k))),
    );
    let mut chart = ChartBuilder::on(body)
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
    let mut legend: Vec<(RGBColor, String)> = Vec::new();
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
        chart.draw_series(LineSeries::new(points, color.stroke_width(2)))?;
        legend.push((color, fit(&p.name, 13, f64::from(SIZE.0) / 2.0)));
    }
    let (px, py) = chart.plotting_area().get_pixel_range();
    legend_box(root, &legend, (px.end - 10, py.end - 10))?;
    Ok(())
}
