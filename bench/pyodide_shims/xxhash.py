"""Stands for the xxhash package in Pyodide from the npm package, which ships no xxhash wheel: XXH64 in pure Python,
written from the algorithm's specification, with the two calls the run makes (`xxh64().update/intdigest`,
`xxh64_intdigest`), digest for digest as the C package (tests/test_bench_sandbox.py)."""

MASK = (1 << 64) - 1
P1, P2, P3, P4, P5 = (11400714785074694791, 14029467366897019727, 1609587929392839161, 9650029242287828579,
                      2870177450012600261)


def _rotl(x: int, r: int) -> int:
    return ((x << r) | (x >> (64 - r))) & MASK


def _round(acc: int, lane: int) -> int:
    return (_rotl((acc + lane * P2) & MASK, 31) * P1) & MASK


def _lane(data: bytes, i: int, width: int = 8) -> int:
    return int.from_bytes(data[i:i + width], "little")


def xxh64_intdigest(data: bytes, seed: int = 0) -> int:
    n, i = len(data), 0
    if n >= 32:
        acc = [(seed + P1 + P2) & MASK, (seed + P2) & MASK, seed, (seed - P1) & MASK]
        while i + 32 <= n:
            acc = [_round(a, _lane(data, i + 8 * k)) for k, a in enumerate(acc)]
            i += 32
        h = (_rotl(acc[0], 1) + _rotl(acc[1], 7) + _rotl(acc[2], 12) + _rotl(acc[3], 18)) & MASK
        for a in acc:
            h = ((h ^ _round(0, a)) * P1 + P4) & MASK
    else:
        h = (seed + P5) & MASK
    h = (h + n) & MASK
    while i + 8 <= n:
        h = (_rotl(h ^ _round(0, _lane(data, i)), 27) * P1 + P4) & MASK
        i += 8
    if i + 4 <= n:
        h = (_rotl(h ^ ((_lane(data, i, 4) * P1) & MASK), 23) * P2 + P3) & MASK
        i += 4
    for byte in data[i:]:
        h = (_rotl(h ^ ((byte * P5) & MASK), 11) * P1) & MASK
    h = ((h ^ (h >> 33)) * P2) & MASK
    h = ((h ^ (h >> 29)) * P3) & MASK
    return h ^ (h >> 32)


class xxh64:  # noqa: N801 (the package's name)
    def __init__(self, data: bytes = b""):
        self._data = bytearray(data)

    def update(self, data: bytes):
        self._data += data

    def intdigest(self) -> int:
        return xxh64_intdigest(bytes(self._data))
