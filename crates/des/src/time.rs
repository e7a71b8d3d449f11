//! Virtual time: integer nanoseconds since the start of the emulation, and the parsing of
//! user-written durations (`30ms`, `1.5s`, `50us`).

use std::fmt;

/// A point in virtual time, in nanoseconds since the emulation started.
///
/// It is a newtype so that instants and plain counts cannot be mixed up by accident;
/// durations stay plain `u64` nanoseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Time(pub u64);

impl Time {
    /// The start of the emulation.
    pub const ZERO: Time = Time(0);

    /// Nanoseconds since the start.
    pub fn ns(self) -> u64 {
        self.0
    }

    /// This instant plus `d` nanoseconds (saturating, so "never" stays representable).
    pub fn after(self, d: u64) -> Time {
        Time(self.0.saturating_add(d))
    }

    /// Nanoseconds from `earlier` to `self`, 0 if `earlier` is later.
    pub fn since(self, earlier: Time) -> u64 {
        self.0.saturating_sub(earlier.0)
    }
}

impl fmt::Display for Time {
    /// Seconds with nine decimals, as ftrace prints timestamps.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}.{:09}",
            self.0 / 1_000_000_000,
            self.0 % 1_000_000_000
        )
    }
}

/// Nanoseconds per microsecond.
pub const US: u64 = 1_000;
/// Nanoseconds per millisecond.
pub const MS: u64 = 1_000_000;
/// Nanoseconds per second.
pub const SEC: u64 = 1_000_000_000;

/// A duration that could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid value '{text}' ({why}); allowed: a non-negative number with unit ns, us, ms or s (e.g. 30ms, 1.5s)")]
pub struct DurationError {
    /// What the user wrote.
    pub text: String,
    /// What is wrong with it.
    pub why: &'static str,
}

/// Parses `N[.F]unit` with unit `ns`, `us`, `ms` or `s` into nanoseconds. A bare number
/// takes `default_unit` (ns per unit), because tools differ: schbench's `-s` and `-c` are
/// microseconds, `--duration` is seconds. Fractions below 1 ns are rejected rather than
/// rounded, so that what runs is what was written.
pub fn parse_duration(text: &str, default_unit: u64) -> Result<u64, DurationError> {
    let err = |why| DurationError {
        text: text.to_string(),
        why,
    };
    let t = text.trim();
    if t.starts_with('-') {
        return Err(err("durations cannot be negative"));
    }
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let scale = match unit.trim() {
        "" => default_unit,
        "ns" => 1,
        "us" | "µs" => US,
        "ms" => MS,
        "s" => SEC,
        _ => return Err(err("unknown unit")),
    };
    if num.is_empty() {
        return Err(err("no number"));
    }
    let (int, frac) = match num.split_once('.') {
        Some((i, f)) => (i, f),
        None => (num, ""),
    };
    if int.is_empty() && frac.is_empty() {
        return Err(err("no number"));
    }
    let int: u64 = if int.is_empty() {
        0
    } else {
        int.parse().map_err(|_| err("not a number"))?
    };
    let mut value = int.checked_mul(scale).ok_or_else(|| err("too large"))?;
    if !frac.is_empty() {
        if frac.len() > 9 || !frac.bytes().all(|b| b.is_ascii_digit()) {
            return Err(err("too many decimals"));
        }
        let digits: u64 = frac.parse().map_err(|_| err("not a number"))?;
        let denom = 10u64.pow(frac.len() as u32);
        let part = digits as u128 * scale as u128;
        if part % denom as u128 != 0 {
            return Err(err("finer than 1 ns"));
        }
        value = value
            .checked_add((part / denom as u128) as u64)
            .ok_or_else(|| err("too large"))?;
    }
    Ok(value)
}

/// Parses a duration that must carry its unit: fairsim's own options (`--duration`,
/// `--warmup`, `--timer-slack`, `--cost`, race's times) take no bare numbers, because a
/// bare number would mean seconds for one and nanoseconds for another. Workload keys
/// keep their tool's unit for bare numbers (schbench's `-s` is microseconds).
pub fn parse_duration_with_unit(text: &str) -> Result<u64, DurationError> {
    let t = text.trim();
    if !t.is_empty() && t.ends_with(|c: char| c.is_ascii_digit() || c == '.') {
        return Err(DurationError {
            text: text.to_string(),
            why: "a unit is required",
        });
    }
    parse_duration(t, 1)
}

/// Formats nanoseconds compactly for headers: `30s`, `1.5ms`, `51us`, `700ns`.
pub fn format_duration(ns: u64) -> String {
    for (unit, scale) in [("s", SEC), ("ms", MS), ("us", US)] {
        if ns >= scale {
            let whole = ns / scale;
            let rest = ns % scale;
            if rest == 0 {
                return format!("{whole}{unit}");
            }
            let mut frac = format!("{:0width$}", rest, width = scale.ilog10() as usize);
            while frac.ends_with('0') {
                frac.pop();
            }
            return format!("{whole}.{frac}{unit}");
        }
    }
    format!("{ns}ns")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_units_and_fractions() {
        assert_eq!(parse_duration("30ms", SEC).unwrap(), 30 * MS);
        assert_eq!(parse_duration("1.5s", SEC).unwrap(), 1_500 * MS);
        assert_eq!(parse_duration("30000", US).unwrap(), 30 * MS);
        assert_eq!(parse_duration("2", SEC).unwrap(), 2 * SEC);
        assert_eq!(parse_duration("1us", SEC).unwrap(), 1_000);
        assert_eq!(parse_duration("0.5us", SEC).unwrap(), 500);
        assert_eq!(parse_duration("7ns", SEC).unwrap(), 7);
    }

    #[test]
    fn rejects_bad_input() {
        for bad in [
            "-1s",
            "",
            "ms",
            "1.2.3s",
            "1x",
            "0.1ns",
            "99999999999999999999s",
        ] {
            assert!(parse_duration(bad, SEC).is_err(), "{bad}");
        }
        let e = parse_duration("-5ms", SEC).unwrap_err();
        assert!(e.to_string().contains("negative"));
    }

    #[test]
    fn formats_round_trip() {
        for ns in [0, 7, 1_000, 1_500_000, 30 * SEC, 51 * US] {
            assert_eq!(parse_duration(&format_duration(ns), SEC).unwrap(), ns);
        }
        assert_eq!(format_duration(1_500_000), "1.5ms");
    }

    #[test]
    fn time_arithmetic() {
        let t = Time(10);
        assert_eq!(t.after(5), Time(15));
        assert_eq!(Time(15).since(t), 5);
        assert_eq!(t.since(Time(15)), 0);
        assert_eq!(Time(u64::MAX).after(1), Time(u64::MAX));
        assert_eq!(Time(1_500_000_000).to_string(), "1.500000000");
    }
}
