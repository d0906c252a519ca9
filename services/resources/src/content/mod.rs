//! Content: the bytes of file and property revisions, stored once per sha256 digest.
//!
//! An upload streams to a temporary file in the store's folder while its sha256 and size are
//! computed, so no body is ever held whole in memory. Then, by size:
//! - up to [`ContentConfig::inline_max`] bytes, the bytes go into the event and into
//!   `resourcecontents.rescontent_value` (read back from the temporary file, which is removed);
//! - above it, the file is moved to `<digest[0..2]>/<digest>` in the folder (or removed if that
//!   digest is already there: never copied twice) and the event carries that location.
//!
//! Whether a digest was stored before is the command's business (the `resources/content/<sha256>`
//! stream): identical uploads across resources share one `rescontent_id`.

mod receive;

pub use receive::{ContentError, Upload, receive, receive_bytes};

use std::path::{Path, PathBuf};

/// Default largest content kept inline (in the event and the table row): 64 KiB.
pub const DEFAULT_INLINE_MAX: u64 = 64 * 1024;

/// Content larger than this is never inline, whatever the setting: an event carries its bytes
/// as base64 and must stay well under NATS' 1 MiB message limit.
pub const INLINE_CEILING: u64 = 512 * 1024;

/// Where content goes.
#[derive(Debug, Clone)]
pub struct ContentConfig {
    /// The store's folder.
    pub dir: PathBuf,
    /// Content up to this many bytes is stored inline.
    pub inline_max: u64,
}

impl ContentConfig {
    /// The folder from `PALIMPSEST_RESOURCES_CONTENT_DIR`, else inside the data folder
    /// (`<data_dir>/resources-content`: one folder holds all a process keeps); the inline size from `PALIMPSEST_RESOURCES_INLINE_MAX` (bytes,
    /// at most [`INLINE_CEILING`]), else [`DEFAULT_INLINE_MAX`].
    pub fn from_env(data_dir: &Path) -> Self {
        let dir = std::env::var_os("PALIMPSEST_RESOURCES_CONTENT_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| default_dir(data_dir));
        let inline_max = std::env::var("PALIMPSEST_RESOURCES_INLINE_MAX")
            .ok()
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or(DEFAULT_INLINE_MAX);
        ContentConfig::new(dir, inline_max)
    }

    /// A store in `dir` keeping up to `inline_max` bytes inline (capped at [`INLINE_CEILING`]).
    pub fn new(dir: PathBuf, inline_max: u64) -> Self {
        ContentConfig {
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

/// `<data_dir>/resources-content`: inside the data folder, so it is kept, moved and removed
/// with it.
fn default_dir(data_dir: &Path) -> PathBuf {
    data_dir.join("resources-content")
}

/// The location of a digest in the folder.
pub fn location_of(sha256: &str) -> String {
    format!("{}/{sha256}", &sha256[..2.min(sha256.len())])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_folder_defaults_inside_the_data_folder_and_locations_stay_inside_it() {
        assert_eq!(
            default_dir(Path::new("/srv/.data")),
            PathBuf::from("/srv/.data/resources-content")
        );
        let config = ContentConfig::new(PathBuf::from("/store"), 10 * INLINE_CEILING);
        assert_eq!(config.inline_max, INLINE_CEILING);
        assert_eq!(
            config.path_of("ab/abcd"),
            Some(PathBuf::from("/store/ab/abcd"))
        );
        assert_eq!(config.path_of("../etc/passwd"), None);
        assert_eq!(config.path_of("/etc/passwd"), None);
        assert_eq!(location_of("abcdef"), "ab/abcdef");
    }
}
