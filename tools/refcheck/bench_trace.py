"""The requests of the benchmark's trace (bench/bench_twins.py), one for every system: each adapter's
`bench_workload` puts them in its own workload with its settings."""

from __future__ import annotations

import random


def bench_requests(num_requests: int, seed: int = 0) -> list[dict]:
    """`num_requests` requests arriving over the first 40 steps, in arrival order: prompts of 32..512 tokens (half
    of them starting with one of four 256-token stems, so prefixes are shared), 16..256 output tokens, each
    {"arrival", "prompt", "output"}."""
    rng = random.Random(seed)
    stems = [[rng.randint(1, 30000) for _ in range(256)] for _ in range(4)]
    requests = []
    for _ in range(num_requests):
        n = rng.randint(32, 512)
        prompt = (rng.choice(stems) + [rng.randint(1, 30000) for _ in range(n)])[:n] if rng.random() < 0.5 else \
            [rng.randint(1, 30000) for _ in range(n)]
        requests.append({"arrival": rng.randint(0, 40), "prompt": prompt, "output": rng.randint(16, 256)})
    requests.sort(key=lambda r: r["arrival"])
    return requests
