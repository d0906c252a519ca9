//! How the docs context is configured beyond the platform's state: the binary fills it from its
//! flags and environment, tests give theirs; the library reads no environment for it.

use crate::attachments::DEFAULT_INLINE_MAX;
use palimpsest_web::content::ContentStore;
use palimpsest_web::seal::SealKeys;
use std::path::{Path, PathBuf};

/// The administrator's user name when none is configured.
pub const DEFAULT_ADMIN_NAME: &str = "admin";

/// The secret file (in the data directory) of the key sealing password hashes.
pub const PASSWORD_KEY_FILE: &str = "docs-password-key";

/// The attachment folder's name inside the data folder, when none is configured.
pub const ATTACHMENTS_DIR: &str = "docs-attachments";

/// The docs context's configuration.
#[derive(Clone, Debug)]
pub struct Settings {
    /// The user name CouchDB clients send with the admin token as HTTP Basic credentials
    /// (`Authorization: Basic <admin_name>:<admin token>`), CouchDB's server admin.
    pub admin_name: String,
    /// The keys sealing the password hashes users' events carry; `None`: the key in
    /// `<data dir>/docs-password-key` (generated when missing), previous keys in
    /// `<data dir>/docs-password-key.previous`.
    pub password_keys: Option<SealKeys>,
    /// The current password key the operator gives (64 hex digits,
    /// `PALIMPSEST_DOCS_PASSWORD_KEY`) instead of its file; previous keys stay in the file
    /// `<data dir>/docs-password-key.previous`.
    pub password_key: Option<String>,
    /// The attachment folder (`--docs-attachments-dir`); `None`: `<data dir>/docs-attachments`,
    /// kept, moved and removed with the data folder.
    pub attachments_dir: Option<PathBuf>,
    /// The largest attachment kept inline, in its event and the table row, in bytes
    /// (`--docs-inline-max`; at most [`palimpsest_web::content::INLINE_CEILING`]).
    pub inline_max: u64,
}

impl Settings {
    /// The attachment store these settings name, its default folder inside `data_dir`.
    pub fn attachment_store(&self, data_dir: &Path) -> ContentStore {
        let dir = self
            .attachments_dir
            .clone()
            .unwrap_or_else(|| data_dir.join(ATTACHMENTS_DIR));
        ContentStore::new(dir, self.inline_max)
    }
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            admin_name: DEFAULT_ADMIN_NAME.to_owned(),
            password_keys: None,
            password_key: None,
            attachments_dir: None,
            inline_max: DEFAULT_INLINE_MAX,
        }
    }
}
