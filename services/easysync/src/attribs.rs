//! Attribute strings (`*0*3*1q`): the compact list of pool numbers an operation carries.

use crate::base36::{is_canonical, is_digit, num_to_string, parse_num};
use crate::error::{Error, Result};

/// Decodes an attribute string into attribute pool numbers, in order.
///
/// `""` is the empty list. Fails on anything that is not `(\*[0-9a-z]+)*`.
pub fn decode_attribs(s: &str) -> Result<Vec<usize>> {
    let mut nums = Vec::new();
    for digits in split_attribs(s)? {
        nums.push(parse_num(digits).map_err(|_| Error::BadAttribs(truncate(s)))?);
    }
    Ok(nums)
}

/// Encodes attribute pool numbers as an attribute string (`[0, 3]` → `*0*3`).
pub fn encode_attribs(nums: impl IntoIterator<Item = usize>) -> String {
    let mut out = String::new();
    for n in nums {
        out.push('*');
        out.push_str(&num_to_string(n));
    }
    out
}

/// Checks the grammar of an attribute string and that every number is written canonically
/// (no leading zeros), as Etherpad writes them.
pub(crate) fn validate_attribs(s: &str) -> Result<()> {
    for digits in split_attribs(s)? {
        if !is_canonical(digits) {
            return Err(Error::BadAttribs(truncate(s)));
        }
        parse_num(digits).map_err(|_| Error::BadAttribs(truncate(s)))?;
    }
    Ok(())
}

/// Splits `*a*b*c` into `["a", "b", "c"]`, refusing anything else.
fn split_attribs(s: &str) -> Result<Vec<&str>> {
    if s.is_empty() {
        return Ok(Vec::new());
    }
    let rest = s
        .strip_prefix('*')
        .ok_or_else(|| Error::BadAttribs(truncate(s)))?;
    let parts: Vec<&str> = rest.split('*').collect();
    if parts
        .iter()
        .any(|p| p.is_empty() || !p.bytes().all(is_digit))
    {
        return Err(Error::BadAttribs(truncate(s)));
    }
    Ok(parts)
}

fn truncate(s: &str) -> String {
    s.chars().take(40).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_and_encodes() {
        assert_eq!(decode_attribs("").unwrap(), Vec::<usize>::new());
        assert_eq!(decode_attribs("*3*j*z*1q").unwrap(), vec![3, 19, 35, 62]);
        assert_eq!(encode_attribs([3, 19, 35, 62]), "*3*j*z*1q");
    }

    #[test]
    fn refuses_malformed_attribute_strings() {
        for bad in ["0", "*", "**1", "*1*", "*A", "*1+"] {
            assert!(decode_attribs(bad).is_err(), "{bad:?}");
        }
        assert!(validate_attribs("*01").is_err());
        assert!(validate_attribs("*0*10").is_ok());
    }
}
