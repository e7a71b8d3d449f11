//! What a plot data set must satisfy before it is drawn or written: every check here
//! stands for something that would otherwise break a plot or make it lie.

use crate::data::{
    FrequencySeries, LatencyCdf, MetricBars, NewidleSeries, PlotData, Timeline, FORMAT, VERSION,
};
use crate::error::{bad, PlotError};

/// The most slices a timeline may hold: each becomes an SVG rectangle of about 100
/// bytes, so half a million is already a 50 MB file that browsers struggle with.
pub const MAX_SLICES: usize = 500_000;

/// The most CPUs (timeline rows) a timeline may have: fairsim's `NR_CPUS_MAX`.
pub const MAX_CPUS: u32 = 8192;

/// The most frequency steps a plot may hold in all: the engine's timeline keeps at most
/// 2^20 transitions, and each step is two points of a line.
pub const MAX_FREQ_STEPS: usize = 1 << 20;

impl PlotData {
    /// Checks everything drawing relies on, with a one-line error naming the first
    /// field that breaks it.
    pub fn validate(&self) -> Result<(), PlotError> {
        if self.format != FORMAT {
            return Err(PlotError::invalid("format", bad(&self.format, FORMAT)));
        }
        if self.version != VERSION {
            return Err(PlotError::invalid(
                "version",
                bad(self.version, &VERSION.to_string()),
            ));
        }
        for (i, cdf) in self.latency.iter().enumerate() {
            check_cdf(cdf, &format!("latency[{i}]"))?;
        }
        if let Some(t) = &self.timeline {
            check_timeline(t)?;
        }
        if let Some(n) = &self.newidle {
            check_newidle(n)?;
        }
        for (i, m) in self.metrics.iter().enumerate() {
            check_metric(m, &format!("metrics[{i}]"))?;
        }
        if let Some(f) = &self.frequency {
            check_frequency(f)?;
        }
        Ok(())
    }
}

fn check_frequency(f: &FrequencySeries) -> Result<(), PlotError> {
    if f.end_ns <= f.start_ns {
        return Err(PlotError::invalid(
            "frequency.end_ns",
            bad(f.end_ns, &format!("a time after start_ns {}", f.start_ns)),
        ));
    }
    if f.policies.is_empty() {
        return Err(PlotError::invalid(
            "frequency.policies",
            "empty; allowed: at least one policy",
        ));
    }
    let total: usize = f.policies.iter().map(|p| p.steps.len()).sum();
    if total > MAX_FREQ_STEPS {
        return Err(PlotError::invalid(
            "frequency.policies",
            bad(total, &format!("at most {MAX_FREQ_STEPS} steps in all")),
        ));
    }
    for (i, p) in f.policies.iter().enumerate() {
        let at = format!("frequency.policies[{i}]");
        if p.name.is_empty() {
            return Err(PlotError::invalid(
                format!("{at}.name"),
                "empty; allowed: a name",
            ));
        }
        if p.steps.is_empty() {
            return Err(PlotError::invalid(
                format!("{at}.steps"),
                "empty; allowed: at least the frequency at the window's start",
            ));
        }
        let mut prev: Option<u64> = None;
        for (j, &(ns, khz)) in p.steps.iter().enumerate() {
            if ns < f.start_ns || ns >= f.end_ns || prev.is_some_and(|q| ns < q) {
                return Err(PlotError::invalid(
                    format!("{at}.steps[{j}]"),
                    bad(
                        ns,
                        "a time in [start_ns, end_ns), not before the previous step",
                    ),
                ));
            }
            if khz == 0 {
                return Err(PlotError::invalid(
                    format!("{at}.steps[{j}]"),
                    "0 kHz; allowed: a frequency above 0",
                ));
            }
            prev = Some(ns);
        }
    }
    Ok(())
}

fn check_cdf(cdf: &LatencyCdf, at: &str) -> Result<(), PlotError> {
    if cdf.points.is_empty() {
        return Err(PlotError::invalid(
            format!("{at}.points"),
            "empty; allowed: at least one (latency ns, count) step",
        ));
    }
    let mut prev: Option<(u64, u64)> = None;
    for (j, &(ns, count)) in cdf.points.iter().enumerate() {
        if let Some((pns, pcount)) = prev {
            if ns <= pns {
                return Err(PlotError::invalid(
                    format!("{at}.points[{j}]"),
                    bad(ns, &format!("a latency above the previous step's {pns} ns")),
                ));
            }
            if count < pcount {
                return Err(PlotError::invalid(
                    format!("{at}.points[{j}]"),
                    bad(
                        count,
                        &format!("a count at least the previous step's {pcount}"),
                    ),
                ));
            }
        }
        prev = Some((ns, count));
    }
    if let Some(b) = &cdf.buckets {
        if b.unit_ns == 0 || b.linear_to_ns <= b.unit_ns {
            return Err(PlotError::invalid(
                format!("{at}.buckets"),
                bad(
                    format!("unit_ns {} linear_to_ns {}", b.unit_ns, b.linear_to_ns),
                    "unit_ns above 0 and linear_to_ns above unit_ns",
                ),
            ));
        }
    }
    let last = prev.map_or(0, |p| p.1);
    if cdf.total == 0 || last != cdf.total {
        return Err(PlotError::invalid(
            format!("{at}.total"),
            bad(
                cdf.total,
                &format!("the last step's count ({last}), above 0"),
            ),
        ));
    }
    Ok(())
}

fn check_timeline(t: &Timeline) -> Result<(), PlotError> {
    if t.end_ns <= t.start_ns {
        return Err(PlotError::invalid(
            "timeline.end_ns",
            bad(t.end_ns, &format!("above start_ns ({})", t.start_ns)),
        ));
    }
    if t.cpus == 0 || t.cpus > MAX_CPUS {
        return Err(PlotError::invalid(
            "timeline.cpus",
            bad(t.cpus, &format!("1..={MAX_CPUS}")),
        ));
    }
    if t.slices.len() > MAX_SLICES {
        return Err(PlotError::invalid(
            "timeline.slices",
            format!(
                "{} slices; allowed: at most {MAX_SLICES} (choose a shorter window)",
                t.slices.len()
            ),
        ));
    }
    for w in t.tasks.windows(2).enumerate() {
        let (i, pair) = w;
        if pair[1].0 <= pair[0].0 {
            return Err(PlotError::invalid(
                format!("timeline.tasks[{}]", i + 1),
                bad(
                    pair[1].0,
                    &format!("a pid above the previous task's {}", pair[0].0),
                ),
            ));
        }
    }
    for (i, s) in t.slices.iter().enumerate() {
        if s.cpu >= t.cpus {
            return Err(PlotError::invalid(
                format!("timeline.slices[{i}].cpu"),
                bad(s.cpu, &format!("0..{}", t.cpus)),
            ));
        }
        if s.end_ns <= s.start_ns {
            return Err(PlotError::invalid(
                format!("timeline.slices[{i}].end_ns"),
                bad(s.end_ns, &format!("above start_ns ({})", s.start_ns)),
            ));
        }
    }
    let mut seen = vec![false; t.cpus as usize];
    for (i, g) in t.groups.iter().enumerate() {
        if g.cpus.is_empty() {
            return Err(PlotError::invalid(
                format!("timeline.groups[{i}].cpus"),
                "empty; allowed: at least one CPU",
            ));
        }
        for &c in &g.cpus {
            if c >= t.cpus || seen[c as usize] {
                return Err(PlotError::invalid(
                    format!("timeline.groups[{i}].cpus"),
                    bad(c, &format!("a CPU in 0..{} in no other group", t.cpus)),
                ));
            }
            seen[c as usize] = true;
        }
    }
    Ok(())
}

fn check_newidle(n: &NewidleSeries) -> Result<(), PlotError> {
    if n.bucket_ns == 0 {
        return Err(PlotError::invalid("newidle.bucket_ns", bad(0, "above 0")));
    }
    for (i, d) in n.domains.iter().enumerate() {
        if d.groups.len() != d.balances.len() {
            return Err(PlotError::invalid(
                format!("newidle.domains[{i}].groups"),
                format!(
                    "{} buckets; allowed: as many as balances ({})",
                    d.groups.len(),
                    d.balances.len()
                ),
            ));
        }
    }
    Ok(())
}

fn check_metric(m: &MetricBars, at: &str) -> Result<(), PlotError> {
    if m.sets.is_empty() {
        return Err(PlotError::invalid(
            format!("{at}.sets"),
            "empty; allowed: at least one bar",
        ));
    }
    if let Some(c) = &m.change {
        if c.mean != "Amean" && c.mean != "Hmean" {
            return Err(PlotError::invalid(
                format!("{at}.change.mean"),
                bad(&c.mean, "Amean or Hmean"),
            ));
        }
        if !c.change_pct.is_finite() {
            return Err(PlotError::invalid(
                format!("{at}.change.change_pct"),
                bad(c.change_pct, "a finite number"),
            ));
        }
    }
    for (j, b) in m.sets.iter().enumerate() {
        // A mean beyond 1e300 would overflow the axis range computed from it.
        if !b.mean.is_finite() || b.mean.abs() > 1e300 {
            return Err(PlotError::invalid(
                format!("{at}.sets[{j}].mean"),
                bad(b.mean, "a finite number"),
            ));
        }
        if !b.stddev.is_finite() || b.stddev < 0.0 || b.stddev > 1e300 {
            return Err(PlotError::invalid(
                format!("{at}.sets[{j}].stddev"),
                bad(b.stddev, "a finite number, 0 or above"),
            ));
        }
    }
    Ok(())
}
