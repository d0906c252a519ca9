//! The flags that configure the contexts' stores and keys reach `ContextSettings` (what each
//! context is given instead of reading the environment itself): docs' attachment folder and
//! inline size, resources' content folder (inside the data folder by default) and inline size,
//! records' previous site keys; the secrets (pads' API key, docs' password key, records' site
//! key) and, for the platform, the admin token and the log's limits.

use clap::Parser;
use palimpsest::cli::{Cli, Command, context_settings};
use palimpsest::contexts::ContextSettings;
use std::path::PathBuf;

fn settings(args: &[&str]) -> ContextSettings {
    let cli = Cli::try_parse_from(args).expect("parse");
    let Command::Serve(http) = cli.command else {
        panic!("serve parsed as {:?}", cli.command);
    };
    context_settings(&cli.settings, &http).expect("settings")
}

#[test]
fn the_store_flags_reach_the_contexts() {
    let given = settings(&[
        "palimpsest",
        "--data-dir",
        "/srv/data",
        "serve",
        "--docs-attachments-dir",
        "/srv/attachments",
        "--docs-inline-max",
        "1024",
        "--resources-content-dir",
        "/srv/content",
        "--resources-inline-max",
        "2048",
        "--records-old-keys",
        " aa, ,bb,",
    ]);
    assert_eq!(
        given.docs.attachments_dir,
        Some(PathBuf::from("/srv/attachments"))
    );
    assert_eq!(given.docs.inline_max, 1024);
    assert_eq!(given.resources_content.dir, PathBuf::from("/srv/content"));
    assert_eq!(given.resources_content.inline_max, 2048);
    assert_eq!(given.records.old_keys, ["aa", "bb"]);
}

#[test]
fn without_flags_the_stores_are_inside_the_data_folder() {
    let unset = |name: &str| std::env::var_os(name).is_none();
    if ![
        "PALIMPSEST_RESOURCES_CONTENT_DIR",
        "PALIMPSEST_DOCS_ATTACHMENTS_DIR",
    ]
    .into_iter()
    .all(unset)
    {
        return;
    }
    let given = settings(&["palimpsest", "--data-dir", "/srv/data", "serve"]);
    assert_eq!(
        given.resources_content.dir,
        PathBuf::from("/srv/data/resources-content")
    );
    assert_eq!(given.docs.attachments_dir, None);
    assert_eq!(
        given.docs.attachment_store(&PathBuf::from("/srv/data")).dir,
        PathBuf::from("/srv/data/docs-attachments")
    );
}

#[test]
fn the_secrets_and_the_log_limits_reach_the_contexts_and_the_platform() {
    let cli = Cli::try_parse_from([
        "palimpsest",
        "--admin-token",
        "t0",
        "--max-event-bytes",
        "4096",
        "--max-append-bytes",
        "8192",
        "serve",
        "--pads-apikey",
        "k1",
        "--docs-password-key",
        "k2",
        "--records-key",
        "k3",
    ])
    .expect("parse");
    let platform = cli.settings.platform();
    assert_eq!(platform.admin_token.as_deref(), Some("t0"));
    assert_eq!(platform.limits.max_event_bytes, 4096);
    assert_eq!(platform.limits.max_append_bytes, 8192);
    let Command::Serve(http) = cli.command else {
        panic!("serve parsed as {:?}", cli.command);
    };
    let given = context_settings(&cli.settings, &http).expect("settings");
    assert_eq!(given.pads.apikey.as_deref(), Some("k1"));
    assert_eq!(given.docs.password_key.as_deref(), Some("k2"));
    assert_eq!(given.records.site_key_hex.as_deref(), Some("k3"));
}
