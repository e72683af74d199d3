"""The deterministic message set that interop_producer.c sends, regenerated in Python.

Both sides use the same xorshift64 generator, so a test knows every payload, key,
ordering key, property and event time pulsarc should have written without passing the
data around."""

MASK = (1 << 64) - 1


class XorShift64:
    def __init__(self, seed: int):
        self.state = seed & MASK

    def next(self) -> int:
        x = self.state
        x ^= (x << 13) & MASK
        x ^= x >> 7
        x ^= (x << 17) & MASK
        self.state = x
        return x


def gen_messages(count: int, seed: int = 1, max_size: int = 512) -> list[dict]:
    g = XorShift64(seed)
    out = []
    for i in range(count):
        n = g.next() % (max_size + 1) if max_size else 0
        data = bytes(g.next() & 0xFF for _ in range(n))
        out.append({
            "data": data,
            "partition_key": None if i % 5 == 0 else f"key-{i % 13}",
            "ordering_key": f"ok-{i % 3}".encode() if i % 4 == 1 else None,
            "properties": {"index": str(i), "tag": f"t{i % 3}"},
            "event_timestamp": 1700000000000 + i,
        })
    return out


def read_ids(path: str) -> list[dict]:
    """The ids file interop_producer writes: index ledger entry partition batch hex result."""
    ids = []
    with open(path) as f:
        for line in f:
            i, ledger, entry, part, batch, ser, result = line.split()
            ids.append({"index": int(i), "ledger": int(ledger), "entry": int(entry),
                        "partition": int(part), "batch_index": int(batch),
                        "serialized": bytes.fromhex(ser) if ser != "-" else b"",
                        "result": result})
    return ids


def gen_messages_range(first: int, count: int, seed: int = 1, max_size: int = 512) -> list[dict]:
    """Messages first .. first+count-1 of the set: what `interop_producer --first-index
    first` sends (each message is the same as in a run from 0)."""
    return gen_messages(first + count, seed=seed, max_size=max_size)[first:]
