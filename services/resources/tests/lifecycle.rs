//! A file's life through Deki's API: create → update → rename → move → delete → (refused
//! write; a new resource under the old name) → restore with a name clash; history filters;
//! idempotent retries.

mod common;

use common::{ANN, BOB, Deki, attr};
use reqwest::{Method, StatusCode};

#[tokio::test]
async fn a_file_lives_through_update_rename_move_delete_and_restore() {
    let deki = Deki::start().await;
    let created = deki.upload(1, "a.txt", b"one").await;
    let id = attr(&created, "id");
    assert_eq!(attr(&created, "revision"), "1");
    assert_eq!(attr(&created, "res-change-mask"), "CONTENT,NAME,PARENT");
    assert_eq!(created["filename"], "a.txt");
    assert_eq!(created["user.createdby"]["@id"], "10");

    let updated = deki.upload(1, "a.txt", b"two").await;
    assert_eq!(
        (attr(&updated, "id"), attr(&updated, "revision")),
        (id.clone(), "2".into())
    );
    assert_eq!(attr(&updated, "res-change-mask"), "CONTENT");

    let renamed = deki
        .post(&format!("/files/{id}/move?name=b.txt"), &deki.admin)
        .await;
    assert_eq!(renamed.status, StatusCode::OK, "{}", renamed.text());
    assert_eq!(attr(&renamed.json(), "res-change-mask"), "NAME");
    assert_eq!(
        renamed.json()["user.createdby"]["@id"],
        "1",
        "the administrator's revision carries Deki's admin user id"
    );
    let refused = deki
        .post(&format!("/files/{id}/move?name=z.txt"), BOB)
        .await;
    assert_eq!(
        refused.status,
        StatusCode::FORBIDDEN,
        "Bob did not make Ann's file"
    );

    let moved = deki.post(&format!("/files/{id}/move?to=2"), ANN).await;
    assert_eq!(attr(&moved.json(), "res-change-mask"), "PARENT");
    assert_eq!(attr(&moved.json(), "revision"), "4");
    let page1 = deki.get("/pages/1/files", None).await.json();
    assert_eq!(attr(&page1, "count"), "0");
    let page2 = deki.get("/pages/2/files", None).await.json();
    assert_eq!(attr(&page2, "count"), "1");
    assert_eq!(page2["file"]["filename"], "b.txt");

    let deleted = deki.delete("/pages/2/files/b.txt", ANN).await;
    assert_eq!(deleted.status, StatusCode::OK, "{}", deleted.text());
    assert_eq!(attr(&deleted.json(), "res-change-mask"), "DELETEFLAG");
    assert_eq!(
        deki.delete(&format!("/files/{id}"), ANN).await.status,
        StatusCode::NOT_FOUND
    );
    let before = deki.log_size().await;
    let refused = deki
        .post(&format!("/files/{id}/move?name=c.txt"), ANN)
        .await;
    assert_eq!(refused.status, StatusCode::NOT_FOUND, "{}", refused.text());
    assert!(refused.json()["error"].is_string());
    assert_eq!(
        deki.get(&format!("/files/{id}"), Some(ANN)).await.status,
        StatusCode::NOT_FOUND
    );
    assert_eq!(
        deki.log_size().await,
        before,
        "a refused write appends nothing"
    );

    let reborn = deki.upload(2, "b.txt", b"three").await;
    assert_ne!(
        attr(&reborn, "id"),
        id,
        "a deleted file's name makes a NEW resource"
    );
    assert_eq!(attr(&reborn, "revision"), "1");

    let archive = deki.get("/archive/files", Some(&deki.admin)).await.json();
    assert_eq!(archive["file.archive"]["@id"], id.as_str());
    assert_eq!(
        deki.get("/archive/files", Some(ANN)).await.status,
        StatusCode::FORBIDDEN
    );
    let restored = deki
        .post(&format!("/archive/files/restore/{id}"), &deki.admin)
        .await;
    assert_eq!(restored.status, StatusCode::OK, "{}", restored.text());
    let restored = restored.json();
    assert_eq!(restored["filename"], "b(2).txt", "renamed on the clash");
    assert_eq!(attr(&restored, "res-change-mask"), "NAME,DELETEFLAG");
    assert_eq!(attr(&restored, "revision"), "6");
    assert_eq!(deki.get(&format!("/files/{id}"), None).await.text(), "two");
    let first = deki.get(&format!("/files/{id}?revision=1"), None).await;
    assert_eq!(first.text(), "one");
    assert_eq!(
        first.header("etag").split('_').next(),
        Some(format!("\"{id}.r1").as_str())
    );
    assert_eq!(
        deki.get("/pages/2/files/b(2).txt", None).await.text(),
        "two"
    );

    let names = deki
        .get(&format!("/files/{id}/revisions?changefilter=NAME"), None)
        .await
        .json();
    let revs: Vec<String> = names["file"]
        .as_array()
        .unwrap_or_else(|| panic!("several: {names}"))
        .iter()
        .map(|f| attr(f, "revision"))
        .collect();
    assert_eq!(revs, ["1", "3", "6"]);
    assert_eq!(
        deki.get(&format!("/files/{id}/revisions?changefilter=SIZE"), None)
            .await
            .status,
        StatusCode::BAD_REQUEST
    );
    let xml = deki
        .send(
            Method::GET,
            &format!("/files/{id}/info"),
            None,
            &[("accept", "application/xml")],
            None,
        )
        .await;
    assert!(
        xml.text().contains("<filename>b(2).txt</filename>"),
        "{}",
        xml.text()
    );

    let rows = deki
        .rows(&format!("SELECT res_headrev, resrev_name, resrev_parent_page_id, res_deleted, resrev_change_mask FROM resources.resources WHERE res_id = {id}"))
        .await;
    assert_eq!(
        rows[0],
        serde_json::json!({"res_headrev": 6, "resrev_name": "b(2).txt", "resrev_parent_page_id": 2, "res_deleted": 0, "resrev_change_mask": 18})
    );
    deki.stop().await;
}

#[tokio::test]
async fn a_retried_request_with_the_same_idempotency_key_is_not_a_second_revision() {
    let deki = Deki::start().await;
    let send = || {
        deki.send(
            Method::PUT,
            "/pages/5/files/x.bin",
            Some(ANN),
            &[("idempotency-key", "k-1")],
            Some(b"payload".to_vec()),
        )
    };
    let first = send().await;
    assert_eq!(first.status, StatusCode::OK, "{}", first.text());
    let size = deki.log_size().await;
    let again = send().await;
    assert_eq!(again.body, first.body);
    assert_eq!(deki.log_size().await, size);
    let other = deki
        .send(
            Method::PUT,
            "/pages/5/files/x.bin",
            Some(ANN),
            &[("idempotency-key", "k-1")],
            Some(b"other".to_vec()),
        )
        .await;
    assert_eq!(other.status, StatusCode::UNPROCESSABLE_ENTITY);
    deki.stop().await;
}

#[tokio::test]
async fn writes_need_a_key_and_bad_input_is_a_json_400() {
    let deki = Deki::start().await;
    let anonymous = deki
        .send(
            Method::PUT,
            "/pages/1/files/a",
            None,
            &[],
            Some(b"x".to_vec()),
        )
        .await;
    assert_eq!(anonymous.status, StatusCode::UNAUTHORIZED);
    let unknown = deki.put("/pages/1/files/a", "nope", b"x").await;
    assert_eq!(unknown.status, StatusCode::UNAUTHORIZED);
    let bad_page = deki.put("/pages/abc/files/a", ANN, b"x").await;
    assert_eq!(bad_page.status, StatusCode::BAD_REQUEST);
    assert!(
        bad_page.json()["error"]
            .as_str()
            .unwrap_or("")
            .contains("pageid")
    );
    let control = deki.put("/pages/1/files/a%01b", ANN, b"x").await;
    assert_eq!(control.status, StatusCode::BAD_REQUEST);
    assert_eq!(deki.log_size().await, 0);
    deki.stop().await;
}

#[tokio::test]
async fn every_documented_route_is_served() {
    let deki = Deki::start().await;
    let spec: serde_json::Value = deki
        .http
        .get(format!("{}/openapi.json", deki.base))
        .send()
        .await
        .expect("spec")
        .json()
        .await
        .expect("json");
    let paths = spec["paths"].as_object().expect("paths");
    assert!(paths.len() >= 20, "{}", paths.len());
    for (path, operations) in paths {
        let concrete = path
            .trim_start_matches("/@api/deki")
            .replace("{pageid}", "1")
            .replace("{fileid}", "1")
            .replace("{userid}", "1")
            .replace("{filename}", "f.txt")
            .replace("{key}", "k");
        for method in operations.as_object().expect("operations").keys() {
            let method = Method::from_bytes(method.to_uppercase().as_bytes()).expect("method");
            let answer = deki
                .send(method.clone(), &concrete, Some(&deki.admin), &[], None)
                .await;
            assert_ne!(
                answer.status,
                StatusCode::METHOD_NOT_ALLOWED,
                "{method} {concrete}"
            );
            assert!(
                answer.status != StatusCode::NOT_FOUND || answer.json()["error"].is_string(),
                "{method} {concrete} is not routed"
            );
            assert!(
                answer.status.as_u16() < 500,
                "{method} {concrete}: {}",
                answer.text()
            );
        }
    }
    deki.stop().await;
}
