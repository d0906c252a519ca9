//! Every route of every context, tried with each kind of principal (none, a wrong credential,
//! another user, the user, the administrator) against the table of who may call it (design
//! invariant 11, issue #25); then every event the walk appended names its caller (invariant 12,
//! issue #27: the log read back whole, an event without an actor is a failure). One test per
//! context, each on its own app; the table and the fixtures are in `src/authorization/`, the
//! model in `docs/authorization/README.md`.

use palimpsest_e2e::authorization::contexts::{atlas, docs, pads, records, resources, v1};
use palimpsest_e2e::authorization::walk::assert_held;
use palimpsest_e2e::authorization::{Context, attribution, walk};
use palimpsest_testkit::TestApp;

/// Walks the context `make` builds on `app`, then reads back the whole log: every event the
/// fixtures and the walk appended must name the principal that caused it, and the walk must
/// have written as at least `writers` principals. Stops the app, and fails with every failure.
async fn held(app: TestApp, writers: usize, make: impl AsyncFnOnce(&TestApp) -> Context) {
    let context = make(&app).await;
    let mut failures = walk(&app, &context).await;
    match attribution::log(&app).await {
        Ok(events) => {
            failures.extend(attribution::unattributed(&events));
            let actors = attribution::actors(&events);
            if actors.len() < writers {
                failures.push(format!(
                    "the log names {actors:?}: fewer than the {writers} principals that wrote"
                ));
            }
        }
        Err(e) => failures.push(e),
    }
    let name = context.name;
    app.stop().await;
    assert_held(name, &failures);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn authorization_pads() {
    held(TestApp::start().await, 1, pads::context).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn authorization_records() {
    held(TestApp::start().await, 2, records::context).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn authorization_v1() {
    // A console page to serve (its assets are public; what it shows comes from `/v1`).
    let console = tempfile::tempdir().expect("temp dir");
    std::fs::write(
        console.path().join("index.html"),
        "<!doctype html><title>c</title>",
    )
    .expect("index.html");
    let app = TestApp::builder().console_dir(console.path()).start().await;
    held(app, 0, v1::context).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn authorization_docs() {
    held(TestApp::start().await, 2, docs::context).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn authorization_atlas() {
    held(TestApp::start().await, 2, atlas::context).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn authorization_resources() {
    let app = TestApp::builder()
        .data_file(resources::KEYS_FILE, resources::keys())
        .start()
        .await;
    held(app, 2, resources::context).await;
}
