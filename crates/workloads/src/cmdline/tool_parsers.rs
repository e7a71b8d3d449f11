//! Each program's command-line parser as [`crate::tools`] lists it: the arguments after
//! the program's name to a [`Workload`]. The grammars are in the tools' own modules
//! beside this one; these only name the program's variant.

use fairsim_engine::error::EngineError;

use super::{cyclictest as ct, hackbench as hb, netperf as np, rtapp as ra};
use super::{schbench as sb, sysbench as sy, tbench as tb};
use crate::spec::Workload;

/// `schbench` (the current schbench's grammar and defaults).
pub(crate) fn schbench(args: &[String]) -> Result<Workload, EngineError> {
    Ok(Workload::Schbench(sb::parse(false, args)?))
}

/// `schbench@2016`, seed 001's schbench.
pub(crate) fn schbench_2016(args: &[String]) -> Result<Workload, EngineError> {
    Ok(Workload::Schbench(sb::parse(true, args)?))
}

/// `hackbench` (rt-tests).
pub(crate) fn hackbench(args: &[String]) -> Result<Workload, EngineError> {
    Ok(Workload::Hackbench(hb::parse(args)?))
}

/// `perf bench sched messaging`, hackbench's port into perf.
pub(crate) fn perf_bench_messaging(args: &[String]) -> Result<Workload, EngineError> {
    Ok(Workload::Hackbench(hb::parse_perf(args)?))
}

/// `sysbench cpu`.
pub(crate) fn sysbench(args: &[String]) -> Result<Workload, EngineError> {
    Ok(Workload::SysbenchCpu(sy::parse(args)?))
}

/// `cyclictest` (rt-tests).
pub(crate) fn cyclictest(args: &[String]) -> Result<Workload, EngineError> {
    Ok(Workload::Cyclictest(ct::parse(args)?))
}

/// `netperf`.
pub(crate) fn netperf(args: &[String]) -> Result<Workload, EngineError> {
    Ok(Workload::Netperf(np::parse(args)?))
}

/// `tbench` (dbench 4.0).
pub(crate) fn tbench(args: &[String]) -> Result<Workload, EngineError> {
    Ok(Workload::Tbench(tb::parse(args)?))
}

/// `rt-app FILE.json`.
pub(crate) fn rtapp(args: &[String]) -> Result<Workload, EngineError> {
    Ok(Workload::Rtapp(ra::parse(args)?))
}
