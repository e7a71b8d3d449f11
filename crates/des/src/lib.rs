//! The discrete-event core: virtual time ([`time`]: integer nanoseconds, the parsing and
//! printing of durations), the event queue ([`queue`]: a timing wheel in front of a radix
//! heap, ordered by time and then scheduling order) and the seeded random streams
//! ([`rng`]) that make a run reproducible.
//!
//! It sits at the bottom of the workspace and knows nothing of scheduling, so that the
//! engine and the crates beside it (the trace writers) can share one notion of time
//! without depending on each other.

pub mod queue;
mod radix;
pub mod rng;
pub mod time;
mod wheel;
