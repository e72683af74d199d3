"""kill-broker / start-broker of the cluster rig: the topics of a broker killed with -9
move to another broker, and the broker comes back. Runs last (file order): it takes
the longest and leaves the rig as it found it."""

from __future__ import annotations

import cluster_helpers as ch
import pulsar_helpers as ph


def test_killed_broker_topics_move_and_it_comes_back(rig):
    victim, asked = rig.brokers[-1], rig.brokers[0]
    topic = ch.topic_on(rig, victim, "kill")
    c = ph.make_client(rig.service_url)
    try:
        producer = c.create_producer(topic, batching_enabled=False)
        producer.send(b"before")
        ch.run_cluster_script("kill-broker", str(victim.n))
        try:
            # The bundle is free once the victim's metadata session expires
            # (metadataStoreSessionTimeoutMillis in conf/cluster/broker.conf); a lookup
            # then gives it to a live broker.
            new_owner = ph.wait_for(lambda: (o := ch.owner(rig, topic, via=asked)) != victim and o,
                                    timeout_s=60, what=f"{topic} to leave broker {victim.n}")
            registered = {ch.port_of(i) for i in ch.broker_ids(rig, via=asked)}
            assert ch.port_of(victim.admin_url) not in registered
            assert ch.port_of(new_owner.admin_url) in registered
            producer.send(b"after")  # the official client reconnects to the new owner
        finally:
            ch.run_cluster_script("start-broker", str(victim.n))
        assert len(ch.broker_ids(rig)) == len(rig.brokers)
        got = ph.read_messages(topic, 2, client=c)
        producer.close()
    finally:
        c.close()
    assert [m["data"] for m in got] == [b"before", b"after"]
