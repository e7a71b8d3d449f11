//! `rt-app FILE.json`.
//!
//! rt-app takes its taskset as one JSON file (`rt-app [OPTIONS] <taskset.json>`, or `-`
//! for standard input); fairsim reads the file as the key form `rtapp:FILE.json` does.
//! Standard input and rt-app's own options (log level, version, help) are refused.

use crate::Rtapp;
use fairsim_engine::error::{EngineError, SpecError};

/// Parses rt-app's arguments: the file.
pub(super) fn parse(args: &[String]) -> Result<Rtapp, EngineError> {
    let fail = |what: String| {
        EngineError::from(SpecError::Usage {
            tool: "rt-app".into(),
            detail: what,
            allowed: "rt-app FILE.json".into(),
        })
    };
    match args {
        [file] if file == "-" => Err(fail(
            "reading the taskset from standard input is not supported".into(),
        )),
        [opt, ..] if opt.starts_with('-') => {
            Err(fail(format!("option {opt} is not modelled by fairsim")))
        }
        [file] => Rtapp::load(file),
        [] => Err(fail("no taskset file".into())),
        [_, more @ ..] => Err(fail(format!("unexpected argument '{}'", more.join(" ")))),
    }
}
