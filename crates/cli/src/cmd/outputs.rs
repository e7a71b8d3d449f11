//! Output paths checked before anything runs: a typo in `--json` or `--plot` must not cost
//! a run that took an hour. `run`, `compare` and `sweep` list their outputs here and call
//! [`Outputs::check`] once their arguments are resolved and before the first event; the
//! commands then write their files with [`write_file`].
//!
//! The check leaves nothing behind. A file that does not exist yet is created and removed
//! again (a probe that sees what the real write will see: a missing directory, a missing
//! permission, a read-only file system); one that exists is opened for writing without
//! being truncated, so that a failed run leaves an earlier result in place. A directory
//! that does not exist yet is not created: its nearest existing ancestor must be a
//! directory this process can create entries in, which is what the writers'
//! `create_dir_all` needs.

use std::fs::{File, OpenOptions};
use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use crate::error::CliError;

/// One output: the option (or scenario key) that names it, its path, and whether it is a
/// directory.
#[derive(Debug, Clone)]
struct Output {
    flag: String,
    path: PathBuf,
    dir: bool,
}

/// The outputs of one command, checked together, and the files it reads, which no
/// output may overwrite.
#[derive(Debug, Clone, Default)]
pub(crate) struct Outputs {
    list: Vec<Output>,
    /// What each input is (`scenario file`), and its path.
    inputs: Vec<(String, PathBuf)>,
}

impl Outputs {
    /// No outputs yet.
    pub(crate) fn new() -> Outputs {
        Outputs::default()
    }

    /// Adds the file `path` written for `flag` (`--json`), when given.
    pub(crate) fn file(&mut self, flag: &str, path: Option<&Path>) -> &mut Outputs {
        if let Some(p) = path {
            self.list.push(Output {
                flag: flag.to_string(),
                path: p.to_path_buf(),
                dir: false,
            });
        }
        self
    }

    /// Adds the directory `path` written into for `flag` (`--plot`), when given.
    pub(crate) fn dir(&mut self, flag: &str, path: Option<&Path>) -> &mut Outputs {
        if let Some(p) = path {
            self.list.push(Output {
                flag: flag.to_string(),
                path: p.to_path_buf(),
                dir: true,
            });
        }
        self
    }

    /// Adds a file the command reads (`what` says which: `scenario file`), which no
    /// output may be: a `--json` naming the scenario would overwrite it after the run.
    pub(crate) fn input(&mut self, what: &str, path: Option<&Path>) -> &mut Outputs {
        if let Some(p) = path {
            self.inputs.push((what.to_string(), p.to_path_buf()));
        }
        self
    }

    /// Checks every output: two options naming the same path, an output that is one of
    /// the inputs, a file whose directory is missing or not writable, a directory that
    /// is a file. The first problem is returned as one line naming its option, in the
    /// order the outputs were added.
    pub(crate) fn check(&self) -> Result<(), CliError> {
        for (i, o) in self.list.iter().enumerate() {
            // `report` reads `-` as standard input, so `-` here would look like standard
            // output and silently make a file of that name.
            if o.path.as_os_str() == "-" {
                return Err(CliError::msg(format!(
                    "{}: - is not standard output here (a file named - would be written); allowed: /dev/stdout for standard output, or ./- for a file named -",
                    o.flag
                )));
            }
            if let Some((what, _)) = self.inputs.iter().find(|(_, p)| same_file(p, &o.path)) {
                return Err(CliError::msg(format!(
                    "{}: {} is the {what} this command reads; allowed: a path of its own",
                    o.flag,
                    o.path.display()
                )));
            }
            if let Some(other) = self.list[..i].iter().find(|p| p.path == o.path) {
                return Err(CliError::msg(format!(
                    "{}: {} is also {}'s output; allowed: a path of its own",
                    o.flag,
                    o.path.display(),
                    other.flag
                )));
            }
            if o.dir {
                check_dir(&o.flag, &o.path)?;
            } else {
                check_file(&o.flag, &o.path)?;
            }
        }
        Ok(())
    }
}

/// Whether `a` and `b` name one existing file (through links and relative paths too).
fn same_file(a: &Path, b: &Path) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

/// `err`'s text without the ` (os error N)` that `std::io::Error` appends, as the
/// shell's own messages read (`No such file or directory`).
fn reason(err: &std::io::Error) -> String {
    let text = err.to_string();
    match text.find(" (os error ") {
        Some(at) => text[..at].to_string(),
        None => text,
    }
}

/// The one-line error of an output that cannot be written. Its exit status is the one an
/// unwritable output always had (4, see docs/errors.md), only now before the run rather
/// than after it, so scripts that test for it keep working.
fn refuse(flag: &str, path: &Path, why: &str) -> CliError {
    CliError::output(format!("{flag}: cannot write {}: {why}", path.display()))
}

/// Checks that the file `path` can be written: an existing one is opened for writing
/// (not truncated), a new one is created and removed again.
pub(crate) fn check_file(flag: &str, path: &Path) -> Result<(), CliError> {
    if path.as_os_str().is_empty() {
        return Err(CliError::msg(format!(
            "{flag}: empty path; allowed: a file name"
        )));
    }
    if path.is_dir() {
        return Err(refuse(flag, path, "Is a directory"));
    }
    if path.exists() {
        return OpenOptions::new()
            .write(true)
            .open(path)
            .map(drop)
            .map_err(|e| refuse(flag, path, &reason(&e)));
    }
    match OpenOptions::new().write(true).create_new(true).open(path) {
        Ok(file) => {
            drop(file);
            std::fs::remove_file(path).map_err(|e| refuse(flag, path, &reason(&e)))
        }
        // Created by someone else between the two looks: it exists, which is all the
        // later write needs to know about its directory.
        Err(e) if e.kind() == ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(refuse(flag, path, &reason(&e))),
    }
}

/// Checks that the directory `path` exists and takes new files, or that its nearest
/// existing ancestor is a directory that takes new entries (the writer creates the rest).
pub(crate) fn check_dir(flag: &str, path: &Path) -> Result<(), CliError> {
    if path.as_os_str().is_empty() {
        return Err(CliError::msg(format!(
            "{flag}: empty path; allowed: a directory name"
        )));
    }
    // The nearest ancestor that exists; a relative path's walk ends at the working
    // directory.
    let mut existing = path.to_path_buf();
    while !existing.exists() {
        match existing.parent() {
            Some(p) if !p.as_os_str().is_empty() => existing = p.to_path_buf(),
            _ => {
                existing = PathBuf::from(".");
                break;
            }
        }
    }
    if !existing.is_dir() {
        let why = if existing == path {
            "Not a directory".to_string()
        } else {
            format!("{} is not a directory", existing.display())
        };
        return Err(refuse(flag, path, &why));
    }
    // A probe file in it: the writers create files (and directories) there.
    let probe = existing.join(format!(".fairsim-probe-{}", std::process::id()));
    match File::options().write(true).create_new(true).open(&probe) {
        Ok(file) => {
            drop(file);
            std::fs::remove_file(&probe).map_err(|e| refuse(flag, path, &reason(&e)))
        }
        Err(e) if e.kind() == ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(refuse(flag, path, &reason(&e))),
    }
}

/// Writes `text` to the output file `path`, which option `what` named; a failure is an
/// output error (exit 4) that names both.
pub(crate) fn write_file(path: &Path, what: &str, text: &str) -> Result<(), CliError> {
    std::fs::write(path, text)
        .map_err(|e| CliError::output(format!("{what} {}: {e}", path.display())))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("fairsim-outputs-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn a_missing_directory_is_named_with_its_flag() {
        let mut o = Outputs::new();
        o.file("--json", Some(Path::new("/nonexistent-fairsim-dir/x.json")));
        let err = o.check().unwrap_err();
        let text = format!("{err:?}");
        assert!(
            text.contains(
                "--json: cannot write /nonexistent-fairsim-dir/x.json: No such file or directory"
            ),
            "{text}"
        );
    }

    #[test]
    fn the_probe_leaves_nothing_and_keeps_an_existing_file() {
        let d = scratch("probe");
        let new = d.join("new.json");
        let old = d.join("old.json");
        std::fs::write(&old, "kept").unwrap();
        let mut o = Outputs::new();
        o.file("--json", Some(&new))
            .file("--csv", Some(&old))
            .dir("--plot", Some(&d.join("a/b")));
        o.check().unwrap();
        assert!(!new.exists());
        assert!(!d.join("a").exists());
        assert_eq!(std::fs::read_to_string(&old).unwrap(), "kept");
        let leftovers: Vec<_> = std::fs::read_dir(&d).unwrap().collect();
        assert_eq!(leftovers.len(), 1);
        let _ = std::fs::remove_dir_all(&d);
    }

    /// Issue 50's sweep: `run S.toml --json S.toml` overwrote the scenario after the
    /// run; an output that is an input (under another spelling too) is refused, and the
    /// input is left as it was.
    #[test]
    fn an_output_on_an_input_is_refused() {
        let dir = scratch("input");
        let input = dir.join("s.toml");
        std::fs::write(&input, "duration = \"1ms\"\n").unwrap();
        let spelled = dir.join(".").join("s.toml");
        let mut o = Outputs::new();
        o.input("scenario file", Some(&input))
            .file("--json", Some(&spelled));
        let e = format!("{:?}", o.check().unwrap_err());
        assert!(
            e.contains("--json: ") && e.contains("is the scenario file this command reads"),
            "{e}"
        );
        assert_eq!(
            std::fs::read_to_string(&input).unwrap(),
            "duration = \"1ms\"\n"
        );
        let mut o = Outputs::new();
        o.input("scenario file", Some(&input))
            .file("--json", Some(&dir.join("out.json")));
        assert!(o.check().is_ok());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_file_in_the_way_of_a_directory_and_a_shared_path_are_refused() {
        let d = scratch("clash");
        let f = d.join("file");
        std::fs::write(&f, "").unwrap();
        let mut o = Outputs::new();
        o.dir("--plot", Some(&f.join("sub")));
        let text = format!("{:?}", o.check().unwrap_err());
        assert!(text.contains("--plot: cannot write"), "{text}");
        assert!(text.contains("is not a directory"), "{text}");
        let mut o = Outputs::new();
        o.file("--json", Some(&d.join("x")))
            .file("--csv", Some(&d.join("x")));
        let text = format!("{:?}", o.check().unwrap_err());
        assert!(
            text.contains("--csv:") && text.contains("--json's output"),
            "{text}"
        );
        let mut o = Outputs::new();
        o.file("--json", Some(&d));
        let text = format!("{:?}", o.check().unwrap_err());
        assert!(text.contains("Is a directory"), "{text}");
        let _ = std::fs::remove_dir_all(&d);
    }
}
