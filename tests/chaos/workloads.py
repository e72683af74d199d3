"""The seven workloads of the chaos run: each a chaos_producer process of its own
(tests/chaos/chaos_producer.c; its interface is /work/chaos-spec.md, "The driver") with
its own topic and event log. The spool workload has incarnations: the fault scheduler
kills it with kill -9 and starts it again on the same spool and producer name."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from rig import REPO

WORKLOADS = ("keyed", "chunked", "encrypted", "txn", "spool", "own-loop", "failover")
KEYED_PARTITIONS = 6
ENCRYPTION_KEY = "chaos-rsa1"
PUBLIC_KEY = REPO / "tests" / "keys" / "test_rsa1_pub.pem"
PRIVATE_KEY = REPO / "tests" / "keys" / "test_rsa1_priv.pem"

# Messages per second. Seven drivers (ASan builds in CI) beside six JVMs on two cores:
# the JVMs' restarts are what the machine has to absorb, so the rates stay modest. The
# chunked workload sends 6-20 MB per message.
RATES = {"keyed": 20, "chunked": 0.2, "encrypted": 20, "txn": 10, "spool": 20,
         "own-loop": 20, "failover": 20}

# Sanitizer reports on a driver's stderr: each is a crash even when the exit status is not.
SANITIZER = re.compile(rb"ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:|"
                       rb"UndefinedBehaviorSanitizer|ThreadSanitizer|SUMMARY: \w+Sanitizer")


def driver_path() -> Path:
    d = Path(os.environ.get("PULSARC_BUILD_DIR", "build"))
    d = d if d.is_absolute() else REPO / d
    return d / "bin" / "chaos_producer"


@dataclass
class Incarnation:
    """One chaos_producer process of a workload."""
    k: int
    proc: subprocess.Popen
    first: int                      # --from
    stderr: Path
    started: float                  # time.time()
    killed: bool = False            # kill -9 by the scheduler (spool)
    terminated: bool = False        # SIGTERM at the end of the run
    bounded: bool = False           # launched with --count: it ends by itself
    hung: bool = False              # did not end after SIGTERM (killed, evidence kept)
    status: int | None = None
    ended: float | None = None

    def to_report(self) -> dict:
        return {"k": self.k, "pid": self.proc.pid, "from": self.first,
                "started": round(self.started, 3), "ended": round(self.ended, 3) if self.ended else None,
                "exit_status": self.status, "killed_by_scheduler": self.killed,
                "sigterm": self.terminated, "hung": self.hung, "stderr": str(self.stderr)}


@dataclass
class Workload:
    name: str
    url: str                        # the service URL (failover: the primary)
    topics: list[str]               # txn: two
    partitions: int = 0
    clusters: list[str] = field(default_factory=lambda: ["cluster"])  # where it may store
    producer_name: str | None = None
    spool_dir: Path | None = None
    extra: list[str] = field(default_factory=list)
    rate: float = 20
    seed: int = 1
    log: Path = Path()
    incarnations: list[Incarnation] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    _ok_at: int = 0                 # ok_count(): bytes of the log read so far
    _oks: int = 0

    @property
    def current(self) -> Incarnation | None:
        return self.incarnations[-1] if self.incarnations else None

    def args(self, first: int, count: int | None) -> list[str]:
        a = [str(driver_path()), self.name, self.url, str(self.log)]
        for t in self.topics:
            a += ["--topic", t]
        if self.producer_name:
            a += ["--name", self.producer_name]
        if self.spool_dir:
            a += ["--spool", str(self.spool_dir)]
        # One seed for every incarnation: the driver's choices (key, size, transaction) are
        # a function of the seed and the counter, the same whatever came before.
        a += ["--from", str(first), "--rate", str(self.rate), "--seed", str(self.seed)]
        if count is not None:
            a += ["--count", str(count)]
        return a + self.extra

    def launch(self, first: int = 0, count: int | None = None) -> Incarnation:
        with self.lock:
            k = len(self.incarnations)
            stderr = self.log.with_name(f"{self.name}.{k}.stderr")
            with open(stderr, "wb") as err:
                proc = subprocess.Popen(self.args(first, count), stdin=subprocess.DEVNULL,
                                        stdout=err, stderr=subprocess.STDOUT)
            inc = Incarnation(k, proc, first, stderr, time.time(), bounded=count is not None)
            self.incarnations.append(inc)
            return inc

    def poll(self) -> None:
        """Note the exit of incarnations that ended."""
        for inc in self.incarnations:
            if inc.status is None and inc.proc.poll() is not None:
                inc.status = inc.proc.returncode
                inc.ended = time.time()

    def next_counter(self) -> int:
        """Past every counter the log shows (the spool's next incarnation starts there)."""
        top = -1
        with open(self.log, "rb") as f:
            for line in f:
                w = line.split()
                if len(w) >= 2 and w[0] in (b"sending", b"accepted", b"refused", b"ok", b"failed") \
                        and w[1].isdigit():
                    top = max(top, int(w[1]))
        return top + 1

    def kill9_and_restart(self, pause_s: float) -> tuple[int, int]:
        """The spool workload's producer kill: kill -9 the running incarnation, then a new
        one on the same spool and name after pause_s. Returns (killed pid, new --from)."""
        inc = self.current
        assert inc is not None
        # One that ended by itself meanwhile keeps its own exit: a crash stays a crash.
        if inc.proc.poll() is None:
            inc.killed = True
            try:
                inc.proc.send_signal(signal.SIGKILL)
            except ProcessLookupError:
                pass
        inc.proc.wait()
        self.poll()
        time.sleep(pause_s)
        first = self.next_counter()
        self.launch(first)
        return inc.proc.pid, first

    def terminate(self, timeout_s: float) -> Incarnation | None:
        """SIGTERM to the running incarnation and wait for its end. A driver that does not
        end in time is a hang: its threads' stacks go to its stderr file (gdb), then it is
        killed. Returns the incarnation (None when none was running)."""
        self.poll()
        inc = self.current
        if inc is None or inc.status is not None:
            return None
        inc.terminated = True
        inc.proc.send_signal(signal.SIGTERM)
        return self.wait_end(inc, timeout_s)

    def run_bounded(self, count: int, timeout_s: float) -> Incarnation:
        """One more incarnation from the next counter that sends count messages and ends
        by itself (the spool drain: 0), waited for as terminate waits."""
        return self.wait_end(self.launch(self.next_counter(), count=count), timeout_s)

    def wait_end(self, inc: Incarnation, timeout_s: float) -> Incarnation:
        """Wait for inc's end. One that does not end in time is a hang: its threads'
        stacks go to its stderr file (gdb), then it is killed."""
        try:
            inc.proc.wait(timeout_s)
        except subprocess.TimeoutExpired:
            inc.hung = True
            dump_stacks(inc.proc.pid, inc.stderr)
            inc.proc.kill()
            inc.proc.wait()
        self.poll()
        return inc

    def sanitizer_report(self) -> list[str]:
        """stderr files of incarnations with a sanitizer report."""
        return [str(i.stderr) for i in self.incarnations
                if i.stderr.exists() and SANITIZER.search(i.stderr.read_bytes())]

    def ok_count(self) -> int:
        """The log's `ok` lines so far, read on from where the last call stopped (an hour's
        log is megabytes; progress and the liveness check ask often)."""
        if not self.log.exists():
            return 0
        with open(self.log, "rb") as f:
            f.seek(self._ok_at)
            data = f.read()
        whole = data[:data.rfind(b"\n") + 1]        # a line being written waits for the next call
        self._ok_at += len(whole)
        self._oks += whole.count(b"\nok ") + whole.startswith(b"ok ")
        return self._oks


def dump_stacks(pid: int, out: Path) -> None:
    """Every thread's stack of a live process, appended to out (the evidence of a hang)."""
    try:
        # Then the partition producers' states (producer_state.gdb): what a hang in the
        # driver's final flush waits for.
        proc = subprocess.run(["gdb", "-p", str(pid), "-batch", "-ex", "thread apply all bt",
                               "-x", str(Path(__file__).with_name("producer_state.gdb"))],
                              capture_output=True, text=True, timeout=120)
        text = proc.stdout + proc.stderr
    except (OSError, subprocess.TimeoutExpired) as e:
        text = f"gdb failed: {e}\n"
    with open(out, "a") as f:
        f.write(f"\n===== chaos run: pid {pid} did not end after SIGTERM; its stacks =====\n{text}")


def define(rig, run_id: str, ns: str, seed: int, logs: Path, spool_root: Path) -> dict[str, Workload]:
    """The seven workloads, their topics and service URLs."""
    base = f"persistent://{ns}"
    keyed_url = rig.proxy_url(rig.keyed_proxy)
    primary_url = rig.proxy_url(rig.primary_proxy)
    from rig import STANDALONE_URL
    w = {
        # Through the fault proxy, then the Pulsar proxy: cut, stall, throttle, proxy kill.
        "keyed": Workload("keyed", keyed_url, [f"{base}/keyed"], partitions=KEYED_PARTITIONS),
        "chunked": Workload("chunked", rig.service_url, [f"{base}/chunked"]),
        # Through the Pulsar proxy directly: its kill -9 hits this one too.
        "encrypted": Workload("encrypted", rig.proxy_service_url, [f"{base}/encrypted"],
                              extra=["--encrypt", f"{ENCRYPTION_KEY}={PUBLIC_KEY}"]),
        "txn": Workload("txn", rig.service_url, [f"{base}/txn-0", f"{base}/txn-1"]),
        "spool": Workload("spool", rig.service_url, [f"{base}/spool"],
                          producer_name=f"chaos-spool-{run_id}", spool_dir=spool_root / "spool"),
        # HTTP lookups (the brokers' web ports) for this one.
        "own-loop": Workload("own-loop", rig.http_service_url, [f"{base}/own-loop"]),
        "failover": Workload("failover", primary_url, [f"{base}/failover"],
                             clusters=["cluster", "standalone"],
                             extra=["--secondary", STANDALONE_URL]),
    }
    for i, (name, wl) in enumerate(w.items()):
        wl.rate = RATES[name]
        wl.seed = seed * 10 + i + 1   # each workload its own choices, all from the run's seed
        wl.log = logs / f"{name}.log"
    (spool_root / "spool").mkdir(parents=True, exist_ok=True)
    return w
