"""Shared pieces of the runner tests: a tiny seeded Llama, a scheduler loop with arrivals, the
one-request-at-a-time `generate()` reference, and a run checked against it request by request."""

from dataclasses import dataclass, field

import pytest
import torch
from transformers import AutoModelForCausalLM, LlamaConfig

from runner.model_loading import LoadedModel, prepare_model, stock_attention
from runner.model_runner import ModelRunner
from scheduler import Config, SamplingParams, Sequence
from scheduler.article import Scheduler

TINY_VOCAB = 97
TINY_EOS = TINY_VOCAB - 1

needs_cuda = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device: torch "
                                                  "sees none (make gpu-check runs these on a GPU machine)")]
DEVICES = ["cpu", pytest.param("cuda", marks=needs_cuda)]  # for parametrizing over devices


class TinyTokenizer:
    """Just enough tokenizer for a runner over the tiny model (it has no text)."""
    eos_token_id = TINY_EOS
    chat_template = None


def tiny_model(config_class=LlamaConfig, seed: int = 0, eos: int = TINY_EOS, device: str = "cpu",
               dtype: torch.dtype = torch.float32, **extra) -> LoadedModel:
    """A 2-layer model with grouped KV heads (Llama and fp32 unless told); large init keeps greedy choices far
    from ties, so float rounding cannot flip them."""
    torch.manual_seed(seed)
    config = config_class(vocab_size=TINY_VOCAB, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                          num_attention_heads=4, num_key_value_heads=2, head_dim=16, max_position_embeddings=512,
                          initializer_range=0.5, bos_token_id=0, eos_token_id=eos, pad_token_id=eos,
                          **extra)
    model = AutoModelForCausalLM.from_config(config).to(device, dtype)
    return prepare_model(model, TinyTokenizer(), f"tiny-{config.model_type}")


def random_prompts(lengths: list[int], seed: int = 1, prefix: list[int] = ()) -> list[list[int]]:
    generator = torch.Generator().manual_seed(seed)
    return [list(prefix) + torch.randint(0, TINY_EOS, (n,), generator=generator).tolist() for n in lengths]


@dataclass
class RunLog:
    kinds: list[str] = field(default_factory=list)
    events: list = field(default_factory=list)


def run_with_arrivals(scheduler: Scheduler, runner, arrivals: dict[int, list[Sequence]],
                      max_steps: int = 2000) -> RunLog:
    """Step the scheduler and runner until every request is done; `arrivals[step]` are added before that step."""
    log, step = RunLog(), 0
    while step <= max(arrivals) or not scheduler.is_finished():
        for seq in arrivals.get(step, ()):
            scheduler.add(seq)
        batch = scheduler.schedule()
        log.kinds.append(batch.kind)
        log.events += [*batch.events, *scheduler.postprocess(batch.seqs, runner.run(batch.seqs))]
        step += 1
        assert step < max_steps, "the run did not finish"
    return log


def reference_completion(loaded: LoadedModel, prompt: list[int], max_new_tokens: int) -> list[int]:
    """Greedy tokens of `generate()` on this prompt alone, with transformers' own attention and cache."""
    model = loaded.model
    input_ids = torch.tensor([prompt], device=loaded.device)
    with stock_attention(model), torch.inference_mode():
        out = model.generate(input_ids, attention_mask=torch.ones_like(input_ids), do_sample=False,
                             max_new_tokens=max_new_tokens, pad_token_id=loaded.eos_token_id)
    return out[0, len(prompt):].tolist()


def make_requests(prompts, max_tokens=12):
    """Greedy requests of the prompts."""
    return [Sequence(p, SamplingParams(temperature=0.0, max_tokens=max_tokens)) for p in prompts]


def tiny_config(**overrides) -> Config:
    """A roomy config for the tiny model (its EOS), changed by `overrides`."""
    settings = dict(max_num_seqs=4, max_num_batched_tokens=128, max_model_len=128, num_kvcache_blocks=64,
                    kvcache_block_size=16, eos=TINY_EOS)
    return Config(**settings | overrides)


def run_and_compare(tiny, cfg: Config, prompts, arrival_steps, max_tokens=12):
    """Run the prompts through scheduler and runner; assert each equals its reference. Returns the log."""
    seqs = make_requests(prompts, max_tokens)
    arrivals = {}
    for seq, step in zip(seqs, arrival_steps, strict=True):
        arrivals.setdefault(step, []).append(seq)
    scheduler, runner = Scheduler(cfg), ModelRunner(tiny, cfg)
    log = run_with_arrivals(scheduler, runner, arrivals)
    for seq, prompt in zip(seqs, prompts, strict=True):
        assert seq.finish_reason in ("eos", "max_tokens"), seq.finish_reason
        assert seq.completion_token_ids == reference_completion(tiny, prompt, max_tokens), f"request {seq.seq_id}"
    log.scheduler, log.runner, log.seqs = scheduler, runner, seqs
    return log


CHAT_QUESTIONS = ["What is the capital of France?", "Write a haiku about the sea.",
                  "Name three primary colors.", "How many legs does a spider have?"]


def chat_run(loaded: LoadedModel, max_tokens: int = 16) -> tuple[ModelRunner, list[Sequence], RunLog]:
    """The CHAT_QUESTIONS through the runner: chat prompts sharing the template's system prompt (prefix hits),
    arriving mid-run, chunked and mixed, block size 16. Returns the runner, the finished requests, the log."""
    cfg = Config(max_num_seqs=4, max_num_batched_tokens=48, max_model_len=256, num_kvcache_blocks=48,
                 kvcache_block_size=16, eos=loaded.eos_token_id, chunked_prefill=True, mixed_batches=True)
    runner = ModelRunner(loaded, cfg)
    seqs = [Sequence(runner.encode_prompt(q), SamplingParams(temperature=0.0, max_tokens=max_tokens))
            for q in CHAT_QUESTIONS]
    log = run_with_arrivals(Scheduler(cfg), runner, {0: seqs[:2], 2: seqs[2:3], 5: seqs[3:]})
    return runner, seqs, log
