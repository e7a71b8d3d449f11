//! `fairsim plot`: draws SVGs from a plot data file (as `run --plot` and `compare --plot`
//! save it) and from criterion's output of `benches/lb_scan.rs`.

use std::io::Write;
use std::path::PathBuf;

use crate::error::CliError;

/// `fairsim plot` arguments.
#[derive(Debug, clap::Args)]
pub(crate) struct PlotArgs {
    /// A plot data file (`plot-data.json`) to draw: latency CDF, timeline, newidle
    /// series and metrics, as far as it holds them.
    #[arg(value_name = "DATA.json")]
    pub data: Option<PathBuf>,
    /// A criterion output directory (`target/criterion`, or `target`) holding
    /// `benches/lb_scan.rs`'s `update_sd_lb_stats` results, drawn as `lb-scan.svg`.
    #[arg(long, value_name = "DIR")]
    pub criterion: Option<PathBuf>,
    /// Where the SVGs go (created if needed).
    #[arg(long, value_name = "DIR", default_value = "plots")]
    pub out: PathBuf,
}

/// Runs `fairsim plot`, printing the path of every SVG written, one a line.
///
/// Everything is read and checked before anything is written, so a bad criterion
/// directory does not leave the data file's plots half done.
pub(crate) fn run(args: &PlotArgs, out: &mut dyn Write) -> Result<(), CliError> {
    if args.data.is_none() && args.criterion.is_none() {
        return Err(CliError::msg(
            "plot: no input given; allowed: a plot data file (DATA.json), --criterion DIR, or both",
        ));
    }
    let data = args
        .data
        .as_deref()
        .map(fairsim_plot::read_data)
        .transpose()?;
    let mut written = Vec::new();
    if let Some(dir) = &args.criterion {
        written.extend(fairsim_plot::write_criterion(dir, &args.out)?);
    }
    if let Some(data) = &data {
        let mut paths = fairsim_plot::write_all(data, &args.out)?;
        paths.append(&mut written);
        written = paths;
    }
    for p in written {
        writeln!(out, "{}", p.display())?;
    }
    Ok(())
}
