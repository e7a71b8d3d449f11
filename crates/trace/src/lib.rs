//! Traces of a run: the scheduler's tracepoints and fairsim's own balancing events as
//! plain records ([`Trace`], [`Record`], [`TraceEvent`]), and the file formats they are
//! written in: a Perfetto protobuf trace ([`write_perfetto`]), ftrace text
//! ([`write_ftrace_text`]) with trace-cmd report's layouts beside it ([`tracecmd`]), and
//! trace-cmd's `trace.dat` ([`write_trace_dat`]).
//!
//! The engine fills a [`Trace`] during a run (its `world::tracing`) and the command line
//! writes it out or reads it back for reports and plots. This crate depends only on the
//! discrete-event core's time, never on the engine, so that the formats can be written,
//! tested and read without a world to run, and every dependency arrow points one way.

pub mod config;
pub mod current;
pub mod ftrace;
pub mod perfetto;
pub mod proto;
pub mod record;
pub mod tracecmd;
pub mod tracedat;
mod tracks;

pub use config::{parse_window, TraceConfig, WindowError, RECORD_BYTES};
pub use ftrace::write_ftrace_text;
pub use perfetto::write_perfetto;
pub use record::{
    BalanceKind, NewidleSeries, PrevState, Record, TaskInfo, Trace, TraceEvent, CPU_IDLE_EXIT,
};
pub use tracecmd::TextLayout;
pub use tracedat::write_trace_dat;
