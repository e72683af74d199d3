"""Where pulsarc connects on a cluster: lookups redirected between brokers, one connection
per broker for a topic spread over both (or connectionsPerBroker of them), the brokers'
`external` listener (listenerName), and HTTP service URLs pointing at either broker. The
official Python client reads back; the connections are those of pulsarc's process, from
/proc, while the test producer holds them open (cluster_producer --hold)."""

from __future__ import annotations

import re

import pytest

import cluster_helpers as ch
import pulsar_helpers as ph


def leader_and_other(rig) -> tuple[ch.Broker, ch.Broker]:
    leader = ch.admin(rig.admin_url, "GET", "/admin/v2/brokers/leaderBroker")
    port = ch.port_of(leader["serviceUrl"])
    lead = rig.broker_by_port(port)
    return lead, next(b for b in rig.brokers if b != lead)


def produce_cli(url: str, topic: str, *args: str, check: bool = True):
    return ph.run_bin("pulsarc-produce", topic, "-u", url, *args, check=check, timeout_s=120)


def test_lookup_redirects_are_followed_up_to_the_limit(rig, client):
    # A bundle nobody owns, looked up through a broker that is not the leader: that broker
    # redirects to the leader, which assigns the bundle (and may redirect again, with the
    # authoritative flag, to the broker it chose).
    _, other = leader_and_other(rig)
    ns = ch.create_namespace(rig, 1, "redirect")
    topic = ph.unique_topic("redirect", namespace=ns)
    # A lookup that ends on the redirect limit is tried again until operationTimeoutMs,
    # like any failed lookup (Java retries a LookupException too): 3 s, not the 30 s default.
    refused = produce_cli(other.url, topic, "-m", "no", "--client-conf", "maxLookupRedirects=0",
                          "--client-conf", "operationTimeoutMs=3000", check=False)
    assert refused.returncode == 1, refused.stderr
    assert b"[TOO_MANY_REDIRECTS]" in refused.stderr, refused.stderr
    ok = produce_cli(other.url, topic, "-m", "redirected", "--verbose")
    hops = re.findall(rb"lookup of \S+ via (\S+): (redirect|connect) to (\S+)", ok.stderr)
    assert hops and hops[0][1] == b"redirect", ok.stderr
    assert hops[-1][1] == b"connect", ok.stderr
    assert [m["data"] for m in ph.read_to_end(topic, client=client)] == [b"redirected"]


def assert_every_message_once(got: list[dict], count: int, partitions: int) -> None:
    """Each of cluster_producer's messages 0..count-1 read exactly once, and each
    partition's messages in the order they were sent."""
    indexes = [ch.index_of(m["data"]) for m in got]
    assert sorted(indexes) == list(range(count)), \
        f"{len(indexes)} read, {len(set(indexes))} distinct, of {count}"
    for p in range(partitions):
        mine = [ch.index_of(m["data"]) for m in got if m["message_id"][2] == p]
        assert mine == sorted(mine), f"partition {p} out of order"


def test_keyed_sends_spread_over_both_brokers_one_connection_each(rig, client):
    topic, owners = ch.spread_partitioned_topic(rig, partitions=6)
    # The service URL names the first broker only: the second is reached through the
    # lookup answers.
    run, counts, conns = ch.held_run(rig.broker(1).url, topic, 600, "--keys", "13")
    assert counts == ch.all_acked(600), run.lines
    ports = ch.by_remote_port(conns)
    assert ports == {b.port: 1 for b in rig.brokers}, f"connections by remote port: {ports}"
    got = ph.read_to_end(topic, partitions=6, client=client)
    assert_every_message_once(got, 600, 6)
    for m in got:
        assert m["message_id"][2] == ph.java_partition(m["partition_key"], 6), m
    assert {owners[m["message_id"][2]] for m in got} == set(rig.brokers), "every broker got messages"


def test_connections_per_broker(rig, client):
    topic, owners = ch.spread_partitioned_topic(rig, partitions=6)
    run, counts, conns = ch.held_run(rig.broker(1).url, topic, 60, "--keys", "13",
                                     "--client-conf", "connectionsPerBroker=2")
    assert counts == ch.all_acked(60), run.lines
    ports = ch.by_remote_port(conns)
    # Two connections to each broker with at least two producers on it; one producer
    # gets one (the first broker's lookups use one of its connections).
    want = {b.port: min(2, owners.count(b)) for b in rig.brokers}
    assert ports == want, f"connections by remote port: {ports}, partitions per broker: " \
                          f"{[owners.count(b) for b in rig.brokers]}"
    assert_every_message_once(ph.read_to_end(topic, partitions=6, client=client), 60, 6)


def test_listener_name_connects_to_the_external_listener(rig, client):
    # One topic per listener and lookup path (the broker shares lookups: ch.settle).
    b = rig.brokers[-1]
    for via in (rig.broker(1).url, rig.broker(1).admin_url):
        topic = ch.topic_on(rig, b, "listener", listener="external")
        run, counts, conns = ch.held_run(via, topic, 10, "--client-conf", "listenerName=external")
        assert counts == ch.all_acked(10), run.lines
        ports = ch.by_remote_port(conns)
        assert ports[b.external_port] == 1, f"via {via}: {ports}"
        assert b.port not in ports or b == rig.broker(1), f"via {via}: {ports}"
        assert len(ph.read_to_end(topic, client=client)) == 10


def test_cli_listener_name(rig, client):
    topic = ch.topic_on(rig, rig.brokers[-1], "cli-listener", listener="external")
    produce_cli(rig.broker(1).url, topic, "-m", "external", "--listener-name", "external")
    assert [m["data"] for m in ph.read_to_end(topic, client=client)] == [b"external"]


@pytest.mark.parametrize("via", ["binary", "http"])
def test_unknown_listener_fails_at_once_with_a_clear_error(rig, via):
    # The broker answers as if it were not ready; pulsarc reports a configuration error
    # instead of retrying until operationTimeoutMs.
    ns = ch.create_namespace(rig, 1, "nolistener")
    topic = ph.unique_topic("nolistener", namespace=ns)
    url = rig.broker(1).url if via == "binary" else rig.broker(1).admin_url
    proc = produce_cli(url, topic, "-m", "x", "--listener-name", "nosuch", check=False)
    assert proc.returncode == 2, proc.stderr
    assert b"[INVALID_CONFIG]" in proc.stderr, proc.stderr
    assert b'no advertised listener named "nosuch"' in proc.stderr, proc.stderr


@pytest.mark.parametrize("n", [1, 2])
def test_http_service_url_at_either_broker(rig, client, n):
    topic, owners = ch.spread_partitioned_topic(rig, partitions=6)
    run, counts, conns = ch.held_run(rig.broker(n).admin_url, topic, 60, "--keys", "13")
    assert counts == ch.all_acked(60), run.lines
    ports = ch.by_remote_port(conns)
    # Lookups over HTTP; the producers on the brokers' binary ports, one connection each.
    assert {p: k for p, k in ports.items() if p != ch.port_of(rig.broker(n).admin_url)} == \
        {b.port: 1 for b in rig.brokers}, ports
    got = ph.read_to_end(topic, partitions=6, client=client)
    assert_every_message_once(got, 60, 6)
    assert {owners[m["message_id"][2]] for m in got} == set(rig.brokers)
