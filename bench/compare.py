#!/usr/bin/env python3
"""Run pulsarc-perf and the official clients' perf tools side by side; print one table.

Started by bench/compare, which builds the programs and installs the peers first; see
bench/README.md for what each column means. Every number here is measured the same way
for every client, outside the client:

- throughput is counted by the broker: the null broker's counters (sampled with SIGUSR1)
  or the real broker's topic stats (msgInCounter, bytesInCounter), at two instants A and B
  once the client has been sending for the warm-up time;
- CPU is the client process's user + system time (its whole process tree, from /proc)
  between the same two instants;
- peak RSS is the client's VmHWM;
- TLS cases run against the null broker serving TLS (pulsar+ssl://, a certificate made
  by bench/compare for the run), each client verifying it against the run's CA; before
  each of their rounds `openssl speed -evp aes-128-gcm` (16 KiB blocks, one process, so
  one core) measures the scale a 1 MiB TLS run is read against, as loopback TCP is for
  clear text;
- creation time (null broker) is from the client's first CONNECT to the broker's answer
  to the last of its producers' PRODUCER commands;
- latency (send -> receipt) is what each tool reports itself; the tools differ in how
  (see bench/README.md), so those columns are the tools' own words.
"""
import argparse
import json
import os
import re
import signal
import socket
import statistics
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass

CLK_TCK = os.sysconf("SC_CLK_TCK")
MIB = 1024 * 1024


@dataclass
class Case:
    key: str
    title: str
    size: int
    batched: bool
    chunked: bool = False
    rate: int = 0  # msg/s; 0 = as fast as the tool goes
    targets: tuple = ("null", "broker")
    peers: bool = True  # False: pulsarc only
    topics: int = 1  # more than one: TOPIC-0 .. TOPIC-(n-1), one producer each
    partitions: int = 0  # null broker: every topic has this many partitions
    tls: bool = False  # pulsar+ssl:// to a null broker serving TLS


CASES = [
    Case("b100", "100 B batched", 100, True),
    Case("u100", "100 B unbatched", 100, False),
    Case("b1k", "1 KiB batched", 1024, True),
    Case("m1", "1 MiB", MIB, False),
    # Not on the real broker by default: gigabytes a run into its journal and ledgers.
    Case("c100m", "100 MiB chunked", 100 * MIB, False, chunked=True, targets=("null",)),
    # pulsarc's latency below saturation, for the issue's latency targets: a fixed rate, so
    # the percentiles are not just the window divided by the rate.
    Case("b100r1m", "100 B batched at 1 M msg/s", 100, True, rate=1_000_000, targets=("null",),
         peers=False),
    Case("b100r1k", "100 B batched at 1 k msg/s", 100, True, rate=1_000, targets=("null",),
         peers=False),
    # Many producers on one connection: every client's window is per producer (1000), so
    # up to 100,000 messages are in flight.
    Case("t100", "100 B batched, 100 topics", 100, True, topics=100, targets=("null",)),
    # One topic of 1000 partitions: 1000 windows of 1000 messages, so the client-wide
    # memoryLimitBytes (64 MiB) is what bounds the messages in flight: peak RSS against it.
    Case("p1000", "100 B batched, 1000 partitions", 100, True, partitions=1000,
         targets=("null",)),
    # Over TLS: the null broker serves TLS, so the client's encryption is what is measured.
    # The real standalone broker speaks clear text only.
    Case("tb100", "100 B batched, TLS", 100, True, tls=True, targets=("null",)),
    Case("tb1k", "1 KiB batched, TLS", 1024, True, tls=True, targets=("null",)),
    Case("tm1", "1 MiB, TLS", MIB, False, tls=True, targets=("null",)),
]
MEMORY_LIMIT_MIB = 64  # every client's memory limit (pulsarc's default)

# The batching every batched run uses, the same for all clients: pulsarc's defaults.
BATCH_MSGS, BATCH_BYTES, BATCH_DELAY_MS = 1000, 128 * 1024, 10
MAX_PENDING = 1000  # messages in flight, every client
GO_STATS_PERIOD_S = 10.0  # the Go tool prints its latency line every 10 s, no sooner


# ---- the clients -----------------------------------------------------------------------

class Tool:
    """How to start one client's perf tool for a case, and how to read its latency."""
    name = ""
    marker = ""  # footnote on its latency columns
    min_life_s = 0.0  # how long its first run of a case must last to print its latency
    extra_warmup_s = 0.0  # on top of --warmup

    trust = None  # the run's CA (PEM) for TLS cases; set by main

    def __init__(self, path):
        self.path = path

    def skip_reason(self, case):
        return None if case.peers else "pulsarc-only case"

    def argv(self, case, url, topic):
        raise NotImplementedError

    def latency(self, out, window):
        """(p50_ms, p99_ms) from the tool's output; window is the text printed between
        the two samples, out the whole output."""
        return None, None


class Pulsarc(Tool):
    def __init__(self, path, zero_copy):
        super().__init__(path)
        self.zero_copy = zero_copy
        self.name = "pulsarc zero-copy" if zero_copy else "pulsarc"

    def skip_reason(self, case):
        if self.zero_copy and case.size < MIB:
            return "zero-copy only for 1 MiB and up"
        return None

    def argv(self, case, url, topic):
        # --latency-every 1: every message timed, as the peers' tools do, so the tools'
        # own bookkeeping is alike in every client's CPU (pulsarc-perf alone samples).
        # pulsar-perf produce's flags (issue 31), with the batching every client here gets.
        a = [self.path, "-u", url, topic, "-s", str(case.size), "-time", "100000",
             "-o", str(MAX_PENDING), "-r", str(case.rate or 0), "--latency-every", "1"]
        if case.batched:
            a += ["-bm", str(BATCH_MSGS), "-bb", str(BATCH_BYTES), "-b", str(BATCH_DELAY_MS)]
        else:
            a.append("-db")
        if case.chunked:
            a += ["--conf", "chunkingEnabled=true"]
        if self.zero_copy:
            a.append("--zero-copy")
        if case.topics > 1:
            a += ["--topics", str(case.topics)]
        if case.tls:
            a += ["--tls-trust-certs", self.trust]  # the host name is checked too (default)
        return a

    def latency(self, out, window):
        m = re.search(r"^RESULT .*?p50_ms=([\d.]+) p99_ms=([\d.]+)", out, re.M)
        return (float(m.group(1)), float(m.group(2))) if m else (None, None)


class Java(Tool):
    name = "java"
    # The JIT compiler is still at work in the first seconds: without more warm-up the
    # Java tool is measured before it reaches its steady rate.
    extra_warmup_s = 3.0

    def skip_reason(self, case):
        if case.tls:
            return "TLS cases compare pulsarc with the C++ client"
        return super().skip_reason(case)

    def argv(self, case, url, topic):
        # -r must be positive: a rate no run reaches stands for "unlimited". -ml: the
        # tool's client has no memory limit unless given one; pulsarc's default is 64 MiB
        # (without it, 1000 pending 100 MiB messages make the JVM crawl).
        a = [self.path, "produce", "-u", url, "-s", str(case.size), "-o", str(MAX_PENDING),
             "-r", str(case.rate or 1_000_000_000), "-ml", "64M"]
        if case.batched:
            a += ["-bm", str(BATCH_MSGS), "-bb", str(BATCH_BYTES), "-b", str(BATCH_DELAY_MS)]
        else:
            a.append("-db")
        if case.chunked:
            a.append("-ch")
        if case.topics > 1:
            a += ["-t", str(case.topics)]  # one topic name: it appends -0 .. -(n-1)
        return a + [topic]

    def latency(self, out, window):
        # Printed by its shutdown hook: everything after its own 1 s warm-up.
        m = re.search(r"Aggregated latency stats --- Latency: mean: +[\d.]+ ms - med: +([\d.]+)"
                      r" - 95pct: +[\d.]+ - 99pct: +([\d.]+)", out)
        return (float(m.group(1)), float(m.group(2))) if m else (None, None)


class Go(Tool):
    name = "go"
    marker = "‡"
    # Only the first run of each case waits for the line: 11 s a run would double the
    # whole comparison's time.
    min_life_s = GO_STATS_PERIOD_S + 1.0

    def skip_reason(self, case):
        if case.chunked:
            return "the Go perf tool has no chunking switch"
        if case.topics > 1:
            return "the Go perf tool produces to one topic"
        if case.tls:
            return "TLS cases compare pulsarc with the C++ client"
        return super().skip_reason(case)

    def argv(self, case, url, topic):
        # It has no switch to turn batching off: unbatched = batches of one message.
        n = BATCH_MSGS if case.batched else 1
        return [self.path, "produce", "--metrics", "-1", "-u", url, "-r", str(case.rate),
                "-s", str(case.size), "-q", str(MAX_PENDING), "-b", str(BATCH_DELAY_MS),
                "--batching-num-messages", str(n), "--batching-max-size", str(BATCH_BYTES // 1024),
                topic]

    def latency(self, out, window):
        # Its first 10 s after the producer was created, start-up included.
        m = re.search(r"Latency ms: 50% +([\d.]+) -95% +[\d.]+ - 99% +([\d.]+)", out)
        return (float(m.group(1)), float(m.group(2))) if m else (None, None)


class Cpp(Tool):
    name = "cpp"
    marker = "†"

    def skip_reason(self, case):
        if case.chunked:
            return "perfProducer has no chunking switch"
        return super().skip_reason(case)

    def argv(self, case, url, topic):
        a = [self.path, "-u", url, "--sampling-period", "1", "-r", str(case.rate or -1),
             "-p", str(MAX_PENDING), "-s", str(case.size)]
        if case.batched:
            a += ["--batch-size", str(BATCH_MSGS), "--max-batch-size-in-bytes", str(BATCH_BYTES),
                  "--max-batch-publish-delay-in-ms", str(BATCH_DELAY_MS)]
        else:
            a += ["--batching-enabled", "false"]
        if case.topics > 1:
            a += ["-t", str(case.topics)]  # topic-0 .. topic-(n-1), one thread each
        if case.tls:
            # It accepts any certificate unless told otherwise (--allow-insecure defaults
            # to true); like pulsarc it verifies against the run's CA. It does not check
            # the host name (its tlsValidateHostname defaults to false).
            a += ["--trust-cert-file", self.trust, "--allow-insecure", "false"]
        return a + [topic]

    def latency(self, out, window):
        # It prints the mean and p99 of each second; no median. Medians of the seconds
        # inside the measured window.
        pairs = re.findall(r"Lat avg: ([\d.e+-]+) ms -- Lat 99pct: ([\d.e+-]+) ms", window)
        if not pairs:
            return None, None
        return (statistics.median(float(a) for a, _ in pairs),
                statistics.median(float(b) for _, b in pairs))


# ---- measuring a process ---------------------------------------------------------------

def proc_tree(pid):
    children = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/stat") as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
                children.setdefault(ppid, []).append(int(d))
            except (OSError, IndexError, ValueError):
                pass
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(children.get(p, []))
    return out


def cpu_seconds(pid):
    total = 0
    for p in proc_tree(pid):
        try:
            with open(f"/proc/{p}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])  # utime, stime
        except (OSError, IndexError, ValueError):
            pass
    return total / CLK_TCK


def peak_rss_mib(pid):
    best = 0
    for p in proc_tree(pid):
        try:
            with open(f"/proc/{p}/status") as f:
                m = re.search(r"^VmHWM:\s+(\d+) kB", f.read(), re.M)
            if m:
                best = max(best, int(m.group(1)))
        except OSError:
            pass
    return best / 1024


# ---- counting at the broker ------------------------------------------------------------

class NullBroker:
    def __init__(self, binary, logdir, tag, partitions=0, tls=None):
        """tls: (certificate file, key file) to serve TLS."""
        self.port = free_port()
        self.out_path = os.path.join(logdir, f"{tag}.nullbroker.log")
        self.out = open(self.out_path, "w")
        argv = [binary, "-p", str(self.port), "--partitions", str(partitions)]
        if tls:
            argv += ["--tls-cert", tls[0], "--tls-key", tls[1]]
        self.proc = subprocess.Popen(argv, stdout=self.out, stderr=subprocess.STDOUT)
        wait_for(lambda: "listening" in read(self.out_path), 10, "null broker start")
        self.url = f"{'pulsar+ssl' if tls else 'pulsar'}://127.0.0.1:{self.port}"

    def sample(self):
        """(messages, payload bytes) so far."""
        before = read(self.out_path).count("NULLBROKER")
        self.proc.send_signal(signal.SIGUSR1)
        wait_for(lambda: read(self.out_path).count("NULLBROKER") > before, 5, "null broker sample")
        line = read(self.out_path).strip().splitlines()[-1]
        kv = dict(p.split("=", 1) for p in line.split()[1:])
        self.last = kv
        return int(kv["msgs"]), int(kv["payload_bytes"])

    def creation_s(self, producers):
        """Seconds from the client's first CONNECT to the broker's answer to its last
        PRODUCER, once `producers` were registered; None before that."""
        kv = getattr(self, "last", {})
        if int(kv.get("producers", 0)) < producers:
            return None
        return float(kv["last_producer_mono_s"]) - float(kv["first_connect_mono_s"])

    def stop(self):
        self.proc.send_signal(signal.SIGINT)
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.out.close()


class RealBroker:
    def __init__(self, url, admin, topic, topics=1):
        self.url, self.admin = url, admin
        names = [topic] if topics == 1 else [f"{topic}-{i}" for i in range(topics)]
        self.paths = ["/admin/v2/" + t.replace("://", "/") for t in names]

    def sample(self):
        msgs = nbytes = 0
        for path in self.paths:
            try:
                with urllib.request.urlopen(self.admin + path + "/stats", timeout=10) as r:
                    s = json.load(r)
                msgs += int(s.get("msgInCounter", 0))
                nbytes += int(s.get("bytesInCounter", 0))
            except urllib.error.HTTPError as e:
                if e.code != 404:  # 404: not created yet
                    raise
        return msgs, nbytes

    def creation_s(self, producers):
        return None  # the broker's stats do not say when a producer registered

    def stop(self):
        # Every run has its own topics; drop them so the broker's disk does not fill.
        for path in self.paths:
            req = urllib.request.Request(self.admin + path + "?force=true", method="DELETE")
            try:
                urllib.request.urlopen(req, timeout=30).close()
            except urllib.error.URLError as e:
                print(f"    (could not delete {path}: {e})", file=sys.stderr)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def read(path):
    with open(path, errors="replace") as f:
        return f.read()


def wait_for(pred, timeout, what):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred():
            return
        time.sleep(0.05)
    raise RuntimeError(f"timed out waiting for {what}")


# ---- one run ---------------------------------------------------------------------------

def logical(case, msgs, nbytes):
    """Messages as the application sees them: a chunked message is counted by its bytes."""
    return nbytes / case.size if case.chunked else msgs


def run_one(args, tool, case, target, rep, seq):
    tag = f"{seq:03d}-{target}-{case.key}-{tool.name.replace(' ', '-')}-{rep}"
    topic = f"persistent://public/default/compare-{os.getpid()}-{tag}"
    tls = (args.tls_cert, args.tls_key) if case.tls else None
    broker = (NullBroker(args.null_broker, args.logdir, tag, case.partitions, tls)
              if target == "null" else RealBroker(args.broker_url, args.admin_url, topic, case.topics))
    out_path = os.path.join(args.logdir, f"{tag}.log")
    res = {"target": target, "case": case.key, "tool": tool.name, "rep": rep, "log": out_path}
    proc = None
    try:
        with open(out_path, "w") as out:
            started = time.monotonic()
            proc = subprocess.Popen(tool.argv(case, broker.url, topic), stdout=out,
                                    stderr=subprocess.STDOUT, start_new_session=True)
            # Sending has begun when the broker has seen a message.
            deadline = started + args.start_timeout
            while logical(case, *broker.sample()) <= 0:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("no message reached the broker")
                time.sleep(0.1)
            time.sleep(args.warmup + tool.extra_warmup_s)
            m0, b0 = broker.sample()
            c0, t0, off0 = cpu_seconds(proc.pid), time.monotonic(), os.path.getsize(out_path)
            time.sleep(args.duration)
            m1, b1 = broker.sample()
            c1, t1, off1 = cpu_seconds(proc.pid), time.monotonic(), os.path.getsize(out_path)
            rss = peak_rss_mib(proc.pid)
            created = broker.creation_s(case.topics)
            if proc.poll() is not None:
                raise RuntimeError(f"exited early with {proc.returncode}")
            rest = (tool.min_life_s if rep == 1 else 0) - (time.monotonic() - started)
            if rest > 0:
                time.sleep(rest)
        stop_tool(proc)
        text = read(out_path)
        window = text.encode()[off0:off1].decode(errors="replace")
        dt = t1 - t0
        rate = logical(case, m1 - m0, b1 - b0) / dt
        p50, p99 = tool.latency(text, window)
        res.update(ok=True, msg_s=rate, mib_s=rate * case.size / MIB, cpu_s=c1 - c0,
                   cpu_s_per_m=(c1 - c0) / (rate * dt) * 1e6 if rate else None,
                   p50_ms=p50, p99_ms=p99, rss_mib=rss, seconds=dt, create_s=created)
        if case.tls:
            res["tls"] = getattr(broker, "last", {}).get("tls_last")
    except (RuntimeError, OSError) as e:
        res.update(ok=False, error=str(e))
    finally:  # also on Ctrl-C: leave no client or null broker behind
        if proc is not None:
            stop_tool(proc)
        broker.stop()
    return res


def stop_tool(proc):
    if proc.poll() is not None:
        return
    # SIGINT to the whole group: each tool then flushes and prints its summary.
    os.killpg(proc.pid, signal.SIGINT)
    try:
        proc.wait(20)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def run_loopback(args):
    out = subprocess.run([args.loopback, "-d", str(args.duration)], capture_output=True,
                         text=True, check=True).stdout
    return float(re.search(r"mib_per_s=([\d.]+)", out).group(1))


def run_openssl_speed(args, cipher="aes-128-gcm"):
    """MiB/s of one core encrypting 16 KiB blocks with cipher (openssl speed -evp)."""
    out = subprocess.run(["openssl", "speed", "-evp", cipher, "-bytes", "16384", "-seconds",
                          str(max(1, round(args.duration)))], capture_output=True, text=True,
                         check=True).stdout
    # The last line: "AES-128-GCM    4288603.02k", in thousands of bytes per second.
    m = re.search(r"^\S+\s+([\d.]+)k\s*$", out.strip().splitlines()[-1])
    return float(m.group(1)) * 1000 / MIB


# ---- the table -------------------------------------------------------------------------

def med(rows, key):
    vals = [r[key] for r in rows if r.get(key) is not None]
    return statistics.median(vals) if vals else None


def fmt(v, spec):
    return "—" if v is None else format(v, spec)


def summarize(results, loopback, cases, targets, tools, aes=None):
    lines = []
    lb = statistics.median(loopback) if loopback else None
    if lb:
        lines.append(f"Loopback TCP, 1 MiB writes: {lb:,.0f} MiB/s "
                     f"(median of {len(loopback)}: {', '.join(f'{x:,.0f}' for x in loopback)})")
        lines.append("")
    aes = aes or {}
    scale = statistics.median(aes["aes-128-gcm"]) if aes.get("aes-128-gcm") else None
    for cipher, vals in aes.items():
        if vals:
            lines.append(f"openssl speed -evp {cipher}, 16 KiB blocks, one core: "
                         f"{statistics.median(vals):,.0f} MiB/s (median of {len(vals)}: "
                         f"{', '.join(f'{x:,.0f}' for x in vals)})")
    ciphers = sorted({r["tls"] for r in results if r.get("tls")})
    if ciphers:
        lines.append(f"Negotiated with the TLS null broker: {', '.join(ciphers)}")
    if aes:
        lines.append("")
    hdr = ("| broker | case | client | msg/s | MiB/s | CPU s / M msgs | p50 ms | p99 ms "
           "| peak RSS MiB | created in s | runs ok | pulsarc ÷ this | % of loopback |")
    lines += [hdr, "|" + "---|" * 13]
    summary = {}
    for target in targets:
        for case in cases:
            if target not in case.targets:
                continue
            meds = {}
            for tool in tools:
                rows = [r for r in results if r["target"] == target and r["case"] == case.key
                        and r["tool"] == tool.name]
                ok = [r for r in rows if r.get("ok")]
                if not rows:
                    continue
                meds[tool.name] = {k: med(ok, k) for k in
                                   ("msg_s", "mib_s", "cpu_s_per_m", "p50_ms", "p99_ms", "rss_mib",
                                    "create_s")}
                meds[tool.name]["runs"] = f"{len(ok)}/{len(rows)}"
                meds[tool.name]["marker"] = tool.marker
            summary[(target, case.key)] = meds
            ours = {n: m["msg_s"] for n, m in meds.items() if n.startswith("pulsarc")}
            for name, m in meds.items():
                ratio = ""
                if not name.startswith("pulsarc") and m["msg_s"]:
                    ratio = ", ".join(
                        f"{n.replace('pulsarc', '').strip() or 'copy' if len(ours) > 1 else ''} "
                        f"{v / m['msg_s']:.2f}x".strip()
                        for n, v in ours.items() if v)
                pct = ""
                if lb and target == "null" and case.size >= MIB and m["mib_s"]:
                    pct = f"{100 * m['mib_s'] / lb:.0f} %"
                if case.tls and scale and case.size >= MIB and m["mib_s"]:
                    pct += f"{' / ' if pct else ''}{100 * m['mib_s'] / scale:.0f} % of AES-128-GCM"
                p50 = fmt(m["p50_ms"], ".2f") + m["marker"]
                lines.append(
                    f"| {target} | {case.title} | {name} | {fmt(m['msg_s'], ',.0f')} "
                    f"| {fmt(m['mib_s'], ',.1f')} | {fmt(m['cpu_s_per_m'], ',.2f')} | {p50} "
                    f"| {fmt(m['p99_ms'], '.2f')}{m['marker']} | {fmt(m['rss_mib'], ',.1f')} "
                    f"| {fmt(m['create_s'], '.3f')} | {m['runs']} "
                    f"| {ratio} | {pct} |")
    for case in cases:
        for target in targets:
            meds = summary.get((target, case.key)) if case.partitions else None
            if not meds:
                continue
            rss = ", ".join(f"{name} {m['rss_mib']:,.1f} MiB" for name, m in meds.items()
                            if m.get("rss_mib") is not None)
            lines.append(f"\nPeak RSS with {case.partitions} partitions ({target} broker), "
                         f"every client's memory limit {MEMORY_LIMIT_MIB} MiB: {rss}.")
    if any(c.topics > 1 for c in cases):
        lines.append("\ncreated in: from the client's first CONNECT to the null broker's answer "
                     "to its last producer's PRODUCER (process start-up not included).")
    markers = {t.marker for t in tools}
    if "†" in markers:
        lines.append("\n† cpp prints the mean and p99 of each second, no median: its p50 column is "
                     "the mean; both are medians over the seconds of the measured window.")
    if "‡" in markers:
        lines.append("‡ go prints latency only every 10 s: from the first run of each case, its "
                     "first 10 s (start-up included).")
    return "\n".join(lines), summary, lb, scale


def check_targets(summary, lb, scale=None):
    """The issue's targets, each with the measured value and met / not met."""
    def get(target, case, tool, key):
        return summary.get((target, case), {}).get(tool, {}).get(key)

    out = []

    def verdict(what, ok, detail):
        state = "n/a (not measured)" if ok is None else ("met" if ok else "NOT met")
        out.append(f"- {what}: {state} — {detail}")

    pc, cpp = get("null", "b100", "pulsarc", "msg_s"), get("null", "b100", "cpp", "msg_s")
    verdict("100 B batched ≥ 4x the C++ client", None if not (pc and cpp) else pc >= 4 * cpp,
            f"{pc / cpp:.2f}x" if pc and cpp else "C++ peer not run")
    cpu = get("null", "b100", "pulsarc", "cpu_s_per_m")
    verdict("100 B batched < 0.4 CPU s per million", None if cpu is None else cpu < 0.4,
            fmt(cpu, ".2f"))
    u = get("null", "u100", "pulsarc", "msg_s")
    verdict("100 B unbatched ≥ 1 M msg/s", None if u is None else u >= 1e6, fmt(u, ",.0f"))
    for tool, share in (("pulsarc zero-copy", 0.8), ("pulsarc", 0.6)):
        v = get("null", "m1", tool, "mib_s")
        ok = None if v is None or not lb else v >= share * lb
        verdict(f"1 MiB {tool.replace('pulsarc', '').strip() or 'copy'} ≥ {share:.0%} of loopback",
                ok, f"{100 * v / lb:.0f} %" if v and lb else "—")
    for tool in ("pulsarc", "pulsarc zero-copy"):
        c, m = get("null", "c100m", tool, "mib_s"), get("null", "m1", tool, "mib_s")
        rss = get("null", "c100m", tool, "rss_mib")
        label = tool.replace("pulsarc", "").strip() or "copy"
        verdict(f"100 MiB chunked ({label}) at the 1 MiB rate (≥ 90 %)",
                None if not (c and m) else c >= 0.9 * m,
                f"{c:,.0f} vs {m:,.0f} MiB/s" if c and m else "—")
        verdict(f"100 MiB chunked ({label}) peak RSS ≤ payload + 10 % (110 MiB)",
                None if rss is None else rss <= 110, fmt(rss, ",.1f") + " MiB")
    p99 = get("null", "b100r1m", "pulsarc", "p99_ms")
    r = get("null", "b100r1m", "pulsarc", "msg_s")
    verdict("p99 ≤ 2 ms at 1 M msg/s (100 B batched)",
            None if p99 is None else (p99 <= 2.0 and r is not None and r >= 0.95e6),
            f"p99 {fmt(p99, '.2f')} ms at {fmt(r, ',.0f')} msg/s")
    p99 = get("null", "b100r1k", "pulsarc", "p99_ms")
    verdict(f"p99 ≤ batch delay + 0.5 ms ({BATCH_DELAY_MS + 0.5} ms) at 1 k msg/s",
            None if p99 is None else p99 <= BATCH_DELAY_MS + 0.5, f"p99 {fmt(p99, '.2f')} ms")
    for case in ("tb100", "tb1k"):
        pc, cpp = get("null", case, "pulsarc", "msg_s"), get("null", case, "cpp", "msg_s")
        verdict(f"TLS {case} ≥ 4x the C++ client", None if not (pc and cpp) else pc >= 4 * cpp,
                f"{pc / cpp:.2f}x" if pc and cpp else "C++ peer not run")
    for tool in ("pulsarc", "pulsarc zero-copy"):
        v = get("null", "tm1", tool, "mib_s")
        label = tool.replace("pulsarc", "").strip() or "copy"
        verdict(f"TLS 1 MiB ({label}) ≥ 70 % of openssl speed -evp aes-128-gcm",
                None if v is None or not scale else v >= 0.7 * scale,
                f"{100 * v / scale:.0f} % ({v:,.0f} of {scale:,.0f} MiB/s)" if v and scale else "—")
        cpp = get("null", "tm1", "cpp", "mib_s")
        verdict(f"TLS 1 MiB ({label}) ahead of the C++ client",
                None if not (v and cpp) else v > cpp,
                f"{v / cpp:.2f}x" if v and cpp else "C++ peer not run")
    for case in ("b100", "b1k"):
        pc = get("broker", case, "pulsarc", "msg_s")
        for peer in ("java", "go"):
            v = get("broker", case, peer, "msg_s")
            verdict(f"real broker {case}: pulsarc ≥ {peer}",
                    None if not (pc and v) else pc >= v,
                    f"{pc / v:.2f}x" if pc and v else "—")
    return "\n".join(out)


# ---- main ------------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin-dir", required=True, help="where pulsarc-perf, pulsarc-null-broker are")
    ap.add_argument("--peers", required=True, help="file of PEER/SKIP lines from bench/setup-peers")
    ap.add_argument("-d", "--duration", type=float, default=2.0, help="measured seconds per run")
    ap.add_argument("-w", "--warmup", type=float, default=1.0,
                    help="seconds of sending before the measured window")
    ap.add_argument("-n", "--reps", type=int, default=3, help="runs of each client and case")
    ap.add_argument("--cases", help="comma-separated keys; default: all, each on the targets "
                    "its row in CASES names; named here, on every target")
    ap.add_argument("--targets", default="null,broker")
    ap.add_argument("--clients", default="pulsarc,java,go,cpp")
    ap.add_argument("--broker-url", default="pulsar://127.0.0.1:6650")
    ap.add_argument("--admin-url", default="http://127.0.0.1:8080")
    ap.add_argument("--start-timeout", type=float, default=60.0)
    ap.add_argument("--out", required=True, help="directory for logs and results")
    ap.add_argument("--tls-dir", help="ca.cert.pem, broker.cert.pem and broker.key.pem for the "
                    "TLS cases (bench/compare makes them)")
    args = ap.parse_args()

    args.null_broker = os.path.join(args.bin_dir, "pulsarc-null-broker")
    args.loopback = os.path.join(args.bin_dir, "pulsarc-loopback")
    perf = os.path.join(args.bin_dir, "pulsarc-perf")
    args.logdir = os.path.join(args.out, "logs")
    os.makedirs(args.logdir, exist_ok=True)
    if args.tls_dir:
        Tool.trust = os.path.join(args.tls_dir, "ca.cert.pem")
        args.tls_cert = os.path.join(args.tls_dir, "broker.cert.pem")
        args.tls_key = os.path.join(args.tls_dir, "broker.key.pem")

    wanted = args.clients.split(",")
    tools = []
    if "pulsarc" in wanted:
        tools += [Pulsarc(perf, False), Pulsarc(perf, True)]
    kinds = {"java": Java, "go": Go, "cpp": Cpp}
    for line in read(args.peers).splitlines():
        kind, name, rest = (line.split(" ", 2) + [""])[:3]
        if name not in wanted:
            continue
        if kind == "PEER":
            tools.append(kinds[name](rest))
        else:
            print(f"skipping {name}: {rest}")
    targets = args.targets.split(",")
    if args.cases:
        keys = args.cases.split(",")
        unknown = set(keys) - {c.key for c in CASES}
        if unknown:
            sys.exit(f"unknown case(s): {', '.join(sorted(unknown))}")
        cases = [Case(**{**c.__dict__, "targets": tuple(targets)}) for c in CASES if c.key in keys]
    else:
        cases = CASES
    if any(c.tls for c in cases) and not args.tls_dir:
        sys.exit("TLS cases need --tls-dir")

    plan, told = [], set()
    for target in targets:
        for rep in range(1, args.reps + 1):
            for case in cases:
                if target not in case.targets:
                    continue
                if case.tls and target != "null":
                    if (case.key, target) not in told:
                        print(f"skipping {case.title} on the {target} broker: it speaks clear text")
                        told.add((case.key, target))
                    continue
                for tool in tools:
                    reason = tool.skip_reason(case)
                    if reason:
                        if (tool.name, case.key) not in told and tool.name != "pulsarc zero-copy":
                            print(f"skipping {tool.name} for {case.title}: {reason}")
                            told.add((tool.name, case.key))
                        continue
                    plan.append((tool, case, target, rep))
    print(f"{len(plan)} runs of {args.warmup:g} + {args.duration:g} s (after start-up); "
          f"logs in {args.logdir}", flush=True)

    results, loopback = [], []
    aes = {"aes-128-gcm": [], "aes-256-gcm": []}
    jsonl = open(os.path.join(args.out, "runs.jsonl"), "w")
    last_group = None
    for seq, (tool, case, target, rep) in enumerate(plan, 1):
        # The ceiling right before each round of a large-message case, so it sees the
        # same load on the machine as the runs it is compared with.
        if target == "null" and case.size >= MIB and (case.key, rep) != last_group:
            loopback.append(run_loopback(args))
            print(f"[{seq:3d}/{len(plan)}] loopback: {loopback[-1]:,.0f} MiB/s", flush=True)
        # And the cipher's speed before each round of a TLS case: AES-128-GCM is the
        # issue's scale; AES-256-GCM is what OpenSSL's defaults negotiate (both ends).
        if case.tls and (case.key, rep) != last_group:
            for cipher in aes:
                aes[cipher].append(run_openssl_speed(args, cipher))
                print(f"[{seq:3d}/{len(plan)}] openssl speed -evp {cipher}: "
                      f"{aes[cipher][-1]:,.0f} MiB/s", flush=True)
        last_group = (case.key, rep)
        r = run_one(args, tool, case, target, rep, seq)
        results.append(r)
        jsonl.write(json.dumps(r) + "\n")
        jsonl.flush()
        if r["ok"]:
            print(f"[{seq:3d}/{len(plan)}] {target:6s} {case.title:27s} {tool.name:18s} "
                  f"{r['msg_s']:12,.0f} msg/s {r['mib_s']:9,.1f} MiB/s "
                  f"cpu/M {fmt(r['cpu_s_per_m'], ',.2f')} p50 {fmt(r['p50_ms'], '.2f')} "
                  f"p99 {fmt(r['p99_ms'], '.2f')} rss {r['rss_mib']:.0f}"
                  + (f" created {r['create_s']:.3f} s" if r.get("create_s") is not None else ""),
                  flush=True)
        else:
            print(f"[{seq:3d}/{len(plan)}] {target:6s} {case.title:27s} {tool.name:18s} "
                  f"FAILED: {r['error']} (log {r['log']})", flush=True)

    table, summary, lb, scale = summarize(results, loopback, cases, targets, tools,
                                          aes if any(aes.values()) else None)
    report = (f"{table}\n\nTargets from issues 12 and 30 (null broker unless said):\n"
              f"{check_targets(summary, lb, scale)}\n")
    with open(os.path.join(args.out, "table.md"), "w") as f:
        f.write(report)
    print()
    print(report)
    print(f"(also in {os.path.join(args.out, 'table.md')}, every run in runs.jsonl)")


if __name__ == "__main__":
    main()
