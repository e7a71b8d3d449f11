//! Jiffies conversions the balancers share. A leaf of its own, so that the era balancers
//! under `lb/` (3.9's and 4.5's triggers and power updates) convert their intervals
//! without importing `lb/mod.rs`, whose `LbState` holds their state, and so that every
//! balancer compares jiffies without importing `lb/periodic.rs`.

/// `msecs_to_jiffies(ms)` for `hz`: rounds up, as the kernel does for HZ dividing 1000.
pub fn msecs_to_jiffies(ms: u64, hz: u64) -> u64 {
    (ms * hz).div_ceil(1000)
}

/// `time_after(a, b)`: `a` is later than `b` (jiffies never wrap in an emulation).
pub fn time_after(a: u64, b: u64) -> bool {
    a > b
}
