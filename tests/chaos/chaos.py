#!/usr/bin/env python3
"""The chaos run (issue 29): every pulsarc feature at once, under every fault, and the
proof that nothing acknowledged was lost, duplicated or reordered. scripts/chaos runs
this; see its header and docs/testing.md.

  1. the rig: the cluster (scripts/cluster start --transactions), the default standalone
     as the second cluster, two fault proxies in front of the cluster's Pulsar proxy, a
     namespace of the run's own on each cluster (deduplication and retention on), its
     topics (keyed: 6 partitions);
  2. the seven workloads (workloads.py), each a chaos_producer process;
  3. the seeded fault scheduler (faults.py) for --duration seconds;
  4. every fault off and every part up; each workload must acknowledge again; SIGTERM
     to each driver (they finish, flush and end); a last spool incarnation drains the
     spool;
  5. the read-back with the official Python client and the verdict (verify.py);
  6. the report (JSON), the acknowledged counters (a file next to it), one summary line;
     exit 0 only when every check passed.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import sys
import threading
import time
import traceback
from pathlib import Path

import rig as rigmod
from rig import REPO, Rig
import faults
import verify
import workloads as wlmod

import pulsar

LIVENESS_S = 180        # after healing, each workload must acknowledge again within this
TERM_TIMEOUT_S = 180    # a driver's end after SIGTERM (a 20 MB message may be in flight)
SETTLE_TXN_MESSAGES = 60  # the last transactions' messages (several per coordinator)
SETTLE_WAIT_S = 20      # for the topics' open transactions to be ended after them
PROGRESS_S = 15


class Run:
    def __init__(self, a):
        self.a = a
        self.seed = a.seed
        stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
        self.run_id = f"{stamp.lower()}-s{self.seed}"
        self.dir = Path(a.run_dir) if a.run_dir else REPO / "build-logs" / "chaos" / self.run_id
        self.logs = self.dir / "logs"
        self.logs.mkdir(parents=True, exist_ok=True)
        self.report_path = Path(a.report) if a.report else self.dir / "report.json"
        self.report_path.parent.mkdir(parents=True, exist_ok=True)
        self.ns = f"public/chaos-{self.run_id}"
        self.t_start = time.time()
        self.out = open(self.dir / "chaos.log", "a", buffering=1)
        self.rig = Rig(self.dir, self.say)
        self.workloads: dict[str, wlmod.Workload] = {}
        self.scheduler: faults.Scheduler | None = None
        self.harness_errors: list[str] = []
        self.timings: dict[str, float] = {}
        self.txn_settle: dict | None = None
        self.heal_actions: list[dict] = []

    def say(self, msg: str) -> None:
        line = f"[chaos +{time.time() - self.t_start:6.0f}s] {msg}"
        print(line, flush=True)
        self.out.write(line + "\n")

    # -- set-up --------------------------------------------------------------------------
    def setup(self) -> None:
        t = time.monotonic()
        driver = wlmod.driver_path()
        if not os.access(driver, os.X_OK):
            raise rigmod.RigError(f"{driver} not found: build it first (cmake --build {driver.parents[1]})")
        self.rig.start()
        self.rig.start_fault_proxies()
        # The namespace on both clusters; the failover topic exists on both.
        self.rig.make_namespace(self.rig.rig_admin, self.ns, bundles=4)
        self.rig.make_namespace(self.rig.standalone_admin, self.ns, bundles=1)
        self.workloads = wlmod.define(self.rig, self.run_id, self.ns, self.seed, self.logs, self.dir)
        for wl in self.workloads.values():
            for topic in wl.topics:
                self.rig.make_topic(self.rig.rig_admin, topic, wl.partitions)
                self.rig.wait_dedup(self.rig.rig_admin, topic, wl.partitions)
                if "standalone" in wl.clusters:
                    self.rig.make_topic(self.rig.standalone_admin, topic)
                    self.rig.wait_dedup(self.rig.standalone_admin, topic)
        self.timings["setup_s"] = round(time.monotonic() - t, 1)
        self.say(f"namespace {self.ns} on both clusters, topics ready "
                 f"({self.timings['setup_s']:.0f} s); driver {driver}")

    def launch(self) -> None:
        for wl in self.workloads.values():
            wl.launch(0)
            self.say(f"workload {wl.name}: pid {wl.current.proc.pid}, {wl.url}, "
                     f"{', '.join(wl.topics)}, {wl.rate}/s")
        # Each driver's producer exists before the faults start.
        deadline = time.monotonic() + 120
        waiting = set(self.workloads)
        while waiting and time.monotonic() < deadline:
            for name in list(waiting):
                wl = self.workloads[name]
                wl.poll()
                if wl.log.exists() and b"\ncreated" in wl.log.read_bytes():
                    waiting.discard(name)
                elif wl.current.status is not None:
                    waiting.discard(name)
                    self.harness_errors.append(f"{name}: exited with {wl.current.status} before "
                                               f"its producer was created")
            time.sleep(0.5)
        for name in waiting:
            self.harness_errors.append(f"{name}: no producer after 120 s")
        if self.harness_errors:
            raise rigmod.RigError("; ".join(self.harness_errors))

    # -- the faults ----------------------------------------------------------------------
    def chaos(self) -> None:
        sched = self.scheduler = faults.Scheduler(self.rig, self.workloads, self.ns, self.seed,
                                                  self.a.duration, self.dir / "faults.log", self.say)
        (self.dir / "plan.json").write_text(json.dumps(sched.plan, indent=1))
        n = sum(len(v) for v in sched.plan.values())
        self.say(f"fault plan (seed {self.seed}): {n} faults over {self.a.duration} s in "
                 f"{len(sched.plan)} lanes; log: {self.dir / 'faults.log'}")
        t0 = time.time()
        sched.start(t0)
        last = 0.0
        while any(th.is_alive() for th in sched.threads):
            time.sleep(1)
            self.watch()
            if time.time() - last >= PROGRESS_S:
                last = time.time()
                with sched.lock:
                    active = ", ".join(f"{v}" for v in sched.active.values()) or "none"
                oks = " ".join(f"{n}={wl.ok_count()}" for n, wl in self.workloads.items())
                self.say(f"t={time.time() - t0:4.0f}s faults so far {len(sched.records)}, "
                         f"active: {active}; acknowledged: {oks}")
        sched.join()
        self.timings["faults_s"] = round(time.time() - t0, 1)

    def watch(self) -> None:
        """A driver that ended by itself during the run (not killed, not told to stop)."""
        for wl in self.workloads.values():
            with wl.lock:
                wl.poll()
                inc = wl.current
                if inc and inc.status is not None and not inc.killed and not inc.terminated \
                        and not getattr(inc, "reported", False):
                    inc.reported = True
                    self.say(f"workload {wl.name}: pid {inc.proc.pid} exited by itself with "
                             f"{inc.status} (see {inc.stderr})")

    # -- the end -------------------------------------------------------------------------
    def heal_and_end(self) -> None:
        t = time.monotonic()
        self.say("faults over: healing (fault proxies reset, every part of the rig up)")
        self.rig.heal()
        topics = [verify.ph.partition_name(t, p) if wl.partitions else t
                  for wl in self.workloads.values() for t in wl.topics
                  for p in (range(wl.partitions) if wl.partitions else [-1])]
        self.heal_actions = self.rig.restart_stuck_brokers(topics)
        self.timings["heal_s"] = round(time.monotonic() - t, 1)
        # Every workload acknowledges again once everything is up: a producer that never
        # recovers is a hang, caught here rather than as a timeout at the end.
        t = time.monotonic()
        base = {n: wl.ok_count() for n, wl in self.workloads.items()}
        waiting = {n for n, wl in self.workloads.items() if wl.current and wl.current.status is None}
        while waiting and time.monotonic() - t < LIVENESS_S:
            for n in list(waiting):
                if self.workloads[n].ok_count() > base[n]:
                    waiting.discard(n)
            time.sleep(1)
        for n in waiting:
            self.harness_errors.append(f"{n}: no acknowledgement within {LIVENESS_S} s after every "
                                       f"fault was off and every part up")
            self.say(f"workload {n}: STALLED (no acknowledgement {LIVENESS_S} s after healing)")
        self.timings["recovery_s"] = round(time.monotonic() - t, 1)
        # SIGTERM: each driver finishes what it started, flushes and ends.
        t = time.monotonic()
        self.say("SIGTERM to every driver")
        ends = {}
        threads = [threading.Thread(target=lambda wl=wl: ends.update({wl.name: wl.terminate(TERM_TIMEOUT_S)}))
                   for wl in self.workloads.values()]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        for n, inc in ends.items():
            if inc is not None:
                self.say(f"workload {n}: exit {inc.status}" + (" (HUNG: stacks in its stderr file)"
                                                               if inc.hung else ""))
        # The last spool incarnation: it resends what the spool holds, flushes, ends.
        inc = self.workloads["spool"].run_bounded(0, TERM_TIMEOUT_S)
        self.say(f"spool drained by pid {inc.proc.pid}: exit {inc.status}")
        self.settle_transactions()
        self.timings["end_s"] = round(time.monotonic() - t, 1)

    def settle_transactions(self) -> None:
        """A few last transactions, then a wait until no topic of the txn workload holds an
        open one. Under a fault, Pulsar's coordinator can answer a commit as done while
        one topic never got its marker (docs/transactions.md); that topic keeps the
        transaction open and holds every later message back from readers until a later
        commit or abort there tells it the coordinator's low-water mark, when the broker
        aborts it. Transactions after the faults give each topic that word, so the
        read-back sees the broker's final state, not a topic still waiting; what the
        broker aborted is then told apart from a loss by its logs (verify.py)."""
        txn = self.workloads["txn"]
        inc = txn.run_bounded(SETTLE_TXN_MESSAGES, TERM_TIMEOUT_S)
        t0 = time.monotonic()
        open_txns = self.rig.open_transactions(txn.topics)
        while any(open_txns.values()) and time.monotonic() - t0 < SETTLE_WAIT_S:
            time.sleep(1)
            open_txns = self.rig.open_transactions(txn.topics)
        self.txn_settle = {"pid": inc.proc.pid, "exit": inc.status, "open_after": open_txns,
                           "wait_s": round(time.monotonic() - t0, 1)}
        self.say(f"txn: {SETTLE_TXN_MESSAGES} messages in last transactions by pid "
                 f"{inc.proc.pid} (exit {inc.status}); open transactions per topic after "
                 f"{self.txn_settle['wait_s']} s: {open_txns}")

    # -- the verdict ---------------------------------------------------------------------
    def verify(self) -> dict:
        t = time.monotonic()
        self.say("reading everything back with the official Python client")
        logger = pulsar.ConsoleLogger(pulsar.LoggerLevel.Error)
        rig_client = pulsar.Client(self.rig.service_url, operation_timeout_seconds=60, logger=logger)
        sa_client = pulsar.Client(rigmod.STANDALONE_URL, operation_timeout_seconds=60, logger=logger)
        crypto = pulsar.CryptoKeyReader(str(wlmod.PUBLIC_KEY), str(wlmod.PRIVATE_KEY))
        results = {}
        try:
            for name, wl in self.workloads.items():
                log = verify.parse_log(wl.log)
                streams, notes = {}, []
                for cluster in wl.clusters:
                    client = rig_client if cluster == "cluster" else sa_client
                    for ti, topic in enumerate(wl.topics):
                        parts = range(wl.partitions) if wl.partitions else [-1]
                        for p in parts:
                            name_p = verify.ph.partition_name(topic, p) if p >= 0 else topic
                            msgs, n = verify.read_stream(client, name_p, name,
                                                         crypto if name == "encrypted" else None)
                            streams[(cluster, ti, p)] = msgs
                            notes += n
                drain = spool_drain_ok(wl) if name == "spool" else True
                explain = None
                if name == "txn":
                    def explain(lost, log=log, wl=wl):
                        evidence = verify.broker_txn_evidence(self.rig.broker_logs())
                        return verify.explain_txn_losses(lost, log, wl.topics, self.rig.entry_headers,
                                                         evidence, self.rig.buffer_stats)
                res = verify.verify_workload(wl, log, streams, notes, drain, explain)
                if name == "chunked":
                    res["entries_stored"] = self.entries(wl.topics[0])
                results[name] = res
                self.say(f"{name}: acknowledged {res['acknowledged']}, read back {res['read_back']}, "
                         f"lost {res['lost']}, duplicated {res['duplicated']}, out of order "
                         f"{res['out_of_order']}" +
                         (f", committed then aborted by the broker {res['aborted_by_broker']}"
                          if res["aborted_by_broker"] else "") +
                         (f", committed and held back by the broker {res['held_by_broker']}"
                          if res["held_by_broker"] else "") +
                         ("" if all(res["checks"].values()) else
                                                     "; FAILED: " + ", ".join(k for k, v in res["checks"].items() if not v)))
        finally:
            rig_client.close()
            sa_client.close()
        self.timings["verify_s"] = round(time.monotonic() - t, 1)
        self.keep_broker_evidence()
        return results

    def keep_broker_evidence(self, limit: int = 20000) -> None:
        """The brokers' warnings and errors about the run's namespace (with the exception
        line after an error), kept in the run directory: the rig's logs go at its next
        clean start."""
        out = self.dir / "broker-evidence.txt"
        n = 0
        with open(out, "w") as f:
            for path in self.rig.broker_logs():
                try:
                    lines = open(path, errors="replace")
                except OSError:
                    continue
                with lines:
                    follow = False
                    for line in lines:
                        if follow and not line[:4].isdigit():
                            f.write(f"{path.name}: {line}")
                            n += 1
                        follow = False
                        if self.ns in line and (" ERROR " in line or " WARN " in line):
                            f.write(f"{path.name}: {line}")
                            n += 1
                            follow = " ERROR " in line
                        if n >= limit:
                            return

    def entries(self, topic: str):
        try:
            st = self.rig.rig_admin("GET", "/admin/v2/" + verify.ph.topic_rest_path(topic) + "/internalStats")
            return st.get("numberOfEntries")
        except Exception as e:  # noqa: BLE001 - a figure for the report only
            return f"unknown ({e})"

    # -- the report ----------------------------------------------------------------------
    def report(self, results: dict) -> int:
        sched = self.scheduler
        per_class = sched.per_class() if sched else {}
        acked_path = self.report_path.with_name(self.report_path.stem + ".acked.txt")
        with open(acked_path, "w") as f:
            f.write("# workload counter: every counter whose callback said success\n")
            for name, wl in self.workloads.items():
                log = verify.parse_log(wl.log)
                for c in sorted(c for c, ev in log.counters.items() if ev.ok):
                    f.write(f"{name} {c}\n")
        checks = {}
        for name, res in results.items():
            res.pop("must", None)
            res["acknowledged_file"] = str(acked_path)
            for k, v in res["checks"].items():
                checks[f"{name}: {k}"] = v
        for cls, v in per_class.items():
            checks[f"fault {cls} injected"] = v["injected"] > 0
        checks["the harness ran without error"] = not self.harness_errors
        totals = {k: sum(r[k] for r in results.values()) for k in
                  ("sent", "acknowledged", "read_back", "lost", "duplicated", "duplicate_copies",
                   "out_of_order", "in_both_clusters", "aborted_by_broker", "held_by_broker")}
        totals["failed_by_error"] = {}
        for r in results.values():
            for e, n in r["failed_by_error"].items():
                totals["failed_by_error"][e] = totals["failed_by_error"].get(e, 0) + n
        totals["crashed"] = sum(len(r["crashed"]) + len(r["hung"]) + len(r["sanitizer_reports"])
                                for r in results.values())
        totals["faults"] = sum(v["injected"] for v in per_class.values())
        passed = sum(checks.values())
        failed = len(checks) - passed
        report = {
            "seed": self.seed, "duration_s": self.a.duration, "run_id": self.run_id,
            "namespace": self.ns, "run_dir": str(self.dir),
            "driver": str(wlmod.driver_path()), "started_utc": faults.utc(self.t_start),
            "ended_utc": faults.utc(time.time()), "timings_s": self.timings,
            "rig": {"service_url": self.rig.service_url, "proxy": self.rig.proxy_service_url,
                    "standalone": rigmod.STANDALONE_URL, "cluster_dir": str(self.rig.cluster_dir),
                    "keyed_fault_proxy": self.rig.proxy_url(self.rig.keyed_proxy),
                    "primary_fault_proxy": self.rig.proxy_url(self.rig.primary_proxy)},
            "faults": {cls: {"injected": v["injected"], "failed": v["failed"], "what": v["what"]}
                       for cls, v in per_class.items()},
            "fault_log": [r.to_report() for r in sorted(sched.records, key=lambda r: r.start)] if sched else [],
            "workloads": results, "totals": totals,
            "harness_errors": self.harness_errors, "heal_actions": self.heal_actions,
            "txn_settle": self.txn_settle,
            "checks": {"passed": passed, "failed": failed,
                       "failed_names": [k for k, v in checks.items() if not v]},
        }
        self.report_path.write_text(json.dumps(report, indent=1) + "\n")
        verdict = "PASS" if failed == 0 else "FAIL"
        fault_summary = " ".join(f"{cls}={v['injected']}" for cls, v in per_class.items())
        print(f"chaos seed={self.seed} duration={self.a.duration}s faults={totals['faults']} ({fault_summary}) "
              f"acknowledged={totals['acknowledged']} read={totals['read_back']} lost={totals['lost']} "
              f"duplicated={totals['duplicated']} out_of_order={totals['out_of_order']} "
              f"crashed={totals['crashed']} in_both_clusters={totals['in_both_clusters']} "
              f"aborted_by_broker={totals['aborted_by_broker']} "
              f"held_by_broker={totals['held_by_broker']}: {verdict}, "
              f"{passed} checks passed, {failed} failed; report {self.report_path}", flush=True)
        if failed:
            self.say("failed checks: " + "; ".join(report["checks"]["failed_names"]))
        return 0 if failed == 0 else 1

    # -- clean-up ------------------------------------------------------------------------
    def cleanup(self) -> None:
        if self.scheduler:
            self.scheduler.stop.set()
        for wl in self.workloads.values():
            wl.poll()
            for inc in wl.incarnations:
                if inc.status is None:
                    inc.proc.kill()
                    inc.proc.wait()
        try:
            self.rig.unstop_all()
        except Exception:  # noqa: BLE001
            pass
        self.rig.stop(self.a.keep_running)


def spool_drain_ok(wl) -> bool:
    """The last spool incarnation ended cleanly with its flush ok."""
    last = wl.incarnations[-1]
    if last.status != 0:
        return False
    log = verify.parse_log(wl.log)
    return bool(log.incs) and log.incs[-1].flush == "ok"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--duration", type=int, default=180, help="seconds of faults [180]")
    p.add_argument("--seed", type=int, default=None, help="the fault plan's and the workloads' seed "
                   "[random, printed]")
    p.add_argument("--report", help="the JSON report [<run dir>/report.json]")
    p.add_argument("--keep-running", action="store_true", help="leave the rig up after the run")
    p.add_argument("--run-dir", help="logs and spool [build-logs/chaos/<time>-s<seed>]")
    a = p.parse_args(argv)
    if a.seed is None:
        a.seed = random.SystemRandom().randrange(1, 1_000_000)
    # SIGTERM (scripts/test's timeout, a CI job cancelled) cleans up as Ctrl-C does: no
    # driver, no stopped broker and no rig the run started is left behind.
    def on_term(signum, frame):
        raise KeyboardInterrupt
    signal.signal(signal.SIGTERM, on_term)
    run = Run(a)
    run.say(f"seed {a.seed}, {a.duration:.0f} s of faults; run dir {run.dir}")
    rc = 1
    try:
        run.setup()
        run.launch()
        run.chaos()
        run.heal_and_end()
        rc = run.report(run.verify())
    except KeyboardInterrupt:
        run.say("interrupted")
        rc = 130
    except Exception as e:  # noqa: BLE001 - the run failed before its verdict
        run.say(f"the run failed: {type(e).__name__}: {e}")
        run.out.write(traceback.format_exc())
        print(f"chaos seed={a.seed} duration={a.duration:.0f}s: ERROR ({type(e).__name__}: "
              f"{str(e).splitlines()[0] if str(e) else ''}), 0 checks passed, 1 failed; "
              f"log {run.dir / 'chaos.log'}", flush=True)
        rc = 1
    finally:
        run.cleanup()
    return rc


if __name__ == "__main__":
    sys.exit(main())
