//! The keys of Etherpad's store.

/// The record listing every group: `groups`.
pub const GROUPS: &str = "groups";

/// ueberDB's PostgreSQL driver refuses keys longer than this (UTF-16 units, as JavaScript counts).
pub const MAX_KEY_CHARS: usize = 100;

/// `pad:P`: the pad record.
pub fn pad(pad_id: &str) -> String {
    format!("pad:{pad_id}")
}

/// `pad:P:revs:N`: revision N.
pub fn revision(pad_id: &str, rev: i64) -> String {
    format!("pad:{pad_id}:revs:{rev}")
}

/// `pad:P:chat:N`: chat message N.
pub fn chat(pad_id: &str, index: i64) -> String {
    format!("pad:{pad_id}:chat:{index}")
}

/// `pad2readonly:P`: the pad's read-only id.
pub fn pad_to_read_only(pad_id: &str) -> String {
    format!("pad2readonly:{pad_id}")
}

/// `readonly2pad:R`: the pad of a read-only id.
pub fn read_only_to_pad(read_only_id: &str) -> String {
    format!("readonly2pad:{read_only_id}")
}

/// `token2author:T`.
pub fn token_to_author(token: &str) -> String {
    format!("token2author:{token}")
}

/// `mapper2author:M`.
pub fn mapper_to_author(mapper: &str) -> String {
    format!("mapper2author:{mapper}")
}

/// `mapper2group:M`.
pub fn mapper_to_group(mapper: &str) -> String {
    format!("mapper2group:{mapper}")
}

/// `globalAuthor:A`: the author record.
pub fn author(author_id: &str) -> String {
    format!("globalAuthor:{author_id}")
}

/// `group:G`: the group record.
pub fn group(group_id: &str) -> String {
    format!("group:{group_id}")
}

/// `session:S`: the session record.
pub fn session(session_id: &str) -> String {
    format!("session:{session_id}")
}

/// `author2sessions:A`.
pub fn author_sessions(author_id: &str) -> String {
    format!("author2sessions:{author_id}")
}

/// `group2sessions:G`.
pub fn group_sessions(group_id: &str) -> String {
    format!("group2sessions:{group_id}")
}

/// The stream key of the mapping (token, author mapper, group mapper) of `mapper`. Etherpad
/// maps even the empty mapper (`mapper2group:`), but a stream key cannot be empty, so mapping
/// stream keys are escaped: `""` is `%`, a mapper starting with `%` gets one more `%` in front,
/// any other is itself.
pub fn mapping_stream_key(mapper: &str) -> String {
    if mapper.is_empty() || mapper.starts_with('%') {
        format!("%{mapper}")
    } else {
        mapper.to_owned()
    }
}

/// The mapper a mapping stream key stands for (the inverse of [`mapping_stream_key`]).
pub fn mapper_of_stream_key(key: &str) -> &str {
    key.strip_prefix('%').unwrap_or(key)
}

/// Whether ueberDB would store `key` (at most 100 characters).
pub fn fits(key: &str) -> bool {
    key.encode_utf16().count() <= MAX_KEY_CHARS
}

#[cfg(test)]
mod mapping_tests {
    use super::*;

    #[test]
    fn mapping_stream_keys_are_never_empty_and_decode_back() {
        for mapper in ["", "%", "%%x", "app-1", "a%b", " "] {
            let key = mapping_stream_key(mapper);
            assert!(!key.is_empty(), "{mapper:?}");
            assert_eq!(mapper_of_stream_key(&key), mapper, "{mapper:?}");
        }
        assert_eq!(mapping_stream_key("app-1"), "app-1");
    }
}
