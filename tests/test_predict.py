"""Predict, then reveal: questions and answers against the frames, and the mode in the app."""

import pytest

from engine.inputs.scenario import SCENARIOS_DIR, load_scenario
from engine.run.recipe import Request
from tests.helpers.app import button, lab, no_errors
from viz.predict import question_for, question_steps, who


def _frames(name: str, variant: bool = False):
    engine = load_scenario(SCENARIOS_DIR / f"{name}.toml").engine(variant=variant)
    engine.run()
    return engine.frames


def _ids(frame, kind):
    return sorted({e.seq_id for e in frame.events_of(kind)})


def test_who_names_requests():
    assert [who(ids, lang="en") for ids in ((), (3,), (3, 2), (1, 3, 2))] == ["nobody", "request 3", "requests 2 and 3",
                                                                             "requests 1, 2 and 3"]


def test_a_preemption_step_asks_who_is_preempted_among_the_running_requests():
    frames = _frames("article_2_preemption")
    question = question_for(frames[2], frames[3], lang="en")
    assert "preempted" in question.text and question.answer_text == "request 2"
    assert set(question.choices) <= {"nobody", "request 0", "request 1", "request 2"}
    assert len(question.choices) == 4


def test_an_arrival_step_asks_who_is_admitted_with_the_newcomers_among_the_choices():
    frames = _frames("article_1_prefill_first")
    question = question_for(frames[19], frames[20], lang="en")
    assert "admitted" in question.text and question.answer_text == "requests 5, 6 and 7"
    assert "request 5" in question.choices or "requests 5 and 6" in question.choices


def test_a_step_without_decisions_asks_for_the_free_blocks():
    frames = _frames("article_1_prefill_first")
    question = question_for(frames[3], frames[4], lang="en")  # a plain decode step
    assert "free" in question.text and question.answer_text == str(frames[4].metrics.num_free_blocks)


@pytest.mark.parametrize("name", ["article_2_preemption", "02_preemption", "prefix_caching_vllm_doc",
                                  "03_decode_first", "07_smart_preemption"])
def test_every_question_has_one_right_answer_that_the_frame_shows(name):
    frames = _frames(name)
    for step in range(1, len(frames)):
        before, after = frames[step - 1], frames[step]
        question = question_for(before, after, lang="en")
        assert question.step == step and 2 <= len(question.choices) <= 4
        assert len(set(question.choices)) == len(question.choices)
        text, answer = question.text, question.answer_text
        if "preempted" in text:
            assert answer == who(_ids(after, "preempted"), lang="en")
        elif "finishes" in text:
            assert answer == who(_ids(after, "finished"), lang="en")
        elif "admitted" in text:
            assert answer == who(_ids(after, "admitted"), lang="en")
        else:
            assert answer == str(after.metrics.num_free_blocks)


def test_question_steps_are_the_key_frames_or_the_decisions():
    frames = _frames("article_2_preemption")
    assert question_steps([1, 3, 4], frames, len(frames) - 1) == [1, 3, 4]
    steps = question_steps([], frames, len(frames) - 1)
    assert 3 in steps and 4 in steps and all(question_for(frames[s - 1], frames[s], lang="en") for s in steps)
    assert 2 not in steps  # a plain decode step: no decision to predict


# -- in the app -----------------------------------------------------------------------------------------


def test_predict_mode_asks_before_the_key_frame_then_reveals_and_scores(app):
    app.run()
    app.toggle(key="predict_mode").set_value(True).run()
    assert no_errors(app) and lab(app).cursor == 0
    first_key = lab(app).key_steps[0]
    assert any(f"Step {first_key}:" in m.value for m in app.markdown)
    radio = app.radio(key=f"predict_choice_{first_key}")
    assert len(radio.options) >= 2
    button(app, "Reveal").click().run()
    assert any("Pick an answer first" in w.value for w in app.warning)
    frames = lab(app).frames
    right = question_for(frames[first_key - 1], frames[first_key], lang="en").answer_text
    wrong = next(o for o in radio.options if o != right)
    app.radio(key=f"predict_choice_{first_key}").set_value(wrong).run()
    button(app, "Reveal").click().run()
    assert no_errors(app)
    assert any(f"the answer is **{right}**" in m.value for m in app.markdown)
    assert any("0 of 1 right" in c.value for c in app.caption)
    assert lab(app).cursor == first_key  # revealed beside the frame it is about, not beside the one before
    second_key = lab(app).key_steps[1]
    assert any(f"Step {second_key}:" in m.value for m in app.markdown)  # and, below it, the next question


def test_a_question_says_what_the_screen_cannot_show():
    """Frame 0 shows the requests step 1 may admit, so the question needs no more; a request added by hand arrives
    at the start of the next step, which the frame shown cannot show, and the question says so; asked from
    further back, it says how many steps ahead the step is."""
    frames = _frames("02_preemption")
    assert list(frames[0].waiting) == [0, 1, 2, 3, 4]
    first = question_for(frames[0], frames[1], "en", shown=0)
    assert "admitted" in first.text and "arrive" not in first.text
    engine = load_scenario(SCENARIOS_DIR / "02_preemption.toml", "fake").engine()
    engine.run(steps=3)
    engine.add_request(Request(prompt_token_ids=(1, 2, 3), max_tokens=2))
    engine.step()
    assert question_for(engine.frames[3], engine.frames[4], "en").text.endswith(
        "(Request 5 arrives at the start of that step.)")
    ahead = question_for(frames[4], frames[5], "en", shown=2)
    assert ahead.text.endswith("(That is 3 steps after frame 2, the one shown.)")
    assert "steps after" not in question_for(frames[4], frames[5], "en", shown=4).text
    assert "后 3 步" in question_for(frames[4], frames[5], "zh", shown=2).text


def test_a_custom_setup_without_key_frames_asks_about_the_next_step(app):
    for key, value in {"scenario": "custom", "requests": "4", "prompts": "random", "max_tokens": "3",
                       "max_num_seqs": "2", "frame": "2"}.items():
        app.query_params[key] = value
    app.run()
    app.toggle(key="predict_mode").set_value(True).run()
    assert no_errors(app) and lab(app).cursor == 2 and not lab(app).key_steps
    assert any("Step 3:" in m.value for m in app.markdown)
    assert lab(app).last >= 3  # the step asked about was run ahead, the cursor stayed
