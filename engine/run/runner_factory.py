"""The one place that builds runners, so that the engine and the fast paths never import torch.

"fake" is the torch-free FakeRunner, given a word-level `FakeTokenizer` so text prompts work (and share
prefixes) without a model; "model" is the real ModelRunner, its weights loaded once per process and its
forward passes batched with every other session's by the process's one model worker (runner/worker.py).
"""

from __future__ import annotations

import re
import zlib
from functools import cache

from runner.fake import FakeRunner
from scheduler import Config
from scheduler.contract import GPU_POOL

RUNNER_KINDS = ("fake", "model")


class FakeTokenizer:
    """Splits text into words and punctuation; each piece's id is a hash in [1, 999], the fake model's token
    range, so equal texts give equal ids. Ids the fake model generates print as `⟨id⟩`."""

    _PIECE = re.compile(r"\s*[\w']+|\s*[^\w\s]|\s+")

    def __init__(self):
        self._texts: dict[int, str] = {}

    def encode(self, text: str) -> list[int]:
        ids = []
        for piece in self._PIECE.findall(text):
            token = 1 + zlib.crc32(piece.encode()) % 999
            self._texts.setdefault(token, piece)
            ids.append(token)
        return ids

    def pieces(self, token_ids: list[int]) -> list[str]:
        return [self._texts.get(t, f" ⟨{t}⟩") for t in token_ids]


class TextFakeRunner(FakeRunner):
    """FakeRunner plus the text methods of ModelRunner."""
    tokenizer: FakeTokenizer

    def __init__(self, config: Config, seed: int = 0, kv_pools: dict[str, int] | None = None):
        super().__init__(config.max_model_len, eos=config.eos, seed=seed, block_size=config.kvcache_block_size,
                         kv_pools=kv_pools or {GPU_POOL: config.num_kvcache_blocks})
        self.tokenizer = FakeTokenizer()

    def encode_prompt(self, prompt: str, chat: bool = True) -> list[int]:
        return self.tokenizer.encode(prompt)

    def token_pieces(self, token_ids: list[int]) -> list[str]:
        return self.tokenizer.pieces(token_ids)


@cache
def model_worker():
    """The process's model worker, loading the default model on first use: on CPU in a process of its own
    (runner/model_process.py says why), on CUDA a thread of this one."""
    from runner import load_model
    from runner.default_model import default_model_dir
    from runner.model_loading import choose_device
    from runner.model_process import ModelProcess
    from runner.worker import ModelWorker
    if choose_device().type == "cpu":
        return ModelProcess(default_model_dir())
    return ModelWorker(load_model())


def started_model_worker():
    """The model worker if this process has loaded the model, else None (asking never loads it)."""
    return model_worker() if model_worker.cache_info().currsize else None


def make_runner(kind: str, config: Config, seed: int = 0, side_pools: dict[str, int] | None = None):
    """A runner for `config`, with the side pools a scheduler declares (name -> blocks) beside its main pool of
    `config.num_kvcache_blocks`; "model" loads the default model on first use (slow, needs torch)."""
    kv_pools = {GPU_POOL: config.num_kvcache_blocks, **(side_pools or {})}
    if kind == "fake":
        return TextFakeRunner(config, seed, kv_pools)
    if kind == "model":
        if (refusal := config.real_model_refusal()) is not None:
            raise refusal
        from runner import ModelRunner
        return ModelRunner(model_worker().loaded, config, seed=seed, side_pools=side_pools)
    raise ValueError(f"runner={kind!r}: use one of {RUNNER_KINDS}")
