#!/usr/bin/env python3
"""Verifies Palimpsest's signed Merkle tree over the log from its HTTP answers alone.

An independent reading of RFC 9162 (Certificate Transparency 2.0) §2.1 and of
docs/decisions/0024-a-signed-merkle-tree-over-the-log.md: it shares no code with the server.
Python's hashlib does the hashing, the `cryptography` package the Ed25519 checks, urllib the
HTTP; the chain hash of an event comes from tests/verify_published_hashes.py.

    python3 tests/verify_log.py --url http://127.0.0.1:PORT --token ADMIN_TOKEN [--sizes 1,5,17]

1. GET /v1/log/key and /v1/log/head; checks the head's Ed25519 signature.
2. Pages /v1/events (bearer token) up to the head's tree_size, recomputes each event's chain
   hash, builds its leaf (entry = u64be(position) || hash) and checks that the Merkle Tree Hash
   of all leaves is the head's root_hash.
3. Every position's inclusion proof at the head's size, and at each --sizes size (against the
   locally computed root of that many leaves), checked with RFC 9162 §2.1.3.2.
4. A consistency proof for every ordered pair m < n of the sizes and the head's size, and m = n
   for each, checked with RFC 9162 §2.1.4.2 against the locally computed roots.
5. /v1/log/batches: each batch signature over its leaves, and that the batches cover every
   position from the first batch's on exactly once (positions before it are legacy: counted).

Prints one line of JSON on success:
    {"events": n, "inclusion_proofs": k, "consistency_proofs": j, "batches": b,
     "legacy_positions": l, "recorded_at_000": c, "ok": true}
and exits 0; on any mismatch it exits 1 with a message on stderr naming the first failing
position or proof (2 for a usage error).

    python3 tests/verify_log.py --self-test

needs no server: it checks the verification algorithms against proofs made with the RFC's own
recursive definitions (§2.1.3.1, §2.1.4.1) for trees of 1..70 leaves, that they refuse tampered
proofs, known tree hashes, and runs the whole HTTP check against a synthetic log served
in-process, untouched and tampered.
"""

import argparse
import hashlib
import http.server
import json
import os
import struct
import sys
import threading
import http.client
import urllib.error
import urllib.parse
import urllib.request
import uuid

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from verify_published_hashes import CANONICAL_TIME, canonical, event_hash  # noqa: E402

# The signed byte forms of decision 0024.
HEAD_DOMAIN = b"palimpsest tree head v1\n"
BATCH_DOMAIN = b"palimpsest batch v1\n"

# /v1/events' largest page (services/web/src/admin.rs: limit 1-1000).
EVENTS_PAGE = 1000


class Mismatch(Exception):
    """What the server answered is not what the log and RFC 9162 say it should be."""


# ---------------------------------------------------------------------------------------------
# RFC 9162 §2.1: hashing. Leaves are handled as their leaf hashes throughout.
# ---------------------------------------------------------------------------------------------


def sha256(data):
    """SHA-256, the hash algorithm of the tree (RFC 9162 §2.1)."""
    return hashlib.sha256(data).digest()


def leaf_hash(entry):
    """MTH({d}) = HASH(0x00 || d) (RFC 9162 §2.1.1): the hash of one leaf."""
    return sha256(b"\x00" + entry)


def node_hash(left, right):
    """HASH(0x01 || left || right) (RFC 9162 §2.1.1): an interior node."""
    return sha256(b"\x01" + left + right)


def split_point(n):
    """k, the largest power of two smaller than n, for n > 1 (RFC 9162 §2.1.1)."""
    k = 1
    while k * 2 < n:
        k *= 2
    return k


def mth(leaves, lo=0, hi=None):
    """The Merkle Tree Hash of the leaf hashes leaves[lo:hi] (RFC 9162 §2.1.1).

    MTH({}) = HASH(); one leaf is its leaf hash; otherwise
    MTH(D[n]) = HASH(0x01 || MTH(D[0:k]) || MTH(D[k:n])).
    """
    hi = len(leaves) if hi is None else hi
    n = hi - lo
    if n == 0:
        return sha256(b"")
    if n == 1:
        return leaves[lo]
    k = split_point(n)
    return node_hash(mth(leaves, lo, lo + k), mth(leaves, lo + k, hi))


def entry(position, chain_hash):
    """The entry of a position, decision 0024: u64be(position) || the event's 32-byte hash."""
    return struct.pack(">Q", position) + chain_hash


# ---------------------------------------------------------------------------------------------
# RFC 9162 §2.1.3.1 and §2.1.4.1: the proofs as the RFC defines them (the self-test's server).
# ---------------------------------------------------------------------------------------------


def path(m, leaves, lo=0, hi=None):
    """PATH(m, D[n]), the audit path of leaf m in leaves[lo:hi] (RFC 9162 §2.1.3.1).

    PATH(0, {d(0)}) = {}; for n > 1, with k the largest power of two smaller than n:
    m < k: PATH(m, D[0:k]) : MTH(D[k:n]); m >= k: PATH(m - k, D[k:n]) : MTH(D[0:k]).
    """
    hi = len(leaves) if hi is None else hi
    n = hi - lo
    if n == 1:
        return []
    k = split_point(n)
    if m < k:
        return path(m, leaves, lo, lo + k) + [mth(leaves, lo + k, hi)]
    return path(m - k, leaves, lo + k, hi) + [mth(leaves, lo, lo + k)]


def proof(m, leaves):
    """PROOF(m, D[n]) = SUBPROOF(m, D[n], true) (RFC 9162 §2.1.4.1), for 0 < m <= n."""
    return subproof(m, leaves, 0, len(leaves), True)


def subproof(m, leaves, lo, hi, b):
    """SUBPROOF(m, D[n], b) over leaves[lo:hi] (RFC 9162 §2.1.4.1).

    m = n: {} when b (MTH(D[m]) is known), else {MTH(D[m])}. m < n, k the largest power of two
    smaller than n: m <= k: SUBPROOF(m, D[0:k], b) : MTH(D[k:n]);
    m > k: SUBPROOF(m - k, D[k:n], false) : MTH(D[0:k]).
    """
    n = hi - lo
    if m == n:
        return [] if b else [mth(leaves, lo, hi)]
    k = split_point(n)
    if m <= k:
        return subproof(m, leaves, lo, lo + k, b) + [mth(leaves, lo + k, hi)]
    return subproof(m - k, leaves, lo + k, hi, False) + [mth(leaves, lo, lo + k)]


# ---------------------------------------------------------------------------------------------
# RFC 9162 §2.1.3.2 and §2.1.4.2: the verification algorithms, step by step.
# ---------------------------------------------------------------------------------------------


def verify_inclusion(leaf_index, tree_size, leaf, inclusion_path, root):
    """True when inclusion_path proves `leaf` at leaf_index in the tree of root (§2.1.3.2)."""
    # 1. leaf_index must be inside the tree.
    if leaf_index >= tree_size:
        return False
    # 2. fn = leaf_index, sn = tree_size - 1.  3. r = hash.
    fn, sn = leaf_index, tree_size - 1
    r = leaf
    # 4. For each value p in the inclusion_path array:
    for p in inclusion_path:
        # a. sn is 0: the path is too long.
        if sn == 0:
            return False
        # b. LSB(fn) set, or fn == sn: p is a left sibling.
        if fn & 1 or fn == sn:
            r = node_hash(p, r)
            # ii. LSB(fn) not set: shift both until LSB(fn) is set or fn is 0.
            if not fn & 1:
                while not fn & 1 and fn != 0:
                    fn >>= 1
                    sn >>= 1
        else:
            r = node_hash(r, p)
        # c. Right-shift both once.
        fn >>= 1
        sn >>= 1
    # 5. sn must be 0 and r the root.
    return sn == 0 and r == root


def verify_consistency(first, second, first_hash, second_hash, consistency_path):
    """True when consistency_path proves the tree of first_hash (size `first`) a prefix of the
    tree of second_hash (size `second`) (RFC 9162 §2.1.4.2).

    The RFC defines proofs for 0 < first < second; like CT clients, a tree is taken as
    consistent with itself by an empty proof (first = second, equal hashes).
    """
    if first == second:
        return first_hash == second_hash and not consistency_path
    if not 0 < first < second:
        return False
    # 1. An empty consistency_path fails.
    if not consistency_path:
        return False
    path_ = list(consistency_path)
    # 2. first an exact power of 2: prepend first_hash.
    if first & (first - 1) == 0:
        path_.insert(0, first_hash)
    # 3. fn = first - 1, sn = second - 1.
    fn, sn = first - 1, second - 1
    # 4. LSB(fn) set: right-shift both until it is not.
    while fn & 1:
        fn >>= 1
        sn >>= 1
    # 5. fr and sr start as the first value of the path.
    fr = sr = path_[0]
    # 6. For each subsequent value c:
    for c in path_[1:]:
        # a. sn is 0: the path is too long.
        if sn == 0:
            return False
        # b. LSB(fn) set, or fn == sn: c is a left sibling of both.
        if fn & 1 or fn == sn:
            fr = node_hash(c, fr)
            sr = node_hash(c, sr)
            # iii. LSB(fn) not set: shift both until LSB(fn) is set or fn is 0.
            if not fn & 1:
                while not fn & 1 and fn != 0:
                    fn >>= 1
                    sn >>= 1
        else:
            # Otherwise c is a right sibling in the second tree only.
            sr = node_hash(sr, c)
        # c. Right-shift both once.
        fn >>= 1
        sn >>= 1
    # 7. fr is first_hash, sr is second_hash, sn is 0.
    return fr == first_hash and sr == second_hash and sn == 0


# ---------------------------------------------------------------------------------------------
# Decision 0024: the signed bytes, and Ed25519.
# ---------------------------------------------------------------------------------------------


def head_bytes(log_id, tree_size, timestamp, root_hash):
    """What a tree head's signature covers: "palimpsest tree head v1\\n" || log_id (16 bytes)
    || u64be(tree_size) || u64be(timestamp ms) || root_hash (32 bytes)."""
    return HEAD_DOMAIN + uuid.UUID(log_id).bytes + struct.pack(">QQ", tree_size, timestamp) + root_hash


def batch_bytes(first, last, leaf_hashes):
    """What a batch signature covers: "palimpsest batch v1\\n" || u64be(first) || u64be(last)
    || leaf_hash(first) || ... || leaf_hash(last)."""
    return BATCH_DOMAIN + struct.pack(">QQ", first, last) + b"".join(leaf_hashes)


def ed25519_valid(public_key, signature, message):
    """True when `signature` (64 bytes) is public_key's (32 bytes) Ed25519 signature of message."""
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    try:
        Ed25519PublicKey.from_public_bytes(public_key).verify(signature, message)
        return True
    except (InvalidSignature, ValueError):
        return False


def unhex(value, size, what):
    """Bytes of a lower-case hex field of `size` bytes, or Mismatch naming the field."""
    if not isinstance(value, str) or len(value) != 2 * size or value != value.lower():
        raise Mismatch("%s is not %d bytes of lower-case hex: %r" % (what, size, value))
    try:
        return bytes.fromhex(value)
    except ValueError:
        raise Mismatch("%s is not hex: %r" % (what, value)) from None


# ---------------------------------------------------------------------------------------------
# HTTP.
# ---------------------------------------------------------------------------------------------


class Client:
    """GETs JSON from the server on one kept-alive connection; the bearer token goes only where
    it is needed (/v1/events)."""

    def __init__(self, url, token):
        self.url = url.rstrip("/")
        self.token = token
        parts = urllib.parse.urlsplit(self.url)
        self.prefix = parts.path
        self.connection_class = (
            http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
        )
        self.netloc = parts.netloc
        self.connection = None

    def get(self, route, params=None, auth=False):
        """The parsed JSON answer of GET route?params, or Mismatch naming the status and body."""
        target = self.prefix + route
        if params:
            target += "?" + urllib.parse.urlencode(params)
        headers = {"Accept": "application/json"}
        if auth:
            headers["Authorization"] = "Bearer " + self.token
        for attempt in (1, 2):
            try:
                if self.connection is None:
                    self.connection = self.connection_class(self.netloc, timeout=60)
                self.connection.request("GET", target, headers=headers)
                answer = self.connection.getresponse()
                body = answer.read()
                break
            except (http.client.HTTPException, OSError) as e:
                # A kept-alive connection the server closed: open a new one, once.
                self.connection = None
                if attempt == 2:
                    raise Mismatch("GET %s%s: %s" % (self.url, target, e)) from None
        if answer.status != 200:
            text = body.decode("utf-8", "replace")[:300]
            raise Mismatch("GET %s%s: HTTP %d %s" % (self.netloc, target, answer.status, text))
        try:
            return json.loads(body)
        except ValueError as e:
            raise Mismatch("GET %s%s: %s" % (self.netloc, target, e)) from None


# ---------------------------------------------------------------------------------------------
# The checks.
# ---------------------------------------------------------------------------------------------


def check_head(client):
    """Key and latest head, the head's signature checked: (public key bytes, head dict)."""
    key = client.get("/v1/log/key")
    if key.get("algorithm") != "ed25519":
        raise Mismatch("/v1/log/key: algorithm %r, not ed25519" % key.get("algorithm"))
    public_key = unhex(key.get("public_key"), 32, "/v1/log/key public_key")
    head = client.get("/v1/log/head")
    if head.get("log_id") != key.get("log_id"):
        raise Mismatch("head log_id %r is not the key's %r" % (head.get("log_id"), key.get("log_id")))
    size, timestamp = head.get("tree_size"), head.get("timestamp")
    if not isinstance(size, int) or size < 0 or not isinstance(timestamp, int) or timestamp < 0:
        raise Mismatch("head tree_size %r / timestamp %r are not u64" % (size, timestamp))
    root = unhex(head.get("root_hash"), 32, "head root_hash")
    signature = unhex(head.get("signature"), 64, "head signature")
    if not ed25519_valid(public_key, signature, head_bytes(head["log_id"], size, timestamp, root)):
        raise Mismatch("head of tree_size %d: the signature does not verify" % size)
    return public_key, head


def fetch_events(client, up_to):
    """Events at positions 1..up_to from /v1/events, in order, paged by `after`."""
    events = []
    while len(events) < up_to:
        page = client.get("/v1/events", {"after": len(events), "limit": EVENTS_PAGE}, auth=True)
        got = page.get("events", [])
        if not got:
            raise Mismatch("/v1/events ends at position %d, before %d" % (len(events), up_to))
        for event in got:
            if len(events) == up_to:
                break
            if event.get("position") != len(events) + 1:
                raise Mismatch("position %d: /v1/events gave position %r (a gap or disorder)"
                               % (len(events) + 1, event.get("position")))
            events.append(event)
    return events


def chain_leaves(events):
    """Each event's leaf hash after checking its chain hash, its prev_hash link and its
    recorded_at form (events/README.md, "The bytes an event's hash covers")."""
    last_of_stream = {}
    leaves = []
    for event in events:
        name = "/".join(str(event.get("stream", {}).get(k)) for k in ("context", "category", "key"))
        where = "position %s (%s v%s)" % (event["position"], name, event.get("version"))
        if not CANONICAL_TIME.match(event.get("recorded_at", "")):
            raise Mismatch("%s: recorded_at %r is not the hashed form" % (where, event.get("recorded_at")))
        stream = canonical(event["stream"])
        # Read from position 1, a stream's first event here is its version 1.
        if event["prev_hash"] != last_of_stream.get(stream):
            raise Mismatch("%s: prev_hash is not the hash of the stream's previous event" % where)
        recomputed = event_hash(event)
        if recomputed != event["hash"]:
            raise Mismatch("%s: hash %s, recomputed %s" % (where, event["hash"], recomputed))
        last_of_stream[stream] = event["hash"]
        leaves.append(leaf_hash(entry(event["position"], bytes.fromhex(recomputed))))
    return leaves


def fetch_batches(client, up_to):
    """The batch signatures covering positions 1..up_to, asked for again after the last one
    answered until they reach up_to or none is left."""
    batches, start = [], 1
    while start <= up_to:
        got = client.get("/v1/log/batches", {"from": start, "to": up_to})
        if not got:
            break
        for batch in got:
            first, last = batch.get("first_position"), batch.get("last_position")
            if not isinstance(first, int) or not isinstance(last, int) or not 1 <= first <= last:
                raise Mismatch("batch %r: positions are not 1 <= first <= last" % batch)
        batches.extend(got)
        reached = max(b["last_position"] for b in got)
        if reached < start:
            raise Mismatch("/v1/log/batches?from=%d: every batch answered ends before %d" % (start, start))
        start = reached + 1
    return sorted(batches, key=lambda b: (b["first_position"], b["last_position"]))


def check_batches(public_key, batches, leaves, tree_size):
    """Each batch's signature over its leaves; the batches cover every position from the first
    batch's through tree_size exactly once. Returns the legacy positions (before any batch)."""
    covered_to = None
    for batch in batches:
        first, last = batch["first_position"], batch["last_position"]
        name = "batch %d-%d" % (first, last)
        if covered_to is not None and first <= covered_to:
            raise Mismatch("position %d: covered by two batches (%s)" % (first, name))
        if covered_to is not None and first > covered_to + 1:
            raise Mismatch("position %d: covered by no batch (next is %s)" % (covered_to + 1, name))
        signature = unhex(batch.get("signature"), 64, name + " signature")
        if not ed25519_valid(public_key, signature, batch_bytes(first, last, leaves[first - 1:last])):
            raise Mismatch("%s: the signature does not verify over positions %d..%d" % (name, first, last))
        covered_to = last
    if covered_to is None:
        return tree_size
    if covered_to < tree_size:
        raise Mismatch("position %d: covered by no batch (tree_size %d)" % (covered_to + 1, tree_size))
    return batches[0]["first_position"] - 1


def check_inclusions(client, leaves, size, root):
    """Every position's inclusion proof in the tree of the first `size` leaves (§2.1.3.2)."""
    for position in range(1, size + 1):
        name = "inclusion proof of position %d in tree_size %d" % (position, size)
        answer = client.get("/v1/log/proof/inclusion", {"position": position, "tree_size": size})
        if answer.get("position") != position or answer.get("tree_size") != size:
            raise Mismatch("%s: answer names position %r tree_size %r"
                           % (name, answer.get("position"), answer.get("tree_size")))
        if unhex(answer.get("leaf_hash"), 32, name + " leaf_hash") != leaves[position - 1]:
            raise Mismatch("%s: leaf_hash is not the leaf recomputed from the event" % name)
        audit_path = [unhex(h, 32, name + " audit_path") for h in answer.get("audit_path", [])]
        if not verify_inclusion(position - 1, size, leaves[position - 1], audit_path, root):
            raise Mismatch("%s: does not verify against root %s" % (name, root.hex()))
    return size


def check_consistencies(client, roots):
    """A consistency proof for every m < n of the sizes in roots, and m = n (§2.1.4.2)."""
    sizes = sorted(roots)
    count = 0
    for i, m in enumerate(sizes):
        for n in sizes[i:]:
            name = "consistency proof from %d to %d" % (m, n)
            answer = client.get("/v1/log/proof/consistency", {"from": m, "to": n})
            if answer.get("from") != m or answer.get("to") != n:
                raise Mismatch("%s: answer names from %r to %r" % (name, answer.get("from"), answer.get("to")))
            proof_ = [unhex(h, 32, name + " proof") for h in answer.get("proof", [])]
            if not verify_consistency(m, n, roots[m], roots[n], proof_):
                raise Mismatch("%s: does not verify against the roots of %d and %d leaves" % (name, m, n))
            count += 1
    return count


def verify_log(url, token, sizes=()):
    """Every check against the server at url; the summary, or Mismatch at the first failure."""
    client = Client(url, token)
    public_key, head = check_head(client)
    size = head["tree_size"]
    for extra in sizes:
        if not 1 <= extra <= size:
            raise Mismatch("--sizes %d is not within 1..%d (the head's tree_size)" % (extra, size))
    batches = fetch_batches(client, size) if size else []
    # A batch may end past the head: its signature covers leaves the tree has not reached.
    reach = max([size] + [b["last_position"] for b in batches])
    events = fetch_events(client, reach)
    leaves = chain_leaves(events)
    root = mth(leaves, 0, size)
    if root.hex() != head["root_hash"]:
        raise Mismatch("root_hash of tree_size %d is %s, the leaves give %s"
                       % (size, head["root_hash"], root.hex()))
    legacy = check_batches(public_key, batches, leaves, size)
    roots = {s: mth(leaves, 0, s) for s in set(sizes) | {size} if s > 0}
    inclusions = sum(check_inclusions(client, leaves, s, roots[s]) for s in sorted(roots))
    consistencies = check_consistencies(client, roots)
    return {
        "events": size,
        "inclusion_proofs": inclusions,
        "consistency_proofs": consistencies,
        "batches": len(batches),
        "legacy_positions": legacy,
        "recorded_at_000": sum(1 for e in events[:size] if e["recorded_at"][-4:-1] == "000"),
        "ok": True,
    }


# ---------------------------------------------------------------------------------------------
# Self-test.
# ---------------------------------------------------------------------------------------------

# RFC 6962's reference test leaves and the roots of their first 1..8 (certificate-transparency
# merkle_tree_test).
REFERENCE_LEAVES = ["", "00", "10", "2021", "3031", "40414243", "5051525354555657",
                    "606162636465666768696a6b6c6d6e6f"]
REFERENCE_ROOTS = [
    "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
    "fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125",
    "aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77",
    "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
    "4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4",
    "76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef",
    "ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c",
    "5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328",
]


def expect(condition, what):
    """Raises AssertionError naming `what` unless condition holds (the self-test's check)."""
    if not condition:
        raise AssertionError(what)


def flipped(data, at=0):
    """data with one bit of byte `at` flipped."""
    return data[:at] + bytes([data[at] ^ 1]) + data[at + 1:]


def self_test_vectors():
    """Known tree hashes: the empty tree, one empty leaf, RFC 6962's reference trees."""
    expect(mth([]) == hashlib.sha256(b"").digest(), "MTH({}) = SHA-256()")
    expect(mth([leaf_hash(b"")]) == hashlib.sha256(b"\x00").digest(), "MTH({\"\"}) = SHA-256(0x00)")
    leaves = [leaf_hash(bytes.fromhex(h)) for h in REFERENCE_LEAVES]
    for n, want in enumerate(REFERENCE_ROOTS, start=1):
        expect(mth(leaves[:n]).hex() == want, "reference root of %d leaves" % n)


def self_test_inclusion(leaves, roots, paths, largest):
    """Every PATH(m, D[n]) for n <= largest verifies; a flipped byte, a wrong index, a wrong
    size, a path one element short or long do not. Returns the number of proofs checked."""
    checked = 0
    for (m, n), audit in paths.items():
        if n > largest:
            continue
        where = "inclusion m=%d n=%d" % (m, n)
        expect(verify_inclusion(m, n, leaves[m], audit, roots[n]), where + " verifies")
        expect(not verify_inclusion(m, n, flipped(leaves[m]), audit, roots[n]), where + " leaf flipped")
        expect(not verify_inclusion(m, n, leaves[m], audit, flipped(roots[n], 31)), where + " root flipped")
        for i in range(len(audit)):
            bad = audit[:i] + [flipped(audit[i], i)] + audit[i + 1:]
            expect(not verify_inclusion(m, n, leaves[m], bad, roots[n]), where + " element %d flipped" % i)
        if audit:
            expect(not verify_inclusion(m, n, leaves[m], audit[:-1], roots[n]), where + " short")
        expect(not verify_inclusion(m, n, leaves[m], audit + [roots[n]], roots[n]), where + " long")
        # Another index: the leaf claimed elsewhere, or that index's own leaf with m's path.
        for other in (m - 1, m + 1, n):
            if other >= 0 and other != m:
                expect(not verify_inclusion(other, n, leaves[m], audit, roots[n]), where + " as index %d" % other)
                if other < n:
                    ok = verify_inclusion(other, n, leaves[other], audit, roots[n])
                    expect(ok == (paths[(other, n)] == audit), where + " path for index %d" % other)
        # Another size, against that size's true root: only its own path verifies. Against
        # this root, the size is bound only by the path's length (RFC 9162 signs the size).
        for size in (n - 1, n + 1):
            if size in roots and m < size:
                ok = verify_inclusion(m, size, leaves[m], audit, roots[size])
                expect(ok == (paths.get((m, size)) == audit), where + " as size %d" % size)
                if len(paths[(m, size)]) != len(audit):
                    ok = verify_inclusion(m, size, leaves[m], audit, roots[n])
                    expect(not ok, where + " as size %d, own root" % size)
        checked += 1
    expect(not verify_inclusion(0, 0, leaves[0], [], roots[0]), "inclusion in the empty tree")
    return checked


def self_test_consistency(roots, proofs, largest):
    """Every PROOF(m, D[n]) for n <= largest verifies; a flipped byte, a wrong size, a proof
    one element short or long do not. Returns the number of proofs checked."""
    checked = 0
    for (m, n), consistency in proofs.items():
        if n > largest:
            continue
        where = "consistency m=%d n=%d" % (m, n)
        expect(verify_consistency(m, n, roots[m], roots[n], consistency), where + " verifies")
        expect(not verify_consistency(m, n, flipped(roots[m]), roots[n], consistency), where + " first flipped")
        expect(not verify_consistency(m, n, roots[m], flipped(roots[n]), consistency), where + " second flipped")
        for i in range(len(consistency)):
            bad = consistency[:i] + [flipped(consistency[i], i)] + consistency[i + 1:]
            expect(not verify_consistency(m, n, roots[m], roots[n], bad), where + " element %d flipped" % i)
        if consistency:
            expect(not verify_consistency(m, n, roots[m], roots[n], consistency[:-1]), where + " short")
        expect(not verify_consistency(m, n, roots[m], roots[n], consistency + [roots[n]]), where + " long")
        # Other sizes, against their true roots: only their own proof verifies. Against these
        # roots, the sizes are bound only by the proof's length (step 6a and sn = 0 in step 7).
        for m2, n2 in ((m - 1, n), (m + 1, n), (m, n - 1), (m, n + 1)):
            if 0 < m2 <= n2 and n2 in roots:
                ok = verify_consistency(m2, n2, roots[m2], roots[n2], consistency)
                expect(ok == (proofs[(m2, n2)] == consistency), where + " as %d to %d" % (m2, n2))
                if len(proofs[(m2, n2)]) != len(consistency):
                    ok = verify_consistency(m2, n2, roots[m], roots[n], consistency)
                    expect(not ok, where + " as %d to %d, own roots" % (m2, n2))
        checked += 1
    return checked


def self_test_proofs(largest=70):
    """The verification algorithms against the RFC's definitions, for trees of 1..largest."""
    leaves = [leaf_hash(entry(p, hashlib.sha256(b"event %d" % p).digest())) for p in range(1, largest + 2)]
    roots = {n: mth(leaves, 0, n) for n in range(0, largest + 2)}
    paths = {(m, n): path(m, leaves[:n]) for n in range(1, largest + 2) for m in range(n)}
    proofs = {(m, n): proof(m, leaves[:n]) for n in range(1, largest + 2) for m in range(1, n + 1)}
    for (m, n), consistency in proofs.items():
        expect((m == n) == (not consistency), "PROOF(%d, D[%d]) is empty only when m = n" % (m, n))
    # Proofs for largest + 1 leaves too: the true proofs a wrong size is compared with.
    return self_test_inclusion(leaves, roots, paths, largest), self_test_consistency(roots, proofs, largest)


class SyntheticLog:
    """A log of `count` events in three streams, signed as decision 0024 says: the first
    `legacy` positions without a batch, then batches of a few positions each, a head at
    tree_size (the last batch may end past it). `tamper` names one thing to get wrong."""

    def __init__(self, count=37, tree_size=33, legacy=5, tamper=None):
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

        self.key = Ed25519PrivateKey.generate()
        self.log_id = "019ac5f2-7d41-7c3a-9e0b-5b2f1d7a4c10"
        self.token = "synthetic-admin-token"
        self.tamper = tamper or ""
        self.events, last, version = [], {}, {}
        for position in range(1, count + 1):
            stream = {"context": "atlas", "category": "section", "key": "s%d" % (position % 3)}
            name = stream["key"]
            version[name] = version.get(name, 0) + 1
            micros = "250000" if position % 4 == 0 else "%06d" % (position * 7919 % 1000000)
            event = {
                "event_id": str(uuid.UUID(int=position)), "stream": stream, "version": version[name],
                "position": position, "event_type": "SectionEdited", "schema_version": 1,
                "payload": {"n": position, "text": "Lê \"%d\"" % position, "ratio": position / 8},
                "metadata": {"actor": "admin"},
                "recorded_at": "2026-11-27T15:00:%02d.%sZ" % (position % 60, micros),
                "prev_hash": last.get(name),
            }
            event["hash"] = event_hash(event)
            last[name] = event["hash"]
            self.events.append(event)
        self.leaves = [leaf_hash(entry(e["position"], bytes.fromhex(e["hash"]))) for e in self.events]
        self.tree_size = tree_size
        self.batches, first, width = [], legacy + 1, 1
        while first <= count:
            last_position = min(count, first + width - 1)
            self.batches.append(self.signed_batch(first, last_position))
            first, width = last_position + 1, width % 4 + 1
        if self.tamper == "event":
            self.events[11]["payload"]["n"] = 0
        if self.tamper == "batch-signature":
            self.batches[2]["signature"] = flipped(bytes.fromhex(self.batches[2]["signature"])).hex()
        if self.tamper == "batch-overlap":  # batch 12-15 signed again as 11-15
            self.batches[3] = self.signed_batch(11, 15)
        if self.tamper == "batch-gap":  # batch 16-16 gone
            del self.batches[4]

    def signed_batch(self, first, last):
        """The batch of positions first..last, signed with the log's key."""
        message = batch_bytes(first, last, self.leaves[first - 1:last])
        return {"first_position": first, "last_position": last, "signature": self.key.sign(message).hex()}

    def head(self):
        """The signed head at tree_size."""
        root = mth(self.leaves, 0, self.tree_size)
        timestamp = 1795791600000
        signature = self.key.sign(head_bytes(self.log_id, self.tree_size, timestamp, root))
        if self.tamper == "head-signature":
            signature = flipped(signature, 5)
        return {"log_id": self.log_id, "tree_size": self.tree_size, "timestamp": timestamp,
                "root_hash": root.hex(), "signature": signature.hex()}

    def answer(self, route, query, authorization):
        """(status, JSON value) for GET route?query."""
        number = lambda name: int(query[name][0])  # noqa: E731
        public = self.key.public_key().public_bytes_raw()
        if route == "/v1/log/key":
            return 200, {"log_id": self.log_id, "algorithm": "ed25519", "public_key": public.hex()}
        if route == "/v1/log/head":
            return 200, self.head()
        if route == "/v1/events":
            if authorization != "Bearer " + self.token:
                return 401, {"error": "a valid admin bearer token is required"}
            after, limit = number("after"), number("limit")
            page = [e for e in self.events if e["position"] > after][:limit]
            return 200, {"events": page, "next_after": page[-1]["position"] if page else after}
        if route == "/v1/log/proof/inclusion":
            position, size = number("position"), number("tree_size")
            audit = path(position - 1, self.leaves[:size])
            if self.tamper == "inclusion" and (position, size) == (9, self.tree_size):
                audit[1] = flipped(audit[1])
            return 200, {"position": position, "tree_size": size, "leaf_hash": self.leaves[position - 1].hex(),
                         "audit_path": [h.hex() for h in audit]}
        if route == "/v1/log/proof/consistency":
            m, n = number("from"), number("to")
            consistency = proof(m, self.leaves[:n])
            if self.tamper == "consistency" and (m, n) == (5, self.tree_size):
                consistency[0] = flipped(consistency[0])
            return 200, {"from": m, "to": n, "proof": [h.hex() for h in consistency]}
        if route == "/v1/log/batches":
            start, end = number("from"), number("to")
            # At most two at a time, to make the verifier page.
            found = [b for b in self.batches if b["last_position"] >= start and b["first_position"] <= end]
            return 200, found[:2]
        return 404, {"error": "no such route"}

    def serve(self):
        """Serves the log on 127.0.0.1 in a thread: (server, base url)."""
        log = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 (http.server's name)
                where = urllib.parse.urlsplit(self.path)
                status, value = log.answer(where.path, urllib.parse.parse_qs(where.query),
                                           self.headers.get("Authorization"))
                body = json.dumps(value).encode("utf-8")
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        return server, "http://127.0.0.1:%d" % server.server_address[1]


def self_test_http():
    """The whole HTTP check against a synthetic log, then each tampered variant: the summary of
    the untouched log, and the messages naming what each tampering broke."""
    log = SyntheticLog()
    server, url = log.serve()
    try:
        summary = verify_log(url, log.token, [1, 5, 16, 20])
        try:
            verify_log(url, "wrong-token")
            raise AssertionError("a wrong token was accepted")
        except Mismatch as e:
            expect("HTTP 401" in str(e), "a wrong token: %s" % e)
    finally:
        server.shutdown()
        server.server_close()
    want = {"events": 33, "inclusion_proofs": 33 + 1 + 5 + 16 + 20, "consistency_proofs": 15,
            "batches": 12, "legacy_positions": 5, "recorded_at_000": 8, "ok": True}
    expect(summary == want, "synthetic log summary %r, expected %r" % (summary, want))
    messages = {}
    for tamper, names in [("event", "position 12"), ("batch-signature", "batch 9-11"),
                          ("batch-overlap", "position 11: covered by two"),
                          ("batch-gap", "position 16: covered by no batch"),
                          ("head-signature", "head of tree_size 33"),
                          ("inclusion", "position 9 in tree_size 33"), ("consistency", "from 5 to 33")]:
        log = SyntheticLog(tamper=tamper)
        server, url = log.serve()
        try:
            verify_log(url, log.token, [1, 5, 16, 20])
            raise AssertionError("tampered %s was accepted" % tamper)
        except Mismatch as e:
            expect(names in str(e), "tampered %s: %s (should name %s)" % (tamper, e, names))
            messages[tamper] = str(e)
        finally:
            server.shutdown()
            server.server_close()
    return summary, messages


def self_test():
    """Runs every self check; prints what it checked, raises AssertionError on a failure."""
    self_test_vectors()
    inclusions, consistencies = self_test_proofs()
    print("self-test: %d inclusion and %d consistency proofs (trees of 1..70 leaves) verify, "
          "and their tampered forms do not" % (inclusions, consistencies))
    try:
        import cryptography  # noqa: F401
    except ImportError:
        raise AssertionError("the HTTP check needs the `cryptography` package: "
                             "pip install -r tests/requirements.txt") from None
    summary, messages = self_test_http()
    print("self-test: synthetic log %s" % json.dumps(summary))
    for tamper, message in messages.items():
        print("self-test: tampered %s refused: %s" % (tamper, message))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--url", help="the server, e.g. http://127.0.0.1:8080")
    parser.add_argument("--token", help="the admin token (/v1/events needs it)")
    parser.add_argument("--sizes", default="", help="more tree sizes to prove, e.g. 1,5,17")
    parser.add_argument("--self-test", action="store_true", help="check this verifier; no server")
    args = parser.parse_args()
    if args.self_test:
        try:
            self_test()
        except AssertionError as e:
            sys.exit("verify_log self-test FAILED: %s" % e)
        print("self-test ok")
        return
    if not args.url or not args.token:
        parser.error("--url and --token are required (or --self-test)")
    try:
        sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    except ValueError:
        parser.error("--sizes is a comma-separated list of integers")
    try:
        import cryptography  # noqa: F401
    except ImportError:
        sys.exit("verify_log: the `cryptography` package is needed: pip install -r tests/requirements.txt")
    try:
        summary = verify_log(args.url, args.token, sizes)
    except Mismatch as e:
        sys.exit("verify_log: %s" % e)
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
