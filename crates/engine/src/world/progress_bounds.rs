//! The progress guard's bounds (see `progress.rs`), a leaf that `error.rs`'s message for
//! a run stuck at one instant reads too.

/// Events allowed at one instant for each task and each CPU of the world.
pub const EVENTS_PER_ENTITY: u64 = 1024;

/// Events always allowed at one instant, however small the world.
pub const MIN_EVENTS: u64 = 1_000_000;

/// Queued events allowed for each task of the world.
pub const QUEUE_PER_TASK: u64 = 64;

/// Queued events allowed for each CPU of the world (see `progress.rs`).
pub const QUEUE_PER_CPU: u64 = 4096;

/// Queued events always allowed, however small the world.
pub const MIN_QUEUE: u64 = 65_536;
