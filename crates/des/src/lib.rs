//! The discrete-event core: virtual time ([`time`]: integer nanoseconds, the parsing and
//! printing of durations) and the seeded random streams ([`rng`]) that make a run
//! reproducible.
//!
//! It sits at the bottom of the workspace and knows nothing of scheduling, so that the
//! engine and the crates beside it (the trace writers) can share one notion of time
//! without depending on each other. The engine's event queue is to join it.

pub mod rng;
pub mod time;
