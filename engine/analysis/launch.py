"""How each run starts on the system its scheduler mirrors, as the scheduler declares it (`SchedulerInfo.launch`,
scheduler/contract.py): the vLLM twin's `vllm serve ...`, the SGLang twin's `python -m sglang.launch_server ...`, the
article's the closest `vllm serve` line; with the notes that say why the words read as they do.

    launch_line(config, "vllm")  ->  "vllm serve HuggingFaceTB/SmolLM2-135M-Instruct --max-num-seqs 4 ..."
    launch_notes(config, "vllm", "en")  ->  ["--num-gpu-blocks-override 65: vLLM keeps block 0 ...", ...]
"""

from __future__ import annotations

import shlex

from i18n import in_lang
from scheduler import Config
from scheduler.factory import scheduler_info

DEFAULT_MODEL = "HuggingFaceTB/SmolLM2-135M-Instruct"


def launch_system(scheduler: str) -> str | None:
    """The name of the system a run of `scheduler` is started on (None where it declares none)."""
    launch = scheduler_info(scheduler).launch
    return launch.system if launch is not None else None


def launch_line(config: Config, scheduler: str, model: str = DEFAULT_MODEL, overlap: bool = False) -> str | None:
    """The shell command that starts that system with `config`'s settings (None where the scheduler declares none)."""
    launch = scheduler_info(scheduler).launch
    return shlex.join(launch.command(config, model, overlap)) if launch is not None else None


def launch_notes(config: Config, scheduler: str, lang: str) -> list[str]:
    """Why the command reads as it does, one sentence each, in `lang`."""
    launch = scheduler_info(scheduler).launch
    return [in_lang(lang, note) for note in launch.notes(config)] if launch is not None else []
