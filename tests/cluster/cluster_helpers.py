"""Helpers for the tests against the cluster rig (scripts/cluster): where its parts
listen, the admin API across brokers (which answers with redirects to the owner or the
leader), deterministic bundle placement, and which TCP peers this process talks to.

The addresses come from the exports of `scripts/cluster env` (scripts/test evals it);
without them the script is asked directly, so `pytest tests/cluster` works on its own
once `scripts/cluster start` has run. The general helpers (official client, reading
back, topic names, the programs under test) are tests/interop/pulsar_helpers.py.
"""

from __future__ import annotations

import json
import os
import queue
import re
import socket
import ssl
import subprocess
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pulsar

import pulsar_helpers as ph

CLUSTER_SCRIPT = ph.REPO_ROOT / "scripts" / "cluster"


@dataclass(frozen=True)
class Broker:
    n: int
    url: str               # `internal` listener, plain: pulsar://127.0.0.1:67N0
    external_url: str      # `external` listener, plain: pulsar://localhost:67N1
    tls_url: str           # `internal` listener, TLS: pulsar+ssl://localhost:67N2
    external_tls_url: str  # `external` listener, TLS: pulsar+ssl://brokerN.pulsarc.test:67N2
    sni_host: str          # brokerN.pulsarc.test: resolves nowhere, routed by HAProxy
    admin_url: str         # http://127.0.0.1:87N0

    def __repr__(self) -> str:
        return f"broker{self.n}"

    @property
    def port(self) -> int:
        return port_of(self.url)

    @property
    def external_port(self) -> int:
        return port_of(self.external_url)

    @property
    def tls_port(self) -> int:
        return port_of(self.tls_url)


@dataclass(frozen=True)
class Cluster:
    name: str
    brokers: tuple[Broker, ...]
    service_url: str       # every broker's internal address: pulsar://h:p,h:p
    admin_url: str
    proxy_url: str
    proxy_http_url: str
    sni_proxy_url: str
    ca: str

    def broker(self, n: int) -> Broker:
        return self.brokers[n - 1]

    def broker_by_port(self, port: int) -> Broker:
        for b in self.brokers:
            if port in (b.port, b.external_port, b.tls_port, port_of(b.admin_url)):
                return b
        raise KeyError(f"no broker of the rig listens on port {port}")


def port_of(url: str) -> int:
    return int(url.rsplit(":", 1)[1].split("/")[0])


def _env() -> dict:
    if "PULSAR_CLUSTER_SERVICE_URL" in os.environ:
        return dict(os.environ)
    out = subprocess.run([str(CLUSTER_SCRIPT), "env"], capture_output=True, text=True, check=True).stdout
    return dict(re.findall(r"^export ([A-Z0-9_]+)=(.*)$", out, re.M))


def cluster() -> Cluster:
    e = _env()
    brokers = tuple(
        Broker(n=i,
               url=e[f"PULSAR_CLUSTER_BROKER{i}_URL"],
               external_url=e[f"PULSAR_CLUSTER_BROKER{i}_EXTERNAL_URL"],
               tls_url=e[f"PULSAR_CLUSTER_BROKER{i}_TLS_URL"],
               external_tls_url=e[f"PULSAR_CLUSTER_BROKER{i}_EXTERNAL_TLS_URL"],
               sni_host=e[f"PULSAR_CLUSTER_BROKER{i}_SNI_HOST"],
               admin_url=e[f"PULSAR_CLUSTER_BROKER{i}_ADMIN_URL"])
        for i in range(1, int(e["PULSAR_CLUSTER_BROKERS"]) + 1))
    return Cluster(name=e["PULSAR_CLUSTER_NAME"], brokers=brokers,
                   service_url=e["PULSAR_CLUSTER_SERVICE_URL"], admin_url=e["PULSAR_CLUSTER_ADMIN_URL"],
                   proxy_url=e["PULSAR_CLUSTER_PROXY_URL"], proxy_http_url=e["PULSAR_CLUSTER_PROXY_HTTP_URL"],
                   sni_proxy_url=e["PULSAR_CLUSTER_SNI_PROXY_URL"], ca=e["PULSAR_CLUSTER_CA"])


def run_cluster_script(*args: str, timeout_s: float = 300) -> str:
    """scripts/cluster ARGS (kill-broker N, start-broker N, ...); raises AssertionError
    with its output when it fails."""
    proc = subprocess.run([str(CLUSTER_SCRIPT), *args], capture_output=True, text=True, timeout=timeout_s)
    if proc.returncode != 0:
        raise AssertionError(f"scripts/cluster {' '.join(args)} exited with {proc.returncode}\n"
                             f"{proc.stdout}\n{proc.stderr}")
    return proc.stdout + proc.stderr


# --------------------------------------------------------------------------------------
# Admin API across brokers
# --------------------------------------------------------------------------------------

class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None  # a 3xx becomes an HTTPError; admin() follows it, whatever the method


_opener = urllib.request.build_opener(_NoRedirect)


def admin(base: str, method: str, path: str, body: Any = None, timeout_s: float = 30):
    """The admin API of the broker at `base`, following its redirects (to the topic's
    owner, or to the leader) with the same method and body, as pulsar-admin does.
    Returns parsed JSON, text, or None; raises ph.AdminError on HTTP >= 400."""
    url = base.rstrip("/") + path
    data = None if body is None else json.dumps(body).encode()
    headers = {"Accept": "application/json"} | ({} if data is None else {"Content-Type": "application/json"})
    for _ in range(5):
        req = urllib.request.Request(url, data=data, method=method, headers=headers)
        try:
            with _opener.open(req, timeout=timeout_s) as resp:
                payload = resp.read()
        except urllib.error.HTTPError as e:
            if e.code in (301, 302, 307, 308) and e.headers.get("Location"):
                url = urllib.parse.urljoin(url, e.headers["Location"])
                continue
            raise ph.AdminError(method, url, e.code, e.read().decode(errors="replace")) from None
        text = payload.decode(errors="replace")
        try:
            return json.loads(text) if text else None
        except ValueError:
            return text  # some answers are plain text (a bundle range)
    raise AssertionError(f"{method} {base}{path}: too many redirects")


def broker_ids(c: Cluster, via: Broker | None = None) -> list[str]:
    """The brokers registered in the cluster, as the admin API names them (host:port of
    their HTTP listener), seen by broker `via` (default: the first)."""
    return sorted(admin((via or c.brokers[0]).admin_url, "GET", f"/admin/v2/brokers/{c.name}"))


def broker_id(c: Cluster, b: Broker) -> str:
    """Broker b's id in the admin API, found by its HTTP port."""
    ids = [i for i in broker_ids(c) if port_of(i) == port_of(b.admin_url)]
    assert len(ids) == 1, f"broker {b.n} not (or twice) in {broker_ids(c)}"
    return ids[0]


def create_namespace(c: Cluster, bundles: int, prefix: str = "rig", dedup: bool = False) -> str:
    """A fresh namespace public/<prefix>-<random> split into `bundles` bundles; with
    `dedup`, deduplication is on for it (a namespace policy, set before any topic loads:
    see DEDUP_NAMESPACE in tests/interop/pulsar_helpers.py for why never per topic)."""
    ns = f"public/{prefix}-{uuid.uuid4().hex[:8]}"
    admin(c.admin_url, "PUT", f"/admin/v2/namespaces/{ns}", {"bundles": {"numBundles": bundles}})
    if dedup:
        admin(c.admin_url, "POST", f"/admin/v2/namespaces/{ns}/deduplication", True)
    return ns


def bundle_of(c: Cluster, topic: str) -> str:
    """The bundle range ('0x40000000_0x60000000') a topic (or partition) hashes to."""
    return admin(c.admin_url, "GET", f"/lookup/v2/topic/{ph.topic_rest_path(topic)}/bundle")


def place_bundle(c: Cluster, namespace: str, bundle: str, b: Broker) -> None:
    """Make broker b the next owner of the bundle: the leader's load manager gives the
    bundle to it at its next assignment (the admin API's unload with destinationBroker;
    the bundle is unloaded too when someone owns it). The leader keys the placement by
    the range alone and forgets it at the first assignment of that range in any
    namespace: assign the bundle before anything else may look up an unowned bundle of
    the same range (see spread_partitioned_topic())."""
    q = urllib.parse.urlencode({"destinationBroker": broker_id(c, b)})
    admin(c.admin_url, "PUT", f"/admin/v2/namespaces/{namespace}/{bundle}/unload?{q}")


def lookup(c: Cluster, topic: str, via: Broker | None = None, listener: str | None = None) -> dict:
    """The HTTP lookup of a topic through broker `via`: {'brokerUrl', 'brokerUrlTls',
    'httpUrl', ...}; with `listener`, that listener's addresses."""
    q = "?" + urllib.parse.urlencode({"listenerName": listener}) if listener else ""
    return admin((via or c.brokers[0]).admin_url, "GET", f"/lookup/v2/topic/{ph.topic_rest_path(topic)}{q}")


def owner(c: Cluster, topic: str, via: Broker | None = None, listener: str | None = None) -> Broker:
    """The broker that owns the topic (or partition), by lookup (which assigns an
    unowned bundle), optionally for one listener: either listener's address names the
    same broker."""
    return c.broker_by_port(port_of(lookup(c, topic, via, listener)["brokerUrl"]))


def owned_bundles(c: Cluster, b: Broker) -> set[str]:
    """'namespace/range' of every bundle broker b says it owns (admin API)."""
    owned = admin(b.admin_url, "GET", f"/admin/v2/brokers/{c.name}/{broker_id(c, b)}/ownedNamespaces")
    return set(owned)


def topic_on(c: Cluster, b: Broker, prefix: str = "on-broker", listener: str | None = None) -> str:
    """A fresh non-partitioned topic owned by broker b: its own namespace of one bundle,
    placed on b before anything looks it up; the lookup that assigns it asks for
    `listener`. Returns once the broker's own lookups of the bundle are over (see
    settle()), so that what the test looks up next is answered for its listener."""
    ns = create_namespace(c, 1, prefix)
    topic = ph.unique_topic(prefix, namespace=ns)
    bundle = bundle_of(c, topic)
    place_bundle(c, ns, bundle, b)
    assert owner(c, topic, listener=listener) == b
    settle(c, ns, {bundle: b})
    return topic


def events_topic(namespace: str) -> str:
    """The namespace's system topic of topic-level policies (topicLevelPoliciesEnabled)."""
    return f"persistent://{namespace}/__change_events"


def settle(c: Cluster, namespace: str, placed: dict[str, Broker], timeout_s: float = 30) -> None:
    """Wait until every broker that owns a bundle of the namespace has subscribed its
    reader of the namespace's topic policies (events_topic). placed: every owned bundle
    and its owner, the bundle of events_topic among them.

    Why: a broker that gets a bundle of a namespace starts that reader at once, and its
    own client (which names no listener, so gets the internal addresses) looks up
    events_topic, in one of the namespace's bundles. Pulsar 4.0.8's NamespaceService
    keeps one lookup in progress per bundle and gives it to every lookup of that bundle
    that comes meanwhile, whatever listener each asked for (findBrokerServiceUrl: a map
    keyed by bundle alone; the entry goes in a task queued after it completes). A test's
    `external` lookup that arrived then was answered with the internal address (seen on
    the rig: about one lookup in 80). Once the reader has subscribed, its lookup is over.

    The subscriptions are asked of the owner of events_topic with authoritative=true:
    the broker checks that it owns the topic through the same map, and authoritative
    lookups have a map of their own, which the tests' lookups of owned bundles never
    use. Until the reader is there the topic may not exist yet (404): not yet."""
    events = events_topic(namespace)
    holder = placed[bundle_of(c, events)]
    want = len(set(placed.values()))
    path = f"/admin/v2/{ph.topic_rest_path(events)}/stats?authoritative=true"

    def readers() -> int:
        subs = admin(holder.admin_url, "GET", path)["subscriptions"]
        return sum(1 for name in subs if name.startswith("__system_reader"))

    ph.wait_for(lambda: readers() >= want, timeout_s=timeout_s,
                what=f"the topic-policies readers of {namespace} on {want} broker(s)")


def spread_partitioned_topic(c: Cluster, partitions: int = 6, bundles: int = 8,
                             prefix: str = "spread", dedup: bool = False,
                             listener: str | None = None) -> tuple[str, list[Broker]]:
    """A fresh partitioned topic whose partitions are owned by every broker of the rig,
    deterministically: in a namespace of `bundles` bundles (deduplicated with `dedup`), a
    name is picked whose partitions fall into at least as many bundles as there are
    brokers and never into the bundle of the namespace's events_topic; the bundles are
    placed on the brokers in turn, the events bundle is assigned first, then the
    partitions' (asking for `listener`); it returns once the brokers' own lookups of the
    events bundle are over (see settle()). Returns (topic, the owner of each partition).

    Why this order: Pulsar (4.0.8, ModularLoadManagerImpl) assigns an unowned bundle
    safely to one lookup at a time only. When a second lookup of the same bundle reaches
    the leader after the first was sent on to the placed broker but before that broker
    has taken the bundle's lock, the leader picks a broker by load (the placement is used
    up by the first) and that broker's attempt fails: "Failed to acquire ownership ...
    LockBusyException" (HTTP 500), or it wins the lock and the bundle lands on the wrong
    broker. Two lookups through different brokers at once hit it in about a third of the
    tries (seen on the rig). Each broker that takes a bundle of the namespace looks up
    events_topic at once, so a partition in the events bundle raced those lookups (seen in
    CI: partition 3's lookup failed so). Taking the events bundle first, before any broker
    owns a bundle of the namespace (so before any of those lookups), and keeping the
    partitions out of it leaves the test's lookups the only ones of their bundles."""
    ns = create_namespace(c, bundles, prefix, dedup=dedup)
    events = events_topic(ns)
    events_bundle = bundle_of(c, events)
    for _ in range(50):
        topic = ph.unique_topic(prefix, namespace=ns)
        per_partition = [bundle_of(c, ph.partition_name(topic, i)) for i in range(partitions)]
        distinct = sorted(set(per_partition))
        if len(distinct) >= len(c.brokers) and events_bundle not in distinct:
            break
    else:
        raise AssertionError(f"no topic name spread over {len(c.brokers)} bundles of {ns} "
                             f"outside the events bundle {events_bundle}")
    placed = {bundle: c.brokers[i % len(c.brokers)] for i, bundle in enumerate(distinct)}
    # The events bundle on a broker that owns partitions anyway, so settle() waits for
    # one reader per broker.
    placed[events_bundle] = placed[distinct[0]]
    for bundle, b in placed.items():
        place_bundle(c, ns, bundle, b)
    assert owner(c, events) == placed[events_bundle]
    admin(c.admin_url, "PUT", f"/admin/v2/{ph.topic_rest_path(topic)}/partitions", partitions)
    owners = [owner(c, ph.partition_name(topic, i), listener=listener) for i in range(partitions)]
    assert owners == [placed[b] for b in per_partition], (owners, placed)
    settle(c, ns, placed)
    return topic, owners


# --------------------------------------------------------------------------------------
# Whom this process talks to
# --------------------------------------------------------------------------------------

def tcp_connections(pid: int | str = "self") -> set[tuple[int, int]]:
    """(local port, remote port) of each established TCP connection of a process
    (default: this one, where the official client's C++ core runs), from /proc: its
    socket inodes matched against /proc/net/tcp and tcp6. Compare the sets before and
    after to see the connections something opened."""
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    conns = set()
    for table in ("tcp", "tcp6"):
        path = Path(f"/proc/{pid}/net/{table}")
        if not path.exists():
            continue
        for line in path.read_text().splitlines()[1:]:
            f = line.split()
            # f[1] local and f[2] remote "HEXADDR:HEXPORT", f[3] state (01 = established),
            # f[9] inode
            if f[3] == "01" and f[9] in inodes:
                conns.add((int(f[1].rsplit(":", 1)[1], 16), int(f[2].rsplit(":", 1)[1], 16)))
    return conns


def sni_router_backends(c: Cluster, local_ports: set[int], timeout_s: float = 30) -> dict[int, str]:
    """The SNI router's backend (broker1, broker2, ...) for each client connection that
    came from one of local_ports, from HAProxy's log (scripts/cluster logs one line per
    connection when it ends: "127.0.0.1:PORT [date] pulsar_sni BACKEND/SERVER ...").
    Waits up to timeout_s for every port's line."""
    log = Path(_env()["PULSAR_CLUSTER_DIR"]) / "haproxy" / "haproxy.log"
    pattern = re.compile(r"^127\.0\.0\.1:(\d+) \[[^]]*\] pulsar_sni (\S+)/", re.M)

    def found() -> dict[int, str]:
        seen = {int(p): b for p, b in pattern.findall(log.read_text(errors="replace"))}
        return {p: seen[p] for p in local_ports if p in seen}

    return ph.wait_for(lambda: (lambda f: f if len(f) == len(local_ports) else None)(found()),
                       timeout_s=timeout_s, what=f"HAProxy log lines for ports {sorted(local_ports)}")


def sni_certificate_names(c: Cluster, server_name: str, timeout_s: float = 10) -> set[str]:
    """Open TLS to the SNI router with `server_name` as SNI, verify the certificate that
    comes back against the rig's CA and that name, and return its DNS names."""
    host, port = c.sni_proxy_url.split("://", 1)[1].rsplit(":", 1)
    ctx = ssl.create_default_context(cafile=c.ca)
    with socket.create_connection((host, int(port)), timeout=timeout_s) as raw:
        with ctx.wrap_socket(raw, server_hostname=server_name) as tls:
            cert = tls.getpeercert()
    return {v for k, v in cert.get("subjectAltName", ()) if k == "DNS"}


# --------------------------------------------------------------------------------------
# pulsarc's side: the test producer (tests/cluster/cluster_producer.c) in the background
# --------------------------------------------------------------------------------------

class ProducerRun:
    """cluster_producer URL TOPIC COUNT ARGS... running in the background: its output
    lines as they come (wait_for) and its final counts (finish). Fails, never skips,
    when it was not built."""

    def __init__(self, url: str, topic: str, count: int, *args: str):
        self.lines: list[str] = []
        self._q: queue.Queue = queue.Queue()
        self.proc = subprocess.Popen([ph.bin_path("cluster_producer"), url, topic, str(count), *args],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, text=True)
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            self._q.put(line.rstrip("\n"))
        self._q.put(None)

    def wait_for(self, prefix: str, timeout_s: float = 120) -> str:
        """The next output line that starts with prefix; AssertionError (with the
        output so far) when the program ends first or after timeout_s."""
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                line = self._q.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                raise AssertionError(f"no '{prefix}' line within {timeout_s} s:\n" + "\n".join(self.lines)) from None
            if line is None:
                self._q.put(None)
                raise AssertionError(f"cluster_producer ended before '{prefix}':\n" + "\n".join(self.lines))
            self.lines.append(line)
            if line.startswith(prefix):
                return line

    def finish(self, timeout_s: float = 300) -> dict:
        """Let a --hold run close, wait for the end; the final counts
        {'acked', 'failed', 'twice', 'missing'} (AssertionError when there are none)."""
        if self.proc.stdin:
            self.proc.stdin.close()
        line = self.wait_for("acked=", timeout_s)
        self.proc.wait(timeout=timeout_s)
        return {k: int(v) for k, v in re.findall(r"(acked|failed|twice|missing)=(\d+)", line)}

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def held_run(url: str, topic: str, count: int, *args: str) -> tuple[ProducerRun, dict, set]:
    """cluster_producer's run that holds its connections open once every message is
    acknowledged: (the run, its final counts, its TCP connections (local port, remote
    port) while it held them)."""
    run = ProducerRun(url, topic, count, "--hold", *args)
    try:
        run.wait_for("holding")
        conns = tcp_connections(run.proc.pid)
    finally:
        counts = run.finish()
    return run, counts, conns


def all_acked(n: int) -> dict:
    """cluster_producer's final counts when each of n messages had one successful
    callback."""
    return {"acked": n, "failed": 0, "twice": 0, "missing": 0}


def by_remote_port(conns: set) -> Counter:
    """How many of the connections (local port, remote port) go to each remote port."""
    return Counter(remote for _, remote in conns)


def index_of(payload: bytes) -> int:
    """The message number cluster_producer put at the start of a payload ("m<9 digits>")."""
    assert payload[:1] == b"m", payload[:20]
    return int(payload[1:10])


# --------------------------------------------------------------------------------------
# Producing at a steady rate, watching where messages arrive
# --------------------------------------------------------------------------------------

class Watcher:
    """An official consumer that notes (message index, arrival time) as messages arrive
    ("m-<index>" payloads, as Writer writes them)."""

    def __init__(self, url: str, topic: str):
        self.client = ph.make_client(url)
        self.consumer = self.client.subscribe(
            topic, "watch", consumer_type=pulsar.ConsumerType.Exclusive,
            initial_position=pulsar.InitialPosition.Earliest)
        self.arrivals: list[tuple[int, float]] = []
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while not self.stop.is_set():
            try:
                msg = self.consumer.receive(timeout_millis=100)
            except pulsar.Timeout:
                continue
            now = time.monotonic()
            with self.lock:
                self.arrivals.append((int(msg.data().split(b"-")[1]), now))
            self.consumer.acknowledge(msg)

    def count(self) -> int:
        with self.lock:
            return len(self.arrivals)

    def first_after(self, t: float) -> float | None:
        with self.lock:
            return next((at for _, at in self.arrivals if at >= t), None)

    def wait_count(self, n: int, timeout_s: float, what: str) -> None:
        ph.wait_for(lambda: self.count() >= n, timeout_s=timeout_s, interval_s=0.02,
                    what=f"{n} messages on {what} ({self.count()} so far)")

    def close(self) -> None:
        self.stop.set()
        self.thread.join(10)
        self.client.close()


class Writer:
    """Feeds a pulsarc-produce --stdin process "m-<index>" lines at `rate` per second
    until stopped; finish() closes its stdin and returns how many lines it wrote."""

    def __init__(self, proc: subprocess.Popen, rate: int):
        self.proc = proc
        self.rate = rate
        self.written = 0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        step = max(1, self.rate // 20)
        try:
            while not self.stop.is_set():
                lines = "".join(f"m-{self.written + i:07d}\n" for i in range(step))
                self.proc.stdin.write(lines.encode())
                self.proc.stdin.flush()
                self.written += step
                time.sleep(0.05)
        finally:
            self.proc.stdin.close()

    def finish(self, timeout_s: float = 120) -> tuple[int, bytes, bytes]:
        """Stop writing, close stdin, wait for the process (killed after timeout_s):
        (lines written, its stdout, its stderr)."""
        self.stop.set()
        self.thread.join(30)
        self.proc.stdin = None  # closed by the writer: communicate() must not flush it
        try:
            out, err = self.proc.communicate(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            out, err = self.proc.communicate()
        return self.written, out, err


def assert_all_sent(proc: subprocess.Popen, sent: int, out: bytes, err: bytes) -> str:
    """pulsarc-produce exited 0 and reported every line sent, none failed (each had its
    callback once); returns its log (stderr)."""
    log = err.decode(errors="replace")
    assert proc.returncode == 0, f"pulsarc-produce exited with {proc.returncode}\n{log[-4000:]}"
    m = re.search(rb"sent=(\d+) failed=(\d+)", out)
    assert m and (int(m[1]), int(m[2])) == (sent, 0), f"{out!r}\n{log[-4000:]}"
    return log


def indices(messages: list[dict]) -> list[int]:
    """The indices of "m-<index>" messages read back (ph.read_to_end), in order."""
    return [int(m["data"].split(b"-")[1]) for m in messages]


def indices_on(url: str, topic: str) -> list[int]:
    """indices() of everything stored on topic at the cluster of service URL url."""
    c = ph.make_client(url)
    try:
        return indices(ph.read_to_end(topic, client=c))
    finally:
        c.close()
