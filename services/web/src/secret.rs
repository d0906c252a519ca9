//! Secrets that are given in the environment or generated once and kept in a file, the way
//! Etherpad keeps `APIKEY.txt`.

use rand::Rng;
use std::path::Path;

/// The secret from environment variable `env`, else the content of `file`, else a new random
/// one written to `file` (mode 0600). The secret itself is never logged.
pub fn load_or_create(env: &str, file: &Path) -> std::io::Result<String> {
    if let Ok(value) = std::env::var(env)
        && !value.trim().is_empty()
    {
        return Ok(value.trim().to_owned());
    }
    if let Ok(existing) = std::fs::read_to_string(file)
        && !existing.trim().is_empty()
    {
        return Ok(existing.trim().to_owned());
    }
    if let Some(dir) = file.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let bytes: [u8; 32] = rand::rng().random();
    let secret = hex::encode(bytes);
    std::fs::write(file, &secret)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(file, std::fs::Permissions::from_mode(0o600))?;
    }
    tracing::info!(file = %file.display(), prefix = &secret[..4], "generated a secret");
    Ok(secret)
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
        let first = load_or_create("PALIMPSEST_TEST_UNSET_SECRET", &file).expect("create");
        assert_eq!(first.len(), 64);
        assert_eq!(
            load_or_create("PALIMPSEST_TEST_UNSET_SECRET", &file).expect("read"),
            first
        );
        assert!(equal(&first, &first.clone()));
        assert!(!equal(&first, "nope"));
        let _ = std::fs::remove_dir_all(dir);
    }
}
