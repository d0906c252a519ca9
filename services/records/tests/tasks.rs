//! Deferred tasks: the runner takes them in due order, counts nb down, deletes finished ones and
//! records exceptions.

mod common;

use common::Records;
use palimpsest_records::settings::Settings;
use palimpsest_records::tasks::{TaskHandler, TaskRun};
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use std::time::Duration;

#[tokio::test]
async fn a_task_runs_nb_times_then_is_deleted_and_a_failure_is_recorded() {
    let runs: Arc<Mutex<Vec<Value>>> = Arc::default();
    let seen = runs.clone();
    let counting: TaskHandler = Arc::new(move |run: TaskRun| {
        let seen = seen.clone();
        Box::pin(async move {
            seen.lock().expect("lock").push(run.data["pk"].clone());
            Ok(())
        })
    });
    let failing: TaskHandler = Arc::new(|_| Box::pin(async { Err("E_BOOM".to_owned()) }));
    let mut settings = Settings {
        task_poll_ms: 50,
        ..Settings::default()
    };
    settings.tasks.insert("Compter".into(), counting);
    settings.tasks.insert("Echouer".into(), failing);
    let r = Records::start_with(settings).await;

    let due = palimpsest_records::task::time_text(chrono::Utc::now().timestamp_millis() - 1000);
    let set = r.ok("setTask", json!({"org": "demo", "data": {"process": "Compter", "pk": ["a1"], "startTime": due, "nb": 2}})).await;
    assert_eq!(set["k0"], palimpsest_records::hash::sha16("Compter/a1"));
    r.ok(
        "setTask",
        json!({"org": "demo", "data": {"process": "Echouer", "pk": ["x"], "startTime": due}}),
    )
    .await;

    let mut waited = 0;
    loop {
        let left = r.rows("SELECT k0 FROM records.\"Task\"").await;
        if runs.lock().expect("lock").len() == 2 && left.len() == 1 {
            break;
        }
        waited += 1;
        assert!(
            waited < 100,
            "runs {:?}, tasks left {left:?}",
            runs.lock().expect("lock")
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let far =
        palimpsest_records::task::time_text(chrono::Utc::now().timestamp_millis() + 3_600_000);
    let failed = r.ok("nextTask", json!({"time": far})).await;
    assert_eq!(failed["data"]["exc"], "E_BOOM", "{failed}");
    assert!(
        failed["i0"].as_str().unwrap_or_default() > due.as_str(),
        "rescheduled later"
    );
    let actors = r.actors_after(0).await;
    assert!(
        actors.iter().any(|a| a == "system:tasks"),
        "the runner's writes name it: {actors:?}"
    );
    assert!(
        actors.iter().all(|a| a == "admin" || a == "system:tasks"),
        "every event names who caused it: {actors:?}"
    );
    r.stop().await;
}

/// The task runner is one of the app's background tasks: `stop` ends it and waits for it, so
/// nothing of the app is left retrying against the dropped database. What the runner holds (the
/// handlers) is released once the app stopped.
#[tokio::test]
async fn the_task_runner_stops_with_the_app() {
    let held = Arc::new(());
    let alive = Arc::downgrade(&held);
    let idle: TaskHandler = Arc::new(move |_| {
        let _held = held.clone();
        Box::pin(async { Ok(()) })
    });
    let mut settings = Settings {
        task_poll_ms: 20,
        ..Settings::default()
    };
    settings.tasks.insert("Rien".into(), idle);
    let r = Records::start_with(settings).await;
    let background = r.state.background.clone();
    assert!(
        background.running() >= 1,
        "the runner runs as a background task"
    );
    drop(r.state);
    drop(r.http);
    r.app.stop().await;
    assert_eq!(
        background.running(),
        0,
        "a background task outlived the app"
    );
    assert!(
        alive.upgrade().is_none(),
        "the runner's handlers are still held after the app stopped"
    );
}
