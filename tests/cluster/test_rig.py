"""Self-tests of the cluster rig (scripts/cluster) with the official Python client and
the admin API only: the brokers are registered, bundles can be placed on each broker,
both listeners answer, TLS works directly and through the SNI router."""

from __future__ import annotations

import ssl

import pulsar
import pytest

import cluster_helpers as ch
import pulsar_helpers as ph


def test_every_broker_registered(rig):
    want = sorted(ch.port_of(b.admin_url) for b in rig.brokers)
    for b in rig.brokers:
        assert sorted(ch.port_of(i) for i in ch.broker_ids(rig, via=b)) == want, f"as broker {b.n} sees it"
    leader = ch.admin(rig.admin_url, "GET", "/admin/v2/brokers/leaderBroker")
    assert leader["brokerId"] in ch.broker_ids(rig)


def test_partitions_spread_over_every_broker(rig, client):
    topic, owners = ch.spread_partitioned_topic(rig, partitions=6)
    assert set(owners) == set(rig.brokers)
    ns = topic.split("://", 1)[1].rsplit("/", 1)[0]
    for i, o in enumerate(owners):
        part = ph.partition_name(topic, i)
        # Every broker answers the same lookup, and the owner lists the bundle as its own.
        for b in rig.brokers:
            assert ch.owner(rig, part, via=b) == o, f"partition {i} looked up through broker {b.n}"
        assert f"{ns}/{ch.bundle_of(rig, part)}" in ch.owned_bundles(rig, o)

    payloads = [f"m{i}".encode() for i in range(60)]
    ph.produce_python(topic, payloads, client=client, batching_enabled=False,
                      message_routing_mode=pulsar.PartitionsRoutingMode.RoundRobinDistribution)
    got = ph.read_to_end(topic, partitions=6, client=client)
    assert sorted(m["data"] for m in got) == sorted(payloads)
    # Round robin without batching: every partition, so every broker, got messages.
    assert {m["message_id"][2] for m in got} == set(range(6))


def test_lookup_answers_each_listener(rig):
    # One topic per listener, asked through every broker: the broker may give a lookup the
    # answer of another lookup of the same bundle, made with another listener (ch.settle).
    for b in rig.brokers:
        topic = ch.topic_on(rig, b, "internal")
        for via in rig.brokers:
            internal = ch.lookup(rig, topic, via=via)
            assert (internal["brokerUrl"], internal["brokerUrlTls"]) == (b.url, b.tls_url)
        topic = ch.topic_on(rig, b, "external", listener="external")
        for via in rig.brokers:
            ext = ch.lookup(rig, topic, via=via, listener="external")
            assert (ext["brokerUrl"], ext["brokerUrlTls"]) == (b.external_url, b.external_tls_url)
    # A listener no broker has: a clear error, not some other listener's address (the
    # first lookup of a fresh namespace, so no other lookup's answer is shared).
    topic = ph.unique_topic("nolistener", namespace=ch.create_namespace(rig, 1, "nolistener"))
    with pytest.raises(ph.AdminError) as e:
        ch.lookup(rig, topic, listener="nosuchlistener")
    assert "do not have nosuchlistener listener" in e.value.body


def test_client_with_external_listener_connects_to_the_external_port(rig, client):
    # The topic lives on the last broker; the client's service URL is the first one's.
    b = rig.brokers[-1]
    topic = ch.topic_on(rig, b, "external", listener="external")
    before = ch.tcp_connections()
    ext_client = ph.make_client(rig.broker(1).url, listener_name="external")
    try:
        producer = ext_client.create_producer(topic)
        producer.send(b"through the external listener")
        opened = {remote for _, remote in ch.tcp_connections() - before}
        producer.close()
    finally:
        ext_client.close()
    assert b.external_port in opened, opened
    assert b.port not in opened or b == rig.broker(1), opened
    got = ph.read_messages(topic, 1, client=client)
    assert [m["data"] for m in got] == [b"through the external listener"]


def test_tls_listener_direct(rig):
    b = rig.broker(1)
    topic = ch.topic_on(rig, b, "tls")
    tls_client = ph.make_client(b.tls_url, tls_trust_certs_file_path=rig.ca, tls_validate_hostname=True)
    try:
        ph.produce_python(topic, [b"a", b"b"], client=tls_client)
        got = ph.read_messages(topic, 2, client=tls_client)
    finally:
        tls_client.close()
    assert [m["data"] for m in got] == [b"a", b"b"]


def test_sni_router_routes_on_the_broker_name(rig):
    others = {b.sni_host for b in rig.brokers}
    for b in rig.brokers:
        names = ch.sni_certificate_names(rig, b.sni_host)
        assert b.sni_host in names and not (others - {b.sni_host}) & names, (b.n, names)
    # A name the router does not know gets no broker at all.
    with pytest.raises((ssl.SSLError, ConnectionError)):
        ch.sni_certificate_names(rig, "unknown.pulsarc.test")
