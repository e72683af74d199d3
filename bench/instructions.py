#!/usr/bin/env python3
"""Instructions per message of pulsarc's send path, under callgrind (see bench/instructions).

Each case runs pulsarc-perf against its own pulsarc-null-broker (a broker that
acknowledges at once, so only the client works) under `valgrind --tool=callgrind` and
divides two counts by the messages sent:

- process: every instruction the pulsarc-perf process ran, start-up, the tool's own loop
  and the C library included (the figure the issues quote);
- library: the instructions of functions compiled from src/ (pulsarc itself, inlined
  code counted where it was inlined), which needs a build with debug information.

Instruction counts do not depend on the machine's load the way times do, so a budget can
hold them in CI: with --check, a case fails when it exceeds its budget by more than the
tolerance.
"""
import argparse
import os
import re
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field


@dataclass
class Case:
    key: str
    title: str
    messages: int
    perf_args: list
    broker_args: list = field(default_factory=list)
    tls: bool = False  # pulsar+ssl:// to a null broker serving the run's test certificate


CASES = [
    Case("b100", "100 B batched", 400_000, ["-s", "100", "--batching"]),
    Case("u100", "100 B unbatched", 200_000, ["-s", "100", "--no-batching"]),
    Case("lz4", "1 KiB lz4 batched", 200_000, ["-s", "1024", "--batching", "-z", "lz4"]),
    # One producer per topic on one connection: per-producer costs (timers, batches,
    # writes) show here.
    Case("t100", "100 B batched, 100 topics", 400_000,
         ["-s", "100", "--batching", "--topics", "100"]),
    # The null broker says every topic has 1000 partitions.
    Case("p1000", "100 B batched, 1000 partitions", 400_000, ["-s", "100", "--batching"],
         ["--partitions", "1000"]),
    # TLS 1.3 with AES-256-GCM (OpenSSL's default, as the C++ client and a broker agree on):
    # the write path's records, the cipher counted too (its instructions are libcrypto's,
    # in the process figure only). The host name is checked, as by default.
    Case("tb100", "100 B batched, TLS", 400_000, ["-s", "100", "--batching"], tls=True),
]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_listening(path, proc, timeout_s=10):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"the null broker ended: {open(path).read()}")
        if "listening" in open(path).read():
            return
        time.sleep(0.05)
    raise RuntimeError("the null broker did not start")


def annotate_totals(out_file):
    """(whole process, functions from src/) in instructions."""
    text = subprocess.run(["callgrind_annotate", "--inclusive=no", "--auto=no", "--threshold=100", out_file],
                          check=True, capture_output=True, text=True).stdout
    total = library = 0
    for line in text.splitlines():
        m = re.match(r"^\s*([\d,]+)\s+(?:\([\s\d.%]+\)\s+)?(\S.*)$", line)
        if not m:
            continue
        count = int(m.group(1).replace(",", ""))
        where = m.group(2)
        if "PROGRAM TOTALS" in where:
            total = count
            continue
        path = where.split(":", 1)[0]
        if path.startswith("src/") or "/src/" in path and "/bench/" not in path:
            library += count
    return total, library


def perf_argv(bin_dir, url, topic, messages):
    """pulsarc-perf's command line for a case, before the case's own flags. Since issue 31
    it takes pulsar-perf produce's flags (topic as an argument, -m the count) and defaults
    (100 msg/s, no pending limit, batching 1 ms / 4 MiB, no send timeout): the flags here
    keep the configuration every budget was measured with (as fast as possible, 1000
    pending, batching 10 ms / 128 KiB / 1000, send timeout 30 s). Older builds, measured
    for a comparison, take -t TOPIC -n COUNT; some do not know --stats-interval (no
    periodic rate lines)."""
    perf = os.path.join(bin_dir, "pulsarc-perf")
    usage = subprocess.run([perf, "--help"], capture_output=True, text=True)
    text = usage.stdout + usage.stderr
    quiet = ["--stats-interval", "0"] if "--stats-interval" in text else []
    if "--num-messages" in text:
        return [perf, "-u", url, topic, "-m", str(messages), "-r", "0", "-o", "1000",
                "-b", "10", "-bb", "131072", "-bm", "1000", "--send-timeout", "30"] + quiet
    return [perf, "-u", url, "-t", topic, "-n", str(messages)] + quiet


def run_case(case, bin_dir, workdir, keep, tls_dir):
    port = free_port()
    log = os.path.join(workdir, f"{case.key}.nullbroker.log")
    broker_args, perf_args, url = case.broker_args, case.perf_args, f"pulsar://127.0.0.1:{port}"
    if case.tls:
        if not tls_dir:
            raise RuntimeError(f"{case.key} needs --tls-dir")
        broker_args = broker_args + ["--tls-cert", os.path.join(tls_dir, "broker.cert.pem"),
                                     "--tls-key", os.path.join(tls_dir, "broker.key.pem")]
        perf_args = perf_args + ["--tls-trust-certs", os.path.join(tls_dir, "ca.cert.pem")]
        url = f"pulsar+ssl://127.0.0.1:{port}"
    with open(log, "w") as out:
        broker = subprocess.Popen([os.path.join(bin_dir, "pulsarc-null-broker"), "-p", str(port)]
                                  + broker_args, stdout=out, stderr=subprocess.STDOUT)
    try:
        wait_listening(log, broker)
        cg_out = os.path.join(workdir, f"{case.key}.callgrind.out")
        perf_log = os.path.join(workdir, f"{case.key}.perf.log")
        argv = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={cg_out}"] + \
            perf_argv(bin_dir, url, f"persistent://public/default/instr-{case.key}",
                      case.messages) + perf_args
        with open(perf_log, "w") as out:
            rc = subprocess.run(argv, stdout=out, stderr=subprocess.STDOUT).returncode
        if rc != 0:
            raise RuntimeError(f"{case.key}: pulsarc-perf exited {rc}; see {perf_log}")
        sent = re.search(r"^RESULT .*?\bmsgs=(\d+)", open(perf_log).read(), re.M)
        messages = int(sent.group(1)) if sent else case.messages
        total, library = annotate_totals(cg_out)
        if not keep:
            os.unlink(cg_out)
        return total / messages, library / messages
    finally:
        broker.terminate()
        broker.wait()


def read_budget(path):
    budget = {}
    for line in open(path):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        key, process, library, *tolerance = line.split()
        budget[key] = (float(process), float(library), float(tolerance[0]) if tolerance else None)
    return budget


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin-dir", required=True)
    ap.add_argument("--cases", default=",".join(c.key for c in CASES))
    ap.add_argument("--budget", help="the limits file (bench/instructions.budget)")
    ap.add_argument("--check", action="store_true", help="fail a case above its budget")
    ap.add_argument("--tolerance", type=float, default=5.0, help="percent (default 5)")
    ap.add_argument("--keep", metavar="DIR", help="keep the callgrind files in DIR")
    ap.add_argument("--tls-dir", help="ca.cert.pem, broker.cert.pem, broker.key.pem for the "
                    "TLS cases (bench/instructions makes them)")
    args = ap.parse_args()

    wanted = args.cases.split(",")
    unknown = set(wanted) - {c.key for c in CASES}
    if unknown:
        ap.error(f"unknown cases: {', '.join(sorted(unknown))}")
    budget = read_budget(args.budget) if args.budget else {}
    workdir = args.keep or tempfile.mkdtemp(prefix="pulsarc-instructions-")
    os.makedirs(workdir, exist_ok=True)

    print(f"{'case':<8} {'messages':>9} {'process/msg':>12} {'library/msg':>12}  budget (process, library)")
    failed = passed = 0
    for case in [c for c in CASES if c.key in wanted]:
        process, library = run_case(case, args.bin_dir, workdir, bool(args.keep), args.tls_dir)
        verdict = ""
        if case.key in budget:
            limit_p, limit_l, case_tolerance = budget[case.key]
            tolerance = case_tolerance if case_tolerance is not None else args.tolerance
            over = [what for what, got, limit in (("process", process, limit_p),
                                                  ("library", library, limit_l))
                    if got > limit * (1 + tolerance / 100)]
            verdict = f"{limit_p:.0f}, {limit_l:.0f}" + (f" (±{tolerance:g} %)" if case_tolerance else "")
            if over:
                verdict += f"  OVER ({', '.join(over)} more than {tolerance:g} % above)"
                failed += 1
            else:
                passed += 1
        elif args.check:
            verdict = "no budget"
            failed += 1
        print(f"{case.key:<8} {case.messages:>9} {process:>12.0f} {library:>12.0f}  {verdict}",
              flush=True)
    if args.check:
        print(f"INSTRUCTIONS {passed} passed, {failed} failed")
        sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
