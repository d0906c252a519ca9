//! Who calls: the admin (the platform's admin token) or one organisation (a bearer token issued
//! by `issueOrgToken`, kept as its sha32). An organisation's calls never name another org.

use crate::coded_error::CodedError;
use crate::context::Records;
use crate::hash::sha32;
use axum::http::HeaderMap;

/// The caller of a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Caller {
    /// The administrator: every org, Hdr writes, G indexes, purges, export.
    Admin,
    /// One organisation.
    Org(String),
}

impl Caller {
    /// The caller's bearer token checked against the admin token and the issued org tokens.
    pub async fn of(records: &Records, headers: &HeaderMap) -> Result<Caller, CodedError> {
        let token = headers
            .get(axum::http::header::AUTHORIZATION)
            .and_then(|h| h.to_str().ok())
            .and_then(|h| h.strip_prefix("Bearer "))
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .ok_or_else(|| {
                CodedError::unauthenticated("an Authorization: Bearer token is required")
            })?;
        if palimpsest_web::secret::equal(token, &records.app.admin_token) {
            return Ok(Caller::Admin);
        }
        let client = records.app.read.get().await?;
        let row = client
            .query_opt(
                "SELECT org FROM records.tokens WHERE hash = $1",
                &[&sha32(token)],
            )
            .await?;
        row.map(|r| Caller::Org(r.get(0)))
            .ok_or_else(|| CodedError::unauthenticated("unknown bearer token"))
    }

    /// Refuses anyone but the admin.
    pub fn admin(&self, what: &str) -> Result<(), CodedError> {
        match self {
            Caller::Admin => Ok(()),
            Caller::Org(_) => Err(CodedError::forbidden(format!(
                "{what} is for the administrator"
            ))),
        }
    }

    /// The organisation a call acts on: the token's own, or the one an admin names.
    pub fn org(&self, named: Option<&str>) -> Result<String, CodedError> {
        match (self, named) {
            (Caller::Org(own), None) => Ok(own.clone()),
            (Caller::Org(own), Some(named)) if named == own => Ok(own.clone()),
            (Caller::Org(own), Some(named)) => Err(CodedError::forbidden(format!(
                "the token of org {own} cannot act on org {named}"
            ))),
            (Caller::Admin, Some(named)) if crate::class::is_org_code(named) => {
                Ok(named.to_owned())
            }
            (Caller::Admin, Some(named)) => Err(CodedError::bad(format!(
                "org `{named}` must be 1-64 letters, digits, _, - or ."
            ))),
            (Caller::Admin, None) => Err(CodedError::bad("org is required for the administrator")),
        }
    }

    /// The name stored as the events' actor.
    pub fn actor(&self) -> String {
        match self {
            Caller::Admin => "admin".to_owned(),
            Caller::Org(org) => format!("org:{org}"),
        }
    }
}
