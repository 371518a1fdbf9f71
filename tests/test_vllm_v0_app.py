"""The V0 twin in the app: its preset's steps told in V0's words and numbers (both languages), its `vllm serve`
line for 0.10.2's V0 engine, and a swap-out that finds the CPU pool full said as V0 says it, the run kept at its last
good frame."""

import pytest

from engine.inputs.scenario import SCENARIOS_DIR, load_scenario
from i18n import in_lang
from scheduler.factory import scheduler_info
from scheduler.vllm_v0.settings import V0Config
from session.lab import Lab, LabError, RunInputs
from session.run_cache import RunCache
from viz.narrate import narrate

PRESET = SCENARIOS_DIR / "vllm_v0_swap_vs_recompute.toml"


def test_a_swap_is_told_with_the_blocks_v0_moved_in_both_languages():
    engine = load_scenario(PRESET).engine()
    engine.run()
    out, back = engine.frames[4], engine.frames[7]
    assert [tuple(c) for c in out.block_copies] == [("gpu", 4, "cpu", 0), ("gpu", 5, "cpu", 1)]
    assert out.queue("swapped") == (2,) and out.side_pools["cpu"][:2] == (2, 2)
    en, zh = narrate(out, engine.frames[3], lang="en"), narrate(out, engine.frames[3], lang="zh")
    assert "Request 2 swapped out (blocks_to_swap_out): GPU blocks 4, 5 copied to CPU blocks 0, 1" in " ".join(en)
    assert any("by swap (--preemption-mode swap)" in line and "request 1 could not append" in line for line in en)
    assert "请求 2 被换出（blocks_to_swap_out）：GPU 块 4, 5 复制到 CPU 块 0, 1" in " ".join(zh)
    assert [tuple(c) for c in back.block_copies] == [("cpu", 0, "gpu", 6), ("cpu", 1, "gpu", 1)]
    assert any("swapped in" in line and "CPU blocks 0, 1 copied to GPU blocks 6, 1" in line
               for line in narrate(back, engine.frames[6], lang="en"))
    no_prefill = narrate(engine.frames[5], engine.frames[4], lang="en")
    assert any(line.startswith("No prefill: request 2 was swapped out when the step began") for line in no_prefill)


def test_the_export_is_vllm_0_10_2s_v0_engine_with_the_cpu_pool_as_swap_space():
    config = load_scenario(PRESET).spec.config
    words = scheduler_info("vllm_v0").launch.command(config, "HuggingFaceTB/SmolLM2-135M-Instruct", False)
    assert words[:4] == ["env", "VLLM_USE_V1=0", "vllm", "serve"]
    assert words[words.index("--preemption-mode") + 1] == "swap"
    assert words[words.index("--num-gpu-blocks-override") + 1] == "7"
    swap_space = float(words[words.index("--swap-space") + 1])
    assert V0Config(swap_space=swap_space, block_size=4).cpu_blocks == 4  # V0 sizes its CPU pool back to 4 blocks


def test_a_full_cpu_pool_stops_the_run_with_v0s_words_and_keeps_its_frames(tmp_path):
    full = tmp_path / "full.toml"
    full.write_text(PRESET.read_text().replace("num_cpu_blocks = 4", "num_cpu_blocks = 1"))
    lab = Lab(RunInputs.from_scenario(load_scenario(full), "fake"), cache=RunCache(budget_bytes=2**28))
    lab.run(3)
    with pytest.raises(LabError) as failed:
        lab.run(1)
    assert failed.value.message_id == "lab.step_failed" and failed.value.values["step"] == 4
    for lang in ("en", "zh"):
        assert "Aborted due to the lack of CPU swap space" in in_lang(lang, failed.value)
    assert lab.cursor == lab.last == 3 and not lab.is_over
