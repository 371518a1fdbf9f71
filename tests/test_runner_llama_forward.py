"""The runner's own Llama forward computes the very logits of transformers' forward, on a mixed step."""

import pytest
import torch
from transformers import Qwen3Config

from runner.llama_forward import _layer, llama_logits, supports_direct_forward
from runner.model_runner import ModelRunner
from runner.packing import pack_batch
from runner.prepacked_linear import prepacked_linears
from scheduler import Config, SamplingParams, Sequence
from tests.helpers.tiny_model import random_prompts, tiny_model


def staged(prompt: list[int], first_block: int, computed: int, block_size: int) -> Sequence:
    seq = Sequence(prompt, SamplingParams(temperature=0.0))
    seq.block_table = list(range(first_block, first_block + -(-len(prompt) // block_size)))
    seq.num_computed_tokens, seq.num_scheduled_tokens = computed, len(prompt) - computed
    return seq


def test_direct_forward_gives_transformers_logits_bit_for_bit():
    loaded = tiny_model()
    runner = ModelRunner(loaded, Config(num_kvcache_blocks=64, kvcache_block_size=4, eos=loaded.eos_token_id))
    assert runner.direct_forward
    prompts = random_prompts([9, 13, 6, 11, 7])
    # three decodes, a prefill from position 0, and a chunk over cached K/V: every attention path
    seqs = [staged(prompts[0], 0, 8, 4), staged(prompts[1], 4, 12, 4), staged(prompts[2], 8, 5, 4),
            staged(prompts[3], 12, 0, 4), staged(prompts[4], 16, 3, 4)]
    logits = {}
    with torch.inference_mode(), prepacked_linears():
        for direct in (False, True):
            packed = pack_batch(seqs, runner.kv_cache, runner.device)
            ids, positions = packed.input_ids[None], packed.positions[None]
            logits[direct] = (llama_logits(loaded.model, ids, positions, packed.logits_index, packed.step)
                              if direct else
                              loaded.model(input_ids=ids, position_ids=positions, use_cache=False,
                                           logits_to_keep=packed.logits_index, paged_step=packed.step).logits[0])
    assert logits[True].shape == (5, loaded.model.config.vocab_size)
    assert torch.equal(logits[True], logits[False])


def test_other_families_keep_transformers_forward():
    assert not supports_direct_forward(tiny_model(Qwen3Config).model, torch.device("cpu"))
    assert not supports_direct_forward(tiny_model().model, torch.device("cuda"))


@pytest.mark.skipif(not torch.backends.mkldnn.is_available(), reason="torch built without oneDNN")
def test_weights_are_packed_at_load_not_in_the_first_step():
    model = tiny_model().model
    layers = [_layer(layer) for layer in model.model.layers]
    assert all(stacked._packed is not None for found in layers for stacked in (found.qkv, found.o, found.gate_up,
                                                                               found.down))
    assert model.__dict__["_schedlab_lm_head"]._packed is not None
    assert "_packed" in layers[0].o.linears[0].__dict__  # a single layer's own packed copy, shared with it
