//! Criterion's output as plot input: the estimates `cargo bench` leaves under
//! `target/criterion`, and `lb-scan.svg`, the cost of `update_sd_lb_stats` against the
//! number of groups in the domain.
//!
//! Criterion 0.5 writes one directory per benchmark,
//! `<group>/<function>/<value>/new/{benchmark.json,estimates.json}`, where each name is
//! the id with `?"/\*<>:|^` replaced by `_` (spaces are kept). `benchmark.json` repeats
//! the ids, so they are read from it rather than guessed back from directory names.

use std::path::{Path, PathBuf};

use plotters::prelude::*;
use serde::Deserialize;

use crate::canvas::{DrawResult, FONT};
use crate::error::{bad, PlotError};
use crate::file::{create_dir, read_bounded, write_svg};
use crate::style::{fmt_num, log_range, render, series_color};

/// The group `benches/lb_scan.rs` measures `update_sd_lb_stats` in.
pub const LB_SCAN_GROUP: &str = "update_sd_lb_stats newidle MC";

/// The file `write_criterion` draws the group into.
pub const LB_SCAN_FILE: &str = "lb-scan.svg";

/// criterion's JSON files are a few kilobytes; anything bigger is not one.
const MAX_JSON_BYTES: u64 = 1 << 20;

/// One benchmark's mean time with its 95% confidence interval.
#[derive(Debug, Clone, PartialEq)]
pub struct Estimate {
    /// The function (`baseline`, `ILB_UTIL`), or the group's name for a benchmark
    /// without one.
    pub function: String,
    /// The parameter as criterion printed it (`128`).
    pub value: String,
    /// The parameter as a number (the x axis).
    pub param: f64,
    /// Mean time per iteration, ns.
    pub mean_ns: f64,
    /// Lower bound of the mean's confidence interval, ns.
    pub lower_ns: f64,
    /// Upper bound of the mean's confidence interval, ns.
    pub upper_ns: f64,
}

/// `new/benchmark.json`: the ids of one benchmark.
#[derive(Deserialize)]
struct BenchmarkJson {
    group_id: String,
    function_id: Option<String>,
    value_str: Option<String>,
}

/// `new/estimates.json`, the part read.
#[derive(Deserialize)]
struct EstimatesJson {
    mean: EstimateJson,
}

#[derive(Deserialize)]
struct EstimateJson {
    point_estimate: f64,
    confidence_interval: IntervalJson,
}

#[derive(Deserialize)]
struct IntervalJson {
    lower_bound: f64,
    upper_bound: f64,
}

/// A directory name as criterion 0.5 makes it from an id (`make_filename_safe` on
/// Linux: no truncation is needed for fairsim's short ids).
pub fn directory_name(id: &str) -> String {
    id.replace(['?', '"', '/', '\\', '*', '<', '>', ':', '|', '^'], "_")
}

/// The subdirectories of `dir`, sorted by name so that the result does not depend on
/// the file system's order.
fn subdirs(dir: &Path) -> Result<Vec<PathBuf>, PlotError> {
    let entries = std::fs::read_dir(dir).map_err(|e| PlotError::Read {
        path: dir.to_path_buf(),
        reason: e.to_string(),
    })?;
    let mut dirs = Vec::new();
    for e in entries {
        let e = e.map_err(|e| PlotError::Read {
            path: dir.to_path_buf(),
            reason: e.to_string(),
        })?;
        if e.file_type().is_ok_and(|t| t.is_dir()) {
            dirs.push(e.path());
        }
    }
    dirs.sort();
    Ok(dirs)
}

fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> Result<T, PlotError> {
    let text = read_bounded(path, MAX_JSON_BYTES)?;
    serde_json::from_str(&text).map_err(|e| PlotError::Read {
        path: path.to_path_buf(),
        reason: format!("not criterion's JSON: {e}"),
    })
}

/// Reads one benchmark's `new/` directory.
fn read_estimate(new: &Path, group: &str) -> Result<Estimate, PlotError> {
    let bench_path = new.join("benchmark.json");
    let bench: BenchmarkJson = read_json(&bench_path)?;
    let origin = || bench_path.display().to_string();
    if bench.group_id != group {
        return Err(PlotError::Invalid {
            origin: origin(),
            field: "group_id".into(),
            message: bad(&bench.group_id, group),
        });
    }
    let value = bench.value_str.unwrap_or_default();
    let param: f64 = value.parse().unwrap_or(f64::NAN);
    if !(param.is_finite() && param > 0.0) {
        return Err(PlotError::Invalid {
            origin: origin(),
            field: "value_str".into(),
            message: bad(&value, "a positive number (the x axis is logarithmic)"),
        });
    }
    let est_path = new.join("estimates.json");
    let est: EstimatesJson = read_json(&est_path)?;
    let m = est.mean;
    let (lo, hi) = (
        m.confidence_interval.lower_bound,
        m.confidence_interval.upper_bound,
    );
    for (field, v) in [
        ("mean.point_estimate", m.point_estimate),
        ("mean.confidence_interval.lower_bound", lo),
        ("mean.confidence_interval.upper_bound", hi),
    ] {
        if !(v.is_finite() && v > 0.0 && v < 1e300) {
            return Err(PlotError::Invalid {
                origin: est_path.display().to_string(),
                field: field.into(),
                message: bad(v, "a positive time in ns (the y axis is logarithmic)"),
            });
        }
    }
    Ok(Estimate {
        function: bench.function_id.unwrap_or_else(|| group.to_string()),
        value,
        param,
        mean_ns: m.point_estimate,
        lower_ns: lo.min(m.point_estimate),
        upper_ns: hi.max(m.point_estimate),
    })
}

/// The criterion directory under `dir`: `dir` itself, or `dir/criterion` when `dir` is
/// a cargo target directory.
fn criterion_root(dir: &Path, group: &str) -> Option<PathBuf> {
    let name = directory_name(group);
    [dir.to_path_buf(), dir.join("criterion")]
        .into_iter()
        .find(|d| d.join(&name).is_dir())
}

/// Reads every benchmark of `group` under a criterion output directory, by function,
/// then by parameter; functions in directory order.
pub fn read_group(dir: &Path, group: &str) -> Result<Vec<Estimate>, PlotError> {
    let Some(root) = criterion_root(dir, group) else {
        return Err(PlotError::Read {
            path: dir.to_path_buf(),
            reason: format!(
                "no criterion group '{group}' (looked for '{}' here and under criterion/); \
                 allowed: a criterion output directory such as target/criterion",
                directory_name(group)
            ),
        });
    };
    let group_dir = root.join(directory_name(group));
    let mut out = Vec::new();
    for function in subdirs(&group_dir)? {
        // A benchmark without a parameter keeps `new/` in the function's directory.
        if function.join("new").join("benchmark.json").is_file() {
            out.push(read_estimate(&function.join("new"), group)?);
            continue;
        }
        let mut values = Vec::new();
        for value in subdirs(&function)? {
            let new = value.join("new");
            if new.join("benchmark.json").is_file() {
                values.push(read_estimate(&new, group)?);
            }
        }
        // Directory order puts 128 before 8; the parameter's order is the plot's.
        values.sort_by(|a, b| a.param.total_cmp(&b.param));
        out.extend(values);
    }
    if out.is_empty() {
        return Err(PlotError::Read {
            path: group_dir,
            reason: "no benchmark results (new/benchmark.json); allowed: a group criterion \
                     has measured"
                .into(),
        });
    }
    Ok(out)
}

/// The estimates as lines: one per function, `baseline` first, then by name, each by
/// increasing parameter.
fn lines(mut est: Vec<Estimate>) -> Vec<(String, Vec<Estimate>)> {
    est.sort_by(|a, b| {
        let key = |e: &Estimate| (e.function != "baseline", e.function.clone());
        key(a).cmp(&key(b)).then(a.param.total_cmp(&b.param))
    });
    let mut out: Vec<(String, Vec<Estimate>)> = Vec::new();
    for e in est {
        match out.last_mut() {
            Some((f, v)) if *f == e.function => v.push(e),
            _ => out.push((e.function.clone(), vec![e])),
        }
    }
    out
}

/// Draws `estimates` of `group`: mean time against the parameter, log-log, one line
/// per function, with the confidence intervals as error bars.
pub fn draw_group(group: &str, estimates: Vec<Estimate>) -> Result<String, PlotError> {
    let (x0, x1) = log_range(estimates.iter().map(|e| e.param));
    let (y0, y1) = log_range(estimates.iter().flat_map(|e| [e.lower_ns, e.upper_ns]));
    let lines = lines(estimates);
    render(LB_SCAN_FILE, (900, 600), |root| -> DrawResult {
        let mut chart = ChartBuilder::on(root)
            .caption(
                format!("{group}: mean time per call (95% CI)"),
                (FONT, 20).into_font(),
            )
            .margin(15)
            .x_label_area_size(45)
            .y_label_area_size(70)
            .build_cartesian_2d((x0..x1).log_scale(), (y0..y1).log_scale())?;
        chart
            .configure_mesh()
            .max_light_lines(1)
            .x_desc("groups in the domain (log scale)")
            .y_desc("time (ns, log scale)")
            .x_label_formatter(&|v| fmt_num(*v))
            .y_label_formatter(&|v| fmt_num(*v))
            .label_style((FONT, 13))
            .axis_desc_style((FONT, 15))
            .draw()?;
        for (i, (function, points)) in lines.iter().enumerate() {
            let color = series_color(i);
            chart
                .draw_series(LineSeries::new(
                    points.iter().map(|e| (e.param, e.mean_ns)),
                    color.stroke_width(2),
                ))?
                .label(function.clone())
                .legend(move |(x, y)| {
                    PathElement::new([(x, y), (x + 20, y)], color.stroke_width(2))
                });
            chart.draw_series(points.iter().map(|e| {
                ErrorBar::new_vertical(
                    e.param,
                    e.lower_ns,
                    e.mean_ns,
                    e.upper_ns,
                    color.filled(),
                    8,
                )
            }))?;
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .label_font((FONT, 13))
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .draw()?;
        Ok(())
    })
}

/// Reads [`LB_SCAN_GROUP`] from the criterion directory `dir_in` (or a target
/// directory holding `criterion/`) and writes [`LB_SCAN_FILE`] into `dir_out`, created
/// if needed. Returns the path written.
pub fn write_criterion(dir_in: &Path, dir_out: &Path) -> Result<Vec<PathBuf>, PlotError> {
    let estimates = read_group(dir_in, LB_SCAN_GROUP)?;
    let svg = draw_group(LB_SCAN_GROUP, estimates)?;
    create_dir(dir_out)?;
    Ok(vec![write_svg(dir_out, LB_SCAN_FILE, &svg)?])
}
