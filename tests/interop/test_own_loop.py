"""pulsarc on the program's own libuv loop (pulsarc_client_new_on_loop) against the real
broker, read back by the official Python client.

- interop_own_loop sends from the loop's thread (where a full queue is refused at once)
  and from another thread (which waits for room and flushes) at once; scripts/test runs it
  against the ThreadSanitizer build too.
- examples/uv_echo_producer, the example a user copies from: a TCP echo server and a timer
  on one loop, publishing each line it echoes; SIGTERM closes everything and the loop must
  close with nothing left on it."""

from __future__ import annotations

import re
import signal
import socket
import subprocess
import threading

import pulsar_helpers as ph

HANG_GUARD_S = 300


def test_own_loop_sends_from_the_loop_and_a_thread_read_back(service_url, unique_topic):
    topic = unique_topic()
    loop_count, thread_count = 3000, 3000
    proc = ph.run_bin("interop_own_loop", service_url, topic, str(loop_count),
                      str(thread_count), timeout_s=HANG_GUARD_S)
    out = proc.stdout.decode()
    m = re.search(r"loop_sent=(\d+) thread_sent=(\d+) failed=(\d+) queue_full=(\d+) "
                  r"would_block=(\d+) off_thread=(\d+) loop_close=(-?\d+)", out)
    assert m, out + proc.stderr.decode()[-3000:]
    loop_sent, thread_sent, failed, queue_full, would_block, off_thread, loop_close = map(int, m.groups())
    assert (loop_sent, thread_sent, failed) == (loop_count, thread_count, 0)
    assert queue_full > 0, "a send on the loop waited for room instead of being refused"
    assert would_block == 5 and off_thread == 0 and loop_close == 0, out

    received = ph.read_messages(topic, loop_count + thread_count, timeout_s=120,
                                to_end=True)
    texts = [r["data"].decode() for r in received]
    assert len(texts) == loop_count + thread_count
    # Each sender's messages arrive once each, in the order it sent them.
    assert [t for t in texts if t.startswith("loop-")] == [f"loop-{i}" for i in range(loop_count)]
    assert [t for t in texts if t.startswith("thread-")] == \
        [f"thread-{i}" for i in range(thread_count)]


def _read_line(stream, guard_s: float) -> str:
    """One line of the program's stdout, or "" when it does not come (a hang guard)."""
    box: list[str] = []
    t = threading.Thread(target=lambda: box.append(stream.readline()), daemon=True)
    t.start()
    t.join(guard_s)
    return box[0] if box else ""


def test_own_loop_echo_example_publishes_what_it_echoes(service_url, unique_topic, bin_path):
    topic = unique_topic()
    proc = subprocess.Popen([bin_path("uv_echo_producer"), service_url, topic, "0"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        first = _read_line(proc.stdout, 60)
        m = re.match(r"listening on 127\.0\.0\.1:(\d+)", first)
        assert m, f"no listening line: {first!r}"
        lines = [f"line {i} of the echo test" for i in range(200)]
        sent = ("\n".join(lines) + "\n").encode()
        echoed = b""
        with socket.create_connection(("127.0.0.1", int(m[1])), timeout=30) as s:
            s.sendall(sent)
            while len(echoed) < len(sent):
                chunk = s.recv(65536)
                if not chunk:
                    break
                echoed += chunk
        assert echoed == sent, "the echo differs from what was sent"
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=HANG_GUARD_S)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, f"exit {proc.returncode}\n--- stdout ---\n{out}\n--- stderr ---\n{err}"
    m = re.search(r"published=(\d+) failed=(\d+) refused=(\d+) held=(\d+) ticks=(\d+) "
                  r"connections=(\d+) loop_close=(-?\d+)", out)
    assert m, out + err
    published, failed, refused, held, ticks, connections, loop_close = map(int, m.groups())
    assert (failed, refused, held, connections, loop_close) == (0, 0, 0, 1, 0), out
    assert published == len(lines) + ticks, out

    received = [r["data"].decode() for r in ph.read_messages(topic, published, timeout_s=120,
                                                              to_end=True)]
    assert [t for t in received if not t.startswith("tick ")] == lines
    assert [t for t in received if t.startswith("tick ")] == [f"tick {i}" for i in range(ticks)]
