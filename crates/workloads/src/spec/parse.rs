//! Reading a [`WorkloadSpec`] from text: the key form `NAME[:key=value,...]`, or a
//! tool's own command line, which [`crate::cmdline`] reads. It is apart from the
//! specification itself because the command-line reader builds specifications: the
//! parser sits above both, and neither refers back to it.

use fairsim_engine::error::{EngineError, SpecError};

use super::WorkloadSpec;
use crate::cmdline;
use crate::{affinity, attrs};

impl WorkloadSpec {
    /// Parses `NAME[:key=value,...]`, or a tool's own command line (`schbench -m 2 -t 4`)
    /// when [`cmdline::is_command_line`] says it is one.
    pub fn parse(spec: &str) -> Result<WorkloadSpec, EngineError> {
        if cmdline::is_command_line(spec) {
            return cmdline::parse(spec);
        }
        let (name, body) = spec.split_once(':').unwrap_or((spec, ""));
        let Some(row) = crate::tools::by_name(name.trim()) else {
            return Err(SpecError::UnknownWorkload {
                got: name.trim().to_string(),
                allowed: crate::tools::workload_names(),
            }
            .into());
        };
        let tool = row.name;
        // An empty item (`g=1,,l=10`, a trailing comma) is more likely a key lost in
        // editing than nothing, and the items are split apart below without a trace of it.
        if !body.trim().is_empty() && body.split(',').any(|item| item.trim().is_empty()) {
            return Err(SpecError::Usage {
                tool: tool.to_string(),
                detail: format!("an empty item in '{}'", body.trim()),
                allowed: "key=value items separated by single commas".into(),
            }
            .into());
        }
        // Every tool takes cpus=LIST; the rest of the options are the tool's own.
        let (body, cpus) = affinity::split_cpus(tool, body)?;
        // ... and mem=PERMILLE, the memory intensity of its work.
        let (body, mem) = attrs::split_mem(tool, &body)?;
        // ... and uclamp=MIN..MAX, the tasks' utilization clamps.
        let (body, uclamp) = attrs::split_uclamp(tool, &body)?;
        // ... and nice=N.
        let (body, nice) = attrs::split_nice(tool, &body)?;
        if nice.is_some() && tool == "rtapp" {
            return Err(SpecError::key(
                "rtapp",
                "nice",
                "not for an rt-app file, whose tasks have their own; allowed: each task's \"priority\" key",
            )
            .into());
        }
        // ... and policy=normal|batch|idle.
        let (body, policy) = attrs::split_policy(tool, &body)?;
        if policy.is_some() && tool == "rtapp" {
            return Err(SpecError::key(
                "rtapp",
                "policy",
                "not for an rt-app file, whose tasks have their own; allowed: each task's \"policy\" key",
            )
            .into());
        }
        // ... and cgroup=/PATH.
        let (body, cgroup) = attrs::split_cgroup(tool, &body)?;
        let body = body.as_str();
        let workload = (row.parse)(body)?;
        Ok(WorkloadSpec {
            workload,
            cpus,
            mem,
            uclamp,
            nice,
            policy,
            cgroup,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::Workload;

    /// A tool's key form gives a specification that names the same tool, with the
    /// tool's row's memory default.
    #[test]
    fn each_rows_parser_builds_its_own_tool() {
        for t in crate::tools::TOOLS.iter().filter(|t| t.name != "rtapp") {
            // cyclictest and tbench have no default for a required option.
            let text = match t.name {
                "cyclictest" => "cyclictest:n",
                "tbench" => "tbench:clients=2",
                name => name,
            };
            let spec = crate::WorkloadSpec::parse(text).unwrap();
            assert_eq!(spec.name(), t.name);
            assert_eq!(spec.mem_intensity(), t.mem_intensity, "{}", t.name);
        }
    }

    /// Issue 50 row 9: a key given twice (under either of its names) and an empty item
    /// are refused, where the last value and nothing were taken without a word; a
    /// command line's repeated option keeps its last value, as the tool's getopt does.
    #[test]
    fn repeated_keys_and_empty_items_are_refused() {
        for (spec, want) in [
            (
                "hackbench:g=1,l=10,g=2",
                "hackbench: g: given twice; allowed: each key once",
            ),
            (
                "hackbench:groups=1,g=2",
                "hackbench: g: given twice; allowed: each key once",
            ),
            (
                "hackbench:g=1,,l=10",
                "hackbench: an empty item in 'g=1,,l=10'",
            ),
            ("hackbench:g=1,", "hackbench: an empty item in 'g=1,'"),
        ] {
            let e = WorkloadSpec::parse(spec).unwrap_err().to_string();
            assert!(e.contains(want), "{spec}: {e}");
        }
        assert!(WorkloadSpec::parse("hackbench:").is_ok());
        assert_eq!(
            WorkloadSpec::parse("hackbench -g 1 -g 2 -l 10").unwrap(),
            WorkloadSpec::parse("hackbench:g=2,l=10").unwrap()
        );
    }

    #[test]
    fn parses_the_issue_examples() {
        for s in [
            "schbench:m=6,t=24,c=30ms,s=30ms",
            "hackbench:g=4,l=1000,pipe",
            "nanosleep:tasks=224,sleep=1us",
            "sysbench-cpu:threads=5",
            "cyclictest:t=2,a,n,D=10",
            "schbench",
        ] {
            WorkloadSpec::parse(s).unwrap_or_else(|e| panic!("{s}: {e}"));
        }
    }

    #[test]
    fn schbench_2016_ignores_m_as_the_binary_did() {
        let Ok(WorkloadSpec {
            workload: Workload::Schbench(old),
            ..
        }) = WorkloadSpec::parse("schbench:version=2016,m=6,t=24,c=30ms,s=30ms")
        else {
            panic!("parse");
        };
        assert_eq!(old.message_threads, 2);
        assert_eq!(old.nr_tasks(), 1 + 2 * 25);
        assert_eq!(old.notes().len(), 1);
        assert!(old.notes()[0].contains("ignores m=6"), "{:?}", old.notes());
        assert!(old
            .canonical()
            .starts_with("schbench:version=2016,m=2,t=24"));
        let Ok(WorkloadSpec {
            workload: Workload::Schbench(new),
            ..
        }) = WorkloadSpec::parse("schbench:m=6,t=24")
        else {
            panic!("parse");
        };
        assert_eq!(new.message_threads, 6);
        assert!(new.notes().is_empty());
        // Naming the 2016 default is not worth a note.
        let Ok(w) = WorkloadSpec::parse("schbench:version=2016,m=2") else {
            panic!("parse");
        };
        assert!(w.notes().is_empty());
        let e = WorkloadSpec::parse("schbench:version=2019")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("version: invalid value '2019'") && e.contains("2016"),
            "{e}"
        );
    }

    #[test]
    fn rejects_unknown_names_keys_and_values() {
        let e = WorkloadSpec::parse("fio:x=1").unwrap_err().to_string();
        assert!(
            e.contains("unknown workload 'fio'") && e.contains("schbench"),
            "{e}"
        );
        let e = WorkloadSpec::parse("schbench:q=1").unwrap_err().to_string();
        assert!(e.contains("unknown key 'q'"), "{e}");
        let e = WorkloadSpec::parse("schbench:c=-5ms")
            .unwrap_err()
            .to_string();
        assert!(e.contains("c: invalid value '-5ms'"), "{e}");
        assert!(WorkloadSpec::parse("hackbench:g=0").is_err());
        assert!(WorkloadSpec::parse("sysbench-cpu:threads=x").is_err());
    }
}
