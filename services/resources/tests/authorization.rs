//! Who may call each route (issue #25, defect 5), through the real app: for every write and
//! every guarded read, no key and a wrong key are 401, another user (or a user, where only the
//! administrator may) is 403 with nothing appended, the owner and the administrator succeed.
//! Open reads are open to anyone but a wrong key. Events name their caller, the administrator
//! as `admin`.

mod common;

use common::{ANN, Answer, BOB, Deki, attr};
use reqwest::{Method, StatusCode};
use std::sync::atomic::{AtomicUsize, Ordering};

/// A key nobody holds.
const WRONG: &str = "not-a-key";

/// Who may call a route besides the administrator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum May {
    /// Ann, who made what the route touches (Bob may not).
    Ann,
    /// The administrator alone (Ann may not either).
    Admin,
    /// Anyone, without a key too.
    Anyone,
}

/// A route, and what it is tried on.
#[derive(Debug, Clone, Copy)]
enum Route {
    FilePutByName,
    FilePutById,
    FileDeleteByName,
    FileDeleteById,
    FileMove,
    DescriptionPut,
    DescriptionDelete,
    FileHide,
    ArchiveList,
    ArchiveRestore,
    ArchiveWipe,
    PropertyPut(Parent),
    PropertyCreate(Parent),
    PropertyBatch(Parent),
    PropertyDelete(Parent),
    PropertyList(Parent),
    PropertyValue(Parent),
    PropertyInfo(Parent),
    FileGet,
    FileInfo,
    FileRevisions,
    PageFiles,
}

/// Where a property route's properties hang.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Parent {
    /// Page 1: a property made by Ann.
    Page,
    /// A file Ann uploaded.
    File,
    /// Ann's (user 10).
    User,
    /// The site's.
    Site,
}

/// One request to send.
struct Call {
    method: Method,
    path: String,
    headers: Vec<(&'static str, String)>,
    body: Option<Vec<u8>>,
}

impl Call {
    fn new(method: Method, path: String) -> Call {
        Call {
            method,
            path,
            headers: Vec::new(),
            body: None,
        }
    }

    fn body(mut self, body: &str) -> Call {
        self.headers.push(("content-type", "text/plain".into()));
        self.body = Some(body.as_bytes().to_vec());
        self
    }

    fn json(mut self, body: serde_json::Value) -> Call {
        self.headers
            .push(("content-type", "application/json".into()));
        self.body = Some(body.to_string().into_bytes());
        self
    }

    fn header(mut self, name: &'static str, value: &str) -> Call {
        self.headers.push((name, value.to_owned()));
        self
    }

    async fn send(&self, deki: &Deki, key: Option<&str>) -> Answer {
        let headers: Vec<(&str, &str)> = self
            .headers
            .iter()
            .map(|(name, value)| (*name, value.as_str()))
            .collect();
        deki.send(
            self.method.clone(),
            &self.path,
            key,
            &headers,
            self.body.clone(),
        )
        .await
    }
}

static FRESH: AtomicUsize = AtomicUsize::new(0);

/// A name no other try used.
fn fresh(stem: &str) -> String {
    format!("{stem}{}", FRESH.fetch_add(1, Ordering::Relaxed))
}

/// A file Ann uploaded to page 1, by id, with its name.
async fn anns_file(deki: &Deki) -> (String, String) {
    let name = format!("{}.txt", fresh("f"));
    let file = deki.upload(1, &name, b"ann's").await;
    (attr(&file, "id"), name)
}

/// A file Ann uploaded and deleted (in the archive), by id.
async fn archived(deki: &Deki) -> String {
    let (id, _) = anns_file(deki).await;
    let deleted = deki.delete(&format!("/files/{id}"), ANN).await;
    assert_eq!(deleted.status, StatusCode::OK, "{}", deleted.text());
    id
}

/// The properties' path of `parent` (a fresh file of Ann's for a file).
async fn properties(deki: &Deki, parent: Parent) -> String {
    match parent {
        Parent::Page => "/pages/1/properties".to_owned(),
        Parent::File => format!("/files/{}/properties", anns_file(deki).await.0),
        Parent::User => "/users/10/properties".to_owned(),
        Parent::Site => "/site/properties".to_owned(),
    }
}

/// A property of `parent` made by its owner (Ann, the site's by the administrator): its path.
async fn property(deki: &Deki, parent: Parent) -> String {
    let path = format!("{}/{}", properties(deki, parent).await, fresh("k"));
    let maker = if parent == Parent::Site {
        deki.admin.as_str()
    } else {
        ANN
    };
    let made = deki.put(&path, maker, b"value").await;
    assert_eq!(made.status, StatusCode::OK, "{path}: {}", made.text());
    path
}

/// Makes what `route` is tried on and the request that tries it.
async fn prepare(deki: &Deki, route: Route) -> Call {
    use Method as M;
    match route {
        Route::FilePutByName => {
            let (_, name) = anns_file(deki).await;
            Call::new(M::PUT, format!("/pages/1/files/{name}")).body("new")
        }
        Route::FilePutById => {
            Call::new(M::PUT, format!("/files/{}", anns_file(deki).await.0)).body("new")
        }
        Route::FileDeleteByName => {
            let (_, name) = anns_file(deki).await;
            Call::new(M::DELETE, format!("/pages/1/files/{name}"))
        }
        Route::FileDeleteById => {
            Call::new(M::DELETE, format!("/files/{}", anns_file(deki).await.0))
        }
        Route::FileMove => {
            let (id, _) = anns_file(deki).await;
            let to = fresh("moved");
            Call::new(M::POST, format!("/files/{id}/move?to=2&name={to}.txt"))
        }
        Route::DescriptionPut => Call::new(
            M::PUT,
            format!("/files/{}/description", anns_file(deki).await.0),
        )
        .body("about"),
        Route::DescriptionDelete => {
            let name = format!("{}.txt", fresh("d"));
            let path = format!("/pages/1/files/{name}?description=first");
            let file = deki.put(&path, ANN, b"described").await.json();
            Call::new(
                M::DELETE,
                format!("/files/{}/description", attr(&file, "id")),
            )
        }
        Route::FileHide => {
            let (id, name) = anns_file(deki).await;
            deki.upload(1, &name, b"second").await;
            Call::new(
                M::POST,
                format!("/files/{id}/revisions?hide=true&revisionids=1"),
            )
        }
        Route::ArchiveList => Call::new(M::GET, "/archive/files".into()),
        Route::ArchiveRestore => Call::new(
            M::POST,
            format!("/archive/files/restore/{}", archived(deki).await),
        ),
        Route::ArchiveWipe => Call::new(
            M::DELETE,
            format!("/archive/files/{}", archived(deki).await),
        ),
        Route::PropertyPut(parent) => Call::new(
            M::PUT,
            format!("{}?abort=never", property(deki, parent).await),
        )
        .body("changed"),
        Route::PropertyCreate(parent) => Call::new(M::POST, properties(deki, parent).await)
            .body("made")
            .header("slug", &fresh("slug")),
        Route::PropertyBatch(parent) => {
            let path = property(deki, parent).await;
            let (properties, key) = path.rsplit_once('/').expect("a property path");
            let batch = serde_json::json!({"property": [
                {"@name": key, "contents": "changed"},
                {"@name": fresh("new"), "contents": {"@type": "text/plain", "#text": "new"}}
            ]});
            Call::new(M::PUT, format!("{properties}?abort=never")).json(batch)
        }
        Route::PropertyDelete(parent) => Call::new(M::DELETE, property(deki, parent).await),
        Route::PropertyList(parent) => {
            property(deki, parent).await;
            Call::new(M::GET, properties(deki, parent).await)
        }
        Route::PropertyValue(parent) => Call::new(M::GET, property(deki, parent).await),
        Route::PropertyInfo(parent) => {
            Call::new(M::GET, format!("{}/info", property(deki, parent).await))
        }
        Route::FileGet => Call::new(M::GET, format!("/files/{}", anns_file(deki).await.0)),
        Route::FileInfo => Call::new(M::GET, format!("/files/{}/info", anns_file(deki).await.0)),
        Route::FileRevisions => Call::new(
            M::GET,
            format!("/files/{}/revisions", anns_file(deki).await.0),
        ),
        Route::PageFiles => {
            anns_file(deki).await;
            Call::new(M::GET, "/pages/1/files".into())
        }
    }
}

/// Every route and who may call it.
fn table() -> Vec<(Route, May)> {
    let mut table = vec![
        (Route::FilePutByName, May::Ann),
        (Route::FilePutById, May::Ann),
        (Route::FileDeleteByName, May::Ann),
        (Route::FileDeleteById, May::Ann),
        (Route::FileMove, May::Ann),
        (Route::DescriptionPut, May::Ann),
        (Route::DescriptionDelete, May::Ann),
        (Route::FileHide, May::Admin),
        (Route::ArchiveList, May::Admin),
        (Route::ArchiveRestore, May::Admin),
        (Route::ArchiveWipe, May::Admin),
        (Route::FileGet, May::Anyone),
        (Route::FileInfo, May::Anyone),
        (Route::FileRevisions, May::Anyone),
        (Route::PageFiles, May::Anyone),
    ];
    for parent in [Parent::Page, Parent::File, Parent::User, Parent::Site] {
        let writes = if parent == Parent::Site {
            May::Admin
        } else {
            May::Ann
        };
        let reads = match parent {
            Parent::Page | Parent::File => May::Anyone,
            Parent::User => May::Ann,
            Parent::Site => May::Admin,
        };
        // Anyone with a key may add a property to a page: creating is tried as Bob below.
        if parent != Parent::Page {
            table.push((Route::PropertyCreate(parent), writes));
        }
        table.extend([
            (Route::PropertyPut(parent), writes),
            (Route::PropertyBatch(parent), writes),
            (Route::PropertyDelete(parent), writes),
            (Route::PropertyList(parent), reads),
            (Route::PropertyValue(parent), reads),
            (Route::PropertyInfo(parent), reads),
        ]);
    }
    table
}

/// Each principal, and the status it gets on a route `may` describes.
fn principals(may: May) -> [(&'static str, Option<&'static str>, StatusCode); 4] {
    use StatusCode as S;
    let (bob, ann, none) = match may {
        May::Ann => (S::FORBIDDEN, S::OK, S::UNAUTHORIZED),
        May::Admin => (S::FORBIDDEN, S::FORBIDDEN, S::UNAUTHORIZED),
        May::Anyone => (S::OK, S::OK, S::OK),
    };
    [
        ("no key", None, none),
        ("a wrong key", Some(WRONG), S::UNAUTHORIZED),
        ("bob", Some(BOB), bob),
        ("ann", Some(ANN), ann),
    ]
}

/// Sends `call` as `key`, expecting `want`; a refusal names what was wrong and appends
/// nothing.
async fn expect(
    deki: &Deki,
    route: Route,
    who: &str,
    call: &Call,
    key: Option<&str>,
    want: StatusCode,
) {
    let before = deki.log_size().await;
    let answer = call.send(deki, key).await;
    assert_eq!(
        answer.status,
        want,
        "{route:?} as {who}: {} {}: {}",
        call.method,
        call.path,
        answer.text()
    );
    if !answer.status.is_success() {
        assert!(
            answer.json()["error"].is_string(),
            "{route:?} as {who}: a JSON message: {}",
            answer.text()
        );
        assert_eq!(
            deki.log_size().await,
            before,
            "{route:?} as {who}: a refused request appends nothing"
        );
    }
}

#[tokio::test]
async fn every_route_answers_each_principal_as_deki_would() {
    let deki = Deki::start().await;
    for (route, may) in table() {
        let call = prepare(&deki, route).await;
        for (who, key, want) in principals(may) {
            expect(&deki, route, who, &call, key, want).await;
        }
        // The administrator may do everything; tried on things of its own (Ann's success
        // above may have deleted or moved what the first ones were).
        let call = prepare(&deki, route).await;
        let admin = deki.admin.clone();
        expect(
            &deki,
            route,
            "the administrator",
            &call,
            Some(&admin),
            StatusCode::OK,
        )
        .await;
    }
    deki.stop().await;
}

#[tokio::test]
async fn anyone_with_a_key_adds_files_and_properties_to_a_page_and_owns_them() {
    let deki = Deki::start().await;
    deki.upload(1, "anns.txt", b"ann's").await;
    let bobs = deki.put("/pages/1/files/bobs.txt", BOB, b"bob's").await;
    assert_eq!(bobs.status, StatusCode::OK, "{}", bobs.text());
    let id = attr(&bobs.json(), "id");
    let property = deki
        .send(
            Method::POST,
            "/pages/1/properties",
            Some(BOB),
            &[("slug", "bobs")],
            Some(b"x".to_vec()),
        )
        .await;
    assert_eq!(property.status, StatusCode::OK, "{}", property.text());
    let before = deki.log_size().await;
    for refused in [
        deki.put(&format!("/files/{id}"), ANN, b"ann's now").await,
        deki.put("/pages/1/properties/bobs?abort=never", ANN, b"y")
            .await,
        deki.delete("/pages/1/properties/bobs", ANN).await,
    ] {
        assert_eq!(refused.status, StatusCode::FORBIDDEN, "{}", refused.text());
    }
    assert_eq!(deki.log_size().await, before, "nothing appended");
    assert_eq!(
        deki.delete(&format!("/files/{id}"), BOB).await.status,
        StatusCode::OK
    );
    deki.stop().await;
}

/// Moving a file is Ann's business, but a file cannot be taken over by naming it: Bob's
/// upload under the name of Ann's live file is refused, not a new revision of hers.
#[tokio::test]
async fn a_users_file_is_not_taken_over_by_its_name_or_through_its_properties() {
    let deki = Deki::start().await;
    let file = deki.upload(1, "a.txt", b"ann's").await;
    let id = attr(&file, "id");
    let before = deki.log_size().await;
    let case = deki.put("/pages/1/files/A.TXT", BOB, b"bob's").await;
    assert_eq!(case.status, StatusCode::FORBIDDEN, "{}", case.text());
    assert!(
        case.json()["error"]
            .as_str()
            .unwrap_or("")
            .contains("belongs to user 10"),
        "{}",
        case.text()
    );
    let batch = serde_json::json!({"property": {"@name": "k", "contents": "v"}});
    let through = deki
        .send(
            Method::PUT,
            &format!("/files/{id}/properties"),
            Some(BOB),
            &[("content-type", "application/json")],
            Some(batch.to_string().into_bytes()),
        )
        .await;
    assert_eq!(through.status, StatusCode::FORBIDDEN, "{}", through.text());
    assert_eq!(deki.log_size().await, before, "nothing appended");
    assert_eq!(
        deki.get(&format!("/files/{id}"), None).await.text(),
        "ann's"
    );
    deki.stop().await;
}

/// The administrator's events say so (`admin`), a user's name the user: both carry Deki's
/// user ids in the rows (the administrator's is 1).
#[tokio::test]
async fn every_event_names_its_caller_and_the_administrator_as_admin() {
    let deki = Deki::start().await;
    let before = deki.log_size().await;
    deki.upload(1, "a.txt", b"ann's").await;
    let site = deki
        .put("/site/properties/theme", &deki.admin.clone(), b"dark")
        .await;
    assert_eq!(site.status, StatusCode::OK, "{}", site.text());
    assert_eq!(site.json()["user.modified"]["@id"], "1");
    let actors = deki
        .rows(&format!(
            "SELECT category, actor FROM log.events WHERE context = 'resources' AND position > {before} ORDER BY position"
        ))
        .await;
    assert!(!actors.is_empty());
    for row in &actors {
        assert!(
            row["actor"] == "10" || row["actor"] == "admin",
            "every event names its caller: {actors:?}"
        );
    }
    let of = |category: &str, actor: &str| {
        actors
            .iter()
            .any(|row| row["category"] == category && row["actor"] == actor)
    };
    assert!(of("resource", "10"), "{actors:?}");
    assert!(of("resource", "admin"), "{actors:?}");
    deki.stop().await;
}

/// A key is checked from the headers before a body is read: a write without a valid key is
/// refused while its body is still being sent (a streamed upload as well as the routes that
/// read their body whole), and nothing reaches the content store.
#[tokio::test]
async fn a_write_without_a_valid_key_is_refused_before_its_body_is_read() {
    let deki = Deki::start().await;
    let routes = [
        ("PUT", "/pages/1/files/big.bin"),
        ("PUT", "/files/1"),
        ("PUT", "/files/1/description"),
        ("PUT", "/pages/1/properties"),
        ("PUT", "/users/10/properties/k"),
    ];
    for (method, path) in routes {
        for key in [None, Some(WRONG)] {
            let status = unfinished(&deki, method, path, key).await;
            assert_eq!(status, 401, "{method} {path} with {key:?}");
        }
    }
    assert_eq!(deki.stored_files(), 0, "nothing stored");
    deki.stop().await;
}

/// Sends `method path` with a body announced as 1,000,000 bytes of which 1,000 are sent, and
/// returns the answer's status (waiting at most 10 s: a server reading the body first would
/// wait for the rest until its body timeout).
async fn unfinished(deki: &Deki, method: &str, path: &str, key: Option<&str>) -> u16 {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let address = deki
        .base
        .trim_start_matches("http://")
        .split('/')
        .next()
        .expect("host:port")
        .to_owned();
    let mut stream = tokio::net::TcpStream::connect(&address)
        .await
        .expect("connect");
    let authorization = key.map_or(String::new(), |key| {
        format!("Authorization: Bearer {key}\r\n")
    });
    let head = format!(
        "{method} /resources/@api/deki{path} HTTP/1.1\r\nHost: {address}\r\n{authorization}Content-Type: application/json\r\nContent-Length: 1000000\r\n\r\n"
    );
    stream.write_all(head.as_bytes()).await.expect("head");
    stream.write_all(&[b' '; 1000]).await.expect("some body");
    let mut answer = vec![0u8; 12];
    tokio::time::timeout(
        std::time::Duration::from_secs(10),
        stream.read_exact(&mut answer),
    )
    .await
    .unwrap_or_else(|_| panic!("{method} {path}: no answer while the body was unfinished"))
    .expect("read");
    let line = String::from_utf8_lossy(&answer).into_owned();
    line.trim_start_matches("HTTP/1.1 ")
        .trim()
        .parse()
        .unwrap_or_else(|_| panic!("a status line: {line}"))
}
