"""Batches, codecs, key-based batching and partitioned topics, read back by the official
Python client (the throughput half: issue 3)."""

import threading
import time

import pytest

import pulsar_helpers as ph
from pulsarc_messages import gen_messages
from test_producer_interop import assert_same_messages, run_producer

CODECS = ["none", "lz4", "zlib", "zstd", "snappy"]


@pytest.mark.parametrize("codec", CODECS)
def test_batched_messages_in_every_codec(service_url, unique_topic, tmp_path, codec):
    topic = unique_topic()
    count = 3000
    summary, ids = run_producer(service_url, topic, count, "async", tmp_path,
                                "--conf", f"compressionType={codec}",
                                "--conf", "batchingMaxMessages=200")
    assert summary["failed"] == 0
    assert any(i["batch_index"] > 0 for i in ids), "messages were batched"
    received = ph.read_messages(topic, count, timeout_s=60, to_end=True)
    assert_same_messages(gen_messages(count), received, ids, summary["producer"])
    # The broker stored the entries with the codec we asked for.
    headers, _ = ph.get_message_by_id(topic, ids[-1]["ledger"], ids[-1]["entry"])
    assert ph.header(headers, "X-Pulsar-compression", "NONE").lower() == codec
    assert int(ph.header(headers, "X-Pulsar-num-batch-message")) >= 1


@pytest.mark.parametrize("level", ["faster", "better"])
@pytest.mark.parametrize("codec", ["lz4", "zlib", "zstd"])
def test_compression_levels_are_read_by_the_official_client(service_url, unique_topic, tmp_path,
                                                            codec, level):
    """compressionLevel (issue 33): LZ4 HC, zlib 9, zstd 9 and the faster settings write
    the formats every reader decodes, batched and not."""
    for batched in ("true", "false"):
        topic = unique_topic()
        summary, ids = run_producer(service_url, topic, 300, "async", tmp_path,
                                    "--conf", f"compressionType={codec}",
                                    "--conf", f"compressionLevel={level}",
                                    "--conf", f"batchingEnabled={batched}")
        assert summary["failed"] == 0
        received = ph.read_messages(topic, 300, timeout_s=60, to_end=True)
        assert_same_messages(gen_messages(300), received, ids, summary["producer"])
        headers, _ = ph.get_message_by_id(topic, ids[-1]["ledger"], ids[-1]["entry"])
        assert ph.header(headers, "X-Pulsar-compression", "NONE").lower() == codec


@pytest.mark.parametrize("codec", CODECS)
def test_unbatched_messages_in_every_codec(service_url, unique_topic, tmp_path, codec):
    topic = unique_topic()
    summary, ids = run_producer(service_url, topic, 200, "async", tmp_path, "--max-size", "4000",
                                "--conf", f"compressionType={codec}",
                                "--conf", "batchingEnabled=false")
    assert all(i["batch_index"] == -1 for i in ids), "nothing was batched"
    received = ph.read_messages(topic, 200, to_end=True)
    assert_same_messages(gen_messages(200, max_size=4000), received, ids, summary["producer"])
    headers, _ = ph.get_message_by_id(topic, ids[7]["ledger"], ids[7]["entry"])
    assert ph.header(headers, "X-Pulsar-compression", "NONE").lower() == codec


def test_key_based_batches_keep_per_key_order(service_url, unique_topic, tmp_path):
    topic = unique_topic()
    count = 2000
    summary, ids = run_producer(service_url, topic, count, "async", tmp_path,
                                "--conf", "batcherType=key_based")
    assert summary["failed"] == 0
    received = ph.read_messages(topic, count, timeout_s=60, to_end=True)
    expected = gen_messages(count)
    assert len(received) == count
    by_index = {int(m["properties"]["index"]): m for m in received}
    assert sorted(by_index) == list(range(count))
    for i, want in enumerate(expected):
        got = by_index[i]
        assert got["data"] == want["data"] and got["partition_key"] == want["partition_key"]
    # Within one batch every message has the same key (ordering key first).
    batches = {}
    for m in received:
        batches.setdefault(m["message_id"][:2], set()).add(m["ordering_key"] or m["partition_key"])
    assert all(len(keys) == 1 for keys in batches.values())
    # Per key, messages arrive in the order they were sent.
    last = {}
    for m in received:
        key = m["ordering_key"] or m["partition_key"]
        idx = int(m["properties"]["index"])
        assert last.get(key, -1) < idx, f"key {key} out of order"
        last[key] = idx


@pytest.mark.parametrize("batching", ["true", "false"])
def test_partitioned_topic_routes_like_the_java_client(service_url, unique_topic, tmp_path, batching):
    topic = unique_topic()
    ph.create_partitioned_topic(topic, 7)
    count = 3000
    summary, ids = run_producer(service_url, topic, count, "async", tmp_path,
                                "--conf", f"batchingEnabled={batching}")
    assert summary["failed"] == 0
    received = ph.read_partitioned(topic, count, timeout_s=60, to_end=True)
    assert len(received) == count
    expected = gen_messages(count)
    keyless_partitions = set()
    last_per_key = {}
    for m in received:
        i = int(m["properties"]["index"])
        part = m["message_id"][2]
        assert m["data"] == expected[i]["data"]
        assert part == ids[i]["partition"], "callback id names the partition"
        key = m["partition_key"]
        if key:
            assert part == ph.java_partition(key, 7), f"key {key} on partition {part}"
            assert last_per_key.get(key, -1) < i, f"key {key} out of order"
            last_per_key[key] = i
        else:
            keyless_partitions.add(part)
    if batching == "false":
        assert keyless_partitions == set(range(7)), "keyless messages rotate over all partitions"
    else:
        assert len(keyless_partitions) >= 1


def test_custom_router_is_obeyed(service_url, unique_topic, tmp_path):
    topic = unique_topic()
    ph.create_partitioned_topic(topic, 4)
    summary, _ = run_producer(service_url, topic, 300, "async", tmp_path, "--router", "mod3")
    assert summary["failed"] == 0
    received = ph.read_partitioned(topic, 300, to_end=True)
    assert len(received) == 300
    for m in received:
        assert m["message_id"][2] == int(m["properties"]["index"]) % 3


def test_new_partitions_receive_messages(service_url, unique_topic, tmp_path):
    topic = unique_topic()
    ph.create_partitioned_topic(topic, 2)
    count = 400
    # Raise the partition count while the producer is sending (80 msg/s for 5 s).
    timer = threading.Timer(1.5, ph.update_partitions, args=(topic, 4))
    timer.start()
    try:
        summary, _ = run_producer(service_url, topic, count, "async", tmp_path, "--rate", "80",
                                  "--conf", "autoUpdatePartitionsIntervalSeconds=1",
                                  "--conf", "batchingEnabled=false")
    finally:
        timer.cancel()
    assert summary["failed"] == 0
    received = ph.read_partitioned(topic, count, timeout_s=60, to_end=True)
    assert len(received) == count
    keyless = {m["message_id"][2] for m in received if not m["partition_key"]}
    keyed = {m["message_id"][2] for m in received if m["partition_key"]}
    assert {2, 3} & (keyless | keyed), "the added partitions got messages"


def test_full_queue_fails_fast_and_loses_nothing_accepted(service_url, unique_topic, tmp_path):
    topic = unique_topic()
    count = 5000
    summary, ids = run_producer(service_url, topic, count, "async", tmp_path, "--no-block",
                                "--conf", "maxPendingMessages=10", "--conf", "batchingEnabled=false")
    proc_rejected = sum(1 for i in ids if i["ledger"] == -2)
    assert proc_rejected > 0, "the tiny queue overflowed"
    accepted = {i["index"] for i in ids if i["ledger"] != -2}
    assert summary["sent"] == len(accepted)
    received = ph.read_messages(topic, len(accepted), timeout_s=60, to_end=True)
    assert {int(m["properties"]["index"]) for m in received} == accepted
    assert len(received) == len(accepted)


def test_blocking_queue_waits_and_delivers_everything(service_url, unique_topic, tmp_path):
    topic = unique_topic()
    summary, _ = run_producer(service_url, topic, 3000, "async", tmp_path,
                              "--conf", "maxPendingMessages=5", "--conf", "batchingEnabled=false")
    assert summary["sent"] == 3000 and summary["failed"] == 0
    received = ph.read_messages(topic, 3000, timeout_s=60, to_end=True)
    assert [int(m["properties"]["index"]) for m in received] == list(range(3000))


def test_lazy_start_connects_partitions_on_first_use(service_url, unique_topic, tmp_path):
    topic = unique_topic()
    ph.create_partitioned_topic(topic, 5)
    # Every message goes to partition 0..2 by the custom router: 3 and 4 never connect.
    summary, _ = run_producer(service_url, topic, 300, "async", tmp_path, "--router", "mod3",
                              "--conf", "lazyStartPartitionedProducers=true")
    assert summary["failed"] == 0
    received = ph.read_partitioned(topic, 300, to_end=True)
    assert sorted({m["message_id"][2] for m in received}) == [0, 1, 2]
    assert len(received) == 300


def test_batches_above_the_topics_max_message_size_fail_at_once(service_url, unique_topic,
                                                                tmp_path):
    """A topic policy maxMessageSize below a batch's size: the broker refuses each such
    batch with SEND_ERROR(NotAllowed) naming its highest sequence id, and every message
    of it fails with BROKER_NOT_ALLOWED at once (with sendTimeoutMs=0 it used to wait for
    ever); what was stored is exactly what succeeded."""
    topic = unique_topic()
    ph.create_topic(topic)
    path = f"/admin/v2/{ph.topic_rest_path(topic)}/maxMessageSize"
    ph.admin_request("POST", path, 1000)
    ph.wait_for(lambda: ph.admin_request("GET", path) == 1000, timeout_s=30)
    count = 60
    summary, ids = run_producer(service_url, topic, count, "async", tmp_path,
                                "--max-size", "2000", "--conf", "sendTimeoutMs=0",
                                "--conf", "batchingMaxMessages=5",
                                "--conf", "batchingMaxPublishDelayMs=50",
                                timeout_s=60, check=False)
    results = {i["result"] for i in ids}
    assert results <= {"OK", "BROKER_NOT_ALLOWED"}, results
    refused = [i["index"] for i in ids if i["result"] == "BROKER_NOT_ALLOWED"]
    assert refused, "no batch was above the limit"
    assert summary["sent"] + summary["failed"] == count
    assert any(i["batch_index"] > 0 for i in ids if i["result"] == "OK") or \
        summary["sent"] == 0, "messages were not batched"
    stored = sorted(int(m["properties"]["index"]) for m in ph.read_to_end(topic))
    assert stored == sorted(i["index"] for i in ids if i["result"] == "OK")
