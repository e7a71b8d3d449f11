//! The `uclamp=MIN..MAX` key every workload takes: its tasks' utilization clamps, as
//! starting the tool under `uclampset -m MIN -M MAX` gives them (the scheduler side is
//! `fairsim_balance::uclamp`).

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
