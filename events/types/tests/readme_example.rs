//! The worked example of `events/README.md` ("The bytes an event's hash covers") is what this
//! crate writes and hashes: the README quotes these three texts, and they are checked here.

use palimpsest_events::RecordedEvent;
use palimpsest_events::canonical::chain_hash;

const README: &str = include_str!("../../README.md");

/// The event as NATS and `/v1/events` publish it.
const PUBLISHED: &str = r#"{"event_id":"019ac5f2-7d41-7c3a-9e0b-5b2f1d7a4c10","stream":{"context":"atlas","category":"section","key":"0f1e2d3c-4b5a-4968-8776-a5b4c3d2e1f0"},"version":2,"position":1042,"event_type":"SectionLocked","schema_version":1,"payload":{"data":{"lock_expires_at":"2026-11-27T15:15:00.250Z","locked_at":"2026-11-27T15:00:00.250Z","locked_by":"Lê Văn \"Tâm\""},"type":"SectionLocked"},"metadata":{"actor":"admin","correlation_id":"019ac5f2-7d40-7b6e-8c1d-2a3b4c5d6e7f"},"recorded_at":"2026-11-27T15:00:00.250000Z","prev_hash":"9ea961cb455752b6d0baac7ec288b7427003aa272de284032f124efb8dcd882d","hash":"d1d05acb4d848d9bb6de6ed013e8623125cdac27bb343f7e9d57a977714675a3"}"#;

/// Its canonical content: the bytes after the 32 bytes of `prev_hash`.
const CANONICAL: &str = r#"{"event_id":"019ac5f2-7d41-7c3a-9e0b-5b2f1d7a4c10","event_type":"SectionLocked","metadata":{"actor":"admin","correlation_id":"019ac5f2-7d40-7b6e-8c1d-2a3b4c5d6e7f"},"payload":{"data":{"lock_expires_at":"2026-11-27T15:15:00.250Z","locked_at":"2026-11-27T15:00:00.250Z","locked_by":"Lê Văn \"Tâm\""},"type":"SectionLocked"},"recorded_at":"2026-11-27T15:00:00.250000Z","schema_version":1,"stream":{"category":"section","context":"atlas","key":"0f1e2d3c-4b5a-4968-8776-a5b4c3d2e1f0"},"version":2}"#;

const HASH: &str = "d1d05acb4d848d9bb6de6ed013e8623125cdac27bb343f7e9d57a977714675a3";

#[test]
fn the_readme_example_is_what_the_envelope_publishes_and_hashes() {
    let event: RecordedEvent = serde_json::from_str(PUBLISHED).expect("the example decodes");
    assert_eq!(
        serde_json::to_string(&event).expect("json"),
        PUBLISHED,
        "published byte for byte as the README shows"
    );
    assert_eq!(event.canonical_content(), CANONICAL);
    assert_eq!(CANONICAL.len(), 495, "the README gives its length in bytes");
    let prev: [u8; 32] = hex::decode(event.prev_hash.as_deref().expect("prev_hash"))
        .expect("hex")
        .try_into()
        .expect("32 bytes");
    assert_eq!(hex::encode(chain_hash(Some(&prev), CANONICAL)), HASH);
    assert_eq!(event.hash, HASH);
    for quoted in [PUBLISHED, CANONICAL, HASH] {
        assert!(README.contains(quoted), "events/README.md quotes {quoted}");
    }
}
