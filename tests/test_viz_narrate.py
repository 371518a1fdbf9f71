import re
from dataclasses import replace

import pytest

from engine.inputs.scenario import SCENARIOS_DIR, load_scenario, preset_paths
from engine.run.engine import Engine
from engine.run.frame import Arrived
from i18n import Message, text
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
from tests.helpers.engines import preemption_engine, prefix_engine
from viz.narrate import describe, narrate, step_summary


def frame():
    return preemption_engine().frames[1]  # config: max_num_seqs=3, 64-token budget, max_model_len=60


def test_every_event_kind_has_a_plain_sentence():
    f = frame()
    cases = {
        Arrived(2, 10, 1): "Request 2 arrived (10 prompt tokens, priority 1) and joined the waiting queue.",
        Admitted(1, 10, 0, False): "Request 1 was admitted: 10 tokens prefilled this step.",
        Admitted(1, 2, 8, True): "Request 1 was admitted: 2 tokens prefilled this step, 8 more reused from the "
                                 "prefix cache (it had been preempted: the rest of its K/V is computed again).",
        Admitted(1, 10, 0, True): "Request 1 was admitted: 10 tokens prefilled this step (it had been preempted, so "
                                  "its K/V is computed again).",
        ChunkScheduled(4, 16, 16, 40): "Request 4 prefilled a chunk: tokens 16–31 of 40; the rest continues next step.",
        Blocked(5, "blocks", 2, 1): "Request 5 waits: it needs 2 blocks; 1 block free when its turn came in this "
                                    "step; after it: 2.",
        Blocked(5, "token_budget", 40, 12): "Request 5 waits: its prefill needs 40 tokens but only 12 are left in "
                                            "this step's token budget (max_num_batched_tokens=64).",
        Blocked(5, "max_num_seqs", 1, 0): "Request 5 waits: the batch is full (max_num_seqs=3).",
        Blocked(5, "decode_first", 9, 0): "Request 5 waits: decode-first ran the running requests' decodes this "
                                          "step; prefills wait for a step without them.",
        Preempted(1, 0, "tail", (3, 4)): "Request 1 was preempted (tail policy) to make room for request 0: blocks "
                                         "3, 4 freed; it goes back to the waiting queue and will recompute.",
        Preempted(1, 1, "tail", (3,)): "Request 1 was preempted: it needed another block, none was free, and it is "
                                       "itself the tail of the running queue, so the tail policy preempts it (block 3 "
                                       "freed); it goes back to waiting and will recompute.",
        Preempted(1, 1, "smart", (3,)): "Request 1 was preempted (smart policy): it needed another block, none was "
                                        "free, and the policy picked it to give its blocks up (block 3 freed); it "
                                        "goes back to waiting and will recompute.",
        PrefixHit(1, (0, 1), 8): "Request 1 found 2 blocks (8 tokens) in the prefix cache and reuses them: "
                                 "blocks 0, 1.",
        PrefixHit(2, (3,), 4): "Request 2 found 1 block (4 tokens) in the prefix cache and reuses it: block 3.",
        Finished(0, "max_tokens"): "Request 0 finished: it reached its max_tokens (10); its blocks were freed.",
        Finished(0, "max_model_len"): "Request 0 finished: it reached max_model_len (60 tokens); its blocks were "
                                      "freed.",
        Finished(0, "eos"): "Request 0 finished: it produced the end-of-sequence token; its blocks were freed.",
        Aborted(3, "too long"): "Request 3 was aborted: too long.",
        Speculated(2, (7, 8, 9), 2): "Request 2 checked 3 draft tokens found by prompt lookup: 2 accepted, and the "
                                     "model added one of its own (3 new tokens in one step).",
    }
    for event, sentence in cases.items():
        assert describe(event, f, lang="en") == sentence


def test_a_step_is_summarised_then_told_event_by_event():
    frames = preemption_engine().frames
    assert step_summary(frames[0], lang="en") == "Nothing has run yet: step to start."
    lines = narrate(frames[1], lang="en")
    assert lines[0] == "Step 1 ran a prefill batch of 2 requests (20 tokens): 0, 1."
    assert lines[-1] == ("Request 2 waits: it needs 3 blocks; 2 blocks free when its turn came in this step; after "
                         "it: 2.")
    preempting = next(f for f in frames if f.events_of("preempted"))
    assert any("to make room for request 0" in line for line in narrate(preempting, lang="en"))


def test_prefix_hits_are_narrated_from_a_real_run():
    lines = narrate(prefix_engine().frames[2], lang="en")
    assert "Request 1 found 2 blocks (8 tokens) in the prefix cache and reuses them: blocks 0, 1." in lines


def test_requests_arriving_together_share_one_sentence():
    frames = preemption_engine().frames
    assert narrate(frames[0], lang="en")[1] == ("Requests 0, 1 and 2 arrived (10, 10 and 10 prompt tokens, priority 0) "
                                                "and joined the waiting queue.")
    assert narrate(frames[1], lang="en")[1] == "Request 0 was admitted: 10 tokens prefilled this step."


def test_an_unknown_event_kind_still_reads_as_a_sentence():
    class Swapped(Event):
        kind = "swapped_out"

    assert describe(Swapped(4), frame(), lang="en") == "Request 4: swapped out."


def test_an_event_that_says_itself_is_told_by_its_own_message_in_each_language():
    class SaysItself(Event):
        kind = "says_itself"

        def said(self):
            return Message("vllm_v0.narrate.sent_back")

    assert describe(SaysItself(4), frame(), lang="en") == text("en", "vllm_v0.narrate.sent_back")
    assert describe(SaysItself(4), frame(), lang="zh") == text("zh", "vllm_v0.narrate.sent_back")


# -- every number belongs to a moment: the start of the step (the frame before) or its end (this frame) ------

def preset_runs():
    for path in preset_paths():
        scenario = load_scenario(path, runner="fake")
        for variant in ([False, True] if scenario.variant else [False]):
            engine = scenario.engine(variant=variant)
            engine.run()
            yield f"{path.stem}{' variant' if variant else ''}", engine.frames


def number_problems(frame, before) -> list[str]:
    """Every number of the narration that names its moment, checked against that moment's frame."""
    text, problems = " ".join(narrate(frame, before, lang="en")), []

    def check(pattern: str, wanted):
        for match in re.finditer(pattern, text):
            if int(match.group(1)) != wanted:
                problems.append(f"step {frame.step}: {match.group(0)!r} but the frame says {wanted}")

    rebuilt = frame.events_of("pool_rebuilt")  # the step then starts with the whole new pool free
    check(r"at the start of this step:? (\d+)", rebuilt[0].num_blocks if rebuilt else before.metrics.num_free_blocks)
    check(r"after it:? (\d+)", frame.metrics.num_free_blocks)
    check(r"\(of (\d+)\)", frame.config.num_kvcache_blocks)  # usable blocks: the vLLM twin's null block is none
    check(r"max_num_seqs=(\d+)", frame.config.max_num_seqs)
    check(r"max_num_batched_tokens=(\d+)", frame.config.max_num_batched_tokens)
    check(r"(\d+) requests are running after it", len(frame.running))
    check(r"^Step (\d+)", frame.step)
    check(r"batch of (\d+) requests?", len(frame.batch.seq_ids))
    check(r"requests? \((\d+) tokens?\):", frame.batch.total_tokens)
    return problems


def rebuilt_run():
    """Preset 02 with its pool raised from 3 to 6 blocks after frame 5."""
    engine = load_scenario(SCENARIOS_DIR / "02_preemption.toml", runner="fake").engine()
    engine.run(5)
    engine.set_config(num_kvcache_blocks=6)
    engine.run()
    return engine.frames


def test_every_narration_number_matches_the_frame_it_belongs_to():
    problems, checked = [], 0
    for name, frames in [*preset_runs(), ("02 rebuilt at frame 5", rebuilt_run())]:
        for step in range(1, len(frames)):
            problems += [f"{name} {p}" for p in number_problems(frames[step], frames[step - 1])]
            checked += 1
    assert checked > 300 and not problems, "\n".join(problems[:20])


def frames_of(name: str, variant: bool = False):
    engine = load_scenario(SCENARIOS_DIR / f"{name}.toml", runner="fake").engine(variant=variant)
    engine.run()
    return engine.frames


def test_a_waiting_request_is_told_with_the_free_blocks_of_both_moments():
    """Preset 02, frame 11: 0 running, 3 empty blocks: the old log said only "needs 2 blocks, 1 free"."""
    frames = frames_of("02_preemption")
    lines = narrate(frames[11], frames[10], lang="en")
    assert "Request 2 waits: it needs 2 blocks; at the start of this step: 1 block free; after it: 3." in lines
    assert "KV blocks free: 1 at the start of this step, 3 after it (of 3)." in lines
    assert "Request 3 waits: it needs 1 block; at the start of this step: 0 blocks free; after it: 1." in narrate(
        frames[2], frames[1], lang="en")


def test_a_prefill_step_says_who_sat_it_out_and_why():
    """Preset 01, step 2: 0, 1 and 2 are running but not in the prefill batch, and 5 run under max_num_seqs=3."""
    frames = frames_of("01_prefill_first")
    lines = narrate(frames[2], frames[1], lang="en")
    assert lines[-1] == ("Requests 0, 1 and 2 were running but sat this step out: a step that admits new requests "
                         "carries only prefills (as in nano-vllm), so their decodes pause for it. max_num_seqs=3 "
                         "counts only this prefill batch, so 5 requests are running after it; decode steps take 3 at "
                         "a time.")
    assert narrate(frames[3], frames[2], lang="en")[-1] == (
        "Requests 3 and 4 were running but not in this batch: a batch holds at most max_num_seqs=3 requests, so the "
        "running ones take turns.")


def test_the_last_chunk_of_a_prompt_is_told():
    """Preset 04 variant, step 8: the old page said "No scheduling decisions this step"."""
    frames = frames_of("04_chunked_prefill", variant=True)
    assert ("Request 4 prefilled the last chunk of its prompt (tokens 180–239 of 240) and got its first token."
            in narrate(frames[8], frames[7], lang="en"))


def test_a_pool_rebuilt_mid_run_is_told_as_an_event_not_a_preemption():
    """Raising the KV blocks from 3 to 6 at frame 5: request 0 was never preempted."""
    frames = rebuilt_run()
    lines = narrate(frames[6], frames[5], lang="en")
    assert ("KV pool rebuilt at step 6 with 6 blocks of 10 tokens (a setting changed after frame 5): the running "
            "request 0 recomputes its tokens, queued ahead of the waiting ones; nobody was preempted.") in lines
    admitted_0 = next(line for line in lines if line.startswith("Request 0 was admitted"))
    assert "the KV pool was rebuilt" in admitted_0 and "preempted" not in admitted_0
    assert "KV blocks free: 6 at the start of this step, 0 after it (of 6)." in lines
    assert len(frames[6].blocks) == 6 and len(frames[5].blocks) == 3



@pytest.mark.parametrize("lang, told", [("en", "KV pool rebuilt at step 4 with 40 token slots (a setting changed"),
                                        ("zh", "KV 缓存池在第 4 步重建为 40 个 token 槽位（")])
def test_a_radix_trees_pool_rebuilt_mid_run_is_told_in_slots(lang, told):
    """Under the SGLang twin the pool is token slots: a rebuild says so, not "40 blocks of 1 tokens"."""
    engine = load_scenario(SCENARIOS_DIR / "sglang_evicted_prefix.toml", runner="fake").engine()
    engine.run(3)
    engine.set_config(num_kvcache_blocks=40)
    engine.run(4)
    assert any(line.startswith(told) for line in narrate(engine.frames[4], engine.frames[3], lang=lang))

def test_a_radix_trees_pool_is_told_in_slots_and_keeps_a_finished_requests_kv():
    """sglang_evicted_prefix: SGLang's pool holds token slots (page_size 1), and a finished request's KV stays in the
    tree, unlocked; the narration once said "its blocks were freed" and "units 1, ... freed"."""
    frames = frames_of("sglang_evicted_prefix")
    finished = narrate(frames[2], frames[1], lang="en")
    assert finished[1].startswith("KV slots: 24 empty and 0 evictable (cached, unlocked) at the start of this step; "
                                  "23 empty and 13 evictable after it")  # 0's 13 slots stay in the tree
    assert ("Request 0 finished: it reached its max_tokens (2); its KV stays in the radix tree, unlocked: a later "
            "request may hit it as a prefix, or it is evicted when the pool runs short.") in finished
    evicted = " ".join(narrate(frames[5], frames[4], lang="zh"))
    assert "释放了槽位 1、2、3、4、5、6、7、8、9、10、11、12，不再缓存" in evicted and "单元" not in evicted
    told = [line for step in range(1, len(frames)) for line in narrate(frames[step], frames[step - 1], lang="en")]
    assert not [line for line in told if "block" in line]
    spec = load_scenario(SCENARIOS_DIR / "sglang_evicted_prefix.toml", runner="fake").spec
    paged = Engine(replace(spec, config=replace(spec.config, kvcache_block_size=4, num_kvcache_blocks=9)))
    paged.run()
    assert narrate(paged.frames[1], paged.frames[0], lang="en")[1] == (
        "KV slots: 36 empty and 0 evictable (cached, unlocked) at the start of this step; 24 empty and 0 evictable "
        "after it (of 36; SGLang's available_size() and evictable_size()).")  # SGLang counts slots, pages of 4
    hit = " ".join(narrate(paged.frames[10], paged.frames[9], lang="en"))  # pages named with the slots the tree shows
    assert "reuses them: pages 1, 2 (slots 4–11)." in hit


def test_a_prefix_hit_in_a_radix_tree_is_told_in_its_pools_units():
    """vllm_blocks_vs_sglang_tree: the vLLM twin hits whole blocks, its SGLang variant token slots; the hit once said
    "found 10 blocks" of a tree that holds no blocks."""
    vllm, sglang = frames_of("vllm_blocks_vs_sglang_tree"), frames_of("vllm_blocks_vs_sglang_tree", variant=True)
    assert ("Request 1 found 2 blocks (8 tokens) in the prefix cache and reuses them: blocks 1, 2."
            in narrate(vllm[4], vllm[3], lang="en"))
    assert ("Request 1 found 10 slots (10 tokens) in the prefix cache and reuses them: slots 1, 2, 3, 4, 5, 6, 7, 8, "
            "9, 10." in narrate(sglang[4], sglang[3], lang="en"))
    assert ("请求 2 在前缀缓存中找到 11 个槽位（11 个 token）并复用它们：槽位 1、2、3、4、5、6、7、8、9、10、11。"
            in narrate(sglang[7], sglang[6], lang="zh"))


def test_sglangs_priority_scheduling_is_told_with_its_priorities_threshold_and_direction():
    """sglang_priority: the order by priority (SGLang: higher values first), a preemption into the full batch, a
    request below the threshold waiting, and the preempted request's return; in both languages."""
    frames = frames_of("sglang_priority")
    step3 = narrate(frames[3], frames[2], lang="en")
    assert ("Request 3 first (priority scheduling): priority 5, the most important waiting (SGLang serves higher "
            "values first); request 2, priority 2, arrived earlier.") in step3
    assert ("Request 1 (priority 0) was preempted to admit request 3 (priority 5): the running batch was full "
            "(max_running_requests=2), and SGLang's priority preemption releases a running request whose priority "
            "is lower by more than priority_scheduling_preemption_threshold=2 (SGLang serves higher values first); "
            "it goes back to the waiting queue (slot 10 freed) and will be prefilled again.") in step3
    assert ("Request 1 dropped its lock on its prefix in the radix tree (slots 5, 6, 7, 8): still cached, not freed; "
            "evictable once no request locks it.") in step3  # issue 45 point 3: they were told "freed"
    assert step3.index(next(line for line in step3 if "first (priority" in line)) < \
        step3.index(next(line for line in step3 if "preempted" in line))  # sorted, then its head preempts
    waits = narrate(frames[2], frames[1], lang="en")
    assert any(line.startswith("Request 2 waits: the running batch is full (max_running_requests=2), and SGLang's "
                               "priority preemption found no running request to release for it") for line in waits)
    back = narrate(frames[11], frames[10], lang="en")
    assert any("(it had been preempted for a more important request: the rest of its K/V is computed again)" in line
               for line in back)
    zh = " ".join(narrate(frames[3], frames[2], lang="zh"))
    assert "请求 1（优先级 0）被抢占，以接纳请求 3（优先级 5）：运行批次已满（max_running_requests=2）" in zh
    assert "请求 3 排第一（优先级调度）：优先级 5，是等待中最重要的（SGLang 先服务数值较大的）" in zh
    assert "它曾被更重要的请求抢占" in " ".join(narrate(frames[11], frames[10], lang="zh"))
    variant = frames_of("sglang_priority", variant=True)
    assert "Request 2 waits: the running batch is full (max_running_requests=2)." in narrate(variant[3], variant[2],
                                                                                                lang="en")
