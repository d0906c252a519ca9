//! Hostile input never stops the pipeline (issue 8, defects 1-3): whatever the relay or a read
//! model could not carry is refused over HTTP before the append (Etherpad code 1, atlas 4xx),
//! nothing is appended, and later writes still reach NATS and the read models. A projector that
//! still meets an event it cannot apply stops loudly: readiness names it, writes fail fast.

use palimpsest_events::{ExpectedVersion, NewEvent, StreamName};
use palimpsest_log::AppendRequest;
use palimpsest_log::relay::STREAM_NAME;
use palimpsest_testkit::NatsServer;
use palimpsest_testkit::TestApp;
use serde_json::{Value, json};
use std::time::{Duration, Instant};

async fn head(app: &TestApp) -> i64 {
    app.state.store.head_position().await.expect("head")
}

fn api_key(app: &TestApp) -> String {
    std::fs::read_to_string(app.state.data_dir.join("APIKEY.txt"))
        .expect("APIKEY.txt")
        .trim()
        .to_owned()
}

/// An Etherpad API call by POST with a form body; returns (status, envelope).
async fn etherpad(app: &TestApp, function: &str, params: &[(&str, &str)]) -> (u16, Value) {
    let key = api_key(app);
    let mut form: Vec<(&str, &str)> = vec![("apikey", &key)];
    form.extend_from_slice(params);
    let res = reqwest::Client::new()
        .post(app.url(&format!("/pads/api/1.3.0/{function}")))
        .form(&form)
        .send()
        .await
        .expect("request");
    (res.status().as_u16(), res.json().await.expect("json"))
}

async fn published_up_to(nats_url: &str) -> i64 {
    let client = async_nats::connect(nats_url).await.expect("nats");
    let js = async_nats::jetstream::new(client);
    match js.get_stream(STREAM_NAME).await {
        Ok(mut s) => s.info().await.map_or(0, |i| i.state.last_sequence as i64),
        Err(_) => 0,
    }
}

async fn wait_published(nats_url: &str, position: i64) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while published_up_to(nats_url).await < position {
        assert!(
            Instant::now() < deadline,
            "the relay did not publish up to {position}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn a_line_break_in_an_etherpad_mapper_is_refused_and_the_relay_goes_on() {
    let nats = NatsServer::start().await;
    let app = TestApp::start_with_nats(&nats.url()).await;
    let before = head(&app).await;
    for function in ["createGroupIfNotExistsFor", "createAuthorIfNotExistsFor"] {
        let param = if function.contains("Group") {
            "groupMapper"
        } else {
            "authorMapper"
        };
        let (status, body) = etherpad(&app, function, &[(param, "\n")]).await;
        assert_eq!((status, body["code"].clone()), (200, json!(1)), "{body}");
        assert!(
            body["message"]
                .as_str()
                .is_some_and(|m| m.contains("control characters")),
            "{body}"
        );
    }
    assert_eq!(head(&app).await, before, "nothing was appended");
    let (_, body) = etherpad(&app, "createGroupIfNotExistsFor", &[("groupMapper", "ok")]).await;
    assert_eq!(body["code"], json!(0), "{body}");
    let after = head(&app).await;
    assert!(after > before);
    wait_published(&nats.url(), after).await;
    app.stop().await;
}

#[tokio::test]
async fn a_nul_in_an_atlas_title_is_refused_and_the_projector_goes_on() {
    let app = TestApp::start().await;
    let http = reqwest::Client::new();
    let before = head(&app).await;
    let res = http
        .post(app.url("/atlas/sections"))
        .bearer_auth(app.admin_token())
        .json(&json!({"title": "a\u{0}b"}))
        .send()
        .await
        .expect("post");
    let status = res.status().as_u16();
    let body: Value = res.json().await.expect("json");
    assert_eq!(status, 400, "{body}");
    assert!(
        body["error"].as_str().is_some_and(|m| m.contains("U+0000")),
        "{body}"
    );
    assert_eq!(head(&app).await, before, "nothing was appended");
    let started = Instant::now();
    let res = http
        .post(app.url("/atlas/sections"))
        .bearer_auth(app.admin_token())
        .json(&json!({"title": "fine"}))
        .send()
        .await
        .expect("post");
    assert_eq!(res.status().as_u16(), 201);
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "the next write did not wait for a wedged projector"
    );
    app.stop().await;
}

#[tokio::test]
async fn a_two_megabyte_set_text_is_refused_and_the_relay_goes_on() {
    let nats = NatsServer::start().await;
    let app = TestApp::start_with_nats(&nats.url()).await;
    let (_, body) = etherpad(&app, "createPad", &[("padID", "big")]).await;
    assert_eq!(body["code"], json!(0), "{body}");
    let before = head(&app).await;
    // Under the HTTP body limit (2 MiB), over the log's event limit (900 KiB): the log refuses it.
    let text = "x".repeat(1_500_000);
    let (status, body) = etherpad(&app, "setText", &[("padID", "big"), ("text", &text)]).await;
    // Too large is a 413 in every context (Etherpad's envelope, code 1), as the log refused it.
    assert_eq!((status, body["code"].clone()), (413, json!(1)), "{body}");
    assert!(
        body["message"]
            .as_str()
            .is_some_and(|m| m.contains("at most")),
        "{body}"
    );
    assert_eq!(head(&app).await, before, "nothing was appended");
    let (_, body) = etherpad(&app, "setText", &[("padID", "big"), ("text", "small")]).await;
    assert_eq!(body["code"], json!(0), "{body}");
    let after = head(&app).await;
    wait_published(&nats.url(), after).await;
    app.stop().await;
}

#[tokio::test]
async fn a_projector_stopped_on_an_event_is_named_by_readiness_and_writes_fail_fast() {
    let app = TestApp::start().await;
    let http = reqwest::Client::new();
    // An event the atlas projector cannot decode (written beneath the API, as a buggy or older
    // binary could have written it).
    let poison_stream = StreamName::new("atlas", "section", "poison").expect("stream");
    app.allow_invalid_events(&poison_stream);
    let poison = app
        .state
        .store
        .append(AppendRequest::new().stream(
            poison_stream,
            ExpectedVersion::NoStream,
            vec![NewEvent::new(
                "SectionCreated",
                1,
                json!({"nonsense": true}),
            )],
        ))
        .await
        .expect("append")
        .last_position;
    let deadline = Instant::now() + Duration::from_secs(10);
    let ready = loop {
        let res = http.get(app.url("/readyz")).send().await.expect("readyz");
        let status = res.status().as_u16();
        let body: Value = res.json().await.expect("json");
        if status == 503 {
            break body;
        }
        assert!(Instant::now() < deadline, "readyz stayed ready: {body}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let stalled = &ready["stalled_projections"][0];
    assert_eq!(stalled["projection"], json!("atlas"), "{ready}");
    assert_eq!(stalled["position"], json!(poison), "{ready}");
    assert_eq!(stalled["stream"], json!("atlas/section/poison"), "{ready}");
    assert!(stalled["error"].as_str().is_some_and(|e| !e.is_empty()));
    let metrics = http
        .get(app.url("/metrics"))
        .send()
        .await
        .expect("metrics")
        .text()
        .await
        .expect("text");
    assert!(
        metrics.contains("palimpsest_projection_stalls_total{projection=\"atlas\"}"),
        "{metrics}"
    );

    // A write that waits for the atlas read model is answered at once, 503, saying why.
    let started = Instant::now();
    let res = http
        .post(app.url("/atlas/sections"))
        .bearer_auth(app.admin_token())
        .json(&json!({"title": "after the poison"}))
        .send()
        .await
        .expect("post");
    let status = res.status().as_u16();
    let body: Value = res.json().await.expect("json");
    assert_eq!(status, 503, "{body}");
    assert!(
        body.to_string().contains("read model atlas is stopped"),
        "{body}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "waited {:?}",
        started.elapsed()
    );
    app.stop().await;
}
