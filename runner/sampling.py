"""Next-token choice: greedy at temperature 0, else seeded temperature sampling.

A request's random stream is keyed by its seed and the position being sampled, not by how many times it
was sampled before, so the same request draws the same tokens however it is batched, chunked, preempted
(a preempted request recomputes its prefix and samples the next position, exactly once) or speculated
(a draft is accepted only where it equals the token sampled at its position). For a prompt-lookup draft,
a single proposed token, that is the standard speculative rejection rule: draft x is kept with probability
p(x), and otherwise the token comes from p without x, renormalised; here the outputs are even identical.
"""

import torch
import xxhash

from scheduler import SamplingParams


def request_seed(params: SamplingParams, runner_seed: int, seq_id: int) -> int:
    """The request's own seed if it has one, else one derived from the runner's seed and the request id."""
    return params.seed if params.seed is not None else xxhash.xxh64_intdigest(f"{runner_seed}:{seq_id}".encode())


def _position_generator(seed: int, position: int) -> torch.Generator:
    return torch.Generator().manual_seed(xxhash.xxh64_intdigest(f"{seed}:{position}".encode()) >> 1)


def sample(logits: torch.Tensor, requests: list[tuple], runner_seed: int, eos: int = -1) -> list[int]:
    """A token per row of `logits`; `requests[row]` is (sequence, index the token will take in it). Below a
    request's min_tokens its stop tokens (EOS `eos`, its stop_token_ids) are masked, as vLLM masks them."""
    for row, (seq, position) in enumerate(requests):
        if banned := [t for t in seq.sampling_params.banned_tokens(position - seq.num_prompt_tokens, eos)
                      if 0 <= t < logits.shape[-1]]:
            with torch.inference_mode():  # the logits were made under it
                logits[row, banned] = float("-inf")
    tokens = logits.max(dim=-1).indices.tolist()  # argmax's first maximum too, in a third of its time on CPU
    for row, (seq, position) in enumerate(requests):
        params = seq.sampling_params
        if params.temperature > 0:
            probs = torch.softmax(logits[row].float().cpu() / params.temperature, dim=-1)
            generator = _position_generator(request_seed(params, runner_seed, seq.seq_id), position)
            tokens[row] = torch.multinomial(probs, 1, generator=generator).item()
    return tokens

