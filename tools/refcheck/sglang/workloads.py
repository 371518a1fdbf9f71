"""Random workloads for checking the SGLang twin, the fake model both schedulers are stepped with, and the step
record both drivers write (tools/refcheck/sglang/twin.py, oracle.py).

A workload is plain data (JSON-able): SGLang's settings under SGLang's names, the requests (arrival step, prompt,
max_new_tokens, ignore_eos; a priority in the priority mode) and the fake model's seed and vocabulary. Every mode
has arrivals over time, EOS stops, prompts sharing stems, prompts repeated and now and then a prompt over SGLang's
input limit (`oversize`); each mode leans on one part of the scheduler. Pure Python: the golden-trace test
replays these without SGLang."""

from __future__ import annotations

import random
from collections.abc import Iterator

from runner.fake import FakeRunner
from scheduler.sglang.scheduler import Scheduler, ServerArgs
from tools.refcheck.bench_trace import bench_requests
from tools.refcheck.shrink import fewer_or_shorter

SGLANG_RELEASE = "0.5.23"
EOS = 0
MODES = ("lpm", "fcfs", "dfs-weight", "lof", "chunked", "retract", "paged", "arrivals", "eos", "shared", "priority")
MAX_STEPS = 600


def random_workload(rng: random.Random, mode: str) -> dict:
    """A workload of `mode` (MODES): a policy mode ("lpm", "fcfs", "dfs-weight", "lof") draws its other settings
    at random; "chunked" forces a small chunked_prefill_size; "retract" a small pool and an optimistic
    schedule_conservativeness, so decode runs out of slots and retracts; "paged" a page_size of 2 to 16 (a chunk
    of at least two pages: SGLang schedules nothing with a smaller one); "arrivals" spreads up to 16 requests over
    80 steps, one at a time; "eos" a vocabulary of 3 or 6 tokens, EOS never ignored and long outputs, so most
    requests stop at EOS; "shared" builds every prompt on a few stems (system prompts), a third of them repeated,
    under lpm or dfs-weight; "priority" (`priority_settings`) turns priority scheduling on. Every mode has arrivals
    over time, EOS stops and prompts sharing stems; "arrivals", "eos" and "shared" lean on one of them. A mode added
    draws its own settings after the others' (each mode draws from its own random state), so the earlier modes'
    workloads are as they were."""
    policy = mode if mode in ("lpm", "fcfs", "dfs-weight", "lof") else \
        rng.choice(("lpm", "dfs-weight") if mode == "shared" else ("fcfs", "lof") if mode == "priority"
                   else ("lpm", "fcfs"))
    pool = rng.randint(24, 160)
    conservativeness = rng.choice((1.0, 1.0, 0.3, 0.1))
    chunk = rng.choice((-1, rng.randint(4, 64)))
    if mode == "chunked":
        chunk = rng.randint(2, 24)
    squeezed = mode == "retract" or (mode == "priority" and rng.random() < 0.5)  # half the priority mode too
    if squeezed:
        pool, conservativeness = rng.randint(20, 64), rng.choice((0.05, 0.1, 0.2))
    elif mode == "priority":  # room enough for the batch to fill up by its count of requests
        pool = rng.randint(128, 320)
    page_size = 1
    if mode == "paged":
        page_size = rng.choice((2, 4, 8, 16))
        pool = page_size * rng.randint(max(4, 24 // page_size), max(8, 256 // page_size))
        if chunk != -1:
            chunk = rng.randint(2 * page_size, max(2 * page_size, 64))
    context_length = rng.choice((8192, rng.randint(16, 96)))
    max_req_len = min(context_length - 1, pool - 1)
    config = {"max_total_tokens": pool, "page_size": page_size, "chunked_prefill_size": chunk,
              "max_prefill_tokens": rng.randint(max(8, chunk), 256), "max_running_requests": rng.randint(1, 8),
              "schedule_policy": policy, "schedule_conservativeness": conservativeness,
              "context_length": context_length, "eos": EOS}
    if mode == "priority":
        config.update(priority_settings(rng))
    vocab = rng.choice((3, 6, 20, 200))
    longest = max(1, min(max_req_len - 6, 48))
    num_requests, longest_output, ignore_eos = rng.randint(1, 12), 24, 0.2
    if squeezed:  # many requests, short prompts, long outputs, few early EOS: decode outgrows the pool
        vocab, longest = rng.choice((20, 200)), max(1, min(longest, pool // 4))
        num_requests, longest_output, ignore_eos = rng.randint(6, 16), 40, 0.5
    if mode == "eos":
        vocab, longest_output, ignore_eos = rng.choice((3, 6)), 64, 0.0
    if mode == "arrivals":
        num_requests = rng.randint(4, 16)
    if mode == "priority":  # enough requests, running long enough, for a full batch to meet later arrivals
        num_requests, longest_output, ignore_eos = rng.randint(4, 14), 40, 0.5
    repeated, stemmed = (0.35, 1.0) if mode == "shared" else (0.15, 0.6)
    stems = [[rng.randint(1, vocab) for _ in range(rng.randint(1, longest))] for _ in range(rng.randint(1, 3))]
    if rng.random() < 0.3:  # one long stem: the in-batch prefix rule (32 tokens) comes into play
        stems.append([rng.randint(1, vocab) for _ in range(longest)])
    levels = rng.sample(range(-4, 24), rng.randint(2, 4)) if mode == "priority" else ()  # few: ties
    requests = []
    for _ in range(num_requests):
        n = rng.randint(1, longest)
        if requests and rng.random() < repeated:
            prompt = list(rng.choice(requests)["prompt"])  # a repeated prompt
        elif rng.random() < stemmed:
            prompt = (rng.choice(stems) + [rng.randint(1, vocab) for _ in range(n)])[:n]
        else:
            prompt = [rng.randint(1, vocab) for _ in range(n)]
        if mode == "priority":  # over 24 steps, on every other step: into a full batch, and some together
            arrival = 2 * rng.randint(0, 12)
        else:
            arrival = rng.randint(0, 80) if mode == "arrivals" else rng.choice((0, 0, rng.randint(0, 20)))
        requests.append({"arrival": arrival, "prompt": prompt,
                         "max_new_tokens": rng.randint(1, longest_output), "ignore_eos": rng.random() < ignore_eos})
        if levels:  # a request sent without a priority now and then
            requests[-1]["priority"] = rng.choice(levels) if rng.random() < 0.9 else None
    requests.sort(key=lambda r: r["arrival"])  # request ids in arrival order, as a server numbers them
    seed = rng.randint(0, 2**31)
    oversize(random.Random(seed), config, requests, vocab)
    admissible(config, requests)
    return {"mode": mode, "config": config, "requests": requests, "seed": seed, "vocab": vocab}


OVERSIZED = 0.08  # the share of requests whose prompt is over SGLang's input limit


def admissible(config: dict, requests: list[dict]):
    """Halve the prompt of a request SGLang could never admit, even with the pool empty (its prompt, its clipped
    max_new_tokens and a page not below max_total_tokens: SGLang keeps it waiting for good, the app refuses it on
    arrival, so the two would differ by design), until it could; as the twin judges it (`never_admitted`)."""
    twin = Scheduler(ServerArgs(**config))
    for i, request in enumerate(requests):
        while len(request["prompt"]) > 1 and twin.never_admitted(
                twin.add_request(i, request["prompt"], request["max_new_tokens"])) is not None:
            request["prompt"] = request["prompt"][:len(request["prompt"]) // 2]


def oversize(rng: random.Random, config: dict, requests: list[dict], vocab: int):
    """Make about one request in twelve's prompt too long for SGLang's scheduler: max_req_input_len tokens (its
    context length or pool less SGLang's margin of 5) up to 8 more, below context_length (the tokenizer manager
    refuses a longer one before the scheduler sees it). SGLang aborts such a request as it queues it
    (`validate_input_length`) and prefills a one-token stub. Drawn from the workload's own seed, so every other
    draw of the workload is as it was."""
    max_req_len = min(config["context_length"] - 1, config["max_total_tokens"] - 1)
    limit = max_req_len - 5
    for request in requests:
        if rng.random() < OVERSIZED and 0 < limit < config["context_length"]:
            n = rng.randint(limit, min(config["context_length"] - 1, limit + 8))
            request["prompt"] = [rng.randint(1, vocab) for _ in range(n)]


def priority_settings(rng: random.Random) -> dict:
    """The priority mode's settings (its workloads squeeze the pool half the time, as "retract" does, else give it
    room, spread their arrivals over 24 steps, some on the same step, and draw 2 to 4 priority levels, so requests
    tie; one request in ten has none): priority scheduling on, either direction, priority preemption on (three in
    four) with a threshold of 0 to 10, retraction by length or by priority, and at most 3 running requests, so a
    full batch meets a more important arrival often."""
    return {"enable_priority_scheduling": True, "schedule_low_priority_values_first": rng.random() < 0.5,
            "disable_priority_preemption": rng.random() < 0.25,
            "priority_scheduling_preemption_threshold": rng.choice((0, 0, 1, 3, 10)),
            "retraction_policy": rng.choice(("length", "priority")), "max_running_requests": rng.randint(1, 3)}


def bench_workload(num_requests: int, seed: int = 0) -> dict:
    """The benchmark's trace (bench/bench_twins.py): tools/refcheck/bench_trace.py's requests (stopping at EOS
    or their output length) under lpm, chunked prefill of 1024, max_running_requests=64, a pool of 12,000 token
    slots (it retracts)."""
    requests = [{"arrival": r["arrival"], "prompt": r["prompt"], "max_new_tokens": r["output"], "ignore_eos": False}
                for r in bench_requests(num_requests, seed)]
    config = {"max_total_tokens": 12000, "page_size": 1, "chunked_prefill_size": 1024, "max_prefill_tokens": 4096,
              "max_running_requests": 64, "schedule_policy": "lpm", "schedule_conservativeness": 0.3,
              "context_length": 8192, "eos": EOS}
    return {"mode": "lpm", "config": config, "requests": requests, "seed": seed, "vocab": 400}


def smaller(workload: dict) -> Iterator[dict]:
    """Workloads one step smaller: a request dropped, or one's max_new_tokens or prompt halved."""
    return fewer_or_shorter(workload, "max_new_tokens")


class FakeModel:
    """The token both schedulers' steps produce: a deterministic function of (request, position), EOS among them,
    so a request writes the same tokens however it is scheduled or retracted."""

    def __init__(self, workload: dict):
        self._runner = FakeRunner(10**9, eos=EOS, seed=workload["seed"], low=EOS, high=workload["vocab"])

    def token(self, request_id: int, num_tokens: int) -> int:
        """The token written after `num_tokens` known tokens of the request."""
        return self._runner.next_token(request_id, num_tokens)


FIELDS = ("kind", "batch", "waiting", "running", "retracted", "finished", "slots", "tree", "sizes", "ratio")


def step_record(kind, batch, waiting, running, retracted, finished, slots, tree, sizes, ratio) -> list:
    """One step as both drivers report it: the batch kind (extend, decode, idle), its rows ([id, extend length]
    or id, in batch order), the waiting queue and the running batch in order, the requests sent back this step (in
    the running batch as it began, in the waiting queue as it ends: retracted, or preempted by priority) and those
    finished [id, reason], every request's KV slot indices [id, *slots], the radix tree ([depth, tokens, slots,
    lock count] depth-first), the pool's [free, evictable, protected] sizes and new_token_ratio."""
    return [kind, batch, waiting, running, sorted(retracted), sorted(finished), slots, tree, sizes,
            round(ratio, 9)]

