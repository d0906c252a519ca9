//! exportOrg and importOrg (administrator): an organisation's documents out as clear data, and
//! back in — into the same org or re-keyed to another — through ordinary insert operations, so
//! the imported rows are sealed, hashed and indexed like any write.
//!
//! An export is the clear data; zombies are left out, they are deletions. Re-keying is the
//! import into another org: `org` is rewritten, `pk` recomputed.
//!
//! The spec's audit ("sans cryptage dans la base importée, afin de pouvoir les lire en clair")
//! is `exportOrg` with `clear`: each document as the row the host holds (`org, pk, v, x, z, ck,
//! del`, collection and index columns, as `toRow` computes them) but with `data` in clear. That
//! dump is the unencrypted imported base: it exists only in the administrator's answer, never
//! in the log, the row tables, the reply store or NATS (the host must not read `data`).
//! `importOrg` takes such a dump back (`rows`) and seals it on import. With `treat`, both apply
//! the class's registered treatment ([`crate::treatment`]) to each document's data, so the
//! spec's replacement after treatment is: `exportOrg {org: A, cl, clear, treat}` → T, then
//! `purgeAllDocs {org: A, cl}`, then `importOrg {org: A, rows: T}`.

//!
//! [`export`] reads an organisation's documents out, [`import`] writes them back in; the
//! routes taking their arguments are `http/transfer.rs`.

pub mod export;
pub mod import;
