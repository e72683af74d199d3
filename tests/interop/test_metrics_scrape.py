"""The client's statistics as Prometheus text (pulsarc_client_metrics_text), scraped over
HTTP from the /metrics endpoint (pulsarc_uv_metrics_serve) while messages go to the real
broker, and parsed with the Prometheus client library's own text parser.

- pulsarc-produce --metrics-listen 127.0.0.1:0 (the tool's thread with its own loop);
  per topic, and per partition with metricsPerPartition=true;
- examples/uv_metrics_producer (the endpoint on the application's own loop), and the
  endpoint's answers to what is not a scrape: another path, another method, garbage, an
  oversized head, a client that sends half a request and waits."""

from __future__ import annotations

import contextlib
import re
import signal
import socket
import subprocess
import time
import urllib.request

import pulsar_helpers as ph
from prometheus_client.parser import text_string_to_metric_families

DURATION = "pulsar_client_producer_message_send_duration_seconds"
SIZE = "pulsar_client_producer_message_send_size_bytes"
ACKED = "pulsarc_producer_message_acked"


def scrape(port: int) -> tuple[dict, str]:
    """{family name: family} of one scrape, and the text."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as r:
        assert r.status == 200
        assert r.headers["Content-Type"].startswith("text/plain; version=0.0.4")
        text = r.read().decode()
    return {f.name: f for f in text_string_to_metric_families(text)}, text


def samples(families: dict, family: str, name: str, **labels) -> list:
    return [s for s in families[family].samples
            if s.name == name and all(s.labels.get(k) == v for k, v in labels.items())]


def wait_for_count(port: int, topic: str, n: int, timeout_s: float = 60) -> tuple[dict, str]:
    """Scrape until the send-duration histogram of topic counts n messages."""
    deadline = time.monotonic() + timeout_s
    while True:
        fam, text = scrape(port)
        counts = samples(fam, DURATION, DURATION + "_count", pulsar_topic=topic)
        if counts and counts[0].value == n:
            return fam, text
        assert time.monotonic() < deadline, f"count never reached {n}:\n{text}"
        time.sleep(0.2)


def port_from(line_source, pattern: str, timeout_s: float = 30) -> int:
    deadline = time.monotonic() + timeout_s
    seen = []
    while time.monotonic() < deadline:
        line = line_source.readline()
        if not line:
            break
        seen.append(line)
        m = re.search(pattern, line)
        if m:
            return int(m.group(1))
    raise AssertionError("no address printed: " + "".join(seen))


def check_histogram(fam: dict, topic: str, n: int) -> None:
    f = fam[DURATION]
    assert f.type == "histogram"
    buckets = samples(fam, DURATION, DURATION + "_bucket", pulsar_topic=topic,
                      pulsar_tenant="public", pulsar_namespace="public/default",
                      pulsar_response_status="success")
    les = [s.labels["le"] for s in buckets]
    assert les == ["0.0005", "0.001", "0.0025", "0.005", "0.01", "0.025", "0.05", "0.1",
                   "0.25", "0.5", "1", "2.5", "5", "10", "30", "60", "+Inf"]
    values = [s.value for s in buckets]
    assert values == sorted(values), "buckets are cumulative"
    assert values[-1] == n
    total = samples(fam, DURATION, DURATION + "_sum", pulsar_topic=topic)[0].value
    assert 0 < total < 60 * n


@contextlib.contextmanager
def serving(cmd: list[str], banner, stdin: bool = False):
    """Runs cmd, which prints where it serves on banner (proc.stdout or proc.stderr of the
    process); yields (proc, port). The process is killed if the test leaves it running."""
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE if stdin else None,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        yield proc, port_from(banner(proc), r"serving metrics on http://127\.0\.0\.1:(\d+)/metrics")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def produce(service_url: str, topic: str, lines: list[str], *flags: str) -> tuple[dict, str, str]:
    """pulsarc-produce --stdin --metrics-listen with lines on its stdin: the scrape once
    every line is acknowledged (its family dict and text), and the tool's stdout once
    stdin is closed (it must exit 0)."""
    cmd = [ph.bin_path("pulsarc-produce"), "-u", service_url, topic, "--stdin",
           "--metrics-listen", "127.0.0.1:0", *flags]
    with serving(cmd, lambda p: p.stderr, stdin=True) as (proc, port):
        proc.stdin.write("".join(line + "\n" for line in lines))
        proc.stdin.flush()
        fam, text = wait_for_count(port, topic, len(lines))
        out, err = proc.communicate(timeout=60)  # closes stdin: the run ends
    assert proc.returncode == 0, err
    return fam, text, out


def test_produce_metrics_listen_per_topic(service_url, unique_topic):
    topic = unique_topic()
    lines = [f"message {i}" for i in range(40)]
    fam, text, out = produce(service_url, topic, lines)
    check_histogram(fam, topic, len(lines))
    assert samples(fam, ACKED, ACKED + "_total", pulsar_topic=topic)[0].value == len(lines)
    assert fam[SIZE].type == "counter"
    size = samples(fam, SIZE, SIZE + "_total", pulsar_topic=topic)
    assert size[0].value == sum(len(line) for line in lines)
    assert "pulsar_partition" not in text
    assert fam["pulsar_client_producer_message_pending_count"].type == "gauge"
    assert f"sent={len(lines)} failed=0" in out


def test_produce_metrics_per_partition(service_url, unique_topic):
    topic = unique_topic("metrics-parts")  # a name with "-partition" is refused
    ph.create_partitioned_topic(topic, 3)
    n = 60
    fam, text, _ = produce(service_url, topic, [f"m{i}" for i in range(n)],
                           "--client-conf", "metricsPerPartition=true",
                           "--conf", "messageRoutingMode=round_robin",
                           "--conf", "batchingEnabled=false")
    check_histogram(fam, topic, n)
    per = {s.labels["pulsar_partition"]: s.value
           for s in samples(fam, ACKED, ACKED + "_total", pulsar_topic=topic)}
    assert sorted(per) == ["0", "1", "2"], text
    assert sum(per.values()) == n and all(v > 0 for v in per.values()), per


def raw(port: int, data: bytes) -> bytes:
    """What the endpoint answers data with, up to its close."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(data)
        chunks = []
        while True:
            c = s.recv(65536)
            if not c:
                return b"".join(chunks)
            chunks.append(c)


def test_example_serves_from_its_own_loop(service_url, unique_topic):
    topic = unique_topic()
    n = 50
    cmd = [ph.bin_path("uv_metrics_producer"), service_url, topic, "127.0.0.1:0", str(n)]
    with serving(cmd, lambda p: p.stdout) as (proc, port):
        # half a request that never ends must not hold up a scrape
        slow = socket.create_connection(("127.0.0.1", port), timeout=10)
        slow.sendall(b"GET /metr")
        fam, text = wait_for_count(port, topic, n)
        check_histogram(fam, topic, n)
        assert samples(fam, ACKED, ACKED + "_total", pulsar_topic=topic)[0].value == n
        assert raw(port, b"GET /other HTTP/1.1\r\n\r\n").startswith(b"HTTP/1.1 404 ")
        assert raw(port, b"POST /metrics HTTP/1.1\r\n\r\n").startswith(b"HTTP/1.1 405 ")
        assert raw(port, b"\x16\x03\x01\x00\xff garbage\r\n\r\n").startswith(b"HTTP/1.1 400 ")
        assert raw(port, b"GET /metrics HTTP/1.1\r\nX: " + b"a" * 9000).startswith(
            b"HTTP/1.1 400 ")
        slow.close()
        assert scrape(port)[0][DURATION]  # still serving
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert f"published={n} failed=0 loop_close=0" in out
