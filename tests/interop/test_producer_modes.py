"""Issue 20 against the real broker: who may publish to a topic (access modes, fencing,
waiting for exclusive access, the topic epoch kept across an unload), what a producer
tells the broker about itself (properties, an initial subscription), per-message
replication control and delivery delays, read back with the official Python client and
the broker's admin API.

The pulsarc producers here are pulsarc-produce processes: with --stdin one stays
registered, holding the topic, until its standard input closes."""
import re
import subprocess
import time
import urllib.request

import pulsar
import pytest

import pulsar_helpers as ph


class StdinProducer:
    """pulsarc-produce --stdin: sends each line written to it; stderr goes to a file."""

    def __init__(self, topic: str, tmp_path, *flags: str):
        self.topic = topic
        self.err_path = tmp_path / f"stderr-{time.monotonic_ns()}"
        self.err = open(self.err_path, "wb")
        self.proc = subprocess.Popen(
            [ph.bin_path("pulsarc-produce"), topic, "-u", ph.service_url(), "--stdin",
             "--verbose", *flags],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.err)

    def stderr(self) -> str:
        return self.err_path.read_text(errors="replace")

    def send(self, line: str) -> None:
        self.proc.stdin.write(line.encode() + b"\n")
        self.proc.stdin.flush()

    def persisted(self) -> int:
        return len(re.findall(r"persisted as", self.stderr()))

    def finish(self, timeout_s: float = 60) -> tuple[int, str]:
        """Close standard input; (exit status, stdout) once the run ended."""
        if not self.proc.stdin.closed:
            try:
                self.proc.stdin.close()
            except BrokenPipeError:
                pass  # it stopped already (a failure ends the run)
        out = self.proc.stdout.read().decode(errors="replace")
        rc = self.proc.wait(timeout=timeout_s)
        self.err.close()
        return rc, out

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.err.close()


@pytest.fixture
def holders():
    started = []
    yield started
    for h in started:
        h.kill()


def hold(holders, topic, tmp_path, *flags) -> StdinProducer:
    """A pulsarc producer registered on topic (it has sent one line, "held")."""
    h = StdinProducer(topic, tmp_path, *flags)
    holders.append(h)
    h.send("held")
    ph.wait_for(lambda: h.persisted() >= 1 or h.proc.poll() is not None, timeout_s=60,
                what="the holder's first message")
    assert h.persisted() == 1, h.stderr()
    return h


def produce(topic, *flags, check=False):
    return ph.run_bin("pulsarc-produce", topic, "-u", ph.service_url(), *flags, check=check,
                      timeout_s=90)


def publisher(topic) -> dict:
    pubs = ph.publishers(topic)
    assert len(pubs) == 1, pubs
    return pubs[0]


# ---- access modes -------------------------------------------------------------------------

def test_exclusive_producer_refuses_others_with_clear_errors(unique_topic, tmp_path, holders,
                                                             pulsar_client):
    topic = unique_topic()
    holder = hold(holders, topic, tmp_path, "--access-mode", "exclusive")
    assert publisher(topic)["accessMode"] == "Exclusive"

    # A second exclusive producer: the broker says ProducerFenced; a shared one:
    # ProducerBusy. Both fail creation at once with the broker's words.
    for mode, result in (("exclusive", "BROKER_PRODUCER_FENCED"),
                         ("shared", "BROKER_PRODUCER_BUSY")):
        started = time.monotonic()
        proc = produce(topic, "-m", "refused", "--access-mode", mode)
        err = proc.stderr.decode(errors="replace")
        assert proc.returncode == 1, err
        assert result in err, err
        assert "Topic has an existing exclusive producer" in err, err
        assert f"accessMode is {mode}" in err, err
        assert time.monotonic() - started < 25, "refused only at operationTimeoutMs"
    # The official client is refused the same way.
    with pytest.raises(pulsar.ProducerBusy):
        pulsar_client.create_producer(topic)

    rc, _ = holder.finish()
    assert rc == 0, holder.stderr()
    assert [m["data"] for m in ph.read_messages(topic, 1, to_end=True)] == [b"held"]


def test_exclusive_with_fencing_stops_the_holder_with_producer_fenced(unique_topic, tmp_path,
                                                                     holders, pulsar_client):
    topic = unique_topic()
    holder = hold(holders, topic, tmp_path, "--access-mode", "exclusive")
    fencer = pulsar_client.create_producer(
        topic, access_mode=pulsar.ProducerAccessMode.ExclusiveWithFencing)
    try:
        fencer.send(b"fencer")
        # The holder was closed by the broker; its reconnect is refused for good, and
        # its next message fails with the terminal PRODUCER_FENCED.
        holder.send("after-fencing")
        rc, out = holder.finish()
        err = holder.stderr()
        assert rc == 1, err
        assert "BROKER_PRODUCER_FENCED" in err, err
        assert "sent=1 failed=1" in out, out
    finally:
        fencer.close()
    datas = [m["data"] for m in ph.read_messages(topic, 2, to_end=True)]
    assert datas == [b"held", b"fencer"]


def test_wait_for_exclusive_waits_until_the_holder_leaves(unique_topic, tmp_path, holders,
                                                         pulsar_client):
    topic = unique_topic()
    holder = pulsar_client.create_producer(topic, access_mode=pulsar.ProducerAccessMode.Exclusive)
    holder.send(b"first")
    waiter = StdinProducer(topic, tmp_path, "--access-mode", "wait_for_exclusive")
    holders.append(waiter)
    waiter.send("second")
    ph.wait_for(lambda: "queued the producer" in waiter.stderr(), timeout_s=30,
                what="the broker queueing the waiting producer")
    # Queued, not created: nothing of it is stored while the holder stays.
    time.sleep(1.0)
    assert waiter.proc.poll() is None, waiter.stderr()
    assert waiter.persisted() == 0
    holder.close()
    ph.wait_for(lambda: waiter.persisted() == 1, timeout_s=30,
                what="the waiting producer's message once the holder left")
    assert publisher(topic)["accessMode"] == "WaitForExclusive"
    rc, _ = waiter.finish()
    assert rc == 0, waiter.stderr()
    assert [m["data"] for m in ph.read_messages(topic, 2, to_end=True)] == \
        [b"first", b"second"]


def test_wait_for_exclusive_gives_up_at_operation_timeout(unique_topic, pulsar_client):
    topic = unique_topic()
    holder = pulsar_client.create_producer(topic, access_mode=pulsar.ProducerAccessMode.Exclusive)
    try:
        started = time.monotonic()
        proc = produce(topic, "-m", "never", "--access-mode", "wait_for_exclusive",
                       "--client-conf", "operationTimeoutMs=3000")
        elapsed = time.monotonic() - started
        err = proc.stderr.decode(errors="replace")
        assert proc.returncode == 1, err
        assert "[TIMEOUT]" in err, err
        assert elapsed >= 3.0, elapsed
    finally:
        holder.close()
    # The topic is free: nothing of the waiter took it.
    again = pulsar_client.create_producer(topic, access_mode=pulsar.ProducerAccessMode.Exclusive)
    again.close()


def test_topic_epoch_is_kept_across_an_unload(unique_topic, tmp_path, holders):
    """The broker keeps a topic epoch for exclusive producers, bumped each time a new
    exclusive producer takes the topic. A producer that comes back after an unload sends
    the epoch it had, so the broker knows it for the same holder: the epoch stays. (A
    producer that forgot it would bump the epoch, and so fence out anyone fenced by it.)"""
    topic = unique_topic()
    holder = hold(holders, topic, tmp_path, "--access-mode", "exclusive")
    epoch = ph.topic_stats(topic)["topicEpoch"]
    ph.unload_topic(topic)
    holder.send("after-unload")
    ph.wait_for(lambda: holder.persisted() == 2 or holder.proc.poll() is not None,
                timeout_s=60, what="the message after the unload")
    assert holder.persisted() == 2, holder.stderr()
    assert "topic epoch %d" % epoch in holder.stderr()
    assert ph.topic_stats(topic)["topicEpoch"] == epoch
    rc, _ = holder.finish()
    assert rc == 0, holder.stderr()


# ---- what a producer tells the broker -------------------------------------------------------

def test_producer_properties_and_initial_subscription(unique_topic, tmp_path, holders,
                                                      pulsar_client):
    topic = unique_topic()
    holder = hold(holders, topic, tmp_path, "--producer-property", "app=billing",
                  "--producer-property", "zone=a=b", "--conf", "initialSubscriptionName=audit")
    pub = publisher(topic)
    assert pub["metadata"] == {"app": "billing", "zone": "a=b"}
    assert pub["accessMode"] == "Shared"
    assert "audit" in ph.topic_stats(topic)["subscriptions"]
    rc, _ = holder.finish()
    assert rc == 0, holder.stderr()

    # The subscription existed before any consumer: it holds what was sent.
    consumer = pulsar_client.subscribe(topic, "audit")
    try:
        assert consumer.receive(timeout_millis=30000).data() == b"held"
    finally:
        consumer.close()


def test_client_description_in_the_client_version(unique_topic, tmp_path, holders):
    """description (issue 33), as the Java and C++ clients' one: appended to the client
    version CONNECT carries, which the broker shows for the publisher."""
    topic = unique_topic()
    holder = hold(holders, topic, tmp_path, "--client-conf", "description=gateway-eu1 (v2)")
    version = publisher(topic)["clientVersion"]
    assert re.fullmatch(r"pulsarc-\d+\.\d+\.\d+-gateway-eu1 \(v2\)", version), version
    rc, _ = holder.finish()
    assert rc == 0, holder.stderr()
    plain = hold(holders, unique_topic(), tmp_path)
    assert re.fullmatch(r"pulsarc-\d+\.\d+\.\d+", publisher(plain.topic)["clientVersion"])


# ---- per-message replication and delays --------------------------------------------------

def replicated_to(topic: str, ledger: int, entry: int) -> list[str]:
    """The entry's replicate_to as the admin API gives it: one X-Pulsar-replicated-to
    header per cluster (which ph.get_message_by_id folds into one)."""
    url = f"{ph.admin_url()}/admin/v2/{ph.topic_rest_path(topic)}/ledger/{ledger}/entry/{entry}"
    with urllib.request.urlopen(url, timeout=30) as resp:
        assert resp.headers.get("X-Pulsar-num-batch-message") is None, \
            "a message with replication control was batched"
        return sorted(resp.headers.get_all("X-Pulsar-replicated-to") or [])


def message_ids(stderr: bytes) -> list[tuple[int, int]]:
    return [(int(l), int(e)) for l, e in
            re.findall(rb"persisted as (-?\d+):(-?\d+):", stderr)]


def test_replication_control_is_stored_with_the_message(unique_topic):
    """The standalone broker is one cluster: replication itself cannot be watched, but the
    broker keeps replicate_to with each entry (the admin API shows it) and stores and
    delivers the message locally, also when it names a cluster the namespace does not
    replicate to."""
    topic = unique_topic()
    cases = [(["-dr"], ["__local__"]),
             (["--replication-clusters", "nowhere"], ["nowhere"]),
             (["--replication-clusters", "east,west"], ["east", "west"])]
    for flags, want in cases:
        proc = produce(topic, "-m", flags[-1], "--verbose", *flags, check=True)
        (ledger, entry), = message_ids(proc.stderr)
        assert replicated_to(topic, ledger, entry) == want, flags
    datas = [m["data"] for m in ph.read_messages(topic, 3, to_end=True)]
    assert datas == [b"-dr", b"nowhere", b"east,west"]


def test_deliver_after_holds_the_message_for_a_shared_subscription(unique_topic, pulsar_client):
    topic = unique_topic()
    consumer = pulsar_client.subscribe(topic, "delayed", consumer_type=pulsar.ConsumerType.Shared)
    try:
        delay_s = 5.0
        sent_at = time.time()
        produce(topic, "-m", "late", "--deliver-after", str(int(delay_s * 1000)), check=True)
        produce(topic, "-m", "early", check=True)
        first = consumer.receive(timeout_millis=30000)
        second = consumer.receive(timeout_millis=30000)
        received_at = time.time()
        assert (first.data(), second.data()) == (b"early", b"late")
        # The broker's delayed-delivery timer ticks every second and, unless
        # isDelayedDeliveryDeliverAtTimeStrict, may hand a message out up to one tick
        # early (standalone.conf): never earlier than that.
        assert received_at >= sent_at + delay_s - 1.0, received_at - sent_at
        consumer.acknowledge(first)
        consumer.acknowledge(second)
    finally:
        consumer.close()


# ---- tombstones ---------------------------------------------------------------------------

def test_null_value_is_a_tombstone_for_compaction(unique_topic, pulsar_client):
    """k1 and k2, then a tombstone for k1: compaction keeps k2 alone. (Unbatched: the
    compactor marks a removed message inside a batch compacted_out, which the Python
    client hands out as an empty message instead of skipping it as Java does.)"""
    topic = unique_topic()
    ph.run_bin("pulsarc-produce", topic, "-u", ph.service_url(), "--stdin", "--no-batching",
               "--key-separator", "|", input=b"k1|v1\nk2|v2\n")
    ph.run_bin("pulsarc-produce", topic, "-u", ph.service_url(), "--stdin",
               "--key-separator", "|", "--null-value", input=b"k1|ignored\n")
    ph.admin_request("PUT", f"/admin/v2/{ph.topic_rest_path(topic)}/compaction")
    ph.wait_for(lambda: ph.admin_request(
        "GET", f"/admin/v2/{ph.topic_rest_path(topic)}/compaction").get("status") == "SUCCESS",
        timeout_s=60, what="compaction")
    reader = pulsar_client.create_reader(topic, pulsar.MessageId.earliest,
                                         is_read_compacted=True)
    try:
        seen = {}
        while True:
            try:
                msg = reader.read_next(timeout_millis=3000)
            except pulsar.Timeout:
                break
            seen[msg.partition_key()] = msg.data()
    finally:
        reader.close()
    assert seen == {"k2": b"v2"}, "the tombstone did not remove k1 from the compacted view"
