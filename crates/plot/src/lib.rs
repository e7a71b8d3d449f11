//! SVG plots of fairsim's runs, comparisons and benchmarks.
//!
//! [`data`] is the plot data file the CLI writes and reads back; the drawing lives in the
//! other modules.

pub mod data;

pub use data::PlotData;
