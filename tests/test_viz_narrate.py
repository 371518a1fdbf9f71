from engine.frame import Arrived
from scheduler.events import (
    Aborted,
    Admitted,
    Blocked,
    ChunkScheduled,
    Event,
    Finished,
    Preempted,
    PrefixHit,
    Speculated,
)
from tests.test_viz_scenes import preemption_engine, prefix_engine
from viz.narrate import describe, narrate, step_summary


def frame():
    return preemption_engine().frames[1]  # config: max_num_seqs=3, 64-token budget, max_model_len=60


def test_every_event_kind_has_a_plain_sentence():
    f = frame()
    cases = {
        Arrived(2, 10, 1): "Request 2 arrived (10 prompt tokens, priority 1) and joined the waiting queue.",
        Admitted(1, 10, 0, False): "Request 1 was admitted: 10 tokens prefilled this step.",
        Admitted(1, 2, 8, True): "Request 1 was admitted: 2 tokens prefilled this step, 8 more reused from the "
                                 "prefix cache (it had been preempted, so its K/V is computed again).",
        ChunkScheduled(4, 16, 16, 40): "Request 4 prefilled a chunk: tokens 16–31 of 40; the rest continues next step.",
        Blocked(5, "blocks", 2, 1): "Request 5 waits: needs 2 blocks, 1 free.",
        Blocked(5, "token_budget", 40, 12): "Request 5 waits: its prefill needs 40 tokens but only 12 are left in "
                                            "this step's token budget (max_num_batched_tokens=64).",
        Blocked(5, "max_num_seqs", 1, 0): "Request 5 waits: the batch is full (max_num_seqs=3).",
        Blocked(5, "decode_first", 9, 0): "Request 5 waits: decode-first ran the running requests' decodes this "
                                          "step; prefills wait for a step without them.",
        Preempted(1, 0, "tail", (3, 4)): "Request 1 was preempted (tail policy) to make room for request 0: blocks "
                                         "3, 4 freed; it goes back to the waiting queue and will recompute.",
        Preempted(1, 1, "tail", (3,)): "Request 1 was preempted: it needed another block and no other request could "
                                       "give one up (blocks 3 freed); it goes back to waiting and will recompute.",
        PrefixHit(1, (0, 1), 8): "Request 1 found 2 blocks (8 tokens) in the prefix cache and reuses them: "
                                 "blocks 0, 1.",
        Finished(0, "max_tokens"): "Request 0 finished: it reached its max_tokens (10); its blocks were freed.",
        Finished(0, "max_model_len"): "Request 0 finished: it reached max_model_len (60 tokens); its blocks were "
                                      "freed.",
        Finished(0, "eos"): "Request 0 finished: it produced the end-of-sequence token; its blocks were freed.",
        Aborted(3, "too long"): "Request 3 was aborted: too long.",
        Speculated(2, (7, 8, 9), 2): "Request 2 checked 3 draft tokens found by prompt lookup: 2 accepted, and the "
                                     "model added one of its own (3 new tokens in one step).",
    }
    for event, sentence in cases.items():
        assert describe(event, f) == sentence


def test_a_step_is_summarised_then_told_event_by_event():
    frames = preemption_engine().frames
    assert step_summary(frames[0]) == "Nothing has run yet: step to start."
    lines = narrate(frames[1])
    assert lines[0] == "Step 1 ran a prefill batch of 2 requests (20 tokens): 0, 1."
    assert lines[-1] == "Request 2 waits: needs 3 blocks, 2 free."
    preempting = next(f for f in frames if f.events_of("preempted"))
    assert any("to make room for request 0" in line for line in narrate(preempting))


def test_prefix_hits_are_narrated_from_a_real_run():
    lines = narrate(prefix_engine().frames[2])
    assert "Request 1 found 2 blocks (8 tokens) in the prefix cache and reuses them: blocks 0, 1." in lines


def test_requests_arriving_together_share_one_sentence():
    lines = narrate(preemption_engine().frames[1])
    assert lines[1] == ("Requests 0, 1 and 2 arrived (10, 10 and 10 prompt tokens, priority 0) and joined the "
                        "waiting queue.")
    assert lines[2] == "Request 0 was admitted: 10 tokens prefilled this step."


def test_an_unknown_event_kind_still_reads_as_a_sentence():
    class Swapped(Event):
        kind = "swapped_out"

    assert describe(Swapped(4), frame()) == "Request 4: swapped out."
