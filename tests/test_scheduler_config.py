import pytest

from scheduler import Config, ConfigError


def test_defaults_are_valid_and_named_like_the_reference():
    cfg = Config()
    assert cfg.value("preemption_policy") == "tail" and cfg.queue_policy == "fcfs"
    assert not cfg.chunked_prefill and not cfg.value("mixed_batches")


@pytest.mark.parametrize("field, value", [
    ("max_num_seqs", 0), ("num_kvcache_blocks", -1), ("kvcache_block_size", 0), ("max_model_len", 0),
    ("preemption_policy", "random"), ("queue_policy", "lifo"), ("max_num_seqs", 2.5), ("prefill_first", "yes"),
    ("vllm_version", "0.31"),
])
def test_bad_values_name_field_value_and_fix(field, value):
    with pytest.raises(ConfigError) as err:
        Config(**{field: value})
    assert err.value.field == field
    assert field in str(err.value) and repr(value) in str(err.value)
    assert err.value.fix


def test_budget_below_max_model_len_needs_chunked_prefill():
    with pytest.raises(ConfigError, match="chunked_prefill"):
        Config(max_num_batched_tokens=32, max_model_len=64)
    assert Config(max_num_batched_tokens=32, max_model_len=64, chunked_prefill=True).max_num_batched_tokens == 32


def test_budget_must_hold_a_full_decode_batch():
    with pytest.raises(ConfigError, match="max_num_seqs"):
        Config(max_num_seqs=16, max_num_batched_tokens=8, max_model_len=8)


def test_config_error_is_a_value_error():
    with pytest.raises(ValueError):
        Config(kvcache_block_size=-3)
