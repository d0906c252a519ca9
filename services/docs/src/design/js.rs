//! The design documents' JavaScript — view `map` and `reduce` functions, `filters`,
//! `validate_doc_update` — run in the sync function's engine (QuickJS) under its limits: each
//! call at most [`crate::sync::TIME_LIMIT`], the runtime at most the sync function's memory, and
//! all the calls of one request within [`REQUEST_LIMIT`], so a runaway function is an error,
//! never a hang.
//!
//! Not `Send` (QuickJS): made and used inside one blocking task or between awaits.

use crate::sync::{TIME_LIMIT, Thrown, limited_runtime, set_deadline};
use rquickjs::{Context, Ctx, Function, Runtime, Value};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long all the calls one request makes may take together.
pub const REQUEST_LIMIT: Duration = Duration::from_secs(10);

/// Why a function gave no answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum JsError {
    /// The source is not a JavaScript function.
    #[error("compilation error: {0}")]
    Compile(String),
    /// The function threw `{forbidden: reason}`.
    #[error("{0}")]
    Forbidden(String),
    /// The function threw `{unauthorized: reason}`.
    #[error("{0}")]
    Unauthorized(String),
    /// The function threw something else.
    #[error("the function threw: {0}")]
    Threw(String),
    /// The call (or the request's calls together) ran out of time.
    #[error("the function ran longer than its limit")]
    Limit,
}

const PRELUDE: &str = r#"
var __emitted = [];
function emit(key, value) {
  __emitted.push([key === undefined ? null : key, value === undefined ? null : value]);
}
function log() {}
function sum(values) { var s = 0; for (var i = 0; i < values.length; i++) s += values[i]; return s; }
function isArray(x) { return Array.isArray(x); }
function toJSON(x) { return JSON.stringify(x); }
var __functions = {};
function __map(name, doc) { __emitted = []; __functions[name](doc); return JSON.stringify(__emitted); }
function __call(name, args) { var out = __functions[name].apply(null, args); return JSON.stringify(out === undefined ? null : out); }
function __test(name, args) { return __functions[name].apply(null, args) ? true : false; }
"#;

/// One request's compiled functions, by name.
pub struct Functions {
    context: Context,
    deadline: Arc<Mutex<Instant>>,
    /// When every call of this request must have ended.
    budget: Instant,
    _runtime: Runtime,
}

impl Functions {
    /// A fresh engine for one request.
    pub fn new() -> Result<Functions, JsError> {
        let (runtime, deadline) = limited_runtime().map_err(threw)?;
        let context = Context::full(&runtime).map_err(threw)?;
        context.with(|ctx| ctx.eval::<(), _>(PRELUDE).map_err(threw))?;
        Ok(Functions {
            context,
            deadline,
            budget: Instant::now() + REQUEST_LIMIT,
            _runtime: runtime,
        })
    }

    /// Compiles `source` as the function `name`.
    pub fn compile(&self, name: &str, source: &str) -> Result<(), JsError> {
        let name = serde_json::to_string(name).map_err(threw)?;
        self.start();
        self.context.with(|ctx| {
            let script = format!("__functions[{name}] = ({source}); typeof __functions[{name}]");
            match ctx.eval::<String, _>(script) {
                Ok(kind) if kind == "function" => Ok(()),
                Ok(_) => Err(JsError::Compile(format!("{source:?} is not a function"))),
                Err(rquickjs::Error::Exception) => {
                    Err(JsError::Compile(self.classify(&ctx).to_string()))
                }
                Err(other) => Err(JsError::Compile(other.to_string())),
            }
        })
    }

    /// Runs map function `name` on `doc` (JSON): what it emitted, `[key, value]` pairs.
    pub fn map(
        &self,
        name: &str,
        doc: &str,
    ) -> Result<Vec<(serde_json::Value, serde_json::Value)>, JsError> {
        let text = self.run(|ctx| {
            let doc = ctx.json_parse(doc)?;
            let map: Function = ctx.globals().get("__map")?;
            map.call::<_, String>((name, doc))
        })?;
        serde_json::from_str(&text).map_err(threw)
    }

    /// Calls function `name` with `args` (JSON values): its answer as JSON.
    pub fn call(&self, name: &str, args: &[&str]) -> Result<serde_json::Value, JsError> {
        let text = self.run(|ctx| {
            let call: Function = ctx.globals().get("__call")?;
            call.call::<_, String>((name, arguments(ctx, args)?))
        })?;
        serde_json::from_str(&text).map_err(threw)
    }

    /// Calls function `name` with `args` (JSON values): whether its answer is truthy.
    pub fn test(&self, name: &str, args: &[&str]) -> Result<bool, JsError> {
        self.run(|ctx| {
            let test: Function = ctx.globals().get("__test")?;
            test.call::<_, bool>((name, arguments(ctx, args)?))
        })
    }

    fn start(&self) {
        set_deadline(
            &self.deadline,
            (Instant::now() + TIME_LIMIT).min(self.budget),
        );
    }

    fn run<T>(
        &self,
        call: impl for<'js> FnOnce(&Ctx<'js>) -> rquickjs::Result<T>,
    ) -> Result<T, JsError> {
        if Instant::now() >= self.budget {
            return Err(JsError::Limit);
        }
        self.start();
        self.context.with(|ctx| match call(&ctx) {
            Ok(value) => Ok(value),
            Err(rquickjs::Error::Exception) => Err(self.classify(&ctx)),
            Err(other) => Err(self.out_of_time().unwrap_or_else(|| threw(other))),
        })
    }

    /// A call that passed its deadline failed for that reason, whatever it threw.
    fn out_of_time(&self) -> Option<JsError> {
        let until = match self.deadline.lock() {
            Ok(until) => *until,
            Err(poisoned) => *poisoned.into_inner(),
        };
        (Instant::now() > until).then_some(JsError::Limit)
    }

    /// What was thrown: `{forbidden}`, `{unauthorized}`, the limit, or anything else.
    fn classify(&self, ctx: &Ctx<'_>) -> JsError {
        let thrown = Thrown::catch(ctx);
        if let Some(limit) = self.out_of_time() {
            return limit;
        }
        match thrown {
            Thrown::Forbidden(reason) => JsError::Forbidden(reason),
            Thrown::Unauthorized(reason) => JsError::Unauthorized(reason),
            Thrown::Other(message) => JsError::Threw(message),
        }
    }
}

fn arguments<'js>(ctx: &Ctx<'js>, args: &[&str]) -> rquickjs::Result<Value<'js>> {
    let array = rquickjs::Array::new(ctx.clone())?;
    for (i, arg) in args.iter().enumerate() {
        array.set(i, ctx.json_parse(*arg)?)?;
    }
    Ok(array.into_value())
}

fn threw(e: impl std::fmt::Display) -> JsError {
    JsError::Threw(e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_map_function_emits_pairs_and_undefined_is_null() {
        let functions = Functions::new().expect("engine");
        functions
            .compile(
                "m",
                "function (doc) { emit(doc.n, doc.v); emit([doc.n, 1]); }",
            )
            .expect("compiles");
        let emitted = functions.map("m", r#"{"n":2,"v":"x"}"#).expect("runs");
        assert_eq!(
            emitted,
            vec![
                (serde_json::json!(2), serde_json::json!("x")),
                (serde_json::json!([2, 1]), serde_json::Value::Null)
            ]
        );
    }

    #[test]
    fn a_thrown_forbidden_or_unauthorized_is_told_apart() {
        let functions = Functions::new().expect("engine");
        functions
            .compile("v", "function (doc) { if (doc.a) throw({forbidden: 'no a'}); if (doc.b) throw({unauthorized: 'no b'}); if (doc.c) throw new Error('c'); }")
            .expect("compiles");
        assert_eq!(
            functions.call("v", &[r#"{"a":1}"#]),
            Err(JsError::Forbidden("no a".into()))
        );
        assert_eq!(
            functions.call("v", &[r#"{"b":1}"#]),
            Err(JsError::Unauthorized("no b".into()))
        );
        assert!(matches!(
            functions.call("v", &[r#"{"c":1}"#]),
            Err(JsError::Threw(_))
        ));
        assert_eq!(functions.call("v", &["{}"]), Ok(serde_json::Value::Null));
    }

    #[test]
    fn a_runaway_function_is_stopped_at_the_limit_and_a_non_function_does_not_compile() {
        let functions = Functions::new().expect("engine");
        functions
            .compile("spin", "function (doc) { while (true) {} }")
            .expect("compiles");
        assert_eq!(functions.map("spin", "{}"), Err(JsError::Limit));
        assert!(matches!(
            functions.compile("bad", "42"),
            Err(JsError::Compile(_))
        ));
        assert!(matches!(
            functions.compile("broken", "function ("),
            Err(JsError::Compile(_))
        ));
    }

    #[test]
    fn a_filter_answers_whether_its_result_is_truthy() {
        let functions = Functions::new().expect("engine");
        functions
            .compile(
                "f",
                "function (doc, req) { return doc.n % 2 === Number(req.query.r); }",
            )
            .expect("compiles");
        assert_eq!(
            functions.test("f", &[r#"{"n":3}"#, r#"{"query":{"r":"1"}}"#]),
            Ok(true)
        );
        assert_eq!(
            functions.test("f", &[r#"{"n":4}"#, r#"{"query":{"r":"1"}}"#]),
            Ok(false)
        );
    }
}
