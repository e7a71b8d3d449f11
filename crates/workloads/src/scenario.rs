//! Scenario files: a TOML file holding the same settings as `fairsim run`'s options.
//!
//! ```toml
//! topology = "2s24c2t"            # or smp = "...", numa_distance = "...", machine = "file"
//! workload = ["schbench:m=6,t=24,c=30ms,s=30ms"]
//! kernel = "6.12"                 # or 6.5, 4.16, 4.15, 4.5, 3.9 (--kernel)
//! features = "NO_SIS_UTIL"        # writes to that kernel's features file
//! duration = "30s"
//! seed = 42
//! hz = 250
//! timer_slack = "50us"
//! timer_expiry = "hard"
//! cpuidle = "menu"
//! governor = "schedutil"          # cpufreq governor, on a machine with frequency domains
//! schedstat = "schedstat.txt"
//! schedstat_version = 16
//! json = "run.json"
//! costs = "arm-2013"              # the cost table (--costs); [cost] overrides go on top
//! speed = ["sysbench=0-1:1024,2-4:504"]   # speed table entries (--speed)
//! cpusets = ["0-9,20-29"]         # exclusive cpuset partitions (--cpuset)
//! [cost]
//! context_switch = "2us"
//! [sysctl]                        # tunables the kernel kept in /proc/sys/kernel (--sysctl)
//! "kernel.sched_nr_migrate" = 8   # (up to 4.16; kernel.sched_child_runs_first on 6.5 too)
//! [debugfs]                       # ... and in /sys/kernel/debug/sched (--debugfs; 6.5, 6.12)
//! migration_cost_ns = 250000
//! [cgroup."/a"]                   # a task group (--cgroup '/a:cpu.weight=200'; 6.12)
//! "cpu.weight" = 200
//! ```
//!
//! A key of two words may be spelt with a hyphen as well (`idle-states`), as `fairsim
//! run`'s options and sweep plans spell it.
//!
//! Command-line options override the file's values; `workload` entries of both are run.
//! The tunable writes of both apply, the file's first (in key order), then the options'.
//! So do the cgroup declarations: the file's tables in path order, then `--cgroup`.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;

use fairsim_engine::error::{EngineError, ScenarioError};
pub use fairsim_engine::tunable::{tunable_writes, TunableValue};

/// The contents of a scenario file. Every field is optional.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// A preset name (`--topology`).
    pub topology: Option<String>,
    /// A qemu `-smp` spec (`--smp`).
    pub smp: Option<String>,
    /// NUMA distances for `smp` (`--numa-distance`).
    #[serde(alias = "numa-distance")]
    pub numa_distance: Option<String>,
    /// A machine file (`--machine`), relative to the scenario file.
    pub machine: Option<String>,
    /// Workload specifications (`--workload`).
    #[serde(default)]
    pub workload: Vec<String>,
    /// The kernel whose scheduler runs (`--kernel`).
    pub kernel: Option<String>,
    /// Feature writes (`--features`), to the kernel's features file.
    pub features: Option<String>,
    /// Run length (`--duration`).
    pub duration: Option<String>,
    /// Seed (`--seed`).
    pub seed: Option<u64>,
    /// Tick rate (`--hz`).
    pub hz: Option<u32>,
    /// util_est form (`--util-est`).
    #[serde(alias = "util-est")]
    pub util_est: Option<String>,
    /// Launching CPU (`--launch-cpu`).
    #[serde(alias = "launch-cpu")]
    pub launch_cpu: Option<String>,
    /// Timer slack (`--timer-slack`).
    #[serde(alias = "timer-slack")]
    pub timer_slack: Option<String>,
    /// Timer expiry point (`--timer-expiry`).
    #[serde(alias = "timer-expiry")]
    pub timer_expiry: Option<String>,
    /// cpuidle governor (`--cpuidle`).
    pub cpuidle: Option<String>,
    /// CPU idle states (`--idle-states`).
    #[serde(alias = "idle-states")]
    pub idle_states: Option<String>,
    /// cpufreq governor (`--governor`).
    pub governor: Option<String>,
    /// Run-to-run noise (`--noise`).
    pub noise: Option<String>,
    /// Measurement window start (`--warmup`).
    pub warmup: Option<String>,
    /// schedstat output file (`--schedstat`).
    pub schedstat: Option<String>,
    /// schedstat version (`--schedstat-version`).
    #[serde(alias = "schedstat-version")]
    pub schedstat_version: Option<u32>,
    /// JSON output file (`--json`).
    pub json: Option<String>,
    /// The cost table the overrides apply to (`--costs`).
    pub costs: Option<String>,
    /// Speed table entries, `KIND=LIST:SPEED,...` each (`--speed`).
    #[serde(default)]
    pub speed: Vec<String>,
    /// Exclusive cpuset partitions, a CPU list each (`--cpuset`).
    #[serde(default)]
    pub cpusets: Vec<String>,
    /// Cost overrides (`--cost name=value`).
    #[serde(default)]
    pub cost: BTreeMap<String, String>,
    /// sysctl writes (`--sysctl kernel.NAME=V`): `"kernel.sched_nr_migrate" = 8`, or
    /// `kernel.sched_nr_migrate = 8` (a dotted key, which TOML reads as a nested table).
    #[serde(default)]
    pub sysctl: BTreeMap<String, TunableValue>,
    /// debugfs writes (`--debugfs NAME=V`): `migration_cost_ns = 0`.
    #[serde(default)]
    pub debugfs: BTreeMap<String, TunableValue>,
    /// Task groups (`--cgroup`): `[cgroup."/a"]` tables of cpu controller writes,
    /// `"cpu.weight" = 200` (quoted: a bare `cpu.weight` is a dotted key, read the same).
    #[serde(default)]
    pub cgroup: BTreeMap<String, BTreeMap<String, TunableValue>>,
}

/// The largest scenario file read: a scenario is a page of settings, so a megabyte leaves
/// room for long workload lists while refusing a path that names something else.
pub const MAX_SCENARIO_BYTES: u64 = 1 << 20;

/// The keys a scenario takes, for the errors.
const SCENARIO_KEYS: &str = "topology, smp, numa_distance, machine, workload, kernel, features, duration, seed, hz, util_est, launch_cpu, timer_slack, timer_expiry, cpuidle, idle_states, governor, noise, warmup, schedstat, schedstat_version, json, costs, speed, cpusets, [cost], [sysctl], [debugfs], [cgroup.\"/PATH\"] (a key of two words may also be spelt with a hyphen, as run's option and a sweep plan spell it: idle-states)";

impl Scenario {
    /// Parses scenario text.
    pub fn parse(text: &str) -> Result<Scenario, EngineError> {
        let scenario: Scenario = toml::from_str(text).map_err(|e| {
            let message = without_serde_list(e.message());
            // A value of the wrong type is reported at its span: name the key there, so
            // the message says which of the file's keys to change.
            let message = match e.span().and_then(|span| key_at(text, span.start)) {
                Some((line, key)) => format!("line {line}, {key}: {message}"),
                None => message,
            };
            EngineError::Scenario(ScenarioError::Syntax {
                message,
                allowed: SCENARIO_KEYS,
            })
        })?;
        scenario.check_machine_keys()?;
        Ok(scenario)
    }

    /// Refuses machine keys that contradict each other, as the command line refuses
    /// `--topology` with `--smp`: one of them would otherwise win without a word.
    fn check_machine_keys(&self) -> Result<(), EngineError> {
        let given: Vec<&'static str> = [
            ("topology", self.topology.is_some()),
            ("smp", self.smp.is_some()),
            ("machine", self.machine.is_some()),
        ]
        .iter()
        .filter(|(_, set)| *set)
        .map(|(k, _)| *k)
        .collect();
        if given.len() > 1 {
            return Err(ScenarioError::MachineTwice { given }.into());
        }
        if self.numa_distance.is_some() && self.smp.is_none() {
            return Err(ScenarioError::NumaWithoutSmp.into());
        }
        Ok(())
    }

    /// Reads and parses a scenario file.
    pub fn load(path: &Path) -> Result<Scenario, EngineError> {
        let text =
            fairsim_topology::source::read_bounded(path, MAX_SCENARIO_BYTES).map_err(|e| {
                ScenarioError::Read {
                    path: path.display().to_string(),
                    why: e.to_string(),
                }
            })?;
        Scenario::parse(&text)
    }
}

/// serde's message without the list of fields it appends to an unknown one (`unknown
/// field `x`, expected one of ...`): the error's own list, [`SCENARIO_KEYS`], names the
/// tables as a user writes them and the hyphenated spellings, and one list is enough.
/// The line number (from 1) and the dotted key (`cost.context_switch`) of the
/// `key = value` line holding byte `at` of `text`, with the table header above it; `None`
/// when that line assigns no key.
fn key_at(text: &str, at: usize) -> Option<(usize, String)> {
    let before = text.get(..at)?;
    let start = before.rfind('\n').map_or(0, |i| i + 1);
    let line_no = before.matches('\n').count() + 1;
    let line = text[start..].lines().next()?;
    let (key, _) = line.split_once('=')?;
    let key = key.trim().trim_matches('"');
    if key.is_empty() || key.starts_with('[') {
        return None;
    }
    let table = text[..start]
        .lines()
        .rev()
        .map(str::trim)
        .find(|l| l.starts_with('[') && l.ends_with(']'))
        .map(|l| l.trim_matches(|c| c == '[' || c == ']').trim().to_string());
    Some(match table {
        Some(t) => (line_no, format!("{t}.{key}")),
        None => (line_no, key.to_string()),
    })
}

fn without_serde_list(message: &str) -> String {
    let one_line = message.replace('\n', " ");
    match one_line.find(", expected one of ") {
        Some(at) => one_line[..at].to_string(),
        None => one_line,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_of_the_wrong_type_names_its_key() {
        let e = Scenario::parse("workload = [\"hackbench\"]\n[cost]\ncontext_switch = 2\n")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("line 3, cost.context_switch: invalid type"),
            "{e}"
        );
        let e = Scenario::parse("seed = \"x\"\n").unwrap_err().to_string();
        assert!(e.contains("line 1, seed: invalid type"), "{e}");
    }

    #[test]
    fn parses_every_key_and_rejects_unknown_ones() {
        let s = Scenario::parse(
            "topology = \"2s24c2t\"\nworkload = [\"schbench\"]\nduration = \"2s\"\nseed = 3\n[cost]\ncontext_switch = \"2us\"\n",
        )
        .unwrap();
        assert_eq!(s.topology.as_deref(), Some("2s24c2t"));
        assert_eq!(s.workload, vec!["schbench".to_string()]);
        assert_eq!(s.seed, Some(3));
        assert_eq!(s.kernel, None);
        assert_eq!(
            s.cost.get("context_switch").map(String::as_str),
            Some("2us")
        );
        let s = Scenario::parse(
            "costs = \"arm-2013\"\nspeed = [\"sysbench=0:512\"]\n[cost]\nwakeup = \"1us\"\n",
        )
        .unwrap();
        assert_eq!(s.costs.as_deref(), Some("arm-2013"));
        assert_eq!(s.speed, vec!["sysbench=0:512".to_string()]);
        let s = Scenario::parse("kernel = \"4.15\"\nfeatures = \"NO_START_DEBIT\"\n").unwrap();
        assert_eq!(s.kernel.as_deref(), Some("4.15"));
        let e = Scenario::parse("bogus = 1").unwrap_err().to_string();
        assert!(e.starts_with("scenario: ") && e.contains("bogus"), "{e}");
    }

    /// Issue 50 row 8: run's and a sweep plan's spelling is read too, and an unknown key
    /// is refused with one list of the keys, which names every field.
    #[test]
    fn hyphenated_keys_are_read_and_unknown_ones_get_one_list() {
        let s = Scenario::parse("idle-states = \"spr,no-C6\"\nlaunch-cpu = \"0\"\n").unwrap();
        assert_eq!(s.idle_states.as_deref(), Some("spr,no-C6"));
        assert_eq!(s.launch_cpu.as_deref(), Some("0"));
        let raw = toml::from_str::<Scenario>("bogus = 1")
            .unwrap_err()
            .message()
            .to_string();
        let (_, fields) = raw.split_once("expected one of ").unwrap();
        for field in fields.split(", ") {
            // serde lists the hyphenated aliases too; the list names their fields.
            let field = field.trim().trim_matches('`').replace('-', "_");
            assert!(
                SCENARIO_KEYS.contains(&field),
                "{field} is not in SCENARIO_KEYS"
            );
        }
        let e = Scenario::parse("bogus = 1").unwrap_err().to_string();
        assert!(!e.contains("expected one of"), "{e}");
        assert_eq!(e.matches("launch_cpu").count(), 1, "{e}");
    }

    #[test]
    fn tunable_tables_flatten_dotted_keys() {
        let s = Scenario::parse(
            "[sysctl]\nkernel.sched_nr_migrate = 8\n\"kernel.sched_latency_ns\" = \"12000000\"\n[debugfs]\nmigration_cost_ns = 0\n",
        )
        .unwrap();
        assert_eq!(
            tunable_writes(&s.sysctl),
            [
                "kernel.sched_latency_ns=12000000",
                "kernel.sched_nr_migrate=8"
            ]
        );
        assert_eq!(tunable_writes(&s.debugfs), ["migration_cost_ns=0"]);
        assert!(Scenario::parse("[debugfs]\nnr_migrate = [1]\n").is_err());
    }

    #[test]
    fn cgroup_tables_hold_their_writes() {
        let s = Scenario::parse(
            "[cgroup.\"/a\"]\n\"cpu.weight\" = 200\n[cgroup.\"/a/b\"]\ncpu.weight.nice = -3\n[cgroup.\"/c\"]\n",
        )
        .unwrap();
        let writes: Vec<(&str, Vec<String>)> = s
            .cgroup
            .iter()
            .map(|(p, t)| (p.as_str(), tunable_writes(t)))
            .collect();
        assert_eq!(
            writes,
            [
                ("/a", vec!["cpu.weight=200".to_string()]),
                ("/a/b", vec!["cpu.weight.nice=-3".to_string()]),
                ("/c", vec![]),
            ]
        );
        let e = Scenario::parse("[cgroup]\n\"/a\" = 5\n")
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("scenario: ") && e.contains("[cgroup.\"/PATH\"]"),
            "{e}"
        );
    }

    #[test]
    fn contradicting_machine_keys_are_refused() {
        for (text, needle) in [
            ("topology = \"tc2\"\nsmp = \"4\"", "topology and smp"),
            ("smp = \"4\"\nmachine = \"m.toml\"", "smp and machine"),
            (
                "topology = \"tc2\"\nnuma_distance = \"10\"",
                "numa_distance",
            ),
        ] {
            let e = Scenario::parse(text).unwrap_err().to_string();
            assert!(e.starts_with("scenario: ") && e.contains(needle), "{e}");
        }
        assert!(Scenario::parse("smp = \"4\"\nnuma_distance = \"10,20;20,10\"").is_ok());
    }
}
