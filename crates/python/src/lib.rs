//! `fairsim._fairsim`: the extension module under the Python package `fairsim`. It holds
//! one function, which runs a command line through the CLI's own library entry point
//! ([`fairsim_cli::run_argv`]); everything Python-side (keyword arguments to options,
//! results as dicts and DataFrames) is in `python/fairsim/__init__.py`.

use std::sync::mpsc;
use std::time::Duration;

use pyo3::prelude::*;

/// How often the waiting interpreter looks for a Ctrl-C while a command runs.
const SIGNAL_POLL: Duration = Duration::from_millis(50);

/// The command's thread's stack: the binary runs on the main thread's 8 MiB, and a
/// spawned thread's default is 2 MiB; this is only reserved, not used.
const STACK_BYTES: usize = 64 << 20;

/// Runs `fairsim ARGS...` in this process and returns `(status, stdout, error)`: the exit
/// status the binary would return, the bytes it would print on stdout, and its one-line
/// error without the `fairsim: error: ` prefix (`None` on success). The files the options
/// name are written as the binary writes them.
///
/// The command runs on a thread of its own while the interpreter waits without the GIL,
/// looking for signals: a Ctrl-C stops the command as it stops the binary (what has
/// finished is written) and is then raised as `KeyboardInterrupt`.
#[pyfunction]
fn run_argv(py: Python<'_>, args: Vec<String>) -> PyResult<(u8, Vec<u8>, Option<String>)> {
    let (done, mut finished) = mpsc::channel();
    let worker = std::thread::Builder::new()
        .name("fairsim".into())
        .stack_size(STACK_BYTES)
        .spawn(move || {
            let _ = done.send(fairsim_cli::run_argv(&args));
        })?;
    let mut signal = None;
    let result = loop {
        // The receiver goes with the GIL-free closure and comes back (it is Send, not
        // Sync).
        let (received, back) = py.detach(move || (finished.recv_timeout(SIGNAL_POLL), finished));
        finished = back;
        match received {
            Ok(result) => break Some(result),
            Err(mpsc::RecvTimeoutError::Disconnected) => break None,
            Err(mpsc::RecvTimeoutError::Timeout) => {}
        }
        if signal.is_none() {
            signal = py.check_signals().err();
        }
        if signal.is_some() {
            // Raised again at every look: a Ctrl-C that came before the command lowered
            // the flag at its start still stops it.
            fairsim_cli::interrupt();
        }
    };
    // The thread has sent its result or ended; a panic in it is fairsim's bug.
    let joined = py.detach(|| worker.join());
    let finished = match (result, joined) {
        (Some(finished), _) => finished,
        (None, _) => {
            return Err(pyo3::exceptions::PyRuntimeError::new_err(
                "fairsim: the command's thread panicked (a bug in fairsim; please report it)",
            ))
        }
    };
    if let Some(err) = signal {
        return Err(err);
    }
    Ok((finished.status, finished.stdout, finished.error))
}

/// The extension module `fairsim._fairsim`.
#[pymodule]
fn _fairsim(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(run_argv, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
