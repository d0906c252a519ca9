//! Composition: one changeset that does what two consecutive ones do. The server composes a
//! client's pending changes, and revisions are composed to jump between them.

use crate::attribute_map::AttributeMap;
use crate::changeset::Changeset;
use crate::cursor::{CursorError, Utf16Cursor};
use crate::error::{Error, Result};
use crate::ops::OpCode;
use crate::pool::AttributePool;
use crate::zip::{slice_zip, zip_ops};

/// The changeset equivalent to applying `cs1` and then `cs2` (`cs1.new_len == cs2.old_len`).
///
/// The result is canonical; its length change is taken from the inputs. The pool is only read:
/// composing never creates attributes. Linear in the sizes of both changesets.
pub fn compose(cs1: &Changeset, cs2: &Changeset, pool: &AttributePool) -> Result<Changeset> {
    if cs1.new_len != cs2.old_len {
        return Err(Error::ComposeMismatch {
            first_new_len: cs1.new_len,
            second_old_len: cs2.old_len,
        });
    }
    let mut bank1 = Utf16Cursor::new(&cs1.char_bank);
    let mut bank2 = Utf16Cursor::new(&cs2.char_bank);
    let mut bank = String::with_capacity(cs1.char_bank.len() + cs2.char_bank.len());
    let bank_err = |e: CursorError| match e {
        CursorError::PastEnd => Error::CharBankTooShort("composed insert".to_owned()),
        CursorError::SplitsSurrogatePair => Error::SplitsSurrogatePair,
    };
    let ops = zip_ops(
        cs1.ops.iter().cloned(),
        cs2.ops.iter().cloned(),
        |op1, op2| {
            let code2 = op2.as_ref().map(|o| o.opcode);
            if let (Some(a), Some(b)) = (op1.as_ref(), op2.as_ref())
                && a.opcode == OpCode::Insert
                && b.opcode == OpCode::Remove
            {
                // Text inserted by cs1 and removed by cs2 never reaches the result.
                bank1.skip(a.chars.min(b.chars)).map_err(bank_err)?;
            }
            let out = slice_zip(op1, op2, pool)?;
            if let Some(o) = &out
                && o.opcode == OpCode::Insert
            {
                let text = if code2 == Some(OpCode::Insert) {
                    bank2.take(o.chars)
                } else {
                    bank1.take(o.chars)
                };
                bank.push_str(text.map_err(bank_err)?);
            }
            Ok(out)
        },
    )?;
    Ok(Changeset {
        old_len: cs1.old_len,
        new_len: cs2.new_len,
        ops,
        char_bank: bank,
    })
}

/// Composes two attribute strings (Etherpad's `composeAttributes`).
///
/// `att2`'s values win. When `result_is_mutation` (composing two keeps, i.e. two attribute
/// *changes*), an empty value is kept as "remove this attribute"; otherwise (applying a change
/// to attributes that *are* present) an empty value removes the key.
pub fn compose_attributes(
    att1: &str,
    att2: &str,
    result_is_mutation: bool,
    pool: &AttributePool,
) -> Result<String> {
    if att1.is_empty() && result_is_mutation {
        return Ok(att2.to_owned());
    }
    if att2.is_empty() {
        return Ok(att1.to_owned());
    }
    let mut map = AttributeMap::from_attribs(att1, pool)?;
    map.update_from_attribs(att2, !result_is_mutation, pool)?;
    map.to_attribs_in(pool)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pool_of(pairs: &[(&str, &str)]) -> AttributePool {
        let mut p = AttributePool::new();
        for (k, v) in pairs {
            p.put_attrib(k, v);
        }
        p
    }

    #[test]
    fn simple_compose_attributes_etherpad_vector() {
        // Etherpad easysync-compose spec, "simpleComposeAttributesTest".
        let p = pool_of(&[("bold", ""), ("bold", "true")]);
        let cs1 = Changeset::parse("Z:2>1*1+1*1=1$x").unwrap();
        let cs2 = Changeset::parse("Z:3>0*0|1=3$").unwrap();
        let cs12 = compose(&cs1, &cs2, &p).unwrap();
        assert_eq!(cs12.to_string(), "Z:2>1+1*0|1=2$x");
        cs12.check(Some(&p)).unwrap();
    }

    #[test]
    fn compose_attributes_examples_from_etherpad_comments() {
        let p = pool_of(&[("bold", ""), ("bold", "true")]);
        assert_eq!(compose_attributes("", "*0", true, &p).unwrap(), "*0");
        assert_eq!(compose_attributes("", "*0", false, &p).unwrap(), "");
        assert_eq!(compose_attributes("", "*1", true, &p).unwrap(), "*1");
        assert_eq!(compose_attributes("", "*1", false, &p).unwrap(), "*1");
        assert_eq!(compose_attributes("*1", "*0", true, &p).unwrap(), "*0");
        assert_eq!(compose_attributes("*1", "*0", false, &p).unwrap(), "");
    }

    #[test]
    fn refuses_mismatched_lengths() {
        let p = AttributePool::new();
        let a = Changeset::parse("Z:1>1+1$a").unwrap();
        assert!(matches!(
            compose(&a, &a, &p),
            Err(Error::ComposeMismatch {
                first_new_len: 2,
                second_old_len: 1
            })
        ));
    }

    #[test]
    fn insert_then_delete_cancels() {
        let p = AttributePool::new();
        let a = Changeset::parse("Z:1>3+3$abc").unwrap();
        let b = Changeset::parse("Z:4<2=1-2$").unwrap();
        assert_eq!(compose(&a, &b, &p).unwrap().to_string(), "Z:1>1+1$a");
    }
}
