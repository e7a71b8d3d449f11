//! The per-task attribute keys every workload takes, as the launcher a user would start
//! the tool under gives them to all its tasks: `uclamp=MIN..MAX` (`uclampset -m MIN -M
//! MAX`; the scheduler side is `fairsim_balance::uclamp`), `nice=N` (`nice -n N`),
//! `policy=normal|batch|idle` (`chrt -o|-b|-i 0`) and `cgroup=/PATH` (`cgexec -g
//! cpu:/PATH`; the scheduler side is `fairsim_balance::group`), and `mem=PERMILLE`, the
//! memory intensity of the tasks' work ([`fairsim_engine::memory`]).

use fairsim_engine::error::{EngineError, SpecError};

/// Takes `KEY=VALUE` out of a workload's option list: the rest of the list and the value
/// (trimmed), refusing the key given twice (`form` is its spelling for the error).
fn take_key(
    tool: &str,
    body: &str,
    key: &str,
    form: &str,
) -> Result<(String, Option<String>), EngineError> {
    let mut rest: Vec<&str> = Vec::new();
    let mut value = None;
    for item in body.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        match item.split_once('=') {
            Some((k, v)) if k.trim() == key => {
                if value.is_some() {
                    return Err(SpecError::given_twice(tool, key, format!("one {form}")).into());
                }
                value = Some(v.trim().to_string());
            }
            _ => rest.push(item),
        }
    }
    Ok((rest.join(","), value))
}

/// Takes `uclamp=MIN..MAX` out of a workload's option list: both clamps in 0..=1024 and
/// the minimum not above the maximum, as `uclamp_validate` accepts them.
pub(crate) fn split_uclamp(
    tool: &str,
    body: &str,
) -> Result<(String, Option<(u32, u32)>), EngineError> {
    let (rest, value) = take_key(tool, body, "uclamp", "uclamp=MIN..MAX")?;
    let Some(v) = value else {
        return Ok((rest, None));
    };
    let bad = || {
        SpecError::invalid(
            tool,
            "uclamp",
            &v,
            "MIN..MAX, each 0 to 1024 and MIN not above MAX (uclamp_validate)",
        )
    };
    let (lo, hi) = v.split_once("..").ok_or_else(bad)?;
    let lo: u32 = lo.trim().parse().map_err(|_| bad())?;
    let hi: u32 = hi.trim().parse().map_err(|_| bad())?;
    if lo > 1024 || hi > 1024 || lo > hi {
        return Err(bad().into());
    }
    Ok((rest, Some((lo, hi))))
}

/// Takes `policy=normal|batch|idle` out of a workload's option list: the fair class's
/// three policies, as `chrt -o 0`, `chrt -b 0` and `chrt -i 0` set them.
pub(crate) fn split_policy(
    tool: &str,
    body: &str,
) -> Result<(String, Option<fairsim_balance::Policy>), EngineError> {
    use fairsim_balance::Policy;
    let (rest, value) = take_key(tool, body, "policy", "policy=normal|batch|idle")?;
    let Some(v) = value else {
        return Ok((rest, None));
    };
    let p =
        match v.as_str() {
            "normal" | "other" => Policy::Normal,
            "batch" => Policy::Batch,
            "idle" => Policy::Idle,
            _ => return Err(SpecError::invalid(
                tool,
                "policy",
                &v,
                "normal, batch or idle (the fair class's SCHED_NORMAL, SCHED_BATCH and SCHED_IDLE)",
            )
            .into()),
        };
    Ok((rest, Some(p)))
}

/// Takes `nice=N` out of a workload's option list: -20 to 19, as `setpriority` takes it
/// (`nice -n N` clamps to that range; an explicit key is refused outside it).
pub(crate) fn split_nice(tool: &str, body: &str) -> Result<(String, Option<i32>), EngineError> {
    let (rest, value) = take_key(tool, body, "nice", "nice=N")?;
    let Some(v) = value else {
        return Ok((rest, None));
    };
    let n = v
        .parse::<i32>()
        .ok()
        .filter(|n| (-20..=19).contains(n))
        .ok_or_else(|| SpecError::invalid(tool, "nice", &v, "an integer from -20 to 19"))?;
    Ok((rest, Some(n)))
}

/// Takes `cgroup=/PATH` out of a workload's option list: the task group every task of
/// the workload runs in, as starting the tool from a shell in that cgroup does (children
/// inherit it, `sched_cgroup_fork`). The path is checked here; that it was declared is
/// checked with the run's groups (`Cgroups::resolve`).
pub(crate) fn split_cgroup(
    tool: &str,
    body: &str,
) -> Result<(String, Option<String>), EngineError> {
    let (rest, value) = take_key(tool, body, "cgroup", "cgroup=/PATH")?;
    let Some(v) = value else {
        return Ok((rest, None));
    };
    fairsim_engine::cgroup::check_path(&v).map_err(|why| {
        SpecError::invalid_because(
            tool,
            "cgroup",
            &v,
            why,
            fairsim_engine::cgroup::PATH_ALLOWED,
        )
    })?;
    Ok((rest, Some(v)))
}

/// Takes `mem=PERMILLE` out of a specification's body and returns the rest and the value.
pub(crate) fn split_mem(tool: &str, body: &str) -> Result<(String, Option<u32>), EngineError> {
    let mut rest: Vec<&str> = Vec::new();
    let mut mem = None;
    for item in body.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let Some((k, v)) = item.split_once('=') else {
            rest.push(item);
            continue;
        };
        if k.trim().trim_start_matches('-') != "mem" {
            rest.push(item);
            continue;
        }
        if mem.is_some() {
            return Err(SpecError::given_twice(tool, "mem", "one mem=PERMILLE").into());
        }
        match v.trim().parse::<u32>() {
            Ok(n) if u64::from(n) <= fairsim_engine::memory::MEM_SCALE => mem = Some(n),
            _ => {
                return Err(SpecError::invalid(
                    tool,
                    "mem",
                    v.trim(),
                    "an integer from 0 to 1000 (per mille of run time stalled on DRAM)",
                )
                .into())
            }
        }
    }
    Ok((rest.join(","), mem))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mem_is_taken_out_of_the_body_and_checked() {
        let (rest, m) = split_mem("hackbench", "g=2,mem=250,pipe").unwrap();
        assert_eq!((rest.as_str(), m), ("g=2,pipe", Some(250)));
        let (rest, m) = split_mem("hackbench", "g=2").unwrap();
        assert_eq!((rest.as_str(), m), ("g=2", None));
        for (body, want) in [
            ("mem=1001", "invalid value '1001'"),
            ("mem=x", "invalid value 'x'"),
            ("mem=1,mem=2", "given twice"),
        ] {
            let e = split_mem("hackbench", body).unwrap_err().to_string();
            assert!(e.contains(want) && e.contains("hackbench: mem:"), "{e}");
        }
    }
}
