//! `palimpsest audit witness`: a process any third party can run against a server's public
//! `/v1/log` routes (and, with the admin token, `/v1/events`), like a Certificate Transparency
//! witness or immudb's auditor (decision 0024). It keeps, in its state file, the last signed
//! head it verified, the log's key and the leaves it recomputed, and each round:
//!
//! 1. reads the key (a key other than the kept one is a fork) and the latest head, whose
//!    signature must verify;
//! 2. checks that the head extends the kept one: it may not shrink, and its consistency proof
//!    from the kept size (RFC 9162 §2.1.4) must verify;
//! 3. with a token, recomputes the new events' leaves from their published content and checks
//!    that all its leaves give the head's root;
//! 4. every `--recheck-every` rounds, re-reads the whole log and compares every event's
//!    recomputed leaf with the kept one, so an edit of an old event in the database (which
//!    the tree maker, following only new positions, never sees) is found.
//!
//! A fork is logged, counted (`palimpsest_witness_forks_total`) and ends the witness with an
//! error naming the position. A witness started without a state file **trusts the first head
//! it sees** once its signature verifies (and, with a token, once the leaves recomputed from
//! every event give its root): like any witness, it can only tell that the log changed after
//! it first looked.

use crate::cli::log_client::{self, DEFAULT_URL, LogClient};
use crate::config::Settings;
use anyhow::Context;
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use clap::Args;
use palimpsest_events::RecordedEvent;
use palimpsest_events::merkle::{self, Hash};
use palimpsest_events::tree_head::{LogKey, SignedTreeHead};
use palimpsest_log::tree::leaf;
use palimpsest_log::tree::maker::check;
use serde::{Deserialize, Serialize};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The `format` of a state file this code writes and reads.
pub const STATE_FORMAT: &str = "palimpsest-witness-state-v1";

/// `palimpsest audit witness`'s flags.
#[derive(Debug, Clone, Args)]
pub struct WitnessArgs {
    /// The server to watch.
    #[arg(long, default_value = DEFAULT_URL)]
    pub url: String,
    /// The admin token, to recompute leaves from `/v1/events` (else `PALIMPSEST_ADMIN_TOKEN`
    /// or `<data-dir>/admin-token`); without one only heads and proofs are checked.
    #[arg(long)]
    pub token: Option<String>,
    /// The state file: the last verified head, the key and the kept leaves.
    #[arg(long)]
    pub state: PathBuf,
    /// Milliseconds between rounds.
    #[arg(long, default_value_t = 1000)]
    pub interval: u64,
    /// Re-read the whole log against the kept leaves every this many rounds (1: every round).
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..))]
    pub recheck_every: u64,
    /// One round, then exit (0 when the log is consistent).
    #[arg(long)]
    pub once: bool,
    /// Serve Prometheus `/metrics` here.
    #[arg(long)]
    pub metrics_addr: Option<SocketAddr>,
}

/// What a witness keeps between rounds (and runs).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct WitnessState {
    /// Always [`STATE_FORMAT`].
    pub format: String,
    /// The log's key, as first seen.
    pub key: LogKey,
    /// The last head verified.
    pub head: SignedTreeHead,
    /// The leaves of positions `1..=tree_size`, 32 bytes each, concatenated, base64; absent
    /// when the witness had no token to recompute them.
    pub leaves: Option<String>,
    /// Rounds verified so far (when the next recheck is due).
    pub rounds: u64,
}

impl WitnessState {
    /// The kept leaves, `None` when none are kept; an error when they are not the head's.
    fn leaves(&self) -> anyhow::Result<Option<Vec<Hash>>> {
        let Some(text) = &self.leaves else {
            return Ok(None);
        };
        let bytes = STANDARD
            .decode(text)
            .context("state file: leaves are not base64")?;
        anyhow::ensure!(
            bytes.len() as u64 == self.head.head.tree_size * 32,
            "state file: {} bytes of leaves for a head of {} leaves",
            bytes.len(),
            self.head.head.tree_size
        );
        Ok(Some(
            bytes
                .chunks_exact(32)
                .map(|c| {
                    let mut h = [0u8; 32];
                    h.copy_from_slice(c);
                    h
                })
                .collect(),
        ))
    }
}

/// The log changed in a way a log may not: the position named is the first one found altered,
/// removed or not provable.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("fork at position {position}: {reason}")]
pub struct Fork {
    /// The first position found altered.
    pub position: u64,
    /// What was seen.
    pub reason: String,
}

/// Why a round did not verify.
#[derive(Debug)]
enum RoundError {
    /// The log forked: the witness stops.
    Fork(Fork),
    /// The server could not be asked (or answered nonsense): the next round tries again.
    Other(anyhow::Error),
}

impl From<anyhow::Error> for RoundError {
    fn from(e: anyhow::Error) -> Self {
        RoundError::Other(e)
    }
}

fn fork(position: u64, reason: impl Into<String>) -> RoundError {
    RoundError::Fork(Fork {
        position,
        reason: reason.into(),
    })
}

/// Runs the witness: rounds every `--interval` ms until a fork (an error naming the position),
/// or one round with `--once`. An unreachable server is logged and retried, except with
/// `--once`, where it is an error.
pub async fn run(settings: &Settings, args: WitnessArgs) -> anyhow::Result<()> {
    if let Some(addr) = args.metrics_addr {
        serve_metrics(addr).await?;
    }
    let token = log_client::admin_token(args.token.clone(), settings);
    let client = LogClient::new(&args.url, token)?;
    let mut kept = load(&args.state)?;
    loop {
        match round(&client, kept.as_ref(), args.recheck_every).await {
            Ok(Some((state, summary))) => {
                save(&args.state, &state)?;
                metrics::counter!("palimpsest_witness_rounds_total").increment(1);
                metrics::gauge!("palimpsest_witness_tree_size")
                    .set(state.head.head.tree_size as f64);
                println!("{summary}");
                kept = Some(state);
                if args.once {
                    return Ok(());
                }
            }
            Ok(None) if args.once => anyhow::bail!("{}: no head has been signed yet", args.url),
            Ok(None) => tracing::info!(url = %args.url, "no head has been signed yet"),
            Err(RoundError::Fork(f)) => {
                tracing::error!(position = f.position, reason = %f.reason, "the log forked");
                metrics::counter!("palimpsest_witness_forks_total").increment(1);
                return Err(f.into());
            }
            Err(RoundError::Other(e)) if args.once => return Err(e),
            Err(RoundError::Other(e)) => {
                tracing::warn!(error = %format!("{e:#}"), "witness round failed; retrying");
                metrics::counter!("palimpsest_witness_errors_total").increment(1);
            }
        }
        tokio::time::sleep(Duration::from_millis(args.interval)).await;
    }
}

/// One round against `kept` (none: trust the first head). Gives the new state and a line saying
/// what was verified, or `None` when the server has signed no head yet.
async fn round(
    client: &LogClient,
    kept: Option<&WitnessState>,
    recheck_every: u64,
) -> Result<Option<(WitnessState, String)>, RoundError> {
    let kept_size = kept.map_or(0, |k| k.head.head.tree_size);
    let key = client.key().await?;
    if let Some(k) = kept
        && k.key != key
    {
        return Err(fork(
            kept_size + 1,
            format!(
                "the log's key changed from {} (log {}) to {} (log {})",
                hex::encode(k.key.public_key),
                k.key.log_id,
                hex::encode(key.public_key),
                key.log_id
            ),
        ));
    }
    let Some(head) = client.latest_head().await? else {
        return Ok(None);
    };
    let size = head.head.tree_size;
    let signed = key.verifying_key().is_some_and(|v| head.verify(&v));
    if !signed || head.head.log_id != key.log_id {
        return Err(fork(
            kept_size + 1,
            format!("the head of tree_size {size} is not signed by the log's key"),
        ));
    }
    let kept_leaves = match kept {
        Some(k) => k.leaves()?,
        None => None,
    };
    let mut done = vec![format!("head of tree_size {size} signed")];
    if let Some(k) = kept {
        consistent(client, k, kept_leaves.as_deref(), &head).await?;
        done.push(format!("consistent with the kept head of {kept_size}"));
    }
    let rounds = kept.map_or(0, |k| k.rounds) + 1;
    let mut leaves = None;
    if client.has_token() {
        let mut all = kept_leaves.unwrap_or_default();
        let from = all.len() as u64;
        all.extend(recompute(client, from, size).await?);
        if merkle::root(&all) != head.head.root_hash {
            let position = first_unproven(client, &all, from, &head).await?;
            return Err(fork(
                position,
                "the leaf recomputed from the event's published content is not the one the \
                 signed head covers",
            ));
        }
        if size > from {
            done.push(format!("leaves {}..={size} recomputed", from + 1));
        }
        if rounds.is_multiple_of(recheck_every) && from > 0 {
            recheck(client, &all[..from as usize]).await?;
            done.push(format!("leaves 1..={from} rechecked"));
        }
        let beyond = signed_beyond(client, &key, size).await?;
        if beyond > 0 {
            done.push(format!(
                "{beyond} events beyond the head signed by the appender"
            ));
        }
        leaves = Some(all);
    } else if kept_size == size {
        leaves = kept_leaves;
    }
    let state = WitnessState {
        format: STATE_FORMAT.into(),
        key,
        head,
        leaves: leaves.map(|l| STANDARD.encode(l.concat())),
        rounds,
    };
    Ok(Some((
        state,
        format!("round {rounds}: {}", done.join(", ")),
    )))
}

/// Checks that `head` extends the kept head: not smaller, and a consistency proof verifies.
/// A failure names the first position whose kept leaf the server no longer holds, when the
/// witness kept leaves.
async fn consistent(
    client: &LogClient,
    kept: &WitnessState,
    kept_leaves: Option<&[Hash]>,
    head: &SignedTreeHead,
) -> Result<(), RoundError> {
    let (from, to) = (kept.head.head.tree_size, head.head.tree_size);
    if to < from {
        if let Some(leaves) = kept_leaves.filter(|_| client.has_token()) {
            recheck(client, leaves).await?;
        }
        return Err(fork(
            to + 1,
            format!("the log shrank: the head covers {to} leaves, the witness kept {from}"),
        ));
    }
    let ok = if from == to || from == 0 {
        from == 0 || kept.head.head.root_hash == head.head.root_hash
    } else {
        let proof = client.consistency(from, to).await?;
        let hashes = log_client::hashes(&proof.proof);
        proof.from == from
            && proof.to == to
            && hashes.is_some_and(|h| {
                merkle::verify_consistency(
                    from,
                    to,
                    &kept.head.head.root_hash,
                    &head.head.root_hash,
                    &h,
                )
            })
    };
    if ok {
        return Ok(());
    }
    let why = format!("the head of tree_size {to} is not consistent with the kept head of {from}");
    let Some(leaves) = kept_leaves else {
        return Err(fork(
            from,
            format!("{why} (a position at or before {from}: no leaves were kept to say which)"),
        ));
    };
    if client.has_token() {
        recheck(client, leaves).await?;
    }
    let position = first_unproven(client, leaves, 0, head).await?;
    Err(fork(position, why))
}

/// The leaves of positions `after+1 ..= upto`, each recomputed from the event's published
/// content; a missing position or an event whose content does not give its hash is a fork.
async fn recompute(client: &LogClient, after: u64, upto: u64) -> Result<Vec<Hash>, RoundError> {
    let (leaves, fault) = recompute_until_fault(client, after, upto).await?;
    match fault {
        Some(fault) => Err(fault),
        None => Ok(leaves),
    }
}

/// The leaves of positions `after+1 ..= upto` up to the first fault (a position skipped or
/// missing, an event whose content does not give its hash), and that fault.
async fn recompute_until_fault(
    client: &LogClient,
    after: u64,
    upto: u64,
) -> Result<(Vec<Hash>, Option<RoundError>), RoundError> {
    let events = client.events(after, upto).await?;
    let mut leaves = Vec::with_capacity(events.len());
    let mut expected = after + 1;
    for value in events {
        let event: RecordedEvent = match serde_json::from_value(value) {
            Ok(event) => event,
            Err(e) => {
                let why = format!("its published JSON is not an event: {e}");
                return Ok((leaves, Some(fork(expected, why))));
            }
        };
        if event.position as u64 != expected {
            let why = format!("/v1/events skips it (the next is {})", event.position);
            return Ok((leaves, Some(fork(expected, why))));
        }
        match leaf::recompute(&event) {
            Ok(leaf) => leaves.push(leaf),
            Err(why) => return Ok((leaves, Some(fork(expected, why)))),
        }
        expected += 1;
    }
    let fault = (expected <= upto).then(|| {
        fork(
            expected,
            format!("/v1/events ends before it, in a head of {upto}"),
        )
    });
    Ok((leaves, fault))
}

/// Re-reads the events of the `kept` leaves and compares: the first event that gives another
/// leaf, no longer recomputes, or is missing is a fork (a leaf that differs before a later
/// fault is named first: events renumbered after a deletion differ from the deleted one on).
async fn recheck(client: &LogClient, kept: &[Hash]) -> Result<(), RoundError> {
    let (now, fault) = recompute_until_fault(client, 0, kept.len() as u64).await?;
    if let Some(i) = now.iter().zip(kept).position(|(a, b)| a != b) {
        return Err(fork(
            i as u64 + 1,
            "its leaf is not the one the witness verified before: the event was replaced",
        ));
    }
    match fault {
        Some(fault) => Err(fault),
        None => Ok(()),
    }
}

/// Most events beyond the head checked each round.
const BEYOND: u64 = 1000;

/// Checks that the events after the head (the next [`BEYOND`]) were each signed by the
/// appender: an event inserted by someone with database access but without the log's key is
/// never covered by a head (the tree maker refuses it), so this is where a witness sees it.
/// Gives how many were checked.
async fn signed_beyond(client: &LogClient, key: &LogKey, size: u64) -> Result<u64, RoundError> {
    let events = client.events(size, size + BEYOND).await?;
    let Some(last) = events.last().and_then(|e| e["position"].as_u64()) else {
        return Ok(0);
    };
    let events = events
        .into_iter()
        .map(serde_json::from_value)
        .collect::<Result<Vec<RecordedEvent>, _>>()
        .map_err(|e| {
            fork(
                size + 1,
                format!("an event beyond the head is not an event: {e}"),
            )
        })?;
    let batches = client.batches(size + 1, last).await?;
    let verifying = key
        .verifying_key()
        .ok_or_else(|| fork(size + 1, "the key is not Ed25519"))?;
    let checked = check(&events, &batches, size, key.unsigned_until, &verifying);
    match checked.refused {
        Some(refused) => Err(fork(refused.position, refused.reason)),
        None => Ok(events.len() as u64),
    }
}

/// The first position after `from` whose leaf in `leaves` the server's tree does not hold (the
/// leaf its inclusion proof names differs) or cannot prove in `head` (one inclusion proof
/// each); position `from + 1` when every one proves.
async fn first_unproven(
    client: &LogClient,
    leaves: &[Hash],
    from: u64,
    head: &SignedTreeHead,
) -> Result<u64, RoundError> {
    let size = head.head.tree_size;
    for (i, leaf) in leaves.iter().enumerate().skip(from as usize) {
        let position = i as u64 + 1;
        if position > size {
            break;
        }
        let proof = client.inclusion(position, size).await?;
        let proven = proof.leaf_hash == hex::encode(leaf)
            && log_client::hashes(&proof.audit_path).is_some_and(|path| {
                merkle::verify_inclusion(position - 1, size, leaf, &path, &head.head.root_hash)
            });
        if !proven {
            return Ok(position);
        }
    }
    Ok(from + 1)
}

/// The kept state, `None` when the file does not exist (the first run).
pub fn load(path: &Path) -> anyhow::Result<Option<WitnessState>> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
    };
    let state: WitnessState = serde_json::from_str(&text)
        .with_context(|| format!("{} is not a witness state file", path.display()))?;
    anyhow::ensure!(
        state.format == STATE_FORMAT,
        "{}: format {:?} is not {STATE_FORMAT}",
        path.display(),
        state.format
    );
    state.leaves()?;
    Ok(Some(state))
}

/// Writes the state atomically: a temporary file beside it, then a rename over it.
fn save(path: &Path, state: &WitnessState) -> anyhow::Result<()> {
    let mut temp = path.as_os_str().to_owned();
    temp.push(".tmp");
    let temp = PathBuf::from(temp);
    let text = serde_json::to_string_pretty(state)?;
    {
        use std::io::Write;
        let mut file =
            std::fs::File::create(&temp).with_context(|| format!("writing {}", temp.display()))?;
        file.write_all(text.as_bytes())?;
        file.sync_all()?;
    }
    std::fs::rename(&temp, path).with_context(|| format!("renaming over {}", path.display()))
}

/// Serves Prometheus `/metrics` at `addr` (the process-wide recorder every process installs).
async fn serve_metrics(addr: SocketAddr) -> anyhow::Result<()> {
    let handle = palimpsest_web::health::metrics_handle()
        .context("the metrics recorder could not be installed")?;
    let app = axum::Router::new().route(
        "/metrics",
        axum::routing::get(move || async move { handle.render() }),
    );
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .with_context(|| format!("binding {addr}"))?;
    tokio::spawn(async move {
        if let Err(e) = axum::serve(listener, app).await {
            tracing::error!(error = %e, "witness metrics server stopped");
        }
    });
    Ok(())
}
