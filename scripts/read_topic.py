#!/usr/bin/env python3
"""Read the first N messages of a topic with the official Python client and print them.

usage: scripts/read_topic.py TOPIC N [--service-url URL] [--timeout S]

Sequence ids are not exposed by the Python client's Message; they are taken from the
broker's admin API (the entry's X-Pulsar-sequence-id header). For a batch that is the
batch's first sequence id plus the index within the batch."""

import argparse
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "interop"))
import pulsar_helpers as ph  # noqa: E402


def sequence_id(topic: str, msg: dict):
    ledger, entry, partition, batch_index = msg["message_id"]
    t = ph.partition_name(topic, partition) if partition >= 0 else topic
    try:
        headers, _ = ph.get_message_by_id(t, ledger, entry)
    except (ph.AdminError, OSError):
        return None
    first = ph.header(headers, "X-Pulsar-sequence-id")
    if first is None:
        return None
    return int(first) + max(batch_index, 0)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("topic")
    ap.add_argument("n", type=int)
    ap.add_argument("--service-url", default=None)
    ap.add_argument("--timeout", type=float, default=30)
    args = ap.parse_args()
    if args.service_url:
        os.environ["PULSAR_SERVICE_URL"] = args.service_url

    msgs = ph.read_messages(args.topic, args.n, timeout_s=args.timeout)
    for i, m in enumerate(msgs):
        print(f"[{i}] payload={m['data']!r} key={m['partition_key']!r} properties={m['properties']} "
              f"producer={m['producer_name']!r} sequence_id={sequence_id(args.topic, m)} "
              f"message_id={':'.join(str(x) for x in m['message_id'])}")
    if len(msgs) < args.n:
        print(f"only {len(msgs)} of {args.n} messages arrived within {args.timeout} s", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
