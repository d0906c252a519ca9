//! Who may call what (issue #25, defect 4): every write of the section workflow refuses no
//! credential and a wrong token (401), a user without the role and a body naming another user
//! (403, nothing appended), and acts as the caller: the spec's columns and every event's
//! `Metadata.actor` name the token's user. The administrator may do everything, as `admin`.

mod common;

use common::Atlas;
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

/// A request with an optional bearer token.
async fn call(
    atlas: &Atlas,
    method: Method,
    path: &str,
    token: Option<&str>,
    body: Option<Value>,
) -> (StatusCode, Value) {
    let mut request = atlas.http.request(method, format!("{}{path}", atlas.base));
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    if let Some(body) = body {
        request = request.json(&body);
    }
    let res = request.send().await.expect("request");
    let status = res.status();
    (status, res.json().await.unwrap_or(Value::Null))
}

/// The actors of the events appended after `position`.
async fn actors_after(atlas: &Atlas, position: i64) -> Vec<Option<String>> {
    let events = atlas
        .state
        .store
        .read_all(position, 1000)
        .await
        .expect("read log");
    events.into_iter().map(|e| e.metadata.actor).collect()
}

/// The refusals every write owes: none, wrong → 401; `wrong_role` → 403; the right user naming
/// someone else under `field` (in the body, or in the query for a GET) → 403; none appends.
#[allow(clippy::too_many_arguments)]
async fn refuses(
    atlas: &Atlas,
    method: Method,
    path: &str,
    body: Value,
    right: &str,
    wrong_role: &str,
    field: &str,
) {
    let before = atlas.log_size().await;
    let with_body = |b: Value| (method != Method::GET).then_some(b);
    let (status, answer) = call(atlas, method.clone(), path, None, with_body(body.clone())).await;
    assert_eq!(
        status,
        StatusCode::UNAUTHORIZED,
        "{method} {path} without credential: {answer}"
    );
    assert!(answer["error"].is_string(), "{answer}");
    let (status, _) = call(
        atlas,
        method.clone(),
        path,
        Some("not-a-token"),
        with_body(body.clone()),
    )
    .await;
    assert_eq!(
        status,
        StatusCode::UNAUTHORIZED,
        "{method} {path} with a wrong token"
    );
    let (status, answer) = call(
        atlas,
        method.clone(),
        path,
        Some(wrong_role),
        with_body(body.clone()),
    )
    .await;
    assert_eq!(
        status,
        StatusCode::FORBIDDEN,
        "{method} {path} without the role: {answer}"
    );
    let (status, answer) = if method == Method::GET {
        let sep = if path.contains('?') { '&' } else { '?' };
        let named = format!("{path}{sep}{field}=mallory");
        call(atlas, method.clone(), &named, Some(right), None).await
    } else {
        let mut named = body.clone();
        named[field] = json!("mallory");
        call(atlas, method.clone(), path, Some(right), Some(named)).await
    };
    assert_eq!(
        status,
        StatusCode::FORBIDDEN,
        "{method} {path} naming another user: {answer}"
    );
    assert!(
        answer["error"].as_str().unwrap_or("").contains("mallory"),
        "{answer}"
    );
    assert_eq!(
        atlas.log_size().await,
        before,
        "{method} {path}: refusals append nothing"
    );
}

/// Runs a write as `token` expecting `status`; returns the answer and the actors it appended.
async fn succeeds(
    atlas: &Atlas,
    method: Method,
    path: &str,
    token: &str,
    body: Value,
    status: StatusCode,
) -> (Value, Vec<Option<String>>) {
    let before = atlas.log_size().await;
    let body = (method != Method::GET).then_some(body);
    let (got, answer) = call(atlas, method.clone(), path, Some(token), body).await;
    assert_eq!(got, status, "{method} {path}: {answer}");
    (answer, actors_after(atlas, before).await)
}

fn only(actors: &[Option<String>], who: &str) {
    assert!(!actors.is_empty(), "the write appended events");
    assert!(
        actors.iter().all(|a| a.as_deref() == Some(who)),
        "every event names {who}: {actors:?}"
    );
}

fn snapshot(id: &str) -> Value {
    json!({"schema_version": 1, "entities": [{"operation": "create", "id": id, "name": id}]})
}

#[tokio::test]
async fn every_section_write_refuses_strangers_the_wrong_role_and_other_names_and_acts_as_the_caller()
 {
    let atlas = Atlas::start().await;
    let ed = atlas.issue("ed", &["editor"]).await;
    let rv = atlas.issue("rv", &["reviewer"]).await;

    // create
    refuses(
        &atlas,
        Method::POST,
        "/sections",
        json!({"title": "t"}),
        &ed,
        &rv,
        "created_by",
    )
    .await;
    refuses(
        &atlas,
        Method::POST,
        "/sections",
        json!({"title": "t"}),
        &ed,
        &rv,
        "user_id",
    )
    .await;
    let (section, actors) = succeeds(
        &atlas,
        Method::POST,
        "/sections",
        &ed,
        json!({"title": "t", "created_by": "ed"}),
        StatusCode::CREATED,
    )
    .await;
    assert_eq!(
        (section["user_id"].as_str(), section["created_by"].as_str()),
        (Some("ed"), Some("ed"))
    );
    only(&actors, "ed");
    let id = section["id"].as_str().expect("id").to_owned();

    // the editor's lock
    let editor = format!("/sections/{id}/editor?user_id=ed");
    refuses(&atlas, Method::GET, &editor, json!({}), &ed, &rv, "actor").await;
    let before = atlas.log_size().await;
    let (status, body) = call(
        &atlas,
        Method::GET,
        &format!("/sections/{id}/editor?user_id=rv"),
        Some(&rv),
        None,
    )
    .await;
    assert_eq!(
        status,
        StatusCode::FORBIDDEN,
        "a reviewer takes no lock: {body}"
    );
    assert!(
        body["error"].as_str().unwrap_or("").contains("editor role"),
        "{body}"
    );
    let (status, _) = call(
        &atlas,
        Method::GET,
        &format!("/sections/{id}/editor?user_id=mallory"),
        Some(&ed),
        None,
    )
    .await;
    assert_eq!(
        status,
        StatusCode::FORBIDDEN,
        "the editor's lock for another user"
    );
    assert_eq!(atlas.log_size().await, before);
    let (view, actors) =
        succeeds(&atlas, Method::GET, &editor, &ed, json!({}), StatusCode::OK).await;
    assert_eq!(view["state"]["locked_by"], "ed");
    only(&actors, "ed");

    // lock, unlock
    for (route, field) in [("lock", "locked_by"), ("unlock", "user_id")] {
        let path = format!("/sections/{id}/{route}");
        refuses(&atlas, Method::POST, &path, json!({}), &ed, &rv, field).await;
        let (answer, actors) = succeeds(
            &atlas,
            Method::POST,
            &path,
            &ed,
            json!({"user_id": "ed"}),
            StatusCode::OK,
        )
        .await;
        let holder = if route == "lock" {
            json!("ed")
        } else {
            Value::Null
        };
        assert_eq!(answer["state"]["locked_by"], holder, "{route}");
        only(&actors, "ed");
    }

    // commit, restore
    let commits = format!("/sections/{id}/commits");
    refuses(
        &atlas,
        Method::POST,
        &commits,
        json!({"snapshot": snapshot("e1")}),
        &ed,
        &rv,
        "created_by",
    )
    .await;
    let (commit, actors) = succeeds(
        &atlas,
        Method::POST,
        &commits,
        &ed,
        json!({"snapshot": snapshot("e1")}),
        StatusCode::CREATED,
    )
    .await;
    assert_eq!(commit["commit"]["created_by"], "ed");
    only(&actors, "ed");
    let commit_id = commit["commit"]["id"]
        .as_str()
        .expect("commit id")
        .to_owned();
    let restore = format!("/sections/{id}/restore");
    refuses(
        &atlas,
        Method::POST,
        &restore,
        json!({"commit_id": commit_id}),
        &ed,
        &rv,
        "actor",
    )
    .await;
    let (restored, actors) = succeeds(
        &atlas,
        Method::POST,
        &restore,
        &ed,
        json!({"commit_id": commit_id}),
        StatusCode::CREATED,
    )
    .await;
    assert_eq!(restored["commit"]["created_by"], "ed");
    only(&actors, "ed");

    // submit
    let submit = format!("/sections/{id}/submit");
    refuses(
        &atlas,
        Method::POST,
        &submit,
        json!({}),
        &ed,
        &rv,
        "submitted_by",
    )
    .await;
    let (submitted, actors) = succeeds(
        &atlas,
        Method::POST,
        &submit,
        &ed,
        json!({}),
        StatusCode::CREATED,
    )
    .await;
    assert_eq!(submitted["submission"]["submitted_by"], "ed");
    only(&actors, "ed");
    let submission = submitted["submission"]["id"]
        .as_str()
        .expect("submission")
        .to_owned();

    // approve: the published entity's events name the reviewer too
    let approve = format!("/submissions/{submission}/approve");
    refuses(
        &atlas,
        Method::POST,
        &approve,
        json!({}),
        &rv,
        &ed,
        "reviewed_by",
    )
    .await;
    let (approved, actors) = succeeds(
        &atlas,
        Method::POST,
        &approve,
        &rv,
        json!({"review_note": "ok"}),
        StatusCode::OK,
    )
    .await;
    assert_eq!(approved["submission"]["reviewed_by"], "rv");
    assert!(
        actors.len() >= 3,
        "section, entity and publication events: {actors:?}"
    );
    only(&actors, "rv");
    let rows = atlas
        .rows("SELECT reviewed_by FROM atlas.entity_history WHERE entity_id = 'e1'")
        .await;
    assert_eq!(rows[0]["reviewed_by"], "rv");

    // reject
    let second = atlas
        .post_as(&ed, "/sections", json!({"title": "two"}))
        .await
        .1["id"]
        .as_str()
        .expect("id")
        .to_owned();
    atlas
        .post_as(
            &ed,
            &format!("/sections/{second}/commits"),
            json!({"snapshot": snapshot("e2")}),
        )
        .await;
    let pending = atlas
        .post_as(&ed, &format!("/sections/{second}/submit"), json!({}))
        .await
        .1["submission"]["id"]
        .as_str()
        .expect("submission")
        .to_owned();
    let reject = format!("/submissions/{pending}/reject");
    refuses(
        &atlas,
        Method::POST,
        &reject,
        json!({}),
        &rv,
        &ed,
        "user_id",
    )
    .await;
    let (rejected, actors) = succeeds(
        &atlas,
        Method::POST,
        &reject,
        &rv,
        json!({"reviewed_by": "rv"}),
        StatusCode::OK,
    )
    .await;
    assert_eq!(rejected["submission"]["reviewed_by"], "rv");
    only(&actors, "rv");
    atlas.stop().await;
}

#[tokio::test]
async fn the_administrator_may_do_everything_and_acts_as_admin() {
    let atlas = Atlas::start().await;
    let admin = atlas.admin.clone();
    let (section, actors) = succeeds(
        &atlas,
        Method::POST,
        "/sections",
        &admin,
        json!({"title": "a"}),
        StatusCode::CREATED,
    )
    .await;
    assert_eq!(section["created_by"], "admin");
    only(&actors, "admin");
    let id = section["id"].as_str().expect("id").to_owned();
    for (route, body, status) in [
        ("lock", json!({"user_id": "admin"}), StatusCode::OK),
        ("unlock", json!({}), StatusCode::OK),
        (
            "commits",
            json!({"snapshot": snapshot("e1")}),
            StatusCode::CREATED,
        ),
    ] {
        let (_, actors) = succeeds(
            &atlas,
            Method::POST,
            &format!("/sections/{id}/{route}"),
            &admin,
            body,
            status,
        )
        .await;
        only(&actors, "admin");
    }
    let (submitted, _) = succeeds(
        &atlas,
        Method::POST,
        &format!("/sections/{id}/submit"),
        &admin,
        json!({}),
        StatusCode::CREATED,
    )
    .await;
    assert_eq!(submitted["submission"]["submitted_by"], "admin");
    let submission = submitted["submission"]["id"].as_str().expect("submission");
    let (approved, actors) = succeeds(
        &atlas,
        Method::POST,
        &format!("/submissions/{submission}/approve"),
        &admin,
        json!({}),
        StatusCode::OK,
    )
    .await;
    assert_eq!(approved["submission"]["reviewed_by"], "admin");
    only(&actors, "admin");
    let (status, body) = atlas
        .post_as(&admin, "/sections", json!({"title": "b", "user_id": "ann"}))
        .await;
    assert_eq!(
        status,
        StatusCode::FORBIDDEN,
        "the administrator does not act as another user either: {body}"
    );
    atlas.stop().await;
}

#[tokio::test]
async fn a_reviewer_may_not_approve_their_own_submission_but_may_reject_it() {
    let atlas = Atlas::start().await;
    let both = atlas.issue("both", &["editor", "reviewer"]).await;
    let id = atlas
        .post_as(&both, "/sections", json!({"title": "own"}))
        .await
        .1["id"]
        .as_str()
        .expect("id")
        .to_owned();
    atlas
        .post_as(
            &both,
            &format!("/sections/{id}/commits"),
            json!({"snapshot": snapshot("e1")}),
        )
        .await;
    let submission = atlas
        .post_as(&both, &format!("/sections/{id}/submit"), json!({}))
        .await
        .1["submission"]["id"]
        .as_str()
        .expect("submission")
        .to_owned();
    let before = atlas.log_size().await;
    let (status, body) = atlas
        .post_as(
            &both,
            &format!("/submissions/{submission}/approve"),
            json!({}),
        )
        .await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    assert_eq!(atlas.log_size().await, before, "nothing appended");
    assert!(
        atlas.rows("SELECT id FROM atlas.entities").await.is_empty(),
        "nothing published"
    );
    let (status, body) = atlas
        .post_as(
            &both,
            &format!("/submissions/{submission}/reject"),
            json!({}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    atlas.stop().await;
}

#[tokio::test]
async fn a_revoked_token_stops_working_at_once_and_a_reissue_replaces_the_old_token() {
    let atlas = Atlas::start().await;
    let first = atlas.issue("eve", &["editor"]).await;
    let (status, _) = atlas.get_as(&first, "/sections").await;
    assert_eq!(status, StatusCode::OK);

    let second = atlas.issue("eve", &["editor"]).await;
    assert_ne!(first, second);
    assert_eq!(
        atlas.get_as(&first, "/sections").await.0,
        StatusCode::UNAUTHORIZED,
        "the old token"
    );
    assert_eq!(atlas.get_as(&second, "/sections").await.0, StatusCode::OK);

    let before = atlas.log_size().await;
    let (status, revoked) = call(
        &atlas,
        Method::DELETE,
        "/admin/users/eve",
        Some(&atlas.admin),
        None,
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{revoked}");
    assert_eq!(revoked["active"], false);
    assert_eq!(
        actors_after(&atlas, before).await,
        vec![Some("admin".to_owned())]
    );
    let (status, _) = atlas
        .post_as(&second, "/sections", json!({"title": "late"}))
        .await;
    assert_eq!(
        status,
        StatusCode::UNAUTHORIZED,
        "revoked before the revoke's answer"
    );
    assert_eq!(
        atlas.get_as(&second, "/sections").await.0,
        StatusCode::UNAUTHORIZED
    );
    let (status, _) = call(
        &atlas,
        Method::DELETE,
        "/admin/users/eve",
        Some(&atlas.admin),
        None,
    )
    .await;
    assert_eq!(status, StatusCode::OK, "a second revoke is harmless");
    let (status, _) = call(
        &atlas,
        Method::DELETE,
        "/admin/users/nobody",
        Some(&atlas.admin),
        None,
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    atlas.stop().await;
}

#[tokio::test]
async fn only_the_administrator_issues_lists_and_revokes_and_the_log_keeps_no_token() {
    let atlas = Atlas::start().await;
    let ed = atlas.issue("ed", &["editor", "reviewer"]).await;
    let before = atlas.log_size().await;
    for token in [None, Some("wrong"), Some(ed.as_str())] {
        let want = if token == Some(ed.as_str()) {
            StatusCode::FORBIDDEN
        } else {
            StatusCode::UNAUTHORIZED
        };
        let (status, _) = call(
            &atlas,
            Method::PUT,
            "/admin/users/x",
            token,
            Some(json!({"roles": ["editor"]})),
        )
        .await;
        assert_eq!(status, want, "PUT with {token:?}");
        let (status, _) = call(&atlas, Method::DELETE, "/admin/users/ed", token, None).await;
        assert_eq!(status, want, "DELETE with {token:?}");
        let (status, _) = call(&atlas, Method::GET, "/admin/users", token, None).await;
        assert_eq!(status, want, "GET with {token:?}");
    }
    for (user, roles) in [
        ("admin", json!(["editor"])),
        ("x", json!([])),
        ("x", json!(["root"])),
        ("a:b", json!(["editor"])),
        ("x", json!("editor")),
    ] {
        let (status, body) = call(
            &atlas,
            Method::PUT,
            &format!("/admin/users/{user}"),
            Some(&atlas.admin),
            Some(json!({"roles": roles})),
        )
        .await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{user} {roles}: {body}");
    }
    assert_eq!(atlas.log_size().await, before, "refusals append nothing");

    // an issue's answer holds the token once: a retry with its key does not show it again
    let issue = || {
        atlas
            .http
            .put(format!("{}/admin/users/kim", atlas.base))
            .bearer_auth(&atlas.admin)
            .header("idempotency-key", "issue-kim")
            .json(&json!({"roles": ["reviewer", "editor"]}))
    };
    let first = issue().send().await.expect("issue");
    assert_eq!(first.status(), StatusCode::CREATED);
    let first: Value = first.json().await.expect("json");
    let token = first["token"].as_str().expect("token").to_owned();
    assert_eq!(token.len(), 64);
    assert_eq!(first["roles"], json!(["editor", "reviewer"]));
    let again: Value = issue()
        .send()
        .await
        .expect("retry")
        .json()
        .await
        .expect("json");
    assert_eq!(
        again["token"],
        Value::Null,
        "a replay does not show the token: {again}"
    );
    assert_eq!(
        atlas.get_as(&token, "/sections").await.0,
        StatusCode::OK,
        "the first answer's token works"
    );

    let events = atlas.state.store.read_all(0, 1000).await.expect("log");
    let log = serde_json::to_string(&events).expect("json");
    assert!(
        !log.contains(&token) && !log.contains(&ed),
        "no token in the log"
    );
    assert!(
        log.contains(&palimpsest_atlas::user::token_sha256(&token)),
        "its hash is"
    );

    let (status, users) = call(
        &atlas,
        Method::GET,
        "/admin/users",
        Some(&atlas.admin),
        None,
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    let kim = users
        .as_array()
        .expect("list")
        .iter()
        .find(|u| u["user_id"] == "kim")
        .expect("kim")
        .clone();
    assert_eq!(kim["active"], true);
    assert!(
        !users
            .to_string()
            .contains(&palimpsest_atlas::user::token_sha256(&token)),
        "no hash listed"
    );
    atlas.stop().await;
}

#[tokio::test]
async fn the_published_map_is_public_and_the_workflow_reads_need_a_user() {
    let atlas = Atlas::start().await;
    let id = atlas.section("reads").await;
    for path in [
        "/entities",
        "/entities/search?q=a",
        "/geometries?minLng=0&minLat=0&maxLng=1&maxLat=1",
        "/openapi.json",
    ] {
        let (status, body) = call(&atlas, Method::GET, path, None, None).await;
        assert_eq!(status, StatusCode::OK, "{path}: {body}");
    }
    let rv = atlas.issue("rv", &["reviewer"]).await;
    for path in [
        "/sections".to_owned(),
        format!("/sections/{id}"),
        format!("/sections/{id}/editor"),
        format!("/sections/{id}/commits"),
        format!("/sections/{id}/submissions"),
    ] {
        assert_eq!(
            call(&atlas, Method::GET, &path, None, None).await.0,
            StatusCode::UNAUTHORIZED,
            "{path}"
        );
        assert_eq!(
            call(&atlas, Method::GET, &path, Some("wrong"), None)
                .await
                .0,
            StatusCode::UNAUTHORIZED,
            "{path}"
        );
        assert_eq!(
            call(&atlas, Method::GET, &path, Some(&rv), None).await.0,
            StatusCode::OK,
            "{path} for any user"
        );
    }
    atlas.stop().await;
}

#[tokio::test]
async fn credentials_are_checked_before_the_body_is_read() {
    let atlas = Atlas::start().await;
    let (status, body) = atlas
        .http
        .post(format!("{}/sections", atlas.base))
        .header("content-type", "application/json")
        .body("{ not json")
        .send()
        .await
        .map(|r| (r.status(), r))
        .expect("request");
    assert_eq!(
        status,
        StatusCode::UNAUTHORIZED,
        "401 before the body's 400: {:?}",
        body.text().await
    );
    atlas.stop().await;
}

/// Who may call an operation of the atlas's OpenAPI document.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Needs {
    Nobody,
    AnyUser,
    Editor,
    Reviewer,
    Admin,
}

/// Every documented operation and who may call it (docs/authorization/atlas-auth.md).
fn needs(method: &str, path: &str) -> Needs {
    match (method, path) {
        ("get", p) if p.starts_with("/entities") || p.starts_with("/geometries") => Needs::Nobody,
        (_, p) if p.starts_with("/admin/") => Needs::Admin,
        ("get", p) if p.starts_with("/sections") => Needs::AnyUser,
        ("post", p) if p.starts_with("/submissions/") => Needs::Reviewer,
        ("post", p) if p.starts_with("/sections") => Needs::Editor,
        _ => panic!("{method} {path} is not in the authorization table"),
    }
}

/// Walks every operation of the document with each kind of principal: none, a wrong token, a
/// user without the role, a user with it, the administrator.
#[tokio::test]
async fn every_documented_operation_answers_each_principal_as_the_model_says() {
    let atlas = Atlas::start().await;
    let ed = atlas.issue("ed", &["editor"]).await;
    let rv = atlas.issue("rv", &["reviewer"]).await;
    let (_, doc) = call(&atlas, Method::GET, "/openapi.json", None, None).await;
    let paths = doc["paths"].as_object().expect("paths");
    let mut walked = 0;
    for (template, item) in paths {
        let path = template
            .replace("{id}", "none")
            .replace("{user_id}", "nobody");
        for method in item.as_object().expect("operations").keys() {
            let needs = needs(method, template);
            let verb = Method::from_bytes(method.to_uppercase().as_bytes()).expect("method");
            let body = match verb {
                Method::GET | Method::DELETE => None,
                Method::PUT => Some(json!({"roles": ["editor"]})),
                _ => Some(json!({})),
            };
            let send = |token: Option<String>| {
                let (verb, path, body) = (verb.clone(), path.clone(), body.clone());
                let atlas = &atlas;
                async move { call(atlas, verb, &path, token.as_deref(), body).await.0 }
            };
            let refused =
                |s: StatusCode| s == StatusCode::UNAUTHORIZED || s == StatusCode::FORBIDDEN;
            let what = format!("{method} {template} ({needs:?})");
            let none = send(None).await;
            let wrong = send(Some("wrong".into())).await;
            if needs == Needs::Nobody {
                assert!(!refused(none) && !refused(wrong), "{what}: {none} {wrong}");
            } else {
                assert_eq!(
                    (none, wrong),
                    (StatusCode::UNAUTHORIZED, StatusCode::UNAUTHORIZED),
                    "{what}"
                );
            }
            let (with_role, without_role) = match needs {
                Needs::Nobody | Needs::AnyUser => (vec![ed.clone(), rv.clone()], vec![]),
                Needs::Editor => (vec![ed.clone()], vec![rv.clone()]),
                Needs::Reviewer => (vec![rv.clone()], vec![ed.clone()]),
                Needs::Admin => (vec![], vec![ed.clone(), rv.clone()]),
            };
            for token in without_role {
                assert_eq!(
                    send(Some(token)).await,
                    StatusCode::FORBIDDEN,
                    "{what} without the role"
                );
            }
            for token in with_role.into_iter().chain([atlas.admin.clone()]) {
                let status = send(Some(token)).await;
                assert!(
                    !refused(status) && !status.is_server_error(),
                    "{what}: {status}"
                );
            }
            walked += 1;
        }
    }
    assert!(walked >= 20, "walked {walked} operations");
    atlas.stop().await;
}
