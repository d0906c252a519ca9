//! Each context's table and fixtures: its users and their objects, made through its own API, and
//! the credentials of its principals.

pub mod atlas;
pub mod docs;
pub mod pads;
pub mod records;
pub mod resources;
pub mod v1;

use palimpsest_testkit::TestApp;
use serde_json::Value;

/// A wrong credential's secret: a token of the right shape the server never issued.
pub const WRONG_SECRET: &str = "0123456789abcdef0123456789abcdef0123456789abcdef";

/// Makes fixtures through HTTP, failing the test when a step is refused.
pub struct Setup<'a> {
    app: &'a TestApp,
    client: reqwest::Client,
}

impl<'a> Setup<'a> {
    /// A setup against `app`.
    pub fn new(app: &'a TestApp) -> Setup<'a> {
        Setup {
            app,
            client: reqwest::Client::new(),
        }
    }

    /// A request to `path` (which starts with `/`).
    pub fn request(&self, method: reqwest::Method, path: &str) -> reqwest::RequestBuilder {
        self.client.request(method, self.app.url(path))
    }

    /// Sends `request`; fails the test unless it answers 2xx; answers the body as JSON (null
    /// when it is not JSON).
    pub async fn ok(&self, what: &str, request: reqwest::RequestBuilder) -> Value {
        let response = request
            .send()
            .await
            .unwrap_or_else(|e| panic!("fixture {what}: {e}"));
        let status = response.status();
        let text = response.text().await.unwrap_or_default();
        assert!(
            status.is_success(),
            "fixture {what}: answered {status}: {text}"
        );
        serde_json::from_str(&text).unwrap_or(Value::Null)
    }
}

/// A refusal in the platform's JSON form: `{"error": "<what was wrong>"}`.
pub fn error_message(_status: u16, body: &str) -> Result<(), String> {
    let value: Value = serde_json::from_str(body).map_err(|e| format!("not JSON: {e}"))?;
    match value["error"].as_str() {
        Some(message) if !message.is_empty() => Ok(()),
        _ => Err("no `error` message".to_owned()),
    }
}

/// No format of its own beyond the status.
pub fn any_answer(_status: u16, _body: &str) -> Result<(), String> {
    Ok(())
}

/// The fixture variables from pairs.
pub fn vars<const N: usize>(
    pairs: [(&str, String); N],
) -> std::collections::HashMap<String, String> {
    pairs
        .into_iter()
        .map(|(name, value)| (name.to_owned(), value))
        .collect()
}
