//! `createDiffHTML` compared with what real Etherpad 1.9.7 answered for the same pad
//! (`tests/fixtures/etherpad/create_diff_html.json`, made as its README says): the pad is built
//! here by the same calls and editor changesets, then every range is asked of both.
//!
//! Author ids and colours are random on both servers; the only normalisation is Etherpad's ids
//! (in the `authora_…` classes) replaced by ours and each author's colour replaced by ours.

mod support;

use serde_json::{Value, json};
use std::collections::HashMap;
use support::Server;

fn fixture() -> Value {
    let path = format!(
        "{}/tests/fixtures/etherpad/create_diff_html.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

const PAD: &str = "fx_diff";

/// A call's form fields.
type Params<'a> = Vec<(&'a str, &'a str)>;

/// Ours for each of Etherpad's author ids.
type Authors = HashMap<String, String>;

async fn token_author(s: &Server, token: &str) -> String {
    let body: Value = s
        .http
        .post(format!("{}/ext/authorForToken", s.base))
        .json(&json!({"apikey": s.key, "token": token}))
        .send()
        .await
        .expect("post")
        .json()
        .await
        .expect("json");
    body["data"]["authorID"].as_str().expect("id").to_owned()
}

/// Our authors standing for the fixture's: the mapped ones by the same mappers, the editor's
/// by the same token.
async fn authors(s: &Server, fx: &Value) -> Authors {
    let mut map = Authors::new();
    for name in ["ann", "bob", "cid"] {
        let ours = s
            .ok(
                "createAuthorIfNotExistsFor",
                &[("authorMapper", &format!("fx_{name}")), ("name", name)],
            )
            .await["authorID"]
            .as_str()
            .expect("id")
            .to_owned();
        map.insert(fx["authors"][name].as_str().expect("id").to_owned(), ours);
    }
    let token = fx["steps"]
        .as_array()
        .expect("steps")
        .iter()
        .find_map(|s| s["token"].as_str())
        .expect("a token");
    let dan = token_author(s, token).await;
    map.insert(fx["authors"]["dan"].as_str().expect("id").to_owned(), dan);
    map
}

/// Etherpad's text with its author ids replaced by ours.
fn ours_for(text: &str, authors: &Authors) -> String {
    authors
        .iter()
        .fold(text.to_owned(), |t, (theirs, ours)| t.replace(theirs, ours))
}

/// The steps the fixture records, on our server.
async fn replay(s: &Server, fx: &Value, authors: &Authors) {
    for step in fx["steps"].as_array().expect("steps") {
        let call = step["call"].as_str().expect("call");
        let params = ours_for(&step["params"].to_string(), authors);
        let mut params: Value = serde_json::from_str(&params).expect("params");
        params["padID"] = json!(PAD);
        if call == "USER_CHANGES" {
            params["authorId"] = json!(authors[fx["authors"]["dan"].as_str().expect("dan")]);
            let (status, body) = s.submit(params).await;
            assert_eq!(status, 200, "{}: {body}", step["edit"]);
            assert_eq!(body["data"], step["answer"], "{}", step["edit"]);
            continue;
        }
        let fields: Vec<(String, String)> = params
            .as_object()
            .expect("params")
            .iter()
            .map(|(k, v)| (k.clone(), v.as_str().expect("text").to_owned()))
            .collect();
        let fields: Vec<(&str, &str)> = fields
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        let (status, body) = s.post_form(call, &fields).await;
        assert_eq!((status, &body), (200, &step["answer"]), "{call}");
    }
}

/// Each CSS rule `.authora_X {background-color: C}` with C cut out, so colours drawn at random
/// on both servers do not differ.
fn without_colours(html: &str) -> String {
    html.split('\n')
        .map(|line| match line.split_once(" {background-color: ") {
            Some((rule, _)) if rule.starts_with(".author") => format!("{rule} {{colour}}"),
            _ => line.to_owned(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Etherpad's answer in our ids (`authora_…` classes write `.` as `_`).
fn expected(theirs: &Value, authors: &Authors) -> Value {
    let underscored: Authors = authors
        .iter()
        .map(|(t, o)| (t.replace('.', "_"), o.replace('.', "_")))
        .collect();
    serde_json::from_str(&ours_for(&theirs.to_string(), &underscored)).expect("json")
}

/// The authors of revisions `from+1 ..= to`, first appearance first (what PadDiff collects).
async fn revision_authors(s: &Server, from: i64, to: i64) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for rev in from + 1..=to {
        let raw = s
            .raw(&format!("pad:{PAD}:revs:{rev}"))
            .await
            .expect("revision");
        let record: Value = serde_json::from_str(&raw).expect("json");
        let author = record["meta"]["author"]
            .as_str()
            .expect("author")
            .to_owned();
        if !out.contains(&author) {
            out.push(author);
        }
    }
    out
}

async fn compare(s: &Server, label: &str, params: &[(&str, &str)], theirs: &Value, a: &Authors) {
    let mut fields = vec![("padID", PAD)];
    fields.extend_from_slice(params);
    let (status, mut ours) = s.post_form("createDiffHTML", &fields).await;
    assert_eq!(status, 200, "{label}: {ours}");
    let mut want = expected(theirs, a);
    for answer in [&mut ours, &mut want] {
        if let Some(html) = answer["data"]["html"].as_str() {
            answer["data"]["html"] = json!(without_colours(html));
        }
    }
    // Etherpad 1.9.7 leaves `authors` out (its getAuthors returns `self._authors`, `self` being
    // the global object); we answer the list it gathered, as its documentation says.
    if let Some(authors) = ours["data"]
        .as_object_mut()
        .and_then(|d| d.remove("authors"))
    {
        assert!(authors.is_array(), "{label}: {authors}");
    }
    assert_eq!(ours, want, "{label}");
}

#[tokio::test]
async fn every_range_answers_as_etherpad_1_9_7() {
    let s = Server::start().await;
    let fx = fixture();
    let a = authors(&s, &fx).await;
    replay(&s, &fx, &a).await;
    let head = fx["head"].as_i64().expect("head");
    for (rev, theirs) in fx["revisions"]
        .as_array()
        .expect("revisions")
        .iter()
        .enumerate()
    {
        let rev = rev.to_string();
        let ours = s
            .ok("getRevisionChangeset", &[("padID", PAD), ("rev", &rev)])
            .await;
        assert_eq!(&ours, theirs, "revision {rev}");
    }
    for (range, theirs) in fx["createDiffHTML"].as_object().expect("ranges") {
        let (from, to) = range.split_once('-').expect("s-e");
        compare(&s, range, &[("startRev", from), ("endRev", to)], theirs, &a).await;
    }
    // The authors PadDiff gathers: every changed revision's, once.
    let (_, answer) = s
        .post_form(
            "createDiffHTML",
            &[
                ("padID", PAD),
                ("startRev", "1"),
                ("endRev", &head.to_string()),
            ],
        )
        .await;
    assert_eq!(
        answer["data"]["authors"],
        json!(revision_authors(&s, 1, head).await)
    );
    s.stop().await;
}

#[tokio::test]
async fn argument_edge_cases_answer_as_etherpad_1_9_7() {
    let s = Server::start().await;
    let fx = fixture();
    let a = authors(&s, &fx).await;
    replay(&s, &fx, &a).await;
    let head = fx["head"].as_i64().expect("head");
    let (above, far, farther) = (
        (head + 5).to_string(),
        (head + 5).to_string(),
        (head + 9).to_string(),
    );
    let edge = &fx["edge_cases"];
    let same: [(&str, Params); 7] = [
        ("no_end", vec![("startRev", "2")]),
        ("above_head", vec![("startRev", "1"), ("endRev", &above)]),
        (
            "start_above_head",
            vec![("startRev", &far), ("endRev", &farther)],
        ),
        ("bad_start", vec![("startRev", "x"), ("endRev", "2")]),
        ("bad_end", vec![("startRev", "1"), ("endRev", "y")]),
        ("negative", vec![("startRev", "-1"), ("endRev", "2")]),
        ("fraction", vec![("startRev", "1.5"), ("endRev", "2")]),
    ];
    for (name, params) in &same {
        compare(&s, name, params, &edge[name], &a).await;
    }
    let (status, missing) = s
        .post_form(
            "createDiffHTML",
            &[
                ("padID", "fx_diff_nope"),
                ("startRev", "0"),
                ("endRev", "1"),
            ],
        )
        .await;
    assert_eq!((status, missing), (200, edge["missing_pad"].clone()));
    // Where Etherpad's PadDiff refuses the range, its API fails on its own error handling
    // (HTTP 500, "createHTTPError.InternalError is not a constructor"); we answer PadDiff's
    // message as an API error.
    let refused: [(&str, Params, &str); 3] = [
        (
            "no_start",
            vec![("endRev", "3")],
            "startRev: undefined endRev: 3",
        ),
        ("neither", vec![], "startRev: undefined endRev: undefined"),
        (
            "start_after_end",
            vec![("startRev", "4"), ("endRev", "2")],
            "startRev: 4 endRev: 2",
        ),
    ];
    for (name, params, range) in &refused {
        assert_eq!(edge[name]["http_status"], json!(500), "{name}");
        let mut fields = vec![("padID", PAD)];
        fields.extend_from_slice(params);
        let (status, ours) = s.post_form("createDiffHTML", &fields).await;
        assert_eq!(
            (status, ours),
            (
                200,
                json!({"code": 1, "message": format!("Invalid revision range. {range}"), "data": null})
            ),
            "{name}"
        );
    }
    s.stop().await;
}
