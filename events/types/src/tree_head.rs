//! What the log signs, byte for byte: a tree head and an appender's batch (decision 0024).
//!
//! A signed tree head commits the server to the root of the first `tree_size` leaves
//! ([`crate::merkle`]); a batch signature commits the appender to the leaves it wrote, so that
//! an event inserted or edited by someone with database access but without the log's key is
//! refused before it is ever signed into a head. Both verify with the log's Ed25519 public key
//! (`GET /v1/log/key`); the JSON forms write every hash and signature in lower-case hex.

use crate::merkle::Hash;
use ed25519_dalek::{Signature, VerifyingKey};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// The domain tag that starts a tree head's signed bytes.
pub const TREE_HEAD_TAG: &[u8] = b"palimpsest tree head v1\n";
/// The domain tag that starts a batch's signed bytes.
pub const BATCH_TAG: &[u8] = b"palimpsest batch v1\n";

/// A tree head: the log, how many leaves, when, and their root.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TreeHead {
    /// The log's identity (`log.identity`), so a head of one log never passes for another's.
    pub log_id: Uuid,
    /// Leaves covered: positions `1..=tree_size`.
    pub tree_size: u64,
    /// When it was signed, in milliseconds since the Unix epoch.
    pub timestamp: u64,
    /// The Merkle Tree Hash of those leaves.
    #[serde(with = "hex32")]
    pub root_hash: Hash,
}

impl TreeHead {
    /// `tag ‖ log_id (16 bytes) ‖ u64be(tree_size) ‖ u64be(timestamp) ‖ root_hash`.
    pub fn signed_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(TREE_HEAD_TAG.len() + 16 + 8 + 8 + 32);
        out.extend_from_slice(TREE_HEAD_TAG);
        out.extend_from_slice(self.log_id.as_bytes());
        out.extend_from_slice(&self.tree_size.to_be_bytes());
        out.extend_from_slice(&self.timestamp.to_be_bytes());
        out.extend_from_slice(&self.root_hash);
        out
    }
}

/// A tree head with the log's signature over [`TreeHead::signed_bytes`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SignedTreeHead {
    /// What is signed.
    #[serde(flatten)]
    pub head: TreeHead,
    /// The Ed25519 signature, 64 bytes.
    #[serde(with = "hex64")]
    pub signature: [u8; 64],
}

impl SignedTreeHead {
    /// Whether `key` signed this head.
    pub fn verify(&self, key: &VerifyingKey) -> bool {
        verify(key, &self.head.signed_bytes(), &self.signature)
    }
}

/// `tag ‖ u64be(first) ‖ u64be(last) ‖ the leaf hash of each position first..=last`.
pub fn batch_signed_bytes(first: u64, last: u64, leaves: &[Hash]) -> Vec<u8> {
    let mut out = Vec::with_capacity(BATCH_TAG.len() + 16 + 32 * leaves.len());
    out.extend_from_slice(BATCH_TAG);
    out.extend_from_slice(&first.to_be_bytes());
    out.extend_from_slice(&last.to_be_bytes());
    for leaf in leaves {
        out.extend_from_slice(leaf);
    }
    out
}

/// A batch signature as `/v1/log/batches` serves it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BatchSignature {
    /// The batch's first position.
    pub first_position: u64,
    /// The batch's last position.
    pub last_position: u64,
    /// The Ed25519 signature over [`batch_signed_bytes`].
    #[serde(with = "hex64")]
    pub signature: [u8; 64],
}

impl BatchSignature {
    /// Whether `key` signed exactly these `leaves` (of positions first..=last).
    pub fn verify(&self, key: &VerifyingKey, leaves: &[Hash]) -> bool {
        let count = self
            .last_position
            .checked_sub(self.first_position)
            .map(|d| d + 1);
        count == Some(leaves.len() as u64)
            && verify(
                key,
                &batch_signed_bytes(self.first_position, self.last_position, leaves),
                &self.signature,
            )
    }
}

/// The log's public key as `/v1/log/key` serves it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LogKey {
    /// The log it signs for.
    pub log_id: Uuid,
    /// Always `ed25519`.
    pub algorithm: String,
    /// The 32-byte public key.
    #[serde(with = "hex32")]
    pub public_key: [u8; 32],
    /// The last position appended before batches were signed (`log.tree_origin`): positions
    /// after it are each covered by a batch signature.
    #[serde(default)]
    pub unsigned_until: u64,
}

impl LogKey {
    /// The key to verify with; `None` when the bytes are not a valid Ed25519 point.
    pub fn verifying_key(&self) -> Option<VerifyingKey> {
        VerifyingKey::from_bytes(&self.public_key).ok()
    }
}

/// Strict Ed25519 verification (no malleable signatures, no small-order keys).
fn verify(key: &VerifyingKey, message: &[u8], signature: &[u8; 64]) -> bool {
    key.verify_strict(message, &Signature::from_bytes(signature))
        .is_ok()
}

/// Fixed-size byte arrays as lower-case hex in JSON.
macro_rules! hex_array {
    ($name:ident, $n:literal) => {
        /// Serde for a byte array written as hex.
        pub mod $name {
            use serde::{Deserialize, Deserializer, Serializer, de::Error};

            /// Writes the bytes as lower-case hex.
            pub fn serialize<S: Serializer>(bytes: &[u8; $n], s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(&hex::encode(bytes))
            }

            /// Reads hex of exactly the array's length.
            pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<[u8; $n], D::Error> {
                let text = String::deserialize(d)?;
                let mut out = [0u8; $n];
                hex::decode_to_slice(&text, &mut out).map_err(D::Error::custom)?;
                Ok(out)
            }
        }
    };
}
hex_array!(hex32, 32);
hex_array!(hex64, 64);

#[cfg(test)]
mod tests {
    use super::*;
    use ed25519_dalek::{Signer, SigningKey};

    fn key() -> SigningKey {
        SigningKey::from_bytes(&[7u8; 32])
    }

    fn head() -> TreeHead {
        TreeHead {
            log_id: Uuid::from_u128(1),
            tree_size: 3,
            timestamp: 1_700_000_000_000,
            root_hash: [9u8; 32],
        }
    }

    #[test]
    fn a_head_verifies_only_as_signed() {
        let signature = key().sign(&head().signed_bytes()).to_bytes();
        let signed = SignedTreeHead {
            head: head(),
            signature,
        };
        assert!(signed.verify(&key().verifying_key()));
        let mut grown = signed.clone();
        grown.head.tree_size = 4;
        assert!(!grown.verify(&key().verifying_key()));
        let other = SigningKey::from_bytes(&[8u8; 32]).verifying_key();
        assert!(!signed.verify(&other));
    }

    #[test]
    fn a_head_round_trips_through_its_json_form() {
        let signed = SignedTreeHead {
            head: head(),
            signature: [5u8; 64],
        };
        let json = serde_json::to_value(&signed).expect("json");
        assert_eq!(json["tree_size"], 3);
        assert_eq!(json["root_hash"], hex::encode([9u8; 32]));
        let back: SignedTreeHead = serde_json::from_value(json).expect("parse");
        assert_eq!(back, signed);
    }

    #[test]
    fn the_signed_bytes_are_as_written_down() {
        let bytes = head().signed_bytes();
        assert_eq!(&bytes[..TREE_HEAD_TAG.len()], b"palimpsest tree head v1\n");
        assert_eq!(bytes.len(), 24 + 16 + 8 + 8 + 32);
        assert_eq!(&bytes[40..48], &3u64.to_be_bytes());
    }

    #[test]
    fn a_batch_verifies_only_for_its_leaves() {
        let leaves = [[1u8; 32], [2u8; 32]];
        let signature = key().sign(&batch_signed_bytes(4, 5, &leaves)).to_bytes();
        let batch = BatchSignature {
            first_position: 4,
            last_position: 5,
            signature,
        };
        assert!(batch.verify(&key().verifying_key(), &leaves));
        assert!(!batch.verify(&key().verifying_key(), &[[1u8; 32], [3u8; 32]]));
        assert!(!batch.verify(&key().verifying_key(), &leaves[..1]));
    }
}
