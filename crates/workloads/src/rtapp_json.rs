//! The JSON dialect rt-app reads: json-c's tokener in its default (non-strict) mode, as
//! `json_object_from_file` runs it, with objects kept in file order.
//!
//! rt-app's events are an object's keys in file order, so the reader keeps that order
//! (serde_json's `preserve_order` would change the order of every JSON fairsim writes,
//! through feature unification, so this small reader is fairsim's own). What json-c
//! accepts beyond strict JSON, and this reader with it:
//! - comments, wherever whitespace may be: `/* ... */` and `// ...` to the end of the
//!   line (json-c's `comment_start` state; there is no `#` form);
//! - strings in single quotes as well as double quotes;
//! - `true`, `false` and `null` in any case;
//! - a trailing comma before `]` or `}`.
//!
//! json-c's `json_object_object_add` replaces the value of a key already present and keeps
//! the key where it first appeared, so a repeated key is one entry with the last value;
//! the reader does the same and lists the repeated keys, because rt-app users repeat
//! events by suffix (`run0`, `run1`) precisely because a repeated `run` is one event.
//! Integers are json-c's `json_type_int` (64-bit); a number with a fraction or an
//! exponent is a double, which rt-app refuses wherever it reads an integer.

/// A JSON value with objects in file order.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Json {
    /// `null`.
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// An integer literal.
    Int(i64),
    /// A number with a fraction or an exponent (kept as text: nothing decides on it).
    Double(String),
    /// A string.
    Str(String),
    /// An array.
    Array(Vec<Json>),
    /// An object: keys in the order they first appeared.
    Object(Vec<(String, Json)>),
}

impl Json {
    /// The type's name, for messages.
    pub(crate) fn kind(&self) -> &'static str {
        match self {
            Json::Null => "null",
            Json::Bool(_) => "a boolean",
            Json::Int(_) => "an integer",
            Json::Double(_) => "a floating-point number",
            Json::Str(_) => "a string",
            Json::Array(_) => "an array",
            Json::Object(_) => "an object",
        }
    }
}

/// Objects nest at most this deep (json-c's default `JSON_TOKENER_DEFAULT_DEPTH`).
const MAX_DEPTH: usize = 32;

/// A parsed document and the object keys that were given more than once (as dotted
/// paths).
#[derive(Debug)]
pub(crate) struct Document {
    /// The root value.
    pub(crate) root: Json,
    /// Paths of repeated keys, in the order their repetition was read.
    pub(crate) repeated: Vec<String>,
}

/// Why a text is not rt-app's JSON, and on which line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {problem}")]
pub(crate) struct JsonError {
    /// The line (from 1).
    line: usize,
    /// What is wrong there.
    problem: JsonProblem,
}

/// What is wrong with a JSON text where [`JsonError`] points.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum JsonProblem {
    /// Text after the root value.
    #[error("text after the end of the document")]
    TrailingText,
    /// A `/*` comment without its `*/`.
    #[error("a /* comment is not closed")]
    OpenComment,
    /// A `/` that starts no comment.
    #[error("a lone '/' (comments are /* */ or //)")]
    LoneSlash,
    /// Values nested deeper than allowed.
    #[error("nested deeper than {max} levels")]
    TooDeep {
        /// The most levels.
        max: usize,
    },
    /// The text ends inside a value.
    #[error("unexpected end of the document")]
    UnexpectedEnd,
    /// Something other than a value where one belongs.
    #[error("expected a value")]
    ExpectedValue,
    /// A bare word other than `true`, `false` or `null`.
    #[error("unexpected word '{word}' (a string needs quotes)")]
    BareWord {
        /// The word.
        word: String,
    },
    /// A number that does not parse.
    #[error("'{text}' is not a number")]
    NotANumber {
        /// Its text.
        text: String,
    },
    /// An integer out of 64 bits.
    #[error("'{text}' is not a 64-bit integer")]
    NotAnI64 {
        /// Its text.
        text: String,
    },
    /// A string without its closing quote.
    #[error("a string is not closed")]
    OpenString,
    /// A string whose bytes are not UTF-8.
    #[error("a string is not UTF-8")]
    NotUtf8,
    /// A `\\u` escape without four hex digits.
    #[error("a \\u escape needs four hex digits")]
    UnicodeEscape,
    /// Something other than `,` or `]` after an array's element.
    #[error("expected ',' or ']' in an array")]
    ArraySeparator,
    /// A key without its `:`.
    #[error("expected ':' after the key '{key}'")]
    KeyColon {
        /// The key.
        key: String,
    },
    /// Something other than `,` or `}` after an object's member.
    #[error("expected ',' or '}}' in an object")]
    ObjectSeparator,
    /// Something other than a quoted key or `}` where a member starts.
    #[error("expected a quoted key or '}}' in an object")]
    ExpectedKey,
}

/// Parses `text`, or says where and why it is not rt-app's JSON (`line N: ...`).
pub(crate) fn parse(text: &str) -> Result<Document, JsonError> {
    let mut p = Parser {
        s: text.as_bytes(),
        pos: 0,
        repeated: Vec::new(),
    };
    p.ws()?;
    let root = p.value(0, "")?;
    p.ws()?;
    if p.pos < p.s.len() {
        return Err(p.err(JsonProblem::TrailingText));
    }
    Ok(Document {
        root,
        repeated: p.repeated,
    })
}

struct Parser<'a> {
    s: &'a [u8],
    pos: usize,
    repeated: Vec<String>,
}

impl Parser<'_> {
    fn err(&self, problem: JsonProblem) -> JsonError {
        let line = 1 + self.s[..self.pos.min(self.s.len())]
            .iter()
            .filter(|&&b| b == b'\n')
            .count();
        JsonError { line, problem }
    }

    fn peek(&self) -> Option<u8> {
        self.s.get(self.pos).copied()
    }

    /// Skips whitespace and comments.
    fn ws(&mut self) -> Result<(), JsonError> {
        loop {
            match self.peek() {
                Some(b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c) => self.pos += 1,
                Some(b'/') => match self.s.get(self.pos + 1) {
                    Some(b'/') => {
                        while self.peek().is_some_and(|b| b != b'\n') {
                            self.pos += 1;
                        }
                    }
                    Some(b'*') => {
                        let start = self.pos;
                        self.pos += 2;
                        loop {
                            match self.peek() {
                                None => {
                                    self.pos = start;
                                    return Err(self.err(JsonProblem::OpenComment));
                                }
                                Some(b'*') if self.s.get(self.pos + 1) == Some(&b'/') => {
                                    self.pos += 2;
                                    break;
                                }
                                Some(_) => self.pos += 1,
                            }
                        }
                    }
                    _ => return Err(self.err(JsonProblem::LoneSlash)),
                },
                _ => return Ok(()),
            }
        }
    }

    fn value(&mut self, depth: usize, path: &str) -> Result<Json, JsonError> {
        if depth > MAX_DEPTH {
            return Err(self.err(JsonProblem::TooDeep { max: MAX_DEPTH }));
        }
        match self.peek() {
            None => Err(self.err(JsonProblem::UnexpectedEnd)),
            Some(b'{') => self.object(depth, path),
            Some(b'[') => self.array(depth, path),
            Some(q @ (b'"' | b'\'')) => self.string(q).map(Json::Str),
            Some(b'-' | b'0'..=b'9') => self.number(),
            Some(b) if b.is_ascii_alphabetic() => self.literal(),
            Some(_) => Err(self.err(JsonProblem::ExpectedValue)),
        }
    }

    fn literal(&mut self) -> Result<Json, JsonError> {
        let start = self.pos;
        while self.peek().is_some_and(|b| b.is_ascii_alphabetic()) {
            self.pos += 1;
        }
        let word = String::from_utf8_lossy(&self.s[start..self.pos]).to_ascii_lowercase();
        match word.as_str() {
            "true" => Ok(Json::Bool(true)),
            "false" => Ok(Json::Bool(false)),
            "null" => Ok(Json::Null),
            _ => {
                self.pos = start;
                Err(self.err(JsonProblem::BareWord {
                    word: word.to_string(),
                }))
            }
        }
    }

    fn number(&mut self) -> Result<Json, JsonError> {
        let start = self.pos;
        if self.peek() == Some(b'-') {
            self.pos += 1;
        }
        let mut double = false;
        while let Some(b) = self.peek() {
            match b {
                b'0'..=b'9' => {}
                b'.' | b'e' | b'E' | b'+' => double = true,
                b'-' if double => {}
                _ => break,
            }
            self.pos += 1;
        }
        let text = std::str::from_utf8(&self.s[start..self.pos]).unwrap_or("");
        if double {
            if text.parse::<f64>().is_err() {
                self.pos = start;
                return Err(self.err(JsonProblem::NotANumber {
                    text: text.to_string(),
                }));
            }
            return Ok(Json::Double(text.to_string()));
        }
        text.parse::<i64>().map(Json::Int).map_err(|_| {
            self.pos = start;
            self.err(JsonProblem::NotAnI64 {
                text: text.to_string(),
            })
        })
    }

    fn string(&mut self, quote: u8) -> Result<String, JsonError> {
        let start = self.pos;
        self.pos += 1;
        let mut out: Vec<u8> = Vec::new();
        loop {
            let Some(b) = self.peek() else {
                self.pos = start;
                return Err(self.err(JsonProblem::OpenString));
            };
            self.pos += 1;
            match b {
                _ if b == quote => break,
                b'\\' => {
                    let Some(e) = self.peek() else { continue };
                    self.pos += 1;
                    match e {
                        b'n' => out.push(b'\n'),
                        b't' => out.push(b'\t'),
                        b'r' => out.push(b'\r'),
                        b'b' => out.push(8),
                        b'f' => out.push(12),
                        b'u' => {
                            let hex = self.s.get(self.pos..self.pos + 4).unwrap_or(b"");
                            let code = std::str::from_utf8(hex)
                                .ok()
                                .and_then(|h| u32::from_str_radix(h, 16).ok());
                            let Some(code) = code else {
                                return Err(self.err(JsonProblem::UnicodeEscape));
                            };
                            self.pos += 4;
                            let c = char::from_u32(code).unwrap_or('\u{fffd}');
                            let mut buf = [0u8; 4];
                            out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
                        }
                        other => out.push(other),
                    }
                }
                _ => out.push(b),
            }
        }
        String::from_utf8(out).map_err(|_| self.err(JsonProblem::NotUtf8))
    }

    fn array(&mut self, depth: usize, path: &str) -> Result<Json, JsonError> {
        self.pos += 1;
        let mut items = Vec::new();
        loop {
            self.ws()?;
            if self.peek() == Some(b']') {
                self.pos += 1;
                return Ok(Json::Array(items));
            }
            items.push(self.value(depth + 1, path)?);
            self.ws()?;
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b']') => {}
                _ => return Err(self.err(JsonProblem::ArraySeparator)),
            }
        }
    }

    fn object(&mut self, depth: usize, path: &str) -> Result<Json, JsonError> {
        self.pos += 1;
        let mut fields: Vec<(String, Json)> = Vec::new();
        loop {
            self.ws()?;
            match self.peek() {
                Some(b'}') => {
                    self.pos += 1;
                    return Ok(Json::Object(fields));
                }
                Some(q @ (b'"' | b'\'')) => {
                    let key = self.string(q)?;
                    self.ws()?;
                    if self.peek() != Some(b':') {
                        return Err(self.err(JsonProblem::KeyColon { key: key.clone() }));
                    }
                    self.pos += 1;
                    self.ws()?;
                    let sub = if path.is_empty() {
                        key.clone()
                    } else {
                        format!("{path}.{key}")
                    };
                    let v = self.value(depth + 1, &sub)?;
                    match fields.iter_mut().find(|(k, _)| *k == key) {
                        Some(slot) => {
                            slot.1 = v;
                            self.repeated.push(sub);
                        }
                        None => fields.push((key, v)),
                    }
                    self.ws()?;
                    match self.peek() {
                        Some(b',') => self.pos += 1,
                        Some(b'}') => {}
                        _ => return Err(self.err(JsonProblem::ObjectSeparator)),
                    }
                }
                _ => return Err(self.err(JsonProblem::ExpectedKey)),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_order_comments_and_json_c_leniency() {
        let d = parse("/* head */ {'b': 1, // line\n \"a\": [1, 2,], \"b\": TRUE, \"c\": -2.5e3,}")
            .unwrap();
        let Json::Object(f) = d.root else {
            panic!("object")
        };
        let keys: Vec<&str> = f.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(keys, ["b", "a", "c"]);
        assert_eq!(f[0].1, Json::Bool(true));
        assert_eq!(f[1].1, Json::Array(vec![Json::Int(1), Json::Int(2)]));
        assert_eq!(f[2].1, Json::Double("-2.5e3".into()));
        assert_eq!(d.repeated, ["b"]);
    }

    #[test]
    fn errors_name_the_line() {
        let parse = |t: &str| parse(t).map_err(|e| e.to_string());
        let e = parse("{\n\"a\": 1\n\"b\": 2}").unwrap_err();
        assert!(e.starts_with("line 3:"), "{e}");
        assert!(parse("{\"a\": /* open").unwrap_err().contains("not closed"));
        assert!(parse("{\"a\": yes}").unwrap_err().contains("'yes'"));
        assert!(parse("[1] x").is_err());
        let deep = "[".repeat(40);
        assert!(parse(&deep).unwrap_err().contains("deeper"));
    }
}
