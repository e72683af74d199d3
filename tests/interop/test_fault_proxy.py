"""Self-test of the fault-injection proxy (tests/proxy/faultproxy.py).

Part 1, against the real broker behind the proxy (scripts/broker-behind-proxy): the
official Python client produces and consumes through it, and each fault has the effect
the fault tests rely on. Part 2, the proxy alone in front of a local echo server:
exact byte counts, held data, bounded memory on 100 MB, many connections.

Run: scripts/broker-behind-proxy start; eval "$(scripts/broker-behind-proxy env)";
     python3 -m pytest -v tests/interop -m proxy
No timing upper bounds anywhere: what is asserted is either a lower bound a working
proxy cannot beat (throttle) or the proxy's own counters."""

from __future__ import annotations

import hashlib
import os
import socket
import threading
import time

import pulsar
import pytest

import pulsar_helpers as ph
from proxy_helpers import FaultProxy, fault_proxy, fault_proxy_session  # noqa: F401

pytestmark = pytest.mark.proxy

# The official Python client is the C++ client inside; it says so in CONNECT.
PY_CLIENT = "Pulsar-CPP"


def proxy_url(proxy: FaultProxy) -> str:
    binary = [lst for lst in proxy.stats()["listeners"] if lst["faults"]]
    assert len(binary) == 1, binary
    return f"pulsar://{binary[0]['listen']}"


@pytest.fixture
def client():
    """A client of the test's own: faults must not hit the session's shared one."""
    c = ph.make_client()
    yield c
    c.close()


def payloads_of(msgs) -> list[bytes]:
    return [m["data"] for m in msgs]


# ------------------------------------------------------------------------------------
# Part 1: the real broker behind the proxy
# ------------------------------------------------------------------------------------

def test_lookup_sends_the_client_through_the_proxy(fault_proxy, unique_topic, client):
    url = proxy_url(fault_proxy)
    assert ph.service_url() == url, "PULSAR_SERVICE_URL must be the proxy"
    topic = unique_topic()
    assert ph.lookup(topic)["brokerUrl"] == url

    payloads = [bytes([i]) * 10_000 for i in range(10)]
    ph.produce_python(topic, payloads, client=client, batching_enabled=False)
    got = ph.read_messages(topic, len(payloads), client=client, to_end=True)
    assert payloads_of(got) == payloads

    # Everything went through the proxy: 100 kB each way at least, on the client's own
    # connection (not the broker's internal one).
    mine = fault_proxy.conns(PY_CLIENT)
    assert len(mine) == 1, fault_proxy.stats()["conns"]
    assert mine[0]["bytes_c2s"] >= 100_000
    assert mine[0]["bytes_s2c"] >= 100_000


def test_cut_makes_the_producer_reconnect(fault_proxy, unique_topic, client):
    topic = unique_topic()
    producer = client.create_producer(topic, batching_enabled=False)
    producer.send(b"before")
    before = fault_proxy.conns(PY_CLIENT)
    assert len(before) == 1

    assert fault_proxy.cut() == 1
    after = [f"after-{i}".encode() for i in range(5)]
    for p in after:
        producer.send(p)   # waits for the reconnect; fails after the 30 s send timeout
    producer.close()

    st = fault_proxy.stats()
    assert st["cuts"] == 1
    assert st["accepted"] >= 2            # since the reset: the first connection and the reconnect
    now = fault_proxy.conns(PY_CLIENT)
    assert now and before[0]["id"] not in {c["id"] for c in now}, "a new connection"
    assert [c["id"] for c in st["recent_cuts"]] == [before[0]["id"]]
    got = ph.read_messages(topic, 6, client=client, to_end=True)
    assert payloads_of(got) == [b"before"] + after


def test_stall_times_a_send_out_and_resume_recovers(fault_proxy, unique_topic, client):
    topic = unique_topic()
    producer = client.create_producer(topic, batching_enabled=False, send_timeout_millis=2000)
    producer.send(b"before")

    with fault_proxy.stalled():
        c2s = fault_proxy.stats()["bytes_c2s"]
        with pytest.raises(pulsar.Timeout):
            producer.send(b"during-stall")
        st = fault_proxy.stats()
        assert st["faults"]["stalled"]
        assert st["bytes_c2s"] == c2s, "nothing forwarded while stalled"
        assert st["held"] >= len(b"during-stall"), "the send is held, not dropped"
        assert fault_proxy.conns(PY_CLIENT), "sockets stay open while stalled"

    after = [f"after-{i}".encode() for i in range(3)]
    for p in after:
        producer.send(p)
    producer.close()

    got = payloads_of(ph.read_messages(topic, 5, client=client, to_end=True))
    # The timed-out send was held by the proxy and delivered on resume: the broker
    # stored it even though the client had given up on it.
    assert got == [b"before", b"during-stall"] + after


def test_throttle_slows_a_1mb_send(fault_proxy, unique_topic, client):
    topic = unique_topic()
    producer = client.create_producer(topic, batching_enabled=False)
    producer.send(b"warm-up")
    payload = os.urandom(1 << 20)

    t0 = time.monotonic()
    producer.send(payload)
    unthrottled = time.monotonic() - t0

    rate = 256 * 1024
    with fault_proxy.throttled(rate):
        t0 = time.monotonic()
        producer.send(payload)
        throttled = time.monotonic() - t0
        st = fault_proxy.stats()
    producer.close()
    print(f"1 MiB send: {unthrottled:.3f} s unthrottled, {throttled:.3f} s at {rate} B/s")

    # 1 MiB at 256 KiB/s cannot take less than ~4 s through a working throttle; half
    # of that leaves room for the burst allowance, and a broken throttle takes ~0.1 s.
    assert throttled >= 2.0
    assert st["throttle_wait_s"] >= 2.0
    got = ph.read_messages(topic, 3, client=client)
    assert [len(m["data"]) for m in got] == [7, 1 << 20, 1 << 20]


def test_cut_after_lands_mid_frame_and_the_send_is_retried(fault_proxy, unique_topic, client):
    topic = unique_topic()
    producer = client.create_producer(topic, batching_enabled=False)
    producer.send(b"before")
    (conn,) = fault_proxy.conns(PY_CLIENT)

    fault_proxy.cut_after(1000)
    payload = os.urandom(100_000)
    producer.send(payload)  # the first attempt is cut 1000 bytes into its frame
    producer.close()

    st = fault_proxy.stats()
    assert st["cuts"] == 1
    (cut,) = st["recent_cuts"]
    assert cut["id"] == conn["id"] and cut["reason"] == "cut-after"
    assert cut["bytes_c2s"] == conn["bytes_c2s"] + 1000, "exactly 1000 more bytes passed"
    assert st["faults"]["cut_after"] is None, "one-shot"
    # The broker never saw the whole first frame: the retry is the only copy.
    got = ph.read_messages(topic, 2, client=client, to_end=True)
    assert payloads_of(got) == [b"before", payload]


def test_scheduled_cuts_keep_cutting_until_off(fault_proxy, unique_topic, client):
    topic = unique_topic()
    producer = client.create_producer(topic, batching_enabled=False)
    sent = []
    fault_proxy.schedule_cuts(0.3, 0.8)
    deadline = time.monotonic() + 60
    while fault_proxy.stats()["cuts"] < 3:
        assert time.monotonic() < deadline, "fewer than 3 scheduled cuts in 60 s"
        p = f"m{len(sent)}".encode()
        producer.send(p)
        sent.append(p)
        time.sleep(0.05)  # pacing the sends while waiting for the cuts (deadline above)
    fault_proxy.schedule_off()
    assert fault_proxy.stats()["faults"]["schedule"] is None
    cuts = fault_proxy.stats()["cuts"]
    producer.send(b"last")
    sent.append(b"last")
    producer.close()

    # Deliberately let time pass: a cut still scheduled (every 0.3-0.8 s) would come now.
    time.sleep(1.0)
    assert fault_proxy.stats()["cuts"] == cuts, "no cuts after schedule-off"
    # Every send succeeded, so every message is stored; a cut between the broker
    # storing a message and its receipt reaching the client may store it twice.
    got = payloads_of(ph.read_messages(topic, len(sent), client=client, to_end=True))
    assert set(got) == set(sent)


def test_http_forward_is_never_faulted(fault_proxy, unique_topic):
    """The broker's HTTP port (admin, lookups over HTTP) passes through untouched."""
    fault_proxy.stall()
    fault_proxy.throttle(1)
    fault_proxy.cut()
    http = [lst["listen"] for lst in fault_proxy.stats()["listeners"] if not lst["faults"]]
    assert len(http) == 1
    import urllib.request
    with urllib.request.urlopen(f"http://{http[0]}/admin/v2/clusters", timeout=10) as r:
        assert b"standalone" in r.read()


# ------------------------------------------------------------------------------------
# Part 2: the proxy alone, in front of a local echo server
# ------------------------------------------------------------------------------------

class EchoServer:
    """Threaded TCP echo server on 127.0.0.1; remembers how much each connection got."""

    def __init__(self):
        self.sock = socket.create_server(("127.0.0.1", 0), backlog=512)
        self.port = self.sock.getsockname()[1]
        self.received: list[int] = []
        self.lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._echo, args=(conn,), daemon=True).start()

    def _echo(self, conn):
        with self.lock:
            idx = len(self.received)
            self.received.append(0)
        with conn:
            try:
                while data := conn.recv(1 << 16):
                    with self.lock:
                        self.received[idx] += len(data)
                    conn.sendall(data)
            except OSError:
                pass

    def close(self):
        self.sock.close()


@pytest.fixture
def echo_proxy():
    srv = EchoServer()
    with FaultProxy.start([("127.0.0.1:0", f"127.0.0.1:{srv.port}")]) as p:
        yield p, p.listen_addresses[0]
    srv.close()


def recv_exactly(s: socket.socket, n: int) -> bytes:
    buf = bytearray()
    while len(buf) < n:
        chunk = s.recv(min(1 << 20, n - len(buf)))
        if not chunk:
            break
        buf += chunk
    return bytes(buf)


def peak_rss_kb(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return 0


def test_local_100mb_both_ways_with_bounded_memory(echo_proxy):
    proxy, addr = echo_proxy
    total = 100 * 1024 * 1024
    block = os.urandom(1 << 20)
    sent_hash, got_hash = hashlib.sha256(), hashlib.sha256()
    got = 0
    with socket.create_connection(addr) as s:
        def send_all():
            for _ in range(total // len(block)):
                s.sendall(block)
                sent_hash.update(block)
            s.shutdown(socket.SHUT_WR)   # half-close travels through the proxy
        t = threading.Thread(target=send_all)
        t.start()
        while chunk := s.recv(1 << 20):
            got += len(chunk)
            got_hash.update(chunk)
        t.join()
    assert got == total
    assert got_hash.hexdigest() == sent_hash.hexdigest()
    st = proxy.wait_stats(lambda st: st["open"] == 0, what="connection closed")
    assert st["bytes_c2s"] == total and st["bytes_s2c"] == total
    # Streaming, not buffering: the proxy's peak RSS stays far below the 100 MB it moved.
    assert peak_rss_kb(proxy.proc.pid) < 80 * 1024


def test_local_many_connections(echo_proxy):
    proxy, addr = echo_proxy
    n = 200
    socks = [socket.create_connection(addr) for _ in range(n)]
    try:
        msgs = [os.urandom(10_000) for _ in range(n)]
        for s, m in zip(socks, msgs):
            s.sendall(m)
        for s, m in zip(socks, msgs):
            assert recv_exactly(s, len(m)) == m
        st = proxy.stats()
        assert st["accepted"] == n and st["open"] == n
        assert proxy.cut() == n
        for s in socks:
            s.settimeout(10)
            try:
                assert s.recv(1) == b""
            except ConnectionResetError:
                pass
    finally:
        for s in socks:
            s.close()
    st = proxy.wait_stats(lambda st: st["open"] == 0, what="all connections gone")
    assert st["cuts"] == n and st["cut_events"] == 1


def test_local_cut_after_forwards_exactly_n_bytes(echo_proxy):
    proxy, addr = echo_proxy
    with socket.create_connection(addr) as s:
        s.sendall(b"x" * 500)
        assert recv_exactly(s, 500) == b"x" * 500
        proxy.cut_after(12_345)
        with pytest.raises((ConnectionResetError, BrokenPipeError, AssertionError)):
            s.sendall(os.urandom(200_000))
            got = recv_exactly(s, 200_000)
            assert len(got) == 200_000       # (a short read means the cut came first)
    st = proxy.wait_stats(lambda st: st["open"] == 0, what="connection cut")
    assert st["cuts"] == 1
    assert st["recent_cuts"][0]["bytes_c2s"] == 500 + 12_345
    assert st["bytes_c2s"] == 500 + 12_345


def test_local_stall_holds_data_and_resume_delivers_it(echo_proxy):
    proxy, addr = echo_proxy
    with socket.create_connection(addr) as s:
        s.sendall(b"ping")
        assert recv_exactly(s, 4) == b"ping"
        proxy.stall()
        s.sendall(b"held-bytes")
        st = proxy.wait_stats(lambda st: st["held"] == 10, what="10 bytes held")
        assert st["bytes_c2s"] == 4 and st["open"] == 1
        s.settimeout(0.5)
        with pytest.raises(socket.timeout):
            s.recv(100)
        proxy.resume()
        s.settimeout(10)
        assert recv_exactly(s, 10) == b"held-bytes"


def test_local_throttle_paces_both_directions(echo_proxy):
    proxy, addr = echo_proxy
    proxy.throttle(100_000)
    data = os.urandom(300_000)
    with socket.create_connection(addr) as s:
        t0 = time.monotonic()
        threading.Thread(target=s.sendall, args=(data,), daemon=True).start()
        assert recv_exactly(s, len(data)) == data
        elapsed = time.monotonic() - t0
    # 300 kB at 100 kB/s: >= ~2.9 s through a working throttle (each way in parallel).
    assert elapsed >= 2.0
    proxy.throttle(0)
    assert proxy.stats()["faults"]["throttle"] == 0


def test_local_down_refuses_new_connections_drops_open_ones_and_up_accepts(echo_proxy):
    proxy, addr = echo_proxy
    with socket.create_connection(addr) as s:
        s.sendall(b"ping")
        assert recv_exactly(s, 4) == b"ping"
        assert proxy.down() == 1
        s.settimeout(10)
        try:
            assert s.recv(1) == b"", "the open connection is dropped"
        except ConnectionResetError:
            pass
    # What a failover client's probe sees of a dead cluster: the connect itself fails.
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(addr, timeout=5).close()
    st = proxy.stats()
    assert st["faults"]["down"] and st["open"] == 0
    assert st["recent_cuts"][-1]["reason"] == "down"
    proxy.ping()  # the control port stays up

    proxy.up()
    assert not proxy.stats()["faults"]["down"]
    with socket.create_connection(addr, timeout=5) as s:  # the same port again
        s.sendall(b"again")
        assert recv_exactly(s, 5) == b"again"
    # reset brings a proxy that is down up too.
    proxy.down()
    proxy.reset()
    with socket.create_connection(addr, timeout=5) as s:
        s.sendall(b"after reset")
        assert recv_exactly(s, 11) == b"after reset"


def test_control_rejects_bad_commands(echo_proxy):
    proxy, _ = echo_proxy
    for bad in ("bogus", "throttle", "throttle -1", "cut-after", "schedule-cuts 2 1",
                "cut sideways", "throttle lots"):
        with pytest.raises(Exception, match="refused"):
            proxy.command(bad)
    proxy.ping()
