"""Pytest-facing helpers for the fault-injection proxy (tests/proxy/faultproxy.py).

Two ways to get a FaultProxy:

  * FaultProxy.connect()  the proxy that scripts/broker-behind-proxy started in front of
                          the real broker (control address from $PULSARC_PROXY_CONTROL);
                          the `fault_proxy` fixture does this and resets it around each test.
  * FaultProxy.start(...) a private proxy process, e.g. in front of a test server:

        with FaultProxy.start([("127.0.0.1:0", "127.0.0.1:9000")]) as p:
            port = p.listen_addresses[0][1]
            ...

Fault tests against the broker are marked @pytest.mark.proxy and run with
`pytest tests/interop -m proxy` while scripts/broker-behind-proxy runs (scripts/test
does both). To use the fixtures in a test module, import them:

    from proxy_helpers import fault_proxy, fault_proxy_session  # noqa: F401

Environment:
  PULSARC_PROXY_CONTROL   control address of the running proxy [127.0.0.1:7777]
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Callable, Iterable

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
PROXY_SCRIPT = REPO_ROOT / "tests" / "proxy" / "faultproxy.py"


class ProxyError(RuntimeError):
    pass


def control_address() -> str:
    return os.environ.get("PULSARC_PROXY_CONTROL", "127.0.0.1:7777")


def _split(addr: str) -> tuple[str, int]:
    host, _, port = addr.rpartition(":")
    return host.strip("[]"), int(port)


class FaultProxy:
    """A handle on one proxy: commands, stats, and (for started ones) the process."""

    def __init__(self, control: str, proc: subprocess.Popen | None = None,
                 ready: dict | None = None):
        self.control = control
        self.proc = proc
        self.ready = ready or {}

    # -- life cycle ----------------------------------------------------------------------
    @classmethod
    def connect(cls, control: str | None = None) -> "FaultProxy":
        """The already running proxy; raises ProxyError when it does not answer."""
        p = cls(control or control_address())
        p.ping()
        return p

    @classmethod
    def start(cls, routes: Iterable[tuple], control: str = "127.0.0.1:0",
              filter: str | None = None, timeout_s: float = 10,
              log_path: str | os.PathLike | None = None) -> "FaultProxy":
        """Run a private proxy. routes: (listen, target) or (listen, target, faults)
        address strings; port 0 picks a free port (see listen_addresses). The proxy's
        log goes to log_path (default: this process's stderr)."""
        args = [sys.executable, str(PROXY_SCRIPT)]
        for r in routes:
            listen, target = r[0], r[1]
            args += ["--listen", listen, "--target", target]
            if len(r) > 2 and not r[2]:
                args.append("--no-faults")
        args += ["--control", control]
        if filter:
            args += ["--filter", filter]
        stderr = open(log_path, "ab") if log_path else None
        try:
            proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=stderr,
                                    stdin=subprocess.DEVNULL)
        finally:
            if stderr:
                stderr.close()
        # The proxy prints one "READY {json}" line once everything listens (and nothing
        # else on stdout). Read it on a thread so a hung start cannot block the test.
        got: list[bytes] = []
        reader = threading.Thread(target=lambda: got.append(proc.stdout.readline()), daemon=True)
        reader.start()
        reader.join(timeout_s)
        line = got[0] if got else b""
        if not line.startswith(b"READY "):
            proc.kill()
            proc.wait()
            raise ProxyError(f"proxy did not start (exit {proc.returncode}): {' '.join(args)}")
        ready = json.loads(line[6:])
        return cls(ready["control"], proc, ready)

    def stop(self, timeout_s: float = 10) -> None:
        """Stop a proxy started by start(); a no-op for connect()ed ones."""
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.terminate()
        try:
            self.proc.wait(timeout_s)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        if self.proc.stdout:
            self.proc.stdout.close()

    def __enter__(self) -> "FaultProxy":
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    @property
    def listen_addresses(self) -> list[tuple[str, int]]:
        """(host, port) of each listener, in the order given (from stats when connected)."""
        entries = self.ready.get("listeners") or self.stats()["listeners"]
        return [_split(e["listen"]) for e in entries]

    # -- commands ------------------------------------------------------------------------
    def command(self, *words: Any, timeout_s: float = 10) -> dict:
        """Send one command; returns the JSON reply, raises ProxyError unless ok."""
        line = " ".join(str(w) for w in words)
        try:
            with socket.create_connection(_split(self.control), timeout=timeout_s) as s:
                s.sendall(line.encode() + b"\n")
                buf = b""
                while not buf.endswith(b"\n"):
                    chunk = s.recv(1 << 16)
                    if not chunk:
                        break
                    buf += chunk
        except OSError as e:
            raise ProxyError(f"proxy control {self.control} unreachable: {e}") from None
        if not buf:
            raise ProxyError(f"proxy control {self.control}: no answer to {line!r}")
        reply = json.loads(buf)
        if not reply.get("ok"):
            raise ProxyError(f"proxy refused {line!r}: {reply.get('error')}")
        return reply

    def ping(self) -> None:
        self.command("ping")

    def cut(self, mode: str = "rst") -> int:
        """Cut every (matching) connection now; returns how many were cut."""
        return self.command("cut", mode)["cut"]

    def cut_after(self, nbytes: int, mode: str = "rst") -> None:
        """One-shot: cut the connection on which nbytes more client->broker bytes pass."""
        self.command("cut-after", nbytes, mode)

    def cancel_cut_after(self) -> None:
        self.command("cut-after", "off")

    def stall(self) -> None:
        self.command("stall")

    def resume(self) -> None:
        self.command("resume")

    def throttle(self, bytes_per_s: int) -> None:
        """Limit each direction of each connection; 0 turns it off."""
        self.command("throttle", int(bytes_per_s))

    def schedule_cuts(self, min_s: float, max_s: float, mode: str = "rst") -> None:
        self.command("schedule-cuts", min_s, max_s, mode)

    def schedule_off(self) -> None:
        self.command("schedule-off")

    def down(self) -> int:
        """The target as a dead host: the faulted listeners stop listening (connecting is
        refused) and their matching connections are cut; returns how many were cut."""
        return self.command("down")["cut"]

    def up(self) -> None:
        """Listen again on the same addresses after down()."""
        self.command("up")

    def set_filter(self, text: str | None) -> None:
        """Faults hit only connections whose client version contains text ('!text':
        does not contain it); None = every connection."""
        self.command("filter", text if text else "off")

    def reset(self) -> None:
        """All faults off, filter back to the proxy's start-up filter, counters zeroed."""
        self.command("reset")

    def stats(self) -> dict:
        """accepted / open / cuts / cut_events / bytes_c2s / bytes_s2c / held (totals over
        the fault-enabled listeners since the last reset), throttle_wait_s, faults,
        listeners (per listener, including --no-faults ones) and conns (open ones, each
        with id, peer, client_version, bytes both ways, held bytes)."""
        return self.command("stats")

    def conns(self, client_version: str | None = None, faults_only: bool = True) -> list[dict]:
        """Open connections, optionally only those whose client version contains the text."""
        st = self.stats()
        faulty = {lst["listen"] for lst in st["listeners"] if lst["faults"] or not faults_only}
        return [c for c in st["conns"] if c["listener"] in faulty and
                (client_version is None or client_version in (c["client_version"] or ""))]

    def wait_stats(self, predicate: Callable[[dict], Any], timeout_s: float = 30,
                   what: str = "proxy stats condition") -> dict:
        """Poll stats until predicate(stats) is truthy; returns those stats."""
        deadline = time.monotonic() + timeout_s
        st: dict = {}
        while time.monotonic() < deadline:
            st = self.stats()
            if predicate(st):
                return st
            time.sleep(0.1)
        raise AssertionError(f"timed out after {timeout_s} s waiting for {what}; last stats: "
                             f"{ {k: v for k, v in st.items() if k not in ('conns', 'listeners')} }")

    @contextlib.contextmanager
    def stalled(self):
        self.stall()
        try:
            yield self
        finally:
            self.resume()

    @contextlib.contextmanager
    def throttled(self, bytes_per_s: int):
        self.throttle(bytes_per_s)
        try:
            yield self
        finally:
            self.throttle(0)


# --------------------------------------------------------------------------------------
# Fixtures (import them into the test module, see the module docstring)
# --------------------------------------------------------------------------------------

@pytest.fixture(scope="session")
def fault_proxy_session() -> FaultProxy:
    """The proxy in front of the broker. Not reachable -> the test fails (never skips)."""
    try:
        return FaultProxy.connect()
    except ProxyError as e:
        pytest.fail(f"{e}\nFault tests need the broker behind the proxy: run "
                    "scripts/broker-behind-proxy start, eval \"$(scripts/broker-behind-proxy env)\", "
                    "then pytest -m proxy (scripts/test does all of this)", pytrace=False)


@pytest.fixture
def fault_proxy(fault_proxy_session: FaultProxy):
    """The proxy, reset (no faults, counters zeroed) before and after the test."""
    fault_proxy_session.reset()
    yield fault_proxy_session
    fault_proxy_session.reset()


# --------------------------------------------------------------------------------------
# Measuring a TLS connection: where the client's handshake ends and its frames begin
# --------------------------------------------------------------------------------------

class RecordingRelay:
    """A plain TCP relay without faults that keeps every byte each connection's client
    sent (c2s[i] for the i-th accepted connection), to measure a TLS handshake before
    choosing where a cut-after should land:

        with RecordingRelay(("localhost", 6651)) as tap:
            ... connect a client to 127.0.0.1:tap.port ...
        records = tls_records(bytes(tap.c2s[0]))
    """

    def __init__(self, target: tuple[str, int], listen_host: str = "127.0.0.1"):
        self.target = target
        self._srv = socket.create_server((listen_host, 0))
        self.port = self._srv.getsockname()[1]
        self.c2s: list[bytearray] = []
        self._socks: list[socket.socket] = []
        self._lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._srv.accept()
            except OSError:
                return
            try:
                up = socket.create_connection(self.target, timeout=10)
                up.settimeout(None)
            except OSError:
                client.close()
                continue
            rec = bytearray()
            with self._lock:
                self.c2s.append(rec)
                self._socks += [client, up]
            threading.Thread(target=self._pump, args=(client, up, rec), daemon=True).start()
            threading.Thread(target=self._pump, args=(up, client, None), daemon=True).start()

    @staticmethod
    def _pump(src: socket.socket, dst: socket.socket, rec: bytearray | None) -> None:
        try:
            while data := src.recv(1 << 16):
                if rec is not None:
                    rec += data
                dst.sendall(data)
        except OSError:
            pass
        try:
            dst.shutdown(socket.SHUT_WR)
        except OSError:
            pass

    def close(self) -> None:
        self._srv.close()
        with self._lock:
            for s in self._socks:
                try:
                    s.close()
                except OSError:
                    pass

    def __enter__(self) -> "RecordingRelay":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


TLS_CHANGE_CIPHER_SPEC, TLS_ALERT, TLS_HANDSHAKE, TLS_APPLICATION_DATA = 20, 21, 22, 23


def tls_records(data: bytes) -> list[tuple[int, int, int]]:
    """(content type, offset, length including the 5-byte header) of each complete TLS
    record in one direction of a connection."""
    out, i = [], 0
    while i + 5 <= len(data):
        n = int.from_bytes(data[i + 3:i + 5], "big")
        if i + 5 + n > len(data):
            break
        out.append((data[i], i, 5 + n))
        i += 5 + n
    return out


def tls_client_handshake_end(records: list[tuple[int, int, int]]) -> int:
    """Offset of the first byte after the client's Finished, from its records (client to
    server). TLS 1.2: the Finished is the encrypted handshake record right after the
    client's ChangeCipherSpec. TLS 1.3 (OpenSSL sends the middlebox-compatibility CCS):
    everything after the CCS is application_data on the wire; the client's flight is an
    optional (here usually empty) Certificate, then the Finished, which is the first record
    of 58 or 74 bytes (5-byte record header + 4-byte message header + a SHA-256 or SHA-384
    verify_data + inner content type + 16-byte AEAD tag)."""
    for k, (ctype, _, _) in enumerate(records):
        if ctype != TLS_CHANGE_CIPHER_SPEC:
            continue
        after = records[k + 1:]
        if after and after[0][0] == TLS_HANDSHAKE:
            return after[0][1] + after[0][2]
        for ctype2, off, n in after[:3]:
            if ctype2 == TLS_APPLICATION_DATA and n in (58, 74):
                return off + n
        break
    raise ValueError(f"cannot tell where the client's handshake ends: {records}")
