"""Load a causal LM once per process, on the chosen device, wired to the paged attention.

A `LoadedModel` is read-only and can back several `ModelRunner`s, each with its own KV cache.
Nothing is ever downloaded: every load is local-only.
"""

import os
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import torch
from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer, PreTrainedModel

from runner.default_model import Progress, default_model_dir, no_progress
from runner.llama_forward import pack_weights
from runner.paged_attention import PAGED_ATTENTION
from runner.prepacked_linear import use_prepacked_linears
from runner.share import PassBudget

SUPPORTED_FAMILIES = ("llama", "mistral", "qwen2", "qwen3")
DEVICE_ENV = "SCHEDLAB_DEVICE"


class UnsupportedModelError(ValueError):
    """The model needs an attention feature the paged attention does not implement."""


def unsupported_features(config) -> list[str]:
    """What in this config the paged attention would compute wrongly; empty when the model is supported."""
    problems = []
    if config.model_type not in SUPPORTED_FAMILIES:
        problems.append(f"model family '{config.model_type}' (supported: {', '.join(SUPPORTED_FAMILIES)})")
    window_on = getattr(config, "use_sliding_window", True) and getattr(config, "sliding_window", None) is not None
    if window_on or any(kind != "full_attention" for kind in getattr(config, "layer_types", None) or ()):
        problems.append(f"sliding-window attention (sliding_window={getattr(config, 'sliding_window', None)})")
    for name in ("attn_logit_softcapping", "final_logit_softcapping"):
        if getattr(config, name, None) is not None:
            problems.append(f"logit soft-capping ({name}={getattr(config, name)})")
    return problems


def check_supported(config):
    if problems := unsupported_features(config):
        raise UnsupportedModelError(
            f"{getattr(config, '_name_or_path', '') or config.model_type} cannot run on the paged runner: it uses "
            + "; ".join(problems) + ". Choose a plain full-attention Llama, Mistral, Qwen2 or Qwen3 model.")


def choose_device(device: str | None = None) -> torch.device:
    """"cuda" or "cpu" force one; `None` takes $SCHEDLAB_DEVICE, and "auto" or nothing means CUDA when
    available, else CPU."""
    device = device or os.environ.get(DEVICE_ENV)
    if device in (None, "", "auto"):
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if device == "cuda" and not torch.cuda.is_available():
        raise RuntimeError("device='cuda' was requested but torch sees no CUDA device")
    return torch.device(device)


def physical_core_count() -> int:
    """Cores this process may run on, counting hyper-threads of one core once."""
    cpus = os.sched_getaffinity(0)
    cores = set()
    for cpu in cpus:
        topology = Path(f"/sys/devices/system/cpu/cpu{cpu}/topology")
        try:
            cores.add(((topology / "physical_package_id").read_text(), (topology / "core_id").read_text()))
        except OSError:
            return len(cpus)
    return max(1, len(cores))


@dataclass(frozen=True)
class LoadedModel:
    model: PreTrainedModel
    tokenizer: object
    device: torch.device
    dtype: torch.dtype
    name: str
    shares_kv_cache: bool = False  # runners put their KV caches in shared memory: the model runs in another process
    pass_budget: PassBudget | None = None  # the passes are shared by sessions (runner/worker.py): a step goes in
    # pieces of at most the budget's tokens

    @property
    def eos_token_id(self) -> int:
        return self.tokenizer.eos_token_id

    @property
    def num_layers(self) -> int:
        return self.model.config.num_hidden_layers

    @property
    def num_kv_heads(self) -> int:
        return self.model.config.num_key_value_heads

    @property
    def head_dim(self) -> int:
        config = self.model.config
        return getattr(config, "head_dim", None) or config.hidden_size // config.num_attention_heads


def prepare_model(model: PreTrainedModel, tokenizer, name: str) -> LoadedModel:
    """Check the architecture, freeze the weights, switch the model to paged attention and let its linear layers
    take oneDNN-prepacked weights inside the runner (runner/prepacked_linear.py), packed now for the runner's own
    forward where it has one (runner/llama_forward.py)."""
    check_supported(model.config)
    model.eval().requires_grad_(False)
    model.set_attn_implementation(PAGED_ATTENTION)
    use_prepacked_linears(model)
    pack_weights(model)
    return LoadedModel(model, tokenizer, model.device, model.dtype, name)


def load_model(path: str | Path | None = None, device: str | None = None,
               progress: Progress = no_progress, dtype: torch.dtype | None = None) -> LoadedModel:
    """Load a local Hugging Face causal-LM folder, or the default SmolLM2 when `path` is None.
    `dtype` defaults to bf16 on CUDA and fp32 on CPU (where torch gets one thread per physical core)."""
    target = choose_device(device)
    folder = Path(path) if path is not None else default_model_dir(progress)
    check_supported(AutoConfig.from_pretrained(folder, local_files_only=True))
    if target.type == "cpu":
        torch.set_num_threads(physical_core_count())
    progress(1.0, f"Loading {folder.name}")
    dtype = dtype or (torch.bfloat16 if target.type == "cuda" else torch.float32)
    model = AutoModelForCausalLM.from_pretrained(folder, dtype=dtype, local_files_only=True).to(target)
    tokenizer = AutoTokenizer.from_pretrained(folder, local_files_only=True)
    return prepare_model(model, tokenizer, folder.name)


@contextmanager
def stock_attention(model: PreTrainedModel, implementation: str = "sdpa"):
    """Temporarily give the model transformers' own attention, e.g. for a reference `generate()`."""
    model.set_attn_implementation(implementation)
    try:
        yield model
    finally:
        model.set_attn_implementation(PAGED_ATTENTION)
