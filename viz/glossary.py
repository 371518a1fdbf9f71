"""The words of the page, defined once: each setting's label and help, the stage legend, the metrics, the two
clocks and the model caveat. Plain data (the Streamlit stage and the browser-side player show the same
legend), and sentences built from it for the settings in effect."""

from __future__ import annotations

from typing import NamedTuple

from scheduler import Config


class Setting(NamedTuple):
    label: str
    help: str


# Every scheduler setting, in the sidebar's order: a plain label and what it does.
SETTINGS = {
    "max_num_seqs": Setting("max_num_seqs (requests per batch)",
                            "The most requests one step's batch may hold. A prefill step counts only the requests "
                            "it prefills (as in nano-vllm), so more than this many can be running: decode steps "
                            "then take turns, this many at a time."),
    "num_kvcache_blocks": Setting("KV blocks in the pool",
                                  "How many KV-cache blocks the pool has. Changing it mid-run rebuilds the pool: every "
                                  "running request recomputes its tokens in the new one."),
    "kvcache_block_size": Setting("block size (tokens)",
                                  "Tokens per KV block. A request takes a new block each time it passes a multiple of "
                                  "this; larger blocks waste more empty slots. Changing it rebuilds the pool."),
    "max_num_batched_tokens": Setting("token budget per step (max_num_batched_tokens)",
                                      "The most tokens one step may compute, prompts and decodes together. A prompt "
                                      "longer than what is left waits (or, with chunked prefill, is cut into chunks)."),
    "max_model_len": Setting("max_model_len (tokens per request)",
                             "The longest a request may grow, prompt and output together: it finishes there even "
                             "before its max_tokens. Changing it rebuilds the pool."),
    "prefill_first": Setting("step order",
                             "Prefill first: a step that can admit waiting requests prefills only them, and running "
                             "requests' decodes pause. Decode first: running requests decode, newcomers wait for a "
                             "step with no decodes."),
    "enable_prefix_caching": Setting("prefix caching",
                                     "Full blocks are remembered by their tokens: a request whose prompt starts the "
                                     "same way reuses them instead of computing them again."),
    "chunked_prefill": Setting("chunked prefill",
                               "A prompt longer than the token budget left in a step is prefilled in pieces over "
                               "several steps instead of waiting for a step with room for all of it."),
    "mixed_batches": Setting("mixed batches (decodes + prefill chunks)",
                             "One step carries running requests' decodes first, then prefill chunks in the rest of "
                             "the token budget (vLLM's way); nobody's decode pauses for a prefill."),
    "preemption_policy": Setting("preemption policy",
                                 "Who gives up its blocks when a running request needs one and none is free: tail = "
                                 "the last admitted (nano-vllm, vLLM); smart = the least progress toward max_tokens; "
                                 "priority = the least important, latest arrival."),
    "queue_policy": Setting("queue policy",
                            "fcfs: first come, first served. priority: the lowest priority value goes first, and an "
                            "important arrival may preempt less important running requests to get in."),
    "num_speculative_tokens": Setting("speculative draft tokens (0 = off)",
                                      "Draft tokens guessed per decode by finding the last few tokens earlier in the "
                                      "prompt (n-gram prompt lookup); the model checks them all in one step and keeps "
                                      "those it agrees with."),
    "prompt_lookup_min": Setting("prompt lookup: shortest match (tokens)",
                                 "Speculative decoding looks for the request's last n tokens earlier in its text; "
                                 "this is the smallest n it tries."),
    "prompt_lookup_max": Setting("prompt lookup: longest match (tokens)",
                                 "The largest n it tries first: a longer match is a safer guess of what comes next."),
    "notebook_block_bug": Setting("the article notebook's block-size bug",
                                  "Runs the InfraTech notebook's rule: every prefill, recomputes included, gets "
                                  "exactly one block whatever its length (its Sequence keeps block size 256 while the "
                                  "pool uses 10). The grid rings a block holding more tokens than it has room for."),
    "cache_blocks_at_allocation": Setting("cache full blocks when allocated (vLLM)",
                                          "vLLM's rule: a block that this step fills with known tokens is cached when "
                                          "it is allocated, so requests admitted in the same step share a prefix. "
                                          "Off: a block is cached once its tokens are computed."),
}

# Help of the sidebar's other inputs.
INPUT_HELP = {
    "scenario": "A preset workload and settings with a story and key frames to jump to, or a custom setup.",
    "presentation": "Bigger boxes and text for a projector.",
    "model": "The real SmolLM2-135M writes real text (slower); the fake model writes seeded random tokens at once. "
             "The scheduling is the same.",
    "temperature": "0 picks the most likely token each time (the same text every run); higher samples more freely.",
    "seed": "Seeds the random prompts, arrivals and sampling: the same seed gives the same run.",
    "requests": "How many requests the custom workload has.",
    "prompts": "Random token ids (1 to 10 tokens, fast to follow) or the built-in chat questions.",
    "max_tokens": "The most output tokens each request writes (max_model_len may stop it sooner).",
    "arrivals": "All requests at step 0, or arriving at random, about one every two steps.",
    "prompt": "Your request's text; it joins the waiting queue at the next step.",
    "request_max_tokens": "The most tokens the model writes for this request.",
    "priority": "Lower is more important; it matters only under the priority queue policy.",
    "low_ms": "A step faster than this, with a full batch, makes max_num_seqs grow by one.",
    "high_ms": "A step slower than this makes max_num_seqs shrink by one.",
    "min_seqs": "The controller never sets max_num_seqs below this.",
    "max_seqs": "The controller never sets max_num_seqs above this.",
}


class LegendEntry(NamedTuple):
    shown: str    # what the learner sees on the stage
    meaning: str


# The stage legend: every mark the queues, the block grid and the block tables draw.
LEGEND = (
    LegendEntry("ID:3 (L:12)", "request 3, whose length L is 12 tokens so far: its prompt plus what it has written"),
    LegendEntry("token boxes", "one box per token, in the request's colour: full colour and outlined = computed in "
                               "this step; paler = its K/V was cached before this step; palest = no K/V yet (a "
                               "prompt still to prefill, the token just written, or everything after a preemption)"),
    LegendEntry("8/16", "output tokens written so far / max_tokens. A request also stops at max_model_len (prompt "
                        "plus output) or at its end-of-sequence token, so a finished one can show 8/16"),
    LegendEntry("block 5 ×3", "physical KV block 5 is used by 3 requests (its reference count): prefix caching "
                              "shares blocks that hold the same tokens; hover a block for its owners"),
    LegendEntry("block colours", "a block takes the colour of the request holding it; grey = free; yellow = free, "
                                 "but its tokens are still in the prefix cache and can be reused"),
    LegendEntry("…", "a token the model is still computing (overlapped scheduling)"),
)

# The metrics, defined where they are shown.
METRICS = {
    "TTFT": "time to first token: from the request's arrival to its first output token",
    "TPOT": "time per output token: the mean time between two of its output tokens after the first",
    "latency": "end-to-end latency (E2E): from the request's arrival to its last token",
}
CLOCKS = {
    "simulated": "simulated clock: the time the cost model gives the steps so far (the same on every machine)",
    "real": "real time of this step: what this step took on this machine (the real model only)",
}
MODEL_CAVEAT = ("SmolLM2-135M is a tiny model: its answers are often wrong. Trust how its requests are scheduled, "
                "not what it says.")


def legend_lines() -> list[str]:
    return [f"**{entry.shown}**: {entry.meaning}." for entry in LEGEND]


def metric_definitions() -> str:
    return " ".join(f"{name}: {meaning}." for name, meaning in METRICS.items())


def setting_value(field: str, value) -> str:
    if field == "prefill_first":
        return "prefill first" if value else "decode first"
    if isinstance(value, bool):
        return "on" if value else "off"
    return str(value)


def _label(field: str) -> str:
    return SETTINGS[field].label if field in SETTINGS else field


def changed_settings(start: Config, now: Config, was: str = "was", ignore: tuple[str, ...] = ()) -> list[str]:
    """Each setting that differs between `start` and `now`, e.g. "KV blocks in the pool 6 (was 3)"."""
    return [f"{_label(f)} {setting_value(f, getattr(now, f))} ({was} {setting_value(f, getattr(start, f))})"
            for f in SETTINGS if f not in ignore and getattr(start, f) != getattr(now, f)]


def variant_label(changes: dict) -> str:
    """A scenario variant's config changes in words: "chunked prefill on, token budget per step ... 64"."""
    return ", ".join(f"{_label(f)} {setting_value(f, v)}" for f, v in changes.items())
