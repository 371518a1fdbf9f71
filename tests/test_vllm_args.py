"""The config -> vLLM engine arguments mapping, flag by flag, and the notes on what vLLM lacks."""

import json
import shlex

from engine.vllm_args import vllm_args, vllm_command, vllm_notes
from scheduler import Config


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
        "--block-size": "32", "--num-gpu-blocks-override": "300", "--enable-chunked-prefill": True,
        "--no-enable-prefix-caching": True, "--scheduling-policy": "priority"}


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
    words = shlex.split(vllm_command(config, "my/model"))
    assert words[:3] == ["vllm", "serve", "my/model"] and words[3:] == vllm_args(config)


def test_notes_name_what_vllm_does_not_have():
    assert any("Smart preemption" in n for n in vllm_notes(Config(preemption_policy="smart")))
    assert any("prefills before decodes" in n for n in vllm_notes(Config(prefill_first=True)))
    assert any("--block-size" in n for n in vllm_notes(Config(kvcache_block_size=4)))
    closest = Config(mixed_batches=True, prefill_first=False, preemption_policy="tail", kvcache_block_size=16)
    assert vllm_notes(closest) == []
