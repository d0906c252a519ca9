//! The context's streams and how their keys are spelled. Keys hold only codes, class names and
//! base64url hashes (no `:` inside a part, no control characters), so they split back unambiguously
//! and can stand in NATS subjects and headers.

use palimpsest_events::StreamName;
use palimpsest_events::records::Scope;

/// The context's name: stream prefix, URL prefix and read-model schema.
pub const CONTEXT: &str = "records";

fn stream(category: &str, key: String) -> StreamName {
    StreamName {
        context: CONTEXT.to_owned(),
        category: category.to_owned(),
        key,
    }
}

/// Where one document lives: `[org, clazz, pk]`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct DocKey {
    /// Organisation code (`""` for `Hdr`).
    pub org: String,
    /// Class.
    pub clazz: String,
    /// Primary key.
    pub pk: String,
}

impl DocKey {
    /// `records/doc/<org>:<clazz>:<pk>`.
    pub fn stream(&self) -> StreamName {
        stream("doc", format!("{}:{}:{}", self.org, self.clazz, self.pk))
    }

    /// The owner name unique locks hold: `[org, clazz, pk]`.
    pub fn owner(&self) -> [String; 3] {
        [self.org.clone(), self.clazz.clone(), self.pk.clone()]
    }
}

/// One value of a unique index in its scope: a lock stream of its own, whose state names the
/// owner, so two writers claiming it conflict on the append and one wins.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct UniqueKey {
    /// `G` (every organisation) or `O.<org>`.
    pub scope: String,
    /// Class.
    pub clazz: String,
    /// Index name.
    pub index: String,
    /// sha16 of the value.
    pub value: String,
}

impl UniqueKey {
    /// The lock of `value` (a sha16) of index `index` of `clazz`, for a document of `org`.
    pub fn new(scope: Scope, org: &str, clazz: &str, index: &str, value: &str) -> UniqueKey {
        UniqueKey {
            scope: match scope {
                Scope::G => "G".to_owned(),
                Scope::O => format!("O.{org}"),
            },
            clazz: clazz.to_owned(),
            index: index.to_owned(),
            value: value.to_owned(),
        }
    }

    /// `records/unique/<scope>:<clazz>:<index>:<sha16>`.
    pub fn stream(&self) -> StreamName {
        stream(
            "unique",
            format!(
                "{}:{}:{}:{}",
                self.scope, self.clazz, self.index, self.value
            ),
        )
    }
}

/// `records/class/<clazz>`.
pub fn class(clazz: &str) -> StreamName {
    stream("class", clazz.to_owned())
}

/// `records/token/<org>`.
pub fn token(org: &str) -> StreamName {
    stream("token", org.to_owned())
}

/// `records/ftp/<org>`.
pub fn ftp(org: &str) -> StreamName {
    stream("ftp", org.to_owned())
}

/// `records/task/<org>:<k0>`.
pub fn task(org: &str, k0: &str) -> StreamName {
    stream("task", format!("{org}:{k0}"))
}

/// The document key of a `records/doc/…` stream key.
pub fn parse_doc(key: &str) -> Option<DocKey> {
    let mut parts = key.splitn(3, ':');
    Some(DocKey {
        org: parts.next()?.to_owned(),
        clazz: parts.next()?.to_owned(),
        pk: parts.next()?.to_owned(),
    })
}
