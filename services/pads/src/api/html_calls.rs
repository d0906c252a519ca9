//! `setHTML` (Etherpad's HTML import, [`crate::import`]) and `createDiffHTML`
//! ([`crate::export::diff_html`]).

use super::envelope::{Data, Failure};
use super::pad_calls::pad_param;
use super::{Ctx, now_ms};
use crate::import;
use serde_json::Value;

/// `setHTML(padID, html, authorId)`: the pad's text becomes what Etherpad imports from `html`.
#[tracing::instrument(skip_all, fields(pad = ?c.p.string("padID")))]
pub async fn set_html(c: Ctx<'_>) -> Result<Data, Failure> {
    let html = match c.p.get("html") {
        Some(Value::String(s)) => s.clone(),
        _ => return Err(Failure::api("html is not a string")),
    };
    let id = pad_param(&c.p, "padID")?;
    let author = c.p.author_id("authorId");
    let now = now_ms();
    let (html, id, author) = (&html, &id, &author);
    c.pads
        .run(&c.request, |load| async move {
            let pad = load.pad(id).await?;
            let authors = load.authors([author.clone()]).await?;
            let decision = import::set_html(&pad, html, author, now, authors)?;
            Ok((decision, Data::null()))
        })
        .await
}
