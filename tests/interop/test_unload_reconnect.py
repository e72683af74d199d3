"""Topic unloads while sending: the broker closes the producer, pulsarc looks the topic up
again, re-registers and resends what was pending. Nothing accepted may be lost; with
deduplication nothing may be stored twice (issue 4, the gentle fault)."""

import threading
import time

import pytest

import pulsar_helpers as ph
from test_producer_interop import run_producer


def unload_repeatedly(topic, stop, every_s=0.4, partitions=0):
    """Unload the topic (each partition) again and again until `stop`; returns how many
    unloads closed a registered producer.

    Each round waits until a producer is registered on every partition, then every_s, then
    unloads. Unloading on a fixed clock instead races the producer's own reload: the
    broker loads the topic again for the producer's PRODUCER command (with deduplication
    it replays every entry since the last snapshot, hundreds of ms on a busy machine), an
    unload arriving meanwhile waits for that load and closes the topic under the
    half-registered producer, and once loading takes longer than the clock's period the
    producer can be kept off the topic until its messages time out, as any client would
    be. The tests are about what a reconnect does, so every unload here meets a producer
    that is back."""
    names = [ph.partition_name(topic, i) for i in range(partitions)] if partitions else [topic]

    def has_producer(name):
        try:
            return bool(ph.publishers(name))
        except Exception:
            return False  # the stats request met the topic loading or being unloaded

    count = 0
    while not stop.is_set():
        for name in names:
            while not stop.is_set() and not has_producer(name):
                stop.wait(0.05)
        if stop.wait(every_s):
            break
        for name in names:
            try:
                ph.unload_topic(name)
                count += 1
            except Exception:
                pass  # an unload racing a load is refused; the next one goes through
    return count


@pytest.mark.parametrize("dedup,batching,partitions", [
    (True, "true", 0), (True, "false", 0), (False, "true", 0), (True, "true", 3)])
def test_unloads_lose_nothing(service_url, unique_topic, dedup_topic, tmp_path, dedup, batching,
                              partitions):
    topic = dedup_topic() if dedup else unique_topic()
    if partitions:
        ph.create_partitioned_topic(topic, partitions)
    else:
        ph.create_topic(topic)
    if dedup:
        ph.wait_deduplication_enabled(topic, partitions)
    count = 6000
    stop = threading.Event()
    unloads = []
    unloader = threading.Thread(
        target=lambda: unloads.append(unload_repeatedly(topic, stop, partitions=partitions)))
    unloader.start()
    try:
        summary, ids = run_producer(service_url, topic, count, "async", tmp_path, "--rate", "2000",
                                    "--name", "unload-" + topic[-8:],
                                    "--conf", f"batchingEnabled={batching}", timeout_s=240)
    finally:
        stop.set()
        unloader.join()
    print(f"{unloads[0]} unloads while sending")
    assert unloads[0] >= 2 * max(partitions, 1), "each topic was unloaded while sending"
    assert summary["sent"] == count and summary["failed"] == 0, summary
    received = (ph.read_partitioned(topic, count, timeout_s=90, to_end=True) if partitions
                else ph.read_messages(topic, count, timeout_s=90, to_end=True))
    indexes = [int(m["properties"]["index"]) for m in received]
    assert set(indexes) == set(range(count)), "nothing accepted is missing"
    duplicates = len(indexes) - len(set(indexes))
    print(f"received {len(indexes)} for {count} sent, {duplicates} duplicates")
    if dedup:
        assert duplicates == 0
    if not partitions:
        # One producer, one topic: first arrivals keep the send order.
        seen, order = set(), []
        for i in indexes:
            if i not in seen:
                seen.add(i)
                order.append(i)
        assert order == list(range(count))
