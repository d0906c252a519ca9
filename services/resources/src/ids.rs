//! Integer ids (`res_id`, `resrev_id`, `rescontent_id`, changeset ids), leased in blocks from
//! the counter stream `resources/ids/counters`.
//!
//! Deki's tables number rows with auto-increment columns (gaps allowed, as MySQL leaves after a
//! rolled-back insert). A process leases a block of [`BLOCK`] ids of one kind with one
//! [`IdsEvent::IdsLeased`] appended as a step of the command that needed it
//! ([`Attempt::step`]: its own append, expected at the version read, so two processes leasing at
//! once conflict and the loser leases the next block), then hands them
//! out to its commands from memory: a revision's append no longer touches the counter stream,
//! so writes to different resources do not serialise on one stream. The ids are in the events,
//! so a replay gives the same ids; ids of a block its process never handed out (a stop, a
//! command decided again) are skipped, never reused.

use crate::streams;
use palimpsest_events::resources::{IdRange, IdsEvent};
use palimpsest_events::{DecodeError, DomainEvent, RecordedEvent, StreamName};
use palimpsest_web::command::{Attempt, CommandError, Decision, StreamState};
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

/// How many ids of one kind one lease takes.
pub const BLOCK: i64 = 1000;

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

impl StreamState for Counters {
    fn initial(_: &StreamName) -> Self {
        Counters::default()
    }

    fn fold(&mut self, event: &RecordedEvent) -> Result<(), DecodeError> {
        *self = evolve(*self, &IdsEvent::decode(event)?);
        Ok(())
    }
}

/// The kinds of id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IdKind {
    /// `res_id`.
    Res,
    /// `resrev_id`.
    Resrev,
    /// `rescontent_id`.
    Rescontent,
    /// Changeset id.
    Changeset,
}

impl IdKind {
    fn index(self) -> usize {
        self as usize
    }
}

/// The counters after `event`.
pub fn evolve(mut counters: Counters, event: &IdsEvent) -> Counters {
    let (res, resrev, rescontent, changeset) = match event {
        IdsEvent::IdsAllocated {
            res,
            resrev,
            rescontent,
            changeset,
        } => (
            *res,
            *resrev,
            *rescontent,
            changeset.map(|c| IdRange { first: c, last: c }),
        ),
        IdsEvent::IdsLeased {
            res,
            resrev,
            rescontent,
            changeset,
        } => (*res, *resrev, *rescontent, *changeset),
    };
    let last =
        |range: Option<IdRange>, current: i64| range.map_or(current, |r| r.last.max(current));
    counters.res = last(res, counters.res);
    counters.resrev = last(resrev, counters.resrev);
    counters.rescontent = last(rescontent, counters.rescontent);
    counters.changeset = last(changeset, counters.changeset);
    counters
}

/// The lease of the next `size` ids of `kind` after `counters` (the pure decider).
pub fn lease(counters: &Counters, kind: IdKind, size: i64) -> IdsEvent {
    let after = match kind {
        IdKind::Res => counters.res,
        IdKind::Resrev => counters.resrev,
        IdKind::Rescontent => counters.rescontent,
        IdKind::Changeset => counters.changeset,
    };
    let range = Some(IdRange {
        first: after + 1,
        last: after + size.max(1),
    });
    let only = |k: IdKind| if k == kind { range } else { None };
    IdsEvent::IdsLeased {
        res: only(IdKind::Res),
        resrev: only(IdKind::Resrev),
        rescontent: only(IdKind::Rescontent),
        changeset: only(IdKind::Changeset),
    }
}

/// The range of `kind` a lease event took.
fn leased(event: &IdsEvent, kind: IdKind) -> Option<IdRange> {
    let IdsEvent::IdsLeased {
        res,
        resrev,
        rescontent,
        changeset,
    } = event
    else {
        return None;
    };
    [*res, *resrev, *rescontent, *changeset][kind.index()]
}

/// The ids a process has leased and not yet handed out, per kind, in order.
#[derive(Debug, Default)]
pub struct IdPool {
    blocks: Mutex<[VecDeque<IdRange>; 4]>,
}

impl IdPool {
    /// The next id of `kind`, if the process holds one.
    pub fn take(&self, kind: IdKind) -> Option<i64> {
        let mut blocks = match self.blocks.lock() {
            Ok(guard) => guard,
            Err(poisoned) => poisoned.into_inner(),
        };
        let queue = &mut blocks[kind.index()];
        let block = queue.front_mut()?;
        let id = block.first;
        if block.first == block.last {
            queue.pop_front();
        } else {
            block.first += 1;
        }
        Some(id)
    }

    /// Adds a leased block.
    pub fn add(&self, kind: IdKind, range: IdRange) {
        let mut blocks = match self.blocks.lock() {
            Ok(guard) => guard,
            Err(poisoned) => poisoned.into_inner(),
        };
        blocks[kind.index()].push_back(range);
    }
}

/// Where a process's commands get ids: its pool, refilled by leases run as steps of the
/// command that needed them. Cheap to clone (shared).
#[derive(Clone, Default)]
pub struct IdSource {
    pool: Arc<IdPool>,
    /// Held while leasing, so commands that find the pool empty at once wait for one lease
    /// instead of each leasing a block.
    refill: Arc<tokio::sync::Mutex<()>>,
}

impl IdSource {
    /// A source with an empty pool.
    pub fn new() -> Self {
        Self::default()
    }

    /// The next id of `kind`: from the pool, else from a block leased now as a step of the
    /// command `attempt` belongs to (its lease names that command's actor).
    pub async fn next<E>(&self, attempt: &Attempt, kind: IdKind) -> Result<i64, CommandError<E>> {
        loop {
            if let Some(id) = self.pool.take(kind) {
                return Ok(id);
            }
            let _refilling = self.refill.lock().await;
            if let Some(id) = self.pool.take(kind) {
                return Ok(id);
            }
            let range = lease_block(attempt, kind).await?;
            self.pool.add(kind, range);
        }
    }
}

/// Leases the next block of `kind` as a step of `attempt`'s command: load the counters,
/// decide, one append expecting the version read (the runner decides again if another
/// process leased meanwhile). The block stays leased even if the command is decided again.
async fn lease_block<E>(attempt: &Attempt, kind: IdKind) -> Result<IdRange, CommandError<E>> {
    attempt
        .step(streams::CONTEXT, |step| async move {
            let stream = streams::ids().map_err(|e| CommandError::Internal(e.to_string()))?;
            let counters: Counters = step.load(&stream).await?;
            let event = lease(&counters, kind, BLOCK);
            let range = leased(&event, kind)
                .ok_or_else(|| CommandError::Internal("a lease took no ids".into()))?;
            let encoded = event
                .encode()
                .map_err(|e| CommandError::Internal(format!("lease does not encode: {e}")))?;
            Ok(Decision::unstored(range).write(stream, vec![encoded]))
        })
        .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lease_takes_the_block_after_every_id_ever_taken_of_its_kind() {
        let old = IdsEvent::IdsAllocated {
            res: Some(IdRange { first: 1, last: 3 }),
            resrev: Some(IdRange { first: 1, last: 7 }),
            rescontent: None,
            changeset: Some(5),
        };
        let counters = evolve(Counters::default(), &old);
        let first = lease(&counters, IdKind::Resrev, BLOCK);
        assert_eq!(
            leased(&first, IdKind::Resrev),
            Some(IdRange {
                first: 8,
                last: 7 + BLOCK
            })
        );
        assert_eq!(leased(&first, IdKind::Res), None);
        let counters = evolve(counters, &first);
        assert_eq!((counters.res, counters.resrev), (3, 7 + BLOCK));
        let second = lease(&counters, IdKind::Resrev, BLOCK);
        assert_eq!(
            leased(&second, IdKind::Resrev).map(|r| r.first),
            Some(8 + BLOCK)
        );
        let changeset = lease(&counters, IdKind::Changeset, BLOCK);
        assert_eq!(
            leased(&changeset, IdKind::Changeset).map(|r| r.first),
            Some(6)
        );
    }

    #[test]
    fn a_pool_hands_out_each_leased_id_once_in_order() {
        let pool = IdPool::default();
        assert_eq!(pool.take(IdKind::Res), None);
        pool.add(IdKind::Res, IdRange { first: 4, last: 5 });
        pool.add(IdKind::Res, IdRange { first: 9, last: 9 });
        let taken: Vec<_> = std::iter::from_fn(|| pool.take(IdKind::Res)).collect();
        assert_eq!(taken, vec![4, 5, 9]);
        assert_eq!(pool.take(IdKind::Resrev), None);
    }
}
