//! The audit API answers what it is asked: `/v1/events` filters (context, stream, type,
//! correlation id, time range, combined with AND) and refuses a parameter it does not know,
//! `/v1/streams?prefix=` lists streams with their version and last time, paged, and `at=`
//! reads a stream as it was at a time.

use palimpsest_events::{ExpectedVersion, Metadata, NewEvent, RecordedEvent, StreamName};
use palimpsest_log::AppendRequest;
use palimpsest_testkit::TestApp;
use serde_json::{Value, json};
use uuid::Uuid;

/// Appends `types` to `context/thing/key` in one command under `correlation`.
async fn append(
    app: &TestApp,
    stream: &str,
    types: &[&str],
    correlation: Uuid,
) -> Vec<RecordedEvent> {
    let events = types
        .iter()
        .map(|t| NewEvent::new(*t, 1, json!({ "t": t })))
        .collect();
    let metadata = Metadata {
        correlation_id: Some(correlation),
        ..Metadata::default()
    };
    app.state
        .store
        .append(
            AppendRequest::new()
                .stream(
                    StreamName::parse(stream).expect("stream"),
                    ExpectedVersion::Any,
                    events,
                )
                .metadata(metadata),
        )
        .await
        .expect("append")
        .events
        .to_vec()
}

async fn admin_get(app: &TestApp, path: &str) -> (u16, Value) {
    let answer = reqwest::Client::new()
        .get(app.url(path))
        .bearer_auth(app.admin_token())
        .send()
        .await
        .expect("get");
    let status = answer.status().as_u16();
    (status, answer.json().await.expect("json"))
}

/// The positions of a `/v1/events` page.
async fn positions(app: &TestApp, query: &str) -> Vec<i64> {
    let (status, page) = admin_get(app, &format!("/v1/events?{query}")).await;
    assert_eq!(status, 200, "{query}: {page}");
    page["events"]
        .as_array()
        .expect("events")
        .iter()
        .map(|e| e["position"].as_i64().expect("position"))
        .collect()
}

/// A time as a query value (RFC 3339's `+` would read as a space).
fn encode(text: &str) -> String {
    text.replace('+', "%2B")
}

#[tokio::test]
async fn each_filter_narrows_the_log_and_they_combine_with_and() {
    let app = TestApp::start().await;
    let (one, two) = (Uuid::now_v7(), Uuid::now_v7());
    let a = append(&app, "alpha/thing/a", &["Made", "Changed"], one).await;
    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    let b = append(&app, "alpha/thing/b", &["Made"], two).await;
    let c = append(&app, "beta/thing/a", &["Made", "Changed"], two).await;
    let pos = |events: &[RecordedEvent], i: usize| events[i].position;

    assert_eq!(positions(&app, "").await.len(), 5, "no filter: everything");
    assert_eq!(
        positions(&app, "context=alpha").await,
        vec![pos(&a, 0), pos(&a, 1), pos(&b, 0)]
    );
    assert_eq!(
        positions(&app, "stream=alpha/thing/a").await,
        vec![pos(&a, 0), pos(&a, 1)]
    );
    assert_eq!(
        positions(&app, "type=Changed").await,
        vec![pos(&a, 1), pos(&c, 1)]
    );
    assert_eq!(
        positions(&app, &format!("correlation_id={two}")).await,
        vec![pos(&b, 0), pos(&c, 0), pos(&c, 1)]
    );
    let since = encode(&b[0].recorded_at.to_rfc3339());
    let until = encode(&a[1].recorded_at.to_rfc3339());
    assert_eq!(
        positions(&app, &format!("since={since}")).await,
        vec![pos(&b, 0), pos(&c, 0), pos(&c, 1)],
        "since is inclusive"
    );
    assert_eq!(
        positions(&app, &format!("until={until}")).await,
        vec![pos(&a, 0), pos(&a, 1)],
        "until is inclusive"
    );
    assert_eq!(
        positions(
            &app,
            &format!("context=beta&type=Made&correlation_id={two}")
        )
        .await,
        vec![pos(&c, 0)],
        "filters combine with AND"
    );
    assert_eq!(
        positions(
            &app,
            &format!("context=alpha&correlation_id={two}&type=Changed")
        )
        .await,
        Vec::<i64>::new()
    );
    // Paging keeps the filter: one matching event a page, the cursor from the last one.
    let (_, first) = admin_get(&app, "/v1/events?type=Made&limit=1").await;
    assert_eq!(first["next_after"], json!(pos(&a, 0)));
    let (_, second) = admin_get(
        &app,
        &format!("/v1/events?type=Made&limit=2&after={}", pos(&a, 0)),
    )
    .await;
    let got: Vec<i64> = second["events"]
        .as_array()
        .expect("events")
        .iter()
        .map(|e| e["position"].as_i64().unwrap_or(0))
        .collect();
    assert_eq!(got, vec![pos(&b, 0), pos(&c, 0)]);
    assert_eq!(second["next_after"], json!(pos(&c, 0)));
    app.stop().await;
}

#[tokio::test]
async fn an_unknown_or_malformed_parameter_is_a_400_naming_it() {
    let app = TestApp::start().await;
    append(&app, "alpha/thing/a", &["Made"], Uuid::now_v7()).await;
    for (path, named) in [
        ("/v1/events?colour=red", "colour"),
        ("/v1/events?context=alpha&stream_id=x", "stream_id"),
        ("/v1/events?correlation_id=nope", "correlation_id"),
        ("/v1/events?since=yesterday", "since"),
        ("/v1/events?stream=alpha", "stream"),
        ("/v1/streams/alpha/thing/a?as_of=2026-01-01", "as_of"),
        ("/v1/streams/alpha/thing/a?at=soon", "at"),
        ("/v1/streams?pattern=alpha", "pattern"),
        ("/v1/head?x=1", "x"),
        ("/v1/audit/verify?steam=alpha/thing/a", "steam"),
    ] {
        let (status, body) = admin_get(&app, path).await;
        assert_eq!(status, 400, "{path}: {body}");
        let message = body["error"].as_str().unwrap_or_default();
        assert!(message.contains(named), "{path}: {message} names {named}");
    }
    app.stop().await;
}

#[tokio::test]
async fn streams_are_listed_by_prefix_with_version_and_last_time_paged() {
    let app = TestApp::start().await;
    let id = Uuid::now_v7();
    let a = append(&app, "alpha/thing/a", &["Made", "Changed", "Changed"], id).await;
    append(&app, "alpha/thing/b", &["Made"], id).await;
    append(&app, "alpha/other/c", &["Made"], id).await;
    append(&app, "beta/thing/a", &["Made"], id).await;
    let names = |page: &Value| -> Vec<String> {
        page["streams"]
            .as_array()
            .expect("streams")
            .iter()
            .map(|s| s["stream"].as_str().unwrap_or_default().to_owned())
            .collect()
    };
    let (status, all) = admin_get(&app, "/v1/streams").await;
    assert_eq!(status, 200, "{all}");
    assert_eq!(names(&all).len(), 4);
    let (_, alpha) = admin_get(&app, "/v1/streams?prefix=alpha/thing/").await;
    assert_eq!(names(&alpha), vec!["alpha/thing/a", "alpha/thing/b"]);
    assert_eq!(alpha["streams"][0]["version"], json!(3));
    assert_eq!(
        alpha["streams"][0]["last_recorded_at"],
        json!(a[2].recorded_at),
        "the time of its last event"
    );
    let (_, page1) = admin_get(&app, "/v1/streams?prefix=alpha&limit=2").await;
    assert_eq!(names(&page1), vec!["alpha/other/c", "alpha/thing/a"]);
    assert_eq!(page1["next_after"], json!("alpha/thing/a"));
    let (_, page2) = admin_get(&app, "/v1/streams?prefix=alpha&limit=2&after=alpha/thing/a").await;
    assert_eq!(names(&page2), vec!["alpha/thing/b"]);
    let (_, none) = admin_get(&app, "/v1/streams?prefix=gamma").await;
    assert_eq!(names(&none), Vec::<String>::new());
    app.stop().await;
}

#[tokio::test]
async fn at_reads_a_stream_as_it_was_at_that_time() {
    let app = TestApp::start().await;
    let id = Uuid::now_v7();
    let first = append(&app, "alpha/thing/a", &["Made", "Changed"], id).await;
    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    append(&app, "alpha/thing/a", &["Changed"], id).await;
    let versions = |page: &Value| -> Vec<i64> {
        page["events"]
            .as_array()
            .expect("events")
            .iter()
            .map(|e| e["version"].as_i64().unwrap_or(0))
            .collect()
    };
    let (_, now) = admin_get(&app, "/v1/streams/alpha/thing/a").await;
    assert_eq!(versions(&now), vec![1, 2, 3]);
    let at = encode(&first[1].recorded_at.to_rfc3339());
    let (status, then) = admin_get(&app, &format!("/v1/streams/alpha/thing/a?at={at}")).await;
    assert_eq!(status, 200, "{then}");
    assert_eq!(
        versions(&then),
        vec![1, 2],
        "only what was recorded by then"
    );
    let (status, before) = admin_get(&app, "/v1/streams/alpha/thing/a?at=2000-01-01T00:00").await;
    assert_eq!(status, 404, "no event by then: {before}");
    app.stop().await;
}
