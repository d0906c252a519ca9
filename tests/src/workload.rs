//! Writes through real routes of every context, shared by the end-to-end tests that check what
//! the log publishes and proves (`published_hashes.rs`, `log_proofs.rs`, `tamper.rs`).

use palimpsest_events::{ExpectedVersion, NewEvent, StreamName};
use palimpsest_log::AppendRequest;
use palimpsest_testkit::TestApp;
use serde_json::{Value, json};
use std::time::{Duration, Instant};

/// One write through a real route; answers its JSON body (or `null`), asserting a success.
pub async fn write(
    app: &TestApp,
    method: reqwest::Method,
    path: &str,
    body: (&'static str, String),
    bearer: Option<&str>,
) -> Value {
    Client::of(app)
        .write(method, path, body, bearer, None)
        .await
}

/// A JSON `POST` through a real route as the administrator ([`write`]); gives the answer's JSON.
/// The audit tests write this way: the admin may write in every context.
pub async fn post_as_admin(app: &TestApp, path: &str, body: Value) -> Value {
    let admin = app.admin_token();
    write(
        app,
        reqwest::Method::POST,
        path,
        json_body(body),
        Some(&admin),
    )
    .await
}

/// A client of the app on one keep-alive connection (as a browser tab or a replicating client
/// keeps one): the end-to-end tests' writes and the latency bench's.
pub struct Client {
    http: reqwest::Client,
    base: String,
}

impl Client {
    /// A client of `app`, keeping at most one idle connection.
    pub fn of(app: &TestApp) -> Client {
        let http = reqwest::Client::builder()
            .pool_max_idle_per_host(1)
            .tcp_nodelay(true)
            .build()
            .unwrap_or_else(|e| panic!("http client: {e}"));
        Client {
            http,
            base: app.url(""),
        }
    }

    /// One write through a real route, under Idempotency-Key `key` if given; answers its JSON
    /// body (or `null`), asserting a success.
    pub async fn write(
        &self,
        method: reqwest::Method,
        path: &str,
        body: (&'static str, String),
        bearer: Option<&str>,
        key: Option<&str>,
    ) -> Value {
        let mut request = self.http.request(method, format!("{}{path}", self.base));
        if let Some(token) = bearer {
            request = request.bearer_auth(token);
        }
        if let Some(key) = key {
            request = request.header("idempotency-key", key);
        }
        let answer = request
            .header("content-type", body.0)
            .body(body.1)
            .send()
            .await
            .unwrap_or_else(|e| panic!("{path}: {e}"));
        let status = answer.status();
        let text = answer.text().await.expect("body");
        assert!(status.is_success(), "{path}: {status} {text}");
        serde_json::from_str(&text).unwrap_or(Value::Null)
    }

    /// A `GET` of `path`: its status and body as text.
    pub async fn get(&self, path: &str, bearer: Option<&str>) -> (reqwest::StatusCode, String) {
        let mut request = self.http.get(format!("{}{path}", self.base));
        if let Some(token) = bearer {
            request = request.bearer_auth(token);
        }
        let answer = request
            .send()
            .await
            .unwrap_or_else(|e| panic!("{path}: {e}"));
        let status = answer.status();
        (status, answer.text().await.expect("body"))
    }
}

/// A JSON request body.
pub fn json_body(value: Value) -> (&'static str, String) {
    ("application/json", value.to_string())
}

/// A form request body, percent-encoded.
pub fn form(params: &[(&str, &str)]) -> (&'static str, String) {
    let encode = |s: &str| {
        s.bytes()
            .map(|b| match b {
                b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                    (b as char).to_string()
                }
                _ => format!("%{b:02X}"),
            })
            .collect::<String>()
    };
    let pairs: Vec<String> = params
        .iter()
        .map(|(k, v)| format!("{k}={}", encode(v)))
        .collect();
    ("application/x-www-form-urlencoded", pairs.join("&"))
}

/// Writes through one or more real routes of each of the five contexts, with text that needs
/// escaping and numbers that JSON writes in more than one way.
pub async fn write_through_every_context(app: &TestApp) {
    write_in_every_context(app, false).await;
}

/// [`write_through_every_context`], reading each context's write back through HTTP at once
/// after it: read-your-writes, wherever the read models live and whatever feeds them.
pub async fn write_and_read_back_in_every_context(app: &TestApp) {
    write_in_every_context(app, true).await;
}

/// The writes of [`write_through_every_context`]; with `read_back`, each read back at once.
async fn write_in_every_context(app: &TestApp, read_back: bool) {
    use reqwest::Method as M;
    let admin = app.admin_token();
    let key = std::fs::read_to_string(app.data_dir().join("APIKEY.txt")).expect("APIKEY.txt");
    let pads = |function: &str| format!("/pads/api/1.3.0/{function}");
    let text = "Hà Nội \"1010\" \\ tab\t 𝄞\n";
    let created = form(&[("apikey", key.trim()), ("padID", "p1"), ("text", text)]);
    write(app, M::POST, &pads("createPad"), created, None).await;
    let set = form(&[("apikey", key.trim()), ("padID", "p1"), ("text", "ünïcödé")]);
    write(app, M::POST, &pads("setText"), set, None).await;
    if read_back {
        let path = format!("{}?apikey={}&padID=p1", pads("getText"), key.trim());
        let got = read(app, &path, None).await;
        assert_eq!(got["data"]["text"], json!("ünïcödé\n"), "pads: {got}");
    }

    let title = "Thăng Long ✓";
    let section = write(
        app,
        M::POST,
        "/atlas/sections",
        json_body(json!({"title": title, "description": "a\u{1}b"})),
        Some(&admin),
    )
    .await;
    let id = section["id"].as_str().expect("section id");
    let lock = json_body(json!({}));
    let locked = format!("/atlas/sections/{id}/lock");
    write(app, M::POST, &locked, lock, Some(&admin)).await;
    if read_back {
        let got = read(app, &format!("/atlas/sections/{id}"), Some(&admin)).await;
        assert_eq!(got["title"], json!(title), "atlas: {got}");
    }

    let empty = ("application/json", String::new());
    write(app, M::PUT, "/docs/db", empty, Some(&admin)).await;
    let doc = json!({"float": 1.5, "whole": 3.0, "big": 1e21, "tiny": 1e-7, "neg": -0.25,
                     "int": 12345678901234i64, "é": ["\u{7f}", null, true]});
    write(app, M::PUT, "/docs/db/d1", json_body(doc), Some(&admin)).await;
    if read_back {
        let got = read(app, "/docs/db/d1", Some(&admin)).await;
        assert_eq!(got["float"], json!(1.5), "docs: {got}");
    }

    let records = |function: &str| format!("/records/api/{function}");
    let class = json!({"clazz": "Book", "sync": true, "pk": ["p1"], "collections": [],
                       "indexes": [{"name": "code", "type": "uniq"}]});
    let declare = records("declareClass");
    write(app, M::POST, &declare, json_body(class), Some(&admin)).await;
    let doc = json!({"org": "o1", "data": {"clazz": "Book", "p1": "b1", "code": "Œ", "n": 0.1}});
    let insert = records("insertDoc");
    let stored = write(app, M::POST, &insert, json_body(doc), Some(&admin)).await;
    if read_back {
        let pk = stored["result"]["pk"].as_str().expect("pk");
        let get = json_body(json!({"org": "o1", "cl": "Book", "pk": pk}));
        let got = write(app, M::POST, &records("getDoc"), get, Some(&admin)).await;
        assert_eq!(got["result"]["pk"], json!(pk), "records: {got}");
    }

    let file = "/resources/@api/deki/pages/1/files/a.txt";
    let one = ("text/plain", "one".into());
    write(app, M::PUT, file, one, Some(&admin)).await;
    if read_back {
        let got = read(app, file, Some(&admin)).await;
        assert_eq!(got, json!("one"), "resources");
    }
}

/// A GET answered with a success, as JSON (or the text as a JSON string).
pub async fn read(app: &TestApp, path: &str, bearer: Option<&str>) -> Value {
    let mut request = reqwest::Client::new().get(app.url(path));
    if let Some(token) = bearer {
        request = request.bearer_auth(token);
    }
    let answer = request.send().await.expect("request");
    let status = answer.status();
    let text = answer.text().await.expect("body");
    assert!(status.is_success(), "{path}: {status} {text}");
    serde_json::from_str(&text).unwrap_or(Value::String(text))
}

/// Appends one event at a time through the log until one is recorded at a whole millisecond
/// (its microseconds a multiple of 1000: about one append in a thousand), so the page checked
/// holds a `recorded_at` ending in `000`. Gives how many appends it took.
pub async fn append_until_a_whole_millisecond(app: &TestApp) -> usize {
    let stream = StreamName::new("test", "clock", "ms").expect("stream");
    let started = Instant::now();
    for attempt in 1.. {
        let event = NewEvent::new("Ticked", 1, json!({"attempt": attempt}));
        let appended = app
            .state
            .store
            .append(AppendRequest::new().stream(stream.clone(), ExpectedVersion::Any, vec![event]))
            .await
            .expect("append");
        let micros = appended.events[0].recorded_at.timestamp_subsec_micros();
        if micros % 1000 == 0 {
            return attempt;
        }
        assert!(
            started.elapsed() < Duration::from_secs(420),
            "no event recorded at a whole millisecond in {attempt} appends"
        );
    }
    unreachable!("the loop returns or fails")
}
