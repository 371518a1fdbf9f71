"""What the learning-path tour shows of the vLLM twin: where vLLM 0.32's V1 Scheduler decides each step
(vllm/v1/core/sched/scheduler.py at the release's tag; the line numbers read from that release)."""

from scheduler.contract import TourInfo

TOUR = TourInfo(
    summary="vllm.tour.summary",
    source="https://github.com/vllm-project/vllm/blob/v0.32.0/vllm/v1/core/sched",
    lines=(("batch", "scheduler.py#L611-L662"),  # one token budget; the running requests first
           ("chunk", "scheduler.py#L701-L716"),  # a running request's tokens, cut to the budget
           ("preempt", "scheduler.py#L776-L848"),  # allocate_slots fails: preempt the tail (or lowest priority)
           ("wait", "scheduler.py#L899-L925"),  # no admission in a step that preempted; the budget, the batch
           ("admit", "scheduler.py#L1256-L1282"),  # allocate_slots: the whole sequence must fit
           ("resume", "scheduler.py#L1344-L1371")))  # a preempted request back in running
