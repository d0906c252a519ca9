//! Who calls: the admin (the platform's admin token), one organisation (a bearer token issued
//! by `issueOrgToken`, kept as its sha32), or the server itself in its background tasks. An
//! organisation's calls never name another org.

use crate::coded_error::CodedError;
use crate::context::Records;
use crate::hash::sha32;
use axum::http::HeaderMap;

/// The caller of a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Caller {
    /// The administrator: every org, Hdr writes, G indexes, purges, export.
    Admin,
    /// One organisation, through one of its tokens.
    Org {
        /// The organisation.
        org: String,
        /// The token's id: its sha32, as the `OrgTokenIssued` event that issued it records
        /// (the token itself is never stored), so an event names which token caused it.
        token: String,
    },
    /// The server itself, in a task nobody's request started (the schema's classes, zombie
    /// retention, deferred tasks): the administrator's rights, and its events name its role
    /// (`system:<role>`), so the log never credits the administrator with what no one asked.
    Server(&'static str),
}

/// The role of the server's zombie retention ([`crate::retention`]).
pub const RETENTION: Caller = Caller::Server("retention");
/// The role of the server's deferred task runner ([`crate::tasks`]).
pub const TASKS: Caller = Caller::Server("tasks");
/// The role of the server's declaration of the schema file's classes.
pub const SCHEMA: Caller = Caller::Server("schema");

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
        let hash = sha32(token);
        let row = client
            .query_opt("SELECT org FROM records.tokens WHERE hash = $1", &[&hash])
            .await?;
        row.map(|r| Caller::Org {
            org: r.get(0),
            token: hash,
        })
        .ok_or_else(|| CodedError::unauthenticated("unknown bearer token"))
    }

    /// Refuses anyone but the admin.
    pub fn admin(&self, what: &str) -> Result<(), CodedError> {
        match self {
            Caller::Admin | Caller::Server(_) => Ok(()),
            Caller::Org { .. } => Err(CodedError::forbidden(format!(
                "{what} is for the administrator"
            ))),
        }
    }

    /// The organisation a call acts on: the token's own, or the one an admin names.
    pub fn org(&self, named: Option<&str>) -> Result<String, CodedError> {
        match (self, named) {
            (Caller::Org { org: own, .. }, None) => Ok(own.clone()),
            (Caller::Org { org: own, .. }, Some(named)) if named == own => Ok(own.clone()),
            (Caller::Org { org: own, .. }, Some(named)) => Err(CodedError::forbidden(format!(
                "the token of org {own} cannot act on org {named}"
            ))),
            (Caller::Admin | Caller::Server(_), Some(named))
                if crate::class::is_org_code(named) =>
            {
                Ok(named.to_owned())
            }
            (Caller::Admin | Caller::Server(_), Some(named)) => Err(CodedError::bad(format!(
                "org `{named}` must be 1-64 letters, digits, _, - or ."
            ))),
            (Caller::Admin | Caller::Server(_), None) => {
                Err(CodedError::bad("org is required for the administrator"))
            }
        }
    }

    /// The name stored as the events' actor.
    pub fn actor(&self) -> String {
        match self {
            Caller::Admin => "admin".to_owned(),
            Caller::Org { org, token } => format!("org:{org}/token:{token}"),
            Caller::Server(role) => format!("system:{role}"),
        }
    }
}
