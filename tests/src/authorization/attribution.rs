//! Who did it, on every event (design invariant 12, issue #27): after a walk has written through
//! every route as every principal, the whole log is read back and every event that names no
//! caller (`Metadata.actor` absent or empty) is a failure. `events/README.md` says per context
//! what the actor holds.

use palimpsest_events::RecordedEvent;
use palimpsest_testkit::TestApp;
use std::collections::BTreeSet;

/// Events read from the log at once.
const PAGE: i64 = 1_000;

/// The whole log of `app`, in position order.
pub async fn log(app: &TestApp) -> Result<Vec<RecordedEvent>, String> {
    let mut all = Vec::new();
    loop {
        let after = all.last().map_or(0, |e: &RecordedEvent| e.position);
        let events = app
            .state
            .store
            .read_all(after, PAGE)
            .await
            .map_err(|e| format!("the log could not be read after {after}: {e}"))?;
        if events.is_empty() {
            return Ok(all);
        }
        all.extend(events);
    }
}

/// Every event of `events` whose actor is missing or empty, one failure a line naming its
/// position, stream and type (empty: every event is attributed).
pub fn unattributed(events: &[RecordedEvent]) -> Vec<String> {
    events
        .iter()
        .filter(|e| e.metadata.actor.as_deref().is_none_or(str::is_empty))
        .map(|e| {
            format!(
                "position {} ({} {}): no actor",
                e.position, e.stream, e.event_type
            )
        })
        .collect()
}

/// The actors `events` name: who the walk wrote as.
pub fn actors(events: &[RecordedEvent]) -> BTreeSet<String> {
    events
        .iter()
        .filter_map(|e| e.metadata.actor.clone())
        .collect()
}
