//! Stream names: which context, which kind of stream, which instance.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::fmt;

/// The name of one event stream: `context` (the bounded context, e.g. `pads`), `category`
/// (the kind of stream inside it, e.g. `pad`) and `key` (the instance id, any non-empty string).
///
/// The three parts are kept apart rather than joined into one string because ids of the
/// original systems may contain any character (Etherpad's `g.abc$name`, Deki paths), so no
/// separator is safe.
#[derive(
    Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
pub struct StreamName {
    /// The bounded context that owns the stream: `pads`, `docs`, `records`, `resources`, `atlas`.
    pub context: String,
    /// The kind of stream inside the context, e.g. `pad`, `section`, `entity`.
    pub category: String,
    /// The id of the instance, as the original system spells it.
    pub key: String,
}

/// Why a stream name was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StreamNameError {
    /// Context and category are lower-case words so they can stand in a NATS subject as they are.
    #[error("stream {part} `{value}` must be 1-64 characters of a-z, 0-9, `_` or `-`")]
    BadWord {
        /// Which part was wrong: `context` or `category`.
        part: &'static str,
        /// The refused value.
        value: String,
    },
    /// Keys may hold any character but must not be empty or absurdly long.
    #[error("stream key must be 1-1024 bytes, got {0} bytes")]
    BadKey(usize),
    /// A control character (a line break, U+0000, ...) in a key: NATS headers cannot carry it and
    /// Postgres `text` cannot store U+0000, so the log refuses such keys (see
    /// [`StreamName::check_carriable`]).
    #[error("stream key must not contain control characters (found U+{code:04X} at byte {at})")]
    ControlCharacter {
        /// The character's code point.
        code: u32,
        /// Its byte offset in the key.
        at: usize,
    },
}

fn word_ok(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 64
        && s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-')
}

impl StreamName {
    /// Builds a stream name, checking each part so that every stored name can become a subject.
    pub fn new(
        context: impl Into<String>,
        category: impl Into<String>,
        key: impl Into<String>,
    ) -> Result<Self, StreamNameError> {
        let (context, category, key) = (context.into(), category.into(), key.into());
        if !word_ok(&context) {
            return Err(StreamNameError::BadWord {
                part: "context",
                value: context,
            });
        }
        if !word_ok(&category) {
            return Err(StreamNameError::BadWord {
                part: "category",
                value: category,
            });
        }
        if key.is_empty() || key.len() > 1024 {
            return Err(StreamNameError::BadKey(key.len()));
        }
        Ok(StreamName {
            context,
            category,
            key,
        })
    }

    /// Checks that every process downstream of the log can carry this name: no control character
    /// in the key (line breaks cannot stand in a NATS header, U+0000 not in Postgres `text`).
    /// [`StreamName::new`] does not check it, so names already in a log stay readable; the log
    /// checks it before every append.
    pub fn check_carriable(&self) -> Result<(), StreamNameError> {
        match self.key.char_indices().find(|(_, c)| c.is_control()) {
            Some((at, c)) => Err(StreamNameError::ControlCharacter { code: c as u32, at }),
            None => Ok(()),
        }
    }

    /// Parses the `context/category/key` form printed by [`fmt::Display`] (the key may contain `/`).
    pub fn parse(s: &str) -> Result<Self, StreamNameError> {
        let mut parts = s.splitn(3, '/');
        let context = parts.next().unwrap_or_default();
        let category = parts.next().unwrap_or_default();
        let key = parts.next().unwrap_or_default();
        StreamName::new(context, category, key)
    }
}

impl fmt::Display for StreamName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}/{}", self.context, self.category, self.key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_and_parse_round_trip_keys_with_slashes() {
        let s = StreamName::new("pads", "pad", "g.abc$my/pad").expect("valid");
        assert_eq!(s.to_string(), "pads/pad/g.abc$my/pad");
        assert_eq!(StreamName::parse(&s.to_string()), Ok(s));
    }

    #[test]
    fn refuses_bad_words_and_empty_keys() {
        assert!(StreamName::new("Pads", "pad", "x").is_err());
        assert!(StreamName::new("pads", "p.d", "x").is_err());
        assert!(StreamName::new("pads", "pad", "").is_err());
        assert!(StreamName::parse("pads/pad").is_err());
    }

    #[test]
    fn keys_with_control_characters_cannot_be_carried() {
        for key in ["\n", "a\nb", "a\rb", "a\u{0}b", "a\u{7f}", "a\u{85}"] {
            let s = StreamName::new("pads", "mapper", key).expect("readable");
            assert!(s.check_carriable().is_err(), "{key:?}");
        }
        let s = StreamName::new("pads", "pad", "g.abc$my pad/é\u{2028}").expect("valid");
        assert_eq!(s.check_carriable(), Ok(()));
    }
}
