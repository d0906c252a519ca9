#!/usr/bin/env python3
"""Recomputes Palimpsest event hashes from published JSON alone, with the standard library only.

An independent reading of events/README.md, "The bytes an event's hash covers": it shares no
code with the server. Input on stdin: a JSON array of events as NATS or /v1/events publish them
(or a /v1/events page, {"events": [...]}), in log order. For each event it rebuilds the canonical
content (RFC 8785 of every field but position, prev_hash and hash), computes
sha256(prev_hash bytes || content) and checks it against `hash`, and checks that `prev_hash` is
the hash of the stream's previous event (null at version 1; taken as given for a stream's first
event in the input when the input starts later in the log). Exits 1 naming the first event that fails.

    curl -s -H "Authorization: Bearer $TOKEN" 'http://127.0.0.1:8080/v1/events?limit=1000' \
      | python3 tests/verify_published_hashes.py
"""

import hashlib
import json
import math
import re
import sys

# recorded_at as the hash covers it: six fractional digits, UTC "Z".
CANONICAL_TIME = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$")


def number(value):
    """A JSON number as ECMAScript's Number.prototype.toString writes it (RFC 8785 §3.2.2.3)."""
    if isinstance(value, bool):
        raise TypeError("not a number")
    if isinstance(value, int):
        return str(value)
    if not math.isfinite(value):
        raise ValueError("JSON has no NaN or infinity")
    if value == 0:
        return "0"
    sign = "-" if value < 0 else ""
    shortest = repr(abs(value))  # the shortest digits that read back as the same double
    mantissa, _, exponent = shortest.partition("e")
    whole, _, fraction = mantissa.partition(".")
    written = whole + fraction
    significant = written.lstrip("0")
    # value = 0.<digits> x 10^n: n counts the places before the point, less the leading zeros.
    n = len(whole) + int(exponent or "0") - (len(written) - len(significant))
    digits = significant.rstrip("0")
    k = len(digits)
    if k <= n <= 21:
        return sign + digits + "0" * (n - k)
    if 0 < n <= 21:
        return sign + digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return sign + "0." + "0" * (-n) + digits
    exp = n - 1
    mantissa = digits[0] + ("." + digits[1:] if k > 1 else "")
    return sign + mantissa + "e" + ("+" if exp > 0 else "-") + str(abs(exp))


def string(text):
    """A JSON string with only quote, backslash and control characters escaped."""
    out = ['"']
    short = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}
    for char in text:
        if char in short:
            out.append(short[char])
        elif ord(char) < 0x20:
            out.append("\\u%04x" % ord(char))
        else:
            out.append(char)
    out.append('"')
    return "".join(out)


def canonical(value):
    """The RFC 8785 (JCS) text of a parsed JSON value."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, (int, float)):
        return number(value)
    if isinstance(value, str):
        return string(value)
    if isinstance(value, list):
        return "[" + ",".join(canonical(item) for item in value) + "]"
    keys = sorted(value, key=lambda key: key.encode("utf-16-be"))
    return "{" + ",".join(string(key) + ":" + canonical(value[key]) for key in keys) + "}"


def event_hash(event):
    """sha256(prev_hash bytes || canonical content), in lower-case hex."""
    content = {k: v for k, v in event.items() if k not in ("position", "prev_hash", "hash")}
    prev = bytes.fromhex(event["prev_hash"]) if event["prev_hash"] is not None else bytes(32)
    return hashlib.sha256(prev + canonical(content).encode("utf-8")).hexdigest()


def main():
    data = json.load(sys.stdin)
    events = data["events"] if isinstance(data, dict) else data
    last_of_stream = {}
    for event in events:
        where = "position %s (%s v%s)" % (event.get("position"), event.get("stream"), event.get("version"))
        if not CANONICAL_TIME.match(event["recorded_at"]):
            sys.exit("%s: recorded_at %r is not in the hashed form" % (where, event["recorded_at"]))
        stream = canonical(event["stream"])
        # A stream's earlier events may lie before this page: its first one here links from
        # what it names, unless it is the stream's first (version 1, prev_hash null).
        expected = last_of_stream.get(stream, None if event["version"] == 1 else event["prev_hash"])
        if event["prev_hash"] != expected:
            sys.exit("%s: prev_hash is not the hash of the stream's previous event" % where)
        recomputed = event_hash(event)
        if recomputed != event["hash"]:
            sys.exit("%s: hash %s, recomputed %s" % (where, event["hash"], recomputed))
        last_of_stream[stream] = event["hash"]
    print("%d events verified" % len(events))


if __name__ == "__main__":
    main()
