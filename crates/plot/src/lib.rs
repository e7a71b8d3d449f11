//! SVG plots of fairsim's runs, comparisons and benchmarks.
//!
//! [`data`] is the plot data file the CLI writes and reads back ([`read_data`],
//! [`write_data`], checked by [`PlotData::validate`]); [`write_all`] draws what a data
//! set holds, and [`criterion`] draws criterion's results of `benches/lb_scan.rs`.
//!
//! The SVGs are drawn with plotters' SVG backend without its `ttf` feature: text is
//! written as `<text>` elements naming a generic `sans-serif` family, so no font file
//! is read when drawing and the viewer renders the text. Layout uses plotters' built-in
//! width estimate. The same data gives the same bytes.

pub mod criterion;
pub mod data;
mod error;
mod file;
mod validate;

mod canvas;
mod cdf;
mod frequency;
mod metrics;
mod newidle;
mod style;
mod text;
mod timeline;

use std::path::{Path, PathBuf};

pub use criterion::write_criterion;
pub use data::PlotData;
pub use error::PlotError;
pub use file::{read_data, write_data, MAX_DATA_BYTES};
pub use validate::{MAX_CPUS, MAX_FREQ_STEPS, MAX_SLICES};

/// The SVGs [`write_all`] can write, in the order it writes them.
pub const FILES: [&str; 5] = [
    cdf::FILE,
    timeline::FILE,
    newidle::FILE,
    metrics::FILE,
    frequency::FILE,
];

/// Draws every plot `data` has data for into `dir` (created if needed) and returns the
/// paths written, in the order of [`FILES`]: `latency-cdf.svg` when there is a latency
/// series, `timeline.svg` and `newidle.svg` when there is a timeline or newidle data,
/// `metrics.svg` when there are metrics, `frequency.svg` when there is a frequency
/// series.
///
/// The data is validated first, and every SVG is drawn before any is written, so a
/// refusal leaves `dir` as it was.
pub fn write_all(data: &PlotData, dir: &Path) -> Result<Vec<PathBuf>, PlotError> {
    data.validate()?;
    let mut svgs: Vec<(&str, String)> = Vec::new();
    if !data.latency.is_empty() {
        svgs.push((cdf::FILE, cdf::draw(data)?));
    }
    if let Some(t) = &data.timeline {
        svgs.push((timeline::FILE, timeline::draw(data, t)?));
    }
    if let Some(n) = &data.newidle {
        svgs.push((newidle::FILE, newidle::draw(data, n)?));
    }
    if !data.metrics.is_empty() {
        svgs.push((metrics::FILE, metrics::draw(data)?));
    }
    if let Some(f) = &data.frequency {
        svgs.push((frequency::FILE, frequency::draw(data, f)?));
    }
    file::create_dir(dir)?;
    svgs.iter()
        .map(|(name, svg)| file::write_svg(dir, name, svg))
        .collect()
}
