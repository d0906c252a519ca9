//! Secrets that are given by the operator or generated once and kept in a file, the way
//! Etherpad keeps `APIKEY.txt`; and the private folders and files the platform keeps its data in.
//!
//! A secret file is created with mode 0600 from its first byte (`create_new`, never written
//! then tightened), in a folder created 0700. Every secret file of the platform goes through
//! [`load_or_create`]: the admin token, pads' `APIKEY.txt`, records' `records-key`.

use rand::Rng;
use std::io::{ErrorKind, Write};
use std::path::Path;

/// Mode of the files the platform writes (secrets, stored content): the owner only.
pub const PRIVATE_FILE_MODE: u32 = 0o600;

/// Mode of the folders the platform creates (the data folder, content stores): the owner only.
pub const PRIVATE_DIR_MODE: u32 = 0o700;

/// The secret `given` by the operator (the binary reads it from the environment), else the
/// content of `file`, else a new random one written to a new `file` (mode 0600 from its
/// creation). The secret itself is never logged.
pub fn load_or_create(given: Option<&str>, file: &Path) -> std::io::Result<String> {
    if let Some(value) = given.map(str::trim)
        && !value.is_empty()
    {
        return Ok(value.to_owned());
    }
    if let Some(existing) = read_existing(file)? {
        return Ok(existing);
    }
    if let Some(dir) = file.parent() {
        create_private_dir(dir)?;
    }
    let bytes: [u8; 32] = rand::rng().random();
    let secret = hex::encode(bytes);
    match create_private_file(file) {
        Ok(mut handle) => {
            handle.write_all(secret.as_bytes())?;
            handle.sync_all()?;
        }
        // Another process created it first: its secret is the one.
        Err(e) if e.kind() == ErrorKind::AlreadyExists => {
            return read_existing(file)?.ok_or_else(|| {
                std::io::Error::other(format!("{} exists but is empty", file.display()))
            });
        }
        Err(e) => return Err(e),
    }
    tracing::info!(file = %file.display(), prefix = &secret[..4], "generated a secret");
    Ok(secret)
}

/// The secret kept in `file`, if the file exists and is not empty. A file others may read (an
/// older version wrote secrets 0644 first) is tightened to 0600, with a warning.
fn read_existing(file: &Path) -> std::io::Result<Option<String>> {
    let text = match std::fs::read_to_string(file) {
        Ok(text) => text,
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    if text.trim().is_empty() {
        return Ok(None);
    }
    tighten_file(file);
    Ok(Some(text.trim().to_owned()))
}

/// Sets an existing secret file's mode to 0600 when group or others have any access.
fn tighten_file(file: &Path) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = match std::fs::metadata(file) {
            Ok(meta) => meta.permissions().mode(),
            Err(e) => {
                tracing::warn!(file = %file.display(), error = %e, "secret file mode unreadable");
                return;
            }
        };
        if mode & 0o077 == 0 {
            return;
        }
        let private = std::fs::Permissions::from_mode(PRIVATE_FILE_MODE);
        match std::fs::set_permissions(file, private) {
            Ok(()) => tracing::warn!(
                file = %file.display(),
                mode = format!("{:o}", mode & 0o777),
                "secret file was readable by others; set to 0600"
            ),
            Err(e) => tracing::warn!(
                file = %file.display(),
                error = %e,
                "secret file is readable by others and could not be set to 0600"
            ),
        }
    }
}

/// Creates `file`, which must not exist, writable by its owner only (0600 from the start).
pub fn create_private_file(file: &Path) -> std::io::Result<std::fs::File> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(PRIVATE_FILE_MODE);
    }
    options.open(file)
}

/// Creates folder `dir` and its missing parents with mode 0700. A folder that already exists
/// is left as it is (the operator may share it on purpose), with a warning when group or others
/// may enter it: the files the platform writes in it are 0600 in any case.
pub fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    if dir.as_os_str().is_empty() {
        return Ok(());
    }
    if let Ok(meta) = std::fs::metadata(dir) {
        warn_if_open(dir, &meta);
        return Ok(());
    }
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(PRIVATE_DIR_MODE);
    }
    builder.create(dir)
}

/// Logs a warning when an existing folder is open to group or others.
fn warn_if_open(dir: &Path, meta: &std::fs::Metadata) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = meta.permissions().mode();
        if meta.is_dir() && mode & 0o077 != 0 {
            tracing::warn!(
                dir = %dir.display(),
                mode = format!("{:o}", mode & 0o777),
                "data folder is open to group or others; 0700 is advised"
            );
        }
    }
}

/// Compares two secrets in time independent of where they differ.
pub fn equal(a: &str, b: &str) -> bool {
    use sha2::{Digest, Sha256};
    let (x, y) = (Sha256::digest(a.as_bytes()), Sha256::digest(b.as_bytes()));
    x.iter()
        .zip(y.iter())
        .fold(0u8, |acc, (p, q)| acc | (p ^ q))
        == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generates_once_then_reads_back() {
        let dir = std::env::temp_dir().join(format!("palimpsest-secret-{}", uuid::Uuid::new_v4()));
        let file = dir.join("token");
        let first = load_or_create(None, &file).expect("create");
        assert_eq!(first.len(), 64);
        assert_eq!(load_or_create(None, &file).expect("read"), first);
        assert!(equal(&first, &first.clone()));
        assert!(!equal(&first, "nope"));
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn a_given_secret_wins_over_the_file_and_writes_nothing() {
        let dir = std::env::temp_dir().join(format!("palimpsest-secret-{}", uuid::Uuid::new_v4()));
        let file = dir.join("token");
        assert_eq!(
            load_or_create(Some(" given \n"), &file).expect("given"),
            "given"
        );
        assert!(!file.exists(), "a given secret is not written");
        assert_eq!(load_or_create(Some("  "), &file).expect("blank").len(), 64);
        let _ = std::fs::remove_dir_all(dir);
    }

    #[cfg(unix)]
    fn mode(path: &Path) -> u32 {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(path)
            .expect("metadata")
            .permissions()
            .mode()
            & 0o777
    }

    #[cfg(unix)]
    #[test]
    fn a_new_secret_is_0600_in_a_new_0700_folder() {
        let root = std::env::temp_dir().join(format!("palimpsest-secret-{}", uuid::Uuid::new_v4()));
        let dir = root.join("data");
        let file = dir.join("token");
        load_or_create(None, &file).expect("create");
        assert_eq!(mode(&file), 0o600);
        assert_eq!(mode(&dir), 0o700);
        assert_eq!(mode(&root), 0o700, "missing parents are private too");
        let _ = std::fs::remove_dir_all(root);
    }

    #[cfg(unix)]
    #[test]
    fn an_existing_secret_open_to_others_is_tightened() {
        use std::os::unix::fs::PermissionsExt;
        let dir = std::env::temp_dir().join(format!("palimpsest-secret-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir_all(&dir).expect("dir");
        let file = dir.join("token");
        std::fs::write(&file, "kept").expect("write");
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).expect("chmod");
        let read = load_or_create(None, &file).expect("read");
        assert_eq!(read, "kept");
        assert_eq!(mode(&file), 0o600);
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn a_private_file_is_never_created_over_an_existing_one() {
        let dir = std::env::temp_dir().join(format!("palimpsest-secret-{}", uuid::Uuid::new_v4()));
        create_private_dir(&dir).expect("dir");
        let file = dir.join("f");
        create_private_file(&file).expect("first");
        let again = create_private_file(&file).expect_err("exists");
        assert_eq!(again.kind(), ErrorKind::AlreadyExists);
        let _ = std::fs::remove_dir_all(dir);
    }
}
