//! The `/sys/kernel/debug/sched/domains/cpuN/domainM/*` files, as the ground truth's
//! `domains.txt` lists them: `cpuN/domainM/file: value`, files in name order, CPUs and
//! domains in natural order.

use std::fmt::Write;

use crate::domain::SchedDomains;

/// Renders every domain file of every CPU (`register_sd` in kernel/sched/debug.c).
///
/// Flag files print each name followed by a space; trailing blanks are trimmed as the
/// ground-truth collector does. `max_newidle_lb_cost` is a measured, decaying value in the
/// kernel; a freshly built hierarchy has 0 (`sd_init`), and the balance crate owns its
/// later values.
pub fn render_debugfs(sds: &SchedDomains) -> String {
    let mut out = String::new();
    for cpu in 0..sds.nr_cpus {
        for (k, id) in sds.domains_of(cpu).enumerate() {
            let sd = sds.domain(id);
            let head_flags = sds.group(sd.groups[0]).flags;
            let files: [(&str, String); 10] = [
                ("busy_factor", sd.busy_factor.to_string()),
                ("cache_nice_tries", sd.cache_nice_tries.to_string()),
                ("flags", sd.flags.debugfs_string()),
                ("groups_flags", head_flags.debugfs_string()),
                ("imbalance_pct", sd.imbalance_pct.to_string()),
                ("level", sd.level.to_string()),
                ("max_interval", sd.max_interval.to_string()),
                ("max_newidle_lb_cost", "0".to_string()),
                ("min_interval", sd.min_interval.to_string()),
                ("name", sd.name.to_string()),
            ];
            for (name, value) in files {
                let _ = writeln!(out, "cpu{cpu}/domain{k}/{name}: {}", value.trim_end());
            }
        }
    }
    out
}
