//! The events this process appended last, kept in memory for its own readers.
//!
//! A projector of this process would otherwise read back from `log.events` the very events its
//! appender has just written: a round trip, and the decoding of every row, on the path of each
//! write that waits to read its own writes. The appender hands each committed batch's new
//! events here (before it moves the head, so a reader woken by the head finds them), and a
//! reader asks for the events after its checkpoint: it gets them when they are all still here,
//! and reads the log otherwise (another process appended in between, or they were let go).
//!
//! Positions are gapless, so the kept events are exactly a run of positions: events that do not
//! start where the kept ones end (another process appended meanwhile) replace them. The oldest
//! are let go past [`MAX_EVENTS`] events or [`MAX_BYTES`] (as the log measured them).

use palimpsest_events::RecordedEvent;
use std::collections::VecDeque;
use std::ops::Deref;
use std::sync::{Arc, Mutex};

/// Most events kept: a live reader is a batch or two behind; one further behind reads the log.
pub const MAX_EVENTS: usize = 4096;
/// Most bytes kept (the commands' sizes as the log measured them), so large events are let go
/// sooner.
pub const MAX_BYTES: usize = 8 << 20;

/// The recently appended events, shared by the appender and this process's readers.
#[derive(Clone, Default)]
pub struct RecentEvents {
    kept: Arc<Mutex<Kept>>,
}

/// A run of consecutive positions, as the commands that appended them (each command's events
/// shared with its caller's [`crate::Appended`], not copied).
#[derive(Default)]
struct Kept {
    commands: VecDeque<(Arc<[RecordedEvent]>, usize)>,
    events: usize,
    bytes: usize,
}

impl Kept {
    fn next_position(&self) -> Option<i64> {
        let (events, _) = self.commands.back()?;
        Some(events.last()?.position + 1)
    }

    fn keep(&mut self, events: Arc<[RecordedEvent]>, bytes: usize) {
        let Some(first) = events.first().map(|e| e.position) else {
            return;
        };
        if self.next_position().is_some_and(|next| next != first) {
            *self = Kept::default();
        }
        self.events += events.len();
        self.bytes += bytes;
        self.commands.push_back((events, bytes));
        while self.commands.len() > 1 && (self.events > MAX_EVENTS || self.bytes > MAX_BYTES) {
            if let Some((events, bytes)) = self.commands.pop_front() {
                self.events -= events.len();
                self.bytes -= bytes;
            }
        }
    }
}

/// Events a reader gets: a command's events from `from` on.
#[derive(Clone)]
pub struct RecentSlice {
    events: Arc<[RecordedEvent]>,
    from: usize,
}

impl Deref for RecentSlice {
    type Target = [RecordedEvent];

    fn deref(&self) -> &[RecordedEvent] {
        &self.events[self.from..]
    }
}

impl RecentEvents {
    /// Keeps a committed batch's new events: its commands' events, in position order, each
    /// with its size as the log measured it when it accepted the command.
    pub(crate) fn record(&self, commands: impl Iterator<Item = (Arc<[RecordedEvent]>, usize)>) {
        let Ok(mut kept) = self.kept.lock() else {
            tracing::warn!("recent events poisoned; readers read the log");
            return;
        };
        commands.for_each(|(events, bytes)| kept.keep(events, bytes));
    }

    /// The events after `position`, whole commands up to about `limit` events (at least one),
    /// when the one at `position + 1` is still kept; `None` means: read the log.
    pub fn after(&self, position: i64, limit: usize) -> Option<Vec<RecentSlice>> {
        let kept = self.kept.lock().ok()?;
        // The kept commands are a run of consecutive positions, each with at least one event
        // (`Kept::keep`), so they are ordered by their last position and a binary search finds
        // the one holding `position + 1`.
        let start = kept
            .commands
            .partition_point(|(events, _)| events.last().is_some_and(|e| e.position <= position));
        let (events, _) = kept.commands.get(start)?;
        if events.first().is_none_or(|e| e.position > position + 1) {
            return None;
        }
        let mut slices = Vec::new();
        let mut count = 0;
        for (events, _) in kept.commands.range(start..) {
            let first = events.first().map_or(position + 1, |e| e.position);
            let from = usize::try_from(position + 1 - first).unwrap_or(0);
            if count > 0 && count + events.len() - from > limit {
                break;
            }
            count += events.len() - from;
            slices.push(RecentSlice {
                events: events.clone(),
                from,
            });
        }
        Some(slices)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use palimpsest_events::{Metadata, StreamName};

    fn event(position: i64) -> RecordedEvent {
        RecordedEvent {
            event_id: uuid::Uuid::now_v7(),
            stream: StreamName::new("test", "thing", "a").expect("stream"),
            version: position,
            position,
            event_type: "Happened".into(),
            schema_version: 1,
            payload: serde_json::json!({"n": position}),
            metadata: Metadata::default(),
            recorded_at: chrono::Utc::now(),
            prev_hash: None,
            hash: String::new(),
        }
    }

    fn batch(
        positions: std::ops::RangeInclusive<i64>,
    ) -> std::iter::Once<(Arc<[RecordedEvent]>, usize)> {
        std::iter::once((positions.map(event).collect(), 100))
    }

    fn positions(slices: &[RecentSlice]) -> Vec<i64> {
        slices
            .iter()
            .flat_map(|s| s.iter().map(|e| e.position))
            .collect()
    }

    #[test]
    fn a_reader_gets_the_events_after_its_position_even_from_inside_a_batch() {
        let recent = RecentEvents::default();
        recent.record(batch(1..=3));
        recent.record(batch(4..=5));
        let got = recent.after(1, 100).expect("kept");
        assert_eq!(positions(&got), vec![2, 3, 4, 5]);
        assert_eq!(positions(&recent.after(3, 100).expect("kept")), vec![4, 5]);
        assert!(recent.after(5, 100).is_none(), "nothing after the last");
    }

    #[test]
    fn a_reader_finds_its_place_among_many_kept_commands_of_any_size() {
        let recent = RecentEvents::default();
        let mut next = 1;
        for size in (0..600).map(|n| 1 + n % 3) {
            recent.record(batch(next..=next + size - 1));
            next += size;
        }
        let last = next - 1;
        for position in 0..last {
            let got = positions(&recent.after(position, usize::MAX).expect("kept"));
            assert_eq!(
                got,
                (position + 1..=last).collect::<Vec<_>>(),
                "after {position}"
            );
        }
        assert!(recent.after(last, 100).is_none(), "nothing after the last");
        assert!(recent.after(-5, 100).is_none(), "before the first kept");
    }

    #[test]
    fn whole_batches_are_given_up_to_the_limit_and_at_least_one() {
        let recent = RecentEvents::default();
        recent.record(batch(1..=3));
        recent.record(batch(4..=6));
        assert_eq!(positions(&recent.after(0, 4).expect("kept")), vec![1, 2, 3]);
        assert_eq!(positions(&recent.after(0, 1).expect("kept")), vec![1, 2, 3]);
    }

    #[test]
    fn a_batch_that_does_not_follow_the_kept_ones_replaces_them() {
        let recent = RecentEvents::default();
        recent.record(batch(1..=3));
        recent.record(batch(7..=8));
        assert!(
            recent.after(3, 100).is_none(),
            "another process appended 4 to 6: read the log"
        );
        assert_eq!(positions(&recent.after(6, 100).expect("kept")), vec![7, 8]);
    }

    #[test]
    fn the_oldest_batches_are_let_go_past_the_bound() {
        let recent = RecentEvents::default();
        let mut next = 1;
        while next <= MAX_EVENTS as i64 + 10 {
            recent.record(batch(next..=next + 9));
            next += 10;
        }
        assert!(recent.after(0, 100).is_none(), "the first batch was let go");
        assert!(recent.after(next - 11, 100).is_some());
    }

    #[test]
    fn large_commands_are_let_go_past_the_byte_bound() {
        let recent = RecentEvents::default();
        for position in 1..=3 {
            let events: Arc<[RecordedEvent]> = vec![event(position)].into();
            recent.record(std::iter::once((events, MAX_BYTES / 2)));
        }
        assert!(
            recent.after(0, 100).is_none(),
            "the first command was let go"
        );
        assert_eq!(positions(&recent.after(1, 100).expect("kept")), vec![2, 3]);
    }
}
