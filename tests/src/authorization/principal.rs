//! The kinds of principal every route is tried with, and how a request carries one.

use std::fmt;

/// Who sends a request, as the walk sees it; what each is per context is in
/// `docs/authorization/README.md`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Principal {
    /// No credential at all.
    Nobody,
    /// A credential the server never issued (a wrong token, key or password).
    Wrong,
    /// A valid user who does not own the objects the request names.
    OtherUser,
    /// The valid user who owns the objects the request names.
    User,
    /// The administrator (the platform's admin token, as each context takes it).
    Admin,
}

impl Principal {
    /// Every kind, in the order the walk tries them.
    pub const ALL: [Principal; 5] = [
        Principal::Nobody,
        Principal::Wrong,
        Principal::OtherUser,
        Principal::User,
        Principal::Admin,
    ];
}

impl fmt::Display for Principal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Principal::Nobody => "none",
            Principal::Wrong => "wrong",
            Principal::OtherUser => "other user",
            Principal::User => "user",
            Principal::Admin => "admin",
        })
    }
}

/// How a principal's credential travels on a request.
#[derive(Debug, Clone)]
pub enum Credential {
    /// `Authorization: Bearer <token>`.
    Bearer(String),
    /// `Authorization: Basic <user:password>`.
    Basic {
        /// The user name.
        user: String,
        /// The password (or token).
        password: String,
    },
    /// A query parameter (Etherpad's `apikey`).
    Query {
        /// The parameter's name.
        name: &'static str,
        /// Its value.
        value: String,
    },
}

impl Credential {
    /// The query parameter this credential adds (`name=value`), if it travels in the query.
    pub fn query_pair(&self) -> Option<String> {
        match self {
            Credential::Query { name, value } => Some(format!("{name}={value}")),
            _ => None,
        }
    }

    /// Adds the credential's header to a request (nothing for a query credential).
    pub fn apply(&self, request: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        match self {
            Credential::Bearer(token) => request.bearer_auth(token),
            Credential::Basic { user, password } => request.basic_auth(user, Some(password)),
            Credential::Query { .. } => request,
        }
    }
}
