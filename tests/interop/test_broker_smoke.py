"""Proves the harness and the broker, without pulsarc: the official client writes,
read_messages()/read_partitioned() and the admin helpers see exactly that."""

import pulsar

import pulsar_helpers as ph


def test_python_roundtrip(unique_topic, pulsar_client):
    topic = unique_topic()
    payloads = [b"hello", b"world", b"\x00\xffbinary"]
    ids = ph.produce_python(
        topic, payloads, client=pulsar_client, producer_name="smoke-producer",
        batching_enabled=False,
        send_kwargs={"partition_key": "k1", "properties": {"origin": "smoke"}, "event_timestamp": 1234})

    got = ph.read_messages(topic, len(payloads), timeout_s=30, to_end=True, client=pulsar_client)

    assert [m["data"] for m in got] == payloads
    for m, mid in zip(got, ids):
        assert m["partition_key"] == "k1"
        assert m["properties"] == {"origin": "smoke"}
        assert m["event_timestamp"] == 1234
        assert m["producer_name"] == "smoke-producer"
        assert m["publish_timestamp"] > 0
        assert m["message_id"] == mid

    # The admin API sees the same producer and entries; sequence ids start at 0.
    assert ph.internal_stats(topic)["entriesAddedCounter"] == len(payloads)
    ledger, entry, _, _ = got[-1]["message_id"]
    headers, body = ph.get_message_by_id(topic, ledger, entry)
    assert body == payloads[-1]
    assert ph.header(headers, "X-Pulsar-producer-name") == "smoke-producer"
    assert ph.header(headers, "X-Pulsar-sequence-id") == str(len(payloads) - 1)


def test_partitioned_roundtrip(unique_topic, pulsar_client):
    topic = unique_topic()
    ph.create_partitioned_topic(topic, 3)
    assert ph.partitioned_metadata(topic)["partitions"] == 3

    payloads = [f"m{i}".encode() for i in range(12)]
    ph.produce_python(topic, payloads, client=pulsar_client, batching_enabled=False,
                      message_routing_mode=pulsar.PartitionsRoutingMode.RoundRobinDistribution)
    got = ph.read_partitioned(topic, len(payloads), timeout_s=30, client=pulsar_client)

    assert sorted(m["data"] for m in got) == sorted(payloads)
    assert {m["topic_name"] for m in got} == {ph.partition_name(topic, i) for i in range(3)}
    stats = ph.partitioned_stats(topic)
    assert stats["msgInCounter"] == len(payloads)

