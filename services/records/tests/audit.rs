//! The spec's export / import for an audit and for a replacement after treatment: the audit
//! dump (`exportOrg` with `clear`) holds the documents in clear in the row form, while the log,
//! the row tables, the reply store and NATS never do; a class's registered treatment applies on
//! `treat`; the A → T (treated, clear) → purge A's class → T → A round trip.

mod common;

use common::Records;
use palimpsest_records::settings::Settings;
use palimpsest_records::treatment::{Treatment, Treatments};
use reqwest::StatusCode;
use serde_json::{Map, Value, json};
use std::sync::Arc;

const SECRET: &str = "Esmeralda-danse-sur-le-parvis";

/// `Article`'s treatment: the title in capitals, the size doubled, a mark of the treatment;
/// a document titled "refuse" is refused.
fn treatments() -> Treatments {
    let upper: Treatment = Arc::new(|mut data: Map<String, Value>| {
        let titre = data.get("titre").and_then(Value::as_str).unwrap_or("");
        if titre == "refuse" {
            return Err("this one stays as it is".into());
        }
        let upper = titre.to_uppercase();
        data.insert("titre".into(), json!(upper));
        if let Some(taille) = data.get("taille").and_then(Value::as_i64) {
            data.insert("taille".into(), json!(taille * 2));
        }
        data.insert("revu".into(), json!(true));
        Ok(data)
    });
    Treatments::from([("Article".to_owned(), upper)])
}

async fn start() -> Records {
    let r = Records::start_with(Settings {
        treatments: treatments(),
        ..Settings::default()
    })
    .await;
    declare_note(&r).await;
    r
}

/// Declares `Note`, a NOSYNC class without treatment.
async fn declare_note(r: &Records) {
    r.ok(
        "declareClass",
        json!({"clazz": "Note", "sync": false, "pk": ["n"]}),
    )
    .await;
}

async fn some_documents(r: &Records, org: &str) {
    for (p1, titre, taille, code) in [("a1", SECRET, 3, "C1"), ("a2", "deux", 5, "C2")] {
        r.ok("insertDoc", json!({"org": org, "data": {"clazz": "Article", "p1": p1, "auteurs": ["Hugo", "Zola"], "auteur": "Hugo", "taille": taille, "code": code, "titre": titre}})).await;
    }
    r.ok(
        "insertDoc",
        json!({"org": org, "data": {"clazz": "Note", "n": "1", "texte": SECRET}}),
    )
    .await;
}

fn rows(answer: &Value) -> Vec<Value> {
    answer["rows"].as_array().expect("rows").clone()
}

/// Data without what a write sets (`org`, `v`, `x`, `pk`).
fn content(data: &Value) -> Value {
    let mut data = data.clone();
    if let Some(m) = data.as_object_mut() {
        for technical in ["org", "v", "x", "pk"] {
            m.remove(technical);
        }
    }
    data
}

#[tokio::test]
async fn the_audit_dump_is_the_row_form_with_data_in_clear() {
    let r = start().await;
    some_documents(&r, "a").await;
    let dump = r
        .ok(
            "exportOrg",
            json!({"org": "a", "cl": "Article", "clear": true}),
        )
        .await;
    let dump = rows(&dump);
    assert_eq!(dump.len(), 2);
    let stored = r
        .rows("SELECT org, pk, v, x, z, ck, del, auteurs, auteur, taille, code, isbn, tags FROM records.\"Article\" WHERE org = 'a' ORDER BY pk")
        .await;
    for (row, host) in dump.iter().zip(&stored) {
        let mut visible = row.as_object().expect("row").clone();
        let data = visible.remove("data").expect("data");
        let host = host.as_object().expect("host row");
        for (column, value) in host {
            let dumped = visible.get(column).cloned().unwrap_or(Value::Null);
            assert_eq!(&dumped, value, "column {column}");
        }
        assert_eq!(data["clazz"], "Article");
        assert_eq!(data["org"], "a");
        assert_eq!(data["v"], row["v"]);
    }
    assert!(
        dump.iter().any(|row| row["data"]["titre"] == SECRET),
        "the audit reads the data in clear"
    );
    r.stop().await;
}

#[tokio::test]
async fn a_clear_dump_imports_back_sealed_and_nothing_stored_or_published_holds_its_plaintext() {
    let nats = palimpsest_testkit::NatsServer::start().await;
    let app = palimpsest_testkit::TestApp::builder()
        .nats(&nats.url())
        .records(Settings {
            treatments: treatments(),
            ..Settings::default()
        })
        .start()
        .await;
    let r = Records::over(app).await;
    declare_note(&r).await;
    some_documents(&r, "a").await;
    let dump = r.ok("exportOrg", json!({"org": "a", "clear": true})).await;
    let dump = rows(&dump);
    assert_eq!(dump.len(), 3, "two articles and a note");
    assert!(dump.iter().any(|row| row["data"]["texte"] == SECRET));
    let imported: Value = r
        .http
        .post(format!("{}/api/importOrg", r.base))
        .bearer_auth(&r.admin)
        .header("Idempotency-Key", "audit-import-1")
        .json(&json!({"org": "b", "rows": dump.clone()}))
        .send()
        .await
        .expect("importOrg")
        .json()
        .await
        .expect("json");
    assert_eq!(imported["result"]["imported"], 3, "{imported}");
    let back = rows(&r.ok("exportOrg", json!({"org": "b", "clear": true})).await);
    let contents = |rows: &[Value]| {
        rows.iter()
            .map(|row| content(&row["data"]))
            .collect::<Vec<_>>()
    };
    assert_eq!(
        contents(&back),
        contents(&dump),
        "re-keyed into b, same data"
    );
    assert!(
        back.iter()
            .all(|row| row["org"] == "b" && row["data"]["org"] == "b")
    );

    let client = r.state.read.get().await.expect("client");
    for row in client
        .query(
            "SELECT payload::text || (to_jsonb(e) - 'payload')::text FROM log.events e",
            &[],
        )
        .await
        .expect("events")
    {
        let event: String = row.get(0);
        assert!(!event.contains(SECRET), "{event}");
    }
    let replies = client
        .query("SELECT coalesce(encode(reply_body, 'escape'), '') || (to_jsonb(i) - 'reply_body')::text FROM log.idempotency i", &[])
        .await
        .expect("replies");
    assert!(
        !replies.is_empty(),
        "the import's answer is kept under its key"
    );
    for row in replies {
        let reply: String = row.get(0);
        assert!(!reply.contains(SECRET), "{reply}");
    }
    for table in ["\"Article\"", "\"Note\""] {
        for row in r.rows(&format!("SELECT * FROM records.{table}")).await {
            assert!(!row.to_string().contains(SECRET), "{table}: {row}");
        }
    }
    let head = r.state.store.head_position().await.expect("head");
    let messages = published(&nats.url(), head).await;
    assert_eq!(
        messages.len() as i64,
        head,
        "the relay published the whole log"
    );
    for (seq, text) in messages.iter().enumerate() {
        assert!(!text.contains(SECRET), "message {}: {text}", seq + 1);
    }
    r.stop().await;
}

/// The payloads and headers of the JetStream messages 1..=head, once the relay published them.
async fn published(url: &str, head: i64) -> Vec<String> {
    use palimpsest_log::relay::STREAM_NAME;
    let client = async_nats::connect(url).await.expect("nats");
    let js = async_nats::jetstream::new(client);
    let mut last = 0;
    for _ in 0..200 {
        if let Ok(mut s) = js.get_stream(STREAM_NAME).await {
            last = s
                .info()
                .await
                .map(|i| i.state.last_sequence as i64)
                .unwrap_or(0);
            if last >= head {
                break;
            }
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let mut out = Vec::new();
    if let Ok(s) = js.get_stream(STREAM_NAME).await {
        for seq in 1..=last.min(head) as u64 {
            let m = s.get_raw_message(seq).await.expect("message");
            out.push(format!(
                "{}{:?}",
                String::from_utf8_lossy(&m.payload),
                m.headers
            ));
        }
    }
    out
}

#[tokio::test]
async fn a_class_replaced_after_treatment_goes_a_to_t_to_a() {
    let r = start().await;
    some_documents(&r, "a").await;
    let before = r.ok("exportOrg", json!({"org": "a"})).await;

    // Export A treated, in clear: T.
    let t = rows(
        &r.ok(
            "exportOrg",
            json!({"org": "a", "cl": "Article", "clear": true, "treat": true}),
        )
        .await,
    );
    assert_eq!(t.len(), 2);
    for row in &t {
        assert_eq!(row["data"]["revu"], true);
        assert_eq!(
            row["taille"], row["data"]["taille"],
            "T's row is computed from the treated data"
        );
    }
    assert!(
        t.iter()
            .any(|row| row["data"]["titre"] == SECRET.to_uppercase())
    );
    assert!(t.iter().any(|row| row["taille"] == 10));
    assert_eq!(
        r.ok("exportOrg", json!({"org": "a"})).await,
        before,
        "exporting changes nothing in A"
    );

    // Remove A's documents of the class.
    let purged = r
        .ok("purgeAllDocs", json!({"org": "a", "cl": "Article"}))
        .await;
    assert!(purged.to_string().contains('2'), "{purged}");
    assert_eq!(
        rows(
            &r.ok(
                "exportOrg",
                json!({"org": "a", "cl": "Article", "clear": true})
            )
            .await
        )
        .len(),
        0
    );

    // Import T into A.
    let imported = r
        .ok("importOrg", json!({"org": "a", "rows": t.clone()}))
        .await;
    assert_eq!(imported["imported"], 2);
    let after = rows(
        &r.ok(
            "exportOrg",
            json!({"org": "a", "cl": "Article", "clear": true}),
        )
        .await,
    );
    let contents = |rows: &[Value]| {
        rows.iter()
            .map(|row| content(&row["data"]))
            .collect::<Vec<_>>()
    };
    assert_eq!(contents(&after), contents(&t));
    let hugo = r
        .ok(
            "listDocsSk",
            json!({"org": "a", "cl": "Article", "ik": 0, "val": "Hugo", "v": 0}),
        )
        .await;
    assert_eq!(
        hugo["rows"].as_array().map(Vec::len),
        Some(2),
        "collections hold them again"
    );
    let big = r
        .ok(
            "listDocsIdx",
            json!({"org": "a", "cl": "Article", "ix": "taille", "comp": ">=", "val": 10, "v": 0}),
        )
        .await;
    assert_eq!(
        big["rows"].as_array().map(Vec::len),
        Some(1),
        "indexes hold the treated values"
    );
    let notes = r.ok("exportOrg", json!({"org": "a", "cl": "Note"})).await;
    assert_eq!(
        notes["docs"][0]["texte"], SECRET,
        "another class is untouched"
    );
    r.stop().await;
}

#[tokio::test]
async fn treat_names_a_class_with_a_treatment_and_a_refusal_imports_nothing() {
    let r = start().await;
    some_documents(&r, "a").await;
    let (status, body) = r
        .admin_call(
            "exportOrg",
            json!({"org": "a", "cl": "Note", "treat": true}),
        )
        .await;
    assert_eq!(
        (status, body["error"]["code"].clone()),
        (StatusCode::BAD_REQUEST, json!("BADREQUEST"))
    );
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap_or("")
            .contains("Note"),
        "{body}"
    );

    let whole = r.ok("exportOrg", json!({"org": "a", "treat": true})).await;
    let docs = whole["docs"].as_array().expect("docs");
    assert_eq!(
        docs.len(),
        3,
        "a class without treatment is exported as it is"
    );
    assert!(
        docs.iter()
            .any(|d| d["clazz"] == "Note" && d["texte"] == SECRET)
    );
    assert!(
        docs.iter()
            .filter(|d| d["clazz"] == "Article")
            .all(|d| d["revu"] == true)
    );

    let docs = json!([
        {"clazz": "Article", "p1": "x1", "titre": "fine"},
        {"clazz": "Article", "p1": "x2", "titre": "refuse"}
    ]);
    let (status, body) = r
        .admin_call(
            "importOrg",
            json!({"org": "c", "docs": docs, "treat": true}),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    let message = body["error"]["message"].as_str().unwrap_or("");
    assert!(
        message.contains("document 1") && message.contains("stays"),
        "{message}"
    );
    assert_eq!(
        r.ok("exportOrg", json!({"org": "c"})).await["docs"],
        json!([]),
        "nothing was imported"
    );
    let imported = r
        .ok(
            "importOrg",
            json!({"org": "c", "docs": [docs[0].clone()], "treat": true}),
        )
        .await;
    assert_eq!(imported["imported"], 1);
    let c = r.ok("exportOrg", json!({"org": "c"})).await;
    assert_eq!(c["docs"][0]["titre"], "FINE");
    r.stop().await;
}

#[tokio::test]
async fn an_import_takes_docs_or_rows_with_data() {
    let r = start().await;
    for (body, field) in [
        (json!({"org": "c"}), "docs or rows"),
        (json!({"org": "c", "docs": [], "rows": []}), "docs or rows"),
        (json!({"org": "c", "rows": [{"pk": "x"}]}), "rows[0].data"),
    ] {
        let (status, answer) = r.admin_call("importOrg", body).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
        assert!(
            answer["error"]["message"]
                .as_str()
                .unwrap_or("")
                .contains(field),
            "{answer}"
        );
    }
    r.stop().await;
}

#[tokio::test]
async fn only_the_administrator_gets_the_audit_dump_and_it_appends_nothing() {
    let r = start().await;
    some_documents(&r, "a").await;
    let token = r.token("a").await;
    for body in [
        json!({"org": "a", "clear": true}),
        json!({"org": "a", "cl": "Article", "clear": true, "treat": true}),
    ] {
        let (status, answer) = r.call_as(&token, "exportOrg", body).await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{answer}");
        assert!(!answer.to_string().contains(SECRET));
    }
    let head = r.state.store.head_position().await.expect("head");
    let dump = r
        .ok(
            "exportOrg",
            json!({"org": "a", "clear": true, "treat": true}),
        )
        .await;
    assert_eq!(rows(&dump).len(), 3);
    assert_eq!(
        r.state.store.head_position().await.expect("head"),
        head,
        "an export is a read: nothing appended"
    );
    r.stop().await;
}
