//! The log's signing key: what the appender signs its batches with and the tree maker its
//! heads (decision 0024). It lives with the server's other secrets, never in the database, so
//! a database superuser cannot sign what they insert.

use ed25519_dalek::{Signer, SigningKey};
use palimpsest_events::merkle::{self, Hash};
use palimpsest_events::tree_head::{SignedTreeHead, TreeHead, batch_signed_bytes};
use std::sync::Arc;

/// An Ed25519 signing key; cheap to clone.
#[derive(Clone)]
pub struct LogSigner {
    key: Arc<SigningKey>,
}

/// The secret given is not 32 bytes of hex.
#[derive(Debug, thiserror::Error)]
#[error("the log signing key must be 64 hex digits (32 bytes)")]
pub struct BadSigningKey;

impl LogSigner {
    /// The key whose 32-byte seed is `hex` (as `<data_dir>/log-signing-key` or
    /// `PALIMPSEST_LOG_SIGNING_KEY` hold it).
    pub fn from_hex(hex: &str) -> Result<LogSigner, BadSigningKey> {
        let mut seed = [0u8; 32];
        hex::decode_to_slice(hex.trim(), &mut seed).map_err(|_| BadSigningKey)?;
        Ok(LogSigner {
            key: Arc::new(SigningKey::from_bytes(&seed)),
        })
    }

    /// The public half, as `/v1/log/key` serves it.
    pub fn public_key(&self) -> [u8; 32] {
        self.key.verifying_key().to_bytes()
    }

    /// The key verifiers use.
    pub fn verifying_key(&self) -> ed25519_dalek::VerifyingKey {
        self.key.verifying_key()
    }

    /// Signs the batch of positions `first..` whose chain hashes are `hashes`, in order.
    pub fn sign_batch(&self, first: u64, hashes: &[Vec<u8>]) -> Vec<u8> {
        let leaves: Vec<Hash> = hashes
            .iter()
            .zip(first..)
            .map(|(h, position)| merkle::event_leaf(position, &to_hash(h)))
            .collect();
        let last = first + leaves.len() as u64 - 1;
        self.key
            .sign(&batch_signed_bytes(first, last, &leaves))
            .to_bytes()
            .to_vec()
    }

    /// Signs `head`.
    pub fn sign_head(&self, head: TreeHead) -> SignedTreeHead {
        let signature = self.key.sign(&head.signed_bytes()).to_bytes();
        SignedTreeHead { head, signature }
    }
}

/// A stored hash as 32 bytes; a stored hash of another length (which the log never writes)
/// becomes zeros, and so a leaf no signature covers.
pub(crate) fn to_hash(bytes: &[u8]) -> Hash {
    bytes.try_into().unwrap_or([0u8; 32])
}
