//! The rules beyond a single file's life: concurrent writers, content stored once, hidden
//! revisions, property `abort=` modes and ETags, and a changeset of several properties as one
//! append.

mod common;

use common::{ANN, Deki, attr};
use reqwest::{Method, StatusCode};

#[tokio::test]
async fn of_two_writers_based_on_the_same_head_one_wins_and_the_other_is_refused() {
    let deki = Deki::start().await;
    let id = attr(&deki.upload(1, "c.txt", b"v1").await, "id");
    // Ann and the administrator: the only callers who may write Ann's file.
    let path = "/pages/1/files/c.txt?revision=1";
    let ann = deki.send(Method::PUT, path, Some(ANN), &[], Some(b"ann".to_vec()));
    let admin = deki.send(
        Method::PUT,
        path,
        Some(&deki.admin),
        &[],
        Some(b"admin".to_vec()),
    );
    let (a, b) = tokio::join!(ann, admin);
    let mut statuses = [a.status, b.status];
    statuses.sort();
    assert_eq!(
        statuses,
        [StatusCode::OK, StatusCode::CONFLICT],
        "{} / {}",
        a.text(),
        b.text()
    );
    let loser = if a.status == StatusCode::CONFLICT {
        &a
    } else {
        &b
    };
    assert!(
        loser.json()["error"]
            .as_str()
            .unwrap_or("")
            .contains("revision 2")
    );
    let head = deki.get(&format!("/files/{id}/info"), None).await.json();
    assert_eq!(attr(&head, "revision"), "2");

    let etag = attr(&head, "etag");
    let stale = deki
        .send(
            Method::DELETE,
            &format!("/files/{id}"),
            Some(ANN),
            &[("if-match", "\"1.r1_ts2000-01-01T00:00:00Z\"")],
            None,
        )
        .await;
    assert_eq!(
        stale.status,
        StatusCode::PRECONDITION_FAILED,
        "{}",
        stale.text()
    );
    let fresh = deki
        .send(
            Method::DELETE,
            &format!("/files/{id}"),
            Some(ANN),
            &[("if-match", &etag)],
            None,
        )
        .await;
    assert_eq!(fresh.status, StatusCode::OK, "{}", fresh.text());
    deki.stop().await;
}

#[tokio::test]
async fn identical_content_is_stored_once_across_resources() {
    let deki = Deki::start().await;
    let big = vec![7u8; 5000];
    let a = deki.upload(1, "a.bin", &big).await;
    let b = deki.upload(2, "b.bin", &big).await;
    let c = deki.upload(3, "c.bin", &big).await;
    assert_ne!(attr(&a, "id"), attr(&b, "id"));
    assert_eq!(attr(&a, "res-contents-id"), attr(&b, "res-contents-id"));
    assert_eq!(attr(&a, "res-contents-id"), attr(&c, "res-contents-id"));
    let small_a = deki.upload(4, "s.txt", b"same").await;
    let small_b = deki.upload(5, "s.txt", b"same").await;
    assert_eq!(
        attr(&small_a, "res-contents-id"),
        attr(&small_b, "res-contents-id")
    );
    let rows = deki
        .rows("SELECT rescontent_id, rescontent_res_id, rescontent_res_rev, rescontent_size, rescontent_location IS NOT NULL AS stored FROM resources.resourcecontents ORDER BY rescontent_id")
        .await;
    assert_eq!(rows.len(), 2, "{rows:?}");
    assert_eq!(rows[0]["rescontent_size"], 5000);
    assert_eq!(rows[0]["stored"], true);
    assert_eq!(rows[1]["stored"], false);
    assert_eq!(deki.stored_files(), 1, "one copy on disk");
    assert_eq!(
        deki.get(&format!("/files/{}", attr(&c, "id")), None)
            .await
            .body,
        big
    );
    deki.stop().await;
}

#[tokio::test]
async fn hidden_revisions_are_shown_only_to_the_admin() {
    let deki = Deki::start().await;
    let id = attr(&deki.upload(1, "h.txt", b"secret").await, "id");
    deki.upload(1, "h.txt", b"public").await;
    let hide = format!("/files/{id}/revisions?hide=true&revisionids=1");
    assert_eq!(deki.post(&hide, ANN).await.status, StatusCode::FORBIDDEN);
    let hidden = deki.post(&hide, &deki.admin).await;
    assert_eq!(hidden.status, StatusCode::OK, "{}", hidden.text());
    let head_hidden = deki
        .post(
            &format!("/files/{id}/revisions?hide=true&revisionids=2"),
            &deki.admin,
        )
        .await;
    assert_eq!(head_hidden.status, StatusCode::BAD_REQUEST);
    let old = format!("/files/{id}?revision=1");
    assert_eq!(
        deki.get(&old, Some(ANN)).await.status,
        StatusCode::FORBIDDEN
    );
    assert_eq!(deki.get(&old, None).await.status, StatusCode::FORBIDDEN);
    assert_eq!(deki.get(&old, Some(&deki.admin)).await.text(), "secret");
    let history = deki
        .get(&format!("/files/{id}/revisions"), None)
        .await
        .json();
    assert_eq!(history["file"][0]["@res-rev-is-hidden"], "true");
    let shown = deki
        .post(
            &format!("/files/{id}/revisions?hide=false&revisionids=1"),
            &deki.admin,
        )
        .await;
    assert_eq!(shown.status, StatusCode::OK);
    assert_eq!(deki.get(&old, Some(ANN)).await.text(), "secret");
    deki.stop().await;
}

#[tokio::test]
async fn property_writes_follow_the_abort_mode_and_the_etag() {
    let deki = Deki::start().await;
    let path = "/pages/9/properties/colour";
    let created = deki.put(path, ANN, b"red").await;
    assert_eq!(created.status, StatusCode::OK, "{}", created.text());
    let etag = attr(&created.json(), "etag");
    assert!(etag.starts_with('"') && etag.contains(".r1_ts"), "{etag}");

    let without_etag = deki.put(path, ANN, b"blue").await;
    assert_eq!(
        without_etag.status,
        StatusCode::CONFLICT,
        "abort=modified needs the ETag"
    );
    let exists = deki
        .put(&format!("{path}?abort=exists"), ANN, b"blue")
        .await;
    assert_eq!(exists.status, StatusCode::CONFLICT);
    let stale = deki
        .put(
            &format!("{path}?etag=%221.r9_ts2000-01-01T00:00:00Z%22"),
            ANN,
            b"blue",
        )
        .await;
    assert_eq!(stale.status, StatusCode::PRECONDITION_FAILED);
    let matched = deki
        .send(
            Method::PUT,
            path,
            Some(ANN),
            &[("if-match", &etag)],
            Some(b"blue".to_vec()),
        )
        .await;
    assert_eq!(matched.status, StatusCode::OK, "{}", matched.text());
    assert_eq!(attr(&matched.json(), "revision"), "2");
    let never = deki
        .put(&format!("{path}?abort=never"), ANN, b"green")
        .await;
    assert_eq!(attr(&never.json(), "revision"), "3");
    let value = deki.get(path, None).await;
    assert_eq!(
        (value.text(), value.header("content-type")),
        ("green".into(), "text/plain".into())
    );

    let slug = deki
        .send(
            Method::POST,
            "/pages/9/properties",
            Some(ANN),
            &[("slug", "colour")],
            Some(b"x".to_vec()),
        )
        .await;
    assert_eq!(slug.status, StatusCode::CONFLICT);
    let listed = deki.get("/pages/9/properties", None).await.json();
    assert_eq!(attr(&listed, "count"), "1");

    let deleted = deki.delete(path, ANN).await;
    assert_eq!(deleted.status, StatusCode::OK);
    assert_eq!(deki.get(path, None).await.status, StatusCode::NOT_FOUND);
    let again = deki.put(&format!("{path}?abort=exists"), ANN, b"new").await;
    assert_eq!(
        again.status,
        StatusCode::OK,
        "a deleted property's key is free again"
    );
    assert_eq!(attr(&again.json(), "revision"), "1");
    deki.stop().await;
}

#[tokio::test]
async fn a_changeset_of_several_properties_is_one_append_and_all_or_nothing() {
    let deki = Deki::start().await;
    let site = deki
        .put("/site/properties/theme", &deki.admin, b"dark")
        .await;
    assert_eq!(site.status, StatusCode::OK);
    let user = deki.put("/users/10/properties/lang", ANN, b"fr").await;
    assert_eq!(user.status, StatusCode::OK);
    let batch = serde_json::json!({"property": [
        {"@name": "a", "contents": {"@type": "text/plain", "#text": "1"}},
        {"@name": "b", "contents": "2"}
    ]});
    let before = deki.log_size().await;
    let answer = deki
        .send(
            Method::PUT,
            "/pages/3/properties",
            Some(ANN),
            &[],
            Some(batch.to_string().into_bytes()),
        )
        .await;
    assert_eq!(answer.status, StatusCode::OK, "{}", answer.text());
    let changesets = deki
        .rows("SELECT DISTINCT resrev_changeset_id FROM resources.resourcerevs WHERE resrev_parent_page_id = 3")
        .await;
    assert_eq!(changesets.len(), 1, "both revisions share one changeset");
    let appended = deki
        .rows(&format!(
            "SELECT count(DISTINCT correlation_id) AS n FROM log.events WHERE position > {before}"
        ))
        .await;
    assert_eq!(appended[0]["n"], 1, "one command");

    let refused = serde_json::json!({"property": [
        {"@name": "c", "contents": "3"},
        {"@name": "a", "contents": "changed"}
    ]});
    let size = deki.log_size().await;
    let answer = deki
        .send(
            Method::PUT,
            "/pages/3/properties",
            Some(ANN),
            &[],
            Some(refused.to_string().into_bytes()),
        )
        .await;
    assert_eq!(
        answer.status,
        StatusCode::CONFLICT,
        "a exists and no ETag was given"
    );
    assert_eq!(
        deki.log_size().await,
        size,
        "nothing of the changeset was appended"
    );
    assert_eq!(
        deki.get("/pages/3/properties/c", None).await.status,
        StatusCode::NOT_FOUND
    );
    deki.stop().await;
}

#[tokio::test]
async fn a_file_description_is_its_property_set_with_the_upload_in_one_changeset() {
    let deki = Deki::start().await;
    let file = deki
        .put(
            "/pages/4/files/d.txt?description=first%20draft",
            ANN,
            b"text",
        )
        .await
        .json();
    let id = attr(&file, "id");
    let key = "urn:deki.mindtouch.com%23description";
    let description = deki
        .get(&format!("/files/{id}/properties/{key}"), None)
        .await;
    assert_eq!(description.text(), "first draft");
    let changesets = deki
        .rows("SELECT DISTINCT resrev_changeset_id FROM resources.resourcerevs")
        .await;
    assert_eq!(changesets.len(), 1);
    let put = deki
        .put(&format!("/files/{id}/description"), &deki.admin, b"final")
        .await;
    assert_eq!(put.status, StatusCode::OK, "{}", put.text());
    assert_eq!(
        deki.get(&format!("/files/{id}/properties/{key}"), None)
            .await
            .text(),
        "final"
    );
    assert_eq!(
        deki.delete(&format!("/files/{id}/description"), ANN)
            .await
            .status,
        StatusCode::OK
    );
    assert_eq!(
        deki.get(&format!("/files/{id}/properties/{key}"), None)
            .await
            .status,
        StatusCode::NOT_FOUND
    );
    deki.stop().await;
}

#[tokio::test]
async fn concurrent_uploads_of_different_files_all_succeed_with_distinct_ids() {
    let deki = Deki::start().await;
    let uploads = (0..8).map(|i| {
        let deki = &deki;
        async move {
            deki.put(
                &format!("/pages/{}/files/f{i}.txt", i + 1),
                ANN,
                format!("body {i}").as_bytes(),
            )
            .await
        }
    });
    let answers = futures::future::join_all(uploads).await;
    let mut ids: Vec<String> = answers
        .iter()
        .map(|a| {
            assert_eq!(a.status, StatusCode::OK, "{}", a.text());
            attr(&a.json(), "id")
        })
        .collect();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), 8);
    let revs = deki
        .rows("SELECT count(DISTINCT resrev_id) AS n, count(DISTINCT resrev_changeset_id) AS c FROM resources.resourcerevs")
        .await;
    assert_eq!(
        (revs[0]["n"].as_i64(), revs[0]["c"].as_i64()),
        (Some(8), Some(8))
    );
    deki.stop().await;
}

/// A Deki client sends the properties batch as XML: set with `<contents>`, delete without,
/// each property's ETag checked, all in one changeset, as with the JSON form.
#[tokio::test]
async fn a_properties_batch_sent_as_deki_xml_is_one_changeset() {
    let deki = Deki::start().await;
    let old = deki.put("/pages/4/properties/old", ANN, b"x").await;
    assert_eq!(old.status, StatusCode::OK);
    let etag = attr(&old.json(), "etag").replace('"', "&quot;");
    assert!(etag.contains(".r1_ts"), "{etag}");
    let xml = format!(
        r#"<?xml version="1.0" encoding="utf-8"?>
<properties>
  <property name="urn:custom.mindtouch.com#colour"><contents type="text/plain">blue &amp; green</contents></property>
  <property name="size"><contents>10</contents></property>
  <property name="old" etag="{etag}"/>
</properties>"#
    );
    let answer = deki
        .send(
            Method::PUT,
            "/pages/4/properties",
            Some(ANN),
            &[("content-type", "application/xml")],
            Some(xml.into_bytes()),
        )
        .await;
    assert_eq!(answer.status, StatusCode::OK, "{}", answer.text());
    let colour = deki
        .get(
            "/pages/4/properties/urn:custom.mindtouch.com%23colour",
            None,
        )
        .await;
    assert_eq!(colour.text(), "blue & green");
    assert_eq!(
        deki.get("/pages/4/properties/size", None).await.text(),
        "10"
    );
    assert_eq!(
        deki.get("/pages/4/properties/old", None).await.status,
        StatusCode::NOT_FOUND,
        "a property without contents is deleted"
    );
    let changesets = deki
        .rows(
            "SELECT DISTINCT resrev_changeset_id FROM resources.resourcerevs \
               WHERE resrev_parent_page_id = 4 AND NOT (resrev_name = 'old' AND resrev_rev = 1)",
        )
        .await;
    assert_eq!(changesets.len(), 1, "one changeset: {changesets:?}");

    let size = deki.log_size().await;
    for (body, why) in [
        ("<properties><property name=\"a\">", "not well-formed"),
        ("<page><property name=\"a\"/></page>", "not <properties>"),
        (
            "<properties><property name=\"a\">&xxe;</property></properties>",
            "an entity",
        ),
    ] {
        let refused = deki
            .send(
                Method::PUT,
                "/pages/4/properties",
                Some(ANN),
                &[("content-type", "text/xml")],
                Some(body.as_bytes().to_vec()),
            )
            .await;
        assert_eq!(refused.status, StatusCode::BAD_REQUEST, "{why}");
        assert!(
            refused.json()["error"].is_string(),
            "{why}: {}",
            refused.text()
        );
    }
    assert_eq!(deki.log_size().await, size, "nothing appended");
    deki.stop().await;
}
