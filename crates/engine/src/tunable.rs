//! Tunable writes as a scenario's tables give them (`[sysctl]`, `[debugfs]`, a
//! `[cgroup."/PATH"]` table): values that a TOML file reads as numbers, strings or, for a
//! dotted key, nested tables, turned into the `NAME=V` writes the command line takes.

use std::collections::BTreeMap;

use serde::Deserialize;

/// A value of the `[sysctl]` or `[debugfs]` table: a number, a string, or a table that a
/// dotted key made.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(untagged)]
pub enum TunableValue {
    /// `nr_migrate = 8`.
    Int(i64),
    /// `nr_migrate = "8"`.
    Str(String),
    /// `kernel.sched_nr_migrate = 8` makes `kernel` a table.
    Table(BTreeMap<String, TunableValue>),
}

/// The writes of a `[sysctl]` or `[debugfs]` table as `NAME=V`, dotted keys joined with
/// `.`, in the order of the joined names.
pub fn tunable_writes(table: &BTreeMap<String, TunableValue>) -> Vec<String> {
    fn walk(prefix: &str, t: &BTreeMap<String, TunableValue>, out: &mut Vec<(String, String)>) {
        for (k, v) in t {
            let name = if prefix.is_empty() {
                k.clone()
            } else {
                format!("{prefix}.{k}")
            };
            match v {
                TunableValue::Int(i) => out.push((name, i.to_string())),
                TunableValue::Str(s) => out.push((name, s.clone())),
                TunableValue::Table(t) => walk(&name, t, out),
            }
        }
    }
    let mut out = Vec::new();
    walk("", table, &mut out);
    out.sort();
    out.into_iter().map(|(n, v)| format!("{n}={v}")).collect()
}
