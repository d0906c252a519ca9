//! The one error type of the crate: every way a changeset, an attributed text or an attribute
//! pool can be malformed or inconsistent, so callers can turn it into a clear 4xx message.

/// Why an easysync operation was refused.
///
/// Every function that reads untrusted input returns this instead of panicking. The messages are
/// meant to be shown to the client that sent the bad input.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The string does not start with `Z:<old length><'>' or '<'><length change>`.
    #[error("not a changeset: expected a header like `Z:5>3`")]
    BadHeader,

    /// A base-36 number is empty, has characters other than `[0-9a-z]`, or does not fit.
    #[error("invalid base-36 number `{0}`")]
    BadNumber(String),

    /// The header shrinks the text by more than its old length.
    #[error("header shrinks a text of length {old_len} by {shrink}")]
    NegativeLength {
        /// Old length from the header.
        old_len: usize,
        /// Length decrease from the header.
        shrink: usize,
    },

    /// The operations part contains something that is not an operation.
    #[error("invalid operation at byte {at} of the operations: `{found}`")]
    BadOp {
        /// Byte offset inside the operations part.
        at: usize,
        /// The offending text (at most 20 characters).
        found: String,
    },

    /// An attribute string is not a sequence of `*<base-36 number>`, or a number is not canonical.
    #[error("invalid attribute string `{0}`")]
    BadAttribs(String),

    /// An operation covers zero characters (Etherpad never emits one).
    #[error("operation `{0}` covers no characters")]
    EmptyOp(String),

    /// An operation claims more newlines than characters.
    #[error("operation `{0}` claims more newlines than characters")]
    MoreLinesThanChars(String),

    /// A keep or remove runs past the end of the text the changeset applies to.
    #[error("operation `{op}` runs past the end of the old text (length {old_len})")]
    PastOldEnd {
        /// The operation.
        op: String,
        /// Length of the text it applies to.
        old_len: usize,
    },

    /// An insert needs more characters than the char bank has left.
    #[error("operation `{0}` needs more characters than the char bank has left")]
    CharBankTooShort(String),

    /// The newlines an operation claims do not match the characters it covers.
    #[error("operation `{op}` claims {claimed} newlines but its text has {actual}")]
    NewlineCountMismatch {
        /// The operation.
        op: String,
        /// Newlines the operation claims (`|n`).
        claimed: usize,
        /// Newlines in the characters it covers.
        actual: usize,
    },

    /// An operation with newlines does not end with a newline.
    #[error("multi-line operation `{0}` does not end with a newline")]
    MultilineNotEndingInNewline(String),

    /// The length in the header does not match what the operations produce.
    #[error("claimed new length {claimed} but the operations produce {actual}")]
    LengthMismatch {
        /// New length from the header.
        claimed: usize,
        /// New length the operations produce.
        actual: usize,
    },

    /// Characters are left in the char bank after every insert took its share.
    #[error("{0} unused characters left in the char bank")]
    ExcessCharBank(usize),

    /// The changeset is consistent but not in Etherpad's canonical form.
    #[error("changeset is not in canonical form; canonical form is `{expected}`")]
    NotCanonical {
        /// The canonical serialisation of the same changeset.
        expected: String,
    },

    /// An attribute number is not in the attribute pool.
    #[error("attribute *{0} is not in the attribute pool")]
    UnknownAttribute(String),

    /// The text's length is not the changeset's old length.
    #[error("changeset applies to a text of length {expected}, the text has length {actual}")]
    OldLengthMismatch {
        /// Old length of the changeset.
        expected: usize,
        /// Length of the text.
        actual: usize,
    },

    /// Two changesets cannot be composed: the first's new length is not the second's old length.
    #[error(
        "cannot compose: first changeset produces length {first_new_len}, second applies to {second_old_len}"
    )]
    ComposeMismatch {
        /// New length of the first changeset.
        first_new_len: usize,
        /// Old length of the second changeset.
        second_old_len: usize,
    },

    /// Two changesets cannot be transformed against each other: they apply to different lengths.
    #[error("cannot follow: changesets apply to lengths {0} and {1}")]
    FollowMismatch(usize, usize),

    /// Two operations being combined disagree on where the newlines are.
    #[error("operations `{0}` and `{1}` disagree on their newlines")]
    LineCountMismatch(String, String),

    /// A position would fall between the two halves of a UTF-16 surrogate pair.
    ///
    /// Lengths are counted in UTF-16 code units as in JavaScript; Rust strings cannot hold half a
    /// pair, so such changesets are refused.
    #[error("position falls inside a UTF-16 surrogate pair")]
    SplitsSurrogatePair,

    /// An attributed text's text does not end with a newline.
    #[error("attributed text must end with a newline")]
    MissingFinalNewline,

    /// An attributed text's attribution does not cover exactly its text.
    #[error("attribution covers {attribs} characters but the text has {text}")]
    AttributionLengthMismatch {
        /// Characters covered by the attribution.
        attribs: usize,
        /// Length of the text.
        text: usize,
    },

    /// An attribution (the `attribs` of an attributed text) contains a keep or a remove.
    #[error("attribution operation `{0}` is not an insert")]
    AttributionNotInsert(String),

    /// A splice starts or ends outside the text.
    #[error("splice of {ndel} characters at {start} is outside a text of length {len}")]
    SpliceOutOfRange {
        /// Start of the splice.
        start: usize,
        /// Characters to delete.
        ndel: usize,
        /// Length of the text.
        len: usize,
    },

    /// An attribute pool's JSON is inconsistent.
    #[error("invalid attribute pool: {0}")]
    BadPool(String),

    /// A list attribute names an absurd nesting level.
    #[error("list level {0} is too deep")]
    ListTooDeep(u64),
}

/// Result alias used throughout the crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;
