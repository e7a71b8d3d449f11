//! A getopt-style option scanner shared by the tools' command lines.
//!
//! It follows glibc's `getopt_long` (which schbench, rt-tests' hackbench and cyclictest
//! and netperf's plain `getopt` use), with the switches the other parsers differ by:
//! - short options cluster (`-pT`), and an option's value is the rest of its word
//!   (`-g4`) or, for a required value, the next word (`-g 4`);
//! - long options take `--name=value` or, for a required value, `--name value`, and may be
//!   abbreviated to any unique prefix, as `getopt_long` and perf's `parse_options` allow;
//! - an optional value (`a::` in an option string) is attached (`-a3`,
//!   `--affinity=3`), or the next word where the tool tests it by hand: cyclictest's
//!   `atoi` ([`Arg::OptionalNumber`]), netperf's `isdigit` ([`Arg::OptionalDigit`]);
//! - words that are not options are collected and scanning goes on (glibc permutes
//!   them to the end); `--` ends the options and what follows is returned apart, since
//!   netperf reads its test-specific options there;
//! - perf's `parse_options` also takes `--no-NAME` for a boolean.
//!
//! Options a tool has but fairsim does not model are part of its table, so that they are
//! refused by name ("not modelled") rather than called unknown.

use fairsim_engine::error::{EngineError, SpecError};

/// Whether an option takes a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Arg {
    /// A flag.
    No,
    /// A value, attached or the next word.
    Required,
    /// An attached value, or the next word when `atoi` of it is non-zero, as
    /// cyclictest's `-t`/`-a` read it.
    OptionalNumber,
    /// An attached value, or the next word when it starts with a digit, as netperf's
    /// `-c`/`-C` read their CPU rate (`isdigit(argv[optind][0])`).
    OptionalDigit,
}

/// One option of a tool's table.
#[derive(Debug, Clone, Copy)]
pub(super) struct Opt {
    /// The letter, if any.
    pub short: Option<char>,
    /// The long name, if any.
    pub long: Option<&'static str>,
    /// Whether it takes a value.
    pub arg: Arg,
    /// Whether fairsim models it: otherwise it is refused by name.
    pub modelled: bool,
    /// What its value is, for "needs ..." errors ("a number", "a test name").
    pub value: &'static str,
}

impl Opt {
    /// A modelled option.
    pub(super) const fn new(
        short: Option<char>,
        long: Option<&'static str>,
        arg: Arg,
        value: &'static str,
    ) -> Opt {
        Opt {
            short,
            long,
            arg,
            modelled: true,
            value,
        }
    }

    /// An option of the tool that fairsim does not model.
    pub(super) const fn unmodelled(
        short: Option<char>,
        long: Option<&'static str>,
        arg: Arg,
    ) -> Opt {
        Opt {
            short,
            long,
            arg,
            modelled: false,
            value: "a value",
        }
    }

    /// `-m (--message-threads)`, as errors name it.
    fn display(&self) -> String {
        match (self.short, self.long) {
            (Some(s), Some(l)) => format!("-{s} (--{l})"),
            (Some(s), None) => format!("-{s}"),
            (None, Some(l)) => format!("--{l}"),
            (None, None) => String::new(),
        }
    }
}

/// A tool's option grammar.
pub(super) struct Grammar<'a> {
    /// The tool as errors name it.
    pub tool: &'a str,
    /// Its options.
    pub opts: &'a [Opt],
    /// perf's `--no-NAME` for flags.
    pub negatable: bool,
}

/// One option found on the command line.
#[derive(Debug, Clone)]
pub(super) struct Given {
    /// Index into the grammar's table.
    pub index: usize,
    /// How the user spelled it (`-m`, `--message-threads`), for errors.
    pub typed: String,
    /// Its value, if it has one.
    pub value: Option<String>,
    /// `--no-NAME`.
    pub negated: bool,
}

/// What a scan found.
#[derive(Debug, Clone, Default)]
pub(super) struct Scan {
    /// The options, in order.
    pub given: Vec<Given>,
    /// The words that are not options, in order.
    pub positional: Vec<String>,
    /// The words after `--`, if it was there.
    pub after_dashdash: Option<Vec<String>>,
}

impl Scan {
    /// The words that are not options, then those after `--`, in order.
    pub(super) fn words(&self) -> Vec<String> {
        let mut words = self.positional.clone();
        words.extend(self.after_dashdash.clone().unwrap_or_default());
        words
    }
}

impl Grammar<'_> {
    /// Scans `args` of a tool that takes options only, refusing any other word as the
    /// tool does (schbench's `if (optind < ac)`, hackbench's and cyclictest's usage).
    pub(super) fn scan_options_only(&self, args: &[String]) -> Result<Scan, EngineError> {
        let scan = self.scan(args)?;
        let rest = scan.words();
        if !rest.is_empty() {
            return Err(super::body::extra(self.tool, &rest, "options only"));
        }
        Ok(scan)
    }

    /// The modelled options, as an error's "allowed" list.
    pub(super) fn allowed(&self) -> String {
        let names: Vec<String> = self
            .opts
            .iter()
            .filter(|o| o.modelled)
            .map(|o| match (o.short, o.long) {
                (Some(s), _) => format!("-{s}"),
                (None, Some(l)) => format!("--{l}"),
                (None, None) => String::new(),
            })
            .collect();
        if names.is_empty() {
            // perf bench's own options (-f, -r) are all unmodelled: its benchmarks' come
            // after the collection's name.
            return format!("none of {}'s own options", self.tool);
        }
        names.join(" ")
    }

    /// The error for a value an option cannot take.
    pub(super) fn err(&self, what: String) -> EngineError {
        SpecError::refused(self.tool, what).into()
    }

    fn unknown(&self, typed: &str) -> EngineError {
        self.err(format!(
            "unknown option {typed} (allowed: {})",
            self.allowed()
        ))
    }

    fn check_modelled(&self, index: usize) -> Result<(), EngineError> {
        let o = &self.opts[index];
        if o.modelled {
            return Ok(());
        }
        Err(self.err(format!(
            "option {} is not modelled by fairsim (allowed: {})",
            o.display(),
            self.allowed()
        )))
    }

    fn needs(&self, typed: &str, index: usize) -> EngineError {
        self.err(format!("{typed} needs {}", self.opts[index].value))
    }

    /// The next word as a required value (consumed). getopt would take an option there
    /// too (`-m -t 4` sets `-m` to `-t` and leaves `4` over), which the tool then reads
    /// as garbage; the user meant a value, so an option of the tool's table in that place
    /// is refused as the missing value it is. A negative number is a value.
    fn next_value(
        &self,
        args: &[String],
        i: &mut usize,
        typed: &str,
        index: usize,
    ) -> Result<String, EngineError> {
        let Some(next) = args.get(*i) else {
            return Err(self.needs(typed, index));
        };
        let numeric = next
            .strip_prefix('-')
            .is_some_and(|r| r.starts_with(|c: char| c.is_ascii_digit() || c == '.'));
        if next.starts_with('-') && next.len() > 1 && !numeric {
            return Err(self.err(format!(
                "{typed} needs {} before the next option, not '{next}'",
                self.opts[index].value
            )));
        }
        *i += 1;
        Ok(next.clone())
    }

    /// Finds a long option by its full name or a unique prefix of it.
    fn find_long(&self, name: &str, typed: &str) -> Result<usize, EngineError> {
        let long = |i: &usize| self.opts[*i].long;
        if let Some(i) = (0..self.opts.len()).find(|i| long(i) == Some(name)) {
            return Ok(i);
        }
        let hits: Vec<usize> = (0..self.opts.len())
            .filter(|i| long(i).is_some_and(|l| l.starts_with(name)))
            .collect();
        match hits.as_slice() {
            [i] => Ok(*i),
            [] => Err(self.unknown(typed)),
            _ => {
                let names: Vec<String> = hits
                    .iter()
                    .filter_map(|i| long(i).map(|l| format!("--{l}")))
                    .collect();
                Err(self.err(format!(
                    "option {typed} is ambiguous ({})",
                    names.join(", ")
                )))
            }
        }
    }

    /// Scans `args` (the words after the program's name).
    pub(super) fn scan(&self, args: &[String]) -> Result<Scan, EngineError> {
        let mut scan = Scan::default();
        let mut i = 0;
        while i < args.len() {
            let word = &args[i];
            i += 1;
            if word == "--" {
                scan.after_dashdash = Some(args[i..].to_vec());
                break;
            }
            if let Some(body) = word.strip_prefix("--") {
                let (name, attached) = match body.split_once('=') {
                    Some((n, v)) => (n, Some(v.to_string())),
                    None => (body, None),
                };
                let typed = format!("--{name}");
                let (index, negated) = match self.find_long(name, &typed) {
                    Ok(index) => (index, false),
                    Err(e) => match name.strip_prefix("no-").filter(|_| self.negatable) {
                        Some(base) => match self.find_long(base, &typed) {
                            Ok(index) if self.opts[index].arg == Arg::No => (index, true),
                            _ => return Err(e),
                        },
                        None => return Err(e),
                    },
                };
                self.check_modelled(index)?;
                let value = match self.opts[index].arg {
                    Arg::No => {
                        if attached.is_some() {
                            return Err(self.err(format!("{typed} takes no value")));
                        }
                        None
                    }
                    Arg::Required => match attached {
                        Some(v) => Some(v),
                        None => Some(self.next_value(args, &mut i, &typed, index)?),
                    },
                    Arg::OptionalNumber | Arg::OptionalDigit => match attached {
                        Some(v) => Some(v),
                        None => next_number(args, &mut i, self.opts[index].arg),
                    },
                };
                scan.given.push(Given {
                    index,
                    typed,
                    value,
                    negated,
                });
                continue;
            }
            let Some(cluster) = word.strip_prefix('-').filter(|c| !c.is_empty()) else {
                scan.positional.push(word.clone());
                continue;
            };
            for (at, c) in cluster.char_indices() {
                let typed = format!("-{c}");
                let Some(index) = self.opts.iter().position(|o| o.short == Some(c)) else {
                    return Err(self.unknown(&typed));
                };
                self.check_modelled(index)?;
                let rest = &cluster[at + c.len_utf8()..];
                let arg = self.opts[index].arg;
                // A value-taking option takes the rest of its word as its value.
                let from_rest = arg != Arg::No && !rest.is_empty();
                let value = if from_rest {
                    Some(rest.to_string())
                } else {
                    match arg {
                        Arg::No => None,
                        Arg::Required => Some(self.next_value(args, &mut i, &typed, index)?),
                        Arg::OptionalNumber | Arg::OptionalDigit => next_number(args, &mut i, arg),
                    }
                };
                scan.given.push(Given {
                    index,
                    typed,
                    value,
                    negated: false,
                });
                if from_rest {
                    break;
                }
            }
        }
        Ok(scan)
    }
}

/// The next word as an optional option's value (consumed), when `kind` takes it: for
/// [`Arg::OptionalNumber`] its leading digits are a non-zero number (C's `atoi`), for
/// [`Arg::OptionalDigit`] it starts with a digit.
fn next_number(args: &[String], i: &mut usize, kind: Arg) -> Option<String> {
    let next = args.get(*i)?;
    let digits: String = next.chars().take_while(char::is_ascii_digit).collect();
    let takes = match kind {
        Arg::OptionalNumber => digits.bytes().any(|b| b != b'0'),
        _ => !digits.is_empty(),
    };
    if takes {
        *i += 1;
        return Some(next.clone());
    }
    None
}

/// `value` as a decimal number, or the error "TOOL: OPT needs WHAT, not 'value'".
pub(super) fn number(tool: &str, given: &Given, what: &str) -> Result<u64, EngineError> {
    let v = given.value.as_deref().unwrap_or("");
    if !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()) {
        if let Ok(n) = v.parse::<u64>() {
            return Ok(n);
        }
    }
    Err(SpecError::refused(tool, format!("{} needs {what}, not '{v}'", given.typed)).into())
}
