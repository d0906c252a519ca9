//! DELTA reaches the records context from the binary's command line: `--records-delta-ms`
//! through the CLI's parsing, `PALIMPSEST_RECORDS_DELTA_MS` through the binary itself, and in
//! both a list answers the version the client stores next, `t - DELTA` (spec, "Imprécision de
//! la version d'une collection").

use clap::Parser;
use palimpsest::cli::{Cli, Command, context_settings};
use serde_json::{Value, json};
use std::process::Stdio;
use tokio::io::{AsyncBufReadExt, BufReader};

/// An hour: far from the 10 s default, so an answer made with the default cannot pass.
const DELTA: i64 = 3_600_000;

fn now_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

/// Declares `Article` on the server at `base` (`http://…`), then lists it: the answer's `v`
/// and the clock read just before and just after the list.
async fn listed_version(base: &str, admin: &str) -> (i64, i64, i64) {
    let http = reqwest::Client::new();
    let call = |function: &str, body: Value| {
        http.post(format!("{base}/records/api/{function}"))
            .bearer_auth(admin)
            .json(&body)
            .send()
    };
    let declared = call(
        "declareClass",
        json!({"clazz": "Article", "sync": true, "pk": ["p1"]}),
    )
    .await
    .expect("declareClass");
    assert!(
        declared.status().is_success(),
        "{:?}",
        declared.text().await
    );
    let before = now_ms();
    let listed: Value = call("listDocs", json!({"org": "demo", "cl": "Article", "v": 0}))
        .await
        .expect("listDocs")
        .json()
        .await
        .expect("json");
    let after = now_ms();
    let v = listed["result"]["v"]
        .as_i64()
        .unwrap_or_else(|| panic!("{listed}"));
    (before, v, after)
}

/// The list's time `t` lies between the clock readings around it, so `v = t - DELTA` does too,
/// shifted by DELTA.
fn assert_delta(before: i64, v: i64, after: i64) {
    assert!(
        before - DELTA <= v && v <= after - DELTA,
        "v = {v} should be t - {DELTA} with t in [{before}, {after}]"
    );
}

#[test]
fn the_flag_is_parsed_into_the_records_settings_and_a_negative_one_refused() {
    let cli = Cli::try_parse_from(["palimpsest", "serve", "--records-delta-ms", "3600000"])
        .expect("parse");
    let Command::Serve(http) = cli.command else {
        panic!("serve parsed as {:?}", cli.command);
    };
    let settings = context_settings(&cli.settings, &http).expect("settings");
    assert_eq!(settings.records.delta_ms, DELTA);
    assert!(Cli::try_parse_from(["palimpsest", "serve", "--records-delta-ms", "-5"]).is_err());
}

#[tokio::test]
async fn the_flag_changes_the_version_a_list_answers() {
    let cli =
        Cli::try_parse_from(["palimpsest", "run", "--records-delta-ms", "3600000"]).expect("parse");
    let Command::Run(http) = cli.command else {
        panic!("run parsed as {:?}", cli.command);
    };
    let settings = context_settings(&cli.settings, &http).expect("settings");
    let app = palimpsest_testkit::TestApp::builder()
        .records(settings.records)
        .start()
        .await;
    let base = app.url("");
    let (before, v, after) = listed_version(base.trim_end_matches('/'), &app.admin_token()).await;
    assert_delta(before, v, after);
    app.stop().await;
}

#[tokio::test]
async fn the_environment_variable_reaches_a_list_answer_of_the_binary() {
    let db = palimpsest_testkit::TestDb::create().await;
    let nats = palimpsest_testkit::NatsServer::start().await;
    let data = tempfile::tempdir().expect("temp dir");
    let admin = "records-delta-admin-token";
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_palimpsest"))
        .args(["run", "--contexts", "records", "--http", "127.0.0.1:0"])
        .env("DATABASE_URL", db.url())
        .env("NATS_URL", nats.url())
        .env("PALIMPSEST_DATA_DIR", data.path())
        .env("PALIMPSEST_ADMIN_TOKEN", admin)
        .env("PALIMPSEST_RECORDS_DELTA_MS", DELTA.to_string())
        .env_remove("PALIMPSEST_RECORDS_SCHEMA")
        .env_remove("PALIMPSEST_RECORDS_KEY")
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("start the binary");
    let stdout = child.stdout.take().expect("stdout");
    let mut lines = BufReader::new(stdout).lines();
    let mut base = None;
    while let Ok(Some(line)) = lines.next_line().await {
        if let Some(url) = line.strip_prefix("palimpsest listening on ") {
            base = Some(url.to_owned());
            break;
        }
    }
    let base = base.expect("the binary printed where it listens");
    let (before, v, after) = listed_version(&base, admin).await;
    assert_delta(before, v, after);
    if let Err(e) = child.start_kill() {
        eprintln!("stopping the binary: {e}");
    }
    if let Err(e) = child.wait().await {
        eprintln!("waiting for the binary: {e}");
    }
    db.drop().await;
}
