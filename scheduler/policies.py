"""Queue order and preemption victims: the two places where the scheduling policies differ."""

from collections import deque

from scheduler.sequence import Sequence


def priority_key(seq: Sequence) -> tuple:
    """Waiting-queue order under the priority policy: lower priority value first, then earlier arrival."""
    return (seq.priority, seq.arrival, seq.seq_id)


def insert_waiting(waiting: deque, seq: Sequence, queue_policy: str, preempted: bool):
    """FCFS appends arrivals and puts preempted requests back at the head; the priority policy keeps the
    queue sorted (scanning from the tail, where arrivals usually land)."""
    if queue_policy == "fcfs":
        waiting.appendleft(seq) if preempted else waiting.append(seq)
        return
    key = priority_key(seq)
    i = len(waiting)
    while i > 0 and priority_key(waiting[i - 1]) > key:
        i -= 1
    waiting.insert(i, seq)


def _smart_key(seq: Sequence) -> tuple:
    """Least progress toward max_tokens first (least work lost by recomputing it), then most tokens still to
    generate (longest wait to finish), then lowest priority, then latest arrival."""
    max_tokens = seq.sampling_params.max_tokens
    return (seq.num_completion_tokens / max_tokens, -(max_tokens - seq.num_completion_tokens),
            -seq.priority, -seq.arrival, -seq.seq_id)


def priority_victim_key(seq: Sequence) -> tuple:
    """Lowest priority (largest value) first, then latest arrival."""
    return (-seq.priority, -seq.arrival, -seq.seq_id)


def pick_victim(policy: str, candidates: deque, requester: Sequence) -> Sequence | None:
    """The running sequence to preempt so that `requester` can grow; None when nothing else can go.

    `candidates` are the running sequences not yet batched this step. Under "priority" the requester
    itself is a candidate, so it never pushes out a request more important than itself."""
    if policy == "tail":
        return candidates[-1] if candidates else None
    if policy == "smart":
        return min(candidates, key=_smart_key, default=None)
    victim = min([*candidates, requester], key=priority_victim_key)
    return None if victim is requester else victim
