//! Every route of every context, tried with each kind of principal (none, a wrong credential,
//! another user, the user, the administrator) against the table of who may call it (design
//! invariant 11, issue #25). One test per context, each on its own app; the table and the
//! fixtures are in `src/authorization/`, the model in `docs/authorization/README.md`.

use palimpsest_e2e::authorization::contexts::{atlas, docs, pads, records, resources, v1};
use palimpsest_e2e::authorization::walk::assert_held;
use palimpsest_e2e::authorization::{Context, walk};
use palimpsest_testkit::TestApp;

/// Walks the context `make` builds on `app`, stops the app, and fails with every failure.
async fn held(app: TestApp, make: impl AsyncFnOnce(&TestApp) -> Context) {
    let context = make(&app).await;
    let failures = walk(&app, &context).await;
    let name = context.name;
    app.stop().await;
    assert_held(name, &failures);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn authorization_pads() {
    held(TestApp::start().await, pads::context).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn authorization_records() {
    held(TestApp::start().await, records::context).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn authorization_v1() {
    held(TestApp::start().await, v1::context).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn authorization_docs() {
    held(TestApp::start().await, docs::context).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn authorization_atlas() {
    held(TestApp::start().await, atlas::context).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn authorization_resources() {
    let app = TestApp::builder()
        .data_file(resources::KEYS_FILE, resources::keys())
        .start()
        .await;
    held(app, resources::context).await;
}
