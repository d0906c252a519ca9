//! Design documents past Sync Gateway (issue #28): views queried with each built-in reduce and
//! key ranges, computed over the caller's readable documents only; a runaway map function is
//! an error with CouchDB's JSON; a function that does not compile is refused when saved.

mod common;

use common::Docs;
use serde_json::{Value, json};

/// A database anyone may read (CouchDB's admin party), with documents `d0`..`d5`
/// (`n` = 0..5, `tag` a for even, b for odd) and the design document `_design/v`.
async fn numbers(docs: &Docs) {
    assert_eq!(docs.as_admin("PUT", "/db", None).await.0, 201);
    let rows: Vec<Value> = (0..6)
        .map(|n| json!({"_id": format!("d{n}"), "n": n, "tag": if n % 2 == 0 { "a" } else { "b" }}))
        .collect();
    let (status, _) = docs
        .call("POST", "/db/_bulk_docs", Some(json!({"docs": rows})))
        .await;
    assert_eq!(status, 201);
    let ddoc = json!({"views": {
        "by_tag": {"map": "function (doc) { emit([doc.tag, doc.n], doc.n); }"},
        "count": {"map": "function (doc) { emit(doc.tag, 1); }", "reduce": "_count"},
        "sum": {"map": "function (doc) { emit([doc.tag, doc.n], doc.n); }", "reduce": "_sum"},
        "stats": {"map": "function (doc) { emit(doc.tag, doc.n); }", "reduce": "_stats"},
    }});
    let (status, put) = docs.as_admin("PUT", "/db/_design/v", Some(ddoc)).await;
    assert_eq!(status, 201, "{put}");
}

/// Database `chan` (the guest disabled) with users `ann` (channel a) and `bob` (channel b),
/// the documents `id → channel` written by the administrator, and the design document
/// `_design/all` (`ddoc`).
async fn channels(docs: &Docs, documents: &[(&str, &str)], ddoc: Value) {
    assert_eq!(docs.admin("PUT", "/_admin/chan", "{}").await.0, 201);
    for (name, channel) in [("ann", "a"), ("bob", "b")] {
        let user = json!({"password": "pw", "admin_channels": [channel]}).to_string();
        let path = format!("/_admin/chan/_user/{name}");
        assert_eq!(docs.admin("PUT", &path, &user).await.0, 200);
    }
    for (id, channel) in documents {
        let body = json!({"channels": [channel], "secret": id});
        let path = format!("/chan/{id}");
        assert_eq!(docs.as_admin("PUT", &path, Some(body)).await.0, 201);
    }
    assert_eq!(
        docs.as_admin("PUT", "/chan/_design/all", Some(ddoc))
            .await
            .0,
        201
    );
}

fn ids(answer: &Value) -> Vec<&str> {
    answer["rows"]
        .as_array()
        .expect("rows")
        .iter()
        .map(|row| row["id"].as_str().expect("id"))
        .collect()
}

#[tokio::test]
async fn a_view_answers_key_ranges_keys_and_include_docs_in_collation_order() {
    let docs = Docs::start().await;
    numbers(&docs).await;
    let (status, all) = docs.call("GET", "/db/_design/v/_view/by_tag", None).await;
    assert_eq!(status, 200, "{all}");
    assert_eq!(ids(&all), ["d0", "d2", "d4", "d1", "d3", "d5"]);
    assert_eq!(
        (all["total_rows"].clone(), all["offset"].clone()),
        (json!(6), json!(0))
    );

    let range =
        "/db/_design/v/_view/by_tag?start_key=[\"a\",2]&end_key=[\"b\",3]&inclusive_end=false";
    let (_, some) = docs.call("GET", range, None).await;
    assert_eq!(ids(&some), ["d2", "d4", "d1"], "{some}");
    let down = "/db/_design/v/_view/by_tag?startkey=[\"b\",3]&endkey=[\"a\",2]&descending=true&skip=1&limit=2";
    let (_, down) = docs.call("GET", down, None).await;
    assert_eq!(ids(&down), ["d1", "d4"], "{down}");
    let (_, one) = docs
        .call(
            "GET",
            "/db/_design/v/_view/by_tag?key=[\"b\",5]&include_docs=true",
            None,
        )
        .await;
    assert_eq!(one["rows"][0]["doc"]["n"], 5, "{one}");
    let (status, keyed) = docs
        .call(
            "POST",
            "/db/_design/v/_view/by_tag",
            Some(json!({"keys": [["b", 5], ["a", 0]]})),
        )
        .await;
    assert_eq!(status, 200, "{keyed}");
    assert_eq!(ids(&keyed), ["d5", "d0"]);
    docs.stop().await;
}

#[tokio::test]
async fn count_sum_and_stats_reduce_grouped_or_not() {
    let docs = Docs::start().await;
    numbers(&docs).await;
    let (_, count) = docs.call("GET", "/db/_design/v/_view/count", None).await;
    assert_eq!(count["rows"], json!([{"key": null, "value": 6}]), "{count}");
    let (_, grouped) = docs
        .call("GET", "/db/_design/v/_view/count?group=true", None)
        .await;
    assert_eq!(
        grouped["rows"],
        json!([{"key": "a", "value": 3}, {"key": "b", "value": 3}])
    );
    let (_, sum) = docs
        .call("GET", "/db/_design/v/_view/sum?group_level=1", None)
        .await;
    assert_eq!(
        sum["rows"],
        json!([{"key": ["a"], "value": 6}, {"key": ["b"], "value": 9}])
    );
    let (_, stats) = docs
        .call("GET", "/db/_design/v/_view/stats?key=\"b\"", None)
        .await;
    assert_eq!(
        stats["rows"][0]["value"],
        json!({"sum": 9, "count": 3, "min": 1, "max": 5, "sumsqr": 35})
    );
    let (_, unreduced) = docs
        .call("GET", "/db/_design/v/_view/count?reduce=false", None)
        .await;
    assert_eq!(unreduced["total_rows"], 6, "{unreduced}");
    let (status, refused) = docs
        .call("GET", "/db/_design/v/_view/count?include_docs=true", None)
        .await;
    assert_eq!(
        (status, refused["error"].clone()),
        (400, json!("query_parse_error"))
    );
    docs.stop().await;
}

#[tokio::test]
async fn a_missing_view_or_design_document_is_a_404() {
    let docs = Docs::start().await;
    numbers(&docs).await;
    for path in ["/db/_design/v/_view/none", "/db/_design/none/_view/count"] {
        let (status, answer) = docs.call("GET", path, None).await;
        assert_eq!(
            (status, answer["error"].clone()),
            (404, json!("not_found")),
            "{path}"
        );
    }
    docs.stop().await;
}

#[tokio::test]
async fn a_user_sees_through_a_view_only_the_documents_of_its_channels() {
    let docs = Docs::start().await;
    let ddoc = json!({"views": {"all": {"map": "function (doc) { emit(doc.secret, doc); }"}}});
    channels(&docs, &[("a1", "a"), ("a2", "a"), ("b1", "b")], ddoc).await;

    let (status, ann) = docs
        .as_user(
            "ann",
            "pw",
            "GET",
            "/chan/_design/all/_view/all?include_docs=true",
            None,
        )
        .await;
    assert_eq!(status, 200, "{ann}");
    assert_eq!(ids(&ann), ["a1", "a2"], "ann reads channel a only: {ann}");
    assert_eq!(ann["total_rows"], 2);
    let (_, bob) = docs
        .as_user("bob", "pw", "GET", "/chan/_design/all/_view/all", None)
        .await;
    assert_eq!(ids(&bob), ["b1"], "{bob}");
    let (_, admin) = docs
        .as_admin("GET", "/chan/_design/all/_view/all", None)
        .await;
    assert_eq!(ids(&admin), ["a1", "a2", "b1"]);
    let (status, _) = docs.call("GET", "/chan/_design/all/_view/all", None).await;
    assert_eq!(status, 401, "the guest is disabled in this database");
    let (status, _) = docs
        .as_user("ann", "wrong", "GET", "/chan/_design/all/_view/all", None)
        .await;
    assert_eq!(status, 401, "wrong credentials");
    docs.stop().await;
}

#[tokio::test]
async fn a_runaway_map_function_is_an_error_and_one_that_does_not_compile_is_refused() {
    let docs = Docs::start().await;
    numbers(&docs).await;
    let spin = json!({"views": {"spin": {"map": "function (doc) { while (true) {} }"}}});
    assert_eq!(
        docs.as_admin("PUT", "/db/_design/spin", Some(spin)).await.0,
        201
    );
    let (status, answer) = docs.call("GET", "/db/_design/spin/_view/spin", None).await;
    assert_eq!(status, 500, "{answer}");
    assert_eq!(answer["error"], "os_process_error", "{answer}");

    let broken = json!({"views": {"broken": {"map": "function (doc) {"}}});
    let (status, answer) = docs
        .as_admin("PUT", "/db/_design/broken", Some(broken))
        .await;
    assert_eq!(
        (status, answer["error"].clone()),
        (400, json!("compilation_error")),
        "{answer}"
    );
    let (status, _) = docs.call("GET", "/db/_design/broken", None).await;
    assert_eq!(status, 404, "nothing was stored");
    docs.stop().await;
}

/// The ids of a `_changes` answer's rows, in order.
fn changed(answer: &Value) -> Vec<&str> {
    answer["results"]
        .as_array()
        .expect("results")
        .iter()
        .map(|row| row["id"].as_str().expect("id"))
        .collect()
}

/// Writes `_design/f`: a filter by parity (`req.query.p`) and a view emitting for odd `n`.
async fn filters(docs: &Docs) {
    let ddoc = json!({
        "filters": {"parity": "function (doc, req) { return doc.n % 2 === Number(req.query.p); }"},
        "views": {"odd": {"map": "function (doc) { if (doc.n % 2 === 1) emit(doc._id); }"}},
    });
    let (status, answer) = docs.as_admin("PUT", "/db/_design/f", Some(ddoc)).await;
    assert_eq!(status, 201, "{answer}");
}

#[tokio::test]
async fn changes_are_filtered_by_a_design_function_with_its_query_or_by_a_view() {
    let docs = Docs::start().await;
    numbers(&docs).await;
    filters(&docs).await;
    let (status, odd) = docs
        .call("GET", "/db/_changes?filter=f/parity&p=1", None)
        .await;
    assert_eq!(status, 200, "{odd}");
    assert_eq!(changed(&odd), ["d1", "d3", "d5"]);
    let (_, even) = docs
        .call(
            "GET",
            "/db/_changes?filter=f/parity&p=0&limit=2&include_docs=true",
            None,
        )
        .await;
    assert_eq!(
        changed(&even),
        ["d0", "d2"],
        "the limit counts kept rows: {even}"
    );
    assert_eq!(even["results"][1]["doc"]["n"], 2);
    let (_, by_view) = docs
        .call("GET", "/db/_changes?filter=_view&view=f/odd", None)
        .await;
    assert_eq!(changed(&by_view), ["d1", "d3", "d5"]);
    let (_, implied) = docs.call("GET", "/db/_changes?view=f/odd", None).await;
    assert_eq!(
        changed(&implied),
        ["d1", "d3", "d5"],
        "view alone implies _view"
    );
    docs.stop().await;
}

#[tokio::test]
async fn a_missing_design_document_filter_or_view_is_couchdbs_error() {
    let docs = Docs::start().await;
    numbers(&docs).await;
    filters(&docs).await;
    for (path, status, error) in [
        ("/db/_changes?filter=f/none", 404, "not_found"),
        ("/db/_changes?filter=none/parity", 404, "not_found"),
        ("/db/_changes?filter=_view&view=f/none", 404, "not_found"),
        ("/db/_changes?filter=_view&view=v/parity", 404, "not_found"),
        ("/db/_changes?filter=_view", 400, "bad_request"),
    ] {
        let (got, answer) = docs.call("GET", path, None).await;
        assert_eq!(
            (got, answer["error"].clone()),
            (status, json!(error)),
            "{path}: {answer}"
        );
    }
    docs.stop().await;
}

#[tokio::test]
async fn a_user_sees_through_a_filter_only_the_documents_of_its_channels() {
    let docs = Docs::start().await;
    let ddoc = json!({
        "filters": {"all": "function (doc) { return true; }"},
        "views": {"all": {"map": "function (doc) { emit(doc._id); }"}},
    });
    channels(&docs, &[("a1", "a"), ("b1", "b"), ("b2", "b")], ddoc).await;
    for path in [
        "/chan/_changes?filter=all/all",
        "/chan/_changes?filter=_view&view=all/all",
    ] {
        let (status, ann) = docs.as_user("ann", "pw", "GET", path, None).await;
        assert_eq!(status, 200, "{ann}");
        assert_eq!(changed(&ann), ["a1"], "{path}: {ann}");
    }
    docs.stop().await;
}

/// `_design/validate`: no `bad` member (403) and, for users, a name (401).
fn validator() -> Value {
    json!({"validate_doc_update": "function (newDoc, oldDoc, userCtx, secObj) { \
        if (newDoc.bad) throw({forbidden: 'bad is not allowed'}); \
        if (newDoc.anonymous) throw({unauthorized: 'log in first'}); \
        if (oldDoc && oldDoc.frozen) throw({forbidden: 'frozen'}); }"})
}

#[tokio::test]
async fn validate_doc_update_refuses_with_403_or_401_and_bulk_docs_answers_per_document() {
    let docs = Docs::start().await;
    assert_eq!(docs.as_admin("PUT", "/db", None).await.0, 201);
    assert_eq!(
        docs.as_admin("PUT", "/db/_design/validate", Some(validator()))
            .await
            .0,
        201
    );

    let (status, answer) = docs.call("PUT", "/db/a", Some(json!({"bad": true}))).await;
    assert_eq!(status, 403, "{answer}");
    assert_eq!(
        answer,
        json!({"error": "forbidden", "reason": "bad is not allowed"})
    );
    let (status, answer) = docs
        .call("PUT", "/db/a", Some(json!({"anonymous": true})))
        .await;
    assert_eq!(status, 401, "{answer}");
    assert_eq!(
        answer,
        json!({"error": "unauthorized", "reason": "log in first"})
    );
    let (status, frozen) = docs
        .call("PUT", "/db/f", Some(json!({"frozen": true})))
        .await;
    assert_eq!(status, 201, "{frozen}");
    let edit = json!({"_rev": frozen["rev"], "frozen": false});
    assert_eq!(
        docs.call("PUT", "/db/f", Some(edit)).await.0,
        403,
        "oldDoc is the stored one"
    );

    let batch = json!({"docs": [{"_id": "ok", "n": 1}, {"_id": "no", "bad": 1}, {"_id": "who", "anonymous": 1}]});
    let (status, items) = docs.call("POST", "/db/_bulk_docs", Some(batch)).await;
    assert_eq!(status, 201, "{items}");
    assert_eq!(items[0]["ok"], true, "{items}");
    assert_eq!(
        (items[1]["id"].clone(), items[1]["error"].clone()),
        (json!("no"), json!("forbidden"))
    );
    assert_eq!(items[2]["error"], "unauthorized", "{items}");
    let replicated = json!({"new_edits": false, "docs": [
        {"_id": "r1", "_rev": "1-a", "n": 1},
        {"_id": "r2", "_rev": "1-b", "bad": true},
    ]});
    let (_, items) = docs.call("POST", "/db/_bulk_docs", Some(replicated)).await;
    assert_eq!(
        items,
        json!([{"id": "r2", "error": "forbidden", "reason": "bad is not allowed"}])
    );
    assert_eq!(docs.call("GET", "/db/r1", None).await.0, 200);
    assert_eq!(docs.call("GET", "/db/r2", None).await.0, 404);
    docs.stop().await;
}

#[tokio::test]
async fn a_validator_follows_its_design_document_through_edits_and_deletion() {
    let docs = Docs::start().await;
    assert_eq!(docs.as_admin("PUT", "/db", None).await.0, 201);
    let (_, first) = docs
        .as_admin("PUT", "/db/_design/validate", Some(validator()))
        .await;
    assert_eq!(
        docs.call("PUT", "/db/a", Some(json!({"bad": true})))
            .await
            .0,
        403
    );
    let mut lenient = json!({"validate_doc_update": "function (doc) { if (doc.worse) throw({forbidden: 'worse'}); }"});
    lenient["_rev"] = first["rev"].clone();
    let (status, second) = docs
        .as_admin("PUT", "/db/_design/validate", Some(lenient))
        .await;
    assert_eq!(status, 201, "{second}");
    assert_eq!(
        docs.call("PUT", "/db/a", Some(json!({"bad": true})))
            .await
            .0,
        201
    );
    assert_eq!(
        docs.call("PUT", "/db/b", Some(json!({"worse": true})))
            .await
            .0,
        403
    );
    let path = format!(
        "/db/_design/validate?rev={}",
        second["rev"].as_str().expect("rev")
    );
    assert_eq!(docs.as_admin("DELETE", &path, None).await.0, 200);
    assert_eq!(
        docs.call("PUT", "/db/b", Some(json!({"worse": true})))
            .await
            .0,
        201,
        "no validator left"
    );
    docs.stop().await;
}
