"""The server's side of a sandboxed run on the real model: a worker's model requests (sandbox/model_proxy.py)
served on the process's model (engine/run/runner_factory.py `make_runner("model", ...)`, a runner per run and per
rebuild of its pool), each checked first as a claim: known request ids, token ids within the vocabulary, counts
within the request's tokens and the run's limits, block ids within the pool. A request that is not what an honest
worker sends is `Refused` with a message, never an index error in the server. Each request's sampling is the
recipe's own, not the worker's."""

from __future__ import annotations

from typing import Any, NoReturn

from engine.run.limits import BOUNDS
from engine.run.recipe import POOL_FIELDS, Options, RunSpec, checked_change
from engine.run.runner_factory import make_runner
from i18n import MessageError
from sandbox import kinds
from scheduler import Sequence
from scheduler.factory import runner_config, runner_pools

ENTRY = ("seq_id", "token_ids", "num_prompt_tokens", "num_computed_tokens", "num_scheduled_tokens", "block_table",
         "draft_token_ids")
MOST_TEXT = 100_000  # characters of a prompt to encode


class Refused(MessageError):
    """A model request refused, and why (sandbox.batch_refused)."""


def refuse(detail: str) -> NoReturn:
    raise Refused("sandbox.batch_refused", detail=detail)


def hold(condition: bool, detail: str):
    if not condition:
        refuse(detail)


class ModelHost:
    def __init__(self, spec: RunSpec):
        self.spec = spec
        changed = [c.payload for c in spec.changes if c.kind == "request"]
        # the engine numbers requests as they arrive: by arrival, the workload's first, then those added by hand
        self.sampling = [r.sampling_params() for r in sorted([*spec.workload, *changed], key=lambda r: r.arrival)]
        self.pools = list(pool_configs(spec))
        self.runner: Any = None  # a ModelRunner (torch: not imported here)
        self.kind = ""

    def serve(self, message: dict) -> dict:
        """The reply to a worker's model request; Refused for one that is not a request an honest worker sends."""
        op = message.get("op")
        if op == "runner":
            return self._new_runner(message.get("declaration"))
        hold(self.runner is not None, "no runner asked for yet")
        if op == "encode":
            prompt, chat = message.get("prompt"), message.get("chat")
            hold(isinstance(prompt, str) and len(prompt) <= MOST_TEXT and isinstance(chat, bool), "encode")
            return {"token_ids": self.runner.encode_prompt(prompt, chat)}
        if op == "pieces":
            return {"pieces": self.runner.token_pieces(self._tokens(message.get("token_ids"), 1))}
        if op == "copy":
            copies = message.get("copies")
            hold(isinstance(copies, list) and all(isinstance(c, list) and len(c) == 4 for c in copies), "copies")
            try:
                self.runner.copy_blocks(copies)
            except (ValueError, TypeError) as e:
                refuse(str(e)[:200])
            return {}
        if op == "run":
            return {"outputs": self.runner.run(self._batch(message.get("seqs")))}
        refuse(f"op {str(op)[:40]!r}")

    def _new_runner(self, declaration) -> dict:
        hold(bool(self.pools), "more pools than the recipe rebuilds")
        self.kind = kinds.register(declaration)
        config = self.pools.pop(0)
        self.config = runner_config(self.kind, config)
        self.runner = make_runner("model", self.config, self.spec.seed, runner_pools(self.kind, config))
        return {"eos": self.runner.eos_token_id}

    @property
    def vocabulary(self) -> int:
        return self.runner.loaded.model.config.vocab_size

    def _tokens(self, value, least: int) -> list[int]:
        hold(isinstance(value, list) and least <= len(value) <= self.config.max_model_len, "token count")
        hold(all(type(t) is int and 0 <= t < self.vocabulary for t in value), "token id")
        return value

    def _batch(self, entries) -> list[Sequence]:
        hold(isinstance(entries, list) and len(entries) <= BOUNDS["max_num_seqs"][1], "batch size")
        seqs, seen = [], set()
        for data in entries:
            hold(isinstance(data, dict) and set(data) == set(ENTRY), "batch entry")
            seq_id = data["seq_id"]
            hold(type(seq_id) is int and 0 <= seq_id < len(self.sampling) and seq_id not in seen, "request id")
            seen.add(seq_id)
            seq = Sequence(self._tokens(data["token_ids"], 1), self.sampling[seq_id], seq_id=seq_id)
            seq.draft_token_ids = self._tokens(data["draft_token_ids"], 0)
            counts = [data[k] for k in ("num_prompt_tokens", "num_computed_tokens", "num_scheduled_tokens")]
            hold(all(type(n) is int for n in counts), "counts")
            seq.num_prompt_tokens, seq.num_computed_tokens, seq.num_scheduled_tokens = counts
            end = seq.num_computed_tokens + seq.num_scheduled_tokens
            hold(1 <= seq.num_prompt_tokens <= len(seq) and seq.num_computed_tokens >= 0
                 and seq.num_scheduled_tokens >= 1 and end <= len(seq) + len(seq.draft_token_ids), "counts")
            table = data["block_table"]
            blocks = self.config.num_kvcache_blocks
            hold(isinstance(table, list) and all(type(b) is int and 0 <= b < blocks for b in table)
                 and len(set(table)) == len(table), "block ids")
            hold(len(table) * self.config.kvcache_block_size >= end, "blocks for the tokens")
            seq.block_table = table
            seqs.append(seq)
        return seqs


def pool_configs(spec: RunSpec):
    """The configs the run's KV pool is built from, in order: the first, then each a change rebuilds it under."""
    config, options = spec.config, Options(spec.overlap, spec.adaptive)
    yield config
    for change in spec.changes:
        if change.kind == "config":
            new, options = checked_change(config, options, change.settings)
            if any(getattr(new, f) != getattr(config, f) for f in POOL_FIELDS):
                yield new
            config = new

