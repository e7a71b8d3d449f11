//! Reading the files users point fairsim at (machine files, sysfs trees, scenarios,
//! schedstat snapshots) with a bound on what a read may take.
//!
//! A path can name something that never ends (`/dev/zero`), never answers (a FIFO with no
//! writer) or is far larger than any description of a machine. The file type is checked
//! before the file is opened, since opening a FIFO for reading already blocks, and the
//! read stops one byte past the cap, so neither memory nor time depends on what the path
//! turns out to hold.

use std::fmt;
use std::fs::FileType;
use std::io::Read;
use std::path::Path;

/// Why a bounded read failed; `Display` is the reason as the user should read it, without
/// the path (callers name the path and the field).
#[derive(Debug)]
pub enum ReadError {
    /// The file could not be inspected, opened or read.
    Io(std::io::Error),
    /// The path names a directory, device, FIFO or socket.
    NotRegular(&'static str),
    /// The file holds more than the cap.
    TooBig {
        /// The cap in bytes.
        max_bytes: u64,
    },
    /// The file is not UTF-8 text.
    NotUtf8,
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReadError::Io(e) => write!(f, "{e}"),
            ReadError::NotRegular(kind) => {
                write!(f, "is {kind}; allowed: a regular file")
            }
            ReadError::TooBig { max_bytes } => {
                write!(
                    f,
                    "larger than {max_bytes} bytes; allowed: at most {max_bytes} bytes"
                )
            }
            ReadError::NotUtf8 => write!(f, "is not UTF-8 text; allowed: a text file"),
        }
    }
}

impl std::error::Error for ReadError {}

/// What a non-regular file is, in words.
fn kind_of(ft: FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if ft.is_char_device() {
            return "a character device";
        }
        if ft.is_block_device() {
            return "a block device";
        }
        if ft.is_fifo() {
            return "a FIFO";
        }
        if ft.is_socket() {
            return "a socket";
        }
    }
    if ft.is_dir() {
        "a directory"
    } else {
        "not a regular file"
    }
}

/// Reads `path` as UTF-8 text of at most `max_bytes` bytes. Symbolic links are followed;
/// anything but a regular file is refused before it is opened.
pub fn read_bounded(path: &Path, max_bytes: u64) -> Result<String, ReadError> {
    let meta = std::fs::metadata(path).map_err(ReadError::Io)?;
    if !meta.file_type().is_file() {
        return Err(ReadError::NotRegular(kind_of(meta.file_type())));
    }
    if meta.len() > max_bytes {
        return Err(ReadError::TooBig { max_bytes });
    }
    let file = std::fs::File::open(path).map_err(ReadError::Io)?;
    // The size can change between the check and the read (or lie, as sysfs's 4096 does),
    // so the read itself is capped too.
    let mut bytes = Vec::new();
    file.take(max_bytes + 1)
        .read_to_end(&mut bytes)
        .map_err(ReadError::Io)?;
    if bytes.len() as u64 > max_bytes {
        return Err(ReadError::TooBig { max_bytes });
    }
    String::from_utf8(bytes).map_err(|_| ReadError::NotUtf8)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_devices_directories_and_oversized_files() {
        let dir = std::env::temp_dir().join(format!("fairsim-read-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let small = dir.join("small.txt");
        std::fs::write(&small, "0-3\n").unwrap();
        assert_eq!(read_bounded(&small, 16).unwrap(), "0-3\n");
        assert!(matches!(
            read_bounded(&small, 3),
            Err(ReadError::TooBig { max_bytes: 3 })
        ));
        assert!(matches!(
            read_bounded(&dir, 16),
            Err(ReadError::NotRegular("a directory"))
        ));
        #[cfg(unix)]
        assert!(matches!(
            read_bounded(Path::new("/dev/zero"), 16),
            Err(ReadError::NotRegular("a character device"))
        ));
        std::fs::write(dir.join("bin"), [0xff, 0xfe]).unwrap();
        assert!(matches!(
            read_bounded(&dir.join("bin"), 16),
            Err(ReadError::NotUtf8)
        ));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
