//! Workloads, named and parametrised like the real tools and compiled to the engine's
//! behaviour IR; and runs: a scenario resolved to a run specification ([`resolve`],
//! [`scenario`]), built into a world and run ([`run`]).
//!
//! This crate sits on the engine and never the reverse: a tool's programs use the IR's
//! generic operations, and what only the tool does goes through the engine's one hook
//! ([`fairsim_engine::hook::WorkloadModel`], implemented here by rt-app's, cyclictest's
//! and tbench's models). A report reads its workload's model and tasks back from the
//! finished world.
//!
//! A specification is `NAME:key=value,...` with the tool's own option letters or long
//! names as keys (`schbench:m=6,t=24,c=30ms,s=30ms`, `hackbench:g=4,l=1000,pipe`,
//! `nanosleep:tasks=224,sleep=1us`, `sysbench-cpu:threads=5`, `cyclictest:t=2,a,n,D=10`,
//! `netperf:t=TCP_RR,instances=224,l=100`, `tbench:t=100,clients=224`), or the tool's own
//! command line (`schbench -m 6 -t 24`, `hackbench -g 4 -l 1000 -p`; see [`cmdline`]).
//!
//! The modules depend one way. The tools (`schbench`, `hackbench`, ...) use only the
//! vocabulary every tool shares, in leaf modules that name no tool: `keys` (the
//! `key=value` body), `tasks` (adding programs and tasks to a blueprint) and `report`
//! ([`WorkloadReport`]). `spec` holds [`WorkloadSpec`] and [`Workload`] and dispatches
//! over the tools; `spec::parse` reads a specification from text, above both the tools
//! and [`cmdline`]. This root only declares the modules and re-exports their items.

mod affinity;
mod attrs;
pub mod cgroups;
pub mod cmdline;
mod cyclictest;
mod cyclictest_stats;
mod forkbench;
mod forkbench_stats;
mod hackbench;
mod keys;
mod nanosleep;
mod net_pairs;
mod netperf;
mod report;
pub mod resolve;
mod rtapp;
mod rtapp_json;
mod rtapp_log;
mod rtapp_pass;
mod rtapp_report;
mod rtapp_sched;
mod rtapp_stats;
pub mod run;
pub mod scenario;
mod schbench;
mod spec;
pub mod speed;
mod sysbench;
mod tasks;
mod tbench;
pub mod tbench_mix;
pub mod tbench_stats;
pub mod tools;

pub use affinity::CpuList;
pub use cyclictest::{Affinity, Cyclictest};
pub use cyclictest_stats::{calcdiff, CyclicCall, CyclicRt, CyclicStep, CyclicThread};
pub use forkbench::{Forkbench, PIPE_COPY_NS_PER_KIB};
pub use forkbench_stats::{cputime_adjust, exp2_q16, log2_q16, Cputime, WorkDist};
pub use hackbench::Hackbench;
pub use nanosleep::Nanosleep;
pub use netperf::{hmean, Netperf, NetperfTest};
pub use report::WorkloadReport;
pub use rtapp::{RtEvent, RtPhase, RtTask, Rtapp};
pub use rtapp_log::{
    Activation, ActivationLog, PassEnd, ThreadLog, FILE_TOTAL, JSON_PER_THREAD, JSON_TOTAL,
};
pub use rtapp_pass::PhaseAcc;
pub use rtapp_stats::{Periodic, PeriodicClock, PhaseRows, RtCall, RtPoint, UsDist};
pub use run::{
    check_machine, default_duration, estimate_json_memory, estimate_memory, estimate_run_memory,
    prepare, run, RunResult, RunSpec,
};
pub use schbench::{Schbench, SchbenchVersion, SCHBENCH_2016_MESSAGE_THREADS};
pub use spec::{Workload, WorkloadSpec};
pub use sysbench::SysbenchCpu;
pub use tbench::{fmt_g, Tbench};
