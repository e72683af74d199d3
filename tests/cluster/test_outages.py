"""A broker goes away while pulsarc sends: killed with -9, stopped gracefully, or its
bundles unloaded. 50,000 messages of 100 bytes go to a 6-partition topic spread over
both brokers, deduplicated (a namespace policy) under fixed producer names; in the
middle of the run one broker (or its bundles) goes. The producers on it reconnect, look
the topic up again, land on the new owner and resend what was pending, in order; the
others carry on. The official Python client then reads each message exactly once, in
send order per partition, and the test producer saw one callback per message. Each test
leaves the rig as it found it (the broker started again)."""

from __future__ import annotations

import re
import uuid

import pytest

import cluster_helpers as ch
import pulsar_helpers as ph

COUNT = 50_000
# Fast enough for a short layer, slow enough that the outage lands mid-run: about 5 s
# of sending, the outage after 20,000 acknowledgements.
RATE = 10_000
OUTAGE_AT = 20_000


def dedup_spread_topic(rig) -> tuple[str, list[ch.Broker]]:
    topic, owners = ch.spread_partitioned_topic(rig, partitions=6, dedup=True, prefix="outage")
    # A producer that registers before its partition's deduplication is enabled would
    # not be deduplicated; asking for the stats loads each partition.
    for i in range(6):
        part = ph.partition_name(topic, i)
        ph.wait_for(lambda: ch.admin(rig.admin_url, "GET",
                                     f"/admin/v2/{ph.topic_rest_path(part)}/stats")
                    .get("deduplicationStatus") == "Enabled",
                    timeout_s=60, what=f"deduplication enabled on {part}")
    return topic, owners


def send_through(rig, topic: str, outage) -> tuple[ch.ProducerRun, dict]:
    """Run the producer over topic and call outage() once OUTAGE_AT messages are
    acknowledged; returns (the run, its final counts)."""
    run = ch.ProducerRun(rig.service_url, topic, COUNT, "--keys", "101", "--rate", str(RATE),
                         "--progress", str(OUTAGE_AT), "--size", "100",
                         "--conf", f"producerName=outage-{uuid.uuid4().hex[:8]}",
                         "--conf", "sendTimeoutMs=120000",
                         "--client-conf", "logLevel=info")
    try:
        run.wait_for("created")
        run.wait_for(f"progress {OUTAGE_AT}")
        outage()
        counts = run.finish(timeout_s=300)
    finally:
        run.kill()
    return run, counts


def assert_registered_again(run: ch.ProducerRun, moved: set[int]) -> None:
    """From the run's log (info level): each partition producer in `moved` lost its
    broker and registered again, once per loss, and ends registered; the others
    registered once and never lost theirs. A producer may lose it more than once: when a
    send on a shared connection is refused because another bundle is being fenced,
    pulsarc closes that connection (as the Java and C++ clients do), so a producer of a
    bundle not yet unloaded registers on its old owner again and then moves with its own
    bundle. "connection lost" is logged once per ready producer that loses its broker."""
    story: dict[int, list[str]] = {p: [] for p in range(6)}
    for line in run.lines:
        if m := re.search(r"partition-(\d+): producer \S+ ready", line):
            story[int(m[1])].append("ready")
        elif m := re.search(r"partition-(\d+): connection lost", line):
            story[int(m[1])].append("lost")
    log = "\n".join(run.lines)
    for p, events in story.items():
        losses = events.count("lost")
        assert events == ["ready"] + ["lost", "ready"] * losses, f"partition {p}: {events}\n{log}"
        assert (losses >= 1) == (p in moved), f"partition {p} lost its broker {losses} time(s)\n{log}"


def assert_exactly_once_in_order(rig, topic: str, owners: list, run: ch.ProducerRun, counts: dict):
    assert counts == ch.all_acked(COUNT), "\n".join(run.lines[-20:])
    c = ph.make_client(rig.service_url)
    try:
        got = ph.read_to_end(topic, partitions=6, client=c, timeout_s=240)
    finally:
        c.close()
    indexes = [ch.index_of(m["data"]) for m in got]
    dupes = len(indexes) - len(set(indexes))
    assert dupes == 0, f"{dupes} messages stored twice"
    assert sorted(indexes) == list(range(COUNT)), f"{COUNT - len(set(indexes))} messages missing"
    for p in range(6):
        mine = [ch.index_of(m["data"]) for m in got if m["message_id"][2] == p]
        assert mine == sorted(mine), f"partition {p} out of send order"
        assert all(ph.java_partition(f"k{i % 101}", 6) == p for i in mine), f"partition {p}: wrong keys"
    assert {owners[m["message_id"][2]] for m in got} == set(rig.brokers)


@pytest.mark.parametrize("how", ["kill-broker", "stop-broker"])
def test_a_broker_goes_away_during_sends(rig, how):
    victim = rig.brokers[-1]
    topic, owners = dedup_spread_topic(rig)
    assert victim in owners
    gone = []

    def outage():
        ch.run_cluster_script(how, str(victim.n))
        gone.append(victim)

    try:
        run, counts = send_through(rig, topic, outage)
        # The victim's partitions moved to a live broker while it was away.
        moved = {ch.owner(rig, ph.partition_name(topic, i)) for i, o in enumerate(owners) if o == victim}
    finally:
        if gone:
            ch.run_cluster_script("start-broker", str(victim.n))
    assert victim not in moved, moved
    assert_exactly_once_in_order(rig, topic, owners, run, counts)
    # The victim's producers registered again (on the new owner); the others did not.
    assert_registered_again(run, {i for i, o in enumerate(owners) if o == victim})


def test_bundles_unloaded_during_sends(rig):
    topic, owners = dedup_spread_topic(rig)
    ns = topic.split("://", 1)[1].rsplit("/", 1)[0]
    bundles = {ch.bundle_of(rig, ph.partition_name(topic, i)) for i in range(6)}

    def outage():
        for b in bundles:
            ch.admin(rig.admin_url, "PUT", f"/admin/v2/namespaces/{ns}/{b}/unload")

    run, counts = send_through(rig, topic, outage)
    assert_exactly_once_in_order(rig, topic, owners, run, counts)
    assert_registered_again(run, set(range(6)))
