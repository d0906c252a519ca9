//! Configuration shared by every subcommand, from flags and the environment.

use clap::Args;
use palimpsest_web::limits::HttpLimits;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

/// The data folder when none is given (`--data-dir`, `PALIMPSEST_DATA_DIR`).
pub const DEFAULT_DATA_DIR: &str = ".data";

/// Where the log, NATS and secrets are, and which contexts to serve.
#[derive(Debug, Clone, Args)]
pub struct Settings {
    /// Postgres holding the log and the read models.
    #[arg(
        long,
        env = "DATABASE_URL",
        default_value = "postgres://postgres@127.0.0.1:5432/palimpsest",
        global = true
    )]
    pub database_url: String,
    /// A read model kept in a Postgres of its own, `NAME=URL` (repeat the flag; the
    /// environment form separates them by spaces): a context's name (`pads`, ...),
    /// `stream_heads`, or `all` for every read model not named. Its projector writes rows and
    /// checkpoint there, its context reads there and its writes wait for the checkpoint there.
    /// The others stay in `DATABASE_URL`.
    #[arg(
        long = "read-database-url",
        env = "PALIMPSEST_READ_DATABASE_URLS",
        value_delimiter = ' ',
        value_parser = read_database_url,
        global = true
    )]
    pub read_database_urls: Vec<ReadModelUrl>,
    /// A streaming replica of a read model's database, `NAME=URL` as for
    /// `--read-database-url`: requests read that read model there once the replica has
    /// replayed what they must see (the position a client names in header
    /// `Palimpsest-Position`, or their own write), else from the primary.
    #[arg(
        long = "read-replica-url",
        env = "PALIMPSEST_READ_REPLICA_URLS",
        value_delimiter = ' ',
        value_parser = read_database_url,
        global = true
    )]
    pub read_replica_urls: Vec<ReadModelUrl>,
    /// How long a request waits for a replica to replay what it must see before it reads the
    /// primary instead.
    #[arg(
        long,
        env = "PALIMPSEST_READ_REPLICA_WAIT",
        default_value = "1s",
        value_parser = duration,
        global = true
    )]
    pub read_replica_wait: Duration,
    /// Reads the replica without checking its checkpoint: never set by the binary; a test sets
    /// it to show that the check is what keeps read-your-writes.
    #[arg(skip)]
    pub read_replica_unchecked: bool,
    /// A read model applied as N partitions of its streams, `NAME=N` (repeat the flag; the
    /// environment form separates them by spaces): every `project` (and `run`) process offers
    /// to run its partitions and takes its share, and a write waits only for the partitions of
    /// the streams it wrote. Only a read model whose rows each belong to one stream can be split
    /// (`stream_heads`); its partitions read the log whatever `--source` says. Give every
    /// process the same value: changing N rebuilds the read model.
    #[arg(
        long = "partitions",
        env = "PALIMPSEST_PARTITIONS",
        value_delimiter = ' ',
        value_parser = read_model_partitions,
        global = true
    )]
    pub partitions: Vec<ReadModelPartitions>,
    /// Where the web console's built assets are (`just console` builds them into
    /// `console/dist`); `/console` serves them, or says how to build them when they are missing.
    #[arg(
        long,
        env = "PALIMPSEST_CONSOLE_DIR",
        default_value = "console/dist",
        global = true
    )]
    pub console_dir: PathBuf,
    /// Where the projectors of `project` and `run` take their events: `log` (read from the
    /// log's database) or `nats` (the relay's JetStream stream, through a durable consumer per
    /// read model: the log's database then serves appends and the relay only).
    #[arg(
        long = "source",
        env = "PALIMPSEST_PROJECTOR_SOURCE",
        value_enum,
        default_value_t = ProjectorSource::Log,
        global = true
    )]
    pub projector_source: ProjectorSource,
    /// NATS server(s) with JetStream.
    #[arg(
        long,
        env = "NATS_URL",
        default_value = "nats://127.0.0.1:4222",
        global = true
    )]
    pub nats_url: String,
    /// Replicas of the JetStream stream the relay creates (3 on a three-node cluster).
    #[arg(
        long,
        env = "PALIMPSEST_NATS_REPLICAS",
        default_value_t = 1,
        global = true
    )]
    pub nats_replicas: usize,
    /// The JetStream stream the relay publishes the log into (and the projectors and
    /// consumers read); `PALIMPSEST` when absent or blank.
    #[arg(long, env = "PALIMPSEST_NATS_STREAM", global = true)]
    pub nats_stream: Option<String>,
    /// The first token(s) of every subject the relay publishes on (`<prefix>.<context>.…`; the
    /// stream's filter is `<prefix>.>`, tree heads go on `<prefix>-log.…`): deployments sharing
    /// one NATS choose different prefixes and stream names. Tokens of ASCII letters, digits,
    /// `-` and `_`, separated by `.`.
    #[arg(
        long,
        env = "PALIMPSEST_NATS_SUBJECT_PREFIX",
        default_value = palimpsest_events::subject::DEFAULT_PREFIX,
        value_parser = subject_prefix,
        global = true
    )]
    pub nats_subject_prefix: String,
    /// How long the relay may fail for the same reason, without publishing, before `/readyz`
    /// answers 503 naming it (`250ms`, `10s`, `2m` or bare seconds).
    #[arg(
        long,
        env = "PALIMPSEST_RELAY_STUCK_AFTER",
        default_value = "30s",
        value_parser = duration,
        global = true
    )]
    pub relay_stuck_after: Duration,
    /// Where generated secrets (admin token, pads API key) are kept.
    #[arg(
        long,
        env = "PALIMPSEST_DATA_DIR",
        default_value = DEFAULT_DATA_DIR,
        global = true
    )]
    pub data_dir: PathBuf,
    /// The HTTP limits every served route is held to.
    #[command(flatten)]
    pub limits: LimitSettings,
    /// The largest event the log accepts, as the relay publishes it (keep it below NATS'
    /// `max_payload`).
    #[arg(long, env = "PALIMPSEST_MAX_EVENT_BYTES", default_value_t = palimpsest_log::limits::DEFAULT_MAX_EVENT_BYTES, global = true)]
    pub max_event_bytes: usize,
    /// The largest append the log accepts, all its events together.
    #[arg(long, env = "PALIMPSEST_MAX_APPEND_BYTES", default_value_t = palimpsest_log::limits::DEFAULT_MAX_APPEND_BYTES, global = true)]
    pub max_append_bytes: usize,
    /// The admin token; generated into `<data-dir>/admin-token` when absent. Environment only
    /// in practice (a flag would show in the process list).
    #[arg(
        long,
        env = "PALIMPSEST_ADMIN_TOKEN",
        hide = true,
        hide_env_values = true,
        global = true
    )]
    pub admin_token: Option<String>,
    /// The log's Ed25519 signing key (64 hex digits); generated into
    /// `<data-dir>/log-signing-key` when absent. Environment only in practice.
    #[arg(
        long,
        env = "PALIMPSEST_LOG_SIGNING_KEY",
        hide = true,
        hide_env_values = true,
        global = true
    )]
    pub log_signing_key: Option<String>,
    /// The tree maker signs a head once this many events were added since the last one...
    #[arg(
        long,
        env = "PALIMPSEST_TREE_HEAD_EVENTS",
        default_value_t = 1000,
        global = true
    )]
    pub tree_head_events: u64,
    /// ...or once this many milliseconds passed, whichever comes first.
    #[arg(
        long,
        env = "PALIMPSEST_TREE_HEAD_MS",
        default_value_t = 250,
        global = true
    )]
    pub tree_head_ms: u64,
}

impl Settings {
    /// The settings of a process on the log at `database_url` with its secrets in `data_dir`,
    /// every other setting at its default and no NATS (what a test or a tool run in-process
    /// starts from; change a field with `..`).
    pub fn for_database(database_url: String, data_dir: PathBuf) -> Self {
        Settings {
            database_url,
            read_database_urls: Vec::new(),
            read_replica_urls: Vec::new(),
            read_replica_wait: Duration::from_secs(1),
            read_replica_unchecked: false,
            partitions: Vec::new(),
            console_dir: PathBuf::from("console/dist"),
            projector_source: ProjectorSource::Log,
            nats_url: String::new(),
            nats_replicas: 1,
            nats_stream: None,
            nats_subject_prefix: palimpsest_events::subject::DEFAULT_PREFIX.to_owned(),
            relay_stuck_after: palimpsest_log::relay::DEFAULT_STUCK_AFTER,
            data_dir,
            limits: LimitSettings::default(),
            max_event_bytes: palimpsest_log::limits::DEFAULT_MAX_EVENT_BYTES,
            max_append_bytes: palimpsest_log::limits::DEFAULT_MAX_APPEND_BYTES,
            admin_token: None,
            log_signing_key: None,
            tree_head_events: 1000,
            tree_head_ms: 250,
        }
    }

    /// The log's signing key: the one given, else the one kept in `<data-dir>/log-signing-key`
    /// (generated there when missing). Every process that appends signs with it.
    pub fn log_signer(&self) -> anyhow::Result<palimpsest_log::tree::LogSigner> {
        Ok(palimpsest_web::state::log_signer(
            self.log_signing_key.as_deref(),
            &self.data_dir,
        )?)
    }

    /// Opens the log signing every batch with [`Settings::log_signer`].
    pub async fn store(&self) -> anyhow::Result<palimpsest_log::EventStore> {
        let signer = self.log_signer()?;
        Ok(palimpsest_log::EventStore::connect_signed(&self.database_url, signer).await?)
    }

    /// When the tree maker signs heads.
    pub fn head_policy(&self) -> palimpsest_log::tree::maker::HeadPolicy {
        palimpsest_log::tree::maker::HeadPolicy {
            every_events: self.tree_head_events.max(1),
            every: Duration::from_millis(self.tree_head_ms),
        }
    }

    /// What the platform itself is configured with.
    pub fn platform(&self) -> palimpsest_web::PlatformSettings {
        palimpsest_web::PlatformSettings {
            admin_token: self.admin_token.clone(),
            log_signing_key: self.log_signing_key.clone(),
            limits: palimpsest_log::Limits {
                max_event_bytes: self.max_event_bytes,
                max_append_bytes: self.max_append_bytes,
            },
            read_databases: by_read_model(&self.read_database_urls),
            read_replicas: by_read_model(&self.read_replica_urls),
            replica_wait: self.read_replica_wait,
            replica_unchecked: self.read_replica_unchecked,
            partitions: self
                .partitions
                .iter()
                .map(|p| (p.model.clone(), p.count))
                .collect(),
            console_dir: Some(self.console_dir.clone()),
        }
    }
}

/// Where projectors take their events from.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum ProjectorSource {
    /// The log's database, read on from each checkpoint.
    #[default]
    Log,
    /// The relay's JetStream stream (`--nats-stream`, `--nats-subject-prefix`).
    Nats,
}

/// A URL given to one read model (or to `all`): `NAME=URL` on the command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadModelUrl {
    /// The read model's name, or `all`.
    pub model: String,
    /// Its database.
    pub url: String,
}

/// The name that gives a URL to every read model not named on its own.
pub const ALL_READ_MODELS: &str = "all";

/// `NAME=URL`, refused (with what is known) unless NAME is a read model of the binary or
/// `all`, and URL a Postgres URL.
pub fn read_database_url(text: &str) -> Result<ReadModelUrl, String> {
    let Some((model, url)) = text.split_once('=') else {
        return Err(format!("`{text}` is not NAME=URL"));
    };
    let known: Vec<&'static str> = crate::contexts::projections(&crate::contexts::all())
        .iter()
        .map(|p| p.name())
        .collect();
    if model != ALL_READ_MODELS && !known.contains(&model) {
        return Err(format!(
            "unknown read model `{model}`; known: {}, or {ALL_READ_MODELS}",
            known.join(", ")
        ));
    }
    url.parse::<tokio_postgres::Config>()
        .map_err(|e| format!("{model}: `{url}` is not a Postgres URL: {e}"))?;
    Ok(ReadModelUrl {
        model: model.to_owned(),
        url: url.to_owned(),
    })
}

/// Read model → URL: `all` gives every read model of the binary its URL, and a read model
/// named on its own takes its own; the last of repeated names wins.
pub fn by_read_model(given: &[ReadModelUrl]) -> std::collections::BTreeMap<String, String> {
    let mut urls = std::collections::BTreeMap::new();
    if let Some(all) = given.iter().rev().find(|g| g.model == ALL_READ_MODELS) {
        for projection in crate::contexts::projections(&crate::contexts::all()) {
            urls.insert(projection.name().to_owned(), all.url.clone());
        }
    }
    for one in given.iter().filter(|g| g.model != ALL_READ_MODELS) {
        urls.insert(one.model.clone(), one.url.clone());
    }
    urls
}

/// A read model split into partitions: `NAME=N` on the command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadModelPartitions {
    /// The read model's name.
    pub model: String,
    /// Into how many partitions.
    pub count: u32,
}

/// `NAME=N`, refused (saying why) unless NAME is a read model of the binary that can be split
/// and N is between 1 and [`MAX_PARTITIONS`](palimpsest_projections::partition::MAX_PARTITIONS).
pub fn read_model_partitions(text: &str) -> Result<ReadModelPartitions, String> {
    let Some((model, count)) = text.split_once('=') else {
        return Err(format!("`{text}` is not NAME=N"));
    };
    let projections = crate::contexts::projections(&crate::contexts::all());
    let Some(projection) = projections.iter().find(|p| p.name() == model) else {
        return Err(format!("unknown read model `{model}`"));
    };
    if !projection.partitionable() {
        let splittable: Vec<&str> = projections
            .iter()
            .filter(|p| p.partitionable())
            .map(|p| p.name())
            .collect();
        return Err(format!(
            "read model `{model}` cannot be split: its rows do not each belong to one stream \
             (splittable: {})",
            splittable.join(", ")
        ));
    }
    let max = palimpsest_projections::partition::MAX_PARTITIONS;
    match count.parse::<u32>() {
        Ok(count) if (1..=max).contains(&count) => Ok(ReadModelPartitions {
            model: model.to_owned(),
            count,
        }),
        _ => Err(format!(
            "{model}: `{count}` is not a number of partitions from 1 to {max}"
        )),
    }
}

/// HTTP settings of `serve` and `run`.
#[derive(Debug, Clone, Args)]
pub struct HttpSettings {
    /// Address to listen on.
    #[arg(
        long = "http",
        env = "PALIMPSEST_HTTP",
        default_value = "127.0.0.1:8080"
    )]
    pub addr: SocketAddr,
    /// Serve only these contexts (comma separated); all of them when absent.
    #[arg(long, value_delimiter = ',')]
    pub contexts: Vec<String>,
    /// The records context's schema file: a JSON list of class declarations.
    #[arg(long, env = "PALIMPSEST_RECORDS_SCHEMA")]
    pub records_schema: Option<PathBuf>,
    /// The records context's DELTA, in ms: what a list answer subtracts from its time to give
    /// the version a client stores next. It must exceed the longest time from an operation's
    /// start to its rows being readable, on every server (clocks included).
    #[arg(long, env = "PALIMPSEST_RECORDS_DELTA_MS", default_value_t = 10_000, value_parser = clap::value_parser!(i64).range(0..))]
    pub records_delta_ms: i64,
    /// How long the records context keeps zombies (deleted SYNC documents) and `del` rows
    /// before the server purges them itself, in ms; kept until an admin purge when absent.
    #[arg(long, env = "PALIMPSEST_RECORDS_ZOMBIE_RETENTION_MS", value_parser = clap::value_parser!(i64).range(0..))]
    pub records_zombie_retention_ms: Option<i64>,
    /// The user name CouchDB clients send with the admin token as HTTP Basic credentials
    /// (`<name>:<admin token>`) to act as the docs context's server admin.
    #[arg(long, env = "PALIMPSEST_DOCS_ADMIN_NAME", default_value = palimpsest_docs::settings::DEFAULT_ADMIN_NAME)]
    pub docs_admin_name: String,
    /// The docs context's attachment folder (attachments above the inline size, one file per
    /// SHA-1); `<data-dir>/docs-attachments` when absent.
    #[arg(long, env = "PALIMPSEST_DOCS_ATTACHMENTS_DIR")]
    pub docs_attachments_dir: Option<PathBuf>,
    /// The largest docs attachment kept inline (in its event and the table row), in bytes (at
    /// most 512 KiB): larger ones go to the folder.
    #[arg(long, env = "PALIMPSEST_DOCS_INLINE_MAX", default_value_t = palimpsest_docs::attachments::DEFAULT_INLINE_MAX)]
    pub docs_inline_max: u64,
    /// The resources context's content folder (content above the inline size, one file per
    /// sha256); `<data-dir>/resources-content` when absent.
    #[arg(long, env = "PALIMPSEST_RESOURCES_CONTENT_DIR")]
    pub resources_content_dir: Option<PathBuf>,
    /// The largest resources content kept inline (in its event and the table row), in bytes
    /// (at most 512 KiB): larger content goes to the folder.
    #[arg(long, env = "PALIMPSEST_RESOURCES_INLINE_MAX", default_value_t = palimpsest_resources::content::DEFAULT_INLINE_MAX)]
    pub resources_inline_max: u64,
    /// The records context's previous site keys (comma-separated, 64 hex digits each): what
    /// they sealed still opens until `rotateKey` has resealed it with the current key.
    #[arg(long, env = "PALIMPSEST_RECORDS_OLD_KEYS", hide_env_values = true)]
    pub records_old_keys: Option<String>,
    /// The pads API key; generated into `<data-dir>/APIKEY.txt` when absent (environment only
    /// in practice).
    #[arg(
        long,
        env = "PALIMPSEST_PADS_APIKEY",
        hide = true,
        hide_env_values = true
    )]
    pub pads_apikey: Option<String>,
    /// The key sealing docs users' password hashes (64 hex digits); generated into
    /// `<data-dir>/docs-password-key` when absent (environment only in practice).
    #[arg(
        long,
        env = "PALIMPSEST_DOCS_PASSWORD_KEY",
        hide = true,
        hide_env_values = true
    )]
    pub docs_password_key: Option<String>,
    /// The records site key (64 hex digits); generated into `<data-dir>/records-key` when
    /// absent (environment only in practice).
    #[arg(
        long,
        env = "PALIMPSEST_RECORDS_KEY",
        hide = true,
        hide_env_values = true
    )]
    pub records_key: Option<String>,
}

/// The HTTP limits (README, "Configuration"): body sizes per route class, read timeouts, the
/// request timeout, the concurrency cap and its anonymous share. Durations read `250ms`, `10s`, `2m` or bare seconds.
#[derive(Debug, Clone, Args)]
pub struct LimitSettings {
    /// Largest request body of an ordinary route, in bytes.
    #[arg(long, env = "PALIMPSEST_HTTP_BODY_LIMIT", default_value_t = 2 * 1024 * 1024, global = true)]
    pub http_body_limit: u64,
    /// Largest request body of a route a context put in the upload class, in bytes.
    #[arg(long, env = "PALIMPSEST_HTTP_UPLOAD_LIMIT", default_value_t = 1024 * 1024 * 1024, global = true)]
    pub http_upload_limit: u64,
    /// How long a client may take to send a request's headers.
    #[arg(long, env = "PALIMPSEST_HTTP_HEADER_TIMEOUT", default_value = "10s", value_parser = duration, global = true)]
    pub http_header_timeout: Duration,
    /// How long a client may take to send a request's body.
    #[arg(long, env = "PALIMPSEST_HTTP_BODY_TIMEOUT", default_value = "30s", value_parser = duration, global = true)]
    pub http_body_timeout: Duration,
    /// How long a request may take, from its headers to its answer (503 after).
    #[arg(long, env = "PALIMPSEST_HTTP_REQUEST_TIMEOUT", default_value = "60s", value_parser = duration, global = true)]
    pub http_request_timeout: Duration,
    /// How many requests are served at once; later ones wait for a slot.
    #[arg(
        long,
        env = "PALIMPSEST_HTTP_MAX_CONCURRENT",
        default_value_t = 1024,
        global = true
    )]
    pub http_max_concurrent: usize,
    /// How many of those slots requests presenting no credential may hold (the rest are kept
    /// for requests with one: `palimpsest_web::credentials` lists what counts).
    #[arg(
        long,
        env = "PALIMPSEST_HTTP_MAX_ANONYMOUS",
        default_value_t = 64,
        global = true
    )]
    pub http_max_anonymous: usize,
}

impl Default for LimitSettings {
    fn default() -> Self {
        let d = HttpLimits::default();
        LimitSettings {
            http_body_limit: d.body_limit,
            http_upload_limit: d.upload_limit,
            http_header_timeout: d.header_timeout,
            http_body_timeout: d.body_timeout,
            http_request_timeout: d.request_timeout,
            http_max_concurrent: d.max_concurrent,
            http_max_anonymous: d.max_anonymous,
        }
    }
}

impl LimitSettings {
    /// The limits, with the upload routes the served contexts declared.
    pub fn limits(&self, upload_routes: impl IntoIterator<Item = String>) -> HttpLimits {
        HttpLimits {
            body_limit: self.http_body_limit,
            upload_limit: self.http_upload_limit,
            header_timeout: self.http_header_timeout,
            body_timeout: self.http_body_timeout,
            request_timeout: self.http_request_timeout,
            max_concurrent: self.http_max_concurrent,
            max_anonymous: self.http_max_anonymous,
            upload_routes: upload_routes.into_iter().collect(),
        }
    }
}

/// A subject prefix, refused (with the reason) unless [`palimpsest_events::subject::validate_prefix`]
/// accepts it.
pub fn subject_prefix(text: &str) -> Result<String, String> {
    palimpsest_events::subject::validate_prefix(text)
        .map(|()| text.to_owned())
        .map_err(|e| e.to_string())
}

/// A duration: `250ms`, `10s`, `2m`, or a bare number of seconds.
pub fn duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let (number, unit) = match text.find(|c: char| !c.is_ascii_digit()) {
        Some(i) => text.split_at(i),
        None => (text, "s"),
    };
    let n: u64 = number
        .parse()
        .map_err(|_| format!("`{text}` is not a duration such as 250ms, 10s or 2m"))?;
    match unit {
        "ms" => Ok(Duration::from_millis(n)),
        "s" => Ok(Duration::from_secs(n)),
        "m" => Ok(Duration::from_secs(n.saturating_mul(60))),
        _ => Err(format!("`{text}`: the unit must be ms, s or m")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_units_or_seconds() {
        assert_eq!(duration("250ms"), Ok(Duration::from_millis(250)));
        assert_eq!(duration("10s"), Ok(Duration::from_secs(10)));
        assert_eq!(duration("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(duration("7"), Ok(Duration::from_secs(7)));
        assert!(duration("ten").is_err());
        assert!(duration("5h").is_err());
    }

    #[test]
    fn read_database_urls_name_read_models_and_all_gives_the_rest() {
        use crate::cli::Cli;
        use clap::Parser;
        let cli = Cli::try_parse_from([
            "palimpsest",
            "tail",
            "--read-database-url",
            "all=postgres://a/reads",
            "--read-database-url",
            "pads=postgres://b/pads",
            "--read-replica-url",
            "atlas=postgres://c/reads",
        ])
        .expect("parses");
        let platform = cli.settings.platform();
        let reads = &platform.read_databases;
        assert_eq!(
            reads.get("pads").map(String::as_str),
            Some("postgres://b/pads")
        );
        for other in ["atlas", "docs", "records", "resources", "stream_heads"] {
            assert_eq!(
                reads.get(other).map(String::as_str),
                Some("postgres://a/reads")
            );
        }
        let replicas: Vec<_> = platform.read_replicas.keys().collect();
        assert_eq!(replicas, ["atlas"]);
        let none = Cli::try_parse_from(["palimpsest", "tail"]).expect("parses");
        assert!(
            none.settings.platform().read_databases.is_empty(),
            "one database by default"
        );
        for bad in ["nowhere=postgres://a/b", "pads", "pads=not a url"] {
            let err = Cli::try_parse_from(["palimpsest", "tail", "--read-database-url", bad])
                .expect_err(bad);
            assert!(err.to_string().contains("read-database-url"), "{err}");
        }
    }

    #[test]
    fn partitions_name_a_read_model_that_can_be_split_and_a_count() {
        use crate::cli::Cli;
        use clap::Parser;
        let cli = Cli::try_parse_from(["palimpsest", "project", "--partitions", "stream_heads=8"])
            .expect("parses");
        let platform = cli.settings.platform();
        assert_eq!(platform.partitions.get("stream_heads"), Some(&8));
        for (bad, why) in [
            ("pads=4", "cannot be split"),
            ("nowhere=4", "unknown read model"),
            ("stream_heads=0", "number of partitions"),
            ("stream_heads=257", "number of partitions"),
            ("stream_heads", "NAME=N"),
        ] {
            let err =
                Cli::try_parse_from(["palimpsest", "project", "--partitions", bad]).expect_err(bad);
            assert!(err.to_string().contains(why), "{bad}: {err}");
        }
    }

    #[test]
    fn projectors_read_the_log_unless_told_to_read_nats() {
        use crate::cli::Cli;
        use clap::Parser;
        let default = Cli::try_parse_from(["palimpsest", "project"]).expect("parses");
        assert_eq!(default.settings.projector_source, ProjectorSource::Log);
        assert!(crate::processes::feed(&default.settings).is_none());
        let nats = Cli::try_parse_from(["palimpsest", "run", "--source", "nats"]).expect("parses");
        assert_eq!(nats.settings.projector_source, ProjectorSource::Nats);
        let feed = crate::processes::feed(&nats.settings).expect("a feed");
        assert_eq!(feed.stream, "PALIMPSEST");
        assert_eq!(feed.subject_prefix, "palimpsest");
        let err = Cli::try_parse_from(["palimpsest", "project", "--source", "kafka"])
            .expect_err("an unknown source");
        assert!(err.to_string().contains("--source"), "{err}");
    }

    #[test]
    fn an_illegal_subject_prefix_is_refused_at_startup() {
        use crate::cli::Cli;
        use clap::Parser;
        let cli = Cli::try_parse_from([
            "palimpsest",
            "tail",
            "--nats-subject-prefix",
            "acme.eu-1",
            "--relay-stuck-after",
            "5s",
        ])
        .expect("parses");
        assert_eq!(cli.settings.nats_subject_prefix, "acme.eu-1");
        assert_eq!(cli.settings.relay_stuck_after, Duration::from_secs(5));
        let default = Cli::try_parse_from(["palimpsest", "tail"]).expect("parses");
        assert_eq!(default.settings.nats_subject_prefix, "palimpsest");
        for bad in ["acme.*", "acme.", "a b", "acme.>"] {
            let err = Cli::try_parse_from(["palimpsest", "tail", "--nats-subject-prefix", bad])
                .expect_err(bad);
            assert!(err.to_string().contains("subject prefix"), "{err}");
        }
    }
}
