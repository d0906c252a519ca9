//! Receiving content: stream to a temporary file while hashing, then inline or move into place.

use super::{ContentConfig, location_of};
use base64::Engine;
use bytes::Bytes;
use futures::{Stream, StreamExt};
use palimpsest_events::resources::Stored;
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use tokio::io::AsyncWriteExt;

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

/// Why content could not be received.
#[derive(Debug, thiserror::Error)]
pub enum ContentError {
    /// The client's body broke off or could not be read.
    #[error("the request body could not be read: {0}")]
    Body(String),
    /// The store's folder could not be written.
    #[error("content store: {0}")]
    Io(#[from] std::io::Error),
}

/// Removes a temporary file when dropped, unless it was moved away.
struct TempFile(Option<PathBuf>);

impl Drop for TempFile {
    fn drop(&mut self) {
        if let Some(path) = self.0.take()
            && let Err(e) = std::fs::remove_file(&path)
            && e.kind() != std::io::ErrorKind::NotFound
        {
            tracing::warn!(path = %path.display(), error = %e, "temporary upload not removed");
        }
    }
}

/// Streams `body` into the store (see the module doc), holding one chunk at a time.
pub async fn receive<S, E>(config: &ContentConfig, body: S) -> Result<Upload, ContentError>
where
    S: Stream<Item = Result<Bytes, E>>,
    E: std::fmt::Display,
{
    let tmp_dir = config.dir.join(".tmp");
    tokio::fs::create_dir_all(&tmp_dir).await?;
    let temp = TempFile(Some(tmp_dir.join(uuid::Uuid::new_v4().to_string())));
    let path = temp.0.clone().unwrap_or_default();
    let mut file = tokio::fs::File::create(&path).await?;
    let mut hasher = Sha256::new();
    let mut size: u64 = 0;
    let mut body = std::pin::pin!(body);
    while let Some(chunk) = body.next().await {
        let chunk = chunk.map_err(|e| ContentError::Body(e.to_string()))?;
        hasher.update(&chunk);
        size += chunk.len() as u64;
        file.write_all(&chunk).await?;
    }
    file.flush().await?;
    drop(file);
    let sha256 = hex::encode(hasher.finalize());
    let stored = if size <= config.inline_max {
        let bytes = tokio::fs::read(&path).await?;
        Stored::Inline {
            base64: base64::engine::general_purpose::STANDARD.encode(bytes),
        }
    } else {
        place(config, temp, &path, &sha256).await?
    };
    Ok(Upload {
        sha256,
        size: size as i64,
        stored,
    })
}

/// [`receive`] for content already in memory (a property value, a description).
pub async fn receive_bytes(config: &ContentConfig, bytes: Bytes) -> Result<Upload, ContentError> {
    receive(
        config,
        futures::stream::once(async { Ok::<_, ContentError>(bytes) }),
    )
    .await
}

/// Moves the temporary file to the digest's location, unless that digest is already stored.
async fn place(
    config: &ContentConfig,
    mut temp: TempFile,
    path: &Path,
    sha256: &str,
) -> Result<Stored, ContentError> {
    let location = location_of(sha256);
    let target = config.dir.join(&location);
    if tokio::fs::try_exists(&target).await? {
        return Ok(Stored::Location { location });
    }
    if let Some(folder) = target.parent() {
        tokio::fs::create_dir_all(folder).await?;
    }
    tokio::fs::rename(path, &target).await?;
    temp.0 = None;
    Ok(Stored::Location { location })
}

#[cfg(test)]
mod tests {
    use super::*;

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
