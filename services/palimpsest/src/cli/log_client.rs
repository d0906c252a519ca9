//! A client of a running server's `/v1/log` routes (public) and `/v1/events`, `/v1/streams`
//! (admin), for the auditor's commands that work over HTTP: `audit export` and `audit witness`
//! trust nothing it answers without checking it against the log's key and the tree.

use crate::config::Settings;
use anyhow::Context;
use palimpsest_events::merkle::Hash;
use palimpsest_events::tree_head::{BatchSignature, LogKey, SignedTreeHead};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::time::Duration;

/// Where a server answers when no `--url` is given.
pub const DEFAULT_URL: &str = "http://127.0.0.1:8080";

/// Most events one page of `/v1/events` or `/v1/streams/…` holds.
const PAGE: u64 = 1000;

/// The admin token to read events with: `--token`, else `PALIMPSEST_ADMIN_TOKEN` (or the hidden
/// `--admin-token`), else the one kept in `<data-dir>/admin-token` when that file exists (it is
/// never created here: a tool that reads does not mint secrets).
pub fn admin_token(given: Option<String>, settings: &Settings) -> Option<String> {
    given
        .or_else(|| settings.admin_token.clone())
        .or_else(|| std::fs::read_to_string(settings.data_dir.join("admin-token")).ok())
        .map(|t| t.trim().to_owned())
        .filter(|t| !t.is_empty())
}

/// An inclusion proof as `/v1/log/proof/inclusion` serves it (RFC 9162 §2.1.3) and a bundle
/// keeps it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Inclusion {
    /// The event's position (leaf index + 1).
    pub position: u64,
    /// The tree the proof is for.
    pub tree_size: u64,
    /// The leaf as the server's tree holds it, hex (informative: a checker recomputes it).
    pub leaf_hash: String,
    /// The sibling hashes, nearest the leaf first, hex.
    pub audit_path: Vec<String>,
}

/// A consistency proof as `/v1/log/proof/consistency` serves it (RFC 9162 §2.1.4).
#[derive(Debug, Clone, Deserialize)]
pub struct Consistency {
    /// The older tree's size.
    pub from: u64,
    /// The newer tree's size.
    pub to: u64,
    /// The proof's hashes, hex.
    pub proof: Vec<String>,
}

/// Hex hashes as bytes; `None` when one is not 32 bytes of hex.
pub fn hashes(hex_list: &[String]) -> Option<Vec<Hash>> {
    hex_list.iter().map(|h| hash(h)).collect()
}

/// One hex hash as bytes; `None` when it is not 32 bytes of hex.
pub fn hash(text: &str) -> Option<Hash> {
    hex::decode(text).ok()?.try_into().ok()
}

/// A server's log, over HTTP.
#[derive(Debug, Clone)]
pub struct LogClient {
    http: reqwest::Client,
    base: String,
    token: Option<String>,
}

impl LogClient {
    /// A client of the server at `url`, reading events with `token` when given.
    pub fn new(url: &str, token: Option<String>) -> anyhow::Result<LogClient> {
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(60))
            .build()
            .context("HTTP client")?;
        Ok(LogClient {
            http,
            base: url.trim_end_matches('/').to_owned(),
            token,
        })
    }

    /// Whether an admin token was given (events can be read).
    pub fn has_token(&self) -> bool {
        self.token.is_some()
    }

    /// `GET /v1/log/key`.
    pub async fn key(&self) -> anyhow::Result<LogKey> {
        self.get("/v1/log/key").await
    }

    /// `GET /v1/log/head`: the latest signed head; `None` when none was signed yet (404).
    pub async fn latest_head(&self) -> anyhow::Result<Option<SignedTreeHead>> {
        let answer = self.send("/v1/log/head", false).await?;
        if answer.status() == reqwest::StatusCode::NOT_FOUND {
            return Ok(None);
        }
        Ok(Some(read("/v1/log/head", answer).await?))
    }

    /// `GET /v1/log/proof/inclusion`.
    pub async fn inclusion(&self, position: u64, tree_size: u64) -> anyhow::Result<Inclusion> {
        self.get(&format!(
            "/v1/log/proof/inclusion?position={position}&tree_size={tree_size}"
        ))
        .await
    }

    /// `GET /v1/log/batches`: the batch signatures touching positions `from..=to`.
    pub async fn batches(&self, from: u64, to: u64) -> anyhow::Result<Vec<BatchSignature>> {
        self.get(&format!("/v1/log/batches?from={from}&to={to}"))
            .await
    }

    /// `GET /v1/log/proof/consistency`.
    pub async fn consistency(&self, from: u64, to: u64) -> anyhow::Result<Consistency> {
        self.get(&format!("/v1/log/proof/consistency?from={from}&to={to}"))
            .await
    }

    /// Every event of `stream` (`context/category/key`) as `/v1/streams/…` publishes it, all
    /// pages, in version order.
    pub async fn stream_events(&self, stream: &str) -> anyhow::Result<Vec<Value>> {
        let mut events = Vec::new();
        let mut after = 0u64;
        loop {
            let page: Value = self
                .admin(&format!(
                    "/v1/streams/{}?after={after}&limit={PAGE}",
                    encode_path(stream)
                ))
                .await?;
            let batch = page_events(&page)?;
            let Some(last) = batch.last() else {
                return Ok(events);
            };
            let next = last["version"]
                .as_u64()
                .context("an event without version")?;
            anyhow::ensure!(
                next > after,
                "/v1/streams answered a page that does not move on"
            );
            after = next;
            events.extend(batch.iter().cloned());
        }
    }

    /// The events of positions `after+1 ..= upto` as `/v1/events` publishes them, in position
    /// order (fewer when the log holds fewer: the caller checks the positions).
    pub async fn events(&self, after: u64, upto: u64) -> anyhow::Result<Vec<Value>> {
        let mut events = Vec::new();
        let mut from = after;
        while from < upto {
            let limit = (upto - from).min(PAGE);
            let page: Value = self
                .admin(&format!("/v1/events?after={from}&limit={limit}"))
                .await?;
            let batch = page_events(&page)?;
            let Some(last) = batch.last() else { break };
            let next = last["position"]
                .as_u64()
                .context("an event without position")?;
            anyhow::ensure!(
                next > from,
                "/v1/events answered a page that does not move on"
            );
            from = next;
            events.extend(
                batch
                    .iter()
                    .filter(|e| e["position"].as_u64().is_some_and(|p| p <= upto))
                    .cloned(),
            );
        }
        Ok(events)
    }

    async fn get<T: DeserializeOwned>(&self, path: &str) -> anyhow::Result<T> {
        read(path, self.send(path, false).await?).await
    }

    async fn admin<T: DeserializeOwned>(&self, path: &str) -> anyhow::Result<T> {
        read(path, self.send(path, true).await?).await
    }

    async fn send(&self, path: &str, admin: bool) -> anyhow::Result<reqwest::Response> {
        let mut request = self.http.get(format!("{}{path}", self.base));
        if admin {
            let token = self.token.as_deref().context(
                "reading events needs the admin token: --token, PALIMPSEST_ADMIN_TOKEN or \
                 <data-dir>/admin-token",
            )?;
            request = request.bearer_auth(token);
        }
        request
            .send()
            .await
            .with_context(|| format!("GET {}{path}", self.base))
    }
}

/// `text` percent-encoded for a URL path: every byte but the unreserved ones and `/`.
fn encode_path(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' | b'/' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// A page's `events`.
fn page_events(page: &Value) -> anyhow::Result<&Vec<Value>> {
    page["events"]
        .as_array()
        .context("the answer has no \"events\" list")
}

/// The JSON of a successful answer; a failed one is an error with its status and message.
async fn read<T: DeserializeOwned>(path: &str, answer: reqwest::Response) -> anyhow::Result<T> {
    let status = answer.status();
    let text = answer
        .text()
        .await
        .with_context(|| format!("GET {path}: reading the answer"))?;
    if !status.is_success() {
        anyhow::bail!("GET {path}: {status}: {}", text.trim());
    }
    serde_json::from_str(&text).with_context(|| format!("GET {path}: not the expected JSON"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stream_name_is_encoded_for_its_path() {
        assert_eq!(encode_path("docs/doc/db%2Fa b"), "docs/doc/db%252Fa%20b");
        assert_eq!(
            encode_path("atlas/section/01a2-ef"),
            "atlas/section/01a2-ef"
        );
    }
}
