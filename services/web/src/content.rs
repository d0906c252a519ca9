//! The content-addressed store every context keeps large bytes in (resources' file and property
//! content, docs' attachments): one folder, each content once, named by its digest.
//!
//! Bytes never travel whole through memory on the way in: [`receive`] streams a body to a
//! temporary file in `<folder>/.tmp` while a context's [`Hasher`] digests it, one chunk at a
//! time. Then, by size:
//! - up to [`ContentStore::inline_max`] bytes, the bytes are read back and returned, for the
//!   event to carry them (the temporary file is removed);
//! - above it, the file is renamed to `<key[0..2]>/<key>` ([`location_of`]), or removed if that
//!   key is already there: never copied twice. The event carries the location.
//!
//! A placed file is synced, and its folder after the rename, before [`receive`] returns: the
//! event that names it is durable once appended, and so are the bytes it names. A body that
//! breaks off, or a folder that cannot be written, leaves no temporary file: it is removed when
//! the receive fails. Files are created 0600 and folders 0700 (`crate::secret`'s modes): the
//! temporary file has its mode from its creation, and keeps it through the rename.
//!
//! What the key is (sha256 hex for resources, SHA-1 hex for docs) is the context's [`Hasher`];
//! whether a digest was stored before is its command's business (its content stream), not the
//! store's.
//!
//! Bytes going out are checked: [`open_verified`] and [`read_verified`] are the only ways a
//! context reads a stored file, and both hash it against the digest its event recorded before
//! anything is sent, so an altered file is never served ([`ServeError::Altered`], counted in
//! `palimpsest_content_digest_mismatches_total{context}`).

use futures::{Stream, StreamExt};
use std::io::{Read, Seek};
use std::path::{Path, PathBuf};
use tokio::io::AsyncWriteExt;

/// Content larger than this is never inline, whatever the setting: an event carries its bytes
/// as base64 and must stay well under NATS' 1 MiB message limit.
pub const INLINE_CEILING: u64 = 512 * 1024;

/// A folder of content and the size up to which content stays inline instead.
#[derive(Debug, Clone)]
pub struct ContentStore {
    /// The store's folder.
    pub dir: PathBuf,
    /// Content up to this many bytes is stored inline.
    pub inline_max: u64,
}

impl ContentStore {
    /// A store in `dir` keeping up to `inline_max` bytes inline (capped at [`INLINE_CEILING`]).
    pub fn new(dir: PathBuf, inline_max: u64) -> Self {
        ContentStore {
            dir,
            inline_max: inline_max.min(INLINE_CEILING),
        }
    }

    /// The file of a stored location, refusing locations that would leave the folder.
    pub fn path_of(&self, location: &str) -> Option<PathBuf> {
        let safe = !location.is_empty()
            && location.split('/').all(|part| {
                !part.is_empty() && part != "." && part != ".." && !part.contains('\\')
            });
        safe.then(|| self.dir.join(location))
    }
}

/// The location of a key in the folder: `<key[0..2]>/<key>`.
pub fn location_of(key: &str) -> String {
    let prefix: String = key.chars().take(2).collect();
    format!("{prefix}/{key}")
}

/// The key a location names (its file name: `<key[0..2]>/<key>` gives `key`): the digest the
/// content's event recorded, for a context whose read model keeps only the location.
pub fn key_of(location: &str) -> &str {
    location.rsplit('/').next().unwrap_or(location)
}

/// The digests a context computes over content while it streams in.
pub trait Hasher {
    /// What the digests are once every byte was seen.
    type Digests;

    /// Takes the next chunk.
    fn update(&mut self, chunk: &[u8]);

    /// The digests of every chunk seen.
    fn finish(self) -> Self::Digests;

    /// The content's file name in the folder (path-safe: hex or similar).
    fn key(digests: &Self::Digests) -> String;
}

/// Where received content is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Content {
    /// Small enough to travel in the event: the bytes.
    Inline(Vec<u8>),
    /// In the folder at this location (relative to it).
    Location(String),
}

/// Content received into the store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Received<D> {
    /// The context's digests of the bytes.
    pub digests: D,
    /// Size in bytes.
    pub size: u64,
    /// Inline bytes or the location in the folder.
    pub content: Content,
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
pub async fn receive<H, S, B, E>(
    store: &ContentStore,
    body: S,
    mut hasher: H,
) -> Result<Received<H::Digests>, ContentError>
where
    H: Hasher,
    S: Stream<Item = Result<B, E>>,
    B: AsRef<[u8]>,
    E: std::fmt::Display,
{
    let tmp_dir = store.dir.join(".tmp");
    create_private_dir(&tmp_dir).await?;
    let path = tmp_dir.join(uuid::Uuid::new_v4().to_string());
    let mut file = create_private_file(&path).await?;
    let temp = TempFile(Some(path.clone()));
    let mut size: u64 = 0;
    let mut body = std::pin::pin!(body);
    while let Some(chunk) = body.next().await {
        let chunk = chunk.map_err(|e| ContentError::Body(e.to_string()))?;
        let chunk = chunk.as_ref();
        hasher.update(chunk);
        size += chunk.len() as u64;
        file.write_all(chunk).await?;
    }
    file.flush().await?;
    let inline = size <= store.inline_max;
    if !inline {
        // The event that names this file is durable once appended: so must the file be.
        file.sync_all().await?;
    }
    drop(file);
    let digests = hasher.finish();
    let content = if inline {
        Content::Inline(tokio::fs::read(&path).await?)
    } else {
        place(store, temp, &path, &H::key(&digests)).await?
    };
    Ok(Received {
        digests,
        size,
        content,
    })
}

/// [`receive`] for content already in memory (a property value, an attachment sent as base64
/// in a JSON body): inline content is digested in place, without a temporary file.
pub async fn receive_bytes<H: Hasher>(
    store: &ContentStore,
    bytes: Vec<u8>,
    mut hasher: H,
) -> Result<Received<H::Digests>, ContentError> {
    let size = bytes.len() as u64;
    if size > store.inline_max {
        return receive(
            store,
            futures::stream::once(async { Ok::<_, ContentError>(bytes) }),
            hasher,
        )
        .await;
    }
    hasher.update(&bytes);
    Ok(Received {
        digests: hasher.finish(),
        size,
        content: Content::Inline(bytes),
    })
}

/// Why a stored file was not served.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// The location a row names would leave the folder (only the store writes locations).
    #[error("content location `{0}` is not a file of the store")]
    Location(String),
    /// The file could not be opened or read (removed, unreadable).
    #[error("content file `{location}` could not be read: {source}")]
    Io {
        /// The file's location in the folder.
        location: String,
        /// What failed.
        #[source]
        source: std::io::Error,
    },
    /// The file's bytes no longer give the digest its event recorded: it was altered after it
    /// was stored, and is not served.
    #[error(
        "content file `{location}` does not match the digest its event recorded ({expected}): \
         it was altered after it was stored and is not served"
    )]
    Altered {
        /// The file's location in the folder (`<key[0..2]>/<key>`).
        location: String,
        /// The key the event recorded.
        expected: String,
        /// The key the bytes give now.
        actual: String,
    },
}

/// A stored file whose bytes were checked against their digest, open at its first byte.
#[derive(Debug)]
pub struct Verified {
    /// The file, positioned at its start (the same handle that was hashed).
    pub file: tokio::fs::File,
    /// Its size in bytes.
    pub size: u64,
}

/// Opens the file at `location` and checks its bytes against `expected` (the key the content's
/// event recorded, as [`Hasher::key`] spells it) before handing it back, for a response that
/// streams it. `context` labels the metric and the log line of a mismatch.
///
/// Verifying first means reading the whole file once before the first byte is sent (a file
/// is at most the upload limit, 1 GiB by default: seconds of hashing, never memory). Hashing
/// while streaming would be cheaper but could only notice a mismatch after the bytes before it
/// were sent, and a response already started cannot become a 500. The handle that was hashed
/// is the one served, rewound: a file replaced (renamed over) after the check is not the one
/// sent. Only a write into this very file between the check and the send would go unnoticed.
pub async fn open_verified<H>(
    store: &ContentStore,
    location: &str,
    expected: &str,
    hasher: H,
    context: &'static str,
) -> Result<Verified, ServeError>
where
    H: Hasher + Send + 'static,
{
    let (file, size, _) = check(store, location, expected, hasher, context, false).await?;
    Ok(Verified {
        file: tokio::fs::File::from_std(file),
        size,
    })
}

/// The bytes of the file at `location`, checked against `expected` like [`open_verified`]
/// (read whole: for answers that carry them inside a body, as base64).
pub async fn read_verified<H>(
    store: &ContentStore,
    location: &str,
    expected: &str,
    hasher: H,
    context: &'static str,
) -> Result<Vec<u8>, ServeError>
where
    H: Hasher + Send + 'static,
{
    let (_, _, bytes) = check(store, location, expected, hasher, context, true).await?;
    Ok(bytes)
}

/// Opens and hashes the file (on a blocking thread: hashing a large file is CPU work), keeping
/// its bytes when `keep`; a mismatch is logged, counted and refused.
async fn check<H>(
    store: &ContentStore,
    location: &str,
    expected: &str,
    hasher: H,
    context: &'static str,
    keep: bool,
) -> Result<(std::fs::File, u64, Vec<u8>), ServeError>
where
    H: Hasher + Send + 'static,
{
    let path = store
        .path_of(location)
        .ok_or_else(|| ServeError::Location(location.to_owned()))?;
    let io = |source: std::io::Error| ServeError::Io {
        location: location.to_owned(),
        source,
    };
    let hashed = tokio::task::spawn_blocking(move || hash_file(&path, hasher, keep))
        .await
        .map_err(|e| io(std::io::Error::other(e)))?;
    let (file, size, actual, bytes) = hashed.map_err(io)?;
    if !actual.eq_ignore_ascii_case(expected) {
        metrics::counter!("palimpsest_content_digest_mismatches_total", "context" => context)
            .increment(1);
        tracing::error!(
            context,
            file = %store.dir.join(location).display(),
            expected,
            actual = %actual,
            "content file does not match its recorded digest; not served"
        );
        return Err(ServeError::Altered {
            location: location.to_owned(),
            expected: expected.to_owned(),
            actual,
        });
    }
    Ok((file, size, bytes))
}

/// Reads `path` in pieces through `hasher`: the open file rewound to its start, its size, the
/// key its bytes give, and the bytes when `keep`.
fn hash_file<H: Hasher>(
    path: &Path,
    mut hasher: H,
    keep: bool,
) -> std::io::Result<(std::fs::File, u64, String, Vec<u8>)> {
    let mut file = std::fs::File::open(path)?;
    let mut buffer = vec![0u8; 64 * 1024];
    let mut kept = Vec::new();
    let mut size: u64 = 0;
    loop {
        let read = file.read(&mut buffer)?;
        if read == 0 {
            break;
        }
        hasher.update(&buffer[..read]);
        size += read as u64;
        if keep {
            kept.extend_from_slice(&buffer[..read]);
        }
    }
    file.rewind()?;
    Ok((file, size, H::key(&hasher.finish()), kept))
}

/// Creates `dir` and its missing parents, 0700.
async fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    let mut builder = tokio::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    builder.mode(crate::secret::PRIVATE_DIR_MODE);
    builder.create(dir).await
}

/// Creates `file`, which must not exist, 0600 from its creation.
async fn create_private_file(file: &Path) -> std::io::Result<tokio::fs::File> {
    let mut options = tokio::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    options.mode(crate::secret::PRIVATE_FILE_MODE);
    options.open(file).await
}

/// Moves the temporary file to the key's location, unless that key is already stored.
async fn place(
    store: &ContentStore,
    mut temp: TempFile,
    path: &Path,
    key: &str,
) -> Result<Content, ContentError> {
    let location = location_of(key);
    let target = store
        .path_of(&location)
        .ok_or_else(|| std::io::Error::other(format!("content key `{key}` is not a file name")))?;
    if tokio::fs::try_exists(&target).await? {
        return Ok(Content::Location(location));
    }
    if let Some(folder) = target.parent() {
        create_private_dir(folder).await?;
    }
    tokio::fs::rename(path, &target).await?;
    temp.0 = None;
    if let Some(folder) = target.parent() {
        // The rename is durable once its folder is synced.
        tokio::fs::File::open(folder).await?.sync_all().await?;
    }
    Ok(Content::Location(location))
}

#[cfg(test)]
mod tests {
    use super::*;
    use sha2::Digest;

    /// sha256 hex, as resources keys its content.
    struct Sha256(sha2::Sha256);

    impl Hasher for Sha256 {
        type Digests = String;
        fn update(&mut self, chunk: &[u8]) {
            self.0.update(chunk);
        }
        fn finish(self) -> String {
            hex::encode(self.0.finalize())
        }
        fn key(digests: &String) -> String {
            digests.clone()
        }
    }

    fn hasher() -> Sha256 {
        Sha256(sha2::Sha256::new())
    }

    fn store(inline_max: u64) -> ContentStore {
        let dir = std::env::temp_dir().join(format!("content-store-{}", uuid::Uuid::new_v4()));
        ContentStore::new(dir, inline_max)
    }

    #[test]
    fn locations_stay_inside_the_folder_and_inline_is_capped() {
        let store = ContentStore::new(PathBuf::from("/store"), 10 * INLINE_CEILING);
        assert_eq!(store.inline_max, INLINE_CEILING);
        assert_eq!(
            store.path_of("ab/abcd"),
            Some(PathBuf::from("/store/ab/abcd"))
        );
        assert_eq!(store.path_of("../etc/passwd"), None);
        assert_eq!(store.path_of("/etc/passwd"), None);
        assert_eq!(location_of("abcdef"), "ab/abcdef");
        assert_eq!(key_of(&location_of("abcdef")), "abcdef");
    }

    #[tokio::test]
    async fn small_content_is_inline_and_large_content_is_stored_once_by_key() {
        let store = store(4);
        let small = receive_bytes(&store, b"abc".to_vec(), hasher())
            .await
            .expect("small");
        assert_eq!(small.content, Content::Inline(b"abc".to_vec()));
        assert_eq!(small.size, 3);
        let chunks = futures::stream::iter(vec![
            Ok::<_, std::io::Error>(b"hello ".to_vec()),
            Ok(b"world".to_vec()),
        ]);
        let large = receive(&store, chunks, hasher()).await.expect("large");
        let again = receive_bytes(&store, b"hello world".to_vec(), hasher())
            .await
            .expect("again");
        assert_eq!(large, again);
        let Content::Location(location) = &large.content else {
            panic!("expected a location: {large:?}");
        };
        assert_eq!(location, &location_of(&large.digests));
        let path = store.path_of(location).expect("path");
        assert_eq!(std::fs::read(&path).expect("stored"), b"hello world");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = |p: &Path| std::fs::metadata(p).expect("mode").permissions().mode() & 0o777;
            assert_eq!(mode(&path), 0o600, "stored content is the owner's only");
            let folder = path.parent().expect("folder");
            assert_eq!(mode(folder), 0o700);
            assert_eq!(mode(&store.dir), 0o700);
            assert_eq!(mode(&store.dir.join(".tmp")), 0o700);
        }
        let temps = std::fs::read_dir(store.dir.join(".tmp"))
            .expect("tmp")
            .count();
        assert_eq!(temps, 0, "temporary files are removed");
        std::fs::remove_dir_all(&store.dir).expect("cleanup");
    }

    #[tokio::test]
    async fn a_broken_body_leaves_no_file() {
        let store = store(4);
        let chunks = futures::stream::iter(vec![
            Ok(b"hello ".to_vec()),
            Err(std::io::Error::other("reset")),
        ]);
        assert!(matches!(
            receive(&store, chunks, hasher()).await,
            Err(ContentError::Body(_))
        ));
        let temps = std::fs::read_dir(store.dir.join(".tmp"))
            .expect("tmp")
            .count();
        assert_eq!(temps, 0);
        std::fs::remove_dir_all(&store.dir).expect("cleanup");
    }

    #[tokio::test]
    async fn a_stored_file_is_served_only_while_its_bytes_give_its_key() {
        use tokio::io::AsyncReadExt;
        let store = store(4);
        let large = receive_bytes(&store, b"hello world".to_vec(), hasher())
            .await
            .expect("large");
        let Content::Location(location) = &large.content else {
            panic!("expected a location: {large:?}");
        };
        let key = &large.digests;
        let mut verified = open_verified(&store, location, key, hasher(), "test")
            .await
            .expect("intact");
        assert_eq!(verified.size, 11);
        let mut served = Vec::new();
        verified.file.read_to_end(&mut served).await.expect("read");
        assert_eq!(served, b"hello world", "served from its first byte");
        let read = read_verified(&store, location, key, hasher(), "test").await;
        assert_eq!(read.expect("intact"), b"hello world");

        let path = store.path_of(location).expect("path");
        std::fs::write(&path, b"hello World").expect("tamper");
        let opened = open_verified(&store, location, key, hasher(), "test").await;
        assert!(
            matches!(&opened, Err(ServeError::Altered { location: l, .. }) if l == location),
            "{opened:?}"
        );
        let message = opened.expect_err("altered").to_string();
        assert!(message.contains(location.as_str()), "{message}");
        assert!(matches!(
            read_verified(&store, location, key, hasher(), "test").await,
            Err(ServeError::Altered { .. })
        ));
        assert!(matches!(
            read_verified(&store, "../x", key, hasher(), "test").await,
            Err(ServeError::Location(_))
        ));
        std::fs::remove_file(&path).expect("remove");
        assert!(matches!(
            open_verified(&store, location, key, hasher(), "test").await,
            Err(ServeError::Io { .. })
        ));
        std::fs::remove_dir_all(&store.dir).expect("cleanup");
    }
}
