"""Interceptors and statistics against the real broker, read back by the official Python
client: a property an interceptor adds is stored with every message, on_ack sees every
accepted message once, and the statistics count what the broker stored, what failed
(by result) and what was refused, failures made on purpose included."""

import json
import re
import subprocess

import pulsar_helpers as ph


def parse_summary(out: str) -> dict:
    m = re.search(r"^accepted=.*$", out, re.M)
    assert m, out
    return {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", m[0])}


def read_all(topic: str, at_least: int) -> list[dict]:
    # Everything the topic holds: at_least messages, and a moment more for any surplus.
    return ph.read_messages(topic, at_least, timeout_s=60, to_end=True)


def test_interceptor_property_is_stored_and_on_ack_runs_once(service_url, unique_topic,
                                                             tmp_path):
    topic = unique_topic()
    stats_file = tmp_path / "stats.json"
    proc = ph.run_bin("interop_stats", service_url, topic, "300", "--stats", str(stats_file),
                      timeout_s=120)
    s = parse_summary(proc.stdout.decode())
    assert s["accepted"] == 300 and s["acked"] == 300 and s["failed"] == 0, s
    assert s["ack_calls"] == 300 and s["ack_dups"] == 0 and s["ack_missing"] == 0, s
    assert s["ack_mismatch"] == 0, s
    received = read_all(topic, 300)
    assert len(received) == 300
    for m in received:
        assert m["properties"]["intercepted"] == "pulsarc-" + m["properties"]["index"], m
    stats = json.loads(stats_file.read_text())
    assert stats["totals"]["messages"]["acked"] == 300
    assert stats["totals"]["bytes"]["acked"] == sum(len(m["data"]) for m in received)
    assert stats["totals"]["latency_us"]["count"] == 300


def test_statistics_match_the_broker_failures_and_refusals_included(service_url, unique_topic,
                                                                    tmp_path):
    # 400 messages: every 50th is a 6 MiB incompressible payload the broker's limit refuses
    # (accepted, then MESSAGE_TOO_BIG); after 250 the topic is terminated, so the rest fail
    # with TOPIC_TERMINATED or are refused with it once the producer knows.
    topic = unique_topic()
    ph.create_topic(topic)
    stats_file = tmp_path / "stats.json"
    proc = subprocess.Popen(
        [ph.bin_path("interop_stats"), service_url, topic, "400", "--stats", str(stats_file),
         "--too-big-every", "50", "--pause-after", "250"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        line = proc.stdout.readline()
        assert line.strip() == b"PAUSED", line + proc.stderr.read()
        ph.admin_request("POST", "/admin/v2/" + ph.topic_rest_path(topic) + "/terminate")
        proc.stdin.write(b"go\n")
        proc.stdin.flush()
        out, err = proc.communicate(timeout=180)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err.decode()[-3000:]
    s = parse_summary(out.decode())
    # What the callbacks said, and on_ack once for each accepted message.
    assert s["accepted"] + s["refused"] == 400, s
    assert s["accepted"] == s["acked"] + s["failed"], s
    assert s["ack_calls"] == s["accepted"] and s["ack_dups"] == 0, s
    assert s["ack_missing"] == 0 and s["ack_mismatch"] == 0, s
    assert s["too_big"] >= 5, s            # 49, 99, 149, 199, 249 before the pause
    assert s["terminated"] + s["refused_terminated"] >= 1, s
    assert s["acked"] == 250 - 5, s        # nothing after the termination is stored

    received = read_all(topic, s["acked"])
    stats = json.loads(stats_file.read_text())
    t = stats["totals"]
    # The statistics agree with what the official client reads back...
    assert t["messages"]["acked"] == len(received) == s["acked"]
    assert t["bytes"]["acked"] == sum(len(m["data"]) for m in received) == s["acked_bytes"]
    assert sorted(int(m["properties"]["index"]) for m in received) == \
        [i for i in range(250) if i % 50 != 49]
    # ... and with the callbacks, failures and refusals by result.
    assert t["messages"]["accepted"] == s["accepted"]
    assert t["messages"]["failed"] == s["failed"]
    assert t["messages"]["refused"] == s["refused"]
    assert t["messages"]["pending"] == 0
    failed = t["failed_by_result"]
    assert failed.get("MESSAGE_TOO_BIG", 0) == s["too_big"], failed
    assert failed.get("BROKER_TOPIC_TERMINATED", 0) == s["terminated"], failed
    assert sum(failed.values()) == s["failed"], failed
    assert t["refused_by_result"].get("BROKER_TOPIC_TERMINATED", 0) == s["refused_terminated"]
    assert t["latency_us"]["count"] == s["acked"]
    assert t["batches"]["count"] >= 1
    assert stats["producer_count"] == 1 and len(stats["producers"]) == 1
    producer = stats["producers"][0]
    assert producer["topic"] == topic
    assert producer["messages"]["acked"] == s["acked"]
    assert sum(p["messages"]["acked"] for p in producer["partition_stats"]) == s["acked"]
