"""vLLM's `Request` (vllm/v1/request.py) as far as its scheduler reads it: the engine's `Sequence`, which holds the
tokens, status, block table and computed tokens the engine and the recorder read, wrapped with what vLLM's request
holds beyond it. The twin's queues hold these; the engine sees their sequences (`VllmScheduler.waiting_seqs`)."""

from __future__ import annotations

from scheduler.policies import priority_key
from scheduler.sequence import Sequence


class Request:
    """One request in the twin. Beyond the Sequence (`seq`):
    - `spec_token_ids`: the draft tokens proposed for its next step (vLLM's model runner proposes them after a step;
      the ones scheduled go to `seq.draft_token_ids`, which the runner reads);
    - `is_prefill_chunk`: its last scheduled chunk left tokens of its prompt (or recompute) to compute;
    - async scheduling: `num_output_placeholders` (vLLM's: tokens sampled but not landed), `num_unlanded` (the
      trailing PLACEHOLDER entries of its token ids: more than `num_output_placeholders` once a preemption forgot
      them), `num_in_flight` (scheduled tokens of launched steps not landed yet) and `num_stale` (those in flight when
      it was preempted: until they land it is not admitted again)."""

    __slots__ = ("seq", "spec_token_ids", "is_prefill_chunk", "num_output_placeholders", "num_unlanded",
                 "num_in_flight", "num_stale")

    def __init__(self, seq: Sequence):
        self.seq = seq
        self.spec_token_ids: list[int] = []
        self.is_prefill_chunk = False
        self.num_output_placeholders = self.num_unlanded = self.num_in_flight = self.num_stale = 0

    def __repr__(self) -> str:
        return f"Request({self.seq!r})"

    @property
    def request_id(self) -> int:
        return self.seq.seq_id

    @property
    def num_tokens(self) -> int:
        """vLLM's num_tokens: the prompt and output tokens known, not those still in flight."""
        return len(self.seq.token_ids) - self.num_unlanded

    @property
    def num_prompt_tokens(self) -> int:
        return self.seq.num_prompt_tokens

    @property
    def max_tokens(self) -> int:
        return self.seq.sampling_params.max_tokens

    @property
    def num_computed_tokens(self) -> int:
        return self.seq.num_computed_tokens

    @num_computed_tokens.setter
    def num_computed_tokens(self, value: int):
        self.seq.num_computed_tokens = value

    @property
    def priority_order(self) -> tuple:
        """The waiting queue's order under the priority policy: (priority, arrival, id), the lowest first."""
        return priority_key(self.seq)

    @property
    def victim_order(self) -> tuple:
        """vLLM's priority preemption picks the running request with the largest (priority, arrival time)."""
        return self.seq.priority, self.seq.arrival
