//! Content: the bytes of file and property revisions, stored once per sha256 digest in the
//! platform's content-addressed store ([`palimpsest_web::content`]).
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
pub mod state;

pub use palimpsest_web::content::{ContentError, INLINE_CEILING, location_of};
pub use receive::{Sha256Hex, Upload, receive, receive_bytes};
pub use state::ContentState;

use std::path::{Path, PathBuf};

/// Where content goes: the platform's store (its folder and inline size), as resources
/// configures it.
pub type ContentConfig = palimpsest_web::content::ContentStore;

/// Default largest content kept inline (in the event and the table row): 64 KiB.
pub const DEFAULT_INLINE_MAX: u64 = 64 * 1024;

/// The store inside the data folder (`<data_dir>/resources-content`: one folder holds all a
/// process keeps) keeping up to [`DEFAULT_INLINE_MAX`] bytes inline: what the binary gives
/// when no flag names another (`--resources-content-dir`, `--resources-inline-max`).
pub fn in_data_dir(data_dir: &Path) -> ContentConfig {
    ContentConfig::new(default_dir(data_dir), DEFAULT_INLINE_MAX)
}

/// `<data_dir>/resources-content`: inside the data folder, so it is kept, moved and removed
/// with it.
pub fn default_dir(data_dir: &Path) -> PathBuf {
    data_dir.join("resources-content")
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
