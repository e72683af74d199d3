"""The Pulsar proxy of the cluster rig (bin/pulsar proxy): the official client and
pulsarc's CLI produce through its one address to partitions owned by every broker."""

from __future__ import annotations

import re

import pulsar

import cluster_helpers as ch
import pulsar_helpers as ph


def test_python_client_round_trip_through_the_proxy(rig):
    topic, owners = ch.spread_partitioned_topic(rig, partitions=6)
    payloads = [f"p{i}".encode() for i in range(60)]
    before = ch.tcp_connections()
    proxied = ph.make_client(rig.proxy_url)
    try:
        ph.produce_python(topic, payloads, client=proxied, batching_enabled=False,
                          message_routing_mode=pulsar.PartitionsRoutingMode.RoundRobinDistribution)
        got = ph.read_to_end(topic, partitions=6, client=proxied)
        opened = {remote for _, remote in ch.tcp_connections() - before}
    finally:
        proxied.close()
    assert sorted(m["data"] for m in got) == sorted(payloads)
    assert {owners[m["message_id"][2]] for m in got} == set(rig.brokers)
    assert opened == {ch.port_of(rig.proxy_url)}, f"the client reached more than the proxy: {opened}"


def test_cli_produces_through_the_proxy(rig, client):
    # (run_bin fails, never skips, when pulsarc-produce was not built)
    topic, owners = ch.spread_partitioned_topic(rig, partitions=6)
    lines = [f"line-{i}" for i in range(60)]
    proc = ph.run_bin("pulsarc-produce", topic, "-u", rig.proxy_url, "--stdin", "--no-batching",
                      input="".join(f"{line}\n" for line in lines).encode())
    m = re.search(rb"sent=(\d+) failed=(\d+)", proc.stdout)
    assert m and (int(m[1]), int(m[2])) == (60, 0), proc.stdout
    got = ph.read_to_end(topic, partitions=6, client=client)
    assert sorted(m["data"] for m in got) == sorted(line.encode() for line in lines)
    assert {owners[m["message_id"][2]] for m in got} == set(rig.brokers), "every broker got messages"


def held_ports(url: str, topic: str, count: int) -> dict:
    """Connections by remote port of a run of count keyed messages, while it held them
    (each message acknowledged once)."""
    run, counts, conns = ch.held_run(url, topic, count, "--keys", "13")
    assert counts == ch.all_acked(count), run.lines
    return ch.by_remote_port(conns)


def assert_spread_read_back(rig, client, topic: str, owners: list, count: int) -> None:
    got = ph.read_to_end(topic, partitions=6, client=client)
    assert sorted(ch.index_of(m["data"]) for m in got) == list(range(count))
    assert {owners[m["message_id"][2]] for m in got} == set(rig.brokers), "every broker got messages"


def test_pulsarc_through_the_proxy_reaches_only_the_proxy(rig, client):
    # The proxy answers every lookup with Connect + proxy_through_service_url; pulsarc
    # then connects to the proxy once per broker, naming the broker in CONNECT
    # (proxy_to_broker_url): the proxy refuses a target it does not allow, so messages on
    # both brokers' partitions prove each connection named its broker.
    topic, owners = ch.spread_partitioned_topic(rig, partitions=6)
    ports = held_ports(rig.proxy_url, topic, 600)
    # One for the lookups (the proxy itself answers them), one piped to each broker.
    assert ports == {ch.port_of(rig.proxy_url): 1 + len(rig.brokers)}, \
        f"one lookup connection and one per broker, all to the proxy: {ports}"
    assert_spread_read_back(rig, client, topic, owners, 600)


def test_pulsarc_with_the_proxy_http_service_url(rig, client):
    # The proxy's web port forwards lookups to the brokers; their answers name the
    # brokers themselves (as for the Java client's HttpLookupService), so the producers
    # connect to the brokers directly: only the lookups go through the proxy.
    topic, owners = ch.spread_partitioned_topic(rig, partitions=6)
    ports = held_ports(rig.proxy_http_url, topic, 600)
    assert {p: n for p, n in ports.items() if p != ch.port_of(rig.proxy_http_url)} == \
        {b.port: 1 for b in rig.brokers}, ports
    assert_spread_read_back(rig, client, topic, owners, 600)


def test_pulsarc_through_the_sni_router(rig, client):
    # A client outside: its service URL is broker 1's external TLS address, whose name
    # (broker1.pulsarc.test) resolves nowhere, and lookups ask for the `external`
    # listener, whose TLS addresses are those names too. Every connection opens TCP to
    # HAProxy and names its broker as SNI; HAProxy passes it to that broker's TLS port.
    topic, owners = ch.spread_partitioned_topic(rig, partitions=6, listener="external")
    sni_port = ch.port_of(rig.sni_proxy_url)
    run, counts, conns = ch.held_run(rig.broker(1).external_tls_url, topic, 600, "--keys", "13",
                                     "--client-conf", "listenerName=external",
                                     "--client-conf", f"proxyServiceUrl={rig.sni_proxy_url}",
                                     "--client-conf", "proxyProtocol=SNI",
                                     "--client-conf", f"tlsTrustCertsFilePath={rig.ca}")
    assert counts == ch.all_acked(600), run.lines
    ports = ch.by_remote_port(conns)
    assert ports == {sni_port: len(rig.brokers)}, f"one connection per broker, all to the router: {ports}"
    # HAProxy saw those connections' SNI names and sent each to a different broker.
    backends = ch.sni_router_backends(rig, {local for local, _ in conns})
    assert sorted(backends.values()) == sorted(f"broker{b.n}" for b in rig.brokers), backends
    assert_spread_read_back(rig, client, topic, owners, 600)
