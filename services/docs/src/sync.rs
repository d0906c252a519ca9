//! Sync Gateway's sync function: JavaScript `function(doc, oldDoc, meta)` run in an embedded
//! QuickJS engine (rquickjs) with a time and memory limit, answering which channels the
//! revision goes to, which users and roles get access to which channels, and the expiry; or
//! refusing the write with `throw({forbidden: …})` / `require…()` (403, nothing appended).
//!
//! The default function, when a database has none, routes by the document's `channels`
//! property: `function(doc) { channel(doc.channels); }`.
//!
//! Deterministic for a given function and input: no clock or randomness is exposed beyond
//! what QuickJS itself offers, and the outcome is stored in the revision's event, so replays
//! never run JavaScript.

use rquickjs::{Context, Ctx, Function, Runtime, Value};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Sync Gateway's default sync function.
pub const DEFAULT: &str = "function(doc, oldDoc) { channel(doc.channels); }";

/// How long one run may take.
pub const TIME_LIMIT: Duration = Duration::from_millis(500);

/// How much memory one run may use.
const MEMORY_LIMIT: usize = 32 << 20;

/// What the function's helpers record.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Outcome {
    /// `channel(...)`: the channels the revision belongs to (sorted, unique).
    pub channels: Vec<String>,
    /// `access(users, channels)`: user or `role:` name → channels.
    pub access: BTreeMap<String, Vec<String>>,
    /// `role(users, roles)`: user → roles.
    pub roles: BTreeMap<String, Vec<String>>,
    /// `expiry(...)`, as given.
    pub expiry: Option<serde_json::Value>,
}

/// Who is writing, for the `require…()` helpers.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Writer {
    /// An administrator (the admin API): every `require…()` passes.
    pub admin: bool,
    /// The user's name.
    pub name: Option<String>,
    /// The user's roles.
    pub roles: Vec<String>,
    /// The channels the user can access.
    pub channels: Vec<String>,
}

/// Why a run gave no outcome.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SyncError {
    /// `throw({forbidden: …})` or a failed `require…()`: a 403.
    #[error("{0}")]
    Forbidden(String),
    /// The function does not compile, threw something else, or ran out of time or memory.
    #[error("Exception in JS sync function: {0}")]
    Failed(String),
}

const PRELUDE: &str = r#"
var __out = {channels: [], access: {}, roles: {}, expiry: null};
function __list(x) {
  if (x === null || x === undefined) return [];
  if (Array.isArray(x)) return x.filter(function (v) { return typeof v === 'string'; });
  return typeof x === 'string' ? [x] : [];
}
function __grant(map, users, values) {
  __list(users).forEach(function (u) {
    map[u] = (map[u] || []).concat(__list(values));
  });
}
function channel() { for (var i = 0; i < arguments.length; i++) __out.channels = __out.channels.concat(__list(arguments[i])); }
function access(users, channels) { __grant(__out.access, users, channels); }
function role(users, roles) { __grant(__out.roles, users, roles); }
function expiry(value) { __out.expiry = value === undefined ? null : value; }
function __some(have, want) { return __list(want).some(function (w) { return have.indexOf(w) >= 0; }); }
function requireAdmin() { if (!__writer.admin) throw({forbidden: 'sg admin required'}); }
function requireUser(names) { if (!__writer.admin && !__some(__writer.name ? [__writer.name] : [], names)) throw({forbidden: 'wrong user'}); }
function requireRole(roles) { if (!__writer.admin && !__some(__writer.roles, roles)) throw({forbidden: 'missing role'}); }
function requireAccess(channels) { if (!__writer.admin && __writer.channels.indexOf('*') < 0 && !__some(__writer.channels, channels)) throw({forbidden: 'missing channel access'}); }
"#;

/// Whether `source` is a JavaScript function expression (compiled, not run).
pub fn compiles(source: &str) -> Result<(), SyncError> {
    let (runtime, _deadline) = limited_runtime().map_err(failed)?;
    let context = Context::full(&runtime).map_err(failed)?;
    context.with(|ctx| match ctx.eval::<Value, _>(format!("({source})")) {
        Ok(value) if value.is_function() => Ok(()),
        Ok(_) => Err(SyncError::Failed(
            "the sync function must be a function".into(),
        )),
        Err(rquickjs::Error::Exception) => Err(thrown(&ctx)),
        Err(e) => Err(failed(e)),
    })
}

fn failed(e: impl std::fmt::Display) -> SyncError {
    SyncError::Failed(e.to_string())
}

/// The default function's outcome, computed natively (no engine): the document's `channels`
/// property, a string or an array of strings.
pub fn default_outcome(doc: &str) -> Outcome {
    #[derive(Deserialize)]
    struct Channels {
        #[serde(default)]
        channels: serde_json::Value,
    }
    let value = serde_json::from_str::<Channels>(doc)
        .map(|c| c.channels)
        .unwrap_or_default();
    let channels = match value {
        serde_json::Value::String(one) => vec![one],
        serde_json::Value::Array(many) => many
            .into_iter()
            .filter_map(|v| v.as_str().map(str::to_owned))
            .collect(),
        _ => Vec::new(),
    };
    normalise(Outcome {
        channels,
        ..Outcome::default()
    })
}

/// Runs the database's function (`None`: the default, natively) on `doc`.
pub fn run_or_default(
    source: Option<&str>,
    doc: &str,
    old_doc: Option<&str>,
    writer: &Writer,
) -> Result<Outcome, SyncError> {
    match source {
        None => Ok(default_outcome(doc)),
        Some(source) => run(source, doc, old_doc, writer),
    }
}

/// Runs `source` on `doc` (the new revision, with `_id`, `_rev`, `_deleted`) and `old_doc`
/// (the nearest stored ancestor, or none).
pub fn run(
    source: &str,
    doc: &str,
    old_doc: Option<&str>,
    writer: &Writer,
) -> Result<Outcome, SyncError> {
    Engine::new(source, writer)?.run(doc, old_doc)
}

/// A database's sync function compiled once for one writer, run for every document of a
/// batch in the same QuickJS runtime and context: a runtime, a context, the prelude and the
/// function are made once per batch, not once per document. Each run gets the full time limit
/// and a fresh `__out`; like Sync Gateway's pooled VMs, globals the function itself sets
/// persist between the runs of one engine. Not `Send` (QuickJS): made and used between awaits.
pub struct Engine {
    context: Context,
    /// When the current run must stop; the runtime's interrupt handler reads it.
    deadline: Arc<Mutex<Instant>>,
    _runtime: Runtime,
}

impl Engine {
    /// Compiles `source` for `writer` (the `require…()` helpers' caller).
    pub fn new(source: &str, writer: &Writer) -> Result<Engine, SyncError> {
        let (runtime, deadline) = limited_runtime().map_err(failed)?;
        let context = Context::full(&runtime).map_err(failed)?;
        let writer = serde_json::to_string(writer).map_err(failed)?;
        context.with(|ctx| {
            let compiled = ctx.eval::<(), _>(format!(
                "var __writer = {writer};{PRELUDE}var __sync = ({source});"
            ));
            match compiled {
                Ok(()) => Ok(()),
                Err(rquickjs::Error::Exception) => Err(thrown(&ctx)),
                Err(other) => Err(failed(other)),
            }
        })?;
        Ok(Engine {
            context,
            deadline,
            _runtime: runtime,
        })
    }

    /// Runs the function on `doc` and `old_doc`, within [`TIME_LIMIT`].
    pub fn run(&self, doc: &str, old_doc: Option<&str>) -> Result<Outcome, SyncError> {
        set_deadline(&self.deadline, Instant::now() + TIME_LIMIT);
        self.context.with(|ctx| {
            let outcome = call(&ctx, doc, old_doc);
            outcome.map_err(|e| match e {
                rquickjs::Error::Exception => thrown(&ctx),
                other => failed(other),
            })?
        })
    }
}

/// A QuickJS runtime under [`MEMORY_LIMIT`], interrupted once the instant in the answered
/// deadline has passed: the sync function and the design documents' functions
/// ([`crate::design`]) run under the same limits.
pub(crate) fn limited_runtime() -> Result<(Runtime, Arc<Mutex<Instant>>), rquickjs::Error> {
    let runtime = Runtime::new()?;
    runtime.set_memory_limit(MEMORY_LIMIT);
    let deadline = Arc::new(Mutex::new(Instant::now() + TIME_LIMIT));
    let watched = Arc::clone(&deadline);
    runtime.set_interrupt_handler(Some(Box::new(move || {
        let until = match watched.lock() {
            Ok(until) => *until,
            Err(poisoned) => *poisoned.into_inner(),
        };
        Instant::now() > until
    })));
    Ok((runtime, deadline))
}

/// Sets when the current run of a [`limited_runtime`] must stop.
pub(crate) fn set_deadline(deadline: &Mutex<Instant>, until: Instant) {
    match deadline.lock() {
        Ok(mut current) => *current = until,
        Err(poisoned) => *poisoned.into_inner() = until,
    }
}

/// What runs the sync function of a batch's database: the native default, or its engine
/// (made on the first document that needs it; a function that does not compile fails each
/// document, as a run of it would).
pub enum Runner<'a> {
    /// No function configured: channels from the `channels` property.
    Default,
    /// The database's function, compiled on first use.
    Source {
        /// The function's text.
        source: &'a str,
        /// Who writes.
        writer: &'a Writer,
        /// The engine, once made.
        engine: Option<Result<Engine, SyncError>>,
    },
}

impl<'a> Runner<'a> {
    /// The runner for a database's function (`None`: the default) and a writer.
    pub fn new(source: Option<&'a str>, writer: &'a Writer) -> Runner<'a> {
        match source {
            None => Runner::Default,
            Some(source) => Runner::Source {
                source,
                writer,
                engine: None,
            },
        }
    }

    /// The outcome for `doc` (with `old_doc`, the nearest stored ancestor).
    pub fn run(&mut self, doc: &str, old_doc: Option<&str>) -> Result<Outcome, SyncError> {
        match self {
            Runner::Default => Ok(default_outcome(doc)),
            Runner::Source {
                source,
                writer,
                engine,
            } => match engine.get_or_insert_with(|| Engine::new(source, writer)) {
                Ok(engine) => engine.run(doc, old_doc),
                Err(e) => Err(e.clone()),
            },
        }
    }
}

fn call(
    ctx: &Ctx<'_>,
    doc: &str,
    old_doc: Option<&str>,
) -> Result<Result<Outcome, SyncError>, rquickjs::Error> {
    ctx.eval::<(), _>("__out = {channels: [], access: {}, roles: {}, expiry: null};")?;
    let function: Value = ctx.globals().get("__sync")?;
    let Some(function) = function.as_function().cloned() else {
        return Ok(Err(SyncError::Failed(
            "the sync function must be a function".into(),
        )));
    };
    let function: Function = function;
    let doc = ctx.json_parse(doc)?;
    let old = match old_doc {
        Some(old) => ctx.json_parse(old)?,
        None => Value::new_null(ctx.clone()),
    };
    let meta = ctx.json_parse("{}")?;
    function.call::<_, ()>((doc, old, meta))?;
    let out: String = ctx.eval("JSON.stringify(__out)")?;
    Ok(serde_json::from_str::<Outcome>(&out)
        .map(normalise)
        .map_err(failed))
}

fn normalise(mut outcome: Outcome) -> Outcome {
    outcome.channels.sort();
    outcome.channels.dedup();
    for values in outcome
        .access
        .values_mut()
        .chain(outcome.roles.values_mut())
    {
        values.sort();
        values.dedup();
    }
    outcome
}

/// What a function threw, read once for the sync function and the design documents'
/// functions: the reason of a thrown `{forbidden}` or `{unauthorized}` (a string, or the JSON
/// text of another value), else the message.
pub(crate) enum Thrown {
    /// `throw({forbidden: reason})`.
    Forbidden(String),
    /// `throw({unauthorized: reason})`.
    Unauthorized(String),
    /// Anything else: its message (or its JSON text).
    Other(String),
}

impl Thrown {
    /// Takes the pending exception of `ctx`.
    pub(crate) fn catch(ctx: &Ctx<'_>) -> Thrown {
        let value = ctx.catch();
        let text = ctx
            .json_stringify(value.clone())
            .ok()
            .flatten()
            .and_then(|s| s.to_string().ok())
            .unwrap_or_default();
        let parsed: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
        let reason = |reason: &serde_json::Value| {
            reason
                .as_str()
                .map_or_else(|| reason.to_string(), str::to_owned)
        };
        if let Some(why) = parsed.get("forbidden") {
            return Thrown::Forbidden(reason(why));
        }
        if let Some(why) = parsed.get("unauthorized") {
            return Thrown::Unauthorized(reason(why));
        }
        Thrown::Other(
            value
                .as_exception()
                .and_then(|e| e.message())
                .unwrap_or(text),
        )
    }
}

/// What was thrown: `{forbidden}` (or `{unauthorized}`) is a refusal, anything else a failure.
fn thrown(ctx: &Ctx<'_>) -> SyncError {
    match Thrown::catch(ctx) {
        Thrown::Forbidden(reason) | Thrown::Unauthorized(reason) => SyncError::Forbidden(reason),
        Thrown::Other(message) => SyncError::Failed(message),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn admin() -> Writer {
        Writer {
            admin: true,
            ..Writer::default()
        }
    }

    #[test]
    fn the_default_routes_by_the_channels_property() {
        let out = run(
            DEFAULT,
            r#"{"_id":"a","channels":["b","a","b"]}"#,
            None,
            &admin(),
        )
        .expect("runs");
        assert_eq!(out.channels, ["a", "b"]);
        let out = run(DEFAULT, r#"{"_id":"a","channels":"solo"}"#, None, &admin()).expect("runs");
        assert_eq!(out.channels, ["solo"]);
    }

    #[test]
    fn the_native_default_agrees_with_the_javascript_default() {
        for doc in [
            r#"{"channels":["b","a","b",3]}"#,
            r#"{"channels":"solo"}"#,
            r#"{"channels":null}"#,
            r#"{"other":1}"#,
        ] {
            assert_eq!(
                default_outcome(doc),
                run(DEFAULT, doc, None, &admin()).expect("runs"),
                "{doc}"
            );
        }
    }

    #[test]
    fn channel_access_role_and_expiry_are_recorded() {
        let source = "function(doc, oldDoc) { channel('c' + doc.n); access(doc.owner, 'c1'); access(['x','role:r'], ['c2']); role(doc.owner, 'editor'); expiry(60); }";
        let out = run(source, r#"{"n":1,"owner":"ann"}"#, None, &admin()).expect("runs");
        assert_eq!(out.channels, ["c1"]);
        assert_eq!(out.access["ann"], ["c1"]);
        assert_eq!(out.access["role:r"], ["c2"]);
        assert_eq!(out.roles["ann"], ["editor"]);
        assert_eq!(out.expiry, Some(serde_json::json!(60)));
    }

    #[test]
    fn a_forbidden_throw_refuses_and_old_doc_is_the_ancestor() {
        let source = "function(doc, oldDoc) { if (oldDoc && oldDoc.owner !== doc.owner) throw({forbidden: 'owner is fixed'}); }";
        assert_eq!(
            run(
                source,
                r#"{"owner":"bob"}"#,
                Some(r#"{"owner":"ann"}"#),
                &admin()
            ),
            Err(SyncError::Forbidden("owner is fixed".into()))
        );
        assert!(run(source, r#"{"owner":"bob"}"#, None, &admin()).is_ok());
    }

    #[test]
    fn require_helpers_refuse_a_writer_without_the_right() {
        let source =
            "function(doc) { requireUser(doc.owner); requireRole('editor'); requireAccess('c'); }";
        let ann = Writer {
            name: Some("ann".into()),
            roles: vec!["editor".into()],
            channels: vec!["c".into()],
            ..Writer::default()
        };
        assert!(run(source, r#"{"owner":"ann"}"#, None, &ann).is_ok());
        assert!(matches!(
            run(source, r#"{"owner":"bob"}"#, None, &ann),
            Err(SyncError::Forbidden(_))
        ));
        assert!(run("function(doc) { requireAdmin(); }", "{}", None, &admin()).is_ok());
        assert!(matches!(
            run("function(doc) { requireAdmin(); }", "{}", None, &ann),
            Err(SyncError::Forbidden(_))
        ));
    }

    #[test]
    fn one_engine_runs_every_document_of_a_batch_each_from_a_fresh_outcome() {
        let source = "function(doc, oldDoc) { if (doc.spin) { while (true) {} } if (doc.no) throw({forbidden: 'no'}); channel(doc.c); access(doc.u, doc.c); }";
        let engine = Engine::new(source, &admin()).expect("compiles");
        let docs = [
            r#"{"c":"a","u":"ann"}"#,
            r#"{"c":"b"}"#,
            r#"{"spin":true}"#,
            r#"{"no":true}"#,
            r#"{"c":"d","u":"bob"}"#,
        ];
        for doc in docs {
            assert_eq!(
                engine.run(doc, None),
                run(source, doc, None, &admin()),
                "{doc}"
            );
        }
        assert!(matches!(
            engine.run(docs[2], None),
            Err(SyncError::Failed(_))
        ));
        assert_eq!(
            engine
                .run(docs[1], None)
                .expect("runs after a timeout")
                .channels,
            ["b"]
        );
    }

    #[test]
    fn a_runner_compiles_once_and_a_broken_function_fails_each_document() {
        let writer = Writer::default();
        let mut broken = Runner::new(Some("function(doc) {"), &writer);
        assert!(matches!(broken.run("{}", None), Err(SyncError::Failed(_))));
        assert!(matches!(broken.run("{}", None), Err(SyncError::Failed(_))));
        let mut default = Runner::new(None, &writer);
        assert_eq!(
            default
                .run(r#"{"channels":"x"}"#, None)
                .expect("native")
                .channels,
            ["x"]
        );
    }

    #[test]
    fn a_function_that_runs_too_long_or_does_not_compile_fails() {
        assert!(matches!(
            run("function(doc) { while (true) {} }", "{}", None, &admin()),
            Err(SyncError::Failed(_))
        ));
        assert!(matches!(
            run("function(doc) {", "{}", None, &admin()),
            Err(SyncError::Failed(_))
        ));
        assert!(
            matches!(run("function(doc) { throw new Error('boom'); }", "{}", None, &admin()), Err(SyncError::Failed(m)) if m.contains("boom"))
        );
    }
}
