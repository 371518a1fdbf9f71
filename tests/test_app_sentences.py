"""What the learner reads on the page agrees with what the page shows: key-frame notes on a branched run,
mid-run changes, help and glossary."""


from tests.helpers.app import back, control, lab, no_errors, player_message, show, shown_view, step


def at_frame(app, scenario: str, frame: int):
    app.query_params["scenario"] = scenario
    app.query_params["frame"] = str(frame)
    app.run()
    assert no_errors(app) and lab(app).cursor == frame
    return app


def notes_sent(app) -> dict[int, tuple[str, bool]]:
    """The key-frame notes the stage player was sent: {step: (note, holds on this run)}."""
    return {step: (note, holds) for step, note, holds in player_message(app)["key_frames"]}


def test_a_key_frame_note_a_branch_no_longer_shows_is_greyed(app):
    at_frame(app, "02_preemption", 5)
    assert "now the tail of running, is preempted for it" in notes_sent(app)[5][0] and notes_sent(app)[5][1]
    back(app)
    control(app, "num_kvcache_blocks").set_value(6).run()
    step(app)
    assert no_errors(app) and lab(app).cursor == 5
    note, holds = notes_sent(app)[5]
    assert "now the tail of running, is preempted for it" in note and not holds  # the player greys it
    assert notes_sent(app)[2][1]  # before the branch: still true


def test_a_pool_change_mid_run_is_told_as_what_it_does(app):
    """Raising KV blocks from 3 to 6 at frame 5: said at frame 5, drawn and told from step 6, never a preemption."""
    at_frame(app, "02_preemption", 5)
    control(app, "num_kvcache_blocks").set_value(6).run()
    assert no_errors(app)
    assert any(i.value.startswith("From step 6: KV blocks in the pool 6 (was 3). The KV pool is rebuilt then")
               for i in app.info)
    assert any("the run now has KV blocks in the pool 6 (the scenario's: 3)" in c.value for c in app.sidebar.caption)
    step(app)
    assert no_errors(app) and lab(app).cursor == 6 and len(lab(app).frame.blocks) == 6
    assert "now with KV blocks in the pool 6 (the scenario's: 3)" in player_message(app)["title"]
    view = shown_view(app)
    assert len(view["blocks"]) == 6
    told = "\n".join(view["narration"])
    assert "KV pool rebuilt at step 6 with 6 blocks of 10 tokens" in told
    admitted_0 = next(line for line in view["narration"] if "Request 0 was admitted" in line)
    assert "had been preempted" not in admitted_0 and "the KV pool was rebuilt" in admitted_0


def test_a_branch_says_which_frames_it_discarded(app):
    at_frame(app, "02_preemption", 8)
    show(app, 2)
    control(app, "max_num_seqs").set_value(2).run()
    assert no_errors(app) and lab(app).last == 2
    assert any("Branched at frame 2: frames 3-8 of the old run discarded" in w.value for w in app.warning)


def test_switching_to_the_variant_keeps_the_frame(app):
    at_frame(app, "04_chunked_prefill", 5)
    app.toggle(key="variant_choice").set_value(True).run()
    assert no_errors(app) and lab(app).inputs.variant and lab(app).cursor == 5
    label = next(t.label for t in app.toggle if t.key == "variant_choice")
    assert "=" not in label and "chunked prefill on" in label


def test_every_setting_explains_itself_and_the_stage_has_a_legend(app):
    from scheduler.factory import settings_of
    at_frame(app, "01_prefill_first", 2)
    for spec in settings_of(lab(app).scheduler):
        if spec.declared.sidebar:
            assert control(app, spec.key).help, f"{spec.key} has no help"
    assert "Nothing" not in app.segmented_control(key="lower_view").options
    app.segmented_control(key="lower_view").set_value("legend").run()
    legend = " ".join(m.value for m in app.markdown)
    assert "**ID:3 (L:12)**" in legend and "reference count" in legend and "max_model_len" in legend
    assert any("simulated clock" in c.value and "real time of this step" in c.value for c in app.caption)


def test_the_metrics_define_their_terms_and_show_no_none(app):
    at_frame(app, "02_preemption", 3)
    app.segmented_control(key="lower_view").set_value("metrics").run()
    assert no_errors(app)
    assert any("TTFT: time to first token" in c.value and "TPOT" in c.value for c in app.caption)
    for table in app.dataframe:
        assert not table.value.isna().any().any() and "None" not in table.value.astype(str).values
