//! Content kept outside the log is audited too: `palimpsest audit verify` checks every stored
//! file of resources' content folder (and docs' attachment folder) against the digest its
//! event recorded, and names a file with one byte changed.

use palimpsest::cli::audit::{AuditCommand, run};
use palimpsest::config::Settings;
use palimpsest_testkit::TestApp;

async fn verify(app: &TestApp) -> anyhow::Result<()> {
    let settings = Settings::for_database(app.database_url(), app.data_dir());
    run(
        &settings,
        AuditCommand::Verify {
            stream: None,
            docs_attachments_dir: None,
            resources_content_dir: Some(app.resources_content_dir()),
            since: None,
            key: None,
        },
    )
    .await
}

#[tokio::test]
async fn a_byte_changed_in_a_resources_content_file_fails_audit_verify_naming_it() {
    let app = TestApp::builder()
        .data_file("resources-keys.json", r#"{"ann-key": {"user_id": 10}}"#)
        .resources_inline_max(0)
        .start()
        .await;
    let res = reqwest::Client::new()
        .put(app.url("/resources/@api/deki/pages/1/files/a.txt"))
        .bearer_auth("ann-key")
        .header("content-type", "text/plain")
        .body("stored outside the log")
        .send()
        .await
        .expect("upload");
    assert!(res.status().is_success(), "{}", res.status());
    verify(&app).await.expect("an untouched store verifies");
    let stored: Vec<_> = walk(&app.resources_content_dir());
    assert_eq!(stored.len(), 1, "{stored:?}");
    let mut bytes = std::fs::read(&stored[0]).expect("read");
    bytes[0] ^= 1;
    std::fs::write(&stored[0], bytes).expect("tamper");
    let failed = verify(&app).await.expect_err("a changed byte is found");
    let name = stored[0]
        .file_name()
        .and_then(|n| n.to_str())
        .expect("name");
    assert!(failed.to_string().contains(name), "{failed}");
    app.stop().await;
}

/// Every file below `dir`, two levels deep (`<key[0..2]>/<key>`).
fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    for prefix in std::fs::read_dir(dir).expect("content folder") {
        let prefix = prefix.expect("entry").path();
        for file in std::fs::read_dir(prefix).expect("prefix folder") {
            files.push(file.expect("entry").path());
        }
    }
    files
}
