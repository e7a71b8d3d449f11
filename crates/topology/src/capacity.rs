//! Raw capacities normalised as the kernel's arch code does.
//!
//! A module of its own so that the presets and the spec's list parser can normalise raw
//! capacities without importing `machine` (which imports the speed table, which imports
//! the list parsers).

use crate::error::TopologyError;
use crate::limits::SCHED_CAPACITY_SCALE;

/// Normalises raw capacities (such as `capacity-dmips-mhz` values) so that the biggest CPU
/// gets 1024, as `topology_normalize_cpu_scale` does: `raw * 1024 / max_raw`, integer.
pub fn normalize_capacities(raw: &[u64]) -> Result<Vec<u32>, TopologyError> {
    let max = raw.iter().copied().max().unwrap_or(0);
    if max == 0 {
        return Err(TopologyError::invalid(
            "capacity",
            0,
            "positive raw capacities (capacity-dmips-mhz)",
        ));
    }
    raw.iter()
        .enumerate()
        .map(|(cpu, &r)| {
            if r == 0 {
                return Err(TopologyError::invalid(
                    &format!("cpu{cpu} capacity"),
                    0,
                    "a positive raw capacity",
                ));
            }
            let scaled = (u128::from(r) * u128::from(SCHED_CAPACITY_SCALE)) / u128::from(max);
            Ok(scaled.max(1) as u32)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tc2_dmips_normalise_like_the_kernel() {
        // topology_normalize_cpu_scale: 606 * 1024 / 1441 = 430 (integer division).
        let caps = normalize_capacities(&[1441, 1441, 606, 606, 606]).unwrap();
        assert_eq!(caps, vec![1024, 1024, 430, 430, 430]);
    }
}
