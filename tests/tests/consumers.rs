//! The example consumers of `examples/consumers/` (Python with nats-py, Node with `nats`) run
//! against a live server: a TestApp with the relay and its own nats-server, written to through
//! the real atlas routes. Each rebuilds the atlas read model (sections' title, status, version,
//! head commit and lock holder; live entities' names) from JetStream and must print exactly what
//! the server's own API answers (`GET /atlas/sections`, `GET /atlas/entities`). Each is first
//! run up to a position inside an approval's append and then run again to the end (it resumes
//! from its ack floor), and each refuses a state file of another log.
//!
//! Installs what they need on first run (`examples/consumers/install.sh`, also run by
//! `.ci/run`): `npm ci` in `examples/consumers/node` (pinned by its `package-lock.json`) and a
//! venv in `examples/consumers/python/.venv` from its `requirements.txt` (rebuilt when it
//! changes). Nothing is skipped: a missing python3 or npm fails the test.

use palimpsest_testkit::{NatsServer, TestApp};
use reqwest::StatusCode;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/consumers")
}

/// Installs both consumers' packages with `examples/consumers/install.sh` (`npm ci` in `node/`,
/// a venv in `python/.venv`; nothing when already done); the venv's Python.
fn install() -> PathBuf {
    let script = examples().join("install.sh");
    let status = Command::new("bash")
        .arg(&script)
        .status()
        .expect("bash runs the install script");
    assert!(
        status.success(),
        "{} failed: the consumers need python3 (3.11, venv) and Node 18+ with npm",
        script.display()
    );
    examples().join("python/.venv/bin/python")
}

/// The atlas as its users call it: `ann` an editor, `rev` a reviewer, each with the token the
/// administrator issued.
struct Atlas<'a> {
    app: &'a TestApp,
    http: reqwest::Client,
    tokens: HashMap<&'static str, String>,
}

impl<'a> Atlas<'a> {
    async fn of(app: &'a TestApp) -> Atlas<'a> {
        let http = reqwest::Client::new();
        let mut tokens = HashMap::new();
        for (user, role) in [("ann", "editor"), ("rev", "reviewer")] {
            let issued: Value = http
                .put(app.url(&format!("/atlas/admin/users/{user}")))
                .bearer_auth(app.admin_token())
                .json(&json!({"roles": [role]}))
                .send()
                .await
                .expect("issue")
                .json()
                .await
                .expect("issued");
            tokens.insert(user, issued["token"].as_str().expect("token").to_owned());
        }
        Atlas { app, http, tokens }
    }

    /// `POST /atlas{path}` as `user`, asserting `want`; the answer's JSON.
    async fn post(&self, user: &str, path: &str, body: Value, want: StatusCode) -> Value {
        let res = self
            .http
            .post(self.app.url(&format!("/atlas{path}")))
            .bearer_auth(&self.tokens[user])
            .json(&body)
            .send()
            .await
            .expect("post");
        let status = res.status();
        let answer: Value = res.json().await.unwrap_or(Value::Null);
        assert_eq!(status, want, "POST {path}: {answer}");
        answer
    }

    /// `GET /atlas{path}` with the admin token.
    async fn get(&self, path: &str) -> Value {
        let res = self
            .http
            .get(self.app.url(&format!("/atlas{path}")))
            .bearer_auth(self.app.admin_token())
            .send()
            .await
            .expect("get");
        assert_eq!(res.status(), StatusCode::OK, "GET {path}");
        res.json().await.expect("json")
    }

    /// A new section by `ann`; its id.
    async fn section(&self, title: &str) -> String {
        let made = self
            .post(
                "ann",
                "/sections",
                json!({"title": title}),
                StatusCode::CREATED,
            )
            .await;
        made["id"].as_str().expect("id").to_owned()
    }

    /// `ann` commits `snapshot` to section `id` (taking its lock) and submits it; the submission.
    async fn commit_and_submit(&self, id: &str, snapshot: Value) -> String {
        self.post(
            "ann",
            &format!("/sections/{id}/commits"),
            json!({"snapshot": snapshot, "note": "from the consumers test"}),
            StatusCode::CREATED,
        )
        .await;
        let submitted = self
            .post(
                "ann",
                &format!("/sections/{id}/submit"),
                json!({}),
                StatusCode::CREATED,
            )
            .await;
        submitted["submission"]["id"]
            .as_str()
            .expect("submission")
            .to_owned()
    }

    /// `rev` approves (or rejects) a submission; asserts the section's status after it.
    async fn review(&self, submission: &str, verdict: &str, status: &str) {
        let reviewed = self
            .post(
                "rev",
                &format!("/submissions/{submission}/{verdict}"),
                json!({"review_note": "ok"}),
                StatusCode::OK,
            )
            .await;
        assert_eq!(reviewed["state"]["status"], status, "{reviewed}");
    }

    /// The read model the consumers build, as the server answers it.
    async fn model(&self) -> Value {
        let mut sections = serde_json::Map::new();
        for row in self.get("/sections").await.as_array().expect("sections") {
            let state = &row["state"];
            sections.insert(
                row["id"].as_str().expect("id").to_owned(),
                json!({"title": row["title"], "status": state["status"], "version": state["version"],
                       "head_commit_id": state["head_commit_id"], "locked_by": state["locked_by"]}),
            );
        }
        let mut entities = serde_json::Map::new();
        for row in self.get("/entities").await.as_array().expect("entities") {
            entities.insert(
                row["id"].as_str().expect("id").to_owned(),
                row["name"].clone(),
            );
        }
        json!({"sections": sections, "entities": entities})
    }
}

/// A snapshot that creates two entities and a geometry linked to the first.
fn first_snapshot() -> Value {
    json!({
        "schema_version": 1,
        "entities": [
            {"operation": "create", "id": "dai-viet", "name": "Đại Cồ Việt", "slug": "dai-viet", "type_id": "country"},
            {"operation": "create", "id": "champa", "name": "Chăm Pa", "slug": "champa", "type_id": "country"}
        ],
        "geometries": [
            {"operation": "create", "id": "g-dv", "type": "path", "time_start": 968,
             "draw_geometry": {"type": "Polygon", "coordinates": [[[104.0, 19.0], [106.0, 19.0], [106.0, 21.0], [104.0, 19.0]]]}}
        ],
        "link_scopes": [{"geometry_id": "g-dv", "entity_ids": ["dai-viet"]}]
    })
}

/// What the relay has published: waits until the stream holds `head` messages.
async fn published(nats_url: &str, head: i64) {
    let js = async_nats::jetstream::new(async_nats::connect(nats_url).await.expect("nats"));
    let started = Instant::now();
    loop {
        if let Ok(mut stream) = js.get_stream(palimpsest_log::relay::STREAM_NAME).await
            && stream
                .info()
                .await
                .map(|i| i.state.last_sequence as i64)
                .ok()
                >= Some(head)
        {
            return;
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the relay did not publish {head} events"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Waits until the atlas read model has applied the log up to `head`.
async fn projected(app: &TestApp, head: i64) {
    let started = Instant::now();
    loop {
        let client = app.state.read.get().await.expect("client");
        let at: i64 = client
            .query_one(
                "SELECT position FROM atlas.projection_checkpoint WHERE name = 'atlas'",
                &[],
            )
            .await
            .expect("checkpoint")
            .get(0);
        if at >= head {
            return;
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "atlas projected {at} of {head}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// One of the two example consumers.
#[derive(Clone)]
struct Consumer {
    name: &'static str,
    program: PathBuf,
    script: PathBuf,
    state: PathBuf,
    nats_url: String,
}

impl Consumer {
    /// Runs the consumer with `args` (a tokio child, so the server keeps serving); its exit
    /// status and standard output (its stderr is printed, and checked to say that it validated
    /// against `events/schemas/` whenever that folder exists).
    async fn run(&self, args: &[String]) -> (Option<i32>, String) {
        let run = tokio::process::Command::new(&self.program)
            .arg(&self.script)
            .arg("--server")
            .arg(&self.nats_url)
            .arg("--state")
            .arg(&self.state)
            .arg("--durable")
            .arg(format!("test-{}", self.name))
            .args(args)
            .kill_on_drop(true)
            .output();
        let output = tokio::time::timeout(Duration::from_secs(180), run)
            .await
            .unwrap_or_else(|_| panic!("{} finished within three minutes", self.name))
            .unwrap_or_else(|e| panic!("{} could not start: {e}", self.name));
        let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
        let stderr = String::from_utf8_lossy(&output.stderr);
        eprintln!("{} {args:?}: {}\n{stderr}", self.name, output.status);
        if examples().join("../../events/schemas").is_dir() {
            assert!(
                stderr.contains("validating events against"),
                "{}: events/schemas exists but was not used: {stderr}",
                self.name
            );
        }
        (output.status.code(), stdout)
    }

    /// Runs the consumer until `position`; the model it printed (its last line of output).
    async fn until(&self, position: i64) -> Value {
        let (status, stdout) = self
            .run(&["--until-position".into(), position.to_string()])
            .await;
        assert_eq!(status, Some(0), "{} failed: {stdout}", self.name);
        let line = stdout.lines().last().expect("a model on stdout");
        serde_json::from_str(line).unwrap_or_else(|e| panic!("{}: {e}: {line}", self.name))
    }
}

/// The model part of a consumer's output (without its log id and position).
fn model_of(printed: &Value) -> Value {
    json!({"sections": printed["sections"], "entities": printed["entities"]})
}

#[tokio::test]
async fn the_example_consumers_rebuild_the_atlas_read_model_the_server_answers() {
    let python = tokio::task::spawn_blocking(install).await.expect("install");
    let nats = NatsServer::start().await;
    let app = TestApp::start_with_nats(&nats.url()).await;
    let atlas = Atlas::of(&app).await;
    let work = tempfile::tempdir().expect("tempdir");
    let consumers = [
        Consumer {
            name: "python",
            program: python,
            script: examples().join("python/consumer.py"),
            state: work.path().join("python.json"),
            nats_url: nats.url(),
        },
        Consumer {
            name: "node",
            program: "node".into(),
            script: examples().join("node/consumer.mjs"),
            state: work.path().join("node.json"),
            nats_url: nats.url(),
        },
    ];

    // An approved section: two entities published (one approval, one append).
    let first = atlas.section("Đại Việt 1000 \"✓\"").await;
    let submission = atlas.commit_and_submit(&first, first_snapshot()).await;
    atlas.review(&submission, "approve", "approved").await;
    let approved = app.state.store.head_position().await.expect("head");
    // Stop the first runs inside the approval's append (entity, entity, geometry, links,
    // publication, SubmissionApproved): they must resume from there.
    let midway = approved - 3;

    // A second approval renames one entity and deletes the other; a rejected section; a
    // section only locked.
    let second = atlas.section("Chăm Pa").await;
    let renamed = json!({"schema_version": 1, "entities": [
        {"operation": "update", "id": "champa", "name": "Champa (Lâm Ấp)", "slug": "champa", "type_id": "country"},
        {"operation": "delete", "id": "dai-viet"}
    ]});
    let submission = atlas.commit_and_submit(&second, renamed).await;
    atlas.review(&submission, "approve", "approved").await;
    let third = atlas.section("rejected").await;
    let submission = atlas
        .commit_and_submit(&third, json!({"schema_version": 1}))
        .await;
    atlas.review(&submission, "reject", "rejected").await;
    let fourth = atlas.section("only locked").await;
    atlas
        .post(
            "ann",
            &format!("/sections/{fourth}/lock"),
            json!({}),
            StatusCode::OK,
        )
        .await;

    let head = app.state.store.head_position().await.expect("head");
    published(&nats.url(), head).await;
    projected(&app, head).await;
    let server = atlas.model().await;
    assert_eq!(
        server["entities"],
        json!({"champa": "Champa (Lâm Ấp)"}),
        "the server's own answer"
    );
    assert_eq!(server["sections"].as_object().map(|s| s.len()), Some(4));
    let log_id = app.state.store.log_id().to_string();

    for consumer in &consumers {
        let partial = consumer.until(midway).await;
        assert_eq!(partial["log_id"], log_id.as_str(), "{}", consumer.name);
        assert!(
            partial["position"].as_i64().is_some_and(|p| p <= midway),
            "{}: {partial}",
            consumer.name
        );
        assert_eq!(
            partial["sections"][&first]["status"], "submitted",
            "{}: the approval is not applied yet",
            consumer.name
        );
        let state: Value =
            serde_json::from_slice(&std::fs::read(&consumer.state).expect("state file"))
                .expect("state json");
        assert_eq!(state["log_id"], log_id.as_str(), "{}", consumer.name);
        assert_eq!(state["ack_floor"], partial["position"], "{}", consumer.name);

        let whole = consumer.until(head).await;
        assert_eq!(
            model_of(&whole),
            server,
            "{}: the consumer's read model is the server's",
            consumer.name
        );
        assert_eq!(whole["log_id"], log_id.as_str(), "{}", consumer.name);

        // Run again: nothing new, the same model.
        let again = consumer.until(head).await;
        assert_eq!(model_of(&again), server, "{}", consumer.name);

        // A state file of another log is refused (exit status 3), and left as it was.
        let foreign = json!({"log_id": "00000000-0000-4000-8000-000000000000",
                             "ack_floor": 1, "model": {"sections": {}, "entities": {}}});
        let other = consumer
            .state
            .with_file_name(format!("{}-other-log.json", consumer.name));
        std::fs::write(&other, foreign.to_string()).expect("write");
        let refusing = Consumer {
            state: other.clone(),
            ..consumer.clone()
        };
        let (status, stdout) = refusing.run(&["--once".into()]).await;
        assert_eq!(status, Some(3), "{}: {stdout}", consumer.name);
        assert_eq!(
            serde_json::from_slice::<Value>(&std::fs::read(&other).expect("read")).expect("json"),
            foreign,
            "{}",
            consumer.name
        );
    }
    app.stop().await;
}
