"""The real model's runner as the worker sees it: a proxy that asks the server (sandbox/model_host.py) over the
worker's pipe for what the model does (a runner for the run, a prompt's tokens, tokens' text, a step's outputs),
sending for each step only what the model needs of each batched request. The worker's engine is given it in place of
a ModelRunner (`install`); the model itself never enters the jail."""

from __future__ import annotations

import threading
from collections.abc import Callable

from engine.run import engine as engine_module
from i18n import MessageError

Ask = Callable[[dict], dict]


class ProxyRunner:
    def __init__(self, ask: Ask, declaration: dict):
        self._ask, self._lock = ask, threading.Lock()  # overlapped, the model's thread asks beside the engine's
        self.eos_token_id = self.ask({"op": "runner", "declaration": declaration})["eos"]

    def ask(self, message: dict) -> dict:
        with self._lock:
            reply = self._ask(message)
        if "refused" in reply:
            raise MessageError(reply["refused"]["key"], **reply["refused"]["values"])
        return reply

    def encode_prompt(self, prompt: str, chat: bool = True) -> list[int]:
        return self.ask({"op": "encode", "prompt": prompt, "chat": chat})["token_ids"]

    def token_pieces(self, token_ids: list[int]) -> list[str]:
        return self.ask({"op": "pieces", "token_ids": list(token_ids)})["pieces"]

    def copy_blocks(self, copies):
        self.ask({"op": "copy", "copies": [list(c) for c in copies]})

    def run(self, seqs) -> list:
        return self.ask({"op": "run", "seqs": [entry(seq) for seq in seqs]})["outputs"]


def entry(seq) -> dict:
    """What the model needs of a batched request (its sampling the server knows from the run's recipe)."""
    return {"seq_id": seq.seq_id, "token_ids": list(seq.token_ids), "num_prompt_tokens": seq.num_prompt_tokens,
            "num_computed_tokens": seq.num_computed_tokens, "num_scheduled_tokens": seq.num_scheduled_tokens,
            "block_table": list(seq.block_table), "draft_token_ids": list(seq.draft_token_ids)}


def install(ask: Ask, declaration: dict):
    """This process's engines run the model through the server: the engine module's runner factory (a new runner at
    the start and at each rebuild of the pool) makes proxies instead."""
    engine_module.make_runner = lambda *_args, **_kwargs: ProxyRunner(ask, declaration)
