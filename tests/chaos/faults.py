"""The chaos run's fault scheduler.

Faults are grouped in lanes, one per component: the brokers, the bookie, the Pulsar
proxy, the keyed workload's fault proxy, the failover primary's fault proxy, the spool
producer, bundle unloads. A lane runs its faults one after the other (so the two brokers
are never faulted at once: one is always up); lanes run side by side, so faults on
different components overlap as their times fall.

The seed fixes the plan: for each lane, the order of its faults, their targets,
durations and planned start times (each lane's classes once each, in a shuffled order,
first, so that a 3-minute run has every class; then random ones while the window
lasts). A fault starts at its planned time, or when the previous fault of its lane is
over if that one took longer (a broker's restart takes what it takes). Each fault is
logged with its start and end."""

from __future__ import annotations

import os
import random
import signal
import threading
import time
import traceback
from dataclasses import dataclass, field

import rig as rigmod

CLASSES = {
    "broker-kill": "kill -9 of a broker, restarted after a pause",
    "broker-sigstop": "SIGSTOP of a broker for longer than the keep-alive, then SIGCONT "
                      "(restarted if it died or is not ready again)",
    "broker-restart": "graceful broker restart (SIGTERM: bundles unloaded, then started)",
    "bundle-unload": "every bundle of the run's namespace unloaded (admin REST)",
    "proxy-kill": "kill -9 of the Pulsar proxy, restarted after a pause",
    "conn-cut": "every connection through the keyed workload's fault proxy cut (RST); "
                "sometimes the failover primary's too",
    "conn-stall": "the keyed workload's fault proxy stops forwarding, then resumes",
    "conn-throttle": "the keyed workload's fault proxy throttled to a few KB/s",
    "bookie-restart": "graceful bookie restart (the brokers' writes wait for it)",
    "producer-kill": "kill -9 of the spool workload's producer, restarted on its spool",
    "primary-unreachable": "the failover workload's primary refuses connections (its "
                           "fault proxy down) past failoverDelayMs, then back",
}

# lane: (its classes, gap between faults in s)
LANES = {
    "brokers": (["broker-kill", "broker-sigstop", "broker-restart"], (3, 10)),
    "bookie": (["bookie-restart"], (45, 90)),
    "pulsar-proxy": (["proxy-kill"], (25, 50)),
    "fault-proxy": (["conn-cut", "conn-stall", "conn-throttle"], (4, 12)),
    "primary": (["primary-unreachable"], (15, 30)),
    "spool": (["producer-kill"], (10, 30)),
    "unload": (["bundle-unload"], (15, 35)),
}

WARMUP_S = 15           # producers created and sending before the first fault
KEEPALIVE_S = 5         # the driver's keepAliveIntervalSeconds
FAILOVER_DELAY_S = 3    # the driver's failoverDelayMs
SWITCH_BACK_S = 10      # the driver's switchBackDelayMs


def params_for(cls: str, rng: random.Random, brokers: list[int]) -> dict:
    r = lambda lo, hi: round(rng.uniform(lo, hi), 1)  # noqa: E731
    if cls == "broker-kill":
        return {"broker": rng.choice(brokers), "down_s": r(2, 8)}
    if cls == "broker-sigstop":
        # Past two keep-alive intervals, so the clients see a dead connection.
        return {"broker": rng.choice(brokers), "stopped_s": r(2 * KEEPALIVE_S + 2, 2 * KEEPALIVE_S + 10)}
    if cls == "broker-restart":
        return {"broker": rng.choice(brokers), "down_s": r(0, 3)}
    if cls == "proxy-kill":
        return {"down_s": r(1, 6)}
    if cls == "conn-cut":
        return {"also_primary": rng.random() < 0.5}
    if cls == "conn-stall":
        return {"stall_s": r(4, 15)}
    if cls == "conn-throttle":
        return {"bytes_per_s": rng.choice([500, 1000, 2000, 4000]), "for_s": r(8, 20)}
    if cls == "bookie-restart":
        return {"down_s": r(1, 5)}
    if cls == "producer-kill":
        return {"pause_s": r(0.2, 3)}
    if cls == "primary-unreachable":
        # Past the failover delay and a probe or two, so the client switches.
        return {"down_s": r(FAILOVER_DELAY_S + 3, FAILOVER_DELAY_S + 9)}
    return {}


def expected_s(cls: str, p: dict) -> float:
    """A fault's expected length, to space a lane's plan (restarts take 15-40 s here)."""
    return {"broker-kill": p.get("down_s", 0) + 35, "broker-sigstop": p.get("stopped_s", 0) + 15,
            "broker-restart": p.get("down_s", 0) + 40, "proxy-kill": p.get("down_s", 0) + 15,
            "conn-stall": p.get("stall_s", 0), "conn-throttle": p.get("for_s", 0),
            "bookie-restart": p.get("down_s", 0) + 15, "producer-kill": p.get("pause_s", 0) + 2,
            "primary-unreachable": p.get("down_s", 0) + SWITCH_BACK_S}.get(cls, 1)


def plan(seed: int, window_s: float, brokers: list[int]) -> dict[str, list[dict]]:
    """Per lane, the faults in order: {"cls", "at" (s after the run's start), "params"}."""
    out = {}
    for lane, (classes, (gap_lo, gap_hi)) in LANES.items():
        rng = random.Random(f"{seed}/{lane}")
        first = list(classes)
        rng.shuffle(first)
        t = WARMUP_S + rng.uniform(0, min(gap_hi, 20))
        faults = []
        while True:
            if first:
                cls = first.pop(0)
            else:
                cls = rng.choice(classes)
            p = params_for(cls, rng, brokers)
            if not faults or len(faults) < len(classes) or t + expected_s(cls, p) < window_s:
                faults.append({"cls": cls, "at": round(t, 1), "params": p})
            else:
                break
            t += expected_s(cls, p) + rng.uniform(gap_lo, gap_hi)
        out[lane] = faults
    return out


@dataclass
class Record:
    cls: str
    lane: str
    planned_at: float
    params: dict
    start: float = 0.0              # s after the run's start
    end: float | None = None
    start_utc: str = ""
    end_utc: str = ""
    detail: list[str] = field(default_factory=list)
    error: str | None = None

    def to_report(self) -> dict:
        return {"class": self.cls, "lane": self.lane, "planned_at_s": self.planned_at,
                "start_s": round(self.start, 1), "end_s": None if self.end is None else round(self.end, 1),
                "start_utc": self.start_utc, "end_utc": self.end_utc, "params": self.params,
                "detail": self.detail, "error": self.error}


def utc(t: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + f".{int(t % 1 * 1000):03d}Z"


class Scheduler:
    def __init__(self, rig: rigmod.Rig, workloads: dict, namespace: str, seed: int, window_s: float,
                 log_path, say):
        self.rig = rig
        self.workloads = workloads
        self.namespace = namespace
        self.window_s = window_s
        self.plan = plan(seed, window_s, rig.brokers)
        self.records: list[Record] = []
        self.lock = threading.Lock()
        self.log_file = open(log_path, "a", buffering=1)
        self.say = say
        self.stop = threading.Event()          # stop early (an error, Ctrl-C)
        self.bookie_up = threading.Event()     # a broker starts only with the bookie up
        self.bookie_up.set()
        self.t0 = 0.0
        self.threads: list[threading.Thread] = []
        self.active: dict[str, str] = {}

    # -- bookkeeping ---------------------------------------------------------------------
    def now(self) -> float:
        return time.time() - self.t0

    def note(self, rec: Record, what: str) -> None:
        line = f"{utc(time.time())} +{self.now():7.1f}s {what} {rec.cls} " + \
               " ".join(f"{k}={v}" for k, v in rec.params.items())
        if what == "end" and rec.detail:
            line += " (" + "; ".join(rec.detail) + ")"
        if rec.error:
            line += f" ERROR: {rec.error}"
        self.log_file.write(line + "\n")

    def begin(self, lane: str, fault: dict) -> Record:
        rec = Record(fault["cls"], lane, fault["at"], fault["params"])
        rec.start, rec.start_utc = self.now(), utc(time.time())
        with self.lock:
            self.records.append(rec)
            self.active[lane] = fault["cls"]
        self.note(rec, "start")
        return rec

    def finish(self, lane: str, rec: Record) -> None:
        rec.end, rec.end_utc = self.now(), utc(time.time())
        with self.lock:
            self.active.pop(lane, None)
        self.note(rec, "end")

    def sleep(self, s: float) -> None:
        """A fault's pause; cut short only when the run is being aborted."""
        self.stop.wait(s)

    # -- running -------------------------------------------------------------------------
    def start(self, t0: float) -> None:
        self.t0 = t0
        for lane, faults in self.plan.items():
            th = threading.Thread(target=self.run_lane, args=(lane, faults), name=f"lane-{lane}",
                                  daemon=True)
            th.start()
            self.threads.append(th)

    def join(self) -> None:
        for th in self.threads:
            th.join()

    def run_lane(self, lane: str, faults: list[dict]) -> None:
        for fault in faults:
            wait = fault["at"] - self.now()
            if wait > 0 and self.stop.wait(wait):
                return
            if self.stop.is_set():
                return
            rec = self.begin(lane, fault)
            try:
                getattr(self, "do_" + fault["cls"].replace("-", "_"))(rec, **fault["params"])
            except Exception as e:  # noqa: BLE001 - recorded; the lane goes on
                rec.error = f"{type(e).__name__}: {str(e)[-1500:]}"
                self.say(f"fault {rec.cls} failed: {rec.error.splitlines()[0]}")
                self.log_file.write(traceback.format_exc())
                self.recover(lane, rec)
            finally:
                self.finish(lane, rec)

    def recover(self, lane: str, rec: Record) -> None:
        """After a fault action failed half-way: bring its component back, once."""
        try:
            if lane == "brokers":
                n = rec.params["broker"]
                pid = self.rig.pid(f"broker{n}")
                if pid:
                    os.kill(pid, signal.SIGCONT)
                else:
                    self.start_broker(n)
            elif lane == "bookie":
                if not self.rig.pid("bookie"):
                    rigmod.cluster("start-bookie", timeout_s=600)
                self.bookie_up.set()
            elif lane == "pulsar-proxy":
                if not self.rig.pid("proxy"):
                    rigmod.cluster("start-proxy", timeout_s=600)
            elif lane == "fault-proxy":
                self.rig.keyed_proxy.reset()
            elif lane == "primary":
                self.rig.primary_proxy.up()
            rec.detail.append("recovered after the error")
        except Exception as e:  # noqa: BLE001 - the end of the run heals what is left
            rec.detail.append(f"recovery failed too: {type(e).__name__}: {str(e)[-300:]}")

    def start_broker(self, n: int) -> float:
        t = time.monotonic()
        self.bookie_up.wait()
        rigmod.cluster("start-broker", str(n), timeout_s=600)
        return time.monotonic() - t

    # -- the faults ----------------------------------------------------------------------
    def do_broker_kill(self, rec: Record, broker: int, down_s: float) -> None:
        rigmod.cluster("kill-broker", str(broker), timeout_s=120)
        self.sleep(down_s)
        rec.detail.append(f"restarted in {self.start_broker(broker):.1f} s")

    def do_broker_sigstop(self, rec: Record, broker: int, stopped_s: float) -> None:
        pid = self.rig.pid(f"broker{broker}")
        if pid is None:
            raise RuntimeError(f"broker {broker} is not running")
        os.kill(pid, signal.SIGSTOP)
        try:
            self.sleep(stopped_s)
        finally:
            os.kill(pid, signal.SIGCONT)
        # Its metadata session (5 s) expired meanwhile: it reconnects, or it dies.
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            if self.rig.pid(f"broker{broker}") != pid:
                rec.detail.append(f"died after SIGCONT; restarted in {self.start_broker(broker):.1f} s")
                return
            if self.rig.broker_ready(broker):
                rec.detail.append("ready again after SIGCONT")
                return
            time.sleep(1)
        rec.detail.append("not ready 90 s after SIGCONT: restarted")
        rigmod.cluster("stop-broker", str(broker), timeout_s=300)
        rec.detail.append(f"restarted in {self.start_broker(broker):.1f} s")

    def do_broker_restart(self, rec: Record, broker: int, down_s: float) -> None:
        rigmod.cluster("stop-broker", str(broker), timeout_s=300)
        self.sleep(down_s)
        rec.detail.append(f"restarted in {self.start_broker(broker):.1f} s")

    def do_bundle_unload(self, rec: Record) -> None:
        # A broker being restarted refuses, or its bundles have no owner yet (412): again
        # every 5 s, for a minute, as an operator would.
        for attempt in range(12):
            try:
                self.rig.rig_admin("PUT", f"/admin/v2/namespaces/{self.namespace}/unload", timeout_s=60)
                rec.detail.append(f"unloaded (attempt {attempt + 1})")
                return
            except Exception as e:  # noqa: BLE001 - a broker may be down: try again
                rec.detail.append(f"attempt {attempt + 1}: {type(e).__name__}: {str(e)[:200]}")
                self.sleep(5)
        raise RuntimeError("the namespace could not be unloaded")

    def do_proxy_kill(self, rec: Record, down_s: float) -> None:
        rigmod.cluster("kill-proxy", timeout_s=120)
        self.sleep(down_s)
        t = time.monotonic()
        rigmod.cluster("start-proxy", timeout_s=600)
        rec.detail.append(f"restarted in {time.monotonic() - t:.1f} s")

    def do_conn_cut(self, rec: Record, also_primary: bool) -> None:
        rec.detail.append(f"{self.rig.keyed_proxy.cut()} keyed connection(s) cut")
        if also_primary:
            rec.detail.append(f"{self.rig.primary_proxy.cut()} failover connection(s) cut")

    def do_conn_stall(self, rec: Record, stall_s: float) -> None:
        self.rig.keyed_proxy.stall()
        try:
            self.sleep(stall_s)
        finally:
            self.rig.keyed_proxy.resume()

    def do_conn_throttle(self, rec: Record, bytes_per_s: int, for_s: float) -> None:
        self.rig.keyed_proxy.throttle(bytes_per_s)
        try:
            self.sleep(for_s)
        finally:
            self.rig.keyed_proxy.throttle(0)

    def do_bookie_restart(self, rec: Record, down_s: float) -> None:
        self.bookie_up.clear()
        try:
            rigmod.cluster("stop-bookie", timeout_s=300)
            self.sleep(down_s)
            t = time.monotonic()
            rigmod.cluster("start-bookie", timeout_s=600)
            rec.detail.append(f"restarted in {time.monotonic() - t:.1f} s")
        finally:
            self.bookie_up.set()

    def do_producer_kill(self, rec: Record, pause_s: float) -> None:
        killed, first = self.workloads["spool"].kill9_and_restart(pause_s)
        rec.detail.append(f"pid {killed} killed; the next incarnation from {first}")

    def do_primary_unreachable(self, rec: Record, down_s: float) -> None:
        rec.detail.append(f"{self.rig.primary_proxy.down()} connection(s) dropped")
        try:
            self.sleep(down_s)
        finally:
            self.rig.primary_proxy.up()

    # -- summary -------------------------------------------------------------------------
    def per_class(self) -> dict:
        out = {}
        for cls in CLASSES:
            recs = [r for r in self.records if r.cls == cls]
            out[cls] = {"injected": sum(1 for r in recs if r.error is None),
                        "failed": sum(1 for r in recs if r.error is not None),
                        "what": CLASSES[cls],
                        "times": [r.to_report() for r in recs]}
        return out
