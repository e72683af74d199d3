"""Deduplication with replays and new ids mixed (issue 7, item 1): an application that
restarts with a fixed producer name replays the messages it was unsure of, with their
old sequence ids, then continues with new ones. The broker drops a whole batch (or entry)
whose first sequence id is not above the last one it has, so a replayed id must never
share a batch with a new one, and key-based batches (which interleave automatic ids)
must get their ids in flush order. Read back with the official client: every message
exactly once, nothing reported stored that is not.

Real broker, no proxy. Each test makes its own topic in the namespace where deduplication
is on (pulsar_helpers.DEDUP_NAMESPACE: a namespace policy, never a topic one, because of a
broker race on topic load)."""

from __future__ import annotations

import re
import threading

import pytest

import pulsar_helpers as ph
from pulsarc_messages import gen_messages_range, read_ids
from test_unload_reconnect import unload_repeatedly

SUMMARY = re.compile(r"sent=(\d+) failed=(\d+) producer=(\S*) last_sequence_id=(-?\d+) "
                     r"rejected=(\d+) pending=(\d+) memory=(\d+)")


def produce(service_url, topic, count, run_dir, *extra, timeout_s=180, check=True):
    """Run interop_producer (async) once; returns (summary, ids, proc). Each run gets its
    own directory, so a test's two runs keep both --ids files."""
    run_dir.mkdir(parents=True, exist_ok=True)
    ids_file = run_dir / "ids.txt"
    proc = ph.run_bin("interop_producer", service_url, topic, str(count), "async",
                      "--ids", str(ids_file), *extra, timeout_s=timeout_s, check=check)
    out = proc.stdout.decode()
    m = SUMMARY.search(out)
    assert m, out + proc.stderr.decode()[-3000:]
    summary = {"sent": int(m[1]), "failed": int(m[2]), "producer": m[3], "last_seq": int(m[4]),
               "pending": int(m[6]), "memory": int(m[7])}
    return summary, read_ids(str(ids_file)), proc


def make_topic(topic, partitions=0):
    if partitions:
        ph.create_partitioned_topic(topic, partitions)
    else:
        ph.create_topic(topic)
    ph.wait_deduplication_enabled(topic, partitions)


def read_all(topic, partitions=0, timeout_s=120):
    """Everything stored on the topic (the producers are done): reads until the broker has
    no more, so a loss shows at once as a short count."""
    return ph.read_to_end(topic, partitions, timeout_s=timeout_s)


def index_of(m) -> int:
    return int(m["properties"]["index"])


def by_partition(received) -> dict[int, list[int]]:
    """Indexes in the order read, per partition (-1 for a non-partitioned topic)."""
    out: dict[int, list[int]] = {}
    for m in received:
        out.setdefault(m["message_id"][2], []).append(index_of(m))
    return out


def results_of(ids) -> dict[str, int]:
    counts: dict[str, int] = {}
    for i in ids:
        counts[i["result"]] = counts.get(i["result"], 0) + 1
    return counts


def assert_exactly_once(received, count, what=""):
    indexes = [index_of(m) for m in received]
    missing = sorted(set(range(count)) - set(indexes))
    dups = len(indexes) - len(set(indexes))
    assert not missing and dups == 0 and len(indexes) == count, (
        f"{what}read {len(indexes)} messages for {count}: {len(missing)} missing "
        f"(first: {missing[:10]}, last: {missing[-5:]}), {dups} duplicates")
    return indexes


# ------------------------------------------------------------------------------------
# 1. Replay after a restart: ids 0..999, then 500..1499 with the same producer name
# ------------------------------------------------------------------------------------

@pytest.mark.parametrize("batching", ["true", "false"])
@pytest.mark.parametrize("partitions", [0, 3])
def test_replay_after_restart_stores_every_new_message(service_url, dedup_topic, tmp_path,
                                                       batching, partitions):
    """Run 1 sends ids 0..999; run 2 (same name) replays 500..999 and continues with
    1000..1499. With the custom router (message i -> partition i % 3, by its index) each
    partition sees increasing ids, and what it has from run 1 is exactly the ids <= 999
    that route to it, so the expectation is exact on every partition."""
    topic = dedup_topic()
    make_topic(topic, partitions)
    name = "replay-" + topic[-12:]
    common = ["--name", name, "--conf", f"batchingEnabled={batching}"]
    if partitions:
        common += ["--router", "mod3"]

    first, ids1, _ = produce(service_url, topic, 1000, tmp_path / "run1", *common,
                             "--start-seq", "0")
    assert first["sent"] == 1000 and first["failed"] == 0, first
    assert all(i["result"] == "OK" and i["ledger"] >= 0 for i in ids1)

    second, ids2, proc = produce(service_url, topic, 1000, tmp_path / "run2", *common,
                                 "--start-seq", "500", "--first-index", "500", check=False)
    print(f"second run: {second}, results {results_of(ids2)}")
    assert [i["index"] for i in ids2] == list(range(500, 1500))
    assert second["sent"] == 1000 and second["failed"] == 0, \
        f"{second}\n{proc.stderr.decode()[-2000:]}"
    received = read_all(topic, partitions)
    indexes = assert_exactly_once(received, 1500)
    if partitions:
        for part, stream in by_partition(received).items():
            assert stream == [k for k in range(1500) if k % 3 == part], f"partition {part}"
    else:
        assert indexes == list(range(1500))
    # What was read is what was sent (payloads, keys, properties), message by message.
    want = {k: m for k, m in enumerate(gen_messages_range(0, 1500))}
    for m in received:
        k = index_of(m)
        assert m["data"] == want[k]["data"], f"payload of {k}"
        assert m["partition_key"] == want[k]["partition_key"], f"key of {k}"
        assert m["producer_name"] == name
    # The broker already had 500..999: success, with no entry of their own (-1:-1).
    replayed = [i for i in ids2 if i["index"] < 1000]
    assert all(i["result"] == "OK" for i in replayed), results_of(replayed)
    not_dup = [i["index"] for i in replayed if (i["ledger"], i["entry"]) != (-1, -1)]
    assert not not_dup, f"replayed messages reported as newly stored: {not_dup[:10]}"
    # 1000..1499 are new: success means stored, so each names a real entry.
    new = [i for i in ids2 if i["index"] >= 1000]
    assert all(i["result"] == "OK" for i in new), results_of(new)
    no_entry = [i["index"] for i in new if i["ledger"] < 0 or i["entry"] < 0]
    assert not no_entry, (f"{len(no_entry)} new messages reported OK without being stored "
                          f"(ledger/entry -1), first {no_entry[:10]}")

    # The message ids reported for new messages are the ones the broker gave them.
    stored = {index_of(m): m["message_id"] for m in received}
    for i in new:
        ledger, entry, _, batch = stored[i["index"]]
        assert (ledger, entry, batch) == (i["ledger"], i["entry"], i["batch_index"]), i["index"]


# ------------------------------------------------------------------------------------
# 2. Key-based batching with deduplication
# ------------------------------------------------------------------------------------

@pytest.mark.parametrize("partitions", [0, 3])
def test_key_based_batching_with_dedup_stores_every_message(service_url, dedup_topic,
                                                           tmp_path, partitions):
    """Key-based batches (14 partition keys and 3 ordering keys) with automatic ids: each
    batch's ids are given when it is flushed, in flush order, so every entry's first id is
    above the previous entry's and the broker keeps them all."""
    topic = dedup_topic()
    make_topic(topic, partitions)
    count = 5000
    summary, ids, proc = produce(service_url, topic, count, tmp_path / "run",
                                 "--name", "keyed-" + topic[-12:],
                                 "--conf", "batcherType=key_based", "--max-size", "200",
                                 check=False)
    print(f"{summary}, results {results_of(ids)}")
    assert summary["sent"] == count and summary["failed"] == 0, \
        f"{summary}\n{proc.stderr.decode()[-2000:]}"

    received = read_all(topic, partitions)
    assert_exactly_once(received, count)
    # A message id in a callback names the entry the message is in; -1:-1 only when a
    # resend after a reconnect found the message already stored (none is expected here).
    stored = {index_of(m): m["message_id"] for m in received}
    wrong = [i["index"] for i in ids if i["ledger"] >= 0 and
             (i["ledger"], i["entry"], i["batch_index"]) != (stored[i["index"]][0],
                                                           stored[i["index"]][1],
                                                           stored[i["index"]][3])]
    assert not wrong, f"message ids that name another entry: {wrong[:10]}"
    print(f"{sum(i['ledger'] < 0 for i in ids)} callbacks with -1:-1")
    # Order is kept per batching key (the ordering key, else the partition key).
    streams: dict[tuple, list[int]] = {}
    for m in received:
        key = (m["message_id"][2], m["ordering_key"] or m["partition_key"])
        streams.setdefault(key, []).append(index_of(m))
    for key, stream in streams.items():
        assert stream == sorted(stream), f"key {key} out of order"
    # The broker's stored sequence ids increase entry by entry on every partition.
    entries: dict[int, list[tuple]] = {}
    for m in received:
        ledger, entry, part, _ = m["message_id"]
        e = entries.setdefault(part, [])
        if not e or e[-1] != (ledger, entry):
            e.append((ledger, entry))
    for part, es in entries.items():
        name = ph.partition_name(topic, part) if partitions else topic
        seqs = [ph.entry_metadata(name, ledger, entry)["sequence_id"] for ledger, entry in es]
        assert None not in seqs
        bad = [(a, b) for a, b in zip(seqs, seqs[1:]) if b <= a]
        assert not bad, f"partition {part}: sequence ids not increasing: {bad[:5]}"
        print(f"partition {part}: {len(es)} entries, first ids {seqs[:8]}")


def test_explicit_ids_with_key_based_batching_are_rejected(service_url, unique_topic, tmp_path):
    """Explicit sequence ids cannot be kept increasing across key-based batches, so the
    send is refused (INVALID_ARGUMENT) and nothing is stored."""
    topic = unique_topic()
    ph.create_topic(topic)
    summary, ids, proc = produce(service_url, topic, 20, tmp_path / "run",
                                 "--conf", "batcherType=key_based", "--start-seq", "0",
                                 check=False)
    assert proc.returncode != 0, summary
    assert summary["sent"] == 0 and summary["failed"] == 20, summary
    assert [i["result"] for i in ids] == ["INVALID_ARGUMENT"] * 20, results_of(ids)
    assert summary["pending"] == 0 and summary["memory"] == 0
    assert ph.internal_stats(topic)["entriesAddedCounter"] == 0, "nothing reached the broker"


# ------------------------------------------------------------------------------------
# 3. Reconnects while new messages arrive, then a replay that continues
# ------------------------------------------------------------------------------------

def test_unloads_then_replay_store_each_id_once(service_url, dedup_topic, tmp_path):
    """Topic unloads (every 0.4 s) during both runs: 20,000 messages, then a restart that
    replays the last 2,000 ids and sends 2,000 new ones."""
    topic = dedup_topic()
    make_topic(topic)
    name = "unload-replay-" + topic[-12:]
    common = ["--name", name, "--conf", "batchingEnabled=true", "--max-size", "200"]
    runs = [(20_000, 0, "5000"), (4_000, 18_000, "2000")]  # count, first id, rate
    results = []
    unloads = 0
    for n, (count, first, rate) in enumerate(runs, 1):
        stop = threading.Event()
        done: list[int] = []
        unloader = threading.Thread(target=lambda: done.append(unload_repeatedly(topic, stop)))
        unloader.start()
        try:
            summary, ids, proc = produce(service_url, topic, count, tmp_path / f"run{n}", *common,
                                         "--start-seq", str(first), "--first-index", str(first),
                                         "--rate", rate, timeout_s=240, check=False)
        finally:
            stop.set()
            unloader.join()
        unloads += done[0] if done else 0
        print(f"run {n}: {summary}, results {results_of(ids)}")
        assert summary["sent"] == count and summary["failed"] == 0, \
            f"run {n}: {summary}\n{proc.stderr.decode()[-2000:]}"
        results.append(ids)
    print(f"{unloads} unloads")
    assert unloads >= 4, "the topic really was unloaded during the runs"
    # The replayed ids were all stored by run 1: the broker drops them, success, -1:-1.
    replayed = [i["index"] for i in results[1] if i["index"] < 20_000
                and (i["ledger"], i["entry"]) != (-1, -1)]
    assert not replayed, f"replayed messages reported as newly stored: {replayed[:10]}"

    total = 22_000
    received = read_all(topic, timeout_s=180)
    indexes = assert_exactly_once(received, total)
    assert indexes == list(range(total)), "one producer at a time, one topic: send order"
