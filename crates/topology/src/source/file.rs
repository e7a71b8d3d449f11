//! Machine files: fairsim's own schema in TOML or JSON, and the ground-truth
//! `topology.json` format.
//!
//! # fairsim's schema
//!
//! The same fields as the qemu-style spec (see [`crate::source::spec`]), as a table. A full
//! TOML example:
//!
//! ```toml
//! name = "tc2-like"          # optional; default: the file name without extension
//! arch = "arm64"             # optional: "x86" (default) or "arm64"
//! capacity = "0-1:1441,2-4:606"   # optional raw capacities, normalised to 1024
//! # itmt = "0-1:60,2-4:40"   # optional, x86 only: ITMT core priorities (SD_ASYM_PACKING)
//! # idle_states = "spr,no-C6"   # optional: cpuidle states, as `fairsim run --idle-states` takes them
//! # costs = "arm-2013"       # optional: the kernel-overhead cost table (x86-2020s or arm-2013)
//!
//! [smp]                      # qemu's -smp: missing counts are completed as qemu does
//! cpus = 5                   # optional total
//! sockets = 1
//! dies = 1
//! clusters = 1
//! cores = 5
//! threads = 1
//! llc = "cluster"            # optional: core | cluster | die | package
//!                            # (default: die on x86, cluster on arm64)
//!
//! [numa]                     # optional; without it, one node
//! distance = [[10]]          # square, symmetric, 10 on the diagonal
//! cpus = ["0-4"]             # optional; default: equal contiguous ranges
//!
//! [speed]                    # optional: how fast each CPU runs a workload kind, apart
//! sysbench = "0-1:1024,2-4:504"   # from its capacity (1..1024, every CPU once);
//! # "*" = "0-4:1024"         # "*" for every kind without its own entry
//!
//! [[cpufreq]]                # optional, repeatable: frequency domains and OPP tables
//! cpus = "0-1"               # (see the file_cpufreq module for every key)
//! transition_latency_ns = 40000
//! opps = [{ khz = 500000 }, { khz = 1000000 }]
//! ```
//!
//! The JSON form has the same structure:
//! `{"name": "x", "arch": "x86", "smp": {"sockets": 2, "cores": 4, "threads": 2},
//! "numa": {"distance": [[10, 21], [21, 10]]}, "speed": {"sysbench": "0-7:1024"}}`.
//! Unknown keys are errors. The cost table's name and the speed table's kinds are
//! checked by the engine, which knows which exist; this module checks their shape.
//!
//! # Ground truth
//!
//! A JSON file with a `guest_observed` key is read as a ground-truth `topology.json`; see
//! the `guest` module for how its masks map onto a [`Machine`].

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;

use crate::error::TopologyError;
use crate::machine::{Arch, LlcScope, Machine};
use crate::source::guest::machine_from_guest;
use crate::source::read::read_bounded;
use crate::source::spec::{build_spec, SpecOptions};
use crate::source::spec_lists::FieldNames;
use crate::speed::SpeedTable;

/// Largest machine file read, so that a wrong path to a huge file fails fast.
const MAX_FILE_BYTES: u64 = 64 << 20;

/// Field names in error messages about fairsim's own file schema.
const FILE_FIELDS: FieldNames = FieldNames {
    smp: "smp",
    smp_sep: ".",
    distance: "numa.distance",
    numa_cpus: "numa.cpus",
    capacity: "capacity",
    itmt: "itmt",
};

/// The top level of fairsim's machine file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct MachineFile {
    name: Option<String>,
    arch: Option<String>,
    smp: SmpTable,
    numa: Option<NumaTable>,
    capacity: Option<String>,
    itmt: Option<String>,
    /// The CPU idle states, as `--idle-states` takes them (checked by the engine).
    idle_states: Option<String>,
    /// The kernel-overhead cost table's name, as `--costs` takes it (checked by the
    /// engine).
    costs: Option<String>,
    /// The `[speed]` table: workload kind -> `cpulist:speed` groups.
    speed: Option<BTreeMap<String, String>>,
    /// The `[[cpufreq]]` tables: frequency domains and their OPPs.
    cpufreq: Option<Vec<super::file_cpufreq::CpufreqEntry>>,
}

/// The `[smp]` table: qemu's `-smp` keys plus where the LLC sits.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SmpTable {
    cpus: Option<u64>,
    sockets: Option<u64>,
    dies: Option<u64>,
    clusters: Option<u64>,
    cores: Option<u64>,
    threads: Option<u64>,
    llc: Option<String>,
}

/// The `[numa]` table.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct NumaTable {
    distance: Vec<Vec<i64>>,
    cpus: Option<Vec<String>>,
}

/// Loads a machine from a `.toml` or `.json` file (fairsim's schema, or a ground-truth
/// `topology.json`). Errors name the file and the field.
pub fn load_machine_file(path: &Path) -> Result<Machine, TopologyError> {
    let shown = path.display().to_string();
    let parse_err = |reason: String| TopologyError::Parse {
        path: shown.clone(),
        reason,
    };
    let text = read_bounded(path, MAX_FILE_BYTES).map_err(|e| TopologyError::Io {
        path: shown.clone(),
        reason: e.to_string(),
    })?;
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    let file: MachineFile = match ext.as_deref() {
        Some("json") => {
            let value: serde_json::Value =
                serde_json::from_str(&text).map_err(|e| parse_err(format!("invalid JSON: {e}")))?;
            // serde would report an array as a type mismatch deep inside the schema;
            // the user needs to hear that the top level must be an object.
            if !value.is_object() {
                return Err(parse_err(
                    "the top level is not an object; allowed: a JSON object with the machine's keys (name, arch, cpus or smp, ...) or a ground-truth topology.json".to_string(),
                ));
            }
            if value.get("guest_observed").is_some() {
                return machine_from_guest(&shown, &value);
            }
            serde_json::from_value(value).map_err(|e| {
                // A Value has no positions; the text's own parse says where the value
                // is, and the key before it is the field to name.
                let key = serde_json::from_str::<MachineFile>(&text)
                    .err()
                    .and_then(|p| json_key_before(&text, p.line(), p.column()));
                match key {
                    Some(k) => parse_err(format!("{k}: {}", one_line(&e.to_string()))),
                    None => parse_err(one_line(&e.to_string())),
                }
            })?
        }
        Some("toml") => toml::from_str(&text).map_err(|e| parse_err(toml_message(&text, &e)))?,
        _ => {
            return Err(parse_err(
                "unknown file type; allowed: a .toml or .json machine file".to_string(),
            ))
        }
    };
    let default_name = path
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("machine")
        .to_string();
    machine_from_schema(file, &default_name).map_err(|e| parse_err(e.to_string()))
}

/// Converts fairsim's schema into spec options and builds the machine through the spec
/// parser, so files and command lines accept and reject exactly the same machines.
fn machine_from_schema(file: MachineFile, default_name: &str) -> Result<Machine, TopologyError> {
    let arch = match file.arch.as_deref() {
        None => Arch::X86,
        Some(a) => {
            Arch::parse(a).ok_or_else(|| TopologyError::invalid("arch", a, "x86 or arm64"))?
        }
    };
    let llc = match file.smp.llc.as_deref() {
        None => None,
        Some(s) => Some(parse_llc(s).ok_or_else(|| {
            TopologyError::invalid("smp.llc", s, "core, cluster, die or package")
        })?),
    };
    let smp = &file.smp;
    let items: Vec<String> = [
        ("cpus", smp.cpus),
        ("sockets", smp.sockets),
        ("dies", smp.dies),
        ("clusters", smp.clusters),
        ("cores", smp.cores),
        ("threads", smp.threads),
    ]
    .into_iter()
    .filter_map(|(k, v)| v.map(|v| format!("{k}={v}")))
    .collect();
    let (numa_distance, numa_cpus) = match &file.numa {
        None => (None, None),
        Some(numa) => {
            let rows: Vec<String> = numa
                .distance
                .iter()
                .map(|row| row.iter().map(i64::to_string).collect::<Vec<_>>().join(","))
                .collect();
            (
                Some(rows.join(";")),
                numa.cpus.as_ref().map(|c| c.join(";")),
            )
        }
    };
    let opts = SpecOptions {
        smp: items.join(","),
        numa_distance,
        numa_cpus,
        arch,
        capacity: file.capacity.clone(),
        llc,
        itmt: file.itmt.clone(),
    };
    let name = file
        .name
        .clone()
        .unwrap_or_else(|| default_name.to_string());
    let mut m = build_spec(&opts, &FILE_FIELDS, &name)?;
    m.idle_states = file.idle_states.clone();
    if let Some(costs) = &file.costs {
        if costs.trim().is_empty() {
            return Err(TopologyError::invalid(
                "costs",
                "(empty)",
                "the name of a cost table, e.g. arm-2013",
            ));
        }
        m.costs = Some(costs.trim().to_string());
    }
    for (kind, list) in file.speed.iter().flatten() {
        let field = format!("speed.{kind}");
        SpeedTable::check_kind(kind, &field)?;
        let speeds = SpeedTable::parse_speeds(list, m.nr_cpus(), &field)?;
        m.speed.insert(kind, speeds);
    }
    if let Some(entries) = &file.cpufreq {
        m.cpufreq = super::file_cpufreq::domains_of(entries, &m)?;
        m.validate()?;
    }
    Ok(m)
}

/// Parses an LLC scope name as written in files and on the command line.
pub fn parse_llc(s: &str) -> Option<LlcScope> {
    match s {
        "core" => Some(LlcScope::Core),
        "cluster" => Some(LlcScope::Cluster),
        "die" => Some(LlcScope::Die),
        "package" | "socket" => Some(LlcScope::Package),
        _ => None,
    }
}

/// The toml crate's messages span several lines with a source excerpt; keep the message
/// and the line number so the CLI can print one line.
fn toml_message(text: &str, e: &toml::de::Error) -> String {
    let msg = one_line(e.message());
    match e.span() {
        Some(span) => {
            let line = text
                .get(..span.start)
                .map_or(0, |before| before.matches('\n').count())
                + 1;
            format!("line {line}: {msg}")
        }
        None => msg,
    }
}

/// The last object key (`"cores":`) before line `line`, column `column` (both from 1,
/// as serde_json reports them) of `text`: the field whose value a type error is about.
fn json_key_before(text: &str, line: usize, column: usize) -> Option<String> {
    let start: usize = text
        .split_inclusive('\n')
        .take(line.saturating_sub(1))
        .map(str::len)
        .sum();
    let upto = text.get(..(start + column).min(text.len()))?;
    let colon = upto.rfind(':')?;
    let key_end = upto[..colon].trim_end().strip_suffix('"')?;
    let key_start = key_end.rfind('"')?;
    Some(key_end[key_start + 1..].to_string())
}

/// Joins a possibly multi-line message into one line.
fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A JSON machine file's type error names its key (issue 50's sweep: "expected u64"
    /// named nothing).
    #[test]
    fn a_json_type_error_finds_its_key() {
        let text = "{\"smp\": {\n  \"cores\": \"4\"}}";
        let e = serde_json::from_str::<MachineFile>(text).unwrap_err();
        assert_eq!(
            json_key_before(text, e.line(), e.column()).as_deref(),
            Some("cores")
        );
    }

    #[test]
    fn llc_names_parse() {
        assert_eq!(parse_llc("die"), Some(LlcScope::Die));
        assert_eq!(parse_llc("l3"), None);
    }

    fn from_toml(text: &str) -> Result<Machine, TopologyError> {
        let file: MachineFile = toml::from_str(text).map_err(|e| TopologyError::Parse {
            path: "t.toml".into(),
            reason: toml_message(text, &e),
        })?;
        machine_from_schema(file, "t")
    }

    #[test]
    fn costs_and_speed_keys_are_read() {
        let m = from_toml(
            "costs = \"arm-2013\"\n[smp]\ncores = 3\n[speed]\nsysbench = \"0:1024,1-2:504\"\n\"*\" = \"0-2:900\"\n",
        )
        .unwrap();
        assert_eq!(m.costs.as_deref(), Some("arm-2013"));
        assert_eq!(m.speed.get("sysbench"), Some(&[1024, 504, 504][..]));
        assert_eq!(m.speed.get("*"), Some(&[900, 900, 900][..]));
        let json: MachineFile =
            serde_json::from_str(r#"{"smp": {"cores": 2}, "speed": {"hackbench": "0-1:512"}}"#)
                .unwrap();
        let m = machine_from_schema(json, "j").unwrap();
        assert_eq!(m.speed.get("hackbench"), Some(&[512, 512][..]));
        assert!(m.costs.is_none());
    }

    #[test]
    fn bad_speed_entries_name_their_field() {
        for (text, needle) in [
            (
                "[smp]\ncores = 2\n[speed]\nsysbench = \"0:1024\"\n",
                "speed.sysbench",
            ),
            (
                "[smp]\ncores = 2\n[speed]\nsysbench = \"0-1:2000\"\n",
                "speed.sysbench",
            ),
            (
                "[smp]\ncores = 2\n[speed]\nSysbench = \"0-1:20\"\n",
                "speed.Sysbench",
            ),
            ("[smp]\ncores = 2\n[speed]\nsysbench = 3\n", "line 4"),
            ("costs = \"\"\n[smp]\ncores = 2\n", "costs"),
        ] {
            let e = from_toml(text).unwrap_err().to_string();
            assert!(e.contains(needle) && !e.contains('\n'), "{e}");
        }
    }

    #[test]
    fn cpufreq_tables_make_domains() {
        let opps =
            "opps = [{ khz = 800000, microvolt = 900000 }, { khz = 1600000, microvolt = 1100000 }]";
        let m = from_toml(&format!(
            "[smp]\nsockets = 2\ncores = 2\n[[cpufreq]]\ncpus = \"all\"\npolicy = \"package\"\ntransition_latency_ns = 10000\n{opps}\n"
        ))
        .unwrap();
        let spans: Vec<String> = m.cpufreq.iter().map(|d| d.cpus.to_list()).collect();
        assert_eq!(spans, vec!["0-1", "2-3"]);
        assert_eq!(m.cpufreq[1].max_khz(), 1_600_000);
        let m = from_toml(&format!(
            "[smp]\ncores = 3\n[[cpufreq]]\ncpus = \"0-2\"\npolicy = \"cpu\"\ntransition_latency_ns = 10000\n{opps}\n"
        ))
        .unwrap();
        assert_eq!(m.cpufreq.len(), 3);
        for (text, needle) in [
            ("cpus = \"0\"\ntransition_latency_ns = 1\nopps = [{ khz = 1 }]", "CPUs 1-2 are in no frequency domain"),
            ("cpus = \"0-2\"\npolicy = \"node\"\ntransition_latency_ns = 1\nopps = [{ khz = 1 }]", "cpufreq[0].policy"),
            ("cpus = \"0-7\"\ntransition_latency_ns = 1\nopps = [{ khz = 1 }]", "cpufreq[0].cpus"),
            ("cpus = \"all\"\ntransition_latency_ns = 1\nopps = []", "cpufreq[0].opps"),
            ("cpus = \"all\"\ntransition_latency_ns = 1\nopps = [{ khz = 2 }, { khz = 1 }]", "cpufreq[0].opps[1].khz"),
            ("cpus = \"all\"\ntransition_latency_ns = 1\nopps = [{ khz = 2, mv = 3 }]", "line 6"),
        ] {
            let e = from_toml(&format!("[smp]\ncores = 3\n[[cpufreq]]\n{text}\n"))
                .unwrap_err()
                .to_string();
            assert!(e.contains(needle) && !e.contains('\n'), "{e}");
        }
    }

    #[test]
    fn toml_errors_are_one_line_with_the_field() {
        let text = "arch = \"x86\"\n[smp]\ncores = 4\nbogus = 1\n";
        let e = toml::from_str::<MachineFile>(text).unwrap_err();
        let msg = toml_message(text, &e);
        assert!(
            !msg.contains('\n') && msg.contains("bogus") && msg.contains("line 4"),
            "{msg}"
        );
    }
}
