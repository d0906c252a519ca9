//! Issue #25: heavy exports (`getHTML`, `createDiffHTML`) of a pad with many revisions run in
//! the export pool, off the request threads, so `/healthz` keeps answering while they run.

mod support;

use std::time::Duration;
use support::Server;

/// Revisions of the test pad (each `appendText` adds one).
const REVISIONS: usize = 150;

/// Exports run at once.
const CALLERS: usize = 4;

/// The value of counter `name` in the `/metrics` text (0 when absent).
async fn counter(root: &str, name: &str) -> f64 {
    let text = reqwest::get(format!("{root}/metrics"))
        .await
        .expect("metrics")
        .text()
        .await
        .expect("metrics text");
    text.lines()
        .filter(|line| line.starts_with(name))
        .filter_map(|line| line.rsplit(' ').next()?.parse::<f64>().ok())
        .sum()
}

#[tokio::test]
async fn heavy_exports_run_in_the_pool_while_healthz_answers() {
    let s = Server::start().await;
    let root = s.base.trim_end_matches("/pads").to_owned();
    s.ok("createPad", &[("padID", "heavy"), ("text", "start\n")])
        .await;
    for i in 0..REVISIONS {
        let line = format!("line {i} with some words to diff\n");
        s.ok("appendText", &[("padID", "heavy"), ("text", &line)])
            .await;
    }
    let before = counter(&root, "palimpsest_pads_exports_total").await;
    let exports = (0..CALLERS).map(|i| {
        let s = &s;
        async move {
            if i % 2 == 0 {
                s.ok("createDiffHTML", &[("padID", "heavy"), ("startRev", "0")])
                    .await["html"]
                    .is_string()
            } else {
                s.ok("getHTML", &[("padID", "heavy")]).await["html"].is_string()
            }
        }
    });
    let probes = async {
        let mut answered = 0;
        for _ in 0..5 {
            let res = tokio::time::timeout(
                Duration::from_secs(10),
                reqwest::get(format!("{root}/healthz")),
            )
            .await
            .expect("/healthz answers while exports run")
            .expect("healthz");
            assert!(res.status().is_success(), "{}", res.status());
            answered += 1;
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        answered
    };
    let (done, answered) = tokio::join!(futures::future::join_all(exports), probes);
    assert!(done.iter().all(|ok| *ok), "every export answered html");
    assert_eq!(answered, 5);
    let after = counter(&root, "palimpsest_pads_exports_total").await;
    // createDiffHTML runs two steps in the pool, getHTML one.
    let expected = (CALLERS / 2 * 2 + CALLERS / 2) as f64;
    assert!(
        after - before >= expected,
        "the exports ran in the pool: {before} → {after}"
    );
    s.stop().await;
}
