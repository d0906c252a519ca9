//! `_bulk_get`'s multipart answer, byte for byte as CouchDB 3 writes it (`chttpd_db`'s
//! `send_docs_multipart_bulk_get` and `couch_httpd_multipart`'s stream encoder), for clients
//! that ask for `multipart/mixed` (or `multipart/related`) and not for JSON.
//!
//! Each revision is one part of the outer body: `application/json` when none of its attachments
//! carries its bytes, otherwise a `multipart/related` part (with `X-Doc-Id` and `X-Rev-Id`)
//! holding the JSON, whose carried attachments are stubs marked `"follows": true`, then one part
//! per such attachment with `Content-Disposition: attachment; filename="…"`, in the order the
//! JSON lists them. Errors are `application/json; error="true"` parts. Boundaries are random.

use crate::delivery::Following;
use axum::http::{HeaderMap, header};

/// One part of the answer.
pub enum Part {
    /// A revision: its JSON, its id and rev for the headers, and the attachments that follow.
    Doc {
        /// The document id.
        id: String,
        /// The revision.
        rev: String,
        /// The revision's JSON.
        json: String,
        /// The attachments whose bytes follow the JSON.
        following: Vec<Following>,
    },
    /// An error object's JSON.
    Error(String),
}

/// The multipart type a request asks for instead of JSON, as CouchDB reads `Accept`: only when
/// it does not accept `application/json` and accepts `multipart/mixed` (preferred) or
/// `multipart/related`.
pub fn asked(headers: &HeaderMap) -> Option<&'static str> {
    let accept: Vec<&str> = headers
        .get_all(header::ACCEPT)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .collect();
    let accept = if accept.is_empty() {
        "*/*".to_owned()
    } else {
        accept.join(",")
    };
    if accepts(&accept, "application/json") {
        return None;
    }
    ["multipart/mixed", "multipart/related"]
        .into_iter()
        .find(|t| accepts(&accept, t))
}

/// Whether the request's `Accept` names `wanted` itself (not through a wildcard) with a
/// non-zero quality: how a replicator asks `GET …?open_revs=` for `multipart/mixed` (CouchDB
/// also answers multipart to `*/*`; we keep JSON for that, which every JSON client expects).
pub fn named(headers: &HeaderMap, wanted: &str) -> bool {
    headers
        .get_all(header::ACCEPT)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(media_ranges)
        .any(|(media, quality)| media == wanted && quality > 0.0)
}

/// The media ranges of an `Accept` value, each lower-cased with its quality (1 unless a `q=`
/// parameter says otherwise).
fn media_ranges(accept: &str) -> impl Iterator<Item = (String, f32)> + '_ {
    accept.split(',').map(|range| {
        let mut pieces = range.split(';');
        let media = pieces.next().unwrap_or("").trim().to_ascii_lowercase();
        let quality = pieces
            .filter_map(|p| p.trim().strip_prefix("q="))
            .find_map(|q| q.trim().parse::<f32>().ok())
            .unwrap_or(1.0);
        (media, quality)
    })
}

/// Whether an `Accept` value accepts `wanted` (mochiweb's `accepts_content_type`): listed, or
/// its `type/*` or `*/*`, with a non-zero quality, and neither refused with `q=0`.
fn accepts(accept: &str, wanted: &str) -> bool {
    let main = wanted.split('/').next().unwrap_or(wanted);
    let family = format!("{main}/*");
    let mut any = false;
    for (media, quality) in media_ranges(accept) {
        let named = media == wanted || media == family;
        if named && quality <= 0.0 {
            return false;
        }
        if quality > 0.0 && (named || media == "*/*") {
            any = true;
        }
    }
    any
}

/// A fresh boundary (CouchDB's is `--` and a uuid).
fn boundary() -> String {
    format!("--{}", uuid::Uuid::new_v4().simple())
}

/// The `Content-Type` value and the body of the answer holding `parts`.
pub fn body(kind: &str, parts: &[Part]) -> (String, Vec<u8>) {
    let outer = Outer::new();
    let mut out = Vec::new();
    for part in parts {
        out.extend_from_slice(&outer.part(part));
    }
    if !parts.is_empty() {
        out.extend_from_slice(outer.end().as_bytes());
    }
    (outer.content_type(kind), out)
}

/// A multipart answer written a part at a time (`_bulk_get` streams its parts): its outer
/// boundary, chosen before the first part.
pub struct Outer {
    boundary: String,
}

impl Outer {
    /// A fresh boundary.
    pub fn new() -> Outer {
        Outer {
            boundary: boundary(),
        }
    }

    /// The answer's `Content-Type` value for `kind` (`multipart/mixed` or `related`).
    pub fn content_type(&self, kind: &str) -> String {
        format!("{kind}; boundary=\"{}\"", self.boundary)
    }

    /// The bytes of one part, its delimiter first.
    pub fn part(&self, part: &Part) -> Vec<u8> {
        let mut out = Vec::new();
        out.extend_from_slice(format!("\r\n--{}", self.boundary).as_bytes());
        match part {
            Part::Error(json) => {
                out.extend_from_slice(
                    b"\r\nContent-Type: application/json; error=\"true\"\r\n\r\n",
                );
                out.extend_from_slice(json.as_bytes());
            }
            Part::Doc {
                json, following, ..
            } if following.is_empty() => {
                out.extend_from_slice(b"\r\nContent-Type: application/json\r\n\r\n");
                out.extend_from_slice(json.as_bytes());
            }
            Part::Doc {
                id,
                rev,
                json,
                following,
            } => related(&mut out, id, rev, json, following),
        }
        out
    }

    /// The close delimiter, written after the last part (an answer without parts has none).
    pub fn end(&self) -> String {
        format!("\r\n--{}--\r\n", self.boundary)
    }
}

/// A `multipart/related` part: the JSON, then each attachment that follows.
fn related(out: &mut Vec<u8>, id: &str, rev: &str, json: &str, following: &[Following]) {
    let inner = boundary();
    out.extend_from_slice(
        format!(
            "\r\nX-Doc-Id: {}\r\nX-Rev-Id: {}\r\nContent-Type: multipart/related; boundary=\"{inner}\"\r\n\r\n",
            header_safe(id),
            header_safe(rev)
        )
        .as_bytes(),
    );
    out.extend_from_slice(
        format!("--{inner}\r\nContent-Type: application/json\r\n\r\n").as_bytes(),
    );
    out.extend_from_slice(json.as_bytes());
    out.extend_from_slice(format!("\r\n--{inner}").as_bytes());
    for attachment in following {
        out.extend_from_slice(
            format!(
                "\r\nContent-Disposition: attachment; {}\r\nContent-Type: {}\r\nContent-Length: {}\r\n\r\n",
                filename(&attachment.name),
                header_safe(&attachment.content_type),
                attachment.data.len()
            )
            .as_bytes(),
        );
        out.extend_from_slice(&attachment.data);
        out.extend_from_slice(format!("\r\n--{inner}").as_bytes());
    }
    out.extend_from_slice(b"--");
}

/// A header value with control characters (which would end the header) as `%XX`.
fn header_safe(text: &str) -> String {
    if text.chars().any(char::is_control) {
        crate::streams::escape(text)
    } else {
        text.to_owned()
    }
}

/// `filename="name"` (quotes and backslashes escaped), or RFC 2231's `filename*=UTF-8''…` for
/// a name with control characters.
fn filename(name: &str) -> String {
    if name.chars().any(char::is_control) {
        let mut encoded = String::new();
        for byte in name.bytes() {
            if byte.is_ascii_alphanumeric() || b"!#$&+-.^_`|~".contains(&byte) {
                encoded.push(byte as char);
            } else {
                encoded.push_str(&format!("%{byte:02X}"));
            }
        }
        return format!("filename*=UTF-8''{encoded}");
    }
    let escaped = name.replace('\\', "\\\\").replace('"', "\\\"");
    format!("filename=\"{escaped}\"")
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn accept(value: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(
            header::ACCEPT,
            HeaderValue::from_str(value).expect("header"),
        );
        headers
    }

    #[test]
    fn multipart_only_when_json_is_not_accepted() {
        assert_eq!(asked(&accept("multipart/mixed")), Some("multipart/mixed"));
        assert_eq!(
            asked(&accept("multipart/related")),
            Some("multipart/related")
        );
        assert_eq!(asked(&accept("application/json")), None);
        assert_eq!(asked(&accept("multipart/mixed, application/json")), None);
        assert_eq!(asked(&accept("*/*")), None);
        assert_eq!(asked(&HeaderMap::new()), None);
        assert_eq!(
            asked(&accept("multipart/mixed, application/json;q=0")),
            Some("multipart/mixed")
        );
    }

    #[test]
    fn open_revs_is_multipart_only_when_multipart_is_named() {
        assert!(named(&accept("multipart/mixed"), "multipart/mixed"));
        assert!(named(
            &accept("application/json, multipart/mixed;q=0.5"),
            "multipart/mixed"
        ));
        assert!(!named(&accept("*/*"), "multipart/mixed"));
        assert!(!named(&accept("multipart/mixed;q=0"), "multipart/mixed"));
        assert!(!named(&HeaderMap::new(), "multipart/mixed"));
    }

    #[test]
    fn parts_are_written_as_couchdb_writes_them() {
        let parts = [
            Part::Doc {
                id: "a".into(),
                rev: "1-x".into(),
                json: r#"{"_id":"a"}"#.into(),
                following: vec![],
            },
            Part::Doc {
                id: "b".into(),
                rev: "2-y".into(),
                json: r#"{"_id":"b"}"#.into(),
                following: vec![Following {
                    name: "say \"hi\".txt".into(),
                    content_type: "text/plain".into(),
                    data: b"hi".to_vec(),
                }],
            },
            Part::Error(r#"{"error":"not_found"}"#.into()),
        ];
        let (kind, body) = body("multipart/mixed", &parts);
        let outer = kind
            .strip_prefix("multipart/mixed; boundary=\"")
            .and_then(|b| b.strip_suffix('"'))
            .expect("boundary");
        let text = String::from_utf8(body).expect("utf-8");
        let inner_at = text.find("boundary=\"--").expect("inner") + 10;
        let inner = &text[inner_at..inner_at + 34];
        assert_eq!(
            text,
            format!(
                "\r\n--{outer}\r\nContent-Type: application/json\r\n\r\n{{\"_id\":\"a\"}}\
                 \r\n--{outer}\r\nX-Doc-Id: b\r\nX-Rev-Id: 2-y\r\nContent-Type: multipart/related; boundary=\"{inner}\"\r\n\r\n\
                 --{inner}\r\nContent-Type: application/json\r\n\r\n{{\"_id\":\"b\"}}\r\n--{inner}\
                 \r\nContent-Disposition: attachment; filename=\"say \\\"hi\\\".txt\"\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\nhi\r\n--{inner}--\
                 \r\n--{outer}\r\nContent-Type: application/json; error=\"true\"\r\n\r\n{{\"error\":\"not_found\"}}\
                 \r\n--{outer}--\r\n"
            )
        );
    }
}
