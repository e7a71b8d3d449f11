//! The metrics table ([`fairsim_output::metrics`]) against real runs: every metric a run
//! reports is one [`metric_names`] predicted before the run (so `--until` never refuses
//! a metric the table would show, nor accepts one it never will), in the predicted
//! order, and every tool with metrics reports at least one of its own.

use fairsim_output::metrics::{metric_names, run_metrics};
use fairsim_workloads::tools::TOOLS;

use crate::common::spec;

/// One short run of each tool that has metrics, on a 2-node machine (so the memory
/// model's rows are there too), with its metrics checked against the prediction.
#[test]
fn every_reported_metric_was_predicted_in_order() {
    let cases = [
        "schbench:m=1,t=2,r=1",
        "hackbench:g=1,l=5",
        "nanosleep:tasks=4",
        "sysbench-cpu:threads=2,events=40",
        "cyclictest:t=2,n,l=20",
        "forkbench:cmds=10",
        "netperf:t=TCP_RR,instances=2,l=1",
        "tbench:t=1,clients=2",
    ];
    for w in cases {
        let s = spec("numa-2s4c2t", &[w], 300, 1);
        let tool = TOOLS
            .iter()
            .find(|t| t.name == s.workloads[0].name())
            .unwrap();
        let depth = (0..s.machine.nr_cpus())
            .map(|c| {
                fairsim_topology::build_sched_domains(&s.machine, s.build)
                    .unwrap()
                    .domains_of(c)
                    .count()
            })
            .max()
            .unwrap();
        let names = metric_names(
            s.workloads.iter().map(|w| w.name()),
            depth,
            std::iter::empty(),
        );
        let result = fairsim_workloads::run(&s, &mut |_, _| {}).unwrap();
        let got = run_metrics(&s, &result, None);
        let mut at = 0;
        for (name, _, _) in &got {
            let Some(i) = names[at..].iter().position(|n| n == name) else {
                panic!(
                    "{w}: {name} reported but not predicted after {:?}",
                    names.get(at)
                );
            };
            at += i + 1;
        }
        assert!(
            got.iter()
                .any(|(n, _, _)| tool.metrics.iter().any(|m| m.name == n)),
            "{w}: none of {}'s own metrics in {got:?}",
            tool.name
        );
    }
}
