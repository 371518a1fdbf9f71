"""How a run of the V0 twin starts on vLLM 0.10.2's V0 engine: `VLLM_USE_V1=0 vllm serve` with the config's
settings under V0's flags (V0Config.serve_args), and the notes on them (the policy lab's export)."""

from __future__ import annotations

from i18n import Message
from scheduler.config import Config
from scheduler.contract import Launch
from scheduler.vllm_v0.settings import V0Config, V0Settings


def v0_command(config: Config, model: str, overlapped: bool) -> list[str]:
    """The shell words (V0 has no async scheduling: `overlapped` changes nothing in them)."""
    return V0Config.from_config(config).serve_command(model)


def v0_notes(config: Config) -> list[Message]:
    """Why the line reads as it does: the CPU pool as --swap-space, a watermark no flag sets, the twin's release."""
    v0, own = V0Config.from_config(config), config.of(V0Settings)
    notes = [Message("vllm_v0.launch.swap_space", blocks=v0.cpu_blocks, gib=f"{v0.swap_space:.9g}"),
             Message("vllm_v0.launch.twin")]
    if own.watermark != V0Settings.watermark:
        notes.append(Message("vllm_v0.launch.watermark", watermark=f"{own.watermark:g}"))
    if config.eos != -1:
        notes.append(Message("vllm.eos"))
    return notes


def v0_start_warning(config: Config) -> Message | None:
    """V0's worker refuses to start when one request of max_model_len tokens cannot fit in the GPU pool
    (raise_if_cache_size_invalid); None where it starts."""
    if config.max_model_len <= config.kv_capacity_tokens:
        return None
    return Message("sidebar.beyond_pool", max_model_len=config.max_model_len, capacity=config.kv_capacity_tokens,
                   what=Message("vllm_v0.beyond_pool"))


V0_LAUNCH = Launch("vLLM V0", v0_command, v0_notes)
