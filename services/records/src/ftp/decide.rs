//! The FTP decider (pure): a path is listed once per day of purge, unlisted only if listed.

use crate::error::RecordsError;
use crate::ftp::state::FtpState;
use palimpsest_events::records::FtpEvent;

/// A storage path `folderId/fid`: 1-1024 characters, no control character.
pub fn check_path(path: &str) -> Result<(), RecordsError> {
    if path.is_empty() || path.len() > 1024 || path.chars().any(char::is_control) {
        return Err(RecordsError::bad(
            "path must be 1-1024 characters without control characters",
        ));
    }
    Ok(())
}

/// `setFTP`: lists `path` for purge after day `p` (nothing if already so).
pub fn set(state: &FtpState, org: &str, path: &str, p: i64) -> Result<Vec<FtpEvent>, RecordsError> {
    check_path(path)?;
    if state.0.get(path) == Some(&p) {
        return Ok(Vec::new());
    }
    Ok(vec![FtpEvent::FtpSet {
        org: org.to_owned(),
        path: path.to_owned(),
        p,
    }])
}

/// `purgeFTP` / `purgeAllFTP`: unlists the paths given that are listed.
pub fn purge<'a>(
    state: &FtpState,
    org: &str,
    paths: impl IntoIterator<Item = &'a str>,
) -> Vec<FtpEvent> {
    paths
        .into_iter()
        .filter(|path| state.0.contains_key(*path))
        .map(|path| FtpEvent::FtpPurged {
            org: org.to_owned(),
            path: path.to_owned(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ftp::state::evolve;

    #[test]
    fn setting_a_path_twice_at_one_day_records_it_once() {
        let events = set(&FtpState::default(), "o", "f/1", 20260101).expect("set");
        let state = events.iter().fold(FtpState::default(), evolve);
        assert!(set(&state, "o", "f/1", 20260101).expect("same").is_empty());
        assert_eq!(set(&state, "o", "f/1", 20260102).expect("moved").len(), 1);
    }

    #[test]
    fn purging_an_unlisted_path_records_nothing() {
        assert!(purge(&FtpState::default(), "o", ["nope"]).is_empty());
        assert!(set(&FtpState::default(), "o", "bad\npath", 1).is_err());
    }
}
