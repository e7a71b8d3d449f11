//! `fairsim sweep --until METRIC:RULE`: each combination of the other axes' values (a
//! cell) adds seeds until its own metric is known well enough.
//!
//! A cell's seeds are the plan's seeds axis, in its order; the axis is the cap. After each
//! seed of a cell, from `--min-seeds` on, the rule is checked on the cell's values so far:
//! `ci<N%` holds when the 95% confidence interval of the cell's mean (Student's t with
//! n - 1 degrees of freedom) is within plus or minus N percent of that mean, `ci<N` when
//! it is within plus or minus N in the metric's units. The first seed at which it holds is
//! where the cell stops. As in `compare --until`, stopping on the interval's width uses
//! only the sample variance, which for normal samples is independent of the mean, so the
//! interval at the stop keeps its coverage to first order (Chow and Robbins, 1965), and
//! `--min-seeds` keeps a spread estimated from two or three seeds, often far too small by
//! chance, from stopping a cell.
//!
//! A cell's seeds run one after another, and cells run in parallel on the sweep's threads:
//! where a cell stops depends only on its values, in seed order, so the sweep writes the
//! same files on any number of threads. `significant` is `compare`'s rule (two sides); a
//! sweep's tables compare an axis's values, but a cell has one value of each axis.

use crate::cmd::compare::RunMetrics;
use crate::cmd::compare_until::{Rule, Until};
use crate::compare_table::summarise;
use crate::error::CliError;
use crate::sequential::t_quantile_two_sided;

/// Why a cell stopped adding seeds.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum CellStop {
    /// The rule held after this many seeds; the look's detail.
    Held(usize, String),
    /// Every seed of the axis ran without the rule holding; the last look's detail.
    Cap(Option<String>),
    /// Ctrl-C or SIGTERM came first.
    Interrupted,
}

/// Refuses what a sweep's `--until` cannot do: the two-sided `significant` rule, and a
/// shard (which cannot see where the other shards' cells stop).
pub(super) fn check(until: &Until, sharded: bool) -> Result<(), CliError> {
    if let Rule::Significant(_) = until.rule {
        return Err(CliError::msg(format!(
            "--until: rule '{}' compares two sides, which fairsim compare does; allowed in a sweep: ci<N% or ci<N, the interval of each combination's own mean",
            until.rule_text
        )));
    }
    if sharded {
        return Err(CliError::msg(
            "--until: not with --shard (a shard cannot see where another shard's combinations stop); allowed: --until without --shard",
        ));
    }
    Ok(())
}

/// The value of `until`'s metric among a run's metrics, when the run reported it.
pub(super) fn value_of(until: &Until, metrics: &RunMetrics) -> Option<f64> {
    metrics
        .iter()
        .find(|(n, _, _)| *n == until.metric)
        .map(|&(_, _, v)| v)
        .filter(|v| v.is_finite())
}

/// A number as the looks print it: four decimals, or four significant digits in
/// exponent form when tiny or huge.
fn g(v: f64) -> String {
    if v != 0.0 && (v.abs() < 1e-3 || v.abs() >= 1e6) {
        format!("{v:.3e}")
    } else {
        format!("{}", (v * 1e4).round() / 1e4)
    }
}

/// Checks the rule on a cell's values so far: whether it holds, and what the look saw.
pub(super) fn look(until: &Until, values: &[f64]) -> (bool, String) {
    if values.len() < 2 {
        return (
            false,
            format!("{} reported by {} seeds", until.metric, values.len()),
        );
    }
    let s = summarise(values);
    let n = values.len() as f64;
    let half = t_quantile_two_sided(0.05, n - 1.0) * s.stddev / n.sqrt();
    let (width, limit, unit) = match until.rule {
        Rule::CiPercent(w) => {
            let mean = s.amean.abs();
            let pct = if mean > 0.0 {
                half / mean * 100.0
            } else if half == 0.0 {
                0.0
            } else {
                f64::INFINITY
            };
            (pct, w, "% of the mean")
        }
        Rule::CiAbsolute(w) => (half, w, ""),
        // `check` refused it before anything ran.
        Rule::Significant(_) => return (false, "significant is compare's rule".into()),
    };
    let holds = width < limit;
    (
        holds,
        format!(
            "95% CI of the mean {} +/-{}{unit}, {} +/-{limit}{unit}",
            g(s.amean),
            g(width),
            if holds {
                "narrower than"
            } else {
                "not narrower than"
            }
        ),
    )
}

/// Runs a cell's seeds in order (`run(k)` runs seed `k` and gives its metrics, `None`
/// when interrupted), looking after each from `min_seeds` on, until the rule holds or
/// the `cap` seeds ran.
pub(super) fn run_cell(
    until: &Until,
    cap: usize,
    min_seeds: usize,
    run: &mut dyn FnMut(usize) -> Result<Option<RunMetrics>, CliError>,
) -> Result<CellStop, CliError> {
    let mut values: Vec<f64> = Vec::new();
    let mut last = None;
    for k in 0..cap {
        let Some(metrics) = run(k)? else {
            return Ok(CellStop::Interrupted);
        };
        values.extend(value_of(until, &metrics));
        if k + 1 >= min_seeds {
            let (holds, detail) = look(until, &values);
            if holds {
                return Ok(CellStop::Held(k + 1, detail));
            }
            last = Some(detail);
        }
    }
    Ok(CellStop::Cap(last))
}

/// The line summary.txt and the sweep's last message give a cell's stop: `cell` names the
/// combination, `cap` is the seeds axis's length.
pub(super) fn stop_line(until: &Until, cell: &str, stop: &CellStop, cap: usize) -> String {
    match stop {
        CellStop::Held(n, detail) => format!(
            "{cell}: stopped after {n} of {cap} seeds: {} CI narrow enough ({detail})",
            until.metric
        ),
        CellStop::Cap(Some(detail)) => {
            format!("{cell}: all {cap} seeds: seed cap reached (last look: {detail})")
        }
        CellStop::Cap(None) => format!("{cell}: all {cap} seeds: seed cap reached"),
        CellStop::Interrupted => format!("{cell}: interrupted before the rule held"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cmd::compare_until::parse;

    fn metrics(v: f64) -> RunMetrics {
        vec![("loops-per-s".into(), true, v)]
    }

    #[test]
    fn a_narrow_cell_stops_at_min_seeds_and_a_wide_one_runs_to_the_cap() {
        let u = parse("loops-per-s:ci<1%").unwrap();
        let narrow = [100.0, 100.1, 99.9, 100.0, 100.05, 100.0];
        let stop = run_cell(&u, 6, 5, &mut |k| Ok(Some(metrics(narrow[k])))).unwrap();
        assert!(matches!(stop, CellStop::Held(5, _)), "{stop:?}");
        let wide = [100.0, 150.0, 60.0, 120.0, 80.0, 140.0];
        let stop = run_cell(&u, 6, 5, &mut |k| Ok(Some(metrics(wide[k])))).unwrap();
        assert!(matches!(stop, CellStop::Cap(Some(_))), "{stop:?}");
    }

    #[test]
    fn the_interval_is_students_with_n_minus_one_degrees_of_freedom() {
        // Mean 10, sample deviation sqrt(1.25), 5 seeds: 2.7764 * sqrt(1.25 / 5) = 1.3882.
        let v = [
            10.0 - 2f64.sqrt(),
            10.0 - 0.5f64.sqrt(),
            10.0,
            10.0 + 0.5f64.sqrt(),
            10.0 + 2f64.sqrt(),
        ];
        let s = summarise(&v);
        assert!((s.stddev - 1.25f64.sqrt()).abs() < 1e-9);
        let (holds, detail) = look(&parse("m:ci<1.4").unwrap(), &v);
        let half = 2.7764 * 1.25f64.sqrt() / 5f64.sqrt();
        assert!(holds, "{detail}");
        assert!(
            detail.contains(&format!("+/-{}", (half * 1e4).round() / 1e4)),
            "{detail}"
        );
        let (holds, _) = look(&parse("m:ci<1.3").unwrap(), &v);
        assert!(!holds);
    }

    #[test]
    fn refuses_significant_and_shards_and_skips_missing_values() {
        let e = check(&parse("m:significant").unwrap(), false).unwrap_err();
        assert!(format!("{e:?}").contains("compares two sides"), "{e:?}");
        let e = check(&parse("m:ci<2%").unwrap(), true).unwrap_err();
        assert!(format!("{e:?}").contains("--shard"), "{e:?}");
        let u = parse("other:ci<2%").unwrap();
        let stop = run_cell(&u, 3, 2, &mut |_| Ok(Some(metrics(1.0)))).unwrap();
        assert_eq!(
            stop,
            CellStop::Cap(Some("other reported by 0 seeds".into()))
        );
        let stop = run_cell(&u, 3, 2, &mut |_| Ok(None)).unwrap();
        assert_eq!(stop, CellStop::Interrupted);
    }
}
