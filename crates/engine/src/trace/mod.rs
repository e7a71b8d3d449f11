//! Traces of a run: the scheduler's tracepoints and fairsim's own balancing events,
//! recorded inside a time window and written as a Perfetto protobuf trace or as ftrace
//! text.

pub mod config;
pub mod current;
pub mod ftrace;
pub mod perfetto;
pub mod proto;
pub mod record;
mod tracks;

pub use config::{parse_window, TraceConfig, RECORD_BYTES};
pub use ftrace::write_ftrace_text;
pub use perfetto::write_perfetto;
pub use record::{
    BalanceKind, NewidleSeries, PrevState, Record, TaskInfo, Trace, TraceEvent, CPU_IDLE_EXIT,
};
