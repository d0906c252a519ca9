//! setTask (the org or the admin) and nextTask (admin): their arguments and answers. The task
//! is written by [`crate::task::command`]; the runner is [`crate::tasks`].

use crate::caller::Caller;
use crate::coded_error::CodedError;
use crate::context::Records;
use crate::http::body::args;
use crate::task::{self, command::write};
use crate::tasks::next_due;
use palimpsest_web::command::CommandRequest;
use serde::Deserialize;
use serde_json::{Map, Value, json};

/// `setTask {org?, data}`.
#[derive(Deserialize)]
struct SetTask {
    org: Option<String>,
    data: Map<String, Value>,
}

/// `setTask`: creates or replaces the task `[org, sha16(process/pk…)]`; answers its `k0`.
pub async fn set_task(
    records: &Records,
    caller: &Caller,
    request: &CommandRequest,
    body: &[u8],
) -> Result<Value, CodedError> {
    let a: SetTask = args(body)?;
    let org = caller.org(a.org.as_deref())?;
    let (k0, i0) = task::check(&a.data)?;
    let mut data = a.data;
    data.insert("clazz".into(), json!("Task"));
    data.insert("org".into(), json!(org));
    write(
        records,
        caller,
        request,
        &org,
        &k0,
        Some((i0, Value::Object(data))),
    )
    .await?;
    Ok(json!({"k0": k0}))
}

/// `nextTask {time}`.
#[derive(Deserialize)]
struct NextTask {
    time: String,
}

/// `nextTask` (admin).
pub async fn next_task(
    records: &Records,
    caller: &Caller,
    body: &[u8],
) -> Result<Value, CodedError> {
    caller.admin("nextTask")?;
    let a: NextTask = args(body)?;
    if !task::is_time_text(&a.time) {
        return Err(CodedError::bad(
            "time must be AAAAMMJJhhmmssmmm (17 digits)",
        ));
    }
    Ok(next_due(records, &a.time).await?.unwrap_or(Value::Null))
}
