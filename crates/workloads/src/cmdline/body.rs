//! What every tool's command-line parser builds: the `key=value` body its key parser
//! reads, and the error for words the tool does not take. A leaf, so that the parsers
//! and the option scanner share it without referring back to the dispatch in
//! `cmdline/mod.rs`.

use fairsim_engine::error::{EngineError, SpecError};

/// The `key=value` body a command line becomes, and which option the user typed for each
/// key, so that the tool parser's errors name the option as the user wrote it.
#[derive(Debug, Default)]
pub(super) struct Body {
    items: Vec<String>,
    typed: Vec<(&'static str, String)>,
}

impl Body {
    /// `key=value`, typed by the user as `typed` (or the tool's spelling of a default).
    pub(super) fn set(&mut self, key: &'static str, value: impl std::fmt::Display, typed: &str) {
        self.items.push(format!("{key}={value}"));
        self.typed.push((key, typed.to_string()));
    }

    /// A bare key (a flag, or cyclictest's `t` alone).
    pub(super) fn flag(&mut self, key: &'static str, typed: &str) {
        self.items.push(key.to_string());
        self.typed.push((key, typed.to_string()));
    }

    /// The body for the tool's key parser: an option the command line gave twice keeps
    /// its last value, as the tool's own getopt loop does (the key parser refuses a key
    /// written twice in a `NAME:key=value` body, where no tool's rule applies).
    pub(super) fn text(&self) -> String {
        let key = |item: &str| item.split('=').next().unwrap_or(item).to_string();
        let mut kept: Vec<&str> = Vec::new();
        for (i, item) in self.items.iter().enumerate() {
            let later = self.items[i + 1..].iter().any(|l| key(l) == key(item));
            if !later {
                kept.push(item);
            }
        }
        kept.join(",")
    }

    /// Rewrites an error of the key parser (`TOOL: KEY: ...`) to name the tool as
    /// `shown` and the option as the user typed it (`schbench@2016: -t: ...`).
    pub(super) fn rename(&self, tool: &str, shown: &str, e: EngineError) -> EngineError {
        let EngineError::Workload(spec) = e else {
            return e;
        };
        EngineError::Workload(spec.renamed(tool, shown, &self.typed))
    }
}

/// The error for words a tool does not take.
pub(super) fn extra(tool: &str, words: &[String], allowed: &str) -> EngineError {
    SpecError::Unexpected {
        tool: tool.to_string(),
        got: words.join(" "),
        allowed: allowed.to_string(),
    }
    .into()
}
