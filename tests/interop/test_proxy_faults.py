"""pulsarc through the fault-injection proxy in front of the real broker (issue 4):
connections cut at random while 100,000 messages go out, and a stalled connection that
makes messages time out. Run with scripts/broker-behind-proxy (scripts/test does)."""

import re
import threading
import time

import pytest

import pulsar_helpers as ph
from proxy_helpers import fault_proxy, fault_proxy_session  # noqa: F401
from test_producer_interop import run_producer

pytestmark = pytest.mark.proxy

COUNT = 100_000


def enable_dedup(topic, partitions):
    # A partitioned topic's policy covers its partitions.
    if partitions:
        ph.create_partitioned_topic(topic, partitions)
    else:
        ph.create_topic(topic)
    ph.set_topic_deduplication(topic, True)
    ph.wait_for(lambda: ph.get_topic_deduplication(topic) is True, timeout_s=30)


@pytest.mark.parametrize("dedup,batching,partitions", [
    (True, "true", 0), (True, "false", 0), (True, "true", 3), (False, "true", 0),
    (False, "false", 3)])
def test_random_cuts_lose_nothing(service_url, unique_topic, tmp_path, fault_proxy,
                                  dedup, batching, partitions):
    topic = unique_topic()
    if dedup:
        enable_dedup(topic, partitions)
    elif partitions:
        ph.create_partitioned_topic(topic, partitions)
    fault_proxy.schedule_cuts(0.5, 3.0)
    try:
        summary, ids = run_producer(
            service_url, topic, COUNT, "async", tmp_path, "--max-size", "200",
            "--name", "cuts-" + topic[-8:], "--rate", "8000" if batching == "true" else "2500",
            "--conf", f"batchingEnabled={batching}",
            "--conf", "maxPendingMessages=2000", timeout_s=600)
    finally:
        fault_proxy.schedule_off()
    cuts = fault_proxy.stats()["cuts"]
    print(f"{cuts} cuts during the run")
    assert cuts >= 3, "the proxy really cut connections"
    # Every send callback fired once, each with success.
    assert summary["sent"] == COUNT and summary["failed"] == 0, summary
    assert all(i["result"] == "OK" for i in ids)
    received = (ph.read_partitioned(topic, COUNT, timeout_s=180, extra_wait_s=3.0) if partitions
                else ph.read_messages(topic, COUNT, timeout_s=180, extra_wait_s=3.0))
    indexes = [int(m["properties"]["index"]) for m in received]
    missing = set(range(COUNT)) - set(indexes)
    duplicates = len(indexes) - len(set(indexes))
    print(f"received {len(indexes)}, missing {len(missing)}, duplicates {duplicates}")
    assert not missing
    if dedup:
        assert duplicates == 0 and len(indexes) == COUNT
    # Order: per partition (per producer), first arrivals follow the send order.
    streams = {}
    for m, i in zip(received, indexes):
        streams.setdefault(m["message_id"][2], []).append(i)
    for part, stream in streams.items():
        seen, first = set(), []
        for i in stream:
            if i not in seen:
                seen.add(i)
                first.append(i)
        assert first == sorted(first), f"partition {part} out of order"


def test_stall_times_out_only_the_old_messages(service_url, unique_topic, tmp_path, fault_proxy):
    topic = unique_topic()
    ph.create_topic(topic)
    result = {}

    def produce():
        result["out"] = run_producer(service_url, topic, 600, "async", tmp_path, "--rate", "100",
                                     "--conf", "sendTimeoutMs=1500", "--conf", "batchingEnabled=false",
                                     timeout_s=120, check=False)

    # Messages 0..~150 go through, then the connection stalls for 4 s: what was sent in
    # the stall's first 2.5 s waits longer than 1.5 s and fails; after the resume the
    # rest (and later ones) succeed.
    t = threading.Thread(target=produce)
    t.start()
    time.sleep(1.5)
    fault_proxy.stall()
    time.sleep(4.0)
    fault_proxy.resume()
    t.join()
    summary, ids = result["out"]
    results = [i["result"] for i in ids]
    timed_out = [k for k, r in enumerate(results) if r == "SEND_TIMEOUT"]
    assert timed_out, "some messages expired during the stall"
    assert set(results) <= {"OK", "SEND_TIMEOUT"}, set(results)
    assert results[0] == "OK" and results[-1] == "OK"
    assert results[-100:] == ["OK"] * 100, "messages after the stall succeed"
    assert summary["failed"] == len(timed_out)
    # Every callback ran, nothing is left pending, and the permits came back.
    assert summary["sent"] + summary["failed"] == 600
    assert summary["pending"] == 0 and summary["memory"] == 0
    # Whatever succeeded is stored.
    received = ph.read_messages(topic, 600, timeout_s=30, extra_wait_s=1.0)
    got = {int(m["properties"]["index"]) for m in received}
    ok = {k for k, r in enumerate(results) if r == "OK"}
    assert ok <= got
