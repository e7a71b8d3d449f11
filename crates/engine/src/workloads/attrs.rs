//! The per-task attribute keys every workload takes, as the launcher a user would start
//! the tool under gives them to all its tasks: `uclamp=MIN..MAX` (`uclampset -m MIN -M
//! MAX`; the scheduler side is `fairsim_balance::uclamp`) and `nice=N` (`nice -n N`).

use crate::error::EngineError;

/// Takes `uclamp=MIN..MAX` out of a workload's option list: both clamps in 0..=1024 and
/// the minimum not above the maximum, as `uclamp_validate` accepts them.
pub(crate) fn split_uclamp(
    tool: &str,
    body: &str,
) -> Result<(String, Option<(u32, u32)>), EngineError> {
    let mut rest: Vec<&str> = Vec::new();
    let mut uclamp = None;
    let bad = |v: &str| {
        EngineError::Workload(format!(
            "{tool}: uclamp: invalid value '{v}'; allowed: MIN..MAX, each 0 to 1024 and MIN not above MAX (uclamp_validate)"
        ))
    };
    for item in body.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        match item.split_once('=') {
            Some((k, v)) if k.trim() == "uclamp" => {
                if uclamp.is_some() {
                    return Err(EngineError::Workload(format!(
                        "{tool}: uclamp: given twice; allowed: one uclamp=MIN..MAX"
                    )));
                }
                let v = v.trim();
                let (lo, hi) = v.split_once("..").ok_or_else(|| bad(v))?;
                let lo: u32 = lo.trim().parse().map_err(|_| bad(v))?;
                let hi: u32 = hi.trim().parse().map_err(|_| bad(v))?;
                if lo > 1024 || hi > 1024 || lo > hi {
                    return Err(bad(v));
                }
                uclamp = Some((lo, hi));
            }
            _ => rest.push(item),
        }
    }
    Ok((rest.join(","), uclamp))
}

/// Takes `nice=N` out of a workload's option list: -20 to 19, as `setpriority` takes it
/// (`nice -n N` clamps to that range; an explicit key is refused outside it).
pub(crate) fn split_nice(tool: &str, body: &str) -> Result<(String, Option<i32>), EngineError> {
    let mut rest: Vec<&str> = Vec::new();
    let mut nice = None;
    for item in body.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        match item.split_once('=') {
            Some((k, v)) if k.trim() == "nice" => {
                if nice.is_some() {
                    return Err(EngineError::Workload(format!(
                        "{tool}: nice: given twice; allowed: one nice=N"
                    )));
                }
                let v = v.trim();
                let n: i32 = v
                    .parse()
                    .ok()
                    .filter(|n| (-20..=19).contains(n))
                    .ok_or_else(|| {
                        EngineError::Workload(format!(
                            "{tool}: nice: invalid value '{v}'; allowed: an integer from -20 to 19"
                        ))
                    })?;
                nice = Some(n);
            }
            _ => rest.push(item),
        }
    }
    Ok((rest.join(","), nice))
}
