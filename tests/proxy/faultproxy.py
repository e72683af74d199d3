#!/usr/bin/env python3
"""Fault-injection TCP proxy for the pulsarc tests (Python 3.11, standard library only).

Sits between clients and a real broker and, on command or on a schedule, cuts
connections (at once, or after N more client->broker bytes, which lands mid-frame),
stalls traffic (held, not dropped) and throttles it.

    faultproxy.py --listen 127.0.0.1:6650 --target 127.0.0.2:6650 \
                  --listen 127.0.0.1:8080 --target 127.0.0.2:8080 --no-faults \
                  --control 127.0.0.1:7777

Each --listen is followed by its --target; --no-faults after a pair exempts that
forward from every fault (used for the broker's HTTP port). Port 0 picks a free port;
the chosen addresses are printed on stdout as one line: READY {json}.

Control: a line-based TCP protocol on --control. Send one command per line, get one
line of JSON back ({"ok": true, ...} or {"ok": false, "error": "..."}); several
commands may share a connection. From a shell:

    faultproxy.py --control 127.0.0.1:7777 --send stats

Commands (faults apply only to connections of fault-enabled listeners that match the
filter, see `filter`):
    ping                      liveness check
    cut [rst|fin]             close every connection now, both sides (default rst: an
                              abortive close, the peer sees ECONNRESET; fin: orderly)
    cut-after BYTES [rst|fin] one-shot: the connection on which BYTES more client->broker
                              bytes have passed forwards exactly up to that byte and is
                              cut (so the cut lands mid-frame); `cut-after off` cancels
    stall                     stop forwarding both ways; sockets stay open, data read
                              from them is held (one chunk per direction per connection;
                              the rest waits in the kernel, TCP flow control does the rest)
    resume                    forward again, held data first
    throttle BYTES_PER_S      limit each direction of each connection; 0 = off
    schedule-cuts MIN_S MAX_S [rst|fin]
                              cut all connections at random intervals in [MIN_S, MAX_S]
    schedule-off              stop the schedule
    down                      the target as a dead host looks: every fault-enabled listener
                              stops listening (new connections are refused) and the open
                              connections that match the filter are cut (rst); the
                              control port stays up
    up                        listen again on the same addresses
    filter TEXT | filter !TEXT | filter off
                              faults only hit connections whose Pulsar client version
                              (sniffed from the CONNECT command) contains TEXT, or does
                              not contain it with '!'; off = all connections. Counting
                              for cut-after also only sees matching connections.
    stats                     counters (see Proxy.stats) and the open connections
    reset                     all faults off (stall released, throttle, cut-after and
                              schedule cleared, listening again after `down`, filter back
                              to --filter), counters zeroed
    shutdown                  stop the proxy
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import signal
import socket
import struct
import sys
import time

CHUNK = 64 * 1024          # read size; also the most a direction holds during a stall
CONNECT_TIMEOUT_S = 10.0
SNIFF_LIMIT = 64 * 1024    # give up looking for the CONNECT command after this many bytes
RECENT_CUTS = 50           # cut connections remembered for `stats`


def log(msg: str) -> None:
    print(f"{time.strftime('%H:%M:%S')} faultproxy: {msg}", file=sys.stderr, flush=True)


def parse_addr(s: str) -> tuple[str, int]:
    host, sep, port = s.rpartition(":")
    if not sep or not host:
        raise argparse.ArgumentTypeError(f"expected HOST:PORT, got {s!r}")
    return host.strip("[]"), int(port)


def fmt_addr(a) -> str:
    return f"{a[0]}:{a[1]}"


# ------------------------------------------------------------------------------------
# Pulsar CONNECT sniffing (informational, and for `filter`): the first frame a client
# sends is [total_size u32][cmd_size u32][BaseCommand], BaseCommand.type (1) == CONNECT
# (2), BaseCommand.connect (2) is CommandConnect whose field 1 is client_version.
# ------------------------------------------------------------------------------------

def _varint(b: bytes, i: int) -> tuple[int, int]:
    shift = value = 0
    while True:
        if i >= len(b) or shift > 63:
            raise ValueError("bad varint")
        c = b[i]
        i += 1
        value |= (c & 0x7F) << shift
        if not c & 0x80:
            return value, i
        shift += 7


def _pb_fields(b: bytes):
    i = 0
    while i < len(b):
        key, i = _varint(b, i)
        field, wt = key >> 3, key & 7
        if wt == 0:
            v, i = _varint(b, i)
        elif wt == 1:
            v, i = b[i:i + 8], i + 8
        elif wt == 2:
            n, i = _varint(b, i)
            v, i = b[i:i + n], i + n
        elif wt == 5:
            v, i = b[i:i + 4], i + 4
        else:
            raise ValueError("unsupported wire type")
        if i > len(b):
            raise ValueError("truncated")
        yield field, wt, v


def sniff_client_version(buf: bytes) -> str | None:
    """'' when buf holds a complete first frame that is not a CONNECT (or not Pulsar),
    the client version when it is one, None when more bytes are needed."""
    if len(buf) < 8:
        return None
    total, cmd_size = struct.unpack(">II", buf[:8])
    if cmd_size + 4 > total or total > 5 * 1024 * 1024 + 64 * 1024:
        return ""  # not a Pulsar frame (an HTTP request, TLS, ...)
    if len(buf) < 8 + cmd_size:
        return None
    try:
        cmd = dict((f, v) for f, _, v in _pb_fields(buf[8:8 + cmd_size]))
        if cmd.get(1) != 2 or not isinstance(cmd.get(2), bytes):
            return ""
        for f, wt, v in _pb_fields(cmd[2]):
            if f == 1 and wt == 2:
                return v.decode("utf-8", "replace")
    except ValueError:
        pass
    return ""


# ------------------------------------------------------------------------------------

class Cut(Exception):
    """Raised inside a pump when its connection has been cut."""


class Listener:
    def __init__(self, listen, target, faults: bool):
        self.listen = listen
        self.target = target
        self.faults = faults
        self.server: asyncio.AbstractServer | None = None
        self.zero()

    def zero(self):
        self.accepted = 0
        self.cuts = 0
        self.bytes_c2s = 0
        self.bytes_s2c = 0
        self.upstream_failures = 0

    @property
    def name(self) -> str:
        return fmt_addr(self.listen)

    def to_dict(self, open_count: int) -> dict:
        return {"listen": fmt_addr(self.listen), "target": fmt_addr(self.target),
                "faults": self.faults, "accepted": self.accepted, "open": open_count,
                "cuts": self.cuts, "bytes_c2s": self.bytes_c2s, "bytes_s2c": self.bytes_s2c,
                "upstream_failures": self.upstream_failures}


class Conn:
    def __init__(self, cid: int, lst: Listener, peer, client_w, up_w):
        self.id = cid
        self.lst = lst
        self.peer = peer
        self.client_w = client_w
        self.up_w = up_w
        self.t0 = time.monotonic()
        self.bytes_c2s = 0
        self.bytes_s2c = 0
        self.held = {"c2s": 0, "s2c": 0}  # read from one side, not yet written to the other
        self.client_version: str | None = None
        self.sniff = bytearray()
        self.cut_reason: str | None = None
        self.tasks: list[asyncio.Task] = []
        self.next_t = {"c2s": 0.0, "s2c": 0.0}  # throttle pacing

    def to_dict(self) -> dict:
        return {"id": self.id, "listener": self.lst.name, "peer": fmt_addr(self.peer),
                "client_version": self.client_version, "bytes_c2s": self.bytes_c2s,
                "bytes_s2c": self.bytes_s2c, "held": dict(self.held),
                "age_s": round(time.monotonic() - self.t0, 3)}

    def abort(self, mode: str = "rst"):
        """Close both sides now and stop the pumps. rst: SO_LINGER 0 + abort, the peers
        get a RST; fin: an orderly close of both sockets."""
        for w in (self.client_w, self.up_w):
            if w is None or w.transport.is_closing():
                continue
            if mode == "rst":
                sock = w.get_extra_info("socket")
                try:
                    if sock is not None:
                        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                except OSError:
                    pass
                w.transport.abort()
            else:
                # Unsent proxy-side buffers are dropped, then FIN.
                w.transport.abort() if w.transport.get_write_buffer_size() else w.close()
        for t in self.tasks:
            if t is not asyncio.current_task():
                t.cancel()


class Proxy:
    def __init__(self, listeners: list[Listener], default_filter: str | None = None):
        self.listeners = listeners
        self.default_filter = default_filter
        self.conns: dict[int, Conn] = {}
        self.next_id = 1
        self.running = asyncio.Event()   # cleared while stalled
        self.running.set()
        self.throttle = 0                # bytes/s per direction per connection, 0 = off
        self.cut_after: int | None = None
        self.cut_after_mode = "rst"
        self.schedule: tuple[float, float, str] | None = None
        self.schedule_task: asyncio.Task | None = None
        self.filter = default_filter
        self.down = False                # `down`: not listening, as a dead host
        self.stopped = asyncio.Event()
        self.zero()

    def zero(self):
        self.cut_events = 0
        self.throttle_wait_s = 0.0
        self.t_reset = time.monotonic()
        self.recent_cuts: list[dict] = []
        for lst in self.listeners:
            lst.zero()
        for c in self.conns.values():
            c.bytes_c2s = c.bytes_s2c = 0

    # -- fault targeting ---------------------------------------------------------------
    def targeted(self, c: Conn) -> bool:
        if not c.lst.faults:
            return False
        if self.filter is None:
            return True
        if self.filter.startswith("!"):
            return c.client_version is not None and self.filter[1:] not in c.client_version
        return c.client_version is not None and self.filter in c.client_version

    def cut(self, mode: str = "rst", reason: str = "cut") -> int:
        self.cut_events += 1
        n = 0
        for c in list(self.conns.values()):
            if self.targeted(c) and c.cut_reason is None:
                self.cut_conn(c, mode, reason)
                n += 1
        log(f"{reason}: {n} connection(s) cut ({mode})")
        return n

    def cut_conn(self, c: Conn, mode: str, reason: str):
        c.cut_reason = reason
        c.lst.cuts += 1
        self.recent_cuts.append({**c.to_dict(), "reason": reason, "mode": mode,
                                 "at_s": round(time.monotonic() - self.t_reset, 3)})
        del self.recent_cuts[:-RECENT_CUTS]
        c.abort(mode)

    # -- data path ---------------------------------------------------------------------
    async def handle(self, lst: Listener, client_r, client_w):
        lst.accepted += 1
        peer = client_w.get_extra_info("peername") or ("?", 0)
        try:
            up_r, up_w = await asyncio.wait_for(asyncio.open_connection(*lst.target), CONNECT_TIMEOUT_S)
        except (OSError, asyncio.TimeoutError) as e:
            lst.upstream_failures += 1
            log(f"{lst.name}: cannot reach {fmt_addr(lst.target)} for {fmt_addr(peer)}: {e!r}")
            client_w.transport.abort()
            return
        if self.down and lst.faults:
            # Accepted just before `down` closed the listener: a dead host would not
            # have answered it either.
            client_w.transport.abort()
            up_w.transport.abort()
            return
        for w in (client_w, up_w):
            sock = w.get_extra_info("socket")
            try:
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            except (OSError, AttributeError):
                pass
        c = Conn(self.next_id, lst, peer, client_w, up_w)
        self.next_id += 1
        self.conns[c.id] = c
        t1 = asyncio.create_task(self.pump(c, client_r, up_w, "c2s"))
        t2 = asyncio.create_task(self.pump(c, up_r, client_w, "s2c"))
        c.tasks = [t1, t2]
        try:
            await asyncio.wait(c.tasks, return_when=asyncio.FIRST_EXCEPTION)
            failed = [t for t in c.tasks if t.done() and not t.cancelled() and t.exception()]
            if failed or c.cut_reason:
                # One side reset (or we cut): tear down the other side too.
                c.abort("rst" if failed and isinstance(failed[0].exception(), ConnectionResetError) else "fin")
            await asyncio.gather(*c.tasks, return_exceptions=True)
            for w in (client_w, up_w):
                if not w.transport.is_closing():
                    w.close()
        finally:
            self.conns.pop(c.id, None)

    async def pump(self, c: Conn, src: asyncio.StreamReader, dst: asyncio.StreamWriter, d: str):
        while True:
            data = await src.read(CHUNK)
            if not data:
                if self.targeted(c):
                    await self.running.wait()        # an EOF is held during a stall too
                if dst.can_write_eof() and not dst.transport.is_closing():
                    dst.write_eof()
                return
            if d == "c2s" and c.client_version is None:
                c.sniff += data
                v = sniff_client_version(bytes(c.sniff))
                if v is not None or len(c.sniff) > SNIFF_LIMIT:
                    c.client_version = v or ""
                    c.sniff = bytearray()
            c.held[d] = len(data)
            try:
                await self.forward(c, memoryview(data), dst, d)
            finally:
                c.held[d] = 0

    async def forward(self, c: Conn, view: memoryview, dst: asyncio.StreamWriter, d: str):
        while view:
            piece = view
            if self.targeted(c):
                await self.running.wait()
                if self.throttle:
                    piece = view[:max(1, self.throttle // 20)]
                    await self.pace(c, d, len(piece))
                    if not self.running.is_set():
                        continue                      # stalled while pacing
                if d == "c2s" and self.cut_after is not None:
                    if len(piece) >= self.cut_after:
                        piece = piece[:self.cut_after]
                        mode, self.cut_after = self.cut_after_mode, None
                        self.write(c, dst, d, piece)
                        try:
                            await dst.drain()
                        except OSError:
                            pass
                        self.cut_event_after(c, mode)
                        raise Cut()
                    self.cut_after -= len(piece)
            self.write(c, dst, d, piece)
            view = view[len(piece):]
            c.held[d] = len(view)
            await dst.drain()

    def cut_event_after(self, c: Conn, mode: str):
        self.cut_events += 1
        log(f"cut-after: connection {c.id} ({fmt_addr(c.peer)}) cut mid-stream ({mode}) "
            f"after {c.bytes_c2s} bytes client->broker")
        self.cut_conn(c, mode, "cut-after")

    def write(self, c: Conn, dst, d: str, piece):
        if not piece:
            return
        dst.write(piece)
        if d == "c2s":
            c.bytes_c2s += len(piece)
            c.lst.bytes_c2s += len(piece)
        else:
            c.bytes_s2c += len(piece)
            c.lst.bytes_s2c += len(piece)

    async def pace(self, c: Conn, d: str, n: int):
        """Pacing: each piece waits its share (n / rate) after the previous one, with at
        most 50 ms of credit carried over (a small burst after an idle spell).
        Sleeps in short steps so `throttle 0`, `stall` and `cut` take effect at once."""
        now = time.monotonic()
        rate = self.throttle
        t = max(c.next_t[d], now - 0.05)
        while (wait := t - time.monotonic()) > 0:
            if self.throttle != rate or not self.running.is_set():
                c.next_t[d] = 0.0
                return
            step = min(wait, 0.05)
            self.throttle_wait_s += step
            await asyncio.sleep(step)
        c.next_t[d] = t + n / rate

    # -- schedule ------------------------------------------------------------------------
    async def scheduler(self, lo: float, hi: float, mode: str):
        while True:
            await asyncio.sleep(random.uniform(lo, hi))
            self.cut(mode, "schedule")

    def schedule_off(self):
        if self.schedule_task:
            self.schedule_task.cancel()
        self.schedule_task = None
        self.schedule = None

    # -- down / up ---------------------------------------------------------------------
    async def listen(self, lst: Listener) -> asyncio.AbstractServer:
        return await asyncio.start_server(
            lambda r, w, lst=lst: self.handle(lst, r, w), *lst.listen, backlog=1024)

    def go_down(self) -> int:
        """Stop listening on every fault-enabled listener (connecting is refused, as to a
        host whose service died) and cut the open connections the filter selects."""
        for lst in self.listeners:
            if lst.faults and lst.server is not None:
                lst.server.close()
                lst.server = None
        self.down = True
        n = self.cut("rst", "down")
        log("down: not listening")
        return n

    async def go_up(self) -> None:
        """Listen again on the addresses of before (the port stays what it was)."""
        for lst in self.listeners:
            if lst.faults and lst.server is None:
                lst.server = await self.listen(lst)
        if self.down:
            log("up: listening again")
        self.down = False

    def reset(self):
        self.schedule_off()
        self.running.set()
        self.throttle = 0
        self.cut_after = None
        self.filter = self.default_filter
        self.zero()

    # -- control -------------------------------------------------------------------------
    def stats(self) -> dict:
        open_by = {lst.name: 0 for lst in self.listeners}
        for c in self.conns.values():
            open_by[c.lst.name] += 1
        faulty = [lst for lst in self.listeners if lst.faults]
        return {
            # Totals over the fault-enabled listeners (the broker's binary port).
            "accepted": sum(lst.accepted for lst in faulty),
            "open": sum(open_by[lst.name] for lst in faulty),
            "cuts": sum(lst.cuts for lst in faulty),
            "cut_events": self.cut_events,
            "bytes_c2s": sum(lst.bytes_c2s for lst in faulty),
            "bytes_s2c": sum(lst.bytes_s2c for lst in faulty),
            "held": sum(sum(c.held.values()) for c in self.conns.values()),
            "throttle_wait_s": round(self.throttle_wait_s, 3),
            "since_reset_s": round(time.monotonic() - self.t_reset, 3),
            "faults": {"stalled": not self.running.is_set(), "throttle": self.throttle,
                       "down": self.down,
                       "cut_after": self.cut_after, "filter": self.filter,
                       "schedule": list(self.schedule) if self.schedule else None},
            "listeners": [lst.to_dict(open_by[lst.name]) for lst in self.listeners],
            "conns": [c.to_dict() for c in self.conns.values()],
            # The last cut connections as they were at the cut (bytes_c2s of a cut-after
            # victim ends exactly at the requested byte).
            "recent_cuts": self.recent_cuts,
        }

    async def command(self, line: str) -> dict:
        words = line.split()
        if not words:
            return {"ok": False, "error": "empty command"}
        cmd, args = words[0].lower(), words[1:]

        def mode_arg(i: int) -> str:
            m = args[i].lower() if len(args) > i else "rst"
            if m not in ("rst", "fin"):
                raise ValueError(f"mode must be rst or fin, not {m!r}")
            return m

        if cmd == "ping":
            return {"ok": True, "pong": True}
        if cmd == "cut":
            return {"ok": True, "cut": self.cut(mode_arg(0))}
        if cmd == "cut-after":
            if len(args) < 1:
                raise ValueError("usage: cut-after BYTES [rst|fin] | cut-after off")
            if args[0].lower() == "off":
                self.cut_after = None
            else:
                n = int(args[0])
                if n < 0:
                    raise ValueError("BYTES must be >= 0")
                self.cut_after, self.cut_after_mode = n, mode_arg(1)
            return {"ok": True, "cut_after": self.cut_after}
        if cmd == "stall":
            self.running.clear()
            log("stalled")
            return {"ok": True, "stalled": True}
        if cmd == "resume":
            self.running.set()
            log("resumed")
            return {"ok": True, "stalled": False}
        if cmd == "throttle":
            if len(args) != 1:
                raise ValueError("usage: throttle BYTES_PER_S (0 = off)")
            n = int(args[0])
            if n < 0:
                raise ValueError("BYTES_PER_S must be >= 0")
            self.throttle = n
            for c in self.conns.values():
                c.next_t = {"c2s": 0.0, "s2c": 0.0}
            log(f"throttle {n} B/s" if n else "throttle off")
            return {"ok": True, "throttle": n}
        if cmd == "schedule-cuts":
            if len(args) not in (2, 3):
                raise ValueError("usage: schedule-cuts MIN_S MAX_S [rst|fin]")
            lo, hi = float(args[0]), float(args[1])
            if not 0 < lo <= hi:
                raise ValueError("need 0 < MIN_S <= MAX_S")
            mode = mode_arg(2)
            self.schedule_off()
            self.schedule = (lo, hi, mode)
            self.schedule_task = asyncio.create_task(self.scheduler(lo, hi, mode))
            log(f"cutting every {lo}..{hi} s ({mode})")
            return {"ok": True, "schedule": list(self.schedule)}
        if cmd == "schedule-off":
            self.schedule_off()
            return {"ok": True, "schedule": None}
        if cmd == "filter":
            if len(args) != 1:
                raise ValueError("usage: filter TEXT | filter !TEXT | filter off")
            self.filter = None if args[0].lower() == "off" else args[0]
            return {"ok": True, "filter": self.filter}
        if cmd == "stats":
            return {"ok": True, **self.stats()}
        if cmd == "down":
            return {"ok": True, "cut": self.go_down()}
        if cmd == "up":
            await self.go_up()
            return {"ok": True, "down": False}
        if cmd == "reset":
            await self.go_up()
            self.reset()
            log("reset")
            return {"ok": True}
        if cmd == "shutdown":
            self.stopped.set()
            return {"ok": True}
        if cmd == "help":
            return {"ok": True, "help": __doc__}
        return {"ok": False, "error": f"unknown command {cmd!r}"}

    async def control(self, r: asyncio.StreamReader, w: asyncio.StreamWriter):
        try:
            while line := await r.readline():
                try:
                    reply = await self.command(line.decode("utf-8", "replace").strip())
                except (ValueError, IndexError, OSError) as e:
                    reply = {"ok": False, "error": str(e)}
                w.write(json.dumps(reply).encode() + b"\n")
                await w.drain()
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            w.close()

    # -- life cycle ----------------------------------------------------------------------
    async def run(self, control_addr) -> None:
        for lst in self.listeners:
            lst.server = await self.listen(lst)
            # Port 0 becomes the port chosen, which `up` listens on again.
            lst.listen = lst.server.sockets[0].getsockname()[:2]
        ready = {"listeners": [{"listen": fmt_addr(lst.listen), "target": fmt_addr(lst.target),
                                "faults": lst.faults} for lst in self.listeners]}
        ctl = None
        if control_addr:
            ctl = await asyncio.start_server(self.control, *control_addr)
            ready["control"] = fmt_addr(ctl.sockets[0].getsockname()[:2])
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, self.stopped.set)
        for lst in self.listeners:
            log(f"{fmt_addr(lst.listen)} -> {fmt_addr(lst.target)}" + ("" if lst.faults else " (no faults)"))
        if ctl:
            log(f"control on {ready['control']}")
        print("READY " + json.dumps(ready), flush=True)
        await self.stopped.wait()
        log("shutting down")
        self.schedule_off()
        for srv in [lst.server for lst in self.listeners] + ([ctl] if ctl else []):
            if srv is not None:
                srv.close()
        for c in list(self.conns.values()):
            c.abort("fin")
        await asyncio.sleep(0.1)


# ------------------------------------------------------------------------------------

class _Listen(argparse.Action):
    def __call__(self, parser, ns, value, option_string=None):
        ns.routes.append({"listen": value, "target": None, "faults": True})


class _Target(argparse.Action):
    def __call__(self, parser, ns, value, option_string=None):
        if not ns.routes or ns.routes[-1]["target"] is not None:
            parser.error("--target must follow its --listen")
        ns.routes[-1]["target"] = value


class _NoFaults(argparse.Action):
    def __call__(self, parser, ns, value, option_string=None):
        if not ns.routes:
            parser.error("--no-faults must follow a --listen/--target pair")
        ns.routes[-1]["faults"] = False


def send_command(control, line: str, timeout_s: float = 10.0) -> dict:
    with socket.create_connection(control, timeout=timeout_s) as s:
        s.sendall(line.encode() + b"\n")
        buf = b""
        while not buf.endswith(b"\n"):
            chunk = s.recv(65536)
            if not chunk:
                break
            buf += chunk
    return json.loads(buf)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.set_defaults(routes=[])
    p.add_argument("--listen", type=parse_addr, action=_Listen, metavar="HOST:PORT")
    p.add_argument("--target", type=parse_addr, action=_Target, metavar="HOST:PORT")
    p.add_argument("--no-faults", nargs=0, action=_NoFaults,
                   help="exempt the preceding --listen/--target pair from all faults")
    p.add_argument("--control", type=parse_addr, metavar="HOST:PORT", help="control address")
    p.add_argument("--filter", metavar="[!]TEXT",
                   help="the filter in force at start and after `reset` (default: none, faults "
                        "hit every connection); e.g. '!Pulsar-Java' spares the broker's own client")
    p.add_argument("--send", metavar="COMMAND",
                   help="client mode: send COMMAND to --control, print the JSON reply, "
                        "exit 0 when ok")
    a = p.parse_args(argv)

    if a.send is not None:
        if not a.control:
            p.error("--send needs --control")
        try:
            reply = send_command(a.control, a.send)
        except OSError as e:
            print(f"faultproxy: cannot reach control {fmt_addr(a.control)}: {e}", file=sys.stderr)
            return 2
        print(json.dumps(reply, indent=1))
        return 0 if reply.get("ok") else 1

    if not a.routes:
        p.error("at least one --listen/--target pair is required")
    for r in a.routes:
        if r["target"] is None:
            p.error(f"--listen {fmt_addr(r['listen'])} has no --target")
    proxy = Proxy([Listener(r["listen"], r["target"], r["faults"]) for r in a.routes], a.filter or None)
    try:
        asyncio.run(proxy.run(a.control))
    except OSError as e:
        log(f"ERROR: {e}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
