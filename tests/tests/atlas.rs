//! The atlas context end to end: the History Map's section workflow through the real app's
//! HTTP routes (`/atlas/...`), the read-model tables it leaves, the events NATS carries, and a
//! replayed rebuild that equals the live read model.

use palimpsest::config::Settings;
use palimpsest_events::RecordedEvent;
use palimpsest_log::relay::STREAM_NAME;
use palimpsest_testkit::NatsServer;
use palimpsest_testkit::TestApp;
use reqwest::StatusCode;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::time::Duration;

/// The atlas as its users call it: each request with the token of the user it names (issued by
/// the administrator at the start), or the admin token when it names no one.
struct Client<'a> {
    app: &'a TestApp,
    http: reqwest::Client,
    tokens: HashMap<String, String>,
}

impl<'a> Client<'a> {
    /// A client of `app` whose users `users` are editors and reviewers.
    async fn of(app: &'a TestApp, users: &[&str]) -> Client<'a> {
        let http = reqwest::Client::new();
        let mut tokens = HashMap::new();
        for user in users {
            let issued: Value = http
                .put(app.url(&format!("/atlas/admin/users/{user}")))
                .bearer_auth(app.admin_token())
                .json(&json!({"roles": ["editor", "reviewer"]}))
                .send()
                .await
                .expect("issue")
                .json()
                .await
                .expect("issue answer");
            let token = issued["token"].as_str().expect("token").to_owned();
            tokens.insert((*user).to_owned(), token);
        }
        Client { app, http, tokens }
    }

    /// The token of the user `body` names, else the admin's.
    fn token(&self, body: &Value) -> String {
        ["created_by", "user_id", "submitted_by", "reviewed_by"]
            .iter()
            .find_map(|field| body[*field].as_str())
            .and_then(|user| self.tokens.get(user).cloned())
            .unwrap_or_else(|| self.app.admin_token())
    }

    async fn get(&self, path: &str) -> (StatusCode, Value) {
        let res = self
            .http
            .get(self.app.url(&format!("/atlas{path}")))
            .bearer_auth(self.app.admin_token())
            .send()
            .await
            .expect("get");
        let status = res.status();
        (status, res.json().await.unwrap_or(Value::Null))
    }

    async fn post(&self, path: &str, body: Value) -> (StatusCode, Value) {
        let res = self
            .http
            .post(self.app.url(&format!("/atlas{path}")))
            .bearer_auth(self.token(&body))
            .json(&body)
            .send()
            .await
            .expect("post");
        let status = res.status();
        (status, res.json().await.unwrap_or(Value::Null))
    }

    async fn ok(&self, path: &str, body: Value, want: StatusCode) -> Value {
        let (status, answer) = self.post(path, body).await;
        assert_eq!(status, want, "POST {path}: {answer}");
        answer
    }
}

async fn rows(app: &TestApp, sql: &str) -> Vec<Value> {
    let client = app.state.read.get().await.expect("client");
    client
        .query(&format!("SELECT to_jsonb(t) FROM ({sql}) t"), &[])
        .await
        .expect("query")
        .iter()
        .map(|r| r.get(0))
        .collect()
}

const TABLES: [(&str, &str); 11] = [
    ("entities", "id"),
    ("geometries", "id"),
    ("entity_geometries", "entity_id, geometry_id"),
    ("sections", "id"),
    ("section_states", "section_id"),
    ("section_commits", "id"),
    ("section_submissions", "id"),
    ("entity_history", "entity_id, version"),
    ("geometry_history", "geometry_id, version"),
    ("users", "user_id"),
    ("publication_head", "id"),
];

async fn dump(app: &TestApp) -> Vec<Vec<Value>> {
    let mut out = Vec::new();
    for (table, key) in TABLES {
        out.push(rows(app, &format!("SELECT * FROM atlas.{table} ORDER BY {key}")).await);
    }
    out
}

/// Every message JetStream holds once it has `head` of them: (subject, event).
async fn nats_events(nats_url: &str, head: i64) -> Vec<(String, RecordedEvent)> {
    let client = async_nats::connect(nats_url).await.expect("nats");
    let js = async_nats::jetstream::new(client);
    for _ in 0..400 {
        if let Ok(mut s) = js.get_stream(STREAM_NAME).await
            && s.info()
                .await
                .map(|i| i.state.last_sequence as i64)
                .unwrap_or(0)
                >= head
        {
            let mut out = Vec::new();
            for seq in 1..=head as u64 {
                let m = s.get_raw_message(seq).await.expect("message");
                out.push((
                    m.subject.to_string(),
                    serde_json::from_slice(&m.payload).expect("event"),
                ));
            }
            return out;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the relay did not publish {head} events");
}

fn polygon(lng: f64, lat: f64) -> Value {
    json!({"type": "Polygon", "coordinates": [[[lng, lat], [lng + 2.0, lat], [lng + 2.0, lat + 2.0], [lng, lat]]]})
}

fn snapshot(name: &str) -> Value {
    json!({
        "schema_version": 1,
        "editor_feature_collection": {"type": "FeatureCollection", "features": []},
        "entities": [{"operation": "create", "id": "dai-viet", "name": name, "slug": "dai-viet", "type_id": "country"}],
        "geometries": [
            {"operation": "create", "id": "g-dv", "type": "path", "draw_geometry": polygon(104.0, 19.0), "time_start": 968},
            {"operation": "create", "id": "g-capital", "type": "city", "draw_geometry": {"type": "Point", "coordinates": [105.85, 21.03]}, "binding": ["g-dv"]}
        ],
        "link_scopes": [{"geometry_id": "g-dv", "entity_ids": ["dai-viet"]}]
    })
}

#[tokio::test]
async fn the_section_workflow_end_to_end_with_nats_and_a_replayed_rebuild() {
    let nats = NatsServer::start().await;
    let app = TestApp::start_with_nats(&nats.url()).await;
    let c = Client::of(&app, &["ann", "bob", "rev"]).await;

    // create, lock
    let section = c
        .ok(
            "/sections",
            json!({"title": "Đại Việt 1000", "created_by": "ann"}),
            StatusCode::CREATED,
        )
        .await;
    let id = section["id"].as_str().expect("id").to_owned();
    let locked = c
        .ok(
            &format!("/sections/{id}/lock"),
            json!({"user_id": "ann"}),
            StatusCode::OK,
        )
        .await;
    assert_eq!(locked["state"]["locked_by"], "ann");
    let (status, _) = c
        .post(&format!("/sections/{id}/lock"), json!({"user_id": "bob"}))
        .await;
    assert_eq!(status, StatusCode::CONFLICT, "another user's live lock");

    // a bad snapshot: 400 naming the field, nothing appended
    let head_before = app.state.store.head_position().await.expect("head");
    let (status, body) = c
        .post(&format!("/sections/{id}/commits"), json!({"created_by": "ann", "snapshot": {"geometries": [{"operation": "create", "id": "g"}]}}))
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(
        body["error"],
        "Invalid snapshot: geometries[0].draw_geometry is required"
    );
    assert_eq!(
        app.state.store.head_position().await.expect("head"),
        head_before
    );

    // commit, commit, restore
    let c1 = c
        .ok(
            &format!("/sections/{id}/commits"),
            json!({"created_by": "ann", "snapshot": snapshot("Đại Cồ Việt")}),
            StatusCode::CREATED,
        )
        .await["commit"]["id"]
        .clone();
    c.ok(
        &format!("/sections/{id}/commits"),
        json!({"created_by": "ann", "snapshot": snapshot("typo"), "expected_head_commit_id": c1}),
        StatusCode::CREATED,
    )
    .await;
    let restored = c
        .ok(
            &format!("/sections/{id}/restore"),
            json!({"created_by": "ann", "commit_id": c1}),
            StatusCode::CREATED,
        )
        .await;
    assert_eq!(restored["commit"]["kind"], "restore");

    // submit, reject
    let sub1 = c
        .ok(
            &format!("/sections/{id}/submit"),
            json!({"submitted_by": "ann"}),
            StatusCode::CREATED,
        )
        .await["submission"]["id"]
        .as_str()
        .expect("submission")
        .to_owned();
    let rejected = c
        .ok(
            &format!("/submissions/{sub1}/reject"),
            json!({"reviewed_by": "rev", "review_note": "add the capital's name"}),
            StatusCode::OK,
        )
        .await;
    assert_eq!(rejected["state"]["status"], "rejected");

    // commit again, submit, approve
    let mut fixed = snapshot("Đại Cồ Việt");
    fixed["entities"][0]["description"] = json!("capital Hoa Lư");
    c.ok(
        &format!("/sections/{id}/commits"),
        json!({"created_by": "ann", "snapshot": fixed}),
        StatusCode::CREATED,
    )
    .await;
    let sub2 = c
        .ok(
            &format!("/sections/{id}/submit"),
            json!({"submitted_by": "ann"}),
            StatusCode::CREATED,
        )
        .await["submission"]["id"]
        .as_str()
        .expect("submission")
        .to_owned();
    let approved = c
        .ok(
            &format!("/submissions/{sub2}/approve"),
            json!({"reviewed_by": "rev"}),
            StatusCode::OK,
        )
        .await;
    assert_eq!(approved["submission"]["status"], "approved");
    assert_eq!(approved["state"]["status"], "approved");

    // read the map
    let (_, map) = c
        .get("/geometries?minLng=100&minLat=15&maxLng=110&maxLat=25&time=1000")
        .await;
    let features = map["features"].as_array().expect("features");
    assert_eq!(features.len(), 2);
    let dv = features.iter().find(|f| f["id"] == "g-dv").expect("g-dv");
    assert_eq!(
        dv["properties"]["type"], "country",
        "`path` falls back to the entity's type"
    );
    let capital = features
        .iter()
        .find(|f| f["id"] == "g-capital")
        .expect("capital");
    assert_eq!(capital["properties"]["binding"], json!(["g-dv"]));
    let (_, entity) = c.get("/entities/dai-viet").await;
    assert_eq!(entity["description"], "capital Hoa Lư");
    assert_eq!(entity["geometry_count"], 1);
    let (_, history) = c.get("/entities/dai-viet/history").await;
    assert_eq!(history[0]["submission_id"], sub2.as_str());
    assert_eq!(history[0]["reviewed_by"], "rev");

    // the tables
    let states = rows(
        &app,
        "SELECT status, version, locked_by FROM atlas.section_states",
    )
    .await;
    assert_eq!(
        states,
        vec![json!({"status": "approved", "version": 4, "locked_by": null})],
        "three commits and a restore; submits and reviews do not move the version (spec §4.3)"
    );
    let submissions = rows(
        &app,
        "SELECT status FROM atlas.section_submissions ORDER BY submitted_at",
    )
    .await;
    assert_eq!(
        submissions,
        vec![json!({"status": "rejected"}), json!({"status": "approved"})]
    );
    let links = rows(
        &app,
        "SELECT entity_id, geometry_id FROM atlas.entity_geometries",
    )
    .await;
    assert_eq!(
        links,
        vec![json!({"entity_id": "dai-viet", "geometry_id": "g-dv"})]
    );

    // the NATS events
    let head = app.state.store.head_position().await.expect("head");
    let messages = nats_events(&nats.url(), head).await;
    let section_subject = format!(
        "palimpsest.atlas.section.{}",
        palimpsest_events::subject::encode_key(&id)
    );
    let section_types: Vec<&str> = messages
        .iter()
        .filter(|(subject, _)| *subject == section_subject)
        .map(|(_, e)| e.event_type.as_str())
        .collect();
    assert_eq!(
        section_types,
        [
            "SectionCreated",
            "SectionLocked",
            "SectionCommitted",
            "SectionCommitted",
            "SectionRestored",
            "SectionSubmitted",
            "SubmissionRejected",
            "SectionLocked",
            "SectionCommitted",
            "SectionSubmitted",
            "SubmissionApproved"
        ]
    );
    let approval: Vec<(&str, &str)> = messages
        .iter()
        .filter(|(_, e)| !matches!(e.stream.category.as_str(), "section" | "user"))
        .map(|(subject, e)| (subject.as_str(), e.event_type.as_str()))
        .collect();
    assert_eq!(
        approval,
        [
            ("palimpsest.atlas.entity.dai-viet", "EntityCreated"),
            ("palimpsest.atlas.geometry.g-capital", "GeometryCreated"),
            ("palimpsest.atlas.geometry.g-dv", "GeometryCreated"),
            ("palimpsest.atlas.geometry.g-dv", "GeometryLinksReplaced"),
            ("palimpsest.atlas.publication.map", "SubmissionPublished")
        ]
    );
    let approved_event = messages.last().expect("last");
    assert_eq!(approved_event.1.event_type, "SubmissionApproved");
    let entity_event = messages
        .iter()
        .find(|(_, e)| e.event_type == "EntityCreated")
        .expect("entity");
    assert_eq!(
        entity_event.1.position + 5,
        approved_event.1.position,
        "the approval's events are one append, contiguous"
    );
    assert_eq!(
        entity_event.1.payload["source"]["submission_id"],
        sub2.as_str()
    );

    // a replayed rebuild equals the live read model
    let live = dump(&app).await;
    let settings = Settings {
        nats_url: nats.url(),
        ..Settings::for_database(app.database_url(), app.data_dir())
    };
    palimpsest::cli::replay::run(&settings, "atlas")
        .await
        .expect("replay");
    let rebuilt = dump(&app).await;
    for ((table, _), (a, b)) in TABLES.iter().zip(live.iter().zip(rebuilt.iter())) {
        assert_eq!(a, b, "atlas.{table} differs after the replay");
    }
    let (_, map_after) = c
        .get("/geometries?minLng=100&minLat=15&maxLng=110&maxLat=25&time=1000")
        .await;
    assert_eq!(map_after, map);

    app.stop().await;
}
