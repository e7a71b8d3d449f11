//! Traces of a run: the scheduler's tracepoints and fairsim's own balancing events,
//! recorded inside a time window and written as a Perfetto protobuf trace or as ftrace
//! text.

pub mod record;

pub use record::{BalanceKind, PrevState, Record, TaskInfo, Trace, TraceEvent, CPU_IDLE_EXIT};
