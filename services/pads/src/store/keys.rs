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

/// Whether ueberDB would store `key` (at most 100 characters).
pub fn fits(key: &str) -> bool {
    key.encode_utf16().count() <= MAX_KEY_CHARS
}
