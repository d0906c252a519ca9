//! Receiving content: the platform's store streams it to a temporary file while resources'
//! sha256 is computed, then keeps it inline or moves it into place.

use super::ContentConfig;
use base64::Engine;
use bytes::Bytes;
use futures::Stream;
use palimpsest_events::resources::Stored;
use palimpsest_web::content::{self, Content, ContentError, Hasher, Received};
use sha2::{Digest, Sha256};

/// Received content, ready to be named in a command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Upload {
    /// sha256, lower-case hex.
    pub sha256: String,
    /// Size in bytes.
    pub size: i64,
    /// Inline bytes or the location in the folder.
    pub stored: Stored,
}

/// resources' key: the sha256 of the content, lower-case hex (computed on the way in, and
/// again on the way out to check a stored file before it is served).
#[derive(Default)]
pub struct Sha256Hex(Sha256);

impl Hasher for Sha256Hex {
    type Digests = String;

    fn update(&mut self, chunk: &[u8]) {
        self.0.update(chunk);
    }

    fn finish(self) -> String {
        hex::encode(self.0.finalize())
    }

    fn key(sha256: &String) -> String {
        sha256.clone()
    }
}

/// An upload as resources' events name it.
fn upload(received: Received<String>) -> Upload {
    let stored = match received.content {
        Content::Inline(bytes) => Stored::Inline {
            base64: base64::engine::general_purpose::STANDARD.encode(bytes),
        },
        Content::Location(location) => Stored::Location { location },
    };
    Upload {
        sha256: received.digests,
        size: received.size as i64,
        stored,
    }
}

/// Streams `body` into the store (see the module doc), holding one chunk at a time.
pub async fn receive<S, E>(config: &ContentConfig, body: S) -> Result<Upload, ContentError>
where
    S: Stream<Item = Result<Bytes, E>>,
    E: std::fmt::Display,
{
    let received = content::receive(config, body, Sha256Hex(Sha256::new())).await?;
    Ok(upload(received))
}

/// [`receive`] for content already in memory (a property value, a description).
pub async fn receive_bytes(config: &ContentConfig, bytes: Bytes) -> Result<Upload, ContentError> {
    let received = content::receive_bytes(config, bytes.to_vec(), Sha256Hex(Sha256::new())).await?;
    Ok(upload(received))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn config(inline_max: u64) -> (ContentConfig, PathBuf) {
        let dir = std::env::temp_dir().join(format!("resources-content-{}", uuid::Uuid::new_v4()));
        (ContentConfig::new(dir.clone(), inline_max), dir)
    }

    #[tokio::test]
    async fn small_content_is_inline_and_large_content_is_stored_once_by_digest() {
        let (config, dir) = config(4);
        let small = receive_bytes(&config, Bytes::from_static(b"abc"))
            .await
            .expect("small");
        assert_eq!(small.size, 3);
        assert_eq!(
            small.sha256,
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(
            small.stored,
            Stored::Inline {
                base64: "YWJj".into()
            }
        );
        let chunks = futures::stream::iter(vec![
            Ok::<_, std::io::Error>(Bytes::from_static(b"hello ")),
            Ok(Bytes::from_static(b"world")),
        ]);
        let large = receive(&config, chunks).await.expect("large");
        let again = receive_bytes(&config, Bytes::from_static(b"hello world"))
            .await
            .expect("again");
        assert_eq!(large, again);
        let Stored::Location { location } = &large.stored else {
            panic!("expected a location: {large:?}");
        };
        let path = config.path_of(location).expect("path");
        assert_eq!(std::fs::read(path).expect("stored"), b"hello world");
        let temps = std::fs::read_dir(dir.join(".tmp")).expect("tmp").count();
        assert_eq!(temps, 0, "temporary files are removed");
        std::fs::remove_dir_all(dir).expect("cleanup");
    }

    #[tokio::test]
    async fn a_broken_body_leaves_no_file() {
        let (config, dir) = config(4);
        let chunks = futures::stream::iter(vec![
            Ok(Bytes::from_static(b"hello ")),
            Err(std::io::Error::other("reset")),
        ]);
        assert!(matches!(
            receive(&config, chunks).await,
            Err(ContentError::Body(_))
        ));
        assert_eq!(std::fs::read_dir(dir.join(".tmp")).expect("tmp").count(), 0);
        std::fs::remove_dir_all(dir).expect("cleanup");
    }
}
