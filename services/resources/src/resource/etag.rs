//! Deki's ETag of a resource revision: `"{res_id}.r{rev}_ts{timestamp}"`.

use palimpsest_events::resources::Revision;

/// The quoted ETag naming `revision` (the timestamp as `2026-11-23T17:00:00Z`), so a client
/// can say which head it saw with `If-Match` (or `etag=`) and a stale one is refused.
pub fn etag(revision: &Revision) -> String {
    format!(
        "\"{}.r{}_ts{}\"",
        revision.res_id,
        revision.rev,
        revision.timestamp.format("%Y-%m-%dT%H:%M:%SZ")
    )
}

/// Whether a client's ETag names `revision` (quotes and a weak `W/` prefix are optional).
pub fn matches(given: &str, revision: &Revision) -> bool {
    let bare = |tag: &str| {
        tag.trim()
            .trim_start_matches("W/")
            .trim_matches('"')
            .to_owned()
    };
    given.trim() == "*" || bare(given) == bare(&etag(revision))
}
