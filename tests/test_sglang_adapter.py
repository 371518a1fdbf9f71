"""The SGLang twin as the engine runs it (scheduler/sglang/engine_adapter.py): its decisions told as events with
SGLang's numbers and narrated in both languages, its frames as the live scheduler left them (a row re-pointed at the
tree's copy of a prefix included), its settings under SGLang's names, in links, the CLI and the exported
`python -m sglang.launch_server` line."""

import shlex
from dataclasses import asdict, replace

import pytest

from engine.analysis.launch import launch_line, launch_notes
from engine.cli import main
from engine.inputs.scenario import SCENARIOS_DIR, load_scenario
from engine.run.engine import Engine
from engine.run.frame import config_to_dict
from engine.run.recipe import Request, RunSpec
from i18n import text
from runner.fake import FakeRunner
from scheduler import Config, ConfigError, SamplingParams, Sequence
from scheduler.factory import make_scheduler, scheduler_info
from scheduler.sglang import ServerArgs
from scheduler.sglang.engine_adapter import server_args
from scheduler.sglang.settings import SglangSettings
from viz.frame_payload import stage_view
from viz.narrate import narrate

POOL = {"max_num_seqs": 4, "num_kvcache_blocks": 30, "kvcache_block_size": 1, "max_model_len": 64,
        "max_num_batched_tokens": 64}


def drive(config: Config, requests: list[tuple[int, list[int], int]], steps: int = 200):
    """(step, event) of every call, and the sequences, for requests (arrival, prompt, max_tokens); the fake model
    writes no EOS below max_model_len."""
    scheduler, runner = make_scheduler("sglang", config), FakeRunner(config.max_model_len, eos=config.eos)
    seqs = [(a, Sequence(p, SamplingParams(max_tokens=m), seq_id=i))
            for i, (a, p, m) in enumerate(requests)]
    events = []
    for step in range(1, steps):
        for arrival, seq in seqs:
            if arrival == step:
                scheduler.add(seq)
        batch = scheduler.schedule()
        events += [(step, e) for e in batch.events]
        events += [(step, e) for e in scheduler.postprocess(batch.seqs, runner.run(batch.seqs))]
        if step > max(a for a, _ in seqs) and scheduler.is_finished():
            return events, [s for _, s in seqs]
    raise AssertionError("the run did not end")


def test_lpm_puts_the_longest_cached_prefix_first_and_says_so():
    roomy = {**POOL, "num_kvcache_blocks": 40}
    events, _ = drive(Config(**roomy, schedule_policy="lpm"), [(1, list(range(1, 9)), 4), (3, list(range(50, 57)), 4),
                                                             (3, [*range(1, 9), 60, 61], 4)])
    step3 = [e for step, e in events if step == 3]
    assert [e.kind for e in step3][:4] == ["ordered", "prefix_hit", "admitted", "admitted"]
    ordered, hit = step3[0], step3[1]
    assert (ordered.seq_id, ordered.policy, ordered.ahead_of, ordered.num_prefix_tokens) == (2, "lpm", 1, 8)
    assert hit.block_ids == tuple(range(1, 9))  # request 0's token slots, kept in the tree
    assert [(e.seq_id, e.num_tokens, e.num_cached_tokens) for e in step3[2:4]] == [(2, 2, 8), (1, 7, 0)]
    fcfs, _ = drive(Config(**roomy), [(1, list(range(1, 9)), 4), (3, list(range(50, 57)), 4),
                                      (3, [*range(1, 9), 60, 61], 4)])  # fcfs, SGLang's default
    assert not [e for _, e in fcfs if e.kind == "ordered"]


def test_no_token_names_the_reserve_and_a_retraction_the_slots_and_the_ratio():
    prompts = [(1, list(range(10 * i + 1, 10 * i + 6)), 12) for i in range(3)]
    events, _ = drive(Config(**POOL), prompts)
    refused = [e for step, e in events if step == 2 and e.kind == "blocked"][0]
    # request 1 needs 5 + 12 + a page; of 30 slots request 0 holds 5 and its 11 future tokens are reserved at
    # new_token_ratio 0.7 (the prefill pass comes before the decode that decays it): 25 - 7.7 leaves 17.3
    assert (refused.reason, refused.needed, refused.available) == ("no_token", 18, 17.3)
    assert round(refused.reserve, 2) == 7.7 and refused.new_token_ratio == 0.7
    assert not [e for _, e in events if e.kind == "retracted"]  # the reserve keeps it from retracting
    events, seqs = drive(Config(**POOL, schedule_conservativeness=0.0), prompts)  # no reserve: it over-admits
    retracted = [(step, e) for step, e in events if e.kind == "retracted"]
    assert [(step, e.seq_id, e.needed, e.free, e.new_token_ratio) for step, e in retracted] == [(13, 1, 2, 0, 1.0)]
    assert len(retracted[0][1].freed_blocks) == 10  # its 10 outputs' own slots; its prompt is the tree's:
    unlocked = [e for _, e in events if e.kind == "unlocked"]
    assert [(e.seq_id, len(e.block_ids)) for e in unlocked] == [(1, 5)]  # unlocked, still cached
    again = [e for _, e in events if e.kind == "admitted" and e.seq_id == 1][-1]
    assert again.recompute and again.num_tokens == 16  # prompt + outputs prefilled again, its tree prefix evicted
    assert all(s.num_completion_tokens == 12 for s in seqs) and seqs[1].num_preemptions == 1


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_narration_gives_sglangs_reasons(lang):
    config = Config(**POOL, schedule_conservativeness=0.0)
    requests = [Request(prompt_token_ids=tuple(range(10 * i + 1, 10 * i + 6)), max_tokens=12, arrival=0)
                for i in range(3)]
    engine = Engine(RunSpec(config, requests, "fake", scheduler="sglang"))
    engine.run()
    lines = [line for k in range(1, len(engine.frames)) for line in narrate(engine.frames[k], engine.frames[k - 1],
                                                                              lang=lang)]
    said = "\n".join(lines)
    if lang == "en":
        assert "NO_TOKEN: request 1 needs 18 slots (its new tokens, its max_new_tokens and a page), and 12 are left " \
               "(rem_total_tokens: the empty and evictable slots less the reserve for the running requests' future " \
               "tokens, 0 at new_token_ratio 0, and what this pass charged the requests it admitted)" in said
        assert "SGLang admits a request only if it needs fewer slots than are left" in said  # 7 of 7 does not fit
        assert "Retracted request 1: the decode needs 2 slots, 0 free" in said and "new_token_ratio 1" in said
        assert "radix tree evicted its least-recently-used leaf" in said
    else:
        assert "NO_TOKEN：" in said and "撤回请求 1" in said and "基数树驱逐" in said
        assert "SGLang 只接纳所需槽位少于剩余槽位的请求" in said
    assert "(details" not in said and "kind=" not in said  # every SGLang event has a sentence of its own


def test_the_frames_follow_a_row_re_pointed_at_the_trees_copy_of_its_prefix():
    """Two requests with one prompt prefilled in one batch (fcfs: no in-batch deprioritising by lpm): the second
    to enter the tree finds the first's copy, frees its own slots and points its row at the tree's."""
    prompt = tuple(range(1, 41))
    requests = [Request(prompt_token_ids=prompt, max_tokens=3, arrival=0, ignore_eos=True) for _ in range(2)]
    engine = Engine(RunSpec(Config(**{**POOL, "num_kvcache_blocks": 120}, schedule_policy="fcfs"), requests, "fake",
                            scheduler="sglang"))
    engine.step()
    seqs = {s.seq_id: s for s in engine.scheduler.running_seqs}
    frame = engine.frames[len(engine.frames) - 1]
    assert seqs[0].block_table[:40] == seqs[1].block_table[:40]  # one copy, shared, after postprocess
    assert frame.requests[1].block_table == tuple(seqs[1].block_table)
    assert frame.batch.seq_ids == (0, 1) and frame.batch.num_tokens == (40, 40)
    pool = engine.scheduler.pool
    for block in frame.blocks:
        assert (block.ref_count, block.hash) == pool.unit_state(block.id)
    assert frame.free_block_ids == tuple(pool.free_order())


def test_the_config_maps_onto_sglangs_server_args_and_its_launch_line():
    config = Config(max_num_seqs=6, num_kvcache_blocks=20, kvcache_block_size=4, max_model_len=64,
                    chunked_prefill_size=16, max_prefill_tokens=128, schedule_policy="dfs-weight",
                    schedule_conservativeness=0.5)
    assert server_args(config) == ServerArgs(max_total_tokens=80, page_size=4, chunked_prefill_size=16,
                                             max_prefill_tokens=128, max_running_requests=6,
                                             schedule_policy="dfs-weight", schedule_conservativeness=0.5,
                                             context_length=64, eos=-1)
    words = shlex.split(launch_line(config, "sglang", "my/model"))
    assert words[:5] == ["python", "-m", "sglang.launch_server", "--model-path", "my/model"]
    flags = dict(zip(words[5:-1:2], words[6::2], strict=False))
    assert flags == {"--max-running-requests": "6", "--max-total-tokens": "80", "--page-size": "4",
                     "--chunked-prefill-size": "16", "--max-prefill-tokens": "128", "--schedule-policy": "dfs-weight",
                     "--schedule-conservativeness": "0.5", "--context-length": "64"}
    assert words[-1] == "--disable-overlap-schedule"
    assert "--disable-overlap-schedule" not in launch_line(config, "sglang", overlap=True)
    assert launch_line(config, "vllm").startswith("vllm serve") and launch_line(config, "article").startswith("vllm")
    notes = launch_notes(config, "sglang", "en")  # SGLang's own notes, none of vLLM's
    assert notes == ["The decisions shown are SGLang's own: this run used the SGLang twin, which makes SGLang 0.5.23's "
                     "Scheduler decisions step for step, as `make sglang-check` checks against that release (launch "
                     "SGLang 0.5.23 to meet them); the article's step order, batch mixing and preemption policy do not "
                     "apply to it."]
    assert "SGLang 0.5.23" in launch_notes(config, "sglang", "zh")[0]
    assert pool_unit_name(config) == "page" and pool_unit_name(replace(config, kvcache_block_size=1)) == "token slot"


def pool_unit_name(config: Config) -> str:
    return make_scheduler("sglang", config).pool.unit_name


def test_sglangs_settings_are_checked_and_named():
    info = scheduler_info("sglang")
    assert [info.setting_name(f) for f in ("max_num_seqs", "kvcache_block_size", "max_model_len", "eos")] == \
        ["max_running_requests", "page_size", "context_length", "eos"]
    assert info.setting_name("num_kvcache_blocks") == "max_total_tokens ÷ page_size"
    for field, value in (("schedule_policy", "random"), ("chunked_prefill_size", -2),
                         ("schedule_conservativeness", -0.5), ("max_prefill_tokens", 0)):
        with pytest.raises(ConfigError) as refused:
            Config(**{field: value})
        fix = refused.value.fix
        assert refused.value.field == field and text("zh", fix.key, **fix.values) != fix.key
    with pytest.raises(ConfigError, match="kvcache_block_size=8"):  # a chunk of no whole page never prefills
        Config(kvcache_block_size=8, chunked_prefill_size=4)
    assert Config(kvcache_block_size=8, chunked_prefill_size=8).value("chunked_prefill_size") == 8


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_prompt_over_sglangs_input_limit_is_prefilled_as_a_stub_and_reported_aborted_after_that_step(lang):
    """SGLang's validate_input_length (12 slots: max_req_input_len 11 - 5 = 6): queued, not refused; one token
    prefilled beside request 0 in one batch, a slot of its own, then aborted with SGLang's limit, its token cached."""
    config = Config(**{**POOL, "num_kvcache_blocks": 12})
    requests = [Request(prompt_token_ids=(1, 2), max_tokens=2, arrival=0),
                Request(prompt_token_ids=tuple(range(1, 8)), max_tokens=2, arrival=0)]
    engine = Engine(RunSpec(config, requests, "fake", scheduler="sglang"))
    engine.step()
    frame = engine.frames[1]
    assert frame.batch.seq_ids == (0, 1) and frame.batch.num_tokens == (2, 1)
    assert [e.kind for e in frame.events if e.seq_id == 1][-2:] == ["admitted", "aborted"]
    assert frame.requests[1].status == "aborted" and frame.requests[1].block_table == ()
    assert [0] in [node[2] for node in frame.panel("radix_tree")["nodes"]]  # the stub's one token, cached in the tree
    said = "\n".join(narrate(frame, engine.frames[0], lang=lang))
    assert ("takes at most 5 here" if lang == "en" else "最多接受 5 个") in said


def test_the_cli_runs_a_scenario_under_sglang(capsys):
    assert main(["run", "scenarios/05_prefix_caching.toml", "--runner", "fake", "--scheduler", "sglang"]) == 0
    out = capsys.readouterr().out
    assert "decided by SGLang 0.5.23" in out and "stopped: finished" in out and "(hit " in out


def test_a_change_of_sglangs_settings_applies_from_the_next_step_and_a_pool_change_is_refused():
    scheduler = make_scheduler("sglang", Config(**POOL))
    for i in range(3):
        scheduler.add(Sequence(list(range(10 * i + 1, 10 * i + 6)), SamplingParams(max_tokens=4), seq_id=i))
    changed = replace(scheduler.config, max_num_seqs=1, schedule_policy="lof", schedule_conservativeness=2.0)
    scheduler.reconfigure(changed)
    twin = scheduler.twin
    assert (twin.args.max_running_requests, twin.policy.policy, twin.new_token_ratio_tracker.current) == (1, "lof", 1.0)
    batch = scheduler.schedule()
    assert [s.seq_id for s in batch.seqs] == [0] and batch.events[-1].reason == "max_running_requests"
    with pytest.raises(ValueError, match="change the KV pool"):
        scheduler.reconfigure(replace(changed, kvcache_block_size=2))


def test_the_apps_sglang_settings_start_at_sglangs_defaults_and_a_policy_chosen_is_written_and_launched():
    """A frame writes schedule_policy only away from the default, fcfs (SGLang's); the launch line always names it."""
    defaults, args = Config(**POOL), ServerArgs()
    own = asdict(defaults.of(SglangSettings))
    assert own == {name: getattr(args, name) for name in own}
    lpm = replace(defaults, schedule_policy="lpm")
    assert "schedule_policy" not in config_to_dict(defaults) and config_to_dict(lpm)["schedule_policy"] == "lpm"
    for config, policy in ((defaults, "fcfs"), (lpm, "lpm")):
        words = shlex.split(launch_line(config, "sglang", "my/model"))
        assert words[words.index("--schedule-policy") + 1] == policy


PRIORITY = {"schedule_policy": "fcfs", "enable_priority_scheduling": True, "schedule_low_priority_values_first": True,
            "priority_scheduling_preemption_threshold": 3, "disable_priority_preemption": True,
            "retraction_policy": "priority"}


def test_priority_scheduling_maps_onto_sglangs_server_args_and_its_flags_join_the_launch_line():
    config = Config(**POOL, **PRIORITY)
    assert server_args(config) == ServerArgs(max_total_tokens=30, page_size=1, max_running_requests=4,
                                             context_length=64, **PRIORITY)
    words = shlex.split(launch_line(config, "sglang", "my/model"))
    assert words[-4:] == ["--disable-overlap-schedule", "--enable-priority-scheduling",
                          "--schedule-low-priority-values-first", "--disable-priority-preemption"]
    flags = dict(zip(words[5:-4:2], words[6:-4:2], strict=True))
    assert (flags["--schedule-policy"], flags["--priority-scheduling-preemption-threshold"],
            flags["--retraction-policy"]) == ("fcfs", "3", "priority")
    plain = launch_line(Config(**POOL, schedule_policy="fcfs", priority_scheduling_preemption_threshold=3),
                        "sglang", "my/model")
    assert "priority" not in plain  # off, its settings say nothing to SGLang


@pytest.mark.parametrize("settings, field", [({"schedule_policy": "lpm", "enable_priority_scheduling": True},
                                              "enable_priority_scheduling"),
                                             ({"retraction_policy": "priority"}, "retraction_policy"),
                                             ({"retraction_policy": "oldest"}, "retraction_policy"),
                                             ({"priority_scheduling_preemption_threshold": -1},
                                              "priority_scheduling_preemption_threshold")])
def test_priority_settings_sglang_refuses_are_refused_by_name_in_both_languages(settings, field):
    with pytest.raises(ConfigError) as refused:
        Config(**settings)  # SGLang allows priority scheduling with fcfs or lof only
    fix = refused.value.fix
    assert refused.value.field == field and text("zh", fix.key, **fix.values) != fix.key
    if field == "enable_priority_scheduling":
        assert "fcfs, lof" in text("en", fix.key, **fix.values) and "lpm" in text("en", fix.key, **fix.values)


def test_priority_scheduling_turned_on_mid_run_reorders_the_waiting_queue_from_the_next_step():
    scheduler = make_scheduler("sglang", Config(**{**POOL, "max_num_seqs": 1}, schedule_policy="fcfs"))
    for i, priority in enumerate((0, 0, 9)):
        scheduler.add(Sequence([10 * i + 1, 10 * i + 2], SamplingParams(max_tokens=2), priority=priority, seq_id=i))
    assert [s.seq_id for s in scheduler.schedule().seqs] == [0]
    scheduler.reconfigure(replace(scheduler.config, enable_priority_scheduling=True))
    assert scheduler.twin.policy.enable_priority_scheduling
    assert [s.seq_id for s in scheduler.waiting_seqs] == [1, 2]  # sorted by the next prefill pass, not at once
    scheduler.postprocess(scheduler.running_seqs, [5])
    batch = scheduler.schedule()
    assert [s.seq_id for s in scheduler.waiting_seqs] == [2, 1] and batch.events[-1].reason == "max_running_requests"


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_retraction_by_priority_and_the_low_values_first_order_are_narrated(lang):
    config = Config(**POOL, schedule_conservativeness=0.0, schedule_policy="fcfs", enable_priority_scheduling=True,
                    schedule_low_priority_values_first=True, retraction_policy="priority")
    requests = [Request(prompt_token_ids=tuple(range(10 * i + 1, 10 * i + 6)), max_tokens=12, arrival=0,
                        priority=priority) for i, priority in enumerate((3, 1, 2))]
    engine = Engine(RunSpec(config, requests, "fake", scheduler="sglang"))
    engine.run()
    retracted = [(k, e) for k in range(1, len(engine.frames)) for e in engine.frames[k].events_of("retracted")]
    assert [e.seq_id for _, e in retracted][:1] == [0]  # priority 3: the least important when low values go first
    step, _ = retracted[0]
    said = " ".join(narrate(engine.frames[step], engine.frames[step - 1], lang=lang))
    ordered = " ".join(narrate(engine.frames[1], engine.frames[0], lang=lang))
    if lang == "en":
        assert "Retracted request 0 (priority 3; retraction_policy=priority retracts the least important first)" in said
        assert "Request 1 first (priority scheduling): priority 1, the most important waiting (lower values first, " \
               "schedule_low_priority_values_first); request 0, priority 3, arrived earlier." in ordered
    else:
        assert "撤回请求 0（优先级 3；retraction_policy=priority 先撤回最不重要的）" in said
        assert "先服务数值较小的，即 schedule_low_priority_values_first" in ordered


def test_the_stage_draws_no_token_budget_bar_for_a_kind_that_reads_none():
    """SGLang's own budget is PrefillAdder's (its panel); max_num_batched_tokens, which its declaration does not
    honour, is sent as None, so the generic bar is not drawn, and a step is never said to have spent it."""
    requests = [Request(prompt_token_ids=(1, 2, 3), max_tokens=3, arrival=0)]
    for kind, budget in (("sglang", None), ("vllm", 64)):
        engine = Engine(RunSpec(Config(**POOL), requests, "fake", scheduler=kind))
        engine.run()
        assert stage_view(engine.frames[1], engine.frames[0], lang="en")["cfg"]["max_num_batched_tokens"] == budget


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_preempted_request_whose_blocks_stay_cached_is_not_told_it_will_recompute(lang):
    """vllm_resume_cached's step 6 (issue 45 point 11): two of the blocks the vLLM twin frees keep their hashes, so
    the request resumes from them when admitted again; the frame's blocks say so and the sentence counts them."""
    engine = load_scenario(SCENARIOS_DIR / "vllm_resume_cached.toml").engine("fake")
    engine.run(6)
    frame = engine.frames[6]
    preempted, = frame.events_of("preempted")
    cached = [b for b in preempted.freed_blocks if frame.blocks[b].hash is not None]
    assert all(frame.blocks[b].id == b for b in preempted.freed_blocks) and len(cached) == 2
    said = "\n".join(narrate(frame, engine.frames[5], lang=lang))
    assert ("will recompute" not in said and "2 of its freed blocks stay in the prefix cache: admitted again, it "
            "resumes from them" in said if lang == "en" else "释放的块中有 2 个仍在前缀缓存里" in said), said


def test_an_over_long_prompts_stub_keeps_no_token_when_its_step_lands_overlapped():
    """Overlapped, the engine hands a placeholder for the stub's one-token prefill; SGLang aborts the request at
    that result and streams nothing, so nothing lands in it (here every prompt is over the limit: 3 slots leave
    max_req_input_len below 1)."""
    config = Config(**{**POOL, "max_num_seqs": 1, "max_model_len": 4, "num_kvcache_blocks": 3})
    engine = Engine(RunSpec(config, [Request(prompt_token_ids=(7,), max_tokens=2, arrival=0)], "fake",
                            scheduler="sglang", overlap=True))
    engine.run()
    last = engine.frames[len(engine.frames) - 1]
    assert last.requests[0].status == "aborted" and last.requests[0].num_tokens == 1
