//! Pages of a list. The spec's list functions take a callback so a long list is never held
//! whole; over HTTP the same need is met by pages: `limit` rows at most, in key order, and the
//! answer's `next` to pass back as `after` for the following page.
//!
//! The cursor carries the first page's time `t`: every page of one listing answers the same `v`
//! to store next (`t - DELTA`), so a document written while the client pages (after `t`) comes
//! again on the next sync rather than being skipped.

use crate::coded_error::CodedError;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// Most rows one page may hold.
pub const MAX_LIMIT: i64 = 10_000;

/// Where the next page starts: the first page's time and the last row's key.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cursor {
    /// The time of the listing's first page (its `v` is `t - DELTA`).
    pub t: i64,
    /// The last row's organisation (lists across organisations order by it first).
    #[serde(default)]
    pub org: String,
    /// The last row's pk.
    pub pk: String,
}

/// The paging arguments of a list call: `limit` and `after` (absent: every row at once).
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Paging {
    /// Most rows to answer (1 to [`MAX_LIMIT`]).
    pub limit: Option<i64>,
    /// The previous page's `next`.
    pub after: Option<Cursor>,
}

/// One page as a list query runs it.
#[derive(Debug, Clone)]
pub struct Page {
    /// The listing's time: the first page's (from the cursor) or this read's.
    pub started: i64,
    /// `LIMIT` (`NULL`: no limit).
    pub limit: Option<i64>,
    /// Rows after this key only.
    pub after: Option<Cursor>,
}

impl Paging {
    /// The page these arguments ask for, read at `now`.
    pub fn page(&self, now: i64) -> Result<Page, CodedError> {
        if let Some(limit) = self.limit
            && !(1..=MAX_LIMIT).contains(&limit)
        {
            return Err(CodedError::bad(format!(
                "limit must be 1 to {MAX_LIMIT}, not {limit}"
            )));
        }
        // A cursor's time is one this server answered: never before 1970, never ahead of now.
        if let Some(cursor) = &self.after
            && !(0..=now).contains(&cursor.t)
        {
            return Err(CodedError::bad(format!(
                "after.t must be a time this server gave (0 to {now}), not {}",
                cursor.t
            )));
        }
        Ok(Page {
            started: self.after.as_ref().map_or(now, |c| c.t),
            limit: self.limit,
            after: self.after.clone(),
        })
    }
}

impl Page {
    /// Rows whose pk sorts after this (`""`: from the first).
    pub fn after_pk(&self) -> String {
        self.after
            .as_ref()
            .map(|c| c.pk.clone())
            .unwrap_or_default()
    }

    /// Rows whose `(org, pk)` sorts after this (`("", "")`: from the first).
    pub fn after_org_pk(&self) -> (String, String) {
        self.after
            .as_ref()
            .map(|c| (c.org.clone(), c.pk.clone()))
            .unwrap_or_default()
    }

    /// The cursor of the page after `rows` (the rows this page found), `null` when this page
    /// was not full: there is nothing after it.
    pub fn next(&self, rows: &[tokio_postgres::Row], with_org: bool) -> Value {
        let full = self.limit.is_some_and(|l| rows.len() as i64 >= l);
        match rows.last() {
            Some(last) if full => {
                let org: String = if with_org {
                    last.get("org")
                } else {
                    String::new()
                };
                let pk: String = last.get("pk");
                json!({"t": self.started, "org": org, "pk": pk})
            }
            _ => Value::Null,
        }
    }
}
