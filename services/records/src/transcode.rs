//! A document's `data` written as JSON straight from its msgpack, with its `pk` set: what a list
//! answers for every row, without building a `serde_json::Value` tree per row and walking it
//! again to serialise (on a sync of 100,000 documents that tree was most of the server's time).
//!
//! The output is byte for byte what decoding into a `Value`, inserting `pk` and serialising
//! gives: `Value` objects keep their keys sorted, and `data` is sealed from a `Value`, so its
//! msgpack maps hold their keys in that order already; `pk` is written where the sorted order
//! puts it. Should a map ever hold its keys in another order (or twice), [`data_json`] says so
//! ([`TranscodeError::Unordered`]) and the caller takes the `Value` path, which sorts.

/// How deep maps and arrays may nest (`serde_json` reads at most 128 levels of JSON, so data
/// sealed from a request never comes near).
const MAX_DEPTH: usize = 512;

/// Why msgpack was not transcoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TranscodeError {
    /// A map's keys are not in sorted order (or repeat): the `Value` path must sort them.
    #[error("a map's keys are not in sorted order")]
    Unordered,
    /// The bytes are not msgpack of a JSON value (truncated, binary, extension types, a key
    /// that is not a string, invalid UTF-8, nested too deep).
    #[error("data is not msgpack of a JSON value: {0}")]
    Invalid(&'static str),
}

/// Appends the JSON of the msgpack map `plain` with `"pk": pk` set (replacing a `pk` it holds)
/// to `out`. On an error `out` may hold part of the value: the caller truncates it.
pub fn data_json(plain: &[u8], pk: &str, out: &mut Vec<u8>) -> Result<(), TranscodeError> {
    let mut reader = Reader { bytes: plain };
    let entries = match reader.byte()? {
        b @ 0x80..=0x8f => usize::from(b & 0x0f),
        0xde => reader.uint(2)? as usize,
        0xdf => reader.uint(4)? as usize,
        _ => return Err(TranscodeError::Invalid("data is not a map")),
    };
    out.push(b'{');
    let mut pk_written = false;
    let mut first = true;
    let mut previous: Option<&[u8]> = None;
    for _ in 0..entries {
        let name = reader.key()?;
        if previous.is_some_and(|p| p >= name) {
            return Err(TranscodeError::Unordered);
        }
        previous = Some(name);
        if name == b"pk" {
            reader.skip_value(1)?;
            continue;
        }
        if !pk_written && name > b"pk".as_slice() {
            write_pk(out, pk, &mut first);
            pk_written = true;
        }
        comma(out, &mut first);
        write_str(out, name)?;
        out.push(b':');
        reader.value(out, 1)?;
    }
    if !pk_written {
        write_pk(out, pk, &mut first);
    }
    out.push(b'}');
    if !reader.bytes.is_empty() {
        return Err(TranscodeError::Invalid("bytes after the map"));
    }
    Ok(())
}

fn comma(out: &mut Vec<u8>, first: &mut bool) {
    if !*first {
        out.push(b',');
    }
    *first = false;
}

fn write_pk(out: &mut Vec<u8>, pk: &str, first: &mut bool) {
    comma(out, first);
    out.extend_from_slice(b"\"pk\":");
    write_json(out, pk);
}

/// A value serde_json serialises (a string, a number): it cannot fail writing to a `Vec`.
fn write_json<T: serde::Serialize + ?Sized>(out: &mut Vec<u8>, value: &T) {
    if let Err(e) = serde_json::to_writer(&mut *out, value) {
        // Unreachable for strings and numbers into memory; kept visible should it change.
        tracing::error!(error = %e, "writing a JSON scalar failed");
    }
}

fn write_str(out: &mut Vec<u8>, bytes: &[u8]) -> Result<(), TranscodeError> {
    let text =
        std::str::from_utf8(bytes).map_err(|_| TranscodeError::Invalid("a string is not UTF-8"))?;
    write_json(out, text);
    Ok(())
}

/// A cursor over msgpack bytes.
struct Reader<'a> {
    bytes: &'a [u8],
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], TranscodeError> {
        if self.bytes.len() < n {
            return Err(TranscodeError::Invalid("truncated"));
        }
        let (head, rest) = self.bytes.split_at(n);
        self.bytes = rest;
        Ok(head)
    }

    fn byte(&mut self) -> Result<u8, TranscodeError> {
        Ok(self.take(1)?[0])
    }

    /// A big-endian unsigned integer of `n` bytes (1, 2, 4 or 8).
    fn uint(&mut self, n: usize) -> Result<u64, TranscodeError> {
        Ok(self
            .take(n)?
            .iter()
            .fold(0u64, |acc, b| (acc << 8) | u64::from(*b)))
    }

    /// The length of a string whose marker is `marker`, if it is one.
    fn str_len(&mut self, marker: u8) -> Result<Option<usize>, TranscodeError> {
        Ok(Some(match marker {
            0xa0..=0xbf => usize::from(marker & 0x1f),
            0xd9 => self.uint(1)? as usize,
            0xda => self.uint(2)? as usize,
            0xdb => self.uint(4)? as usize,
            _ => return Ok(None),
        }))
    }

    /// A map key: a string's bytes.
    fn key(&mut self) -> Result<&'a [u8], TranscodeError> {
        let marker = self.byte()?;
        match self.str_len(marker)? {
            Some(len) => self.take(len),
            None => Err(TranscodeError::Invalid("a map key is not a string")),
        }
    }

    /// The length of an array or map whose marker is `marker`: (entries, is a map).
    fn container(&mut self, marker: u8) -> Result<Option<(usize, bool)>, TranscodeError> {
        Ok(Some(match marker {
            0x80..=0x8f => (usize::from(marker & 0x0f), true),
            0x90..=0x9f => (usize::from(marker & 0x0f), false),
            0xdc => (self.uint(2)? as usize, false),
            0xdd => (self.uint(4)? as usize, false),
            0xde => (self.uint(2)? as usize, true),
            0xdf => (self.uint(4)? as usize, true),
            _ => return Ok(None),
        }))
    }

    /// Writes the next value as JSON.
    fn value(&mut self, out: &mut Vec<u8>, depth: usize) -> Result<(), TranscodeError> {
        if depth > MAX_DEPTH {
            return Err(TranscodeError::Invalid("nested too deep"));
        }
        let marker = self.byte()?;
        if let Some(len) = self.str_len(marker)? {
            let bytes = self.take(len)?;
            return write_str(out, bytes);
        }
        if let Some((entries, map)) = self.container(marker)? {
            return self.container_value(out, entries, map, depth);
        }
        match marker {
            0x00..=0x7f => write_json(out, &u64::from(marker)),
            0xe0..=0xff => write_json(out, &i64::from(marker as i8)),
            0xc0 => out.extend_from_slice(b"null"),
            0xc2 => out.extend_from_slice(b"false"),
            0xc3 => out.extend_from_slice(b"true"),
            0xca => {
                let bits = self.uint(4)? as u32;
                write_json(out, &f64::from(f32::from_bits(bits)));
            }
            0xcb => write_json(out, &f64::from_bits(self.uint(8)?)),
            0xcc => write_json(out, &self.uint(1)?),
            0xcd => write_json(out, &self.uint(2)?),
            0xce => write_json(out, &self.uint(4)?),
            0xcf => write_json(out, &self.uint(8)?),
            0xd0 => write_json(out, &i64::from(self.uint(1)? as u8 as i8)),
            0xd1 => write_json(out, &i64::from(self.uint(2)? as u16 as i16)),
            0xd2 => write_json(out, &i64::from(self.uint(4)? as u32 as i32)),
            0xd3 => write_json(out, &(self.uint(8)? as i64)),
            _ => return Err(TranscodeError::Invalid("binary or extension value")),
        }
        Ok(())
    }

    fn container_value(
        &mut self,
        out: &mut Vec<u8>,
        entries: usize,
        map: bool,
        depth: usize,
    ) -> Result<(), TranscodeError> {
        out.push(if map { b'{' } else { b'[' });
        let mut previous: Option<&[u8]> = None;
        for i in 0..entries {
            if i > 0 {
                out.push(b',');
            }
            if map {
                let name = self.key()?;
                if previous.is_some_and(|p| p >= name) {
                    return Err(TranscodeError::Unordered);
                }
                previous = Some(name);
                write_str(out, name)?;
                out.push(b':');
            }
            self.value(out, depth + 1)?;
        }
        out.push(if map { b'}' } else { b']' });
        Ok(())
    }

    /// Skips the next value (a `pk` the data holds, replaced by the row's).
    fn skip_value(&mut self, depth: usize) -> Result<(), TranscodeError> {
        let mut sink = Vec::new();
        self.value(&mut sink, depth)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::{Value, json};

    /// What lists answered before: decode into a `Value`, set `pk`, serialise.
    fn through_value(plain: &[u8], pk: &str) -> Vec<u8> {
        let mut value: Value = rmp_serde::from_slice(plain).expect("decode");
        value["pk"] = json!(pk);
        serde_json::to_vec(&value).expect("json")
    }

    fn transcoded(plain: &[u8], pk: &str) -> Result<Vec<u8>, TranscodeError> {
        let mut out = Vec::new();
        data_json(plain, pk, &mut out).map(|()| out)
    }

    #[test]
    fn a_document_comes_out_as_the_value_path_wrote_it() {
        let data = json!({"clazz": "Article", "org": "demo", "v": 1_700_000_000_000_i64, "x": 0,
            "auteurs": ["Hugo", "Zola"], "taille": -3, "prix": 2.5, "petit": 0.1, "ok": true,
            "rien": null, "titre": "Les Misérables \"1862\"\n", "n": {"b": 1, "a": [1, {"z": 2}]},
            "grand": u64::MAX, "neg": i64::MIN, "pk": "ignored"});
        let plain = rmp_serde::to_vec_named(&data).expect("msgpack");
        assert_eq!(
            transcoded(&plain, "kYc").expect("transcode"),
            through_value(&plain, "kYc")
        );
    }

    #[test]
    fn pk_goes_first_last_or_between() {
        for data in [
            json!({}),
            json!({"a": 1}),
            json!({"z": 1}),
            json!({"a": 1, "z": 2}),
        ] {
            let plain = rmp_serde::to_vec_named(&data).expect("msgpack");
            assert_eq!(
                transcoded(&plain, "k").expect("transcode"),
                through_value(&plain, "k")
            );
        }
    }

    #[test]
    fn unsorted_keys_are_left_to_the_value_path() {
        // {"b": 1, "a": 2} as msgpack, keys in that order.
        let plain = [0x82, 0xa1, b'b', 0x01, 0xa1, b'a', 0x02];
        assert_eq!(transcoded(&plain, "k"), Err(TranscodeError::Unordered));
    }

    #[test]
    fn what_is_not_msgpack_of_json_is_refused() {
        assert!(matches!(
            transcoded(&[0x81, 0xa1], "k"),
            Err(TranscodeError::Invalid(_))
        ));
        assert!(matches!(
            transcoded(&[0x91, 0x01], "k"),
            Err(TranscodeError::Invalid(_))
        ));
        assert!(matches!(
            transcoded(&[0x81, 0xa1, b'a', 0xc4, 0x01, 0x00], "k"),
            Err(TranscodeError::Invalid(_))
        ));
        assert!(matches!(
            transcoded(&[0x81, 0x01, 0x02], "k"),
            Err(TranscodeError::Invalid(_))
        ));
    }

    fn json_value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(|n| json!(n)),
            any::<u64>().prop_map(|n| json!(n)),
            any::<f64>().prop_map(|f| json!(f)),
            any::<f32>().prop_map(|f| json!(f)),
            ".{0,40}".prop_map(Value::String),
        ];
        leaf.prop_recursive(4, 64, 8, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..8).prop_map(Value::Array),
                prop::collection::btree_map(".{0,6}", inner, 0..8)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    proptest! {
        #[test]
        fn any_json_document_transcodes_as_the_value_path_writes_it(
            fields in prop::collection::btree_map("[a-z]{0,4}", json_value(), 0..12),
            pk in "[A-Za-z0-9_-]{22}",
        ) {
            let data = Value::Object(fields.into_iter().collect());
            let plain = rmp_serde::to_vec_named(&data).expect("msgpack");
            prop_assert_eq!(transcoded(&plain, &pk).expect("transcode"), through_value(&plain, &pk));
        }
    }
}
