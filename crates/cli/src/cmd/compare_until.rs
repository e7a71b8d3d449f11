//! `fairsim compare --until METRIC:RULE`: stop adding seeds once the answer is known.
//!
//! The seeds run in seed order on every core (a shared queue of jobs, seed by seed, base
//! then new), and after each seed that finished on both sides the rule is checked on the
//! seeds so far, in seed order, from `--min-seeds` on. The first seed at which the rule
//! holds is where the comparison stops; seeds that a core had already started beyond it
//! are discarded. The stop point therefore depends only on the per-seed values, which are
//! deterministic, and not on the number of cores or on thread timing: the same command
//! prints the same bytes on a laptop and on a 64-core box.
//!
//! Two rules:
//!
//! - `significant` (or `significant<ALPHA`): the difference of the means is significant
//!   under a group-sequential test that stays valid although it is looked at after every
//!   seed. Each look is Welch's t-test (the test behind the table's stars), at a nominal
//!   level given by an alpha-spending function of Lan and DeMets (K. K. G. Lan and D. L.
//!   DeMets, "Discrete sequential boundaries for clinical trials", Biometrika 70(3),
//!   659-663, 1983) of the O'Brien-Fleming type, `alpha(t) = 2 - 2 Phi(z_{1-alpha/2} /
//!   sqrt(t))`, with the information fraction `t` the seeds so far over the seed cap. A
//!   look spends what the function grew by since the previous look, and by Bonferroni's
//!   inequality the chance that any look stops on a difference that is not there is at
//!   most the sum of what the looks spent, `alpha(1) = alpha`. This is the conservative
//!   form of the method: it does not use the correlation between looks (which the exact
//!   boundaries integrate over), so it stops a little later than it could, never earlier
//!   than it may. O'Brien-Fleming-type spending keeps early looks, where few seeds make
//!   the t statistic fragile, very strict, and leaves most of alpha to the later looks;
//!   when the cap equals `--min-seeds` it is the fixed-sample Welch test at `alpha`.
//! - `ci<N%` or `ci<N`: the 95% confidence interval of the difference of the means
//!   (Welch) is within plus or minus N percent of the base mean, or N in the metric's own
//!   units. Stopping on the interval's width uses only the sample variances, which for
//!   normal samples are independent of the means, so the interval at the stop keeps its
//!   coverage to first order (Y. S. Chow and H. Robbins, "On the asymptotic theory of
//!   fixed-width sequential confidence intervals for the mean", Annals of Mathematical
//!   Statistics 36, 457-462, 1965); `--min-seeds` keeps a spread estimated from two or
//!   three seeds, often far too small by chance, from stopping it.
//!
//! The arithmetic (the t and normal tails, the spending function) is in
//! [`crate::sequential`].
//!
//! Both assume what the table's stars assume: each seed's value of the metric is roughly
//! normal, and the seeds are independent. Statistics on results are reporting, not
//! scheduling decisions, so they use floating point.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use crate::compare_table::summarise;
use crate::error::CliError;
use crate::sequential::{look_alpha, t_quantile_two_sided, t_two_sided};

/// The rules `--until` takes, for its error messages.
const RULES: &str = "significant, significant<ALPHA (0 < ALPHA < 0.5), ci<N% (of the base mean) or ci<N (the metric's units), e.g. d1-newidle-sg-scan/lb:significant";

/// The default of `--min-seeds`: fewer seeds give a Welch t statistic with two to six
/// degrees of freedom, whose spread estimate is often far too small by chance (which
/// would stop a `ci<` rule early), and 5 is compare's default `--seeds`.
pub(crate) const DEFAULT_MIN_SEEDS: u32 = 5;

/// What `--until` waits for.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Rule {
    /// The difference is significant at this alpha under the sequential test.
    Significant(f64),
    /// The 95% confidence interval of the difference is within plus or minus this many
    /// percent of the base mean.
    CiPercent(f64),
    /// The 95% confidence interval of the difference is within plus or minus this much,
    /// in the metric's units.
    CiAbsolute(f64),
}

/// A parsed `--until METRIC:RULE`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Until {
    /// The metric, as the table names it.
    pub metric: String,
    /// The rule, as given.
    pub rule_text: String,
    /// The rule.
    pub rule: Rule,
}

/// A positive finite number, or `None`.
fn positive(text: &str) -> Option<f64> {
    text.trim()
        .parse::<f64>()
        .ok()
        .filter(|v| v.is_finite() && *v > 0.0)
}

/// Parses `--until METRIC:RULE`. The metric is checked later, against the metrics the
/// compare reports ([`check_metric`]); names never hold a colon, so the last one splits.
pub(crate) fn parse(text: &str) -> Result<Until, CliError> {
    let Some((metric, rule_text)) = text.rsplit_once(':').filter(|(m, _)| !m.is_empty()) else {
        return Err(CliError::msg(format!(
            "--until: invalid value '{text}'; allowed: METRIC:RULE with RULE one of {RULES}"
        )));
    };
    let bad_rule = || {
        CliError::msg(format!(
            "--until: unknown rule '{rule_text}' in '{text}'; allowed: {RULES}"
        ))
    };
    // A known rule with a value out of its range is told apart from an unknown rule, so
    // the message names what to change.
    let bad_value = |value: &str, allowed: &str| {
        CliError::msg(format!(
            "--until: rule '{rule_text}' in '{text}': invalid value '{value}'; allowed: {allowed}"
        ))
    };
    let rule = if rule_text == "significant" {
        Rule::Significant(0.05)
    } else if let Some(a) = rule_text.strip_prefix("significant<") {
        match positive(a) {
            Some(a) if a < 0.5 => Rule::Significant(a),
            _ => {
                return Err(bad_value(
                    a,
                    "an ALPHA with 0 < ALPHA < 0.5 (significant<0.01)",
                ))
            }
        }
    } else if let Some(w) = rule_text.strip_prefix("ci<") {
        match w.strip_suffix('%') {
            Some(p) => Rule::CiPercent(
                positive(p).ok_or_else(|| bad_value(p, "a percentage above 0 (ci<5%)"))?,
            ),
            None => Rule::CiAbsolute(positive(w).ok_or_else(|| {
                bad_value(
                    w,
                    "a number above 0, in the metric's units (ci<0.5), or a percentage (ci<5%)",
                )
            })?),
        }
    } else {
        return Err(bad_rule());
    };
    Ok(Until {
        metric: metric.to_string(),
        rule_text: rule_text.to_string(),
        rule,
    })
}

/// Where a command's seed cap comes from, for `min_seeds`'s messages: compare's
/// `--seeds`, or a sweep plan's seeds axis.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SeedCap {
    /// The field a too-small cap is refused under (`--seeds`, `seeds`).
    pub field: &'static str,
    /// How to raise it to the default `--min-seeds`, after its number.
    pub raise: &'static str,
    /// The cap as `--min-seeds`'s range names it.
    pub name: &'static str,
}

/// compare's cap: `--seeds`.
pub(crate) const COMPARE_SEEDS: SeedCap = SeedCap {
    field: "--seeds",
    raise: "or more",
    name: "--seeds",
};

/// Checks `--min-seeds` against `--until` and the seed cap (`cap` seeds, `from` saying
/// where it is set): the seeds of the first look, 0 without `--until`.
pub(crate) fn min_seeds(
    until: Option<&Until>,
    given: Option<u32>,
    cap: u32,
    from: SeedCap,
) -> Result<usize, CliError> {
    match (until, given) {
        (None, None) => Ok(0),
        (None, Some(_)) => Err(CliError::msg(
            "--min-seeds: only with --until; allowed: --until METRIC:RULE --min-seeds N",
        )),
        (Some(_), None) if cap < DEFAULT_MIN_SEEDS => Err(CliError::msg(format!(
            "{}: {cap} is below --until's default --min-seeds {DEFAULT_MIN_SEEDS}; allowed: {} {DEFAULT_MIN_SEEDS} {}, or --min-seeds 2 to {cap}",
            from.field, from.field, from.raise
        ))),
        (Some(_), m) => {
            let m = m.unwrap_or(DEFAULT_MIN_SEEDS);
            if m < 2 || m > cap {
                return Err(crate::error::invalid(
                    "--min-seeds",
                    m,
                    &format!("2 to {} ({cap})", from.name),
                ));
            }
            Ok(m as usize)
        }
    }
}

/// Refuses a metric the compare does not report, naming those it does.
pub(crate) fn check_metric(until: &Until, names: &[String]) -> Result<(), CliError> {
    if names.contains(&until.metric) {
        return Ok(());
    }
    Err(CliError::msg(format!(
        "--until: unknown metric '{}'; allowed: {}",
        until.metric,
        names.join(", ")
    )))
}

/// Why the seeds stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reason {
    /// The difference became significant.
    Significant,
    /// The confidence interval became narrow enough.
    Ci,
    /// Every seed up to `--seeds` ran without the rule holding.
    SeedCap,
    /// Ctrl-C or SIGTERM came first.
    Interrupted,
}

impl Reason {
    /// The reason's name in `--json`.
    pub(crate) fn key(self) -> &'static str {
        match self {
            Reason::Significant => "significant",
            Reason::Ci => "ci",
            Reason::SeedCap => "seed cap",
            Reason::Interrupted => "interrupted",
        }
    }
}

/// Where and why the seeds stopped.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Stop {
    /// The seeds the table holds (the stop point, or the cap).
    pub seeds_run: usize,
    /// Why.
    pub reason: Reason,
    /// The sentence the header prints after `stopped after N of M seeds: `.
    pub message: String,
}

/// One look's verdict: whether the rule holds, and what it saw.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Look {
    /// The rule holds at this look.
    pub holds: bool,
    /// What the look computed, as the header shows it.
    pub detail: String,
}

/// A number in the header: four decimals, or four significant digits in exponent form
/// when it is tiny or huge.
fn g(v: f64) -> String {
    if v != 0.0 && (v.abs() < 1e-3 || v.abs() >= 1e6) {
        format!("{v:.3e}")
    } else {
        format!("{}", (v * 1e4).round() / 1e4)
    }
}

/// Checks the rule on the seeds so far (`n` seeds looked at, each side's values of the
/// metric), at the look after seed `n`. Called from `min_seeds` on.
pub(crate) fn look(
    until: &Until,
    base: &[f64],
    new: &[f64],
    n: usize,
    min_seeds: usize,
    cap: usize,
) -> Look {
    if base.len() < 2 || new.len() < 2 {
        return Look {
            holds: false,
            detail: format!(
                "{} reported by {} base and {} new seeds",
                until.metric,
                base.len(),
                new.len()
            ),
        };
    }
    let (diff, se, df) = welch(base, new);
    match until.rule {
        Rule::Significant(alpha) => {
            let level = look_alpha(alpha, n, min_seeds, cap);
            // Every seed gave the same value on each side: the difference is exact.
            let p = if se == 0.0 {
                if diff == 0.0 {
                    1.0
                } else {
                    0.0
                }
            } else {
                t_two_sided(diff / se, df)
            };
            let t = if se == 0.0 { 0.0 } else { diff / se };
            Look {
                holds: p < level,
                detail: format!(
                    "Welch t = {}, df {}, p = {} {} {}, look {} of {}'s share of alpha {alpha} \
                     under O'Brien-Fleming-type Lan-DeMets spending",
                    g(t),
                    g(df),
                    g(p),
                    if p < level { "<" } else { ">=" },
                    g(level),
                    n + 1 - min_seeds,
                    cap + 1 - min_seeds,
                ),
            }
        }
        Rule::CiPercent(w) | Rule::CiAbsolute(w) => {
            let half = t_quantile_two_sided(0.05, df) * se;
            let (value, unit) = if let Rule::CiPercent(_) = until.rule {
                let mean = summarise(base).amean.abs();
                let pct = if mean > 0.0 {
                    half / mean * 100.0
                } else {
                    f64::INFINITY
                };
                (pct, "% of the base mean")
            } else {
                (half, "")
            };
            Look {
                holds: value < w,
                detail: format!(
                    "95% CI of the difference {} +/-{}{unit}, {} +/-{w}{unit}",
                    g(diff),
                    g(value),
                    if value < w {
                        "narrower than"
                    } else {
                        "not narrower than"
                    },
                ),
            }
        }
    }
}

/// What the runner keeps while the seeds run: each job's result, the looks so far.
struct State<T> {
    results: Vec<Option<Result<Option<T>, CliError>>>,
    looked: usize,
    base: Vec<f64>,
    new: Vec<f64>,
    last: Option<Look>,
    decided: Option<(usize, Look)>,
}

/// Runs a compare's jobs (`2 * cap`, side-major: job `side * cap + k` is seed `k` of
/// `side`) in seed order on `workers` threads, looking after each seed finished on both
/// sides, until the rule holds. `run` runs one job (`None` when interrupted); `value`
/// reads the metric from a run's result. Returns every job's result (`Ok(None)` for the
/// jobs not run or discarded past the stop) and where it stopped.
pub(crate) fn run_until<T: Send>(
    until: &Until,
    cap: usize,
    min_seeds: usize,
    workers: usize,
    run: &(dyn Fn(usize) -> Result<Option<T>, CliError> + Sync),
    value: &(dyn Fn(&T) -> Option<f64> + Sync),
) -> (Vec<Result<Option<T>, CliError>>, Stop) {
    let next = AtomicUsize::new(0);
    // Seeds from this one on are not started: the stop point, or a seed whose run failed.
    let limit = AtomicUsize::new(cap);
    let state = Mutex::new(State {
        results: (0..2 * cap).map(|_| None).collect(),
        looked: 0,
        base: Vec::new(),
        new: Vec::new(),
        last: None,
        decided: None,
    });
    std::thread::scope(|scope| {
        for _ in 0..workers.clamp(1, 2 * cap) {
            scope.spawn(|| loop {
                let q = next.fetch_add(1, Ordering::SeqCst);
                let (k, side) = (q / 2, q % 2);
                if q >= 2 * cap || k >= limit.load(Ordering::SeqCst) {
                    break;
                }
                let job = side * cap + k;
                let r = run(job);
                let mut st = state.lock().unwrap_or_else(|e| e.into_inner());
                if r.is_err() {
                    // Seeds before the failed one still run, so that whether the rule
                    // stops before it does not depend on timing.
                    limit.fetch_min(k, Ordering::SeqCst);
                }
                st.results[job] = Some(r);
                // Looks in seed order, as far as both sides have finished.
                while st.decided.is_none() && st.looked < cap {
                    let i = st.looked;
                    let pair = (&st.results[i], &st.results[cap + i]);
                    let (Some(Ok(Some(b))), Some(Ok(Some(n)))) = pair else {
                        break;
                    };
                    let (vb, vn) = (value(b), value(n));
                    st.base.extend(vb);
                    st.new.extend(vn);
                    st.looked += 1;
                    let seeds = st.looked;
                    if seeds >= min_seeds {
                        let l = look(until, &st.base, &st.new, seeds, min_seeds, cap);
                        if l.holds {
                            limit.fetch_min(seeds, Ordering::SeqCst);
                            st.decided = Some((seeds, l));
                        } else {
                            st.last = Some(l);
                        }
                    }
                }
            });
        }
    });
    let st = state.into_inner().unwrap_or_else(|e| e.into_inner());
    let seeds_run = st.decided.as_ref().map_or(cap, |(n, _)| *n);
    let results: Vec<Result<Option<T>, CliError>> = st
        .results
        .into_iter()
        .enumerate()
        .map(|(job, r)| {
            // Runs past the stop point are discarded, so that the table does not depend
            // on how many cores ran ahead.
            if job % cap >= seeds_run {
                return Ok(None);
            }
            r.unwrap_or(Ok(None))
        })
        .collect();
    let stop = match st.decided {
        Some((n, l)) => {
            let (reason, what) = match until.rule {
                Rule::Significant(_) => (Reason::Significant, "difference significant"),
                _ => (Reason::Ci, "difference's CI narrow enough"),
            };
            Stop {
                seeds_run: n,
                reason,
                message: format!("{} {what} ({})", until.metric, l.detail),
            }
        }
        None if st.looked < cap => Stop {
            seeds_run,
            reason: Reason::Interrupted,
            message: "interrupted before the rule held".to_string(),
        },
        None => Stop {
            seeds_run,
            reason: Reason::SeedCap,
            message: match st.last {
                Some(l) => format!("seed cap reached (last look: {})", l.detail),
                None => "seed cap reached".to_string(),
            },
        },
    };
    (results, stop)
}

/// Welch's statistic for new minus base: (difference of the means, its standard error,
/// the Welch-Satterthwaite degrees of freedom).
pub(crate) fn welch(base: &[f64], new: &[f64]) -> (f64, f64, f64) {
    let (a, b) = (summarise(base), summarise(new));
    let va = a.stddev.powi(2) / a.n as f64;
    let vb = b.stddev.powi(2) / b.n as f64;
    let den = va.powi(2) / (a.n - 1) as f64 + vb.powi(2) / (b.n - 1) as f64;
    let df = if den > 0.0 {
        (va + vb).powi(2) / den
    } else {
        (a.n + b.n - 2) as f64
    };
    (b.amean - a.amean, (va + vb).sqrt(), df)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn looks_stop_on_clear_differences_only() {
        let until = parse("time:significant").unwrap();
        let base = [10.0, 10.2, 9.9, 10.1, 10.0];
        let new = [12.0, 12.1, 11.9, 12.2, 12.0];
        assert!(look(&until, &base, &new, 5, 5, 20).holds);
        let same = look(&until, &base, &base, 5, 5, 20);
        assert!(
            !same.holds && same.detail.contains("p = 1 >="),
            "{}",
            same.detail
        );
        let ci = parse("time:ci<5%").unwrap();
        assert!(look(&ci, &base, &new, 5, 5, 20).holds);
        assert!(!look(&parse("time:ci<0.01").unwrap(), &base, &new, 5, 5, 20).holds);
    }

    #[test]
    fn the_syntax_is_checked() {
        let u = parse("d1-newidle-sg-scan/lb:significant<0.01").unwrap();
        assert_eq!(u.metric, "d1-newidle-sg-scan/lb");
        assert_eq!(u.rule, Rule::Significant(0.01));
        assert_eq!(parse("m:ci<5%").unwrap().rule, Rule::CiPercent(5.0));
        assert_eq!(parse("m:ci<0.5").unwrap().rule, Rule::CiAbsolute(0.5));
        for bad in [
            "m",
            ":significant",
            "m:sig",
            "m:ci<",
            "m:ci<-1%",
            "m:significant<0.7",
        ] {
            // The message is the error's text; its Debug form quotes it.
            let e = format!("{:?}", parse(bad).unwrap_err());
            assert!(e.contains("text: \"--until: ") && !e.contains('\n'), "{e}");
        }
        let names = vec!["a".to_string(), "b".to_string()];
        let e = check_metric(&parse("c:significant").unwrap(), &names).unwrap_err();
        let e = format!("{e:?}");
        assert!(
            e.contains("\"--until: unknown metric 'c'; allowed: a, b\""),
            "{e}"
        );
    }

    #[test]
    fn the_stop_point_does_not_depend_on_the_workers() {
        // Seed k's values: a clear difference that the looks find at some seed.
        let vals = |job: usize| {
            let (side, k) = (job / 20, job % 20);
            let noise = [0.3, -0.2, 0.1, -0.4, 0.2, 0.0, -0.1, 0.4, -0.3, 0.1];
            Ok(Some(
                10.0 + side as f64 * 0.4 + noise[(k * 7 + side * 3) % 10],
            ))
        };
        let until = parse("m:significant").unwrap();
        let runs: Vec<_> = [1, 2, 3, 8]
            .into_iter()
            .map(|w| {
                let (r, stop) = run_until(&until, 20, 5, w, &vals, &|v: &f64| Some(*v));
                let r: Vec<Option<f64>> = r.into_iter().map(|x| x.unwrap()).collect();
                (r, stop)
            })
            .collect();
        assert!(runs[0].1.seeds_run < 20, "{:?}", runs[0].1);
        assert_eq!(runs[0].1.reason, Reason::Significant);
        for r in &runs[1..] {
            assert_eq!(*r, runs[0]);
        }
    }

    #[test]
    fn welch_matches_hand_values() {
        // Means 10.05 and 12.05, both variances of the mean 0.0041667: t = 21.9089, df 6.
        let (d, se, df) = welch(&[10.0, 10.2, 9.9, 10.1], &[12.0, 12.1, 11.9, 12.2]);
        assert!((d / se - 21.908_902_300_206_723).abs() < 1e-9 * 21.9);
        assert!((df - 6.0).abs() < 1e-9 * 6.0);
    }
}
