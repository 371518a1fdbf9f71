"""Greedy choice at temperature 0: the first of equal maxima, as torch.argmax (and so generate()) picks it; and the
stop tokens masked below a request's min_tokens."""

import torch

from runner.sampling import sample
from scheduler import SamplingParams, Sequence


def test_greedy_takes_the_first_of_tied_maxima_like_argmax():
    logits = torch.randn(16, 49152, generator=torch.Generator().manual_seed(0))
    logits[0, [7, 300, 40000]] = 50.0  # three-way tie
    logits[1, [49151, 2]] = 50.0
    logits[2] = 0.0  # a flat row: index 0
    requests = [(Sequence([1, 2], SamplingParams(temperature=0.0)), 2) for _ in range(16)]
    tokens = sample(logits, requests, runner_seed=0)
    assert tokens[:3] == [7, 2, 0]
    assert tokens == logits.argmax(dim=-1).tolist()


def test_below_min_tokens_the_stop_tokens_are_masked():
    """vLLM's min-tokens logits processor: EOS and the stop token ids cannot be sampled before min_tokens outputs."""
    with torch.inference_mode():  # as the model runner makes them
        logits = torch.tensor([[0.0, 5.0, 1.0, 2.0]] * 3)
    held = Sequence([1, 2], SamplingParams(temperature=0.0, max_tokens=5, min_tokens=2, stop_token_ids=(3,)))
    plain = Sequence([1, 2], SamplingParams(temperature=0.0, max_tokens=5))
    assert sample(logits, [(held, 2), (plain, 2), (held, 4)], 0, eos=1) == [2, 1, 1]
