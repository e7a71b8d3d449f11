//! What a sweep writes: `plan.json` (the canonical plan and its digest), one
//! `points/NNNN-<key>.json` per point, and `summary.txt`, computed from the point files
//! alone so that an unsharded run and a merge of its shards write the same bytes.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use super::plan::{Plan, Point};
use super::point::{command_line, coordinates};
use crate::compare_table::{render_columns, MetricColumns};
use crate::error::CliError;

/// The largest `plan.json` or point file read back.
const MAX_FILE_BYTES: u64 = 64 << 20;

/// FNV-1a, 64 bits: a digest to tell plans apart (not to resist forgery), with no
/// dependency and the same value on every platform.
fn fnv1a64(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// `plan.json`'s text: the plan as parsed (fairsim's version, the name, the common
/// options and every axis with its values' labels, keys and arguments) with the digest of
/// that document and the list of point file stems.
pub(crate) fn plan_json(plan: &Plan, points: &[Point]) -> Result<String, CliError> {
    let axes: Vec<Value> = plan
        .axes
        .iter()
        .map(|a| {
            json!({
                "name": a.name,
                "values": a.values.iter().map(|v| json!({
                    "label": v.label, "key": v.key, "args": v.args,
                })).collect::<Vec<_>>(),
            })
        })
        .collect();
    let mut doc = json!({
        "fairsim": env!("CARGO_PKG_VERSION"),
        "name": plan.name,
        "run": plan.common,
        "axes": axes,
        "points": points.iter().map(|p| p.stem.as_str()).collect::<Vec<_>>(),
    });
    let digest = format!(
        "fnv1a64:{:016x}",
        fnv1a64(serde_json::to_string(&doc)?.as_bytes())
    );
    doc["digest"] = Value::String(digest);
    Ok(serde_json::to_string_pretty(&doc)? + "\n")
}

/// What the summary and a merge read back from `plan.json`.
#[derive(Debug, Clone)]
pub(crate) struct PlanMeta {
    /// The plan's name.
    pub name: String,
    /// The digest `plan.json` carries.
    pub digest: String,
    /// Each axis: its name and its values' labels.
    pub axes: Vec<(String, Vec<String>)>,
    /// The point file stems in index order.
    pub stems: Vec<String>,
}

impl PlanMeta {
    /// Reads the fields of `plan.json`'s text; `file` names it in errors.
    pub(crate) fn parse(text: &str, file: &Path) -> Result<PlanMeta, CliError> {
        let refuse = |what: &str| {
            CliError::msg(format!(
                "{}: {what}; allowed: a plan.json written by fairsim sweep",
                file.display()
            ))
        };
        let doc: Value =
            serde_json::from_str(text).map_err(|e| refuse(&format!("not JSON ({e})")))?;
        let s = |k: &str| doc.get(k).and_then(Value::as_str).map(str::to_string);
        let strings = |v: Option<&Value>| -> Option<Vec<String>> {
            v?.as_array()?
                .iter()
                .map(|e| e.as_str().map(str::to_string))
                .collect()
        };
        let axes = doc
            .get("axes")
            .and_then(Value::as_array)
            .ok_or_else(|| refuse("no axes"))?
            .iter()
            .map(|a| {
                let name = a.get("name")?.as_str()?.to_string();
                let labels = a
                    .get("values")?
                    .as_array()?
                    .iter()
                    .map(|v| v.get("label")?.as_str().map(str::to_string))
                    .collect::<Option<Vec<_>>>()?;
                (!labels.is_empty()).then_some((name, labels))
            })
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| refuse("an axis without a name or values"))?;
        let meta = PlanMeta {
            name: s("name").ok_or_else(|| refuse("no name"))?,
            digest: s("digest").ok_or_else(|| refuse("no digest"))?,
            axes,
            stems: strings(doc.get("points")).ok_or_else(|| refuse("no points"))?,
        };
        let product: usize = meta.axes.iter().map(|a| a.1.len()).product();
        if product != meta.stems.len() {
            return Err(refuse("the point list does not match the axes"));
        }
        Ok(meta)
    }

    pub(super) fn lens(&self) -> Vec<usize> {
        self.axes.iter().map(|a| a.1.len()).collect()
    }
}

/// A point file's text: the plan's name and digest, the point's index, key, coordinates
/// (axis and label, in the plan's axis order), its `fairsim run` command line and
/// arguments, its metrics (compare's list) and its workloads' own results.
pub(crate) fn point_json(
    plan: &Plan,
    digest: &str,
    point: &Point,
    metrics: &[(String, bool, f64)],
    reports: Vec<Value>,
) -> Result<String, CliError> {
    let lens: Vec<usize> = plan.axes.iter().map(|a| a.values.len()).collect();
    let coords: Vec<Value> = plan
        .axes
        .iter()
        .zip(coordinates(point.index, &lens))
        .map(|(a, c)| json!([a.name, a.values[c].label]))
        .collect();
    let doc = json!({
        "plan": plan.name,
        "plan_digest": digest,
        "index": point.index,
        "point": point.stem,
        "coordinates": coords,
        "command": command_line(&point.argv),
        "argv": point.argv,
        "metrics": metrics.iter().map(|(n, hb, v)| json!({
            "name": n, "higher_better": hb, "value": v,
        })).collect::<Vec<_>>(),
        "workloads": reports,
    });
    Ok(serde_json::to_string_pretty(&doc)? + "\n")
}

/// The file of point `stem` under `dir`.
pub(crate) fn point_path(dir: &Path, stem: &str) -> PathBuf {
    dir.join("points").join(format!("{stem}.json"))
}

/// Reads a file a sweep wrote, as text of bounded size.
pub(crate) fn read_text(path: &Path) -> Result<String, CliError> {
    fairsim_topology::source::read_bounded(path, MAX_FILE_BYTES)
        .map_err(|e| CliError::msg(format!("{}: {e}", path.display())))
}

/// Writes `text` to `path`; a failure is an output error.
pub(crate) fn write_text(path: &Path, text: &str) -> Result<(), CliError> {
    std::fs::write(path, text)
        .map_err(|e| CliError::output(format!("writing {}: {e}", path.display())))
}

/// One point's metrics as its file holds them: (name, higher is better, value).
fn read_metrics(
    text: &str,
    stem: &str,
    index: usize,
) -> Result<Vec<(String, bool, f64)>, CliError> {
    let refuse = |what: &str| {
        CliError::msg(format!(
            "points/{stem}.json: {what}; allowed: a point file written by fairsim sweep"
        ))
    };
    let doc: Value = serde_json::from_str(text).map_err(|e| refuse(&format!("not JSON ({e})")))?;
    if doc.get("index").and_then(Value::as_u64) != Some(index as u64) {
        return Err(refuse("its index is not its file name's"));
    }
    doc.get("metrics")
        .and_then(Value::as_array)
        .ok_or_else(|| refuse("no metrics"))?
        .iter()
        .map(|m| {
            let name = m.get("name")?.as_str()?.to_string();
            let hb = m.get("higher_better")?.as_bool()?;
            // serde_json writes a non-finite value as null.
            let v = m.get("value").map(|v| v.as_f64().unwrap_or(f64::NAN))?;
            Some((name, hb, v))
        })
        .collect::<Option<Vec<_>>>()
        .ok_or_else(|| refuse("a metric without a name, direction or value"))
}

/// `summary.txt` from `plan.json`'s fields and every point file's text (in index order).
///
/// Grouping: for each axis other than seeds with more than one value, one table per
/// combination of the values of the other non-seed axes (in index order); its columns are
/// the axis's values, the first being the baseline, and each column's samples are that
/// point's seeds. Metrics appear in the order they first appear in the group's points; a
/// metric a column lacks (a domain level another machine does not have) shows zeros there.
pub(crate) fn summary(meta: &PlanMeta, texts: &[Option<String>]) -> Result<String, CliError> {
    // A point that did not run (a cell of `--until` that stopped before it) adds no
    // sample to its column.
    let metrics: Vec<Vec<(String, bool, f64)>> = meta
        .stems
        .iter()
        .zip(texts)
        .enumerate()
        .map(|(i, (stem, text))| match text {
            Some(text) => read_metrics(text, stem, i),
            None => Ok(Vec::new()),
        })
        .collect::<Result<_, _>>()?;
    let ran = texts.iter().filter(|t| t.is_some()).count();
    let lens = meta.lens();
    let coords: Vec<Vec<usize>> = (0..meta.stems.len())
        .map(|i| coordinates(i, &lens))
        .collect();
    let seeds = meta.axes.len() - 1;
    let mut out = String::new();
    let shape = meta
        .axes
        .iter()
        .map(|(n, v)| format!("{n} {}", v.len()))
        .collect::<Vec<_>>()
        .join(" x ");
    let points = if ran == meta.stems.len() {
        format!("{} points", ran)
    } else {
        format!("{ran} of {} points", meta.stems.len())
    };
    out.push_str(&format!(
        "fairsim sweep {}: {points} ({shape}), plan digest {}\n",
        meta.name, meta.digest
    ));
    out.push_str(
        "Each table compares one axis's values (columns, the first being the baseline) for one \
combination of the other axes' values; its samples are the seeds.\n",
    );
    let varied: Vec<usize> = (0..seeds).filter(|&a| lens[a] > 1).collect();
    if varied.is_empty() {
        // Nothing to compare: one table of every metric over the seeds.
        let all: Vec<usize> = (0..meta.stems.len()).collect();
        out.push_str("\n== every point (no axis but seeds has more than one value)\n");
        out.push_str(&table(&metrics, &[all], &["all"]));
        return Ok(out);
    }
    for &axis in &varied {
        // The other non-seed axes' values identify a group; groups go in index order.
        let mut groups: Vec<(Vec<usize>, Vec<Vec<usize>>)> = Vec::new();
        for (i, c) in coords.iter().enumerate() {
            let context: Vec<usize> = (0..seeds).filter(|&a| a != axis).map(|a| c[a]).collect();
            let g = match groups.iter().position(|(ctx, _)| *ctx == context) {
                Some(g) => g,
                None => {
                    groups.push((context, vec![Vec::new(); lens[axis]]));
                    groups.len() - 1
                }
            };
            groups[g].1[c[axis]].push(i);
        }
        let (axis_name, labels) = &meta.axes[axis];
        let label_refs: Vec<&str> = labels.iter().map(String::as_str).collect();
        for (context, columns) in &groups {
            let others: Vec<String> = (0..seeds)
                .filter(|&a| a != axis)
                .zip(context)
                .map(|(a, &v)| format!("{}={}", meta.axes[a].0, meta.axes[a].1[v]))
                .collect();
            out.push_str(&format!(
                "\n== {axis_name}: {} | {}\n",
                labels.join(" vs "),
                others.join(", ")
            ));
            out.push_str(&table(&metrics, columns, &label_refs));
        }
    }
    Ok(out)
}

/// One compare-kernels table: `columns` lists each column's points.
fn table(metrics: &[Vec<(String, bool, f64)>], columns: &[Vec<usize>], labels: &[&str]) -> String {
    let mut rows: Vec<MetricColumns> = Vec::new();
    for (c, points) in columns.iter().enumerate() {
        for &p in points {
            for (name, hb, v) in &metrics[p] {
                let idx = match rows.iter().position(|r| r.name == *name) {
                    Some(i) => i,
                    None => {
                        rows.push(MetricColumns {
                            name: name.clone(),
                            higher_better: *hb,
                            columns: vec![Vec::new(); columns.len()],
                        });
                        rows.len() - 1
                    }
                };
                rows[idx].columns[c].push(*v);
            }
        }
    }
    render_columns(&rows, labels)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv1a64_matches_its_reference_values() {
        assert_eq!(fnv1a64(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a64(b"a"), 0xaf63_dc4c_8601_ec8c);
    }
}
