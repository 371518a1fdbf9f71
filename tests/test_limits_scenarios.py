"""Issue 13: scenario files and links that once crashed or cost without bound are refused with a clear message."""

import pytest

from engine.cli import main
from engine.inputs.scenario import ScenarioError, load_scenario
from session.links import LinkError, open_link, parse_link
from tests.helpers.engines import GOOD


def _load(tmp_path, text: str):
    path = tmp_path / "bad.toml"
    path.write_text(text)
    return load_scenario(path)


def test_a_preset_that_is_not_utf8_is_refused_by_name_in_the_loader_and_the_cli(tmp_path, capsys):
    path = tmp_path / "latin.toml"
    path.write_bytes(GOOD.replace('"t"', '"caf\xe9"').encode("latin-1"))
    with pytest.raises(ScenarioError, match="not UTF-8"):
        load_scenario(path)
    assert main(["run", str(path)]) == 2
    assert "not UTF-8" in capsys.readouterr().err


@pytest.mark.parametrize("edit, key", [
    (GOOD.replace("max_num_seqs = 2", "max_num_seqs = 300"), "config.max_num_seqs"),  # #10: beyond the sidebar
    (GOOD.replace("max_model_len = 16", "max_model_len = 16\nnum_kvcache_blocks = 5000"),
     "config.num_kvcache_blocks"),
    (GOOD.replace("max_model_len = 16", "max_model_len = 16\nnum_kvcache_blocks = 3000000"),
     "config.num_kvcache_blocks"),  # #11: 8 s and 1.5 GB before
    (GOOD.replace("[1, 2, 3]", '["a", "b"]'), "prompt_token_ids"),  # #11: token ids of the wrong type
    (GOOD.replace("[1, 2, 3]", "[1.5, 2]"), "prompt_token_ids"),
    (GOOD.replace("[1, 2, 3]", "[-4, 2]"), "prompt_token_ids"),
    (GOOD + "temperature = nan\n", "temperature"),  # #11: NaN temperature
    (GOOD + "[cost]\nstep_s = nan\n", "cost.step_s"),
    (GOOD + '[[workload.generate]]\nkind = "random_tokens"\ncount = 10000000\n', "count"),  # unbounded counts
    ('max_steps = 1000000000\n' + GOOD, "max_steps"),  # #11: idled forever in the CLI
    (GOOD.replace("[1, 2, 3]", "[1, 2, 3]\nstop_token_ids = [-1]"), "stop_token_ids"),
    (GOOD.replace("[1, 2, 3]", "[1, 2, 3]\nmin_tokens = 5000"), "min_tokens"),
    (GOOD.replace("max_model_len = 16", "max_model_len = 16\nwatermark = 1.5"), "watermark"),
    ('max_steps = 50\n' + GOOD.replace("[1, 2, 3]", "[1, 2, 3]\narrival = 90000"), "arrives at step 90000"),
])
def test_out_of_range_or_mistyped_values_are_refused(tmp_path, edit, key):
    with pytest.raises(ScenarioError, match=key.replace(".", r"\.").replace("[", r"\[")):
        _load(tmp_path, edit)


def test_a_request_may_carry_vllms_stop_token_ids_and_min_tokens_and_the_config_its_knobs(tmp_path):
    text = GOOD.replace("[1, 2, 3]", "[1, 2, 3]\nstop_token_ids = [4]\nmin_tokens = 1").replace(
        "max_model_len = 16", "max_model_len = 16\nwatermark = 0.25\nscheduler_reserve_full_isl = false")
    scenario = _load(tmp_path, text)
    assert (scenario.spec.workload[0].stop_token_ids, scenario.spec.workload[0].min_tokens) == ((4,), 1)
    config = scenario.spec.config
    assert (config.value("watermark"), config.value("scheduler_reserve_full_isl")) == (0.25, False)


def test_the_cli_stops_on_a_far_arrival_scenario_with_a_message(tmp_path, capsys):
    path = tmp_path / "far.toml"
    path.write_text("max_steps = 1000000000\n" + GOOD.replace("[1, 2, 3]", "[1, 2, 3]\narrival = 999999999"))
    assert main(["run", str(path)]) == 2
    assert "max_steps" in capsys.readouterr().err


def test_an_adaptive_link_the_engine_would_clamp_into_an_impossible_config_is_refused():
    from engine.inputs.scenario import preset_paths
    scenarios = {p.stem: load_scenario(p, "fake") for p in preset_paths()}
    params = {"scenario": "02_preemption", "adaptive": "1-2-100-256"}
    with pytest.raises(LinkError, match="cannot be used together"):
        parse_link(params, scenarios)
    fine = parse_link({"scenario": "02_preemption", "adaptive": "1-2-1-3"}, scenarios)
    assert open_link(fine, scenarios, "fake").run(3) == 3


def test_the_cli_lists_the_other_presets_when_one_is_not_utf8(tmp_path, monkeypatch, capsys):
    good, bad = tmp_path / "01_good.toml", tmp_path / "02_latin.toml"
    good.write_text(GOOD)
    bad.write_bytes(GOOD.replace('"t"', '"caf\xe9"').encode("latin-1"))
    monkeypatch.setattr("engine.cli.preset_paths", lambda: [good, bad])
    assert main(["list"]) == 2
    out, err = capsys.readouterr()
    assert "01_good.toml" in out and "02_latin.toml" in err and "not UTF-8" in err and "Traceback" not in err
