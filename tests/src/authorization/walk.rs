//! The walk: the table checked against the documents, then every row tried with every
//! principal the context has, the refusals first (all of them before anything is changed, so
//! the other user meets the user's objects as they were made), then the allowed requests, the
//! destroying ones last.

use super::row::substitute;
use super::{Credential, Expected, Principal, Row, openapi};
use futures::StreamExt;
use palimpsest_testkit::TestApp;
use serde_json::Value;
use std::collections::{BTreeSet, HashMap};
use std::time::Duration;

/// How many refused requests are in flight at once.
const PARALLEL: usize = 8;
/// The longest a body is read (an event stream is not read at all).
const BODY_TIMEOUT: Duration = Duration::from_secs(10);
/// How much of a body a failure quotes.
const QUOTED: usize = 300;

/// Checks an answer's body and status; the error says what is wrong with it.
pub type Check = fn(u16, &str) -> Result<(), String>;

/// A context as the walk tries it.
pub struct Context {
    /// Its name, in failures.
    pub name: &'static str,
    /// Its OpenAPI documents (paths on the server).
    pub documents: Vec<&'static str>,
    /// One row per operation.
    pub rows: Vec<Row>,
    /// The credential of each principal it has (`Nobody` sends none; a principal the context
    /// has not, such as Etherpad's other user, is absent and skipped).
    pub credentials: HashMap<Principal, Credential>,
    /// The roles the user and the other user hold (the admin holds every role).
    pub roles: Vec<(Principal, &'static str)>,
    /// The fixture values rows name (`db`, `doc`, `rev`, …), all the user's objects.
    pub vars: HashMap<String, String>,
    /// A text only the user's private objects hold: an answer to anyone but the user and the
    /// admin that holds it shows the user's data.
    pub secret: Option<String>,
    /// Checks a refusal is in the original's format (Etherpad's `{code, message}`, CouchDB's
    /// `{error, reason}`, …).
    pub refusal: Check,
    /// Checks an allowed request was not refused in the context's own way (Etherpad's code 4
    /// comes with status 401, but a context may say more).
    pub allowed: Check,
}

impl Context {
    fn holds(&self, principal: Principal, role: &str) -> bool {
        self.roles
            .iter()
            .any(|(p, r)| *p == principal && *r == role)
    }
}

/// One request of the walk.
struct Trial<'a> {
    row: &'a Row,
    principal: Principal,
    expected: Expected,
}

impl Trial<'_> {
    fn name(&self, context: &str) -> String {
        format!(
            "{context}: {} as {} ({}, expected {:?})",
            self.row.operation(),
            self.principal,
            self.row.policy,
            self.expected
        )
    }
}

/// Walks `context` against `app`; answers every failure found (empty: it held).
pub async fn walk(app: &TestApp, context: &Context) -> Vec<String> {
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(60))
        .build()
        .unwrap_or_else(|e| panic!("http client: {e}"));
    let mut failures = coverage(&client, app, context).await;
    let trials = trials(context);
    let (refusals, allowed): (Vec<_>, Vec<_>) = trials
        .into_iter()
        .partition(|t| matches!(t.expected, Expected::Refused(_)));

    eprintln!(
        "{}: {} rows, {} refusals and {} allowed requests",
        context.name,
        context.rows.len(),
        refusals.len(),
        allowed.len()
    );

    // A destroying request that is wrongly let through must not hide the other refusals.
    let before = head(&client, app).await;
    let (refused_destroying, refused_keeping): (Vec<_>, Vec<_>) =
        refusals.iter().partition(|t| t.row.destroys);
    for batch in [refused_keeping, refused_destroying] {
        let answers: Vec<String> = futures::stream::iter(batch)
            .map(|trial| try_one(&client, app, context, trial))
            .buffer_unordered(PARALLEL)
            .filter_map(|failure| async move { failure })
            .collect()
            .await;
        failures.extend(answers);
    }
    let after = head(&client, app).await;
    if after != before {
        failures.push(format!(
            "{}: refused requests appended to the log ({before} → {after}): {}",
            context.name,
            appended(&client, app, before).await
        ));
    }

    let (destroying, keeping): (Vec<_>, Vec<_>) = allowed.into_iter().partition(|t| t.row.destroys);
    for trial in keeping.iter().chain(destroying.iter()) {
        if let Some(failure) = try_one(&client, app, context, trial).await {
            failures.push(failure);
        }
    }
    failures
}

/// The table against the documents: an operation without a row, a row without an operation.
async fn coverage(client: &reqwest::Client, app: &TestApp, context: &Context) -> Vec<String> {
    let mut documented = BTreeSet::new();
    let mut failures = Vec::new();
    for path in &context.documents {
        match fetch_json(client, &app.url(path)).await {
            Ok(document) => documented.extend(openapi::operations(&document)),
            Err(e) => failures.push(format!("{}: document {path}: {e}", context.name)),
        }
    }
    let tabled: BTreeSet<String> = context
        .rows
        .iter()
        .filter(|r| r.documented)
        .map(Row::operation)
        .collect();
    for missing in documented.difference(&tabled) {
        failures.push(format!(
            "{}: {missing} is in the OpenAPI document but has no row in the authorization table",
            context.name
        ));
    }
    for stale in tabled.difference(&documented) {
        failures.push(format!(
            "{}: the authorization table names {stale}, which no document has",
            context.name
        ));
    }
    let mut seen = BTreeSet::new();
    for row in &context.rows {
        if !seen.insert(row.operation()) {
            failures.push(format!(
                "{}: {} has two rows",
                context.name,
                row.operation()
            ));
        }
    }
    failures
}

fn trials(context: &Context) -> Vec<Trial<'_>> {
    let mut out = Vec::new();
    for row in &context.rows {
        for principal in Principal::ALL {
            if principal != Principal::Nobody && !context.credentials.contains_key(&principal) {
                continue;
            }
            let expected = row
                .policy
                .expected(principal, |role| context.holds(principal, role));
            out.push(Trial {
                row,
                principal,
                expected,
            });
        }
    }
    out
}

/// Sends one trial and checks its answer; `Some` names what was wrong.
async fn try_one(
    client: &reqwest::Client,
    app: &TestApp,
    context: &Context,
    trial: &Trial<'_>,
) -> Option<String> {
    let name = trial.name(context.name);
    let (status, body) = match send(client, app, context, trial).await {
        Ok(answer) => answer,
        Err(e) => return Some(format!("{name}: {e}")),
    };
    let quoted: String = body.chars().take(QUOTED).collect();
    let refused_inside = trial
        .row
        .refused_in_body
        .is_some_and(|marker| (200..300).contains(&status) && body.contains(marker));
    let leaked = !matches!(trial.principal, Principal::User | Principal::Admin)
        && (200..300).contains(&status)
        && context
            .secret
            .as_ref()
            .is_some_and(|s| body.contains(s.as_str()));
    let verdict = match trial.expected {
        _ if leaked => Err(format!("answered {status} with the user's private data")),
        Expected::Refused(_) if refused_inside => Ok(()),
        Expected::Refused(statuses) if !statuses.contains(&status) => {
            Err(format!("answered {status}, not a refusal {statuses:?}"))
        }
        Expected::Refused(_) => (context.refusal)(status, &body)
            .map_err(|e| format!("refusal {status} not in the original's format: {e}")),
        Expected::Allowed if matches!(status, 401 | 403) || status >= 500 => {
            Err(format!("answered {status}"))
        }
        Expected::Allowed => (context.allowed)(status, &body),
        Expected::Unchecked if status >= 500 => Err(format!("answered {status}")),
        Expected::Unchecked => Ok(()),
    };
    verdict.err().map(|e| format!("{name}: {e}: {quoted}"))
}

async fn send(
    client: &reqwest::Client,
    app: &TestApp,
    context: &Context,
    trial: &Trial<'_>,
) -> Result<(u16, String), String> {
    let row = trial.row;
    let credential = context.credentials.get(&trial.principal);
    let path = row.fill_path(&context.vars)?;
    let mut query = substitute(&row.query, &context.vars)?;
    if let Some(pair) = credential.and_then(Credential::query_pair) {
        if !query.is_empty() {
            query.push('&');
        }
        query.push_str(&pair);
    }
    let url = match query.is_empty() {
        true => app.url(&path),
        false => app.url(&format!("{path}?{query}")),
    };
    let method = reqwest::Method::from_bytes(row.method.as_bytes())
        .map_err(|e| format!("method {}: {e}", row.method))?;
    let mut request = client.request(method, url);
    if let Some(credential) = credential {
        request = credential.apply(request);
    }
    for (name, value) in &row.headers {
        request = request.header(*name, substitute(value, &context.vars)?);
    }
    if let Some(body) = &row.body {
        request = request
            .header("content-type", body.content_type)
            .body(substitute(&body.text, &context.vars)?);
    }
    let response = request.send().await.map_err(|e| format!("send: {e}"))?;
    let status = response.status().as_u16();
    let streamed = response
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/event-stream"));
    if streamed {
        return Ok((status, String::from("<event stream, not read>")));
    }
    match tokio::time::timeout(BODY_TIMEOUT, response.text()).await {
        Ok(Ok(body)) => Ok((status, body)),
        Ok(Err(e)) => Err(format!("answered {status}, body unreadable: {e}")),
        Err(_) => Ok((status, String::from("<body still streaming, not read>"))),
    }
}

async fn fetch_json(client: &reqwest::Client, url: &str) -> Result<Value, String> {
    let response = client.get(url).send().await.map_err(|e| e.to_string())?;
    let status = response.status();
    if !status.is_success() {
        return Err(format!("answered {status}"));
    }
    response.json().await.map_err(|e| e.to_string())
}

/// The log's head position (`/v1/head`).
async fn head(client: &reqwest::Client, app: &TestApp) -> i64 {
    let response = client
        .get(app.url("/v1/head"))
        .bearer_auth(app.admin_token())
        .send()
        .await
        .unwrap_or_else(|e| panic!("/v1/head: {e}"));
    let body: Value = response
        .json()
        .await
        .unwrap_or_else(|e| panic!("/v1/head: {e}"));
    body["position"]
        .as_i64()
        .unwrap_or_else(|| panic!("/v1/head without a position: {body}"))
}

/// The streams and types of the events appended after `position`, to name the culprit.
async fn appended(client: &reqwest::Client, app: &TestApp, position: i64) -> String {
    let url = app.url(&format!("/v1/events?after={position}&limit=50"));
    let answer = client.get(url).bearer_auth(app.admin_token()).send().await;
    let body: Value = match answer {
        Ok(response) => response.json().await.unwrap_or(Value::Null),
        Err(e) => return format!("(/v1/events: {e})"),
    };
    body["events"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|e| {
            format!(
                "{} {} by {}",
                e["stream"], e["event_type"], e["metadata"]["actor"]
            )
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// Fails the test with every failure of the walk, one a line.
pub fn assert_held(context: &str, failures: &[String]) {
    assert!(
        failures.is_empty(),
        "{context}: {} authorization failure(s):\n{}",
        failures.len(),
        failures.join("\n")
    );
}
