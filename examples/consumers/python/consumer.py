#!/usr/bin/env python3
"""A Palimpsest bus consumer in Python (nats-py): the atlas read model from JetStream.

A durable pull consumer with explicit acks on the relay's stream (`PALIMPSEST`), filtered to
`<prefix>.atlas.>`. It rebuilds one small read model, printed as JSON on stdout:

    {"log_id": "...", "position": N,
     "sections": {"<id>": {"title", "status", "version", "head_commit_id", "locked_by"}},
     "entities": {"<id>": "<name>"}}            # published, live entities

The ack floor (the stream sequence of the last event applied, which is its log position), the
log id and the model are kept together in one state file, written atomically *before* the
messages are acked; messages at or below the floor (redelivered after a crash between the write
and the ack) are acked and skipped. A state file of another log (the `Palimpsest-Log-Id` header
or the stream's `palimpsest_log_id` metadata differ) is refused: exit status 3.

Every envelope is validated against `events/schemas/envelope.v1.json` and its payload against
`events/schemas/<context>/<EventType>.v<schema_version>.json` when that folder exists (a notice
on stderr says the check is skipped when it does not).

    python consumer.py --once                      # catch up with the stream, print, exit
    python consumer.py --until-position 120        # stop once the log is applied up to 120
    python consumer.py                             # follow live; print after each catch-up

See events/README.md, "Consuming the bus", for the settings used here and why.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from pathlib import Path

import nats
from nats.errors import TimeoutError as NatsTimeout
from nats.js.api import AckPolicy, ConsumerConfig, DeliverPolicy
from nats.js.errors import NotFoundError

LOG_ID_HEADER = "Palimpsest-Log-Id"
METADATA_KEY = "palimpsest_log_id"
DESCRIPTION_PREFIX = "palimpsest log "
EXIT_OTHER_LOG = 3
EXIT_BAD_EVENT = 4
EXIT_TIMEOUT = 5


def note(text: str) -> None:
    """Diagnostics go to stderr: stdout carries only the model."""
    print(f"consumer.py: {text}", file=sys.stderr, flush=True)


class Refused(Exception):
    """An event or a stream this consumer must not apply; carries the exit status."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status


# --- the read model -------------------------------------------------------------------------


def empty_model() -> dict:
    return {"sections": {}, "entities": {}}


def apply(model: dict, event: dict) -> None:
    """Folds one atlas envelope into the model (the same rules as the atlas projector)."""
    stream = event["stream"]
    category, key = stream["category"], stream["key"]
    event_type = event["event_type"]
    # The payload is the event's fields; `event_type` names which event (the Rust variant).
    data = event["payload"]
    if not isinstance(data, dict):
        raise Refused(EXIT_BAD_EVENT, f"position {event['position']}: the {event_type} payload "
                      "is not an object")
    if category == "section":
        sections = model["sections"]
        if event_type == "SectionCreated":
            sections[key] = {"title": data["title"], "status": "editing", "version": 0,
                             "head_commit_id": None, "locked_by": None}
            return
        section = sections.get(key)
        if section is None:
            raise Refused(EXIT_BAD_EVENT, f"{event_type} of unknown section {key}: was the "
                          "consumer started after its SectionCreated?")
        if event_type == "SectionLocked":
            section["locked_by"] = data["locked_by"]
        elif event_type == "SectionUnlocked":
            section["locked_by"] = None
        elif event_type in ("SectionCommitted", "SectionRestored"):
            section["head_commit_id"] = data["commit_id"]
            section["version"] += 1
            section["status"] = "editing"
        elif event_type == "SectionSubmitted":
            section["status"] = "submitted"
            section["locked_by"] = None
        elif event_type == "SubmissionApproved":
            section["status"] = "approved"
        elif event_type == "SubmissionRejected":
            section["status"] = "rejected"
        elif event_type == "SubmissionConflicted":
            section["status"] = "conflicted"
    elif category == "entity":
        entities = model["entities"]
        if event_type in ("EntityCreated", "EntityUpdated"):
            row = data["entity"]
            if row.get("is_deleted", 0):
                entities.pop(row["id"], None)
            else:
                entities[row["id"]] = row["name"]
        elif event_type == "EntityDeleted":
            entities.pop(data["entity_id"], None)
    # Other categories (geometry, publication, user) are not part of this model.


# --- schemas ----------------------------------------------------------------------------------


class Schemas:
    """The JSON Schemas of events/schemas/ (2020-12), or nothing when the folder is absent."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.enabled = folder.is_dir()
        self.validators: dict[str, object] = {}
        if not self.enabled:
            note(f"{folder} does not exist: events are decoded without schema validation")
            return
        from jsonschema import Draft202012Validator
        from referencing import Registry, Resource
        from referencing.jsonschema import DRAFT202012

        self._validator = Draft202012Validator
        self.paths: dict[tuple[str, str, int], str] = {}
        resources = []
        for path in sorted(folder.rglob("*.json")):
            if path.parent == folder and path.name == "index.json":
                continue
            schema = json.loads(path.read_text(encoding="utf-8"))
            if not isinstance(schema, dict):
                continue
            uri = path.resolve().as_uri()
            schema.setdefault("$id", uri)
            resource = Resource.from_contents(schema, default_specification=DRAFT202012)
            resources.append((uri, resource))
            if schema["$id"] != uri:
                resources.append((schema["$id"], resource))
        self.registry = Registry().with_resources(resources)
        index = folder / "index.json"
        if index.is_file():
            for entry in json.loads(index.read_text(encoding="utf-8")):
                self.paths[(entry["context"], entry["event_type"],
                            int(entry["schema_version"]))] = entry["path"]
        note(f"validating events against {folder}")

    def _validate(self, relative: str, value: object, what: str) -> None:
        path = (self.folder / relative).resolve()
        validator = self.validators.get(str(path))
        if validator is None:
            if not path.is_file():
                raise Refused(EXIT_BAD_EVENT, f"{what}: no schema {relative} in {self.folder}")
            resolved = self.registry.contents(path.as_uri())
            validator = self._validator(resolved, registry=self.registry)
            self.validators[str(path)] = validator
        errors = sorted(validator.iter_errors(value), key=lambda e: list(e.path))
        if errors:
            first = errors[0]
            where = "/".join(str(p) for p in first.path)
            raise Refused(EXIT_BAD_EVENT, f"{what} does not match {relative} at /{where}: "
                          f"{first.message}")

    def check(self, event: dict) -> None:
        if not self.enabled:
            return
        what = f"position {event.get('position')}"
        self._validate("envelope.v1.json", event, f"{what} (envelope)")
        context = event["stream"]["context"]
        key = (context, event["event_type"], int(event["schema_version"]))
        relative = self.paths.get(key) or \
            f"{context}/{event['event_type']}.v{event['schema_version']}.json"
        self._validate(relative, event["payload"], f"{what} ({event['event_type']} payload)")


# --- state ------------------------------------------------------------------------------------


def load_state(path: Path) -> dict:
    if path.exists():
        return json.loads(path.read_text(encoding="utf-8"))
    return {"log_id": None, "ack_floor": None, "model": empty_model()}


def save_state(path: Path, state: dict) -> None:
    """Writes the state atomically (a crash leaves the old file or the new one, never half)."""
    temporary = path.with_name(path.name + ".tmp")
    with open(temporary, "w", encoding="utf-8") as f:
        json.dump(state, f, ensure_ascii=False, sort_keys=True)
        f.flush()
        os.fsync(f.fileno())
    os.replace(temporary, path)


def stream_log_id(config) -> str | None:
    """The log id the relay marked the stream with: metadata on NATS 2.10+, else description."""
    metadata = getattr(config, "metadata", None) or {}
    if METADATA_KEY in metadata:
        return metadata[METADATA_KEY]
    description = config.description or ""
    if description.startswith(DESCRIPTION_PREFIX):
        return description[len(DESCRIPTION_PREFIX):]
    return None


# --- the consumer -----------------------------------------------------------------------------


async def open_consumer(js, args, floor: int) -> None:
    """Binds the durable, creating it to start at floor + 1; recreates one that is ahead of the
    state file (its acks are not in our model: the state file is the truth)."""
    try:
        info = await js.consumer_info(args.stream, args.durable)
        if info.ack_floor.stream_seq > floor:
            note(f"durable {args.durable} acked up to {info.ack_floor.stream_seq}, the state file "
                 f"only to {floor}: recreating it from {floor + 1}")
            await js.delete_consumer(args.stream, args.durable)
        else:
            return
    except NotFoundError:
        pass
    await js.add_consumer(args.stream, config=ConsumerConfig(
        durable_name=args.durable,
        description="palimpsest example consumer (python): atlas read model",
        deliver_policy=DeliverPolicy.BY_START_SEQUENCE,
        opt_start_seq=floor + 1,
        ack_policy=AckPolicy.EXPLICIT,
        ack_wait=30,
        max_ack_pending=1000,
        filter_subject=f"{args.prefix}.atlas.>",
    ))
    note(f"created durable {args.durable} on {args.stream} from position {floor + 1}")


def apply_message(state: dict, schemas: Schemas, msg, position: int) -> None:
    """Checks one message (its log, its position, its schemas) and folds it into the model."""
    headers = msg.headers or {}
    log_id = headers.get(LOG_ID_HEADER)
    if state["log_id"] is None:
        state["log_id"] = log_id
    if log_id != state["log_id"]:
        raise Refused(EXIT_OTHER_LOG, f"position {position} is of log {log_id}, the state file "
                      f"of log {state['log_id']}: refusing it")
    event = json.loads(msg.data)
    if event.get("position") != position:
        raise Refused(EXIT_BAD_EVENT, f"stream sequence {position} carries position "
                      f"{event.get('position')}")
    schemas.check(event)
    apply(state["model"], event)
    state["ack_floor"] = position


async def caught_up(js, args, until: int) -> bool:
    """Whether every message of our filter up to `until` is applied: the stream holds `until`
    (asked first), then nothing is left to deliver or to ack."""
    if (await js.stream_info(args.stream)).state.last_seq < until:
        return False
    info = await js.consumer_info(args.stream, args.durable)
    return info.num_pending == 0 and info.num_ack_pending == 0


def emit(state: dict) -> None:
    model = state["model"]
    out = {"log_id": state["log_id"], "position": state["ack_floor"] or 0,
           "sections": model["sections"], "entities": model["entities"]}
    print(json.dumps(out, ensure_ascii=False, sort_keys=True), flush=True)


async def run(args) -> int:
    state_path = Path(args.state)
    state = load_state(state_path)
    if state["ack_floor"] is None:
        state["ack_floor"] = args.from_position
    schemas = Schemas(Path(args.schemas))
    nc = await nats.connect(servers=[args.server], name=args.durable)
    try:
        js = nc.jetstream()
        stream = await js.stream_info(args.stream)
        marked = stream_log_id(stream.config)
        if state["log_id"] is None:
            state["log_id"] = marked
        elif marked is not None and marked != state["log_id"]:
            raise Refused(EXIT_OTHER_LOG, f"{state_path} holds the ack floor of log "
                          f"{state['log_id']}, stream {args.stream} holds log {marked}: "
                          "refusing to continue (remove the state file and the durable to "
                          "start over)")
        until = args.until_position
        if args.once:
            until = stream.state.last_seq
        await open_consumer(js, args, state["ack_floor"])
        sub = await js.pull_subscribe_bind(durable=args.durable, stream=args.stream)
        deadline = time.monotonic() + args.timeout
        dirty = False
        while True:
            try:
                messages = await sub.fetch(batch=100, timeout=1)
            except (NatsTimeout, asyncio.TimeoutError):
                messages = []
            applied, skipped, later = [], [], []
            try:
                for msg in messages:
                    position = msg.metadata.sequence.stream
                    if until is not None and position > until:
                        later.append(msg)
                    elif position <= state["ack_floor"]:
                        skipped.append(msg)
                    else:
                        apply_message(state, schemas, msg, position)
                        applied.append(msg)
            except Refused:
                # Nothing of this batch was saved: hand it back for the next run at once
                # rather than after the ack wait.
                for msg in messages:
                    await msg.nak()
                await nc.flush()
                raise
            if applied:
                save_state(state_path, state)
                dirty = True
            for msg in applied + skipped:
                await msg.ack()
            for msg in later:
                await msg.nak()
            await nc.flush()
            if until is None:
                if not messages and dirty:
                    emit(state)
                    dirty = False
                continue
            if later or state["ack_floor"] >= until:
                break
            if not messages and await caught_up(js, args, until):
                break
            if time.monotonic() > deadline:
                raise Refused(EXIT_TIMEOUT, f"not at position {until} after {args.timeout} s "
                              f"(at {state['ack_floor']})")
        save_state(state_path, state)
        emit(state)
        return 0
    finally:
        # Every ack was flushed after its batch; close rather than drain, which would wait for
        # the last (empty) pull request to expire.
        await nc.close()


def main() -> int:
    here = Path(__file__).resolve().parent
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--server", default=os.environ.get("NATS_URL", "nats://127.0.0.1:4222"))
    parser.add_argument("--stream", default=os.environ.get("PALIMPSEST_NATS_STREAM", "PALIMPSEST"))
    parser.add_argument("--prefix", default=os.environ.get("PALIMPSEST_NATS_SUBJECT_PREFIX",
                                                           "palimpsest"),
                        help="the relay's subject prefix")
    parser.add_argument("--durable", default="example-atlas-python",
                        help="the durable consumer's name")
    parser.add_argument("--state", default="atlas-consumer-python.json",
                        help="the state file: ack floor, log id and model")
    parser.add_argument("--from", dest="from_position", type=int, default=0,
                        help="start after this log position when there is no state file")
    parser.add_argument("--until-position", type=int,
                        help="stop (and print) once the log is applied up to this position")
    parser.add_argument("--once", action="store_true",
                        help="stop (and print) once caught up with the stream as it is at start")
    parser.add_argument("--timeout", type=float, default=120,
                        help="seconds to wait for --until-position before failing")
    parser.add_argument("--schemas", default=str(here.parent.parent.parent / "events" / "schemas"),
                        help="the folder of JSON Schemas (events/schemas)")
    args = parser.parse_args()
    try:
        return asyncio.run(run(args))
    except Refused as refused:
        note(str(refused))
        return refused.status


if __name__ == "__main__":
    sys.exit(main())
