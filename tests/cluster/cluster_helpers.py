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
import re
import socket
import ssl
import subprocess
import urllib.error
import urllib.parse
import urllib.request
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

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


def create_namespace(c: Cluster, bundles: int, prefix: str = "rig") -> str:
    """A fresh namespace public/<prefix>-<random> split into `bundles` bundles."""
    ns = f"public/{prefix}-{uuid.uuid4().hex[:8]}"
    admin(c.admin_url, "PUT", f"/admin/v2/namespaces/{ns}", {"bundles": {"numBundles": bundles}})
    return ns


def bundle_of(c: Cluster, topic: str) -> str:
    """The bundle range ('0x40000000_0x60000000') a topic (or partition) hashes to."""
    return admin(c.admin_url, "GET", f"/lookup/v2/topic/{ph.topic_rest_path(topic)}/bundle")


def place_bundle(c: Cluster, namespace: str, bundle: str, b: Broker) -> None:
    """Make broker b the next owner of the bundle: the leader's load manager gives the
    bundle to it at its next assignment (the admin API's unload with destinationBroker;
    the bundle is unloaded too when someone owns it)."""
    q = urllib.parse.urlencode({"destinationBroker": broker_id(c, b)})
    admin(c.admin_url, "PUT", f"/admin/v2/namespaces/{namespace}/{bundle}/unload?{q}")


def lookup(c: Cluster, topic: str, via: Broker | None = None, listener: str | None = None) -> dict:
    """The HTTP lookup of a topic through broker `via`: {'brokerUrl', 'brokerUrlTls',
    'httpUrl', ...}; with `listener`, that listener's addresses."""
    q = "?" + urllib.parse.urlencode({"listenerName": listener}) if listener else ""
    return admin((via or c.brokers[0]).admin_url, "GET", f"/lookup/v2/topic/{ph.topic_rest_path(topic)}{q}")


def owner(c: Cluster, topic: str, via: Broker | None = None, listener: str | None = None) -> Broker:
    """The broker that owns the topic (or partition), by lookup (which assigns an
    unowned bundle), optionally for one listener: see topic_on() for why."""
    return c.broker_by_port(port_of(lookup(c, topic, via, listener)["brokerUrl"]))


def owned_bundles(c: Cluster, b: Broker) -> set[str]:
    """'namespace/range' of every bundle broker b says it owns (admin API)."""
    owned = admin(b.admin_url, "GET", f"/admin/v2/brokers/{c.name}/{broker_id(c, b)}/ownedNamespaces")
    return set(owned)


def topic_on(c: Cluster, b: Broker, prefix: str = "on-broker", listener: str | None = None) -> str:
    """A fresh non-partitioned topic owned by broker b: its own namespace of one bundle,
    placed on b before anything looks it up; the lookup that assigns it asks for
    `listener`.

    Ask for the listener the test will use. Pulsar 4.0.8's NamespaceService shares one
    lookup in progress per bundle, whatever listener each caller asked for, and forgets
    it only in a task queued after it completes: a lookup that follows another of the
    same bundle on the same broker at once can get the other one's listener's
    addresses (seen here: an `external` lookup answered with the `internal` address)."""
    ns = create_namespace(c, 1, prefix)
    topic = ph.unique_topic(prefix, namespace=ns)
    place_bundle(c, ns, bundle_of(c, topic), b)
    assert owner(c, topic, listener=listener) == b
    return topic


def spread_partitioned_topic(c: Cluster, partitions: int = 6, bundles: int = 8,
                             prefix: str = "spread") -> tuple[str, list[Broker]]:
    """A fresh partitioned topic whose partitions are owned by every broker of the rig,
    deterministically: in a namespace of `bundles` bundles, a name is picked whose
    partitions fall into at least as many bundles as there are brokers, and those bundles
    are placed on the brokers in turn before any lookup. Returns (topic, the owner of
    each partition)."""
    ns = create_namespace(c, bundles, prefix)
    for _ in range(50):
        topic = ph.unique_topic(prefix, namespace=ns)
        per_partition = [bundle_of(c, ph.partition_name(topic, i)) for i in range(partitions)]
        distinct = sorted(set(per_partition))
        if len(distinct) >= len(c.brokers):
            break
    else:
        raise AssertionError(f"no topic name spread over {len(c.brokers)} bundles of {ns}")
    placed = {bundle: c.brokers[i % len(c.brokers)] for i, bundle in enumerate(distinct)}
    for bundle, b in placed.items():
        place_bundle(c, ns, bundle, b)
    admin(c.admin_url, "PUT", f"/admin/v2/{ph.topic_rest_path(topic)}/partitions", partitions)
    owners = [owner(c, ph.partition_name(topic, i)) for i in range(partitions)]
    assert owners == [placed[b] for b in per_partition], (owners, placed)
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


def sni_certificate_names(c: Cluster, server_name: str, timeout_s: float = 10) -> set[str]:
    """Open TLS to the SNI router with `server_name` as SNI, verify the certificate that
    comes back against the rig's CA and that name, and return its DNS names."""
    host, port = c.sni_proxy_url.split("://", 1)[1].rsplit(":", 1)
    ctx = ssl.create_default_context(cafile=c.ca)
    with socket.create_connection((host, int(port)), timeout=timeout_s) as raw:
        with ctx.wrap_socket(raw, server_hostname=server_name) as tls:
            cert = tls.getpeercert()
    return {v for k, v in cert.get("subjectAltName", ()) if k == "DNS"}
