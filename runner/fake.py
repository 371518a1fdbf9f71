"""The seed-style fake model: instant, torch-free, and deterministic per request.

A sequence that has reached `max_model_len` gets EOS; otherwise its next token is drawn from
[low, high] by a hash of (seed, request id, position), so a request writes the same tokens however
it is batched, preempted or chunked, exactly as a real greedy model would. Where the scheduler declares pools
beside the main one (`kv_pools`), it keeps the token each KV slot was computed from (runner/kv_pools.py), so the
blocks a step copies between pools (`copy_blocks`) move what they hold, as on the model.
"""

import xxhash

from runner.kv_pools import SlotTokens, checked_copies
from scheduler.speculative import accept_drafts


class FakeRunner:
    def __init__(self, max_model_len: int, eos: int = -1, seed: int = 0, low: int = -1, high: int = 999,
                 block_size: int = 1, kv_pools: dict[str, int] | None = None):
        """`kv_pools`: the blocks of each KV pool (the main one and the side pools a scheduler declares), of
        `block_size` tokens; where it names side pools, the fake model keeps what its slots hold (`kv`)."""
        if low > high:
            raise ValueError(f"token range [{low}, {high}] is empty: low must not exceed high")
        self.max_model_len, self.eos, self.seed = max_model_len, eos, seed
        self.low, self.span = low, high - low + 1
        self.eos_token_id = eos
        self.tokenizer: object | None = None  # the fake model has no text; TextFakeRunner gives it one
        self.kv_pools = kv_pools or {}
        self.kv = SlotTokens(block_size, self.kv_pools) if len(self.kv_pools) > 1 else None

    def copy_blocks(self, copies):
        """Copy KV blocks between pools before the step runs (`Batch.block_copies`); a copy outside the pools is
        refused (ValueError)."""
        if self.kv is None:
            checked_copies(copies, self.kv_pools)  # nothing held to move: a main pool's copy changes no token
        else:
            self.kv.copy(copies)

    def next_token(self, seq_id: int, position: int) -> int:
        digest = xxhash.xxh64_intdigest(f"{self.seed}:{seq_id}:{position}".encode())
        return self.low + digest % self.span

    def token_at(self, seq_id: int, length: int) -> int:
        """The token the fake model writes after `length` tokens of this request."""
        return self.eos if length >= self.max_model_len else self.next_token(seq_id, length)

    def run(self, seqs) -> list:
        """One token per scheduled sequence; None for a prefill chunk that leaves prompt tokens uncomputed;
        for a sequence with draft tokens, the drafts the model agrees with followed by its own next token."""
        if self.kv is not None:
            self.kv.write(seqs)
        outputs = []
        for seq in seqs:
            if seq.num_computed_tokens + seq.num_scheduled_tokens < len(seq) + len(seq.draft_token_ids):
                outputs.append(None)
            elif seq.draft_token_ids:  # the fake model's token at a position does not depend on those before
                model_tokens = [self.sampled(seq, len(seq) + j) for j in range(len(seq.draft_token_ids) + 1)]
                outputs.append(accept_drafts(seq.draft_token_ids, model_tokens))
            else:
                outputs.append(self.sampled(seq, len(seq)))
        return outputs

    def sampled(self, seq, length: int) -> int:
        """`token_at`, but never a token the request's min_tokens bans: then the first id of the range it allows (the
        token `seq` gets after `length` tokens; the referee replays a trace by it, engine/check/referee.py)."""
        token = self.token_at(seq.seq_id, length)
        banned = seq.sampling_params.banned_tokens(length - seq.num_prompt_tokens, self.eos)
        if token in banned:
            token = next(t for t in range(self.low, self.low + self.span) if t not in banned)
        return token
