"""The prepacked linear layers the runner switches on for its own forward pass on CPU: the same numbers, in
row-major layout, and a stock nn.Linear outside `prepacked_linears()`; stacked layers give each layer's own floats."""

import threading

import pytest
import torch
from torch import nn

from runner.prepacked_linear import (
    PrepackedLinear,
    StackedLinears,
    packing_on,
    prepacked_linears,
    use_prepacked_linears,
)

needs_onednn = pytest.mark.skipif(not torch.backends.mkldnn.is_available(), reason="torch built without oneDNN")


def linear_pair(with_bias: bool, seed: int) -> tuple[nn.Linear, nn.Linear]:
    torch.manual_seed(seed)
    plain = nn.Linear(64, 96, bias=with_bias)
    converted = nn.Sequential(nn.Linear(64, 96, bias=with_bias))
    converted[0].load_state_dict(plain.state_dict())
    use_prepacked_linears(converted)
    return plain, converted[0]


@pytest.mark.parametrize("rows", [1, 3, 16, 24, 300])
@pytest.mark.parametrize("with_bias", [False, True])
def test_linear_matches_plain_and_stays_row_major(rows, with_bias):
    plain, layer = linear_pair(with_bias, seed=rows)
    assert isinstance(layer, PrepackedLinear) and layer.weight is not plain.weight
    x = torch.randn(1, rows, 64, generator=torch.Generator().manual_seed(rows))
    with prepacked_linears():
        out = layer(x)
    assert out.shape == (1, rows, 96)
    assert out.is_contiguous()  # a strided view would push SDPA onto its slow math backend
    torch.testing.assert_close(out, plain(x), rtol=1e-5, atol=1e-5)


@needs_onednn
def test_a_row_computes_the_same_floats_in_any_batch():
    """A row's numbers do not depend on how many rows come with it, nor on what they hold: a sequence decodes the
    same alone or batched (SmolLM2's gate/up shape, 1 to 40 rows and a prefill's 300)."""
    torch.manual_seed(5)
    layer = nn.Sequential(nn.Linear(576, 3072))
    use_prepacked_linears(layer)
    x = torch.randn(300, 576, generator=torch.Generator().manual_seed(5))
    with prepacked_linears():
        alone = layer(x[:1])
        for rows in [*range(2, 41), 300]:
            assert torch.equal(layer(x[:rows])[:1], alone), f"{rows} rows"
        assert torch.equal(layer(torch.cat([x[:1], -x[1:16]]))[:1], alone)
    assert "_packed" in layer[0].__dict__


def test_outside_the_block_and_on_other_threads_it_is_plain_linear():
    """The switch is per thread and per block: elsewhere the layer never packs its weight."""
    plain, layer = linear_pair(True, seed=3)
    x = torch.randn(8, 64)
    torch.testing.assert_close(layer(x), plain(x), rtol=0, atol=0)
    seen_by_other_thread = []
    with prepacked_linears():
        worker = threading.Thread(target=lambda: seen_by_other_thread.append(layer(x)))
        worker.start()
        worker.join()
        assert "_packed" not in layer.__dict__
        layer(x)
    assert ("_packed" in layer.__dict__) == torch.backends.mkldnn.is_available()  # only the call inside the block
    torch.testing.assert_close(seen_by_other_thread[0], plain(x), rtol=0, atol=0)


@needs_onednn
@pytest.mark.parametrize("with_bias", [False, True])
def test_stacked_linears_give_each_layers_floats(with_bias):
    """One packed product over stacked weights (e.g. q, k and v) writes, column for column, the very floats of
    the layers' own products, at every row count (SmolLM2's shapes: 576 inputs, outputs 576 + 192 + 192)."""
    torch.manual_seed(7)
    layers = nn.Sequential(*(nn.Linear(576, out, bias=with_bias) for out in (576, 192, 192)))
    use_prepacked_linears(layers)
    stacked = StackedLinears(list(layers))
    for rows in (*range(1, 25), 300):
        x = torch.randn(rows, 576, generator=torch.Generator().manual_seed(rows))
        with prepacked_linears():
            assert packing_on(x.device, x.dtype) and not packing_on(x.device, torch.bfloat16)
            assert torch.equal(stacked(x, True), torch.cat([layer(x) for layer in layers], dim=-1)), f"{rows} rows"
    assert stacked._packed is not None
    assert not packing_on(x.device, x.dtype)  # outside the block


@needs_onednn
def test_a_single_stacked_linear_shares_the_layers_packed_weight():
    _, layer = linear_pair(True, seed=9)
    x = torch.randn(5, 64, generator=torch.Generator().manual_seed(9))
    with prepacked_linears():
        assert torch.equal(StackedLinears([layer])(x, True), layer(x))
    assert "_packed" in layer.__dict__


def test_stacked_linears_refuse_a_mix_of_biases():
    with pytest.raises(ValueError, match="all have a bias or all have none"):
        StackedLinears([nn.Linear(4, 4), nn.Linear(4, 4, bias=False)])
