//! A list without `limit` (every row at once, the whole sync), written as its rows are read:
//! Postgres hands the rows in the answer's order ([`RowStream`]), batches of them are opened on
//! the blocking pool as a page's are ([`open_rows`], every core), and the pieces go to the
//! connection through a bounded channel. However large the organisation, the process holds two
//! batches of rows and a few pieces, never the whole answer.
//!
//! Everything a client can get wrong is checked before the stream starts (the query itself is
//! started first: a statement Postgres refuses is still a JSON error with its status). Once the
//! 200 has gone out a failure cannot change the status: it is logged and the body ends with an
//! error, so the client sees a broken transfer (chunked encoding without its last chunk), never
//! a complete-looking answer that lacks rows.

use crate::coded_error::CodedError;
use crate::http::listing::{HEAD, ROWS_PER_THREAD, open_rows};
use crate::read::rows::StartedQuery;
use crate::seal::SiteKey;
use axum::body::{Body, Bytes};
use futures::{Stream, StreamExt};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio_postgres::{Row, RowStream};

/// Pieces waiting between the reading task and the connection.
const PIECES: usize = 4;

/// What the body's channel carries: a piece, or the error that cuts the body.
type Piece = Result<Bytes, std::io::Error>;

/// A started list query, with the connection it runs on and how its rows are written.
pub struct Reader {
    /// Held until the last row is read: the rows come over it.
    client: deadpool_postgres::Object,
    rows: RowStream,
    key: SiteKey,
    with_org: bool,
}

/// Why a streamed list stopped before its end.
enum Stop {
    /// The client closed the connection.
    Gone,
    /// Reading or opening a row failed; the reason the body is cut with.
    Failed(String),
}

impl From<CodedError> for Stop {
    fn from(failure: CodedError) -> Self {
        // `CodedError::internal` has logged the detail already.
        Stop::Failed(failure.message)
    }
}

impl From<tokio_postgres::Error> for Stop {
    fn from(e: tokio_postgres::Error) -> Self {
        tracing::error!(error = %e, "records: reading a list's rows failed");
        Stop::Failed(e.to_string())
    }
}

impl Reader {
    /// The rows of a started query, written with `key` (and each row's `org` when `with_org`).
    pub fn new(query: StartedQuery, key: SiteKey, with_org: bool) -> Reader {
        let StartedQuery { client, rows } = query;
        Reader {
            client,
            rows,
            key,
            with_org,
        }
    }

    /// The body: [`HEAD`], the rows as they are read and opened, then `tail`; written by a
    /// task of its own, cut with an error (and a log line) if it fails after it started.
    pub fn into_body(self, tail: Bytes) -> Body {
        let (sender, receiver) = mpsc::channel::<Piece>(PIECES);
        tokio::spawn(async move {
            match self.write(tail, &sender).await {
                Ok(()) => {}
                Err(Stop::Gone) => tracing::debug!("records: a list's client went away"),
                Err(Stop::Failed(reason)) => {
                    tracing::error!(%reason, "records: list cut, it failed after it started");
                    // Whether the client is still there to see it does not matter: logged.
                    let _ = sender
                        .send(Err(std::io::Error::other(format!("list failed: {reason}"))))
                        .await;
                }
            }
        });
        Body::from_stream(futures::stream::unfold(receiver, |mut receiver| async {
            receiver.recv().await.map(|piece| (piece, receiver))
        }))
    }

    /// Sends the whole answer: each batch is opened on the blocking pool while the next one
    /// is read.
    async fn write(self, tail: Bytes, sender: &mpsc::Sender<Piece>) -> Result<(), Stop> {
        let Reader {
            client,
            rows,
            key,
            with_org,
        } = self;
        // Fused: a batch that ends short reads the end again on the next turn.
        let mut rows = std::pin::pin!(rows.fuse());
        send(sender, Bytes::from_static(HEAD)).await?;
        let batch = batch_rows();
        let mut first = true;
        let mut opening: Option<JoinHandle<Result<Vec<Bytes>, CodedError>>> = None;
        loop {
            let found = read_batch(&mut rows, batch).await?;
            if let Some(job) = opening.take() {
                let pieces = job.await.map_err(CodedError::internal)??;
                for piece in pieces {
                    if !first {
                        send(sender, Bytes::from_static(b",")).await?;
                    }
                    first = false;
                    send(sender, piece).await?;
                }
            }
            if found.is_empty() {
                break;
            }
            let key = key.clone();
            opening = Some(tokio::task::spawn_blocking(move || {
                open_rows(&key, &found.iter().collect::<Vec<_>>(), with_org)
            }));
        }
        drop(client);
        send(sender, tail).await
    }
}

/// Rows read before a batch is opened: enough for every core to take [`ROWS_PER_THREAD`].
fn batch_rows() -> usize {
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    cores * ROWS_PER_THREAD
}

/// Up to `most` rows from `rows` (fewer at the end, none after it).
async fn read_batch(
    rows: &mut (impl Stream<Item = Result<Row, tokio_postgres::Error>> + Unpin),
    most: usize,
) -> Result<Vec<Row>, Stop> {
    let mut found = Vec::with_capacity(most);
    while found.len() < most {
        match rows.next().await {
            Some(row) => found.push(row?),
            None => break,
        }
    }
    Ok(found)
}

/// Hands `piece` to the connection, waiting while the client has not taken the earlier ones.
async fn send(sender: &mpsc::Sender<Piece>, piece: Bytes) -> Result<(), Stop> {
    sender.send(Ok(piece)).await.map_err(|_| Stop::Gone)
}
