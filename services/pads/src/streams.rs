//! The context's stream names: [`stream`] names the stream of a category and key.
//!
//! A stream key is the id itself (of a pad, author, group or session; of a token or mapper for
//! the one-value maps), with one exception: Etherpad accepts the empty mapper
//! (`createGroupIfNotExistsFor(groupMapper="")` answers a group id, and ueberDB stores
//! `mapper2group:`), but a stream key cannot be empty. The empty one is written as
//! [`EMPTY_MAPPER_KEY`], a text longer than any token or mapper can be (their store keys —
//! `token2author:…`, `mapper2author:…`, `mapper2group:…` — are refused over 100 characters),
//! so it names no other stream; the projection reads it back as the empty mapper.

use palimpsest_events::StreamName;
use palimpsest_events::pads;
use std::borrow::Cow;

/// The stream of category `category` and key `key` in the pads context.
pub fn stream(category: &str, key: &str) -> Result<StreamName, palimpsest_events::StreamNameError> {
    StreamName::new(pads::CONTEXT, category, encode(category, key))
}

/// The stream key of the empty token or mapper: 101 characters, one more than any store key.
pub const EMPTY_MAPPER_KEY: &str = "(the empty mapper: a key longer than the 100 characters ueberDB allows, so no real mapper has it)....";

fn is_map(category: &str) -> bool {
    matches!(
        category,
        pads::TOKEN | pads::AUTHOR_MAPPER | pads::GROUP_MAPPER
    )
}

/// The stream key for `key` in `category`.
pub fn encode<'a>(category: &str, key: &'a str) -> Cow<'a, str> {
    if key.is_empty() && is_map(category) {
        Cow::Borrowed(EMPTY_MAPPER_KEY)
    } else {
        Cow::Borrowed(key)
    }
}

/// The token or mapper a stream key of `category` stands for.
pub fn decode<'a>(category: &str, stream_key: &'a str) -> &'a str {
    if stream_key == EMPTY_MAPPER_KEY && is_map(category) {
        ""
    } else {
        stream_key
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_empty_mapper_has_a_key_no_real_mapper_can_have() {
        assert!(EMPTY_MAPPER_KEY.encode_utf16().count() > 100);
        assert_eq!(encode(pads::GROUP_MAPPER, ""), EMPTY_MAPPER_KEY);
        assert_eq!(decode(pads::GROUP_MAPPER, EMPTY_MAPPER_KEY), "");
        assert_eq!(encode(pads::AUTHOR_MAPPER, "m"), "m");
        assert_eq!(encode(pads::PAD, ""), "", "only the maps are encoded");
        assert_eq!(decode(pads::PAD, EMPTY_MAPPER_KEY), EMPTY_MAPPER_KEY);
    }
}
