//! The `key=value` body of a specification (`schbench:m=6,t=24`), read against the keys
//! a tool allows, in one place so that every tool refuses a bad key or value with the
//! same message shape.

use fairsim_des::time::parse_duration;
use fairsim_engine::error::{EngineError, SpecError};

/// Parsed `key=value` pairs of a specification, checked against the allowed keys.
pub(crate) struct Keys {
    tool: &'static str,
    pairs: Vec<(String, Option<String>)>,
}

impl Keys {
    /// Splits `body` and rejects keys outside `allowed` (each entry lists the aliases of
    /// one option, e.g. `["m", "message-threads"]`) and an option given twice (under any
    /// of its names: the later value would win without a word).
    pub(crate) fn parse(
        tool: &'static str,
        body: &str,
        allowed: &[&[&str]],
    ) -> Result<Keys, EngineError> {
        let mut pairs: Vec<(String, Option<String>)> = Vec::new();
        for item in body.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let (k, v) = match item.split_once('=') {
                Some((k, v)) => (k.trim(), Some(v.trim().to_string())),
                None => (item, None),
            };
            let k = k.trim_start_matches('-');
            let Some(canon) = allowed.iter().find(|a| a.contains(&k)) else {
                let names: Vec<String> = allowed.iter().map(|a| a.join("|")).collect();
                return Err(SpecError::UnknownKey {
                    tool: tool.to_string(),
                    key: k.to_string(),
                    allowed: names.join(", "),
                }
                .into());
            };
            if pairs.iter().any(|(p, _)| p == canon[0]) {
                return Err(SpecError::GivenTwice {
                    tool: tool.to_string(),
                    key: k.to_string(),
                    allowed: if canon.len() > 1 {
                        format!("each key once ({} are one key)", canon.join(" and "))
                    } else {
                        "each key once".to_string()
                    },
                }
                .into());
            }
            pairs.push((canon[0].to_string(), v));
        }
        Ok(Keys { tool, pairs })
    }

    /// A text value, if the key was given with one.
    pub(crate) fn text(&self, key: &str) -> Option<&str> {
        self.raw(key).and_then(|v| v.as_deref())
    }

    /// The error for a value outside `allowed`.
    pub(crate) fn invalid(&self, key: &str, got: &str, allowed: &str) -> EngineError {
        self.bad(key, got, allowed)
    }

    /// The last value given for `key`: `None` when the key is absent, `Some(None)` when
    /// it was given bare (a flag). Tools read it for keys whose absence and bareness
    /// mean different things.
    pub(crate) fn raw(&self, key: &str) -> Option<&Option<String>> {
        self.pairs
            .iter()
            .rev()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v)
    }

    /// A flag (present without value, or `=1/true/yes`).
    pub(crate) fn flag(&self, key: &str) -> Result<bool, EngineError> {
        match self.raw(key) {
            None => Ok(false),
            Some(None) => Ok(true),
            Some(Some(v)) => match v.as_str() {
                "1" | "true" | "yes" | "on" => Ok(true),
                "0" | "false" | "no" | "off" => Ok(false),
                _ => Err(self.bad(key, v, "a flag: present, or =1/=0")),
            },
        }
    }

    /// An integer in `lo..=hi`.
    pub(crate) fn int(
        &self,
        key: &str,
        default: u64,
        lo: u64,
        hi: u64,
    ) -> Result<u64, EngineError> {
        match self.raw(key) {
            None => Ok(default),
            Some(None) => Err(self.bad(key, "", &format!("an integer in {lo}..={hi}"))),
            Some(Some(v)) => match v.parse::<u64>() {
                Ok(n) if (lo..=hi).contains(&n) => Ok(n),
                _ => Err(self.bad(key, v, &format!("an integer in {lo}..={hi}"))),
            },
        }
    }

    /// A duration (bare numbers in `unit` ns) in `lo..=hi` ns.
    pub(crate) fn dur(
        &self,
        key: &str,
        default: u64,
        unit: u64,
        lo: u64,
        hi: u64,
    ) -> Result<u64, EngineError> {
        let allowed = format!(
            "a duration from {} to {} (bare numbers in {})",
            fairsim_des::time::format_duration(lo),
            fairsim_des::time::format_duration(hi),
            match unit {
                1 => "ns",
                1_000 => "us",
                1_000_000 => "ms",
                _ => "s",
            }
        );
        match self.raw(key) {
            None => Ok(default),
            Some(None) => Err(self.bad(key, "", &allowed)),
            Some(Some(v)) => match parse_duration(v, unit) {
                Ok(n) if (lo..=hi).contains(&n) => Ok(n),
                _ => Err(self.bad(key, v, &allowed)),
            },
        }
    }

    fn bad(&self, key: &str, got: &str, allowed: &str) -> EngineError {
        SpecError::Invalid {
            tool: self.tool.to_string(),
            key: key.to_string(),
            got: got.to_string(),
            allowed: allowed.to_string(),
        }
        .into()
    }
}
