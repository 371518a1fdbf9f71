"""Workloads: generators of a run's requests (`Request`, engine/run/recipe.py) and when they arrive, in the usual
shapes.

Every generator takes a seed and is deterministic, so a scenario replays identically. Arrival steps follow
the engine's convention (engine/run/frame.py): a request with arrival a can be scheduled from step a + 1.
"""

from __future__ import annotations

import random
import sys
import tomllib
from pathlib import Path

from engine.run.recipe import Request
from i18n import MessageError

CHAT_PROMPTS_FILE = Path(__file__).with_name("chat_prompts.toml")

# Mean prompt and output lengths of the ShareGPT conversations used by vLLM's benchmarks.
SHAREGPT_MEAN_INPUT, SHAREGPT_MEAN_OUTPUT = 161, 338


def random_token_prompts(n: int, seed: int = 0, min_len: int = 1, max_len: int = 10, low: int = 1,
                         high: int = 999) -> list[list[int]]:
    """The article's prompts: `n` lists of min_len..max_len random token ids in [low, high]."""
    rng = random.Random(seed)
    return [[rng.randint(low, high) for _ in range(rng.randint(min_len, max_len))] for _ in range(n)]


def chat_prompts() -> list[dict]:
    """The built-in chat prompts: dicts with `name`, `text` and `system` (whether `text` starts with the
    shared system prompt)."""
    data = tomllib.loads(CHAT_PROMPTS_FILE.read_text())
    system = data["system_prompt"].strip()
    return [{"name": p["name"], "system": p.get("system", False),
             "text": f"{system}\n\n{p['text'].strip()}" if p.get("system", False) else p["text"].strip()}
            for p in data["prompt"]]


def poisson_arrivals(n: int, rate: float, seed: int = 0, start: int = 0) -> list[int]:
    """Arrival steps of `n` requests arriving as a Poisson process of `rate` requests per step."""
    if rate <= 0:
        raise MessageError("workload.rate", value=repr(rate))
    rng, t, steps = random.Random(seed), float(start), []
    for _ in range(n):
        t += rng.expovariate(rate)
        steps.append(int(t))
    return steps


def bursty_arrivals(n: int, burst_size: int, every: int, start: int = 0) -> list[int]:
    """`burst_size` requests at once every `every` steps."""
    if burst_size < 1 or every < 1:
        raise MessageError("workload.bursts")
    return [start + (i // burst_size) * every for i in range(n)]


def lengths(n: int, distribution: str, seed: int = 0, low: int = 1, high: int | None = None, mean: float = 0.0,
            scale: float = 1.0) -> list[int]:
    """`n` lengths: "uniform" in [low, high], "sharegpt_input" / "sharegpt_output" exponential around the
    ShareGPT means times `scale`, or "exponential" around `mean`; at least 1, and at most `high` if given."""
    rng = random.Random(seed)
    if distribution == "uniform":
        if high is None or low < 1 or high < low:
            raise MessageError("workload.uniform", low=low, high=high)
        return [rng.randint(low, high) for _ in range(n)]
    means = {"sharegpt_input": SHAREGPT_MEAN_INPUT * scale, "sharegpt_output": SHAREGPT_MEAN_OUTPUT * scale,
             "exponential": mean}
    if distribution not in means:
        raise MessageError("workload.distribution", value=repr(distribution))
    if means[distribution] <= 0:
        raise MessageError("workload.mean", mean=means[distribution])
    cap = high if high is not None else sys.maxsize
    return [max(1, min(cap, round(rng.expovariate(1 / means[distribution])))) for _ in range(n)]


def random_workload(n: int, seed: int = 0, arrivals: list[int] | None = None, max_tokens: int | list[int] = 16,
                    prompt_lengths: list[int] | None = None, shared_prefix_len: int = 0,
                    shared_fraction: float = 0.0, ignore_eos: bool = False) -> list[Request]:
    """Requests with random-integer prompts: the article's 1..10 tokens unless `prompt_lengths` is given;
    a `shared_fraction` of them start with the same `shared_prefix_len` random tokens."""
    rng = random.Random(seed)
    arrivals = arrivals or [0] * n
    if prompt_lengths is None:
        prompts = random_token_prompts(n, seed)
    else:
        prompts = [[rng.randint(1, 999) for _ in range(length)] for length in prompt_lengths]
    prefix = [rng.randint(1, 999) for _ in range(shared_prefix_len)]
    outputs = max_tokens if isinstance(max_tokens, list) else [max_tokens] * n
    requests = []
    for i in range(n):
        tokens = prompts[i]
        if prefix and rng.random() < shared_fraction:
            tokens = prefix + tokens[:max(1, len(tokens) - len(prefix))]
        requests.append(Request(arrival=arrivals[i], prompt_token_ids=tuple(tokens), max_tokens=outputs[i],
                                ignore_eos=ignore_eos))
    return requests
