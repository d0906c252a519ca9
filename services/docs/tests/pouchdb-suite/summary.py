"""Prints run.sh's summary from mocha's json report and http-log.js's request log.

Mocha's counts (hook failures count as failures, as in its spec reporter), each failure with its
error's first line and what the server answered during it other than 2xx/304, then the requests
as a whole: whether each carried COUCH_HOST's credentials, and every 401/403 with its test.

Usage: summary.py MOCHA_JSON HTTP_JSONL
"""

import collections
import json
import os
import sys

report = json.load(open(sys.argv[1]))
rows = [json.loads(line) for line in open(sys.argv[2])] if os.path.exists(sys.argv[2]) else []

st = report["stats"]
print(f"  {st['passes']} passing ({st['duration'] / 1000:.0f}s)")
print(f"  {st['pending']} pending")
print(f"  {st['failures']} failing")

by_test = collections.defaultdict(list)
for r in rows:
    by_test[r["test"]].append(r)


def unusual(r):
    return r["status"] is None or not (200 <= r["status"] < 300 or r["status"] == 304)


print("\nfailing tests:" if report["failures"] else "\nfailing tests: none")
for i, f in enumerate(report["failures"], 1):
    msg = (f.get("err", {}).get("message") or "").strip().splitlines()
    print(f"  {i}) {f['fullTitle']}")
    print(f"     {msg[0][:240] if msg else '(no message)'}")
    odd = collections.Counter(
        f"{r['status']} {r['method']}" for r in by_test.get(f["fullTitle"], []) if unusual(r)
    )
    if odd:
        print("     server answered: " + ", ".join(f"{k} x{n}" for k, n in sorted(odd.items())))

print(f"\nrequests to the server: {len(rows)}")
print(f"  by credentials: {dict(collections.Counter(r['auth'] for r in rows))}")
print(f"  by status: {dict(sorted(collections.Counter(str(r['status']) for r in rows).items()))}")
denied = [r for r in rows if r["status"] in (401, 403)]
for r in denied[:50]:
    print(f"  {r['status']} {r['method']} {r['path']} (credentials: {r['auth']}) in: {r['test']}")
if len(denied) > 50:
    print(f"  ... and {len(denied) - 50} more 401/403")
