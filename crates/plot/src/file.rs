//! Reading and writing files: the plot data file, criterion's JSON, and the SVGs.

use std::io::Read;
use std::path::{Path, PathBuf};

use crate::data::{PlotData, FORMAT, VERSION};
use crate::error::{bad, PlotError};

/// The largest plot data file read: a timeline at [`crate::MAX_SLICES`] takes about
/// 75 MB of pretty JSON, so 256 MiB refuses only what cannot be one.
pub const MAX_DATA_BYTES: u64 = 256 << 20;

/// Reads a regular file of at most `limit` bytes as UTF-8. The type is checked before
/// opening, so that a FIFO or a device named by mistake cannot block or stream forever.
pub(crate) fn read_bounded(path: &Path, limit: u64) -> Result<String, PlotError> {
    let fail = |reason: String| PlotError::Read {
        path: path.to_path_buf(),
        reason,
    };
    let meta = std::fs::metadata(path).map_err(|e| fail(e.to_string()))?;
    if !meta.is_file() {
        return Err(fail("not a regular file".into()));
    }
    if meta.len() > limit {
        return Err(fail(format!(
            "{} bytes; allowed: at most {limit}",
            meta.len()
        )));
    }
    let file = std::fs::File::open(path).map_err(|e| fail(e.to_string()))?;
    let mut bytes = Vec::new();
    // The file may have grown since the check; read one byte past the limit to notice.
    file.take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| fail(e.to_string()))?;
    if bytes.len() as u64 > limit {
        return Err(fail(format!("larger than {limit} bytes")));
    }
    String::from_utf8(bytes).map_err(|_| fail("not UTF-8 text".into()))
}

/// Reads and checks a plot data file (JSON, as [`write_data`] writes it).
///
/// `format` and `version` are checked before the rest is parsed, so that a file of
/// another kind or version is named as such rather than as a missing field.
pub fn read_data(path: &Path) -> Result<PlotData, PlotError> {
    let text = read_bounded(path, MAX_DATA_BYTES)?;
    let json_err = |e: serde_json::Error| PlotError::Read {
        path: path.to_path_buf(),
        reason: format!("not a plot data file: {e}"),
    };
    let value: serde_json::Value = serde_json::from_str(&text).map_err(json_err)?;
    let invalid = |field: &str, message: String| PlotError::Invalid {
        origin: path.display().to_string(),
        field: field.into(),
        message,
    };
    match value.get("format") {
        Some(serde_json::Value::String(f)) if f == FORMAT => {}
        Some(other) => return Err(invalid("format", bad(other, FORMAT))),
        None => return Err(invalid("format", format!("missing; allowed: {FORMAT}"))),
    }
    match value.get("version").and_then(serde_json::Value::as_u64) {
        Some(v) if v == u64::from(VERSION) => {}
        _ => {
            let got = value
                .get("version")
                .map_or("missing".into(), |v| v.to_string());
            return Err(invalid("version", bad(got, &VERSION.to_string())));
        }
    }
    let data: PlotData = serde_json::from_value(value).map_err(json_err)?;
    data.validate().map_err(|e| e.in_file(path))?;
    Ok(data)
}

/// Checks `data` and writes it to `path` as pretty JSON (the directory must exist).
pub fn write_data(data: &PlotData, path: &Path) -> Result<(), PlotError> {
    data.validate()?;
    let text = serde_json::to_string_pretty(data).map_err(|e| PlotError::Write {
        path: path.to_path_buf(),
        reason: e.to_string(),
    })?;
    write_file(path, &(text + "\n"))
}

/// Writes `text` to `path`, naming the path in the error.
pub(crate) fn write_file(path: &Path, text: &str) -> Result<(), PlotError> {
    std::fs::write(path, text).map_err(|e| PlotError::Write {
        path: path.to_path_buf(),
        reason: e.to_string(),
    })
}

/// Creates `dir` and its parents if needed.
pub(crate) fn create_dir(dir: &Path) -> Result<(), PlotError> {
    std::fs::create_dir_all(dir).map_err(|e| PlotError::Write {
        path: dir.to_path_buf(),
        reason: e.to_string(),
    })
}

/// Writes one SVG into `dir`, returning its path.
pub(crate) fn write_svg(dir: &Path, name: &str, svg: &str) -> Result<PathBuf, PlotError> {
    let path = dir.join(name);
    write_file(&path, svg)?;
    Ok(path)
}
