"""Model runners: `FakeRunner` (torch-free) and, imported lazily so that torch stays optional,
`ModelRunner` with `load_model`.

    from runner import load_model, ModelRunner
    loaded = load_model()                      # once per process: weights, tokenizer, device
    runner = ModelRunner(loaded, config)       # per session: its own paged KV cache
    tokens = runner.run(batch.seqs)
"""

import os

# Nothing is downloaded at run time; this must be set before huggingface_hub is first imported.
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from runner.fake import FakeRunner  # noqa: E402

_LAZY = {
    "ModelRunner": "runner.model_runner",
    "EMPTY_SLOT": "runner.model_runner",
    "LoadedModel": "runner.model_loading",
    "UnsupportedModelError": "runner.model_loading",
    "load_model": "runner.model_loading",
    "default_model_dir": "runner.default_model",
}

__all__ = ["FakeRunner", *_LAZY]


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'runner' has no attribute {name!r}")
