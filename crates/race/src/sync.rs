//! The locks and atomics race mode's runqueues and world are made of: std's, or loom's
//! when built with `--cfg loom`, so that the model-checking tests
//! (`crates/race/tests/race_loom.rs`) explore the real code's interleavings.

#[cfg(loom)]
pub use loom::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize};
#[cfg(loom)]
pub use loom::sync::{Mutex, MutexGuard};
#[cfg(not(loom))]
pub use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize};
#[cfg(not(loom))]
pub use std::sync::{Mutex, MutexGuard};
