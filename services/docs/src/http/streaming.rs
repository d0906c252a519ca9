//! Answers written as they are produced (`_changes`, `_all_docs`, `_bulk_get`): a task renders
//! the rows into a [`BodyWriter`], which hands the response body pieces of about [`CHUNK`] bytes
//! through a bounded channel, so however large the answer, the process holds a few pieces of
//! it, not all of it.
//!
//! A route checks everything a client can get wrong before it calls [`respond`] (a bad
//! parameter is still a 4xx with CouchDB's JSON); once the 200 has gone out, a failure can no
//! longer change the status: it is logged and the body ends with an error, so the client sees
//! a broken transfer (chunked encoding without its last chunk), never a complete-looking answer
//! that silently lacks rows.

use super::error::CouchError;
use axum::body::{Body, Bytes};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use std::future::Future;
use tokio::sync::mpsc;

/// Bytes gathered before a piece is handed to the body.
pub const CHUNK: usize = 64 * 1024;

/// Pieces waiting between the task and the connection: the most an answer holds in memory is
/// about `(PIECES + 1) * CHUNK`, plus the row being rendered.
const PIECES: usize = 4;

/// Why a streamed answer stopped before its end.
#[derive(Debug, thiserror::Error)]
pub enum StreamError {
    /// The client closed the connection: nothing is left to tell it.
    #[error("the client went away")]
    Gone,
    /// Reading or rendering failed after the answer started.
    #[error("{}: {}", .0.error, .0.reason)]
    Failed(CouchError),
}

impl From<CouchError> for StreamError {
    fn from(e: CouchError) -> Self {
        StreamError::Failed(e)
    }
}

impl From<tokio_postgres::Error> for StreamError {
    fn from(e: tokio_postgres::Error) -> Self {
        StreamError::Failed(e.into())
    }
}

/// The sending end of a streamed body: text is gathered into pieces of about [`CHUNK`] bytes.
pub struct BodyWriter {
    sender: mpsc::Sender<Result<Bytes, std::io::Error>>,
    buffer: Vec<u8>,
}

impl BodyWriter {
    /// Appends `text`, handing the gathered piece over when it is large enough (waiting while
    /// the client has not taken the earlier ones).
    pub async fn push(&mut self, text: &str) -> Result<(), StreamError> {
        self.push_bytes(text.as_bytes()).await
    }

    /// Appends raw bytes (multipart answers carry attachments as they are).
    pub async fn push_bytes(&mut self, bytes: &[u8]) -> Result<(), StreamError> {
        self.buffer.extend_from_slice(bytes);
        if self.buffer.len() >= CHUNK {
            self.flush().await?;
        }
        Ok(())
    }

    /// Hands over what is gathered now (a feed that waits sends its rows before waiting).
    pub async fn flush(&mut self) -> Result<(), StreamError> {
        if self.buffer.is_empty() {
            return Ok(());
        }
        let piece = Bytes::from(std::mem::replace(
            &mut self.buffer,
            Vec::with_capacity(CHUNK),
        ));
        self.sender
            .send(Ok(piece))
            .await
            .map_err(|_| StreamError::Gone)
    }

    /// Ends the body with an error (the connection is cut without the body's end).
    async fn cut(self, reason: String) {
        // Whether the client is still there to see it does not matter: the log says it.
        let _ = self.sender.send(Err(std::io::Error::other(reason))).await;
    }
}

/// A fresh body and the writer feeding it.
pub fn body() -> (BodyWriter, Body) {
    let (sender, receiver) = mpsc::channel(PIECES);
    let stream = futures::stream::unfold(receiver, |mut receiver| async move {
        receiver.recv().await.map(|piece| (piece, receiver))
    });
    let writer = BodyWriter {
        sender,
        buffer: Vec::with_capacity(CHUNK),
    };
    (writer, Body::from_stream(stream))
}

/// Answers 200 with `content_type` and the body `produce` writes, run as its own task; a
/// failure of `produce` is logged (`what` names the answer) and cuts the body.
pub fn respond<F, Fut>(what: &'static str, content_type: HeaderValue, produce: F) -> Response
where
    F: FnOnce(BodyWriter) -> Fut,
    Fut: Future<Output = Result<BodyWriter, StreamError>> + Send + 'static,
{
    let (writer, body) = body();
    let sender = writer.sender.clone();
    let work = produce(writer);
    tokio::spawn(async move {
        let end = match work.await {
            Ok(mut writer) => writer.flush().await,
            Err(e) => Err(e),
        };
        match end {
            Ok(()) => {}
            Err(StreamError::Gone) => tracing::debug!(answer = what, "the client went away"),
            Err(StreamError::Failed(e)) => {
                tracing::error!(answer = what, error = e.error, reason = %e.reason, "answer cut: it failed after it started");
                BodyWriter {
                    sender,
                    buffer: Vec::new(),
                }
                .cut(format!("{what} failed: {}", e.reason))
                .await;
            }
        }
    });
    (StatusCode::OK, [(header::CONTENT_TYPE, content_type)], body).into_response()
}

/// A streamed JSON answer: see [`respond`].
pub fn json<F, Fut>(what: &'static str, produce: F) -> Response
where
    F: FnOnce(BodyWriter) -> Fut,
    Fut: Future<Output = Result<BodyWriter, StreamError>> + Send + 'static,
{
    respond(what, HeaderValue::from_static("application/json"), produce)
}

/// Starts `sql` on `client`: its rows come as Postgres sends them (the connection stops reading
/// while the answer is not taking them), not gathered first. A statement Postgres refuses is an
/// error here, before any answer starts.
pub async fn query(
    client: &deadpool_postgres::Object,
    sql: &str,
    params: &[&(dyn tokio_postgres::types::ToSql + Sync)],
) -> Result<tokio_postgres::RowStream, CouchError> {
    Ok(client.query_raw(sql, params.iter().copied()).await?)
}

/// [`query`] of a statement prepared once per connection: a text query costs Postgres a parse
/// round trip on every call (tokio-postgres prepares it unnamed first). Only for statements
/// whose generic plan is as good as a custom one (a pull asks `_changes` a hundred times).
pub async fn query_prepared(
    client: &deadpool_postgres::Object,
    sql: &str,
    params: &[&(dyn tokio_postgres::types::ToSql + Sync)],
) -> Result<tokio_postgres::RowStream, CouchError> {
    let statement = client.prepare_cached(sql).await?;
    Ok(client.query_raw(&statement, params.iter().copied()).await?)
}
