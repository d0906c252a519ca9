"""Prints run.sh's summary from mocha's json report and http-log.js's request log, and judges it
against the expected failures.

Mocha's counts (hook failures count as failures, as in its spec reporter), each failure with its
error's first line and what the server answered during it other than 2xx/304, then the requests
as a whole: whether each carried COUCH_HOST's credentials, and every 401/403 with its test.
Last, the failures not in EXPECTED (a file of `full title<TAB>reason` lines; `#` comments) and
the expected ones that passed. Exits 1 when a test failed that is not expected to, else 0.

Usage: summary.py MOCHA_JSON HTTP_JSONL EXPECTED
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


expected = {}
for line in open(sys.argv[3], encoding="utf-8"):
    line = line.rstrip("\n")
    if not line.strip() or line.lstrip().startswith("#"):
        continue
    title, _, reason = line.partition("\t")
    if not reason.strip():
        sys.exit(f"summary.py: the expected failure {title!r} gives no reason")
    expected[title] = reason.strip()

failed = {f["fullTitle"] for f in report["failures"]}
unexpected = sorted(failed - set(expected))
passing_now = sorted(set(expected) - failed)
print(f"\nexpected failures: {len(failed & set(expected))} of {len(expected)} listed")
if passing_now:
    print(f"listed but not failing ({len(passing_now)}; take them off the list):")
    for title in passing_now:
        print(f"  {title}")
if unexpected:
    print(f"UNEXPECTED failures ({len(unexpected)}):")
    for title in unexpected:
        print(f"  {title}")
    sys.exit(1)
print("no unexpected failure")
