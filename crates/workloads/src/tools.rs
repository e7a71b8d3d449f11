//! The tools `--workload` takes, declared once: each tool's names, its key-form parser,
//! the programs whose command lines start it, its kind in a machine's speed table, the
//! memory intensity of its work, and the metrics `compare` and `sweep` read from its
//! report.
//!
//! Everything that used to name a tool by string (the key form's dispatch, the command
//! line's programs, the engine's speed kinds and memory defaults, compare's workload
//! metrics and `--until`'s list of them) reads [`TOOLS`] instead, so a new tool is its own
//! modules (the tool, its command line) plus one [`Tool`] row here and its
//! [`crate::Workload`] variant, whose matches the compiler asks for. The lists in error
//! messages ([`workload_names`], [`programs`], [`speed_kinds`]) are generated from the
//! rows, in the rows' order.

use fairsim_engine::error::EngineError;
use fairsim_engine::memory::DATA_TOOL_MEM;

use crate::cmdline::tool_parsers as cl;
use crate::cyclictest::Cyclictest;
use crate::forkbench::Forkbench;
use crate::hackbench::Hackbench;
use crate::nanosleep::Nanosleep;
use crate::netperf::Netperf;
use crate::rtapp::Rtapp;
use crate::schbench::Schbench;
use crate::spec::{Workload, WorkloadSpec};
use crate::sysbench::SysbenchCpu;
use crate::tbench::Tbench;

/// A tool's key-form parser: the body after `NAME:` (with the attributes every tool
/// takes, `cpus=`, `mem=` and the rest, already taken out).
pub type BodyParser = fn(&str) -> Result<Workload, EngineError>;

/// A program's command-line parser: the arguments after the program's name.
pub type ArgsParser = fn(&[String]) -> Result<Workload, EngineError>;

/// A program whose command line starts a tool.
#[derive(Debug, Clone, Copy)]
pub struct Program {
    /// The program's name, as the command line's first word has it (without a path).
    pub name: &'static str,
    /// How error messages list it (`perf bench sched messaging` for `perf`).
    pub shown: &'static str,
    /// Whether error messages list it; an alias (`rtapp` for `rt-app`) is not listed.
    pub listed: bool,
    /// Its parser.
    pub parse: ArgsParser,
}

/// How a metric is read from a tool's JSON report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scale {
    /// The value as the report has it.
    AsIs,
    /// Nanoseconds, shown in seconds.
    NsToS,
    /// A count over the run's window, shown per second.
    PerSecond,
}

/// One metric a tool adds to `compare`'s table and `sweep`'s point files.
#[derive(Debug, Clone, Copy)]
pub struct ToolMetric {
    /// The row's name.
    pub name: &'static str,
    /// Whether a higher value is better (the table's change sign and its mean: Hmean
    /// when higher is better, Amean otherwise).
    pub higher_is_better: bool,
    /// The key of the tool's JSON report it reads.
    pub key: &'static str,
    /// How the value is scaled.
    pub scale: Scale,
}

impl ToolMetric {
    /// The metric's value for a report, over a window of `secs` seconds, or `None` when
    /// the report has no such number.
    pub fn value(&self, report: &serde_json::Value, secs: f64) -> Option<f64> {
        let v = report.get(self.key)?.as_f64()?;
        Some(match self.scale {
            Scale::AsIs => v,
            Scale::NsToS => v / 1e9,
            Scale::PerSecond => v / secs,
        })
    }
}

/// One tool.
#[derive(Debug, Clone, Copy)]
pub struct Tool {
    /// Its name: the key form's `NAME`, [`crate::WorkloadSpec::name`], and reports'.
    pub name: &'static str,
    /// Other names the key form takes for it.
    pub aliases: &'static [&'static str],
    /// How [`workload_names`] lists it (`rtapp:FILE.json`).
    pub listed_as: &'static str,
    /// Its key-form parser.
    pub parse: BodyParser,
    /// The programs whose command lines start it.
    pub programs: &'static [Program],
    /// Its key in a machine's speed table, with the other names the table accepts for
    /// that key; `None` when a speed table cannot name it (it then runs at capacity,
    /// `*` included, as before speed tables knew it).
    pub speed: Option<(&'static str, &'static [&'static str])>,
    /// The memory intensity of its work, per mille, when `mem=` does not say
    /// ([`fairsim_engine::memory`] documents both values).
    pub mem_intensity: u32,
    /// The metrics it adds to `compare` and `sweep`, in the table's order.
    pub metrics: &'static [ToolMetric],
}

/// A lower-is-better metric read as it is.
const fn lower(name: &'static str, key: &'static str, scale: Scale) -> ToolMetric {
    ToolMetric {
        name,
        higher_is_better: false,
        key,
        scale,
    }
}

/// A higher-is-better metric.
const fn higher(name: &'static str, key: &'static str, scale: Scale) -> ToolMetric {
    ToolMetric {
        name,
        higher_is_better: true,
        key,
        scale,
    }
}

/// Every tool, in the order error messages list them.
pub const TOOLS: &[Tool] = &[
    Tool {
        name: "schbench",
        aliases: &[],
        listed_as: "schbench",
        parse: |b| Ok(Workload::Schbench(Schbench::parse(b)?)),
        programs: &[
            Program {
                name: "schbench",
                shown: "schbench",
                listed: true,
                parse: cl::schbench,
            },
            Program {
                name: "schbench@2016",
                shown: "schbench@2016",
                listed: true,
                parse: cl::schbench_2016,
            },
        ],
        speed: Some(("schbench", &[])),
        mem_intensity: 0,
        metrics: &[
            lower("Wakeup-50.0th-us", "wakeup_latency_pct50.0", Scale::AsIs),
            lower("Wakeup-90.0th-us", "wakeup_latency_pct90.0", Scale::AsIs),
            lower("Wakeup-99.0th-us", "wakeup_latency_pct99.0", Scale::AsIs),
            lower("Wakeup-99.9th-us", "wakeup_latency_pct99.9", Scale::AsIs),
        ],
    },
    Tool {
        name: "hackbench",
        aliases: &[],
        listed_as: "hackbench",
        parse: |b| Ok(Workload::Hackbench(Hackbench::parse(b)?)),
        programs: &[
            Program {
                name: "hackbench",
                shown: "hackbench",
                listed: true,
                parse: cl::hackbench,
            },
            Program {
                name: "perf",
                shown: "perf bench sched messaging",
                listed: true,
                parse: cl::perf_bench_messaging,
            },
        ],
        speed: Some(("hackbench", &[])),
        mem_intensity: DATA_TOOL_MEM,
        metrics: &[lower("time-s", "time_ns", Scale::NsToS)],
    },
    Tool {
        name: "nanosleep",
        aliases: &[],
        listed_as: "nanosleep",
        parse: |b| Ok(Workload::Nanosleep(Nanosleep::parse(b)?)),
        programs: &[],
        speed: Some(("nanosleep", &[])),
        mem_intensity: 0,
        metrics: &[higher("loops-per-s", "loops", Scale::PerSecond)],
    },
    Tool {
        name: "sysbench-cpu",
        aliases: &["sysbench"],
        listed_as: "sysbench-cpu",
        parse: |b| Ok(Workload::SysbenchCpu(SysbenchCpu::parse(b)?)),
        programs: &[Program {
            name: "sysbench",
            shown: "sysbench",
            listed: true,
            parse: cl::sysbench,
        }],
        speed: Some(("sysbench", &["sysbench-cpu"])),
        mem_intensity: 0,
        metrics: &[lower("total-time-s", "total_time_ns", Scale::NsToS)],
    },
    Tool {
        name: "cyclictest",
        aliases: &[],
        listed_as: "cyclictest",
        parse: |b| Ok(Workload::Cyclictest(Cyclictest::parse(b)?)),
        programs: &[Program {
            name: "cyclictest",
            shown: "cyclictest",
            listed: true,
            parse: cl::cyclictest,
        }],
        speed: Some(("cyclictest", &[])),
        mem_intensity: 0,
        // Over every thread's cycles, as mmtests reports cyclictest's latencies.
        metrics: &[
            lower("Lat-min-us", "latency_min_us", Scale::AsIs),
            lower("Lat-avg-us", "latency_avg_us", Scale::AsIs),
            lower("Lat-max-us", "latency_max_us", Scale::AsIs),
        ],
    },
    Tool {
        name: "forkbench",
        aliases: &[],
        listed_as: "forkbench",
        parse: |b| Ok(Workload::Forkbench(Forkbench::parse(b)?)),
        programs: &[],
        speed: None,
        mem_intensity: DATA_TOOL_MEM,
        // mmtests' gitsource block: the suite's elapsed time and its processes' CPU time
        // as /usr/bin/time splits it.
        metrics: &[
            lower("Elapsed-s", "elapsed_ns", Scale::NsToS),
            lower("User-s", "user_ns", Scale::NsToS),
            lower("System-s", "sys_ns", Scale::NsToS),
        ],
    },
    Tool {
        name: "netperf",
        aliases: &[],
        listed_as: "netperf",
        parse: |b| Ok(Workload::Netperf(Netperf::parse(b)?)),
        programs: &[Program {
            name: "netperf",
            shown: "netperf",
            listed: true,
            parse: cl::netperf,
        }],
        speed: None,
        mem_intensity: DATA_TOOL_MEM,
        // mmtests' netperf rows: the harmonic mean over the instances (per direction for
        // UDP_STREAM, whose sent and received rates differ by the drops), and the
        // machine's total.
        metrics: &[
            higher("Hmean-per-s", "hmean", Scale::AsIs),
            higher("Sum-per-s", "sum", Scale::AsIs),
            higher("Hmean-send-Mbit/s", "send_hmean", Scale::AsIs),
            higher("Hmean-recv-Mbit/s", "recv_hmean", Scale::AsIs),
            higher("Sum-send-Mbit/s", "send_sum", Scale::AsIs),
            higher("Sum-recv-Mbit/s", "recv_sum", Scale::AsIs),
        ],
    },
    Tool {
        name: "tbench",
        aliases: &[],
        listed_as: "tbench",
        parse: |b| Ok(Workload::Tbench(Tbench::parse(b)?)),
        programs: &[Program {
            name: "tbench",
            shown: "tbench",
            listed: true,
            parse: cl::tbench,
        }],
        speed: None,
        mem_intensity: DATA_TOOL_MEM,
        metrics: &[
            higher("Throughput-MB/s", "mb_per_s", Scale::AsIs),
            lower("max-latency-ms", "max_latency_ms", Scale::AsIs),
        ],
    },
    Tool {
        name: "rtapp",
        aliases: &["rt-app"],
        listed_as: "rtapp:FILE.json",
        // The body is the file's path (after any cpus=LIST was taken out).
        parse: |b| Ok(Workload::Rtapp(Rtapp::load(b.trim())?)),
        programs: &[
            Program {
                name: "rt-app",
                shown: "rt-app",
                listed: true,
                parse: cl::rtapp,
            },
            Program {
                name: "rtapp",
                shown: "rtapp",
                listed: false,
                parse: cl::rtapp,
            },
        ],
        speed: Some(("rtapp", &["rt-app"])),
        mem_intensity: 0,
        metrics: &[],
    },
];

impl WorkloadSpec {
    /// The memory intensity of the workload's work, per mille: `mem=` or its tool's
    /// default (its row of [`TOOLS`]). Here rather than in `spec`, which the rows name.
    pub fn mem_intensity(&self) -> u32 {
        self.mem
            .unwrap_or_else(|| by_name(self.name()).map_or(0, |t| t.mem_intensity))
    }
}

/// The tool named `name` (its name or an alias of the key form).
pub fn by_name(name: &str) -> Option<&'static Tool> {
    TOOLS
        .iter()
        .find(|t| t.name == name || t.aliases.contains(&name))
}

/// The tool and program a command line's program name starts.
pub fn by_program(program: &str) -> Option<(&'static Tool, &'static Program)> {
    TOOLS.iter().find_map(|t| {
        t.programs
            .iter()
            .find(|p| p.name == program)
            .map(|p| (t, p))
    })
}

/// The workloads `--workload` accepts, for error messages.
pub fn workload_names() -> String {
    TOOLS
        .iter()
        .map(|t| t.listed_as)
        .collect::<Vec<_>>()
        .join(", ")
}

/// The programs a command line may start with, for error messages.
pub fn programs() -> String {
    TOOLS
        .iter()
        .flat_map(|t| t.programs.iter())
        .filter(|p| p.listed)
        .map(|p| p.shown)
        .collect::<Vec<_>>()
        .join(", ")
}

/// The key of every workload without an entry of its own in a speed table.
pub const ANY_KIND: &str = "*";

/// The key that a workload kind (a speed key, a tool name or an alias, or `*`) has in a
/// speed table, or `None` when it names no workload a speed table may name.
pub fn speed_key(kind: &str) -> Option<&'static str> {
    if kind == ANY_KIND {
        return Some(ANY_KIND);
    }
    TOOLS.iter().find_map(|t| {
        let (key, others) = t.speed?;
        (kind == key || kind == t.name || others.contains(&kind)).then_some(key)
    })
}

/// What a speed table key may be, for error messages.
pub fn speed_kinds() -> String {
    let mut kinds: Vec<String> = TOOLS
        .iter()
        .filter_map(|t| {
            let (key, others) = t.speed?;
            Some(if others.is_empty() {
                key.to_string()
            } else {
                format!("{key} ({})", others.join(", "))
            })
        })
        .collect();
    kinds.push("or * for every workload without its own entry".to_string());
    kinds.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every row's names lead back to the row, and no name is taken twice, so the
    /// dispatches that read the rows cannot pick the wrong tool.
    #[test]
    fn names_are_unique_and_lead_back() {
        let mut seen: Vec<&str> = Vec::new();
        for t in TOOLS {
            for n in std::iter::once(&t.name).chain(t.aliases) {
                assert!(!seen.contains(n), "{n} twice");
                seen.push(n);
                assert_eq!(by_name(n).map(|x| x.name), Some(t.name));
            }
            for p in t.programs {
                assert_eq!(by_program(p.name).map(|(x, _)| x.name), Some(t.name));
            }
        }
        assert!(by_name("nosuchtool").is_none());
    }

    /// The speed table's keys and aliases fold as the engine's table did: the tool's
    /// names map to its key, tools without a key have none, and `*` is its own key.
    #[test]
    fn speed_keys_fold_aliases() {
        assert_eq!(speed_key("sysbench-cpu"), Some("sysbench"));
        assert_eq!(speed_key("sysbench"), Some("sysbench"));
        assert_eq!(speed_key("rt-app"), Some("rtapp"));
        assert_eq!(speed_key("*"), Some("*"));
        assert_eq!(speed_key("netperf"), None);
        assert_eq!(speed_key("bogus"), None);
        assert_eq!(
            speed_kinds(),
            "schbench, hackbench, nanosleep, sysbench (sysbench-cpu), cyclictest, \
             rtapp (rt-app), or * for every workload without its own entry"
        );
    }

    /// The lists in error messages are the rows' names in the rows' order.
    #[test]
    fn message_lists_follow_the_rows() {
        assert_eq!(
            workload_names(),
            "schbench, hackbench, nanosleep, sysbench-cpu, cyclictest, forkbench, netperf, tbench, rtapp:FILE.json"
        );
        assert_eq!(
            programs(),
            "schbench, schbench@2016, hackbench, perf bench sched messaging, sysbench, cyclictest, netperf, tbench, rt-app"
        );
    }

    /// The memory defaults engine's memory model documents: no DRAM stalls for the
    /// compute loops, the perf top-down threshold for the tools that move data.
    #[test]
    fn compute_loops_touch_no_dram_and_data_tools_sit_at_the_threshold() {
        for t in TOOLS {
            let want = match t.name {
                "nanosleep" | "sysbench-cpu" | "schbench" | "cyclictest" | "rtapp" => 0,
                _ => DATA_TOOL_MEM,
            };
            assert_eq!(t.mem_intensity, want, "{}", t.name);
        }
    }

    /// A metric reads its key and scales it; a missing key gives no value.
    #[test]
    fn metrics_read_and_scale_their_key() {
        let report = serde_json::json!({"time_ns": 2.5e9, "loops": 300});
        let hack = by_name("hackbench").unwrap().metrics[0];
        assert_eq!(hack.value(&report, 1.0), Some(2.5));
        let loops = by_name("nanosleep").unwrap().metrics[0];
        assert_eq!(loops.value(&report, 2.0), Some(150.0));
        assert_eq!(
            by_name("tbench").unwrap().metrics[0].value(&report, 1.0),
            None
        );
    }
}
