//! `palimpsest audit export` and `audit check` (decision 0024): a stream exported over HTTP
//! after real writes checks offline, and one byte changed in an event's payload, in a proof,
//! in the head or in the key makes the check fail naming the event (position and version).

use palimpsest::cli::audit::{AuditCommand, run};
use palimpsest::cli::bundle::{CheckArgs, ExportArgs};
use palimpsest::config::Settings;
use palimpsest_e2e::workload;
use palimpsest_testkit::TestApp;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

// Writes go through a real route as the admin.
use workload::post_as_admin as post;

/// Two sections written in turn (so their positions interleave), each created, then locked
/// and unlocked twice: five events a stream. Gives the first section's stream.
async fn write_sections(app: &TestApp) -> String {
    let a = post(app, "/atlas/sections", json!({"title": "audit-title-xyz"})).await;
    let b = post(app, "/atlas/sections", json!({"title": "other"})).await;
    let (a, b) = (a["id"].as_str().expect("id"), b["id"].as_str().expect("id"));
    for _ in 0..2 {
        for step in ["lock", "unlock"] {
            for id in [a, b] {
                post(app, &format!("/atlas/sections/{id}/{step}"), json!({})).await;
            }
        }
    }
    format!("atlas/section/{a}")
}

fn settings(app: &TestApp) -> Settings {
    Settings::for_database(app.database_url(), app.data_dir())
}

async fn export(app: &TestApp, stream: &str, out: &Path, token: Option<String>) {
    let args = ExportArgs {
        stream: stream.into(),
        out: out.to_path_buf(),
        url: app.url(""),
        token,
    };
    run(&settings(app), AuditCommand::Export(args))
        .await
        .expect("export");
}

/// `audit check FILE [--key HEX]`, the error's whole text on failure.
async fn check(app: &TestApp, file: &Path, key: Option<&str>) -> Result<(), String> {
    let args = CheckArgs {
        file: file.to_path_buf(),
        key: key.map(str::to_owned),
    };
    run(&settings(app), AuditCommand::Check(args))
        .await
        .map_err(|e| format!("{e:#}"))
}

fn read(file: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(file).expect("read")).expect("json")
}

/// A copy of the bundle beside it, changed by `change`.
fn altered(file: &Path, name: &str, change: impl FnOnce(&mut Value)) -> PathBuf {
    let mut bundle = read(file);
    change(&mut bundle);
    let out = file.with_file_name(name);
    std::fs::write(&out, bundle.to_string()).expect("write");
    out
}

/// One hex digit of `text` changed (the first): a single byte of the file.
fn flip(text: &str) -> String {
    let mut chars: Vec<char> = text.chars().collect();
    chars[0] = if chars[0] == '0' { '1' } else { '0' };
    chars.into_iter().collect()
}

/// `position P, version V` of the bundle's `i`th event, as the check names it.
fn named(bundle: &Value, i: usize) -> String {
    let event = &bundle["events"][i]["event"];
    format!(
        "position {}, version {}",
        event["position"], event["version"]
    )
}

#[tokio::test]
async fn an_exported_stream_checks_offline_and_any_altered_byte_names_the_event() {
    let app = TestApp::start().await;
    let stream = write_sections(&app).await;
    let file = app.data_dir().join("bundle.json");
    // No --token: the admin token is read from <data-dir>/admin-token.
    export(&app, &stream, &file, None).await;
    let bundle = read(&file);
    assert_eq!(bundle["format"], "palimpsest-audit-bundle-v1");
    assert_eq!(bundle["stream"], stream.as_str());
    let events = bundle["events"].as_array().expect("events");
    assert_eq!(events.len(), 5, "{bundle}");
    let positions: Vec<u64> = events
        .iter()
        .map(|e| e["event"]["position"].as_u64().expect("position"))
        .collect();
    assert!(
        positions.windows(2).all(|w| w[1] > w[0] + 1),
        "interleaved: {positions:?}"
    );
    let key = bundle["key"]["public_key"]
        .as_str()
        .expect("key")
        .to_owned();
    check(&app, &file, Some(&key))
        .await
        .expect("an untouched bundle checks");

    // One byte of the first event's payload (its title).
    let text = std::fs::read_to_string(&file).expect("read");
    assert_eq!(text.matches("audit-title-xyz").count(), 1);
    let payload = file.with_file_name("payload.json");
    std::fs::write(&payload, text.replace("audit-title-xyz", "audit-title-xyw")).expect("write");
    let failed = check(&app, &payload, None).await.expect_err("payload");
    assert!(failed.contains(&named(&bundle, 0)), "{failed}");
    assert!(failed.contains("does not give its hash"), "{failed}");

    // One byte of the fourth event's proof.
    let proof = altered(&file, "proof.json", |b| {
        let path = &mut b["events"][3]["proof"]["audit_path"][0];
        *path = json!(flip(path.as_str().expect("audit path")));
    });
    let failed = check(&app, &proof, None).await.expect_err("proof");
    assert!(failed.contains(&named(&bundle, 3)), "{failed}");
    assert!(failed.contains("not proven"), "{failed}");

    // One byte of the head's root: its signature no longer holds, no event is proven.
    let head = altered(&file, "head.json", |b| {
        let root = &mut b["head"]["root_hash"];
        *root = json!(flip(root.as_str().expect("root")));
    });
    let failed = check(&app, &head, None).await.expect_err("head");
    assert!(failed.contains(&named(&bundle, 0)), "{failed}");
    assert!(failed.contains("not signed"), "{failed}");

    // An event left out of the bundle: the chain has a gap at the next one.
    let gap = altered(&file, "gap.json", |b| {
        b["events"].as_array_mut().expect("events").remove(2);
    });
    let failed = check(&app, &gap, None).await.expect_err("gap");
    assert!(failed.contains(&named(&bundle, 3)), "{failed}");

    // The bundle's key is not the one the auditor knows.
    let failed = check(&app, &file, Some(&flip(&key)))
        .await
        .expect_err("another key");
    assert!(failed.contains("is not the one given"), "{failed}");
    app.stop().await;
}

#[tokio::test]
async fn a_head_and_key_swapped_for_another_logs_do_not_check() {
    let one = TestApp::start().await;
    let two = TestApp::start().await;
    let stream = write_sections(&one).await;
    write_sections(&two).await;
    let file = one.data_dir().join("bundle.json");
    export(&one, &stream, &file, Some(one.admin_token())).await;
    let other = two.data_dir().join("other.json");
    let other_stream = write_sections(&two).await;
    export(&two, &other_stream, &other, Some(two.admin_token())).await;
    let theirs = read(&other);
    let swapped = altered(&file, "swapped.json", |b| {
        b["head"] = theirs["head"].clone();
        b["key"] = theirs["key"].clone();
    });
    let failed = check(&one, &swapped, None).await.expect_err("swapped");
    assert!(failed.contains(&named(&read(&file), 0)), "{failed}");
    one.stop().await;
    two.stop().await;
}

/// A write through a real route as the admin ([`workload::write`]); gives the answer's JSON.
async fn put(app: &TestApp, path: &str, body: Value) -> Value {
    let admin = app.admin_token();
    workload::write(
        app,
        reqwest::Method::PUT,
        path,
        workload::json_body(body),
        Some(&admin),
    )
    .await
}

/// A docs document whose id needs escaping in its stream key (`%`, a space) and in the URL:
/// its stream exports and checks.
#[tokio::test]
async fn a_docs_stream_with_an_escaped_key_exports_and_checks() {
    let app = TestApp::start().await;
    put(&app, "/docs/db", Value::Null).await;
    let created = put(&app, "/docs/db/a%25b%20c", json!({"n": 1.5})).await;
    let rev = created["rev"].as_str().expect("rev");
    put(&app, "/docs/db/a%25b%20c", json!({"_rev": rev, "n": 2})).await;
    let listed: Value = reqwest::Client::new()
        .get(app.url("/v1/streams?prefix=docs/document/"))
        .bearer_auth(app.admin_token())
        .send()
        .await
        .expect("streams")
        .json()
        .await
        .expect("json");
    let stream = listed["streams"][0]["stream"]
        .as_str()
        .unwrap_or_else(|| panic!("{listed}"))
        .to_owned();
    assert!(stream.ends_with("/a%25b c"), "{stream}");
    let file = app.data_dir().join("docs.json");
    export(&app, &stream, &file, Some(app.admin_token())).await;
    assert_eq!(read(&file)["events"].as_array().map(Vec::len), Some(2));
    check(&app, &file, None).await.expect("checks");
    app.stop().await;
}
