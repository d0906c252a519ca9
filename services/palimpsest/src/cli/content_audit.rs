//! `audit verify`'s check of the content kept outside the log: docs' attachment files and
//! resources' content files. Both folders are content-addressed (`<key[0..2]>/<key>`, the key
//! being the digest the content's event recorded: SHA-1 hex for docs, SHA-256 hex for
//! resources), so a file whose bytes no longer give its name was altered after it was stored.
//! Other files (none are expected) are passed over and counted.

use sha1::Sha1;
use sha2::Sha256;
use std::io::Read;
use std::path::{Path, PathBuf};

/// What a content folder held.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct ContentReport {
    /// Files checked against their digest.
    pub checked: u64,
    /// Files whose name is not a digest (passed over).
    pub other: u64,
    /// Files whose bytes do not give their name, in path order.
    pub altered: Vec<PathBuf>,
}

/// Checks every file of `dir` (absent: nothing to check) against the digest its name is.
pub fn verify_folder(dir: &Path) -> std::io::Result<ContentReport> {
    let mut report = ContentReport::default();
    let mut files = Vec::new();
    match std::fs::read_dir(dir) {
        Ok(prefixes) => {
            for prefix in prefixes {
                let prefix = prefix?.path();
                if prefix.is_dir() {
                    for file in std::fs::read_dir(&prefix)? {
                        files.push(file?.path());
                    }
                }
            }
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(report),
        Err(e) => return Err(e),
    }
    files.sort();
    for file in files {
        match matches_its_name(&file)? {
            Some(true) => report.checked += 1,
            Some(false) => {
                report.checked += 1;
                report.altered.push(file);
            }
            None => report.other += 1,
        }
    }
    Ok(report)
}

/// Whether `file`'s bytes give its name (SHA-1 for 40 hex digits, SHA-256 for 64); `None` when
/// its name is not such a digest.
fn matches_its_name(file: &Path) -> std::io::Result<Option<bool>> {
    let Some(name) = file.file_name().and_then(|n| n.to_str()) else {
        return Ok(None);
    };
    if !name.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Ok(None);
    }
    let digest = match name.len() {
        40 => {
            let mut hasher = <Sha1 as sha1::Digest>::new();
            read_in_pieces(file, |piece| sha1::Digest::update(&mut hasher, piece))?;
            hex::encode(sha1::Digest::finalize(hasher))
        }
        64 => {
            let mut hasher = <Sha256 as sha2::Digest>::new();
            read_in_pieces(file, |piece| sha2::Digest::update(&mut hasher, piece))?;
            hex::encode(sha2::Digest::finalize(hasher))
        }
        _ => return Ok(None),
    };
    Ok(Some(digest.eq_ignore_ascii_case(name)))
}

/// Hands `file`'s bytes to `take` in pieces (a file may be gigabytes). (docs' SHA-1 and
/// resources' SHA-256 come from crates on two versions of `digest`, so no one trait covers
/// both.)
fn read_in_pieces(file: &Path, mut take: impl FnMut(&[u8])) -> std::io::Result<()> {
    let mut reader = std::fs::File::open(file)?;
    let mut buffer = vec![0u8; 64 * 1024];
    loop {
        let read = reader.read(&mut buffer)?;
        if read == 0 {
            return Ok(());
        }
        take(&buffer[..read]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sha2::Digest as _;

    fn stored(dir: &Path, key: &str, bytes: &[u8]) -> PathBuf {
        let folder = dir.join(&key[..2]);
        std::fs::create_dir_all(&folder).expect("folder");
        let file = folder.join(key);
        std::fs::write(&file, bytes).expect("file");
        file
    }

    #[test]
    fn a_byte_changed_in_a_stored_file_is_named_and_intact_files_pass() {
        let dir = std::env::temp_dir().join(format!("palimpsest-content-{}", uuid::Uuid::new_v4()));
        let body = b"the attachment".to_vec();
        let sha1 = hex::encode(<Sha1 as sha1::Digest>::digest(&body));
        let sha256 = hex::encode(Sha256::digest(&body));
        stored(&dir, &sha1, &body);
        let content = stored(&dir, &sha256, &body);
        stored(&dir, "zz-not-a-digest", b"x");
        let clean = verify_folder(&dir).expect("verify");
        assert_eq!((clean.checked, clean.other, clean.altered.len()), (2, 1, 0));
        let mut altered = body.clone();
        altered[0] ^= 1;
        std::fs::write(&content, &altered).expect("tamper");
        let report = verify_folder(&dir).expect("verify");
        assert_eq!(report.altered, vec![content]);
        assert_eq!(
            verify_folder(&dir.join("absent")).expect("absent"),
            ContentReport::default()
        );
        let _ = std::fs::remove_dir_all(dir);
    }
}
