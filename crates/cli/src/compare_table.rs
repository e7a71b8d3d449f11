//! The mmtests `compare-kernels` table: per metric, Min / mean / Stddev / CoeffVar / Max of
//! each side's samples, each value followed by its change against the baseline in percent,
//! positive meaning better, and the mean's change starred when the difference is
//! significant.
//!
//! Statistics on results are reporting, not scheduling decisions, so they use floating
//! point.

use std::fmt::Write;

/// Samples of one metric for both sides.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct MetricSamples {
    /// The metric's name (`Wakeup-99.0th`, `time`, `newidle-sg-scan-per-balance`, ...).
    pub name: String,
    /// Higher is better (throughput); else lower is better (time, latency, cost).
    pub higher_better: bool,
    /// Baseline samples (one per seed).
    pub base: Vec<f64>,
    /// New samples.
    pub new: Vec<f64>,
}

/// Summary statistics of one side.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Summary {
    /// Smallest sample.
    pub min: f64,
    /// Arithmetic mean.
    pub amean: f64,
    /// Harmonic mean (0 when a sample is 0).
    pub hmean: f64,
    /// Sample standard deviation (n - 1).
    pub stddev: f64,
    /// Stddev as a percentage of the mean.
    pub coeffvar: f64,
    /// Largest sample.
    pub max: f64,
    /// Number of samples.
    pub n: usize,
}

/// Summarises samples; an empty list gives zeros.
pub(crate) fn summarise(s: &[f64]) -> Summary {
    let n = s.len();
    if n == 0 {
        return Summary {
            min: 0.0,
            amean: 0.0,
            hmean: 0.0,
            stddev: 0.0,
            coeffvar: 0.0,
            max: 0.0,
            n,
        };
    }
    let min = s.iter().copied().fold(f64::INFINITY, f64::min);
    let max = s.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let amean = s.iter().sum::<f64>() / n as f64;
    let hmean = if s.iter().any(|&x| x <= 0.0) {
        0.0
    } else {
        n as f64 / s.iter().map(|x| 1.0 / x).sum::<f64>()
    };
    let stddev = if n > 1 {
        (s.iter().map(|x| (x - amean).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt()
    } else {
        0.0
    };
    let coeffvar = if amean != 0.0 {
        stddev / amean * 100.0
    } else {
        0.0
    };
    Summary {
        min,
        amean,
        hmean,
        stddev,
        coeffvar,
        max,
        n,
    }
}

/// Two-sided 95% critical value of Student's t for `df` degrees of freedom, exact for
/// Welch's fractional degrees of freedom (a table by whole degrees read at the next
/// larger row understated it: 2.306 for 7 degrees instead of 2.365, so a difference
/// could be starred at less than 95% confidence).
fn t_crit_95(df: f64) -> f64 {
    crate::sequential::t_quantile_two_sided(0.05, df)
}

/// Whether the means differ at 95% confidence (Welch's t-test). With fewer than two
/// samples on a side nothing is significant.
pub(crate) fn significant(a: &Summary, b: &Summary) -> bool {
    if a.n < 2 || b.n < 2 {
        return false;
    }
    let va = a.stddev.powi(2) / a.n as f64;
    let vb = b.stddev.powi(2) / b.n as f64;
    let se = (va + vb).sqrt();
    if se == 0.0 {
        return a.amean != b.amean;
    }
    let t = (a.amean - b.amean).abs() / se;
    let df_den = va.powi(2) / (a.n - 1) as f64 + vb.powi(2) / (b.n - 1) as f64;
    let df = if df_den > 0.0 {
        (va + vb).powi(2) / df_den
    } else {
        1.0
    };
    t > t_crit_95(df)
}

/// Percentage change with positive meaning better: `new/base*100 - 100` when higher is
/// better, `100 - new/base*100` otherwise (mmtests `pdiff` / `pndiff`).
pub(crate) fn pct_change(base: f64, new: f64, higher_better: bool) -> f64 {
    if base == 0.0 {
        return 0.0;
    }
    let ratio = new / base * 100.0;
    if higher_better {
        ratio - 100.0
    } else {
        100.0 - ratio
    }
}

fn cell(v: f64, pct: f64, star: bool) -> String {
    if star {
        format!("{v:>12.4} *{pct:>7.2}%*")
    } else {
        format!("{v:>12.4} ({pct:>7.2}%)")
    }
}

/// Samples of one metric in any number of columns, the first being the baseline (a
/// sweep's axis values).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct MetricColumns {
    /// The metric's name.
    pub name: String,
    /// Higher is better (throughput); else lower is better (time, latency, cost).
    pub higher_better: bool,
    /// One list of samples per column, in the columns' order.
    pub columns: Vec<Vec<f64>>,
}

/// Renders the comparison of every metric between a baseline and a new side.
pub(crate) fn render_compare(
    metrics: &[MetricSamples],
    base_label: &str,
    new_label: &str,
) -> String {
    let columns: Vec<MetricColumns> = metrics
        .iter()
        .map(|m| MetricColumns {
            name: m.name.clone(),
            higher_better: m.higher_better,
            columns: vec![m.base.clone(), m.new.clone()],
        })
        .collect();
    render_columns(&columns, &[base_label, new_label])
}

/// Renders the comparison of every metric over `labels.len()` columns: each column after
/// the first gets its change against the first, starred when significant. With two
/// columns this is exactly `render_compare`'s table.
pub(crate) fn render_columns(metrics: &[MetricColumns], labels: &[&str]) -> String {
    let name_w = metrics
        .iter()
        .map(|m| m.name.len())
        .max()
        .unwrap_or(6)
        .max(6);
    let mut out = String::new();
    let _ = write!(out, "{:10}{:name_w$}", "", "");
    for label in labels {
        let _ = write!(out, " {label:>24}");
    }
    out.push('\n');
    let empty: Vec<f64> = Vec::new();
    for m in metrics {
        let sums: Vec<Summary> = (0..labels.len())
            .map(|i| summarise(m.columns.get(i).unwrap_or(&empty)))
            .collect();
        let Some(a) = sums.first().copied() else {
            continue;
        };
        let mean_label = if m.higher_better { "Hmean" } else { "Amean" };
        let mean = |s: &Summary| if m.higher_better { s.hmean } else { s.amean };
        type Stat = fn(&Summary) -> f64;
        let rows: [(&str, Option<Stat>, bool); 5] = [
            ("Min", Some(|s| s.min), m.higher_better),
            (mean_label, None, m.higher_better),
            ("Stddev", Some(|s| s.stddev), false),
            ("CoeffVar", Some(|s| s.coeffvar), false),
            ("Max", Some(|s| s.max), m.higher_better),
        ];
        for (stat, get, hb) in rows {
            let value = |s: &Summary| get.map_or_else(|| mean(s), |g| g(s));
            let _ = write!(
                out,
                "{stat:<10}{:name_w$} {}",
                m.name,
                cell(value(&a), 0.0, false)
            );
            for b in &sums[1..] {
                // Only the mean's row carries the significance star, as in mmtests.
                let star = get.is_none() && significant(&a, b);
                let _ = write!(
                    out,
                    " {}",
                    cell(value(b), pct_change(value(&a), value(b), hb), star)
                );
            }
            out.push('\n');
        }
    }
    out
}

/// The columns of `compare --csv` (and the keys of each row of `compare --json`), in
/// order: one row per metric, the mean's row of the text table with each side's spread.
pub(crate) const MEAN_COLUMNS: [&str; 11] = [
    "metric",
    "better",
    "mean",
    "base_mean",
    "new_mean",
    "change_pct",
    "significant",
    "base_stddev",
    "new_stddev",
    "base_samples",
    "new_samples",
];

/// One metric's mean row for scripts: what the text table's Amean or Hmean row shows.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct MeanRow {
    /// The metric's name, as the text table spells it.
    pub metric: String,
    /// Higher is better (throughput); else lower is better.
    pub higher_better: bool,
    /// The baseline's summary.
    pub base: Summary,
    /// The new side's summary.
    pub new: Summary,
}

impl MeanRow {
    /// `Hmean` when higher is better, else `Amean`, as the text table labels the row.
    pub(crate) fn mean_label(&self) -> &'static str {
        if self.higher_better {
            "Hmean"
        } else {
            "Amean"
        }
    }

    fn mean(&self, s: &Summary) -> f64 {
        if self.higher_better {
            s.hmean
        } else {
            s.amean
        }
    }

    /// The baseline's mean (harmonic when higher is better).
    pub(crate) fn base_mean(&self) -> f64 {
        self.mean(&self.base)
    }

    /// The new side's mean (harmonic when higher is better).
    pub(crate) fn new_mean(&self) -> f64 {
        self.mean(&self.new)
    }

    /// The change of the mean in percent, positive meaning better, as the table shows it.
    pub(crate) fn change_pct(&self) -> f64 {
        pct_change(self.base_mean(), self.new_mean(), self.higher_better)
    }

    /// Whether the table stars the mean (Welch's t-test at 95%).
    pub(crate) fn significant(&self) -> bool {
        significant(&self.base, &self.new)
    }
}

/// Each metric's mean row, in the text table's order.
pub(crate) fn mean_rows(metrics: &[MetricSamples]) -> Vec<MeanRow> {
    metrics
        .iter()
        .map(|m| MeanRow {
            metric: m.name.clone(),
            higher_better: m.higher_better,
            base: summarise(&m.base),
            new: summarise(&m.new),
        })
        .collect()
}

/// A CSV field, quoted as RFC 4180 asks when it holds a comma, a quote or a line break.
fn csv_field(text: &str) -> String {
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_string()
    }
}

/// `compare --csv`: a header of [`MEAN_COLUMNS`], then one line per metric. Numbers are
/// written in full (Rust's shortest exact form), booleans as `true`/`false`.
pub(crate) fn render_csv(rows: &[MeanRow]) -> String {
    let mut out = MEAN_COLUMNS.join(",");
    out.push('\n');
    for r in rows {
        let fields = [
            csv_field(&r.metric),
            (if r.higher_better { "higher" } else { "lower" }).to_string(),
            r.mean_label().to_string(),
            r.base_mean().to_string(),
            r.new_mean().to_string(),
            r.change_pct().to_string(),
            r.significant().to_string(),
            r.base.stddev.to_string(),
            r.new.stddev.to_string(),
            r.base.n.to_string(),
            r.new.n.to_string(),
        ];
        out.push_str(&fields.join(","));
        out.push('\n');
    }
    out
}

/// `compare --json`'s rows: one object per metric with [`MEAN_COLUMNS`] as keys (a value
/// that is not finite is null, as JSON has no NaN).
pub(crate) fn rows_json(rows: &[MeanRow]) -> Vec<serde_json::Value> {
    rows.iter()
        .map(|r| {
            serde_json::json!({
                "metric": r.metric,
                "better": if r.higher_better { "higher" } else { "lower" },
                "mean": r.mean_label(),
                "base_mean": r.base_mean(),
                "new_mean": r.new_mean(),
                "change_pct": r.change_pct(),
                "significant": r.significant(),
                "base_stddev": r.base.stddev,
                "new_stddev": r.new.stddev,
                "base_samples": r.base.n,
                "new_samples": r.new.n,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percent_is_positive_when_better() {
        assert!((pct_change(10.0, 8.0, false) - 20.0).abs() < 1e-9);
        assert!((pct_change(10.0, 12.0, true) - 20.0).abs() < 1e-9);
        assert!((pct_change(10.0, 12.0, false) + 20.0).abs() < 1e-9);
    }

    #[test]
    fn significance_needs_separated_means() {
        let a = summarise(&[10.0, 10.2, 9.9, 10.1]);
        let b = summarise(&[12.0, 12.1, 11.9, 12.2]);
        assert!(significant(&a, &b));
        let c = summarise(&[10.0, 12.0, 9.0, 11.0]);
        let d = summarise(&[10.5, 11.5, 9.5, 10.0]);
        assert!(!significant(&c, &d));
    }

    #[test]
    fn table_layout_stars_the_mean() {
        let m = MetricSamples {
            name: "time".into(),
            higher_better: false,
            base: vec![10.0, 10.2, 9.9, 10.1],
            new: vec![8.0, 8.1, 7.9, 8.2],
        };
        let t = render_compare(&[m], "base", "new");
        let mean = t.lines().find(|l| l.starts_with("Amean")).unwrap();
        assert!(mean.contains("*  19.93%*") || mean.contains("*"), "{t}");
        assert!(t.lines().nth(1).unwrap().starts_with("Min       time"));
    }

    #[test]
    fn csv_and_json_rows_carry_the_tables_mean_row() {
        let m = MetricSamples {
            name: "loops-per-s".into(),
            higher_better: true,
            base: vec![10.0, 10.0],
            new: vec![12.0, 12.0],
        };
        let rows = mean_rows(std::slice::from_ref(&m));
        let csv = render_csv(&rows);
        let mut lines = csv.lines();
        assert_eq!(lines.next(), Some(MEAN_COLUMNS.join(",").as_str()));
        assert_eq!(
            lines.next(),
            Some("loops-per-s,higher,Hmean,10,12,20,true,0,0,2,2")
        );
        // The text table's Hmean row shows the same change, starred.
        let text = render_compare(&[m], "base", "new");
        assert!(text.contains("*  20.00%*"), "{text}");
        let json = rows_json(&rows);
        assert_eq!(json[0]["mean"], "Hmean");
        assert_eq!(json[0]["significant"], true);
        assert_eq!(csv_field("a,b"), "\"a,b\"");
    }

    #[test]
    fn three_columns_compare_each_with_the_first() {
        let m = MetricColumns {
            name: "time".into(),
            higher_better: false,
            columns: vec![vec![10.0, 10.0], vec![8.0, 8.0], vec![12.0, 12.0]],
        };
        let t = render_columns(&[m], &["a", "b", "c"]);
        let min = t.lines().nth(1).unwrap();
        assert!(
            min.contains("(  20.00%)") && min.contains("( -20.00%)"),
            "{t}"
        );
    }
}
