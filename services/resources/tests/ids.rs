//! Ids leased in blocks: two processes (two id pools over one log) writing at once get disjoint
//! blocks, so every id is taken once, and a revision's append leaves the counters alone.

mod common;

use bytes::Bytes;
use common::Deki;
use palimpsest_events::DomainEvent;
use palimpsest_events::resources::{IdsEvent, Parent};
use palimpsest_resources::content::{self, ContentConfig};
use palimpsest_resources::http::Resources;
use palimpsest_resources::http::auth::Caller;
use palimpsest_resources::operation::FileWrite;
use palimpsest_resources::resource::Expect;
use palimpsest_resources::streams;
use palimpsest_web::command::{CommandRequest, Reply};

async fn upload(process: &Resources, page: i64, n: usize) {
    let caller = Caller {
        user_id: 10,
        admin: false,
        known: true,
    };
    let upload = content::receive_bytes(&process.content, Bytes::from(format!("body {n}")))
        .await
        .expect("upload");
    let write = FileWrite {
        parent: Parent::Page(page),
        name: format!("f{n}.txt"),
        upload,
        mimetype: "text/plain".into(),
        description: None,
        expect: Expect::default(),
    };
    let write = &write;
    let answer = process
        .execute(
            &CommandRequest::none(),
            caller,
            |mut changeset| async move {
                changeset.put_file(write.clone(), None).await?;
                Ok((
                    changeset,
                    Reply::new(reqwest::StatusCode::OK, "text/plain", "ok"),
                ))
            },
        )
        .await
        .expect("write");
    assert_eq!(answer.status(), 200);
}

#[tokio::test]
async fn two_processes_writing_at_once_never_take_the_same_id() {
    let deki = Deki::start().await;
    let process = || {
        Resources::with_content(
            deki.state.clone(),
            ContentConfig::new(deki.content_dir.clone(), 1024),
        )
    };
    let (one, two) = (process(), process());
    let writes = (0..12).map(|n| {
        let (p, page) = if n % 2 == 0 { (&one, 1) } else { (&two, 2) };
        upload(p, page, n)
    });
    futures::future::join_all(writes).await;

    let rows = deki
        .rows(
            "SELECT count(*) AS revs, count(DISTINCT resrev_id) AS ids, \
             count(DISTINCT resrev_res_id) AS files, count(DISTINCT resrev_changeset_id) AS sets \
             FROM resources.resourcerevs",
        )
        .await;
    let count = |k: &str| rows[0][k].as_i64();
    assert_eq!(
        (count("revs"), count("ids"), count("files"), count("sets")),
        (Some(12), Some(12), Some(12), Some(12))
    );

    // Each pool leased its own blocks (one per kind it used), disjoint; no write appended ids.
    let stream = streams::ids().expect("stream");
    let events = deki
        .state
        .store
        .read_stream(&stream, 0, 100)
        .await
        .expect("read");
    let mut resrev_blocks = Vec::new();
    for event in &events {
        match IdsEvent::decode(event).expect("decode") {
            IdsEvent::IdsLeased { resrev, .. } => resrev_blocks.extend(resrev),
            other => panic!("only leases are appended now, got {other:?}"),
        }
    }
    assert_eq!(events.len(), 8, "two pools × four kinds");
    assert_eq!(resrev_blocks.len(), 2);
    assert!(resrev_blocks[0].last < resrev_blocks[1].first);
    deki.stop().await;
}
