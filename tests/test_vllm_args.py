"""The config -> vLLM engine arguments mapping, flag by flag, and the notes on what vLLM lacks: the vLLM twin's
launch (scheduler/vllm_v1/launch.py) and the article's closest vLLM command (scheduler/article/launch.py)."""

import json
import shlex
from dataclasses import replace

from engine.analysis.launch import launch_line, launch_notes
from scheduler import Config
from scheduler.vllm_v1.launch import vllm_args


def as_dict(args: list[str]) -> dict:
    """{flag: value, or True for a bare flag}."""
    result, i = {}, 0
    while i < len(args):
        if i + 1 < len(args) and not args[i + 1].startswith("--"):
            result[args[i]], i = args[i + 1], i + 2
        else:
            result[args[i]], i = True, i + 1
    return result


def test_every_field_maps_to_its_flag():
    config = Config(max_num_seqs=8, max_num_batched_tokens=1024, max_model_len=512, num_kvcache_blocks=300,
                    kvcache_block_size=32, chunked_prefill=True, enable_prefix_caching=False,
                    queue_policy="priority")
    assert as_dict(vllm_args(config)) == {
        "--max-num-seqs": "8", "--max-num-batched-tokens": "1024", "--max-model-len": "512",
        "--block-size": "32", "--num-gpu-blocks-override": "301", "--enable-chunked-prefill": True,
        "--no-enable-prefix-caching": True, "--no-async-scheduling": True, "--scheduling-policy": "priority",
        "--scheduler-reserve-full-isl": True, "--watermark": "0"}


def test_vllms_own_knobs_are_spelled_out():
    """The admission rules the run depends on are always set (vLLM's defaults may change); the others when set."""
    config = Config(scheduler_reserve_full_isl=False, watermark=0.1, max_num_scheduled_tokens=100,
                    max_num_active_seqs=2, long_prefill_token_threshold=64, long_prefill_token_threshold_adaptive=True)
    args = as_dict(vllm_args(config))
    assert args["--no-scheduler-reserve-full-isl"] and args["--watermark"] == "0.1"
    assert (args["--max-num-scheduled-tokens"], args["--max-num-active-seqs"]) == ("100", "2")
    assert args["--long-prefill-token-threshold"] == "64" and args["--long-prefill-token-threshold-adaptive"]
    assert "--max-num-active-seqs" not in as_dict(vllm_args(Config()))


def test_the_opposite_switches():
    args = as_dict(vllm_args(Config(chunked_prefill=False, enable_prefix_caching=True)))
    assert args["--no-enable-chunked-prefill"] and args["--enable-prefix-caching"]
    assert args["--scheduling-policy"] == "fcfs" and "--speculative-config" not in args


def test_speculation_becomes_an_ngram_speculative_config():
    args = vllm_args(Config(num_speculative_tokens=4, prompt_lookup_min=2, prompt_lookup_max=5))
    spec = json.loads(args[args.index("--speculative-config") + 1])
    assert spec == {"method": "ngram", "num_speculative_tokens": 4, "prompt_lookup_max": 5, "prompt_lookup_min": 2}


def test_the_command_line_quotes_the_json():
    config = Config(num_speculative_tokens=2)
    words = shlex.split(launch_line(config, "article", "my/model"))
    assert words[:3] == ["vllm", "serve", "my/model"] and words[3:] == vllm_args(config)


def test_notes_name_what_vllm_does_not_have():
    assert any("Smart preemption" in n for n in launch_notes(Config(preemption_policy="smart"), "article", "en"))
    assert any("prefills before decodes" in n for n in launch_notes(Config(prefill_first=True), "article", "en"))
    closest = Config(mixed_batches=True, prefill_first=False, preemption_policy="tail", kvcache_block_size=16)
    notes = launch_notes(closest, "article", "en")  # even the closest setting is not vLLM's: the twin is named
    assert len(notes) == 2 and "null block" in notes[0] and "vLLM twin" in notes[1]


def test_the_pool_override_counts_vllms_null_block():
    """vLLM V1 keeps block 0 as a null block: N usable blocks need --num-gpu-blocks-override N+1, said why."""
    config = Config(num_kvcache_blocks=3, max_model_len=15, kvcache_block_size=10)
    assert as_dict(vllm_args(config))["--num-gpu-blocks-override"] == "4"
    assert any("block 0 as a null block" in n and "3 usable blocks" in n for n in launch_notes(config, "article", "en"))


def test_async_scheduling_is_always_spelled_out():
    """Current vLLM schedules asynchronously by default: a synchronous run must say --no-async-scheduling."""
    assert "--no-async-scheduling" in vllm_args(Config())
    overlapped = vllm_args(Config(), overlap=True)
    assert "--async-scheduling" in overlapped and "--no-async-scheduling" not in overlapped
    assert "--async-scheduling" in shlex.split(launch_line(Config(), "vllm", "m", overlap=True))


def test_the_block_size_note_describes_current_vllm():
    note = next(n for n in launch_notes(Config(kvcache_block_size=10), "article", "en") if "--block-size" in n)
    assert "any block size its attention backend supports" in note and "1, 8, 16" not in note
    assert not any("--block-size" in n for n in launch_notes(Config(kvcache_block_size=32), "article", "en"))


def test_priority_queue_notes_how_vllm_preempts_and_what_it_lacks():
    notes = launch_notes(Config(queue_policy="priority", preemption_policy="tail"), "article", "en")
    assert any("least important running request" in n and "not the tail" in n for n in notes)
    assert any("waiting request preempt less important running ones" in n and "no equivalent" in n for n in notes)
    fcfs = launch_notes(Config(queue_policy="fcfs", preemption_policy="tail"), "article", "en")
    assert not any("least important" in n or "no equivalent" in n for n in fcfs)


def test_the_notes_speak_chinese():
    from tests.helpers.language import chinese_only

    configs = [Config(preemption_policy="smart", kvcache_block_size=10, eos=2), Config(queue_policy="priority"),
               Config(preemption_policy="priority"), Config(mixed_batches=True, prefill_first=True)]
    notes = [note for config in configs for note in launch_notes(config, "article", "zh")]
    assert len(notes) >= 8 and all(chinese_only(note) for note in notes), notes


def test_a_twin_run_says_its_decisions_are_vllms_and_drops_the_policy_notes():
    config = Config(preemption_policy="smart", mixed_batches=False, kvcache_block_size=8, eos=2,
                    long_prefill_token_threshold=64)
    twin, article = launch_notes(config, "vllm", "en"), launch_notes(config, "article", "en")
    assert any("vLLM's own" in n and "make vllm-check VLLM=0.32" in n for n in twin)
    assert any("vLLM 0.33's V1 Scheduler" in n
               for n in launch_notes(replace(config, vllm_version="0.33"), "vllm", "en"))
    assert not any("Smart preemption" in n or "Batches:" in n for n in twin)
    assert any("Smart preemption" in n for n in article) and any("vLLM twin" in n for n in article)
    assert any("--block-size 8" in n for n in twin) and any(n.startswith("eos:") for n in twin)
    assert as_dict(vllm_args(config))["--long-prefill-token-threshold"] == "64"
    from tests.helpers.language import chinese_only
    assert all(chinese_only(n) for n in launch_notes(config, "vllm", "zh"))
