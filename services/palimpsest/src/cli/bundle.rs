//! `palimpsest audit export` and `palimpsest audit check`: a stream's events with an inclusion
//! proof each, a signed tree head and the log's key in one JSON file (decision 0024), checked
//! later with nothing but that file: no database, no network. A checker needs no trust in the
//! server: every event's hash is recomputed from its published JSON, the stream's chain is
//! walked, and each leaf is proven against a root the log's key signed.

use crate::cli::log_client::{self, Inclusion, LogClient};
use anyhow::Context;
use palimpsest_events::RecordedEvent;
use palimpsest_events::canonical::chain_hash;
use palimpsest_events::merkle::{self, Hash};
use palimpsest_events::tree_head::{LogKey, SignedTreeHead};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::path::Path;
use std::time::{Duration, Instant};

/// The `format` of a bundle this code writes and reads.
pub const FORMAT: &str = "palimpsest-audit-bundle-v1";

/// How long `export` waits for a head covering the stream's last event before it gives up.
pub const HEAD_WAIT: Duration = Duration::from_secs(10);

/// An audit bundle: what `export` writes and `check` reads.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Bundle {
    /// Always [`FORMAT`].
    pub format: String,
    /// The log's public key (`/v1/log/key`).
    pub key: LogKey,
    /// The signed head every proof is for.
    pub head: SignedTreeHead,
    /// The stream, as `context/category/key`.
    pub stream: String,
    /// The stream's events in version order, each with its proof.
    pub events: Vec<BundledEvent>,
}

/// One event of a bundle.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct BundledEvent {
    /// The envelope as `/v1/streams/…` published it.
    pub event: Value,
    /// Its inclusion proof in the tree of the bundle's head.
    pub proof: Inclusion,
}

/// What a bundle that checks holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checked {
    /// Events checked.
    pub events: usize,
    /// The first and last versions (none when the bundle has no event).
    pub versions: Option<(i64, i64)>,
    /// The head's tree size.
    pub tree_size: u64,
}

/// Fetches `stream`'s events, a head covering them, the key and a proof per event, checks the
/// result as `check` would, and writes it to `out`. An event beyond the latest head is waited
/// for (up to `wait`): the tree maker signs a head every few hundred milliseconds.
pub async fn export(
    client: &LogClient,
    stream: &str,
    out: &Path,
    wait: Duration,
) -> anyhow::Result<Checked> {
    palimpsest_events::StreamName::parse(stream)?;
    let key = client.key().await?;
    let events = client.stream_events(stream).await?;
    let last = events
        .iter()
        .filter_map(|e| e["position"].as_u64())
        .max()
        .unwrap_or(0);
    let head = head_covering(client, last, wait).await?;
    let mut bundled = Vec::with_capacity(events.len());
    for event in events {
        let position = event["position"]
            .as_u64()
            .context("an event without position")?;
        let proof = client.inclusion(position, head.head.tree_size).await?;
        bundled.push(BundledEvent { event, proof });
    }
    let bundle = Bundle {
        format: FORMAT.into(),
        key,
        head,
        stream: stream.into(),
        events: bundled,
    };
    let checked = check(&bundle, None)
        .map_err(|e| anyhow::anyhow!("the server's answers do not check: {e}"))?;
    let text = serde_json::to_string_pretty(&bundle)?;
    std::fs::write(out, text).with_context(|| format!("writing {}", out.display()))?;
    Ok(checked)
}

/// The latest signed head once it covers `position`, waiting up to `wait` for it.
async fn head_covering(
    client: &LogClient,
    position: u64,
    wait: Duration,
) -> anyhow::Result<SignedTreeHead> {
    let started = Instant::now();
    loop {
        let head = client.latest_head().await?;
        let size = head.as_ref().map_or(0, |h| h.head.tree_size);
        if let Some(head) = head.filter(|h| h.head.tree_size >= position) {
            return Ok(head);
        }
        if started.elapsed() >= wait {
            anyhow::bail!(
                "the event at position {position} is not covered by a signed head after {} ms \
                 (the latest covers {size}): is the tree maker running (`run` or `relay`)?",
                wait.as_millis()
            );
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Reads and checks the bundle at `path` (see [`check`]).
pub fn check_file(path: &Path, expected_key: Option<&str>) -> anyhow::Result<(Bundle, Checked)> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let bundle: Bundle = serde_json::from_str(&text)
        .with_context(|| format!("{} is not a bundle", path.display()))?;
    let key = expected_key
        .map(|k| log_client::hash(k.trim()).context("--key must be 64 hex digits"))
        .transpose()?;
    let checked = check(&bundle, key.as_ref()).map_err(anyhow::Error::msg)?;
    Ok((bundle, checked))
}

/// Checks a bundle offline: its key is `expected_key` (when given), its head is signed by its
/// key, and each event recomputes its hash from its content, links to the one before it in
/// the stream (versions gapless, from 1 when the bundle starts there), and its leaf is proven
/// against the head's root. The error names the first event that fails.
pub fn check(bundle: &Bundle, expected_key: Option<&[u8; 32]>) -> Result<Checked, String> {
    if bundle.format != FORMAT {
        return Err(format!("format {:?} is not {FORMAT}", bundle.format));
    }
    if let Some(expected) = expected_key
        && *expected != bundle.key.public_key
    {
        return Err(format!(
            "the bundle's key {} is not the one given ({})",
            hex::encode(bundle.key.public_key),
            hex::encode(expected)
        ));
    }
    let head = &bundle.head;
    let signed = bundle
        .key
        .verifying_key()
        .is_some_and(|key| head.verify(&key))
        && head.head.log_id == bundle.key.log_id;
    let mut previous: Option<RecordedEvent> = None;
    for bundled in &bundle.events {
        let (position, version) = (&bundled.event["position"], &bundled.event["version"]);
        let named = |why: String| format!("event at position {position}, version {version}: {why}");
        if !signed {
            return Err(named(format!(
                "not proven: the head of tree_size {} is not signed by the bundle's key for \
                 log {}",
                head.head.tree_size, bundle.key.log_id
            )));
        }
        let event = check_event(bundle, bundled, previous.as_ref()).map_err(named)?;
        previous = Some(event);
    }
    if !signed {
        return Err(format!(
            "the head of tree_size {} is not signed by the bundle's key for log {}",
            head.head.tree_size, bundle.key.log_id
        ));
    }
    let versions = bundle
        .events
        .first()
        .zip(bundle.events.last())
        .map(|(a, b)| {
            (
                a.event["version"].as_i64().unwrap_or_default(),
                b.event["version"].as_i64().unwrap_or_default(),
            )
        });
    Ok(Checked {
        events: bundle.events.len(),
        versions,
        tree_size: head.head.tree_size,
    })
}

/// One event's checks; gives the event parsed, for the next one's link.
fn check_event(
    bundle: &Bundle,
    bundled: &BundledEvent,
    previous: Option<&RecordedEvent>,
) -> Result<RecordedEvent, String> {
    let event: RecordedEvent = serde_json::from_value(bundled.event.clone())
        .map_err(|e| format!("not an event envelope: {e}"))?;
    if event.stream.to_string() != bundle.stream {
        return Err(format!("it belongs to stream {}", event.stream));
    }
    let prev = match &event.prev_hash {
        None => None,
        Some(h) => Some(log_client::hash(h).ok_or("its prev_hash is not 32 bytes of hex")?),
    };
    let hash = chain_hash(prev.as_ref(), &event.canonical_content());
    if hex::encode(hash) != event.hash {
        return Err("its content does not give its hash: it was altered".into());
    }
    if let Some(before) = previous {
        if event.version != before.version + 1 {
            return Err(format!("it follows version {}: a gap", before.version));
        }
        if event.prev_hash.as_deref() != Some(before.hash.as_str()) {
            return Err(format!(
                "its prev_hash is not the hash of version {}: the chain is broken",
                before.version
            ));
        }
    }
    if event.version == 1 && event.prev_hash.is_some() {
        return Err("the stream's first event has a prev_hash".into());
    }
    let position = u64::try_from(event.position).map_err(|_| "a negative position")?;
    let proof = &bundled.proof;
    if proof.position != position || proof.tree_size != bundle.head.head.tree_size {
        return Err(format!(
            "its proof is for position {} in the tree of {}, not position {position} in the \
             head's tree of {}",
            proof.position, proof.tree_size, bundle.head.head.tree_size
        ));
    }
    let path: Vec<Hash> =
        log_client::hashes(&proof.audit_path).ok_or("its audit path is not hex hashes")?;
    let leaf = merkle::event_leaf(position, &hash);
    if position == 0
        || !merkle::verify_inclusion(
            position - 1,
            proof.tree_size,
            &leaf,
            &path,
            &bundle.head.head.root_hash,
        )
    {
        return Err(format!(
            "its leaf is not proven in the tree of {} whose root the head signs",
            proof.tree_size
        ));
    }
    Ok(event)
}

/// `palimpsest audit export`'s arguments.
#[derive(Debug, Clone, clap::Args)]
pub struct ExportArgs {
    /// The stream, as `context/category/key`.
    pub stream: String,
    /// The bundle file to write.
    #[arg(long)]
    pub out: std::path::PathBuf,
    /// The server.
    #[arg(long, default_value = log_client::DEFAULT_URL)]
    pub url: String,
    /// The admin token (else `PALIMPSEST_ADMIN_TOKEN`, else `<data-dir>/admin-token`).
    #[arg(long)]
    pub token: Option<String>,
}

/// `palimpsest audit check`'s arguments.
#[derive(Debug, Clone, clap::Args)]
pub struct CheckArgs {
    /// The bundle file `audit export` wrote.
    pub file: std::path::PathBuf,
    /// The log's public key as the auditor knows it (64 hex digits): the bundle's must be it.
    #[arg(long)]
    pub key: Option<String>,
}

/// Runs `audit export`, printing what the bundle holds.
pub async fn run_export(
    settings: &crate::config::Settings,
    args: ExportArgs,
) -> anyhow::Result<()> {
    let token = log_client::admin_token(args.token, settings);
    let client = LogClient::new(&args.url, token)?;
    let checked = export(&client, &args.stream, &args.out, HEAD_WAIT).await?;
    println!(
        "wrote {}: {} events of {}{} with their proofs in the signed tree of {}",
        args.out.display(),
        checked.events,
        args.stream,
        versions(&checked),
        checked.tree_size
    );
    Ok(())
}

/// Runs `audit check`: offline; a failure is an error naming the first event that fails.
pub fn run_check(args: CheckArgs) -> anyhow::Result<()> {
    let (bundle, checked) = check_file(&args.file, args.key.as_deref())
        .map_err(|e| anyhow::anyhow!("{} does not check: {e:#}", args.file.display()))?;
    println!(
        "{}: {} events of {}{} check: each hash recomputes from its content, the chain links, \
         and each leaf is proven in the tree of {} whose root key {} signed (log {})",
        args.file.display(),
        checked.events,
        bundle.stream,
        versions(&checked),
        checked.tree_size,
        hex::encode(bundle.key.public_key),
        bundle.key.log_id
    );
    Ok(())
}

fn versions(checked: &Checked) -> String {
    match checked.versions {
        Some((a, b)) => format!(" (versions {a}..={b})"),
        None => String::new(),
    }
}
