//! The read model is disposable: replaying the log from position 0 into a fresh schema gives
//! exactly the live `resources`, `resourcerevs` and `resourcecontents`, ids included.

mod common;

use common::{ANN, Deki, attr};
use serde_json::Value;

const TABLES: [(&str, &str); 3] = [
    ("resources", "res_id"),
    ("resourcerevs", "resrev_id"),
    ("resourcecontents", "rescontent_id"),
];

async fn dump(deki: &Deki) -> Vec<(String, Vec<Value>)> {
    let mut out = Vec::new();
    for (table, key) in TABLES {
        let rows = deki
            .rows(&format!("SELECT * FROM resources.{table} ORDER BY {key}"))
            .await;
        out.push((table.to_owned(), rows));
    }
    out
}

#[tokio::test]
async fn a_replayed_rebuild_equals_the_live_read_model() {
    let deki = Deki::start().await;
    let id = attr(&deki.upload(1, "a.txt", b"one").await, "id");
    deki.upload(1, "a.txt", &vec![1u8; 4000]).await;
    deki.upload(2, "b.txt", &vec![1u8; 4000]).await;
    deki.post(&format!("/files/{id}/move?to=3&name=c.txt"), ANN)
        .await;
    deki.put("/pages/1/properties/k", ANN, b"v").await;
    deki.put("/users/10/properties/k", ANN, b"v").await;
    deki.post(
        &format!("/files/{id}/revisions?hide=true&revisionids=1"),
        &deki.admin,
    )
    .await;
    deki.delete(&format!("/files/{id}"), ANN).await;
    let gone = attr(&deki.upload(7, "gone.txt", b"bye").await, "id");
    deki.delete(&format!("/files/{gone}"), ANN).await;
    deki.send(
        reqwest::Method::DELETE,
        &format!("/archive/files/{gone}"),
        Some(&deki.admin),
        &[],
        None,
    )
    .await;
    deki.upload(3, "c.txt", b"clash").await;
    let restored = deki
        .post(&format!("/archive/files/restore/{id}"), &deki.admin)
        .await;
    assert_eq!(restored.json()["filename"], "c(2).txt");

    let live = dump(&deki).await;
    assert!(live.iter().all(|(_, rows)| !rows.is_empty()), "{live:?}");
    assert!(
        live[1].1.iter().any(|row| row["resrev_is_hidden"] == 1),
        "a hidden revision is in the model"
    );
    assert!(
        !live[0]
            .1
            .iter()
            .any(|row| row["res_id"].as_i64() == gone.parse::<i64>().ok()),
        "the wiped file left the model"
    );
    let report = palimpsest_projections::rebuild(
        &deki.state.store,
        palimpsest_resources::projection().as_ref(),
        |_, _| {},
    )
    .await
    .expect("rebuild");
    assert_eq!(report.position, deki.log_size().await);
    let rebuilt = dump(&deki).await;
    for ((table, a), (_, b)) in live.iter().zip(rebuilt.iter()) {
        assert_eq!(a, b, "table {table} differs after the rebuild");
    }
    deki.stop().await;
}
