//! What a projection is.

use crate::reads::Reads;
use crate::statement::Statement;
use deadpool_postgres::Transaction;
use palimpsest_events::{DecodeError, RecordedEvent};

/// Why a projection could not apply an event (the batch is rolled back and retried).
#[derive(Debug, thiserror::Error)]
pub enum ProjectionError {
    /// A read-model statement failed.
    #[error("read model write failed: {0}")]
    Db(#[from] tokio_postgres::Error),
    /// The event's payload does not decode.
    #[error(transparent)]
    Decode(#[from] DecodeError),
    /// The event contradicts the read model (a bug, or a log written by other code).
    #[error("projection cannot apply event: {0}")]
    Invalid(String),
    /// The log could not be read.
    #[error(transparent)]
    Log(#[from] palimpsest_log::LogError),
    /// No connection could be had.
    #[error("no database connection: {0}")]
    Pool(#[from] deadpool_postgres::PoolError),
    /// The projection cannot apply this event (named, with why): what a rebuild reports.
    #[error("{0}")]
    Stopped(Box<crate::Stall>),
    /// The checkpoint is not where this runner last left it (another process's runner applied
    /// events meanwhile): the batch wrote nothing, and the runner reads the log again.
    #[error("the projection's checkpoint moved since this runner last committed")]
    CheckpointMoved,
    /// The read model was built from another log than the one feeding it now: extending it
    /// would mix two histories. It needs a fresh read database, or a replay.
    #[error(
        "read model {projection} was built from log {fed_by}, not from this log ({log_id}): \
         give it a fresh read database or replay it"
    )]
    OtherLog {
        /// The read model.
        projection: String,
        /// The log its checkpoint belongs to.
        fed_by: uuid::Uuid,
        /// The log of this process.
        log_id: uuid::Uuid,
    },
    /// A JetStream message that does not belong to this log (its `Palimpsest-Log-Id` is
    /// another's, or missing): a projector fed by that stream would mix two histories. Point
    /// it at this log's stream (`--nats-stream`).
    #[error(
        "message {sequence} of JetStream stream {stream} belongs to {found}, not to this log \
         ({log_id}): give the projector this log's stream"
    )]
    ForeignMessage {
        /// The JetStream stream.
        stream: String,
        /// The message's sequence.
        sequence: u64,
        /// What its header names (`log <uuid>`, or that it names none).
        found: String,
        /// The log of this process.
        log_id: uuid::Uuid,
    },
    /// NATS could not be reached or refused a request (the projector connects again).
    #[error("nats: {0}")]
    Nats(String),
}

impl ProjectionError {
    /// Whether the failure is the database being away or busy (connection lost, server
    /// starting or shutting down, out of resources, a deadlock or serialization failure), so the
    /// same batch will apply once it is back; anything else is about the events themselves.
    pub fn is_transient(&self) -> bool {
        match self {
            ProjectionError::Pool(_) => true,
            ProjectionError::Db(e) => db_transient(e),
            ProjectionError::Log(palimpsest_log::LogError::Db(e)) => db_transient(e),
            ProjectionError::Log(palimpsest_log::LogError::Pool(_)) => true,
            ProjectionError::Log(palimpsest_log::LogError::NotDurable(_)) => true,
            ProjectionError::Nats(_) => true,
            ProjectionError::Log(_)
            | ProjectionError::Decode(_)
            | ProjectionError::Invalid(_)
            | ProjectionError::Stopped(_)
            | ProjectionError::CheckpointMoved
            | ProjectionError::OtherLog { .. }
            | ProjectionError::ForeignMessage { .. } => false,
        }
    }
}

/// A Postgres failure that says nothing about the statement: the connection closed or broke,
/// or class 08 (connection), 53 (resources), 57 (operator intervention: shutdown, cancel),
/// 58 (system), 40 (transaction rollback: deadlock, serialization) or lock not available.
fn db_transient(e: &tokio_postgres::Error) -> bool {
    let io = std::error::Error::source(e).is_some_and(|s| s.is::<std::io::Error>());
    match e.code() {
        None => e.is_closed() || io,
        Some(code) => {
            let code = code.code();
            ["08", "53", "57", "58", "40"]
                .iter()
                .any(|class| code.starts_with(class))
                || code == "55P03"
        }
    }
}

/// A read model: a deterministic mapping from events to writes in its own schema.
///
/// `apply` writes only through the transaction it is given and only into `schema` (the live
/// schema named [`Projection::name`] or a fresh one during a rebuild), and depends only on the
/// event and the rows it wrote before, so replaying the log from position 0 rebuilds exactly the
/// same rows.
#[async_trait::async_trait]
pub trait Projection: Send + Sync + 'static {
    /// The read model's name, also the Postgres schema its tables live in.
    fn name(&self) -> &'static str;

    /// The shape of the tables; raising it makes the runtime rebuild the read model on start.
    fn version(&self) -> i32 {
        1
    }

    /// Creates the tables and indexes in `schema`.
    async fn create_tables(
        &self,
        tx: &Transaction<'_>,
        schema: &str,
    ) -> Result<(), ProjectionError>;

    /// Applies one event; events of other contexts are ignored. A projection with a
    /// [`Planner`] or a [`ReadingPlanner`] need not write it: the default runs the event's plan.
    async fn apply(
        &self,
        tx: &Transaction<'_>,
        schema: &str,
        event: &RecordedEvent,
    ) -> Result<(), ProjectionError> {
        run_plan(self.plan(), tx, schema, std::slice::from_ref(event)).await
    }

    /// Applies a batch of events in order. The default runs a [`Planner`]'s or a
    /// [`ReadingPlanner`]'s plan of the whole batch, or applies the events one by one; a
    /// projection may write a batch in fewer statements (replays are mostly batches).
    async fn apply_batch(
        &self,
        tx: &Transaction<'_>,
        schema: &str,
        events: &[RecordedEvent],
    ) -> Result<(), ProjectionError> {
        if self.plan().is_some() {
            return run_plan(self.plan(), tx, schema, events).await;
        }
        for event in events {
            self.apply(tx, schema, event).await?;
        }
        Ok(())
    }

    /// The projection's [`Planner`], when its writes depend on its events alone.
    fn planner(&self) -> Option<&dyn Planner> {
        None
    }

    /// The projection's [`ReadingPlanner`], when its writes depend on its events and on rows
    /// it reads first.
    fn reading_planner(&self) -> Option<&dyn ReadingPlanner> {
        None
    }

    /// How the projection plans its writes, if it does ([`Planner`] first).
    fn plan(&self) -> Option<Plan<'_>> {
        self.planner()
            .map(Plan::FromEvents)
            .or_else(|| self.reading_planner().map(Plan::AfterReads))
    }

    /// The one context whose events this read model applies, when it ignores every other's.
    /// Its live runner then passes over a run of other contexts' events it holds in memory
    /// without a transaction, and commits its checkpoint past them later
    /// ([`crate::runner`]): on a write of one context, the other contexts' projectors stay
    /// off the database. `None` (the default): every event may write rows.
    fn context(&self) -> Option<&'static str> {
        None
    }

    /// Whether each of its rows belongs to the stream of the event that writes it, and no row
    /// depends on another stream's events: then the order of two streams' events does not
    /// matter, and the read model may be applied as partitions of its streams, each by a
    /// process of its own ([`crate::partition`]). `false` (the default): one runner applies
    /// every event in log order.
    fn partitionable(&self) -> bool {
        false
    }
}

/// Plans `events` with `plan` and runs the statements in `tx` (what a planned projection's
/// `apply` and `apply_batch` do); a projection with neither `apply` nor a planner cannot apply
/// anything.
async fn run_plan(
    plan: Option<Plan<'_>>,
    tx: &Transaction<'_>,
    schema: &str,
    events: &[RecordedEvent],
) -> Result<(), ProjectionError> {
    let Some(plan) = plan else {
        return Err(ProjectionError::Invalid(
            "the projection has neither `apply` nor a planner".into(),
        ));
    };
    let mut statements = Vec::new();
    plan.plan(Reads::of_transaction(tx), schema, events, &mut statements)
        .await?;
    crate::statement::run(tx, statements).await
}

/// How a projection plans a batch's writes as statements, which the runtime then sends itself,
/// pipelined with the checkpoint and the `COMMIT` ([`crate::planned`]).
#[derive(Clone, Copy)]
pub enum Plan<'a> {
    /// From the events alone: a live batch is one round trip.
    FromEvents(&'a dyn Planner),
    /// From the events and rows read first: a live batch is its reads, then one round trip.
    AfterReads(&'a dyn ReadingPlanner),
}

impl Plan<'_> {
    /// Appends to `out` the statements that apply `events` to the tables in `schema`, reading
    /// through `reads` what an [`Plan::AfterReads`] needs.
    pub async fn plan(
        &self,
        reads: Reads<'_>,
        schema: &str,
        events: &[RecordedEvent],
        out: &mut Vec<Statement>,
    ) -> Result<(), ProjectionError> {
        match self {
            Plan::FromEvents(planner) => planner.plan(schema, events, out),
            Plan::AfterReads(planner) => planner.plan(reads, schema, events, out).await,
        }
    }
}

/// A projection whose writes are decided by its events alone, never by a read of its tables:
/// the runtime sends a batch's writes itself, pipelined with the checkpoint and the `COMMIT`,
/// so a live batch takes one round trip ([`crate::planned`]). Its `apply` and `apply_batch`
/// (their defaults) run the plan too, so a replay writes what a live batch does.
pub trait Planner: Send + Sync {
    /// Appends to `out`, in the order they must run, the statements that apply `events` to the
    /// tables in `schema`.
    fn plan(
        &self,
        schema: &str,
        events: &[RecordedEvent],
        out: &mut Vec<Statement>,
    ) -> Result<(), ProjectionError>;
}

/// A projection whose writes depend on rows of its own it reads first (a record rewritten by
/// each event, say): it reads them through [`Reads`], on the batch's connection and inside its
/// transaction, and hands back its writes as statements. The runtime sends them pipelined with
/// the checkpoint, the notification and the `COMMIT` ([`crate::planned`]), so a live batch is
/// its reads, then one round trip, where awaiting its own writes and then committing would be
/// two. Its `apply` and `apply_batch` (their defaults) run the plan too, so a replay writes what
/// a live batch does.
///
/// A live batch may read before the projection's lock is taken: the checkpoint's guard then
/// refuses the whole batch if any other runner committed since this one last did, so the rows
/// read are the ones this runner's own last batch left.
#[async_trait::async_trait]
pub trait ReadingPlanner: Send + Sync {
    /// Appends to `out`, in the order they must run, the statements that apply `events` to the
    /// tables in `schema`, given the rows it reads through `reads` (which never see `out`).
    async fn plan(
        &self,
        reads: Reads<'_>,
        schema: &str,
        events: &[RecordedEvent],
        out: &mut Vec<Statement>,
    ) -> Result<(), ProjectionError>;
}
