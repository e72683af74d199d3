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
