//! What a Deki client relies on beyond the lifecycle: names compare without regard to case,
//! and a file takes a new revision by id (`PUT /files/{fileid}`).

mod common;

use common::{ANN, Deki, attr};
use reqwest::StatusCode;

#[tokio::test]
async fn a_name_in_another_case_is_the_same_file() {
    let deki = Deki::start().await;
    let created = deki.upload(1, "Photo.PNG", b"one").await;
    let id = attr(&created, "id");

    let found = deki.get("/pages/1/files/photo.png", None).await;
    assert_eq!(found.status, StatusCode::OK, "{}", found.text());
    assert_eq!(found.body, b"one");

    // An upload under another spelling is a new revision of the same file, renamed to it.
    let updated = deki.upload(1, "PHOTO.png", b"two").await;
    assert_eq!(attr(&updated, "id"), id);
    assert_eq!(attr(&updated, "revision"), "2");
    assert_eq!(attr(&updated, "res-change-mask"), "CONTENT,NAME");
    assert_eq!(updated["filename"], "PHOTO.png");
    let same = deki.upload(1, "PHOTO.png", b"three").await;
    assert_eq!(attr(&same, "res-change-mask"), "CONTENT");

    let listed = deki.get("/pages/1/files", None).await.json();
    assert_eq!(attr(&listed, "count"), "1");

    // Another file renamed onto the name in any case is refused: the name is taken.
    let other = attr(&deki.upload(1, "other.png", b"x").await, "id");
    let clash = deki
        .post(&format!("/files/{other}/move?name=photo.PNG"), ANN)
        .await;
    assert_eq!(clash.status, StatusCode::CONFLICT, "{}", clash.text());

    let deleted = deki.delete("/pages/1/files/pHoTo.PnG", ANN).await;
    assert_eq!(deleted.status, StatusCode::OK, "{}", deleted.text());
    assert_eq!(
        deki.get("/pages/1/files/photo.png", None).await.status,
        StatusCode::NOT_FOUND
    );
    deki.stop().await;
}

#[tokio::test]
async fn a_file_takes_a_new_revision_by_id() {
    let deki = Deki::start().await;
    let created = deki.upload(4, "notes.txt", b"first").await;
    let id = attr(&created, "id");

    let put = deki
        .put(&format!("/files/{id}"), ANN, b"second version")
        .await;
    assert_eq!(put.status, StatusCode::OK, "{}", put.text());
    let head = put.json();
    assert_eq!(
        (attr(&head, "id"), attr(&head, "revision")),
        (id.clone(), "2".into())
    );
    assert_eq!(attr(&head, "res-change-mask"), "CONTENT");
    assert_eq!(head["filename"], "notes.txt");
    let body = deki.get(&format!("/files/{id}"), None).await;
    assert_eq!(body.body, b"second version");

    // Naming a stale head is refused and writes nothing.
    let before = deki.log_size().await;
    let stale = deki
        .put(&format!("/files/{id}?revision=1"), ANN, b"late")
        .await;
    assert_eq!(stale.status, StatusCode::CONFLICT, "{}", stale.text());
    assert_eq!(deki.log_size().await, before);

    // An unknown or deleted file is not found.
    let missing = deki.put("/files/987654", ANN, b"x").await;
    assert_eq!(missing.status, StatusCode::NOT_FOUND, "{}", missing.text());
    assert_eq!(
        deki.delete(&format!("/files/{id}"), ANN).await.status,
        StatusCode::OK
    );
    let gone = deki.put(&format!("/files/{id}"), ANN, b"x").await;
    assert_eq!(gone.status, StatusCode::NOT_FOUND, "{}", gone.text());
    deki.stop().await;
}
