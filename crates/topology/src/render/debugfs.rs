//! The `/sys/kernel/debug/sched/domains/cpuN/domainM/*` files, as the ground truth's
//! `domains.txt` lists them: `cpuN/domainM/file: value`, files in name order, CPUs and
//! domains in natural order.

use std::fmt::Write;
use std::io;

use crate::domain::SchedDomains;

/// Renders every domain file of every CPU (`register_sd` in kernel/sched/debug.c).
///
/// Flag files print each name followed by a space; trailing blanks are trimmed as the
/// ground-truth collector does. `max_newidle_lb_cost` is a measured, decaying value in the
/// kernel; a freshly built hierarchy has 0 (`sd_init`), and the balance crate owns its
/// later values.
pub fn render_debugfs(sds: &SchedDomains) -> String {
    let mut out = String::new();
    // Appending to a String cannot fail.
    let _ = each_block(sds, |block| {
        out.push_str(block);
        Ok(())
    });
    out
}

/// Writes [`render_debugfs`]'s text to `out` as it goes, one CPU's files at a time.
pub fn write_debugfs<W: io::Write>(sds: &SchedDomains, mut out: W) -> io::Result<()> {
    each_block(sds, |block| out.write_all(block.as_bytes()))
}

/// Hands the listing to `emit` in order, one CPU's files at a time.
fn each_block(sds: &SchedDomains, mut emit: impl FnMut(&str) -> io::Result<()>) -> io::Result<()> {
    let mut out = String::new();
    for cpu in 0..sds.nr_cpus {
        out.clear();
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
        emit(&out)?;
    }
    Ok(())
}
