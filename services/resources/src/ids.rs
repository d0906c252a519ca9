//! Integer ids (`res_id`, `resrev_id`, `rescontent_id`, changeset ids) from the counter stream
//! `resources/ids/counters`.
//!
//! Deki's tables number rows with auto-increment columns. Here a command takes its ids while it
//! is decided, from the counters folded from this stream, and appends one [`IdsEvent`] naming
//! what it took in the same append as its revisions: the ids are in the events, a replay gives
//! the same ids, and two commands racing for the same ids conflict on this stream's version
//! (the loser decides again with fresh counters).

use palimpsest_events::resources::{IdRange, IdsEvent};

/// The last id taken of each kind (0: none yet).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counters {
    /// Last `res_id`.
    pub res: i64,
    /// Last `resrev_id`.
    pub resrev: i64,
    /// Last `rescontent_id`.
    pub rescontent: i64,
    /// Last changeset id.
    pub changeset: i64,
}

/// The counters after `event`.
pub fn evolve(mut counters: Counters, event: &IdsEvent) -> Counters {
    let IdsEvent::IdsAllocated {
        res,
        resrev,
        rescontent,
        changeset,
    } = event;
    let last =
        |range: &Option<IdRange>, current: i64| range.map_or(current, |r| r.last.max(current));
    counters.res = last(res, counters.res);
    counters.resrev = last(resrev, counters.resrev);
    counters.rescontent = last(rescontent, counters.rescontent);
    counters.changeset = changeset.map_or(counters.changeset, |c| c.max(counters.changeset));
    counters
}

/// Hands out ids to one command, in order, and says at the end what it took.
#[derive(Debug, Clone)]
pub struct Allocator {
    start: Counters,
    next: Counters,
}

impl Allocator {
    /// An allocator starting after `counters`.
    pub fn new(counters: Counters) -> Self {
        Allocator {
            start: counters,
            next: counters,
        }
    }

    /// A new `res_id`.
    pub fn res(&mut self) -> i64 {
        self.next.res += 1;
        self.next.res
    }

    /// A new `resrev_id`.
    pub fn resrev(&mut self) -> i64 {
        self.next.resrev += 1;
        self.next.resrev
    }

    /// A new `rescontent_id`.
    pub fn rescontent(&mut self) -> i64 {
        self.next.rescontent += 1;
        self.next.rescontent
    }

    /// The command's changeset id: the same for every call.
    pub fn changeset(&mut self) -> i64 {
        if self.next.changeset == self.start.changeset {
            self.next.changeset += 1;
        }
        self.next.changeset
    }

    /// The event recording what was taken; `None` when nothing was.
    pub fn event(&self) -> Option<IdsEvent> {
        let range = |start: i64, next: i64| {
            (next > start).then_some(IdRange {
                first: start + 1,
                last: next,
            })
        };
        let event = IdsEvent::IdsAllocated {
            res: range(self.start.res, self.next.res),
            resrev: range(self.start.resrev, self.next.resrev),
            rescontent: range(self.start.rescontent, self.next.rescontent),
            changeset: (self.next.changeset > self.start.changeset).then_some(self.next.changeset),
        };
        (self.next != self.start).then_some(event)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_taken_by_a_command_are_recorded_and_the_next_command_continues_after_them() {
        let mut first = Allocator::new(Counters::default());
        assert_eq!((first.res(), first.resrev(), first.resrev()), (1, 1, 2));
        assert_eq!((first.changeset(), first.changeset()), (1, 1));
        let event = first.event().expect("ids taken");
        let counters = evolve(Counters::default(), &event);
        assert_eq!(
            counters,
            Counters {
                res: 1,
                resrev: 2,
                rescontent: 0,
                changeset: 1
            }
        );
        let mut second = Allocator::new(counters);
        assert_eq!((second.resrev(), second.rescontent()), (3, 1));
    }

    #[test]
    fn a_command_that_takes_no_id_records_nothing() {
        assert_eq!(Allocator::new(Counters::default()).event(), None);
    }
}
