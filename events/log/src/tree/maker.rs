//! The tree maker: follows the log off the append path and grows the Merkle tree.
//!
//! Each round reads the positions and stored chain hashes after the tree's size, makes each
//! leaf, and accepts a batch's leaves only when the appender's signature over them verifies (positions up to `log.tree_origin` were appended before
//! batches were signed). Accepted leaves go onto the right edge ([`Frontier`]); the nodes they
//! complete are stored, and a head is signed every `every_events` leaves or `every` time,
//! whichever comes first. What cannot be accepted — a gap, an edited event, a position no valid
//! signature covers — stops the tree before it: logged, counted, shown by `/readyz`, and never
//! signed into a head. One tree maker runs per log (a session advisory lock).

use super::frontier::Frontier;
use super::nodes::{self, tree_size};
use super::signer::LogSigner;
use super::{TREE_LOCK_KEY, leaf};
use crate::{EventStore, LogError};
use chrono::Utc;
use deadpool_postgres::GenericClient;
use palimpsest_events::RecordedEvent;
use palimpsest_events::merkle::{self, Hash};
use palimpsest_events::tree_head::{BatchSignature, SignedTreeHead, TreeHead};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

/// When heads are signed.
#[derive(Debug, Clone, Copy)]
pub struct HeadPolicy {
    /// Sign once this many leaves were added since the last head.
    pub every_events: u64,
    /// Sign once this long passed since the last head, if a leaf was added.
    pub every: Duration,
}

impl Default for HeadPolicy {
    fn default() -> Self {
        HeadPolicy {
            every_events: 1000,
            every: Duration::from_millis(250),
        }
    }
}

/// What the tree maker refused, and where.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Refusal {
    /// The first position the tree does not take.
    pub position: u64,
    /// Why, in words.
    pub reason: String,
}

/// The tree maker's state as `/readyz` shows it: its size, the last head, what it refused.
#[derive(Debug, Clone, Default)]
pub struct TreeHealth {
    state: Arc<Mutex<TreeState>>,
}

/// See [`TreeHealth`].
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct TreeState {
    /// Leaves in the tree.
    pub size: u64,
    /// The size of the latest signed head.
    pub head_size: u64,
    /// Set while the tree maker refuses a position.
    pub refused: Option<Refusal>,
}

impl TreeHealth {
    /// The current state.
    pub fn state(&self) -> TreeState {
        match self.state.lock() {
            Ok(s) => s.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    fn update(&self, f: impl FnOnce(&mut TreeState)) {
        match self.state.lock() {
            Ok(mut s) => f(&mut s),
            Err(poisoned) => f(&mut poisoned.into_inner()),
        }
    }
}

/// Where the tree maker publishes heads: a core NATS subject outside the event stream's filter,
/// `<prefix>-log.<log_id>.head` ([`palimpsest_events::subject::heads_subject`]).
pub fn head_subject(prefix: &str, log_id: uuid::Uuid) -> String {
    palimpsest_events::subject::heads_subject(prefix, log_id)
}

/// The tree maker's inputs.
pub struct TreeMaker {
    /// The log.
    pub store: EventStore,
    /// The log's key (verifies batches, signs heads).
    pub signer: LogSigner,
    /// When heads are signed.
    pub policy: HeadPolicy,
    /// NATS to publish heads on, if any.
    pub nats: Option<async_nats::Client>,
    /// The deployment's subject prefix: heads go on `<prefix>-log.<log_id>.head`.
    pub subject_prefix: String,
    /// Where its state is shown.
    pub health: TreeHealth,
}

/// Most events read per round (more when one batch is larger).
const ROUND: i64 = 2048;
/// The least time between the starts of two rounds that did not fill up: appends gather into
/// fewer, larger rounds, since a round costs its round trips whatever its size (a head is
/// still due every [`HeadPolicy::every`]).
const PACE: Duration = Duration::from_millis(20);
/// How long the tree maker waits before it looks again at a refused position or an error.
const RETRY: Duration = Duration::from_secs(1);

impl TreeMaker {
    /// Runs until `shutdown`: waits for the tree lock, then grows the tree, resuming on errors.
    pub async fn run(self, shutdown: CancellationToken) {
        let pool = self.store.pool().clone();
        let client = loop {
            match lock(&pool).await {
                Ok(Some(client)) => break client,
                Ok(None) => {}
                Err(e) => tracing::warn!(error = %e, "tree maker: no lock yet"),
            }
            tokio::select! {
                _ = tokio::time::sleep(RETRY) => {}
                _ = shutdown.cancelled() => return,
            }
        };
        while !shutdown.is_cancelled() {
            if let Err(e) = self.grow(&client, &shutdown).await {
                metrics::counter!("palimpsest_tree_errors_total").increment(1);
                tracing::warn!(error = %e, "tree maker interrupted; resuming");
                tokio::select! {
                    _ = tokio::time::sleep(RETRY) => {}
                    _ = shutdown.cancelled() => return,
                }
            }
        }
    }

    /// Loads the stored tree and grows it until an error or `shutdown`.
    #[tracing::instrument(skip_all)]
    async fn grow(
        &self,
        client: &deadpool_postgres::Object,
        shutdown: &CancellationToken,
    ) -> Result<(), LogError> {
        let size = tree_size(client).await?;
        let mut frontier = Frontier::load(client, size).await?;
        let origin = origin(client).await?;
        let mut last_head = latest_head_size(client).await?;
        let mut last_signed = Instant::now();
        let mut limit = ROUND;
        let mut heads = self.store.head().subscribe();
        loop {
            let started = Instant::now();
            let round = self.round(client, &mut frontier, origin, limit).await?;
            limit = if round.accepted == 0 && round.read as i64 == limit {
                limit * 2
            } else {
                ROUND
            };
            let grown = frontier.size() - last_head;
            let due = grown >= self.policy.every_events
                || (grown > 0 && last_signed.elapsed() >= self.policy.every);
            if due {
                self.sign(client, &frontier).await?;
                last_head = frontier.size();
                last_signed = Instant::now();
            }
            self.health.update(|s| {
                s.size = frontier.size();
                s.head_size = last_head;
            });
            if round.read as i64 == limit && round.refused.is_none() {
                continue;
            }
            if round.accepted == 0 || round.refused.is_some() {
                let wait = match (round.refused.is_some(), grown > 0 && !due) {
                    (true, _) => RETRY,
                    (false, true) => self.policy.every.saturating_sub(last_signed.elapsed()),
                    (false, false) => Duration::from_secs(5),
                };
                tokio::select! {
                    _ = heads.changed() => {}
                    _ = tokio::time::sleep(wait) => {}
                    _ = shutdown.cancelled() => return Ok(()),
                }
            }
            tokio::select! {
                _ = tokio::time::sleep_until((started + PACE).into()) => {}
                _ = shutdown.cancelled() => return Ok(()),
            }
        }
    }

    /// Reads what follows the tree, takes what verifies, stores the new nodes.
    async fn round(
        &self,
        client: &deadpool_postgres::Object,
        frontier: &mut Frontier,
        origin: u64,
        limit: i64,
    ) -> Result<Round, LogError> {
        // The events first, then the batches, one after the other: each read has a snapshot of
        // its own, and a batch's events and signature commit together, so only a batch read
        // after the events is sure to cover every event read. (Sent together, the two reads ran
        // in either order — `tokio::join!` takes turns — and a batch committed between them
        // was seen as events without a signature: a false refusal.) One over later events is
        // not used.
        let after = frontier.size();
        let events = stored_leaves(client, after, limit).await?;
        let batches = batches(client, after, after + limit as u64).await?;
        let Some(last) = events.last().map(|e| e.0) else {
            return Ok(Round::default());
        };
        let key = self.signer.verifying_key();
        let check = check_leaves(
            events.iter().cloned(),
            &batches,
            frontier.size(),
            origin,
            &key,
        );
        let complete = events.len() < limit as usize;
        let refused = check.refused.or_else(|| {
            // Events end inside a batch although nothing more was there to read: the batch's
            // own positions are missing.
            check
                .pending
                .filter(|_| complete)
                .map(|(first, end)| Refusal {
                    position: last + 1,
                    reason: format!(
                        "position {} is missing: batch {first}..{end} was signed with it",
                        last + 1
                    ),
                })
        });
        let mut nodes = Vec::with_capacity(check.leaves.len() * 2);
        for leaf in &check.leaves {
            frontier.push(*leaf, &mut nodes);
        }
        nodes::store(client, &nodes, frontier.size()).await?;
        self.report(refused.as_ref());
        Ok(Round {
            read: events.len(),
            accepted: check.leaves.len(),
            refused,
        })
    }

    /// Shows, logs and counts a refusal the first time it is seen; clears it once gone.
    fn report(&self, refused: Option<&Refusal>) {
        let before = self.health.state().refused;
        if before.as_ref() == refused {
            return;
        }
        if let Some(r) = refused {
            metrics::counter!("palimpsest_tree_refusals_total").increment(1);
            metrics::gauge!("palimpsest_tree_refused_position").set(r.position as f64);
            tracing::error!(
                position = r.position,
                reason = %r.reason,
                "the tree maker refuses an event: it is not what the appender signed"
            );
        } else {
            metrics::gauge!("palimpsest_tree_refused_position").set(0.0);
        }
        self.health.update(|s| s.refused = refused.cloned());
    }

    /// Signs and stores a head of the tree as it is, and publishes it.
    async fn sign(
        &self,
        client: &deadpool_postgres::Object,
        frontier: &Frontier,
    ) -> Result<(), LogError> {
        let head = self.signer.sign_head(TreeHead {
            log_id: self.store.log_id(),
            tree_size: frontier.size(),
            timestamp: Utc::now().timestamp_millis().max(0) as u64,
            root_hash: frontier.root(),
        });
        client
            .execute(
                "INSERT INTO log.tree_heads (tree_size, timestamp_ms, root_hash, signature) \
                 VALUES ($1, $2, $3, $4) ON CONFLICT (tree_size) DO NOTHING",
                &[
                    &(head.head.tree_size as i64),
                    &(head.head.timestamp as i64),
                    &head.head.root_hash.to_vec(),
                    &head.signature.to_vec(),
                ],
            )
            .await?;
        metrics::gauge!("palimpsest_tree_head_size").set(head.head.tree_size as f64);
        self.publish(&head).await;
        Ok(())
    }

    async fn publish(&self, head: &SignedTreeHead) {
        let Some(nats) = &self.nats else { return };
        let body = match serde_json::to_vec(head) {
            Ok(body) => body,
            Err(e) => return tracing::warn!(error = %e, "tree head not encoded"),
        };
        let subject = head_subject(&self.subject_prefix, head.head.log_id);
        if let Err(e) = nats.publish(subject, body.into()).await {
            metrics::counter!("palimpsest_tree_head_publish_errors_total").increment(1);
            tracing::warn!(error = %e, "tree head not published on NATS");
        }
    }
}

/// What one round did.
#[derive(Debug, Default)]
struct Round {
    read: usize,
    accepted: usize,
    refused: Option<Refusal>,
}

/// What events and batch signatures allow ([`check`]).
pub struct Checked {
    /// The leaves accepted, in order from the given size on.
    pub leaves: Vec<Hash>,
    /// The first position refused, and why.
    pub refused: Option<Refusal>,
    /// A batch whose events ended before its last position: (first, last).
    pub pending: Option<(u64, u64)>,
}

/// Checks `events` (in position order, after `size`) against `batches`: each event's leaf
/// recomputes from its content, and every position after `origin` is in a batch the key
/// signed. Pure: `verify --since` and a witness run it.
pub fn check(
    events: &[RecordedEvent],
    batches: &[BatchSignature],
    size: u64,
    origin: u64,
    key: &ed25519_dalek::VerifyingKey,
) -> Checked {
    let leaves = events
        .iter()
        .map(|e| (e.position as u64, leaf::recompute(e)));
    check_leaves(leaves, batches, size, origin, key)
}

/// Checks leaves (each a position and its leaf, or why it has none) against `batches`, as
/// [`check`] does; the tree maker gives leaves made from the stored hashes alone.
pub fn check_leaves(
    events: impl IntoIterator<Item = (u64, Result<Hash, String>)>,
    batches: &[BatchSignature],
    size: u64,
    origin: u64,
    key: &ed25519_dalek::VerifyingKey,
) -> Checked {
    let mut leaves = Vec::new();
    let mut batches = batches.iter().peekable();
    let mut open: Option<(&BatchSignature, Vec<Hash>)> = None;
    let refuse = |leaves, position, reason: String| Checked {
        leaves,
        refused: Some(Refusal { position, reason }),
        pending: None,
    };
    for (expected, (position, leaf)) in (size + 1..).zip(events) {
        if position != expected {
            return refuse(leaves, expected, format!("position {expected} is missing"));
        }
        let leaf = match leaf {
            Ok(leaf) => leaf,
            Err(reason) => {
                return refuse(leaves, position, format!("position {position}: {reason}"));
            }
        };
        if position <= origin {
            leaves.push(leaf);
            continue;
        }
        if open.is_none() {
            // Batches that end before this position were for events the tree already holds.
            while batches.next_if(|b| b.last_position < position).is_some() {}
            match batches.next_if(|b| b.first_position == position) {
                Some(batch) => open = Some((batch, Vec::new())),
                None => {
                    return refuse(
                        leaves,
                        position,
                        format!(
                            "position {position} is covered by no batch signature: \
                             it was not appended with the log's key"
                        ),
                    );
                }
            }
        }
        let Some((batch, pending)) = open.as_mut() else {
            continue;
        };
        pending.push(leaf);
        if position == batch.last_position {
            if !batch.verify(key, pending) {
                let (first, last) = (batch.first_position, batch.last_position);
                return refuse(
                    leaves,
                    first,
                    format!(
                        "batch {first}..{last}: its signature does not match its events' \
                         leaves: an event was inserted, edited or moved without the log's key"
                    ),
                );
            }
            leaves.append(pending);
            open = None;
        }
    }
    Checked {
        leaves,
        refused: None,
        pending: open.map(|(b, _)| (b.first_position, b.last_position)),
    }
}

/// The leaves of the (at most `limit`) positions after `after`, from each event's position and
/// stored chain hash only: what the appender signed. Whether an event's content still gives
/// that hash is the chain audit's question (`audit verify`, `verify --since`, a witness): a
/// head commits to the signed hash, so an event edited under it is not what any head attests.
async fn stored_leaves(
    client: &impl GenericClient,
    after: u64,
    limit: i64,
) -> Result<Vec<(u64, Result<Hash, String>)>, LogError> {
    let rows = client
        .query(
            "SELECT position, hash FROM log.events WHERE position > $1 ORDER BY position LIMIT $2",
            &[&(after as i64), &limit],
        )
        .await?;
    Ok(rows
        .iter()
        .map(|r| {
            let position = r.get::<_, i64>(0) as u64;
            let hash: Vec<u8> = r.get(1);
            let leaf = <[u8; 32]>::try_from(hash.as_slice())
                .map(|h| merkle::event_leaf(position, &h))
                .map_err(|_| format!("position {position}: its hash is not 32 bytes"));
            (position, leaf)
        })
        .collect())
}

/// Takes the tree lock on a connection kept for the tree maker, if no other holds it.
async fn lock(
    pool: &deadpool_postgres::Pool,
) -> Result<Option<deadpool_postgres::Object>, LogError> {
    let client = pool.get().await?;
    let row = client
        .query_one("SELECT pg_try_advisory_lock($1)", &[&TREE_LOCK_KEY])
        .await?;
    Ok(row.get::<_, bool>(0).then_some(client))
}

/// The last position appended before batches were signed.
pub async fn origin(client: &impl GenericClient) -> Result<u64, LogError> {
    let row = client
        .query_one("SELECT position FROM log.tree_origin", &[])
        .await?;
    Ok(row.get::<_, i64>(0) as u64)
}

async fn latest_head_size(client: &impl GenericClient) -> Result<u64, LogError> {
    let row = client
        .query_one(
            "SELECT coalesce(max(tree_size), 0) FROM log.tree_heads",
            &[],
        )
        .await?;
    Ok(row.get::<_, i64>(0) as u64)
}

/// The batch signatures that touch positions `after+1..=upto`, in order.
pub async fn batches(
    client: &impl GenericClient,
    after: u64,
    upto: u64,
) -> Result<Vec<BatchSignature>, LogError> {
    let rows = client
        .query(
            "SELECT first_position, last_position, signature FROM log.batches \
             WHERE last_position > $1 AND first_position <= $2 ORDER BY first_position",
            &[&(after as i64), &(upto as i64)],
        )
        .await?;
    Ok(rows
        .iter()
        .map(|r| {
            let signature: Vec<u8> = r.get(2);
            BatchSignature {
                first_position: r.get::<_, i64>(0) as u64,
                last_position: r.get::<_, i64>(1) as u64,
                signature: signature.try_into().unwrap_or([0u8; 64]),
            }
        })
        .collect())
}
