//! The files due for purge, read from the `FTP` row table.

use crate::coded_error::CodedError;
use crate::context::Records;

/// `(org, path, p)` of every listed file whose day of purge is at or before `dp`, by org and path.
pub async fn listed(records: &Records, dp: i64) -> Result<Vec<(String, String, i64)>, CodedError> {
    let client = records.app.read.get().await?;
    let rows = client
        .query(
            "SELECT org, path, p FROM records.\"FTP\" WHERE p <= $1 ORDER BY org, path",
            &[&dp],
        )
        .await?;
    Ok(rows
        .iter()
        .map(|r| (r.get(0), r.get(1), r.get(2)))
        .collect())
}
