//! Shell-like word splitting for a pasted command line.
//!
//! A command line from a user's notes is split the way a POSIX shell splits one simple
//! command, so that quoting means what it meant in the terminal: whitespace separates
//! words; `'...'` keeps everything literally; `"..."` keeps everything but `\"`, `\\`,
//! `\$` and `` \` ``, which lose their backslash; a backslash outside quotes keeps the
//! next character literally. What a shell would do beyond one simple command (pipes,
//! lists, redirections, substitutions, globs) cannot describe a workload, so those
//! characters are refused when they are unquoted rather than passed on as arguments.

/// Why a command line cannot be split into words.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(super) enum WordsError {
    /// A quote without its closing one.
    #[error("unterminated {quote} quote")]
    Unterminated {
        /// The quote (`'` or `"`).
        quote: char,
    },
    /// `$` or `` ` `` inside double quotes.
    #[error("shell expansion '{c}' is not supported; allowed: literal arguments")]
    Expansion {
        /// The character.
        c: char,
    },
    /// A backslash at the end of the line.
    #[error("a trailing backslash escapes nothing")]
    TrailingBackslash,
    /// Unquoted shell syntax beyond one simple command.
    #[error("shell syntax '{c}' is not supported; allowed: one command with its arguments (quote the character to pass it on)")]
    Syntax {
        /// The character.
        c: char,
    },
}

/// Splits `line` into words, or says in one line why it cannot.
pub(super) fn split(line: &str) -> Result<Vec<String>, WordsError> {
    let mut words = Vec::new();
    let mut word = String::new();
    // Whether a word has started: `''` is an empty word, not nothing.
    let mut started = false;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            c if c.is_whitespace() => {
                if started {
                    words.push(std::mem::take(&mut word));
                    started = false;
                }
            }
            '\'' => {
                started = true;
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(c) => word.push(c),
                        None => return Err(WordsError::Unterminated { quote: '\'' }),
                    }
                }
            }
            '"' => {
                started = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(c @ ('"' | '\\' | '$' | '`')) => word.push(c),
                            // A backslash before a newline joins the lines.
                            Some('\n') => {}
                            Some(c) => {
                                word.push('\\');
                                word.push(c);
                            }
                            None => return Err(WordsError::Unterminated { quote: '"' }),
                        },
                        Some(c @ ('$' | '`')) => return Err(WordsError::Expansion { c }),
                        Some(c) => word.push(c),
                        None => return Err(WordsError::Unterminated { quote: '"' }),
                    }
                }
            }
            '\\' => match chars.next() {
                // A backslash before a newline continues the line, as in pasted scripts.
                Some('\n') => {}
                Some(c) => {
                    started = true;
                    word.push(c);
                }
                None => return Err(WordsError::TrailingBackslash),
            },
            '|' | '&' | ';' | '<' | '>' | '(' | ')' | '$' | '`' | '*' | '?' | '[' | '#' | '~'
                if !(started && matches!(c, '#' | '~')) =>
            {
                return Err(WordsError::Syntax { c });
            }
            c => {
                started = true;
                word.push(c);
            }
        }
    }
    if started {
        words.push(word);
    }
    Ok(words)
}

#[cfg(test)]
mod tests {
    use super::split;

    fn ok(line: &str) -> Vec<String> {
        split(line).unwrap_or_else(|e| panic!("{line}: {e}"))
    }

    #[test]
    fn whitespace_and_quotes() {
        assert_eq!(
            ok("  schbench  -m 2\t-t 4 "),
            ["schbench", "-m", "2", "-t", "4"]
        );
        assert_eq!(ok("rt-app 'my file.json'"), ["rt-app", "my file.json"]);
        assert_eq!(ok(r#"a "b \"c\" \n" d"#), ["a", r#"b "c" \n"#, "d"]);
        assert_eq!(ok(r"a\ b c"), ["a b", "c"]);
        assert_eq!(ok("a '' b"), ["a", "", "b"]);
        assert_eq!(ok("x'y'\"z\""), ["xyz"]);
        assert_eq!(ok("a \\\n b"), ["a", "b"]);
        assert_eq!(ok("a-b~c#d"), ["a-b~c#d"]);
    }

    #[test]
    fn refuses_shell_syntax() {
        for bad in [
            "schbench | tee x",
            "netperf -l 10 &",
            "a; b",
            "a > f",
            "a $(b)",
            "a \"$HOME\"",
            "a 'b",
            "a \"b",
            "a \\",
            "a *.json",
            "a # comment",
        ] {
            assert!(split(bad).is_err(), "{bad}");
        }
        assert_eq!(ok("a '|;&>'"), ["a", "|;&>"]);
    }
}
