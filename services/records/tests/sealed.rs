//! The host cannot read `data`: no plaintext in events (what NATS carries) or rows; and the row
//! tables equal a replay rebuild.

mod common;

use common::Records;
use serde_json::{Value, json};

const SECRET: &str = "Quasimodo-sonne-les-cloches";

async fn some_history(r: &Records) {
    let a1 = r.ok("insertDoc", json!({"org": "demo", "data": {"clazz": "Article", "p1": "a1", "auteur": "Hugo", "auteurs": ["A", "B"], "taille": 3, "titre": SECRET, "tags": ["x"]}})).await;
    let a1 = r.ok("updateDoc", json!({"org": "demo", "v": a1["v"], "data": {"clazz": "Article", "p1": "a1", "auteur": "Victor", "auteurs": ["B"], "taille": 4, "titre": SECRET}})).await;
    r.ok("insertDoc", json!({"org": "demo", "data": {"clazz": "Article", "p1": "a2", "code": "c", "titre": SECRET}})).await;
    r.ok(
        "deleteDoc",
        json!({"org": "demo", "cl": "Article", "pk": a1["pk"]}),
    )
    .await;
    r.ok("insertOrg", json!({"data": {"org": "demo", "nom": SECRET}}))
        .await;
    r.ok("insertHdr", json!({"data": {"note": SECRET}})).await;
    r.token("demo").await;
    r.ok(
        "setFTP",
        json!({"org": "demo", "path": "f/1", "dp": 20260101}),
    )
    .await;
    r.ok(
        "setFTP",
        json!({"org": "demo", "path": "f/2", "dp": 20260102}),
    )
    .await;
    r.ok("purgeFTP", json!({"org": "demo", "path": "f/1"}))
        .await;
}

#[tokio::test]
async fn no_plaintext_of_data_in_events_replies_or_rows() {
    let r = Records::start().await;
    some_history(&r).await;
    let client = r.state.read.get().await.expect("client");
    let events = client
        .query("SELECT payload::text, metadata::text FROM (SELECT payload, to_jsonb(e) - 'payload' AS metadata FROM log.events e) t", &[])
        .await
        .expect("events");
    assert!(events.len() > 5);
    for row in &events {
        let (payload, rest): (String, String) = (row.get(0), row.get(1));
        assert!(
            !payload.contains(SECRET) && !payload.contains("Quasimodo"),
            "{payload}"
        );
        assert!(!rest.contains(SECRET), "{rest}");
    }
    let replies = client
        .query(
            "SELECT coalesce(encode(reply_body, 'escape'), '') FROM log.idempotency",
            &[],
        )
        .await
        .expect("replies");
    for row in &replies {
        let body: String = row.get(0);
        assert!(!body.contains(SECRET));
    }
    let tables = ["\"Article\"", "\"Org\"", "\"Hdr\"", "tokens"];
    for t in tables {
        for row in r.rows(&format!("SELECT * FROM records.{t}")).await {
            assert!(!row.to_string().contains(SECRET), "{t}: {row}");
        }
    }
    r.stop().await;
}

async fn dump(r: &Records) -> Vec<Vec<Value>> {
    let mut out = Vec::new();
    for (t, key) in [
        ("\"Article\"", "org, pk, ck"),
        ("\"Org\"", "org, pk, ck"),
        ("\"Hdr\"", "org, pk, ck"),
        ("classes", "clazz"),
        ("tokens", "hash"),
        ("\"FTP\"", "org, path"),
        ("\"Task\"", "org, k0"),
    ] {
        out.push(
            r.rows(&format!("SELECT * FROM records.{t} ORDER BY {key}"))
                .await,
        );
    }
    out
}

#[tokio::test]
async fn a_replayed_rebuild_equals_the_live_row_tables() {
    let r = Records::start().await;
    some_history(&r).await;
    let live = dump(&r).await;
    assert!(
        live[0].len() >= 3,
        "zombie, del row, live row: {:?}",
        live[0]
    );
    let report = palimpsest_projections::rebuild(
        &r.state.store,
        palimpsest_records::projection().as_ref(),
        |_, _| {},
    )
    .await
    .expect("rebuild");
    assert_eq!(
        report.position,
        r.state.store.head_position().await.expect("head")
    );
    assert_eq!(dump(&r).await, live);
    r.stop().await;
}

#[tokio::test]
async fn no_plaintext_of_data_in_nats_messages() {
    use palimpsest_log::relay::STREAM_NAME;
    let nats = palimpsest_testkit::NatsServer::start().await;
    let app = palimpsest_testkit::TestApp::builder()
        .nats(&nats.url())
        .start()
        .await;
    let r = Records::over(app).await;
    some_history(&r).await;
    let head = r.state.store.head_position().await.expect("head");
    let client = async_nats::connect(nats.url()).await.expect("nats");
    let js = async_nats::jetstream::new(client);
    let mut published = 0;
    for _ in 0..200 {
        if let Ok(mut s) = js.get_stream(STREAM_NAME).await {
            published = s
                .info()
                .await
                .map(|i| i.state.last_sequence as i64)
                .unwrap_or(0);
            if published >= head {
                break;
            }
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(published, head, "the relay published the whole log");
    let s = js.get_stream(STREAM_NAME).await.expect("stream");
    for seq in 1..=head as u64 {
        let m = s.get_raw_message(seq).await.expect("message");
        let text = String::from_utf8_lossy(&m.payload);
        assert!(!text.contains(SECRET), "message {seq}: {text}");
        assert!(!format!("{:?}", m.headers).contains(SECRET));
    }
    r.stop().await;
}
