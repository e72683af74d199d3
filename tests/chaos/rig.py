"""The chaos run's rig: the cluster (scripts/cluster) with the transaction coordinator on,
the default standalone (scripts/broker) as the failover workload's second cluster, the two
fault proxies in front of the cluster's Pulsar proxy, and the namespaces and topics of
one run.

Everything is done through the project's own scripts and the brokers' admin REST API,
as a person at a shell would, so that what the run does can be repeated by hand."""

from __future__ import annotations

import gzip
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(REPO / "tests" / "interop"))   # pulsar_helpers, proxy_helpers
sys.path.insert(0, str(REPO / "tests" / "cluster"))   # cluster_helpers

import cluster_helpers as ch  # noqa: E402
import pulsar_helpers as ph  # noqa: E402
from proxy_helpers import FaultProxy  # noqa: E402

STUCK_UNLOAD_S = 30  # a bundle "being unloaded" this long after the faults is stuck (heal)

CLUSTER = REPO / "scripts" / "cluster"
BROKER = REPO / "scripts" / "broker"
STANDALONE_URL = "pulsar://127.0.0.1:6650"
STANDALONE_ADMIN = "http://127.0.0.1:8080"
PULSAR_PROXY = "127.0.0.1:6690"

# Namespace policies of a run: deduplication as a namespace policy (never per topic: see
# DEDUP_NAMESPACE in tests/interop/pulsar_helpers.py), and a retention that keeps an
# hour's run readable whatever the broker's defaults.
RETENTION = {"retentionTimeInMinutes": 24 * 60, "retentionSizeInMB": 50 * 1024}


class RigError(RuntimeError):
    pass


def script(path: Path, *args: str, timeout_s: float = 600, check: bool = True) -> subprocess.CompletedProcess:
    proc = subprocess.run([str(path), *args], capture_output=True, text=True, timeout=timeout_s)
    if check and proc.returncode != 0:
        raise RigError(f"{path.name} {' '.join(args)} exited with {proc.returncode}:\n"
                       f"{proc.stdout[-3000:]}{proc.stderr[-3000:]}")
    return proc


def cluster(*args: str, timeout_s: float = 600, check: bool = True) -> subprocess.CompletedProcess:
    return script(CLUSTER, *args, timeout_s=timeout_s, check=check)


@dataclass
class Rig:
    """What the run brought up, and what it found running (left running at the end)."""
    run_dir: Path
    log: callable
    started_cluster: bool = False
    started_standalone: bool = False
    env: dict = field(default_factory=dict)
    keyed_proxy: FaultProxy | None = None      # in front of the Pulsar proxy: keyed
    primary_proxy: FaultProxy | None = None    # in front of the Pulsar proxy: failover's primary

    # -- bringing it up ------------------------------------------------------------------
    def start(self) -> None:
        t0 = time.monotonic()
        if cluster("status", check=False).returncode == 0:
            self.log("the cluster rig is running: reusing it (with the transaction coordinator on)")
        else:
            self.log("starting the cluster rig (scripts/cluster start --transactions)")
            self.started_cluster = True
        # On a running rig without transactions this restarts its brokers one at a time.
        out = cluster("start", "--transactions", timeout_s=900)
        for line in (out.stdout + out.stderr).splitlines():
            if "restarting broker" in line or "ready in" in line:
                self.log("scripts/cluster: " + line.split("] ", 1)[-1])
        self.env = dict(re.findall(r"^export ([A-Z0-9_]+)=(.*)$", cluster("env").stdout, re.M))
        if self.env.get("PULSAR_CLUSTER_TRANSACTIONS") != "true":
            raise RigError("the cluster rig runs without the transaction coordinator")
        if script(BROKER, "status", check=False).returncode == 0:
            self.log("the standalone broker is running: reusing it (and leaving it running)")
        else:
            self.log("starting the standalone broker (scripts/broker start)")
            script(BROKER, "start", timeout_s=600)
            self.started_standalone = True
        self.log(f"rig ready in {time.monotonic() - t0:.0f} s")

    def start_fault_proxies(self) -> None:
        logs = self.run_dir / "logs"
        self.keyed_proxy = FaultProxy.start([("127.0.0.1:0", PULSAR_PROXY)],
                                            log_path=logs / "faultproxy-keyed.log")
        self.primary_proxy = FaultProxy.start([("127.0.0.1:0", PULSAR_PROXY)],
                                              log_path=logs / "faultproxy-primary.log")
        for name, p in (("keyed", self.keyed_proxy), ("primary", self.primary_proxy)):
            (self.run_dir / f"faultproxy-{name}.pid").write_text(f"{p.proc.pid}\n")
            self.log(f"fault proxy '{name}': {self.proxy_url(p)} -> {PULSAR_PROXY}, control {p.control}")

    @staticmethod
    def proxy_url(p: FaultProxy) -> str:
        host, port = p.listen_addresses[0]
        return f"pulsar://{host}:{port}"

    # -- addresses -----------------------------------------------------------------------
    @property
    def brokers(self) -> list[int]:
        return list(range(1, int(self.env["PULSAR_CLUSTER_BROKERS"]) + 1))

    @property
    def service_url(self) -> str:           # every broker, binary lookups
        return self.env["PULSAR_CLUSTER_SERVICE_URL"]

    @property
    def http_service_url(self) -> str:      # every broker, HTTP lookups
        return self.env["PULSAR_CLUSTER_HTTP_SERVICE_URL"]

    @property
    def proxy_service_url(self) -> str:     # the Pulsar proxy itself
        return self.env["PULSAR_CLUSTER_PROXY_URL"]

    def admin_url(self, n: int) -> str:
        return self.env[f"PULSAR_CLUSTER_BROKER{n}_ADMIN_URL"]

    @property
    def cluster_dir(self) -> Path:
        return Path(self.env["PULSAR_CLUSTER_DIR"])

    # -- admin ---------------------------------------------------------------------------
    def rig_admin(self, method: str, path: str, body=None, timeout_s: float = 30):
        """The admin API of whichever broker answers first (one may be down)."""
        last: Exception | None = None
        for n in self.brokers:
            try:
                return ch.admin(self.admin_url(n), method, path, body, timeout_s=timeout_s)
            except ph.AdminError as e:
                if e.status < 500:
                    raise
                last = e
            except OSError as e:
                last = e
        raise RigError(f"{method} {path}: no broker of the rig answered ({last})")

    def entry_headers(self, topic: str, ledger: int, entry: int) -> dict | None:
        """The headers the admin API gives for one stored entry (the transaction id and
        whether the topic counts it aborted, among others); None when it cannot be had.
        The broker that does not own the topic redirects to the one that does."""
        url = self.admin_url(self.brokers[0]) + "/admin/v2/" + ph.topic_rest_path(topic) + \
            f"/ledger/{ledger}/entry/{entry}"
        for _ in range(5):
            try:
                with ch._opener.open(urllib.request.Request(url), timeout=30) as resp:
                    return {k.lower(): v for k, v in resp.headers.items()}
            except urllib.error.HTTPError as e:
                if e.code in (301, 302, 307, 308) and e.headers.get("Location"):
                    url = urllib.parse.urljoin(url, e.headers["Location"])
                    continue
                return None
            except OSError:
                return None
        return None

    def buffer_stats(self, topic: str) -> dict | None:
        """The topic's transactionBufferStats (maxReadPosition, ongoingTxnSize, ...) from
        the broker that owns it; None when no broker answers for it."""
        path = "/admin/v3/transactions/transactionBufferStats/" + topic.split("://", 1)[1]
        for n in self.brokers:
            try:
                st = ch.admin(self.admin_url(n), "GET", path)
            except (ph.AdminError, OSError):
                continue
            if isinstance(st, dict) and "ongoingTxnSize" in st:
                return st
        return None

    def open_transactions(self, topics: list[str]) -> dict[str, int | None]:
        """{topic: transactions its buffer holds open (ongoingTxnSize)}, None when unknown."""
        return {t: (st or {}).get("ongoingTxnSize") for t, st in
                ((t, self.buffer_stats(t)) for t in topics)}

    def broker_logs(self) -> list[Path]:
        return [self.cluster_dir / f"broker{n}" / f"broker{n}.log" for n in self.brokers]

    @staticmethod
    def standalone_admin(method: str, path: str, body=None, timeout_s: float = 30):
        return ch.admin(STANDALONE_ADMIN, method, path, body, timeout_s=timeout_s)

    def make_namespace(self, admin, ns: str, bundles: int) -> None:
        admin("PUT", f"/admin/v2/namespaces/{ns}", {"bundles": {"numBundles": bundles}})
        admin("POST", f"/admin/v2/namespaces/{ns}/deduplication", True)
        admin("POST", f"/admin/v2/namespaces/{ns}/retention", RETENTION)

    def make_topic(self, admin, topic: str, partitions: int = 0) -> None:
        path = "/admin/v2/" + ph.topic_rest_path(topic)
        if partitions:
            admin("PUT", path + "/partitions", partitions)
        else:
            admin("PUT", path)

    def wait_dedup(self, admin, topic: str, partitions: int = 0, timeout_s: float = 120) -> None:
        """Until the broker reports deduplication on for the topic (each partition): a
        producer that registers before is not deduplicated. Asking loads the topic."""
        names = [ph.partition_name(topic, i) for i in range(partitions)] if partitions else [topic]
        for name in names:
            path = "/admin/v2/" + ph.topic_rest_path(name) + "/stats"
            ph.wait_for(lambda: admin("GET", path).get("deduplicationStatus") == "Enabled",
                        timeout_s=timeout_s, interval_s=0.5, what=f"deduplication on {name}")

    # -- the parts, for the fault scheduler ----------------------------------------------
    def pid(self, name: str) -> int | None:
        proc = cluster("pid", name, check=False, timeout_s=30)
        return int(proc.stdout.strip()) if proc.returncode == 0 and proc.stdout.strip() else None

    def broker_ready(self, n: int) -> bool:
        try:
            ch.admin(self.admin_url(n), "GET", "/admin/v2/brokers/ready", timeout_s=5)
            ids = ch.admin(self.admin_url(n), "GET", f"/admin/v2/brokers/{self.env['PULSAR_CLUSTER_NAME']}",
                           timeout_s=5)
            return any(ch.port_of(i) == ch.port_of(self.admin_url(n)) for i in ids)
        except (ph.AdminError, OSError, urllib.error.URLError, ValueError):
            return False

    def unstop_all(self) -> None:
        """SIGCONT to every part of the rig: nothing stays stopped after a run, whatever
        happened to the scheduler."""
        for name in ["zookeeper", "bookie", *[f"broker{n}" for n in self.brokers], "proxy"]:
            pid = self.pid(name)
            if pid:
                try:
                    os.kill(pid, signal.SIGCONT)
                except ProcessLookupError:
                    pass

    def heal(self) -> None:
        """Every fault off and every part up: the fault proxies forward again, the rig's
        missing parts start (scripts/cluster start waits until all are ready)."""
        self.unstop_all()
        for p in (self.keyed_proxy, self.primary_proxy):
            if p is not None:
                p.reset()
        cluster("start", "--transactions", timeout_s=900)
        if script(BROKER, "status", check=False).returncode != 0:
            raise RigError("the standalone broker is not running any more")

    def lookup_state(self, n: int, topic: str) -> str:
        """How broker n answers an HTTP lookup of topic, without following a redirect:
        ok, redirect, unloading (its bundle "is being unloaded"), or error."""
        url = self.admin_url(n) + "/lookup/v2/topic/" + ph.topic_rest_path(topic)
        try:
            with ch._opener.open(urllib.request.Request(url), timeout=10):
                return "ok"
        except urllib.error.HTTPError as e:
            if e.code in (301, 302, 307, 308):
                return "redirect"
            return "unloading" if b"is being unloaded" in e.read() else "error"
        except OSError:
            return "error"

    def restart_stuck_brokers(self, topics: list[str], wait_s: float = STUCK_UNLOAD_S) -> list[dict]:
        """A broker stopped in the middle of an unload (SIGSTOP) can keep answering that a
        bundle "is being unloaded" long after, while the metadata store still names it
        the owner: the other broker redirects there, and no client (nor the transaction
        coordinator, docs/transactions.md) gets the topic again. An operator restarts
        that broker; so does the heal, for a broker that still answers so for one of the
        topics after wait_s. Returns what it did (the report's heal_actions)."""
        t0 = time.monotonic()
        while True:
            stuck = {n: t for n in self.brokers for t in topics if self.lookup_state(n, t) == "unloading"}
            if not stuck or time.monotonic() - t0 >= wait_s:
                break
            time.sleep(2)
        actions = []
        for n, topic in sorted(stuck.items()):
            self.log(f"healing: broker {n} still answers that the bundle of {topic} is being "
                     f"unloaded after {wait_s:.0f} s; restarting it")
            cluster("stop-broker", str(n), timeout_s=300)
            cluster("start-broker", str(n), timeout_s=300)
            actions.append({"broker": n, "topic": topic, "action": "restarted",
                            "after_s": round(time.monotonic() - t0, 1)})
        return actions

    # -- taking it down ------------------------------------------------------------------
    def keep_broker_logs(self) -> None:
        """The brokers' and the bookie's logs of the run, gzipped into the run directory:
        the next rig start writes over them, and a finding about the broker (a transaction
        the coordinator gave up, a topic that never loaded) needs them afterwards."""
        out = self.run_dir / "logs" / "rig"
        out.mkdir(parents=True, exist_ok=True)
        for path in [*self.broker_logs(), self.cluster_dir / "bookie" / "bookie.log"]:
            try:
                with open(path, "rb") as src, gzip.open(out / (path.name + ".gz"), "wb") as dst:
                    shutil.copyfileobj(src, dst)
            except OSError as e:
                self.log(f"could not keep {path}: {e}")

    def stop(self, keep_running: bool) -> None:
        if keep_running:
            self.log("--keep-running: the rig, the standalone and the fault proxies stay up")
            return
        for p in (self.keyed_proxy, self.primary_proxy):
            if p is not None:
                p.stop()
        self.keep_broker_logs()
        if self.started_cluster:
            self.log("stopping the cluster rig (the run started it)")
            cluster("stop", check=False, timeout_s=300)
        if self.started_standalone:
            self.log("stopping the standalone broker (the run started it)")
            script(BROKER, "stop", check=False, timeout_s=300)
