//! A call's parameters as Etherpad's functions see them: only the parameters the called API
//! version declares (others are `undefined`), with JavaScript's notions of strings, truthiness
//! and string conversion.

use super::envelope::EnvelopeError;
use super::fields::Fields;
use crate::js_number;
use serde_json::Value;

/// The parameters of one call.
#[derive(Debug, Clone)]
pub struct Params {
    fields: Fields,
    names: &'static [&'static str],
}

/// JavaScript's `String(value)` of a JSON value.
pub fn js_string(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Null => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::Array(items) => items
            .iter()
            .map(|v| match v {
                Value::Null => String::new(),
                other => js_string(other),
            })
            .collect::<Vec<_>>()
            .join(","),
        Value::Object(_) => "[object Object]".into(),
    }
}

/// JavaScript truthiness of a JSON value.
pub fn truthy(value: &Value) -> bool {
    match value {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0 && !f.is_nan()),
        Value::String(s) => !s.is_empty(),
        Value::Array(_) | Value::Object(_) => true,
    }
}

impl Params {
    /// The parameters `names` (the function's, in the called version) out of `fields`.
    pub fn new(fields: Fields, names: &'static [&'static str]) -> Self {
        Params { fields, names }
    }

    /// The value of parameter `name`; `None` when absent or not a parameter of this version.
    pub fn get(&self, name: &str) -> Option<&Value> {
        if self.names.contains(&name) {
            self.fields.get(name)
        } else {
            None
        }
    }

    /// Sets parameter `name` (used for the sanitised pad id).
    pub fn set(&mut self, name: &str, value: Value) {
        self.fields.set(name, value);
    }

    /// Refuses (400, code 1) a call whose parameters hold U+0000: ids become store keys in
    /// Postgres `text`, which cannot hold it, and no Etherpad client sends it in text.
    pub fn refuse_nul(&self) -> Result<(), EnvelopeError> {
        fn holds_nul(value: &Value) -> bool {
            match value {
                Value::String(s) => s.contains('\0'),
                Value::Array(items) => items.iter().any(holds_nul),
                Value::Object(map) => map.iter().any(|(k, v)| k.contains('\0') || holds_nul(v)),
                _ => false,
            }
        }
        match self
            .names
            .iter()
            .find(|n| self.get(n).is_some_and(holds_nul))
        {
            Some(name) => Err(EnvelopeError::bad_request(format!(
                "{name} must not contain the NUL character"
            ))),
            None => Ok(()),
        }
    }

    /// The parameter if it is a string.
    pub fn string(&self, name: &str) -> Option<&str> {
        self.get(name).and_then(Value::as_str)
    }

    /// The parameter as a string, failing with Etherpad's `<name> is not a string`.
    pub fn required_string(&self, name: &str) -> Result<&str, EnvelopeError> {
        self.string(name)
            .ok_or_else(|| EnvelopeError::api(format!("{name} is not a string")))
    }

    /// The parameter as JavaScript's template literal would show it (`undefined` if absent).
    pub fn as_text(&self, name: &str) -> String {
        self.get(name).map_or_else(|| "undefined".into(), js_string)
    }

    /// An optional author id parameter (`authorId = ''` in Etherpad's signatures).
    pub fn author_id(&self, name: &str) -> String {
        match self.get(name) {
            None | Some(Value::Null) => String::new(),
            Some(v) => js_string(v),
        }
    }

    /// A boolean flag as Etherpad reads `force`: a string is true when it is `"true"` (any
    /// case), anything else by its truthiness.
    pub fn flag(&self, name: &str) -> bool {
        match self.get(name) {
            Some(Value::String(s)) => s.to_lowercase() == "true",
            Some(v) => truthy(v),
            None => false,
        }
    }

    /// Etherpad's `checkValidRev` when the parameter is present: `None` when absent.
    pub fn rev(&self, name: &str) -> Result<Option<i64>, EnvelopeError> {
        let Some(value) = self.get(name) else {
            return Ok(None);
        };
        check_valid_rev(value).map(Some)
    }
}

/// Etherpad's `checkValidRev`: a number or a text starting with digits (`parseInt`), not
/// negative, not fractional.
pub fn check_valid_rev(value: &Value) -> Result<i64, EnvelopeError> {
    let n = match value {
        Value::Number(n) => n.as_f64().unwrap_or(f64::NAN),
        other => js_number::parse_int(&js_string(other), Some(10)),
    };
    if n.is_nan() {
        return Err(EnvelopeError::api("rev is not a number"));
    }
    if n < 0.0 {
        return Err(EnvelopeError::api("rev is not a negative number"));
    }
    if !js_number::is_int_number(n) {
        return Err(EnvelopeError::api("rev is a float value"));
    }
    if n > i64::MAX as f64 {
        return Err(EnvelopeError::api(
            "rev is higher than the head revision of the pad",
        ));
    }
    Ok(n as i64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn revs_follow_check_valid_rev() {
        assert_eq!(check_valid_rev(&json!("12")).expect("rev"), 12);
        assert_eq!(check_valid_rev(&json!("3abc")).expect("rev"), 3);
        assert_eq!(check_valid_rev(&json!(4)).expect("rev"), 4);
        assert_eq!(
            check_valid_rev(&json!("abc")).expect_err("nan").message,
            "rev is not a number"
        );
        assert_eq!(
            check_valid_rev(&json!("-1")).expect_err("negative").message,
            "rev is not a negative number"
        );
        assert_eq!(
            check_valid_rev(&json!(1.5)).expect_err("float").message,
            "rev is a float value"
        );
    }

    #[test]
    fn a_nul_in_any_parameter_is_refused_with_code_1() {
        let mut fields = Fields::default();
        fields.set("padID", json!("a\u{0}b"));
        let err = Params::new(fields, &["padID"])
            .refuse_nul()
            .expect_err("NUL");
        assert_eq!((err.code, err.status.as_u16()), (1, 400));
        let mut fields = Fields::default();
        fields.set("other", json!("a\u{0}b"));
        fields.set("rev", json!(["1", "\u{0}"]));
        assert_eq!(Params::new(fields.clone(), &["padID"]).refuse_nul(), Ok(()));
        assert!(Params::new(fields, &["rev"]).refuse_nul().is_err());
    }

    #[test]
    fn strings_and_truthiness_follow_javascript() {
        assert_eq!(js_string(&json!(["a", 1, null])), "a,1,");
        assert!(!truthy(&json!("")));
        assert!(truthy(&json!("0")));
        assert!(!truthy(&json!(0)));
    }
}
