//! `fairsim._fairsim`: the extension module under the Python package `fairsim`. It holds
//! one function, which runs a command line through the CLI's own library entry point
//! ([`fairsim_cli::run_argv`]); everything Python-side (keyword arguments to options,
//! results as dicts and DataFrames) is in `python/fairsim/__init__.py`.

use pyo3::prelude::*;

/// Runs `fairsim ARGS...` in this process and returns `(status, stdout, error)`: the exit
/// status the binary would return, the bytes it would print on stdout, and its one-line
/// error without the `fairsim: error: ` prefix (`None` on success). The files the options
/// name are written as the binary writes them. Python's other threads run meanwhile.
#[pyfunction]
fn run_argv(py: Python<'_>, args: Vec<String>) -> (u8, Vec<u8>, Option<String>) {
    let finished = py.detach(|| fairsim_cli::run_argv(&args));
    (finished.status, finished.stdout, finished.error)
}

/// The extension module `fairsim._fairsim`.
#[pymodule]
fn _fairsim(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(run_argv, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
