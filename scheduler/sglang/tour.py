"""What the learning-path tour shows of the SGLang twin: where SGLang 0.5.23 decides each step (its managers'
scheduler.py, schedule_policy.py at the release's tag; the line numbers read from that release)."""

from scheduler.contract import TourInfo

TOUR = TourInfo(
    summary="sglang.tour.summary",
    source="https://github.com/sgl-project/sglang/blob/v0.5.23/python/sglang/srt/managers",
    lines=(("batch", "scheduler.py#L3992-L4005"),  # a prefill batch if one can be formed, else the decode batch
           ("chunk", "scheduler.py#L4175-L4184"),  # the request being chunked goes on first
           ("admit", "scheduler.py#L4270-L4300"),  # PrefillAdder.add_one_req, request by request
           ("resume", "scheduler.py#L4270-L4300"),  # a retracted request is admitted as a new one
           ("wait", "schedule_policy.py#L1395-L1425"),  # its prompt, its future tokens: NO_TOKEN
           ("retract", "scheduler.py#L4470-L4493"),  # check_decode_mem fails: retract_decode
           ("preempt", "schedule_policy.py#L1707-L1778")))  # priority scheduling's preempt_to_schedule
