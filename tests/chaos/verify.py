"""The chaos run's verdict: each workload's event log (every incarnation's lines) held to
what the official Python client reads back, as /work/chaos-spec.md ("What the verifier
holds the log to") and docs/testing.md describe:

  ok            -> stored exactly once (within one cluster; failover: at least one cluster)
  failed        -> stored at most once, and the error has a name
  accepted, no callback -> the spool's killed incarnations: stored exactly once by the end
                   (the last incarnation drains the spool); any other: an error
  sending only  -> stored at most once (killed mid-send)
  refused       -> never stored
  order         -> within each partition (and key) the counters read back increase
  txn           -> committed: its acknowledged messages exactly once; aborted: never
                   visible; a commit or abort that failed: all or none
  encrypted     -> every message decrypts; chunked -> SHA-256 of each message matches the
                   payload recomputed from its counter and size

A counter is the decimal number in the payload's prefix "<workload>-<9 digits>"."""

from __future__ import annotations

import hashlib
import re
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field

import pulsar

import rig  # noqa: F401 - first: it puts tests/interop on sys.path
import pulsar_helpers as ph

NAMED = re.compile(r"^[A-Z][A-Z0-9_]+$")
CHUNKED_MIN, CHUNKED_MAX = 6 * 1000 * 1000, 20 * 1024 * 1024
PLAIN_SIZE = 100
EXAMPLES = 20           # counters listed per finding in the report


# --------------------------------------------------------------------------------------
# Payloads
# --------------------------------------------------------------------------------------

def prefix(workload: str, c: int) -> bytes:
    return f"{workload}-{c:09d}".encode()


def expected_payload(workload: str, c: int, size: int) -> bytes:
    """The payload of counter c: the prefix, then filler whose byte at offset k (from the
    payload's start) is (c * 31 + k) & 0xff."""
    head = prefix(workload, c)[:size]
    n = size - len(head)
    first = (c * 31 + len(head)) & 0xFF
    cycle = bytes((first + i) & 0xFF for i in range(256))
    return head + (cycle * (n // 256 + 1))[:n]


def parse_counter(workload: str, data: bytes) -> int | None:
    head = workload.encode() + b"-"
    if not data.startswith(head) or len(data) < len(head) + 9 or not data[len(head):len(head) + 9].isdigit():
        return None
    return int(data[len(head):len(head) + 9])


# --------------------------------------------------------------------------------------
# The event log
# --------------------------------------------------------------------------------------

@dataclass
class Events:
    """Everything the log says about one counter."""
    inc: int                          # the incarnation that sent it
    sending: int = 0
    accepted: int = 0
    refused: list[str] = field(default_factory=list)
    ok: list[tuple] = field(default_factory=list)       # (ledger, entry, partition, batch)
    failed: list[str] = field(default_factory=list)
    txn: tuple | None = None                            # (incarnation, t)
    topic: int = 0                                      # txn: which of the two topics


@dataclass
class Txn:
    key: tuple
    counters: list[int] = field(default_factory=list)
    begun: bool = False
    commit: str | None = None         # "ok" or a result name
    abort: str | None = None


@dataclass
class Inc:
    k: int
    pid: int
    first: int
    created: bool = False
    flush: str | None = None
    end: tuple | None = None          # (accepted, ok, failed)
    counted: list[int] = field(default_factory=lambda: [0, 0, 0])   # the same, from the lines


@dataclass
class Log:
    counters: dict[int, Events] = field(default_factory=dict)
    txns: dict[tuple, Txn] = field(default_factory=dict)
    incs: list[Inc] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def parse_log(path) -> Log:
    log = Log()
    inc = -1
    with open(path, "rb") as f:
        raw = f.read()
    lines = raw.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    elif lines:
        log.problems.append(f"last line without a newline (a torn write?): {lines[-1][:80]!r}")
        lines.pop()
    for no, b in enumerate(lines, 1):
        w = b.decode("utf-8", "replace").split()
        if not w:
            log.problems.append(f"line {no}: empty")
            continue
        try:
            kind = w[0]
            if kind == "start":
                inc += 1
                log.incs.append(Inc(inc, int(w[1]), int(w[3])))
                continue
            if inc < 0:
                log.problems.append(f"line {no}: before any start line: {' '.join(w)}")
                continue
            cur = log.incs[inc]
            if kind == "created":
                cur.created = True
            elif kind == "flush":
                cur.flush = w[1]
            elif kind == "end":
                cur.end = tuple(int(x) for x in w[1:4])
            elif kind in ("txn-begin", "txn-commit", "txn-abort"):
                t = log.txns.setdefault((inc, int(w[1])), Txn((inc, int(w[1]))))
                if kind == "txn-begin":
                    t.begun = True
                elif kind == "txn-commit":
                    t.commit = w[2]
                else:
                    t.abort = w[2]
            elif kind in ("sending", "accepted", "refused", "ok", "failed"):
                c = int(w[1])
                ev = log.counters.get(c)
                if ev is None:
                    ev = log.counters[c] = Events(inc)
                    if kind != "sending":
                        log.problems.append(f"line {no}: '{kind}' for counter {c} before its 'sending'")
                if kind == "sending":
                    # The own-loop driver tries a counter again after QUEUE_FULL (on the
                    # loop a send cannot wait for room; chaos_own_loop.c), with no line
                    # for the attempt that was not taken: several "sending" lines, one
                    # "accepted" at most.
                    ev.sending += 1
                    opts = dict(x.split("=", 1) for x in w[2:] if "=" in x)
                    if "txn" in opts:
                        ev.txn = (inc, int(opts["txn"]))
                        ev.topic = int(opts.get("topic", 0))
                        log.txns.setdefault(ev.txn, Txn(ev.txn)).counters.append(c)
                if kind in ("accepted", "ok", "failed"):
                    cur.counted[("accepted", "ok", "failed").index(kind)] += 1
                if kind == "accepted":
                    ev.accepted += 1
                elif kind == "refused":
                    ev.refused.append(w[2])
                elif kind == "ok":
                    ev.ok.append(tuple(int(x) for x in w[2].split(":")))
                elif kind == "failed":
                    ev.failed.append(w[2] if len(w) > 2 else "")
            else:
                log.problems.append(f"line {no}: unknown event: {' '.join(w)[:120]}")
        except (IndexError, ValueError):
            log.problems.append(f"line {no}: malformed: {b[:120]!r}")
    for i in log.incs:
        if i.end is not None and tuple(i.counted) != i.end:
            log.problems.append(f"incarnation {i.k} (pid {i.pid}): its end line says accepted/ok/failed "
                                f"{i.end}, its lines {tuple(i.counted)}")
    return log


# --------------------------------------------------------------------------------------
# Reading back
# --------------------------------------------------------------------------------------

@dataclass
class Stored:
    c: int | None
    size: int
    payload_ok: bool
    mid: tuple
    key: str | None
    producer: str
    encrypted: bool | None = None
    decrypt_failed: bool = False


def read_stream(client: "pulsar.Client", topic: str, workload: str, crypto=None,
                timeout_s: float = 1800) -> tuple[list[Stored], list[str]]:
    """Every message stored on one topic (or partition), from the earliest, until the
    broker says none is left. Returns them and notes about how the read ended."""
    notes: list[str] = []
    out: list[Stored] = []
    kw = {"receiver_queue_size": 2000}
    if crypto is not None:
        # CONSUME: an entry that cannot be decrypted still comes, flagged, so it is counted
        # rather than stalling the read.
        kw["crypto_key_reader"] = crypto
        kw["crypto_failure_action"] = pulsar.ConsumerCryptoFailureAction.CONSUME
    reader = client.create_reader(topic, pulsar.MessageId.earliest, **kw)
    deadline = time.monotonic() + timeout_s
    stalls = 0
    try:
        while reader.has_message_available():
            if time.monotonic() > deadline:
                notes.append(f"{topic}: reading did not finish within {timeout_s} s")
                break
            try:
                msg = reader.read_next(timeout_millis=10_000)
            except pulsar.Timeout:
                # The broker still counts entries no read returns: the first chunks of an
                # attempt a resend started over (docs/delivery.md), or markers.
                stalls += 1
                if stalls >= 3:
                    notes.append(f"{topic}: entries left that no read returns (incomplete chunked "
                                 f"messages or transaction markers)")
                    break
                continue
            stalls = 0
            data = msg.data()
            c = parse_counter(workload, data)
            mid = msg.message_id()
            enc = None
            failed = False
            if crypto is not None:
                ctx = msg.encryption_context()
                enc = ctx is not None
                failed = bool(ctx is not None and ctx.is_decryption_failed())
            if c is None:
                ok = False
            elif workload == "chunked":
                ok = CHUNKED_MIN <= len(data) <= CHUNKED_MAX and \
                    hashlib.sha256(data).digest() == hashlib.sha256(expected_payload(workload, c, len(data))).digest()
            else:
                ok = len(data) == PLAIN_SIZE and data == expected_payload(workload, c, len(data))
            out.append(Stored(c, len(data), ok, (mid.ledger_id(), mid.entry_id(), mid.partition(),
                                                 mid.batch_index()),
                              msg.partition_key() or None, msg.producer_name(), enc, failed))
    finally:
        reader.close()
    return out, notes


# --------------------------------------------------------------------------------------
# A known broker defect: a committed transaction aborted on one of its topics
# --------------------------------------------------------------------------------------
#
# Pulsar 4.0.8's transaction coordinator sends the commit to each topic of a transaction
# (END_TXN_ON_PARTITION) through its TransactionBufferHandlerImpl, which looks the topic up
# first. When that lookup fails with BrokerMetadataException, as it does while the topic's
# bundle is being unloaded ("Namespace bundle ... is being unloaded"), the handler logs
# "endTxn error topic: [T]" and completes the request as if it had succeeded (meant for a
# deleted topic, apache/pulsar#11304). The coordinator then reports the commit done, and
# the topic, which never got it, aborts the transaction when the coordinator's low water
# mark passes it ("Successes to abort low water mark for txn [(m,l)], topic [T]"): the
# client was told "committed", part of the transaction is never visible. Seen in the
# chaos run with seed 29 (a bundle unload during a commit). Such messages are counted
# apart ("aborted by the broker"), and only when both broker lines are there.

LWM_ABORT = re.compile(r"^(\S+) .*Successes to abort low water mark for txn \[\((\d+),(\d+)\)\], "
                       r"topic \[(\S+)\]")
ENDTXN_ERROR = re.compile(r"^(\S+) .*TransactionBufferHandlerImpl - endTxn error topic: \[(\S+)\]")


def broker_txn_evidence(logs) -> tuple[dict, dict]:
    """From the brokers' logs: {(most, least, topic): time} of low-water-mark aborts, and
    {topic: [time]} of commits the coordinator's handler gave up on a BrokerMetadataException."""
    aborts, gave_up = {}, defaultdict(list)
    for path in logs:
        try:
            f = open(path, errors="replace")
        except OSError:
            continue
        with f:
            pending = None
            for line in f:
                if pending is not None:
                    if "BrokerMetadataException" in line:
                        gave_up[pending[1]].append(pending[0])
                    pending = None
                if "endTxn error topic" in line:
                    m = ENDTXN_ERROR.match(line)
                    if m:
                        pending = (m[1], m[2])
                        if "BrokerMetadataException" in line:
                            gave_up[m[2]].append(m[1])
                            pending = None
                elif "abort low water mark" in line:
                    m = LWM_ABORT.match(line)
                    if m:
                        aborts[(int(m[2]), int(m[3]), m[4])] = m[1]
    return aborts, gave_up


def position(text: str) -> tuple[int, int] | None:
    """"ledger:entry" as a pair, None when it is not one."""
    try:
        ledger, entry = text.split(":")[:2]
        return int(ledger), int(entry)
    except (AttributeError, ValueError):
        return None


def explain_txn_losses(lost: list[int], log: "Log", topics: list[str], entry_headers, evidence,
                       buffer_stats) -> dict:
    """{counter: why} for the lost messages of committed transactions that the broker
    stored and then did not let readers have, after its coordinator gave up a commit on
    that topic (docs/transactions.md), each with its evidence; `kind` says which:
      aborted  the entry is marked aborted, and the broker's log shows the low-water-mark
               abort of its transaction after a commit given up on that topic;
      held     the entry is stored (the admin API gives it at the receipt's position, not
               aborted) past the topic's max read position, the topic's transaction buffer
               holds transactions open, and the broker's log shows a commit given up on
               that topic: readers stop at the first open one (buffer_stats(topic) gives
               the transactionBufferStats). A message pulsarc never sent, or sent outside
               its transaction, has none of this."""
    aborts, gave_up = evidence
    stats = {}
    out = {}
    for c in lost:
        ev = log.counters.get(c)
        if ev is None or ev.txn is None or not ev.ok or ev.ok[0][0] < 0:
            continue
        topic = topics[ev.topic]
        if not gave_up.get(topic):
            continue
        h = entry_headers(topic, ev.ok[0][0], ev.ok[0][1])
        if not h:
            continue
        txn = (int(h.get("x-pulsar-txnid-most-bits", -1)), int(h.get("x-pulsar-txnid-least-bits", -1)))
        if h.get("x-pulsar-txn-aborted") == "true":
            at = aborts.get((*txn, topic))
            if at and any(t <= at for t in gave_up[topic]):
                out[c] = {"kind": "aborted", "txn": list(txn), "topic": topic,
                          "low_water_mark_abort": at,
                          "commit_given_up": [t for t in gave_up[topic] if t <= at][-1]}
            continue
        if topic not in stats:
            stats[topic] = buffer_stats(topic) or {}
        st = stats[topic]
        horizon = position(st.get("maxReadPosition"))
        if txn[0] >= 0 and horizon and st.get("ongoingTxnSize", 0) > 0 and \
                (ev.ok[0][0], ev.ok[0][1]) > horizon:
            out[c] = {"kind": "held", "txn": list(txn), "topic": topic,
                      "max_read_position": st["maxReadPosition"],
                      "open_transactions": st["ongoingTxnSize"],
                      "commit_given_up": gave_up[topic][0]}
    return out


# --------------------------------------------------------------------------------------
# The verdict of one workload
# --------------------------------------------------------------------------------------

def examples(cs) -> list:
    return sorted(cs)[:EXAMPLES]


def verify_workload(wl, log: Log, streams: dict[tuple, list[Stored]], read_notes: list[str],
                    spool_drained: bool, explain=None) -> dict:
    """streams: (cluster, topic index, partition) -> what was read there, in order."""
    name = wl.name
    killed = {i.k for i in wl.incarnations if i.killed}
    findings: dict[str, list] = defaultdict(list)
    checks: dict[str, bool] = {}

    # -- the log on its own --------------------------------------------------------------
    failed_by = Counter()
    refused_by = Counter()
    sent = accepted = oks = 0
    no_callback_killed = []
    for c, ev in log.counters.items():
        sent += ev.sending > 0
        accepted += ev.accepted > 0
        oks += bool(ev.ok)
        for r in ev.failed:
            failed_by[r or "(no name)"] += 1
            if not NAMED.match(r):
                findings["failure without a named error"].append(c)
        for r in ev.refused:
            refused_by[r] += 1
        if len(ev.ok) + len(ev.failed) > 1:
            findings["more than one callback"].append(c)
        if ev.refused and (ev.accepted or ev.ok or ev.failed):
            findings["refused and accepted"].append(c)
        if ev.accepted > 1 or len(ev.refused) > 1:
            findings["accepted or refused twice"].append(c)
        if ev.accepted and not ev.ok and not ev.failed:
            if name == "spool" and ev.inc in killed:
                no_callback_killed.append(c)
            else:
                findings["left without a callback"].append(c)

    # -- what must, may and must not be stored --------------------------------------------
    must: set[int] = set()
    never: set[int] = set()
    groups: list[tuple[tuple, list[int]]] = []       # txn all-or-none
    txn_counts = Counter()
    for c, ev in log.counters.items():
        if ev.refused and not ev.accepted:
            never.add(c)
        elif ev.txn is None:
            if ev.ok:
                must.add(c)
            elif name == "spool" and c in set(no_callback_killed):
                must.add(c)
    if name == "txn":
        for key, t in log.txns.items():
            acked = [c for c in t.counters if log.counters[c].ok]
            if t.abort == "ok":
                never.update(t.counters)
                txn_counts["aborted"] += 1
            elif t.commit == "ok":
                must.update(acked)
                txn_counts["committed"] += 1
            else:
                groups.append((key, acked))
                txn_counts["commit or abort failed" if (t.commit or t.abort) else "no outcome"] += 1
    no_callback_killed = set(no_callback_killed)

    # -- what was read back ----------------------------------------------------------------
    copies: dict[str, Counter] = defaultdict(Counter)   # cluster -> counter -> copies
    ooo = 0
    ooo_examples = []
    bad_payload = []
    foreign = 0
    undecryptable = []
    unencrypted = []
    keys_in = defaultdict(set)
    stored_ids = defaultdict(set)
    producers = set()
    read_back = 0
    for (cluster, ti, part), msgs in streams.items():
        seen = set()
        top = -1
        per_key_top: dict[str, int] = {}
        for m in msgs:
            read_back += 1
            producers.add(m.producer)
            if m.c is None:
                foreign += 1
                continue
            copies[cluster][m.c] += 1
            stored_ids[m.c].add(m.mid)
            if not m.payload_ok:
                bad_payload.append(m.c)
            if m.encrypted is False:
                unencrypted.append(m.c)
            if m.decrypt_failed:
                undecryptable.append(m.c)
            if m.key is not None:
                keys_in[m.key].add(part)
            if name == "txn" and log.counters.get(m.c) and log.counters[m.c].topic != ti:
                findings["stored in the other topic of its transaction"].append(m.c)
            if m.c in seen:
                continue                                  # a duplicate: counted as such
            seen.add(m.c)
            if m.c < top:
                ooo += 1
                ooo_examples.append((cluster, ti, part, m.c, top))
            top = max(top, m.c)
            if m.key is not None:
                if m.c < per_key_top.get(m.key, -1):
                    findings["out of order within a key"].append(m.c)
                per_key_top[m.key] = max(per_key_top.get(m.key, -1), m.c)

    total = Counter()
    for cl in copies.values():
        total.update(cl)
    lost = sorted(c for c in must if total[c] == 0)
    by_broker = explain(lost) if (explain and lost) else {}
    broker_aborted = {c: w for c, w in by_broker.items() if w["kind"] == "aborted"}
    broker_held = {c: w for c, w in by_broker.items() if w["kind"] == "held"}
    lost = [c for c in lost if c not in by_broker]
    dup = sorted({c for cl in copies.values() for c, n in cl.items() if n > 1})
    dup_extra = sum(n - 1 for cl in copies.values() for n in cl.values() if n > 1)
    unexpected = sorted(c for c in total if c in never)
    unknown = sorted(c for c in total if c not in log.counters)
    if broker_aborted:
        findings["committed, then aborted by the broker (Pulsar's coordinator gave the commit up)"] = \
            [{"counter": c, **why} for c, why in sorted(broker_aborted.items())]
    if broker_held:
        findings["committed and stored, held back by the broker (reads stop at a transaction "
                 "its coordinator left open)"] = \
            [{"counter": c, **why} for c, why in sorted(broker_held.items())]
    for key, acked in groups:
        stored = [c for c in acked if total[c]]
        if stored and len(stored) != len(acked):
            # A commit the client saw fail (its outcome unknown) that the coordinator carried
            # out on one topic and gave up on the other: the same broker defect, with the
            # same evidence for every message missing (aborted on its topic after a commit
            # given up there). Anything short of that is a transaction partly visible.
            missing = [c for c in acked if not total[c]]
            why = explain(missing) if explain else {}
            if all(why.get(c, {}).get("kind") == "aborted" for c in missing):
                findings["commit failed, then carried out on one topic and aborted by the broker "
                         "on the other (Pulsar's coordinator gave the commit up there)"].append(
                    {"txn": list(key), "acked": len(acked), "stored": len(stored),
                     "evidence": why[missing[0]]})
            else:
                findings["transaction partly visible"].append({"txn": list(key), "acked": len(acked),
                                                               "stored": len(stored)})
    for c, ev in log.counters.items():
        for ok in ev.ok:
            if ok[0] >= 0 and stored_ids[c] and not any(
                    (s[0], s[1], s[3]) == (ok[0], ok[1], ok[3]) and (wl.partitions == 0 or s[2] == ok[2])
                    for s in stored_ids[c]):
                findings["stored elsewhere than its receipt said"].append(c)
    if len([k for k, parts in keys_in.items() if len(parts) > 1]):
        findings["key routed to several partitions"] += sorted(k for k, p in keys_in.items() if len(p) > 1)

    in_both = []
    if len(wl.clusters) > 1:
        in_both = sorted(set(copies["cluster"]) & set(copies["standalone"]))

    # -- the processes -----------------------------------------------------------------
    crashed, hung, early = [], [], []
    sanitizer = wl.sanitizer_report()
    for i in wl.incarnations:
        if i.hung:
            hung.append(i.k)
        elif i.killed:
            continue
        elif i.status is not None and i.status < 0:
            crashed.append({"k": i.k, "signal": -i.status})
        elif not i.terminated and not i.bounded:
            early.append({"k": i.k, "exit_status": i.status})
    last_flush = [i.flush for i in log.incs if i.flush is not None]

    for k, v in (("unexpected (refused or aborted) stored", unexpected),
                 ("stored but never sent", unknown), ("payload mismatch", bad_payload),
                 ("stored unencrypted", unencrypted), ("cannot be decrypted", undecryptable)):
        if v:
            findings[k] = v
    if foreign:
        findings["messages of no workload"].append(foreign)
    for p in log.problems:
        findings["log problems"].append(p)

    checks["nothing lost"] = not lost
    checks["nothing duplicated"] = not dup
    checks["in order"] = ooo == 0 and not findings.get("out of order within a key")
    checks["one named callback each"] = not (findings.get("left without a callback") or
                                             findings.get("accepted or refused twice") or
                                             findings.get("refused and accepted") or
                                             findings.get("more than one callback") or
                                             findings.get("failure without a named error"))
    checks["payloads intact"] = not (bad_payload or unknown or foreign)
    checks["no crash or hang"] = not (crashed or hung or early or sanitizer)
    if name == "encrypted":
        checks["every message decrypts"] = not (undecryptable or unencrypted)
    if name == "chunked":
        checks["SHA-256 of each message"] = not bad_payload
    if name == "txn":
        checks["aborted never visible, committed whole"] = not (
            unexpected or findings.get("transaction partly visible") or
            findings.get("stored in the other topic of its transaction"))
    if name == "spool":
        checks["the spool drained"] = spool_drained
    if name == "keyed":
        checks["one partition per key"] = not findings.get("key routed to several partitions")
    checks["receipts name the stored entry"] = not findings.get("stored elsewhere than its receipt said")
    checks["the log is well formed"] = not log.problems

    def listed(v):
        return v if isinstance(v, int) else {"count": len(v), "first": v[:EXAMPLES]}

    return {
        "topics": wl.topics, "partitions": wl.partitions, "service_url": wl.url,
        "clusters": wl.clusters,
        "producer_names": sorted(p for p in producers if p) or ([wl.producer_name] if wl.producer_name else []),
        "incarnations": [i.to_report() for i in wl.incarnations],
        "sent": sent, "accepted": accepted, "refused_by_error": dict(refused_by),
        "acknowledged": oks, "failed_by_error": dict(failed_by),
        "spool_accepted_without_callback": len(no_callback_killed),
        "must_be_stored": len(must),
        "read_back": read_back, "distinct_read_back": len(total),
        "lost": len(lost), "lost_counters": examples(lost),
        "aborted_by_broker": len(broker_aborted), "aborted_by_broker_counters": examples(broker_aborted),
        "held_by_broker": len(broker_held), "held_by_broker_counters": examples(broker_held),
        "duplicated": len(dup), "duplicate_copies": dup_extra, "duplicated_counters": examples(dup),
        "out_of_order": ooo, "out_of_order_examples": ooo_examples[:EXAMPLES],
        "in_both_clusters": len(in_both), "in_both_clusters_counters": examples(in_both),
        "per_cluster": {cl: sum(v.values()) for cl, v in copies.items()},
        "transactions": dict(txn_counts),
        "flush": last_flush,
        "crashed": crashed, "hung": hung, "exited_early": early, "sanitizer_reports": sanitizer,
        "read_notes": read_notes,
        "findings": {k: listed(v) for k, v in findings.items()},
        "checks": checks,
        "must": sorted(must),
    }
