//! Pages of the list functions: `limit` rows at most in key order, `next` passed back as
//! `after`, every page answering the first page's `v`, and a document written while a client
//! pages coming again on its next sync.

mod common;

use common::Records;
use serde_json::{Value, json};

fn page_pks(page: &Value) -> Vec<String> {
    page["rows"]
        .as_array()
        .map(|rows| {
            rows.iter()
                .filter_map(|r| r["pk"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

/// Every page of `function` over `args`, `limit` rows each.
async fn all_pages(r: &Records, function: &str, args: Value, limit: i64) -> Vec<Value> {
    let mut pages = Vec::new();
    let mut after = Value::Null;
    loop {
        let mut call = args.clone();
        call["limit"] = json!(limit);
        if !after.is_null() {
            call["after"] = after.clone();
        }
        let page = r.ok(function, call).await;
        after = page["next"].clone();
        pages.push(page);
        if after.is_null() {
            return pages;
        }
    }
}

#[tokio::test]
async fn lists_answer_pages_that_join_into_the_whole_list() {
    let r = Records::start().await;
    for i in 0..7 {
        r.ok("insertDoc", json!({"org": "demo", "data": {"clazz": "Article", "p1": format!("a{i}"), "auteur": "Zola", "taille": i}})).await;
    }
    let whole = r
        .ok("listDocs", json!({"org": "demo", "cl": "Article"}))
        .await;
    assert!(whole["next"].is_null(), "{whole}");
    let expected = page_pks(&whole);
    assert_eq!(expected.len(), 7);
    let mut sorted = expected.clone();
    sorted.sort();
    assert_eq!(expected, sorted, "a list is in pk order");

    let calls = [
        ("listDocs", json!({"org": "demo", "cl": "Article"})),
        (
            "listDocsSk",
            json!({"org": "demo", "cl": "Article", "ik": 1, "val": "Zola"}),
        ),
        (
            "listDocsIdx",
            json!({"org": "demo", "cl": "Article", "ix": "taille", "comp": ">=", "val": 0}),
        ),
    ];
    for (function, args) in calls {
        let pages = all_pages(&r, function, args, 3).await;
        assert_eq!(pages.len(), 3, "{function}: 3 + 3 + 1 rows");
        let joined: Vec<String> = pages.iter().flat_map(page_pks).collect();
        assert_eq!(joined, expected, "{function}");
        let v = pages[0]["v"].clone();
        assert!(
            pages.iter().all(|p| p["v"] == v),
            "{function}: one v per listing"
        );
    }

    let (status, body) = r
        .admin_call(
            "listDocs",
            json!({"org": "demo", "cl": "Article", "limit": 0}),
        )
        .await;
    assert_eq!(status, 400, "{body}");
    r.stop().await;
}

#[tokio::test]
async fn a_document_written_while_a_client_pages_comes_on_its_next_sync() {
    let r = Records::start().await;
    for i in 0..4 {
        r.ok("insertDoc", json!({"org": "demo", "data": {"clazz": "Article", "p1": format!("b{i}"), "auteur": "Hugo"}})).await;
    }
    let args = json!({"org": "demo", "cl": "Article", "ik": 1, "val": "Hugo", "limit": 2});
    let first = r.ok("listDocsSk", args.clone()).await;
    let seen = page_pks(&first);
    // A document whose pk sorts before the cursor, written between the pages.
    let late = (0..100)
        .map(|i| format!("late{i}"))
        .find(|p1| palimpsest_records::hash::sha16(p1).as_str() < seen[1].as_str())
        .expect("a pk before the cursor");
    let written = r
        .ok(
            "insertDoc",
            json!({"org": "demo", "data": {"clazz": "Article", "p1": late, "auteur": "Hugo"}}),
        )
        .await;
    let mut rest = args.clone();
    rest["after"] = first["next"].clone();
    let second = r.ok("listDocsSk", rest).await;
    assert!(!page_pks(&second).contains(&written["pk"].as_str().unwrap_or_default().to_owned()));
    assert_eq!(second["v"], first["v"]);
    let mut next_sync = args.clone();
    next_sync["v"] = first["v"].clone();
    next_sync.as_object_mut().map(|m| m.remove("limit"));
    let again = r.ok("listDocsSk", next_sync).await;
    assert!(
        page_pks(&again).contains(&written["pk"].as_str().unwrap_or_default().to_owned()),
        "{again}"
    );
    r.stop().await;
}

#[tokio::test]
async fn a_whole_sync_keeps_the_rows_its_pages_keep_when_documents_left_and_came_back() {
    let r = Records::start().await;
    let write = |p1: &str, auteur: &str, v: Option<&Value>| {
        let mut args =
            json!({"org": "demo", "data": {"clazz": "Article", "p1": p1, "auteur": auteur}});
        match v {
            Some(v) => {
                args["v"] = v.clone();
                ("updateDoc", args)
            }
            None => ("insertDoc", args),
        }
    };
    // c0 stays with Zola; c1 leaves Zola for Hugo (a del row for Zola); c2 leaves and comes
    // back (a del row for Zola older than its row there); c3 leaves twice (two del rows).
    let mut docs = Vec::new();
    for i in 0..4 {
        let (f, a) = write(&format!("c{i}"), "Zola", None);
        docs.push(r.ok(f, a).await);
    }
    for (i, moves) in [
        (1, &["Hugo"][..]),
        (2, &["Hugo", "Zola"]),
        (3, &["Hugo", "Zola", "Sand"]),
    ] {
        for auteur in moves {
            let (f, a) = write(&format!("c{i}"), auteur, Some(&docs[i]["v"]));
            docs[i] = r.ok(f, a).await;
        }
    }
    let args = json!({"org": "demo", "cl": "Article", "ik": 1, "val": "Zola", "v": 0});
    let whole = r.ok("listDocsSk", args.clone()).await;
    let rows = |page: &Value| page["rows"].as_array().cloned().unwrap_or_default();
    let paged: Vec<Value> = all_pages(&r, "listDocsSk", args, 1)
        .await
        .iter()
        .flat_map(rows)
        .collect();
    assert_eq!(rows(&whole), paged, "{whole}");
    let del = |p1: &str| {
        let pk = palimpsest_records::hash::sha16(p1);
        rows(&whole)
            .iter()
            .find(|row| row["pk"] == pk.as_str())
            .map(|row| row["del"].clone())
    };
    assert_eq!(
        [del("c0"), del("c1"), del("c2"), del("c3")],
        [
            Some(json!(0)),
            Some(json!(1)),
            Some(json!(0)),
            Some(json!(1))
        ],
        "{whole}"
    );
    r.stop().await;
}
