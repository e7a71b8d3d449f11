//! The atomics the shared sched-domain fields (`sched_group_capacity`,
//! `sched_domain_shared`) are made of: std's, or loom's when built with `--cfg loom`, so
//! that model-checking tests run the real balancing code over them.

#[cfg(loom)]
pub use loom::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, Ordering};
#[cfg(not(loom))]
pub use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, Ordering};
