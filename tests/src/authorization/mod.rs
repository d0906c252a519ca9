//! The route-by-principal authorization walk (issue #25, design invariant 11): every operation of
//! every context's OpenAPI document, tried with each kind of principal (none, a wrong credential,
//! another user, the user, the administrator), against the policy a table gives it.
//!
//! A context is described by a [`Context`]: its documents, its table of [`Row`]s (one per
//! operation, with the [`Policy`] it is held to and a minimal request on the user's objects), the
//! credentials of its principals and the checks of its own refusal format. [`walk::walk`] makes
//! sure the table and the documents name the same operations (a new route cannot go unreviewed,
//! a removed one cannot linger), sends every request, and checks the answers; refused requests
//! must append nothing to the log.
//!
//! Every event the walk appended must name its caller ([`attribution`], issue #27).
//!
//! The fixtures of each context (its users and their objects, made through its own API) are in
//! [`contexts`]; `docs/authorization/README.md` says what each principal is per context.

pub mod attribution;
pub mod contexts;
pub mod openapi;
pub mod policy;
pub mod principal;
pub mod row;
pub mod walk;

pub use policy::{Expected, Policy};
pub use principal::{Credential, Principal};
pub use row::Row;
pub use walk::{Context, walk};
