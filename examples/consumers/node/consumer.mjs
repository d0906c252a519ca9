#!/usr/bin/env node
// A Palimpsest bus consumer in Node (nats 2.x): the atlas read model from JetStream.
//
// A durable pull consumer with explicit acks on the relay's stream (`PALIMPSEST`), filtered to
// `<prefix>.atlas.>`. It rebuilds one small read model, printed as JSON on stdout:
//
//   {"log_id": "...", "position": N,
//    "sections": {"<id>": {"title", "status", "version", "head_commit_id", "locked_by"}},
//    "entities": {"<id>": "<name>"}}            // published, live entities
//
// The ack floor (the stream sequence of the last event applied, which is its log position), the
// log id and the model are kept together in one state file, written atomically *before* the
// messages are acked; messages at or below the floor (redelivered after a crash between the
// write and the ack) are acked and skipped. A state file of another log (the
// `Palimpsest-Log-Id` header or the stream's `palimpsest_log_id` metadata differ) is refused:
// exit status 3.
//
// Every envelope is validated against `events/schemas/envelope.v1.json` and its payload against
// `events/schemas/<context>/<EventType>.v<schema_version>.json` (Ajv, JSON Schema 2020-12) when
// that folder exists (a notice on stderr says the check is skipped when it does not).
//
//   node consumer.mjs --once                    # catch up with the stream, print, exit
//   node consumer.mjs --until-position 120      # stop once the log is applied up to 120
//   node consumer.mjs                           # follow live; print after each catch-up
//
// See events/README.md, "Consuming the bus", for the settings used here and why.

import { AckPolicy, DeliverPolicy, connect } from "nats";
import { existsSync, readFileSync, readdirSync, renameSync, statSync, writeFileSync, openSync, fsyncSync, closeSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { parseArgs } from "node:util";

const LOG_ID_HEADER = "Palimpsest-Log-Id";
const METADATA_KEY = "palimpsest_log_id";
const DESCRIPTION_PREFIX = "palimpsest log ";
const EXIT_OTHER_LOG = 3;
const EXIT_BAD_EVENT = 4;
const EXIT_TIMEOUT = 5;

/** Diagnostics go to stderr: stdout carries only the model. */
function note(text) {
  process.stderr.write(`consumer.mjs: ${text}\n`);
}

/** An event or a stream this consumer must not apply; carries the exit status. */
class Refused extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

// --- the read model ----------------------------------------------------------------------------

function emptyModel() {
  return { sections: {}, entities: {} };
}

/** Folds one atlas envelope into the model (the same rules as the atlas projector). */
function apply(model, event) {
  const { category, key } = event.stream;
  const type = event.event_type;
  // The payload is the event's fields; `event_type` names which event (the Rust variant).
  const data = event.payload;
  if (data === null || typeof data !== "object" || Array.isArray(data)) {
    throw new Refused(EXIT_BAD_EVENT, `position ${event.position}: the ${type} payload is not an object`);
  }
  if (category === "section") {
    if (type === "SectionCreated") {
      model.sections[key] = { title: data.title, status: "editing", version: 0, head_commit_id: null, locked_by: null };
      return;
    }
    const section = model.sections[key];
    if (!section) {
      throw new Refused(EXIT_BAD_EVENT, `${type} of unknown section ${key}: was the consumer started after its SectionCreated?`);
    }
    switch (type) {
      case "SectionLocked": section.locked_by = data.locked_by; break;
      case "SectionUnlocked": section.locked_by = null; break;
      case "SectionCommitted":
      case "SectionRestored":
        section.head_commit_id = data.commit_id;
        section.version += 1;
        section.status = "editing";
        break;
      case "SectionSubmitted": section.status = "submitted"; section.locked_by = null; break;
      case "SubmissionApproved": section.status = "approved"; break;
      case "SubmissionRejected": section.status = "rejected"; break;
      case "SubmissionConflicted": section.status = "conflicted"; break;
    }
  } else if (category === "entity") {
    if (type === "EntityCreated" || type === "EntityUpdated") {
      const row = data.entity;
      if (row.is_deleted) delete model.entities[row.id];
      else model.entities[row.id] = row.name;
    } else if (type === "EntityDeleted") {
      delete model.entities[data.entity_id];
    }
  }
  // Other categories (geometry, publication, user) are not part of this model.
}

// --- schemas -------------------------------------------------------------------------------------

function jsonFiles(folder) {
  const out = [];
  for (const name of readdirSync(folder).sort()) {
    const path = join(folder, name);
    if (statSync(path).isDirectory()) out.push(...jsonFiles(path));
    else if (name.endsWith(".json")) out.push(path);
  }
  return out;
}

/** The JSON Schemas of events/schemas/ (2020-12), or nothing when the folder is absent. */
class Schemas {
  static async load(folder) {
    const schemas = new Schemas();
    schemas.folder = folder;
    schemas.enabled = existsSync(folder) && statSync(folder).isDirectory();
    schemas.validators = new Map();
    schemas.paths = new Map();
    if (!schemas.enabled) {
      note(`${folder} does not exist: events are decoded without schema validation`);
      return schemas;
    }
    const { default: Ajv2020 } = await import("ajv/dist/2020.js");
    // Formats (uuid, date-time, uint64, ...) are not asserted, as in the Python consumer.
    schemas.ajv = new Ajv2020({ strict: false, validateFormats: false });
    for (const path of jsonFiles(folder)) {
      if (relative(folder, path) === "index.json") continue;
      const schema = JSON.parse(readFileSync(path, "utf8"));
      if (typeof schema !== "object" || schema === null || Array.isArray(schema)) continue;
      const uri = pathToFileURL(path).href;
      schema.$id ??= uri;
      schemas.ajv.addSchema(schema);
      schemas.paths.set(path, schema.$id);
    }
    const index = join(folder, "index.json");
    schemas.index = new Map();
    if (existsSync(index)) {
      for (const entry of JSON.parse(readFileSync(index, "utf8"))) {
        schemas.index.set(`${entry.context}/${entry.event_type}/${Number(entry.schema_version)}`, entry.path);
      }
    }
    note(`validating events against ${folder}`);
    return schemas;
  }

  validate(rel, value, what) {
    const path = resolve(this.folder, rel);
    let validator = this.validators.get(path);
    if (!validator) {
      const id = this.paths.get(path);
      if (!id) throw new Refused(EXIT_BAD_EVENT, `${what}: no schema ${rel} in ${this.folder}`);
      validator = this.ajv.getSchema(id);
      this.validators.set(path, validator);
    }
    if (!validator(value)) {
      const first = validator.errors[0];
      throw new Refused(EXIT_BAD_EVENT, `${what} does not match ${rel} at ${first.instancePath || "/"}: ${first.message}`);
    }
  }

  check(event) {
    if (!this.enabled) return;
    const what = `position ${event.position}`;
    this.validate("envelope.v1.json", event, `${what} (envelope)`);
    const context = event.stream.context;
    const rel = this.index.get(`${context}/${event.event_type}/${Number(event.schema_version)}`)
      ?? `${context}/${event.event_type}.v${event.schema_version}.json`;
    this.validate(rel, event.payload, `${what} (${event.event_type} payload)`);
  }
}

// --- state ---------------------------------------------------------------------------------------

function loadState(path) {
  if (existsSync(path)) return JSON.parse(readFileSync(path, "utf8"));
  return { log_id: null, ack_floor: null, model: emptyModel() };
}

/** Writes the state atomically (a crash leaves the old file or the new one, never half). */
function saveState(path, state) {
  const temporary = `${path}.tmp`;
  writeFileSync(temporary, JSON.stringify(state));
  const fd = openSync(temporary, "r");
  fsyncSync(fd);
  closeSync(fd);
  renameSync(temporary, path);
}

/** The log id the relay marked the stream with: metadata on NATS 2.10+, else description. */
function streamLogId(config) {
  if (config.metadata && METADATA_KEY in config.metadata) return config.metadata[METADATA_KEY];
  const description = config.description ?? "";
  return description.startsWith(DESCRIPTION_PREFIX) ? description.slice(DESCRIPTION_PREFIX.length) : null;
}

// --- the consumer --------------------------------------------------------------------------------

function notFound(error) {
  return error?.api_error?.err_code === 10014 || error?.code === "404" || /not found/.test(error?.message ?? "");
}

/** Binds the durable, creating it to start at floor + 1; recreates one that is ahead of the
 * state file (its acks are not in our model: the state file is the truth). */
async function openConsumer(jsm, args, floor) {
  try {
    const info = await jsm.consumers.info(args.stream, args.durable);
    if (info.ack_floor.stream_seq <= floor) return;
    note(`durable ${args.durable} acked up to ${info.ack_floor.stream_seq}, the state file only to ${floor}: recreating it from ${floor + 1}`);
    await jsm.consumers.delete(args.stream, args.durable);
  } catch (error) {
    if (!notFound(error)) throw error;
  }
  await jsm.consumers.add(args.stream, {
    durable_name: args.durable,
    description: "palimpsest example consumer (node): atlas read model",
    deliver_policy: DeliverPolicy.StartSequence,
    opt_start_seq: floor + 1,
    ack_policy: AckPolicy.Explicit,
    ack_wait: 30_000_000_000, // nanoseconds
    max_ack_pending: 1000,
    filter_subject: `${args.prefix}.atlas.>`,
  });
  note(`created durable ${args.durable} on ${args.stream} from position ${floor + 1}`);
}

/** Checks one message (its log, its position, its schemas) and folds it into the model. */
function applyMessage(state, schemas, msg, position) {
  const logId = msg.headers?.get(LOG_ID_HEADER) || null;
  if (state.log_id === null) state.log_id = logId;
  if (logId !== state.log_id) {
    throw new Refused(EXIT_OTHER_LOG, `position ${position} is of log ${logId}, the state file of log ${state.log_id}: refusing it`);
  }
  const event = msg.json();
  if (event.position !== position) {
    throw new Refused(EXIT_BAD_EVENT, `stream sequence ${position} carries position ${event.position}`);
  }
  schemas.check(event);
  apply(state.model, event);
  state.ack_floor = position;
}

/** Whether every message of our filter up to `until` is applied: the stream holds `until`
 * (asked first), then nothing is left to deliver or to ack. */
async function caughtUp(jsm, args, until) {
  if ((await jsm.streams.info(args.stream)).state.last_seq < until) return false;
  const info = await jsm.consumers.info(args.stream, args.durable);
  return info.num_pending === 0 && info.num_ack_pending === 0;
}

function sorted(value) {
  if (Array.isArray(value)) return value.map(sorted);
  if (value === null || typeof value !== "object") return value;
  return Object.fromEntries(Object.keys(value).sort().map((k) => [k, sorted(value[k])]));
}

function emit(state) {
  const out = { log_id: state.log_id, position: state.ack_floor ?? 0, sections: state.model.sections, entities: state.model.entities };
  process.stdout.write(`${JSON.stringify(sorted(out))}\n`);
}

async function run(args) {
  const state = loadState(args.state);
  state.ack_floor ??= args.from;
  const schemas = await Schemas.load(args.schemas);
  const nc = await connect({ servers: args.server, name: args.durable });
  try {
    const jsm = await nc.jetstreamManager();
    const js = nc.jetstream();
    const stream = await jsm.streams.info(args.stream);
    const marked = streamLogId(stream.config);
    if (state.log_id === null) state.log_id = marked;
    else if (marked !== null && marked !== state.log_id) {
      throw new Refused(EXIT_OTHER_LOG, `${args.state} holds the ack floor of log ${state.log_id}, stream ${args.stream} holds log ${marked}: refusing to continue (remove the state file and the durable to start over)`);
    }
    const until = args.once ? stream.state.last_seq : args.until;
    await openConsumer(jsm, args, state.ack_floor);
    const consumer = await js.consumers.get(args.stream, args.durable);
    const deadline = Date.now() + args.timeout * 1000;
    let dirty = false;
    for (;;) {
      const messages = [];
      for await (const msg of await consumer.fetch({ max_messages: 100, expires: 1000 })) {
        messages.push(msg);
      }
      const applied = [], skipped = [], later = [];
      try {
        for (const msg of messages) {
          const position = msg.seq;
          if (until !== null && position > until) later.push(msg);
          else if (position <= state.ack_floor) skipped.push(msg);
          else {
            applyMessage(state, schemas, msg, position);
            applied.push(msg);
          }
        }
      } catch (error) {
        // Nothing of this batch was saved: hand it back for the next run at once rather than
        // after the ack wait.
        for (const msg of messages) msg.nak();
        await nc.flush();
        throw error;
      }
      if (applied.length) {
        saveState(args.state, state);
        dirty = true;
      }
      for (const msg of [...applied, ...skipped]) msg.ack();
      for (const msg of later) msg.nak();
      await nc.flush();
      if (until === null) {
        if (!messages.length && dirty) {
          emit(state);
          dirty = false;
        }
        continue;
      }
      if (later.length || state.ack_floor >= until) break;
      if (!messages.length && await caughtUp(jsm, args, until)) break;
      if (Date.now() > deadline) {
        throw new Refused(EXIT_TIMEOUT, `not at position ${until} after ${args.timeout} s (at ${state.ack_floor})`);
      }
    }
    saveState(args.state, state);
    emit(state);
    return 0;
  } finally {
    await nc.drain();
  }
}

function parse() {
  const here = dirname(fileURLToPath(import.meta.url));
  const { values } = parseArgs({
    options: {
      server: { type: "string", default: process.env.NATS_URL ?? "nats://127.0.0.1:4222" },
      stream: { type: "string", default: process.env.PALIMPSEST_NATS_STREAM ?? "PALIMPSEST" },
      prefix: { type: "string", default: process.env.PALIMPSEST_NATS_SUBJECT_PREFIX ?? "palimpsest" },
      durable: { type: "string", default: "example-atlas-node" },
      state: { type: "string", default: "atlas-consumer-node.json" },
      from: { type: "string", default: "0" },
      "until-position": { type: "string" },
      once: { type: "boolean", default: false },
      timeout: { type: "string", default: "120" },
      schemas: { type: "string", default: resolve(here, "../../../events/schemas") },
      help: { type: "boolean", default: false },
    },
  });
  if (values.help) {
    process.stdout.write("usage: consumer.mjs [--server URL] [--stream NAME] [--prefix P] [--durable NAME] [--state FILE] [--from POSITION] [--until-position N | --once] [--timeout S] [--schemas DIR]\n");
    process.exit(0);
  }
  const integer = (name, text) => {
    const n = Number(text);
    if (!Number.isInteger(n) || n < 0) {
      note(`--${name} must be a non-negative integer, not ${text}`);
      process.exit(2);
    }
    return n;
  };
  return {
    server: values.server,
    stream: values.stream,
    prefix: values.prefix,
    durable: values.durable,
    state: values.state,
    from: integer("from", values.from),
    until: values["until-position"] === undefined ? null : integer("until-position", values["until-position"]),
    once: values.once,
    timeout: Number(values.timeout),
    schemas: values.schemas,
  };
}

try {
  process.exitCode = await run(parse());
} catch (error) {
  if (error instanceof Refused) {
    note(error.message);
    process.exitCode = error.status;
  } else {
    throw error;
  }
}
