"""Linear layers over weights prepacked once for oneDNN, for the runner's own forward pass on CPU.

A plain x @ W^T (MKL's GEMM) over the few rows of a batched decode spends much of its time repacking the weight
into the kernel's internal layout, on every call. oneDNN's inner product over a weight reordered once into its
blocked layout (`torch.ops.mkldnn._reorder_linear_weight`, as inductor's frozen CPU graphs use it) skips that:
on a 2-core AVX2 machine, SmolLM2-135M's products of one decode step took 0.6x the time of plain products at 16
rows and 0.7x at one row (MKL's own packed GEMM, which this module used before, took 1.06x at 16 rows there).
Its floats for a row do not depend on how many rows come with it (tests/test_runner_prepacked_linear.py checks
this), so a sequence computes the same numbers alone or in any batch, with no padding. From a few hundred rows on
(a long prefill) both kernels are compute-bound and about as fast; one path serves every row count.

`use_prepacked_linears` turns the model's `nn.Linear`s into `PrepackedLinear`s, which compute exactly like
`nn.Linear` unless the calling thread is inside `prepacked_linears()`: the runner enters it around its own forward
pass only, so the shared model stays stock for everyone else (e.g. generate()). A flag per layer call costs far
less than a TorchFunctionMode, which would see every one of the ~2,600 torch calls of a decode step. A layer packs
its weight on its first prepacked call (the weights are final by then); the copies add about the weights' size to
the resident memory. Other dtypes than float32 and builds of torch without oneDNN always take the plain product.
"""

import threading
from contextlib import contextmanager

import torch
import torch.nn.functional as F
from torch import nn

PACKED_FOR_ROWS = 16  # oneDNN's hint for the layout it packs a weight into: a decode batch (any count works)

_thread = threading.local()


@contextmanager
def prepacked_linears():
    """On this thread, for the block's duration, products on the CPU take the prepacked weights."""
    _thread.active = True
    try:
        yield
    finally:
        _thread.active = False


def packing_on(device: torch.device, dtype: torch.dtype) -> bool:
    """Whether products on `device` over `dtype` weights, on this thread, now take packed weights (float32 only:
    oneDNN's bf16 needs AVX-512 or AVX-NE-CONVERT)."""
    return (getattr(_thread, "active", False) and device.type == "cpu" and dtype == torch.float32
            and torch.backends.mkldnn.is_available())


def pack(weight: torch.Tensor, bias: torch.Tensor | None) -> tuple[torch.Tensor, torch.Tensor | None]:
    """(oneDNN's packed copy of a float [out_features, in_features] weight, the bias) for `packed_product`. Both
    are detached: a bias that requires grad takes another path for a single row, with other floats."""
    packed = torch.ops.mkldnn._reorder_linear_weight(weight.detach(), PACKED_FOR_ROWS)
    return packed, None if bias is None else bias.detach()


def packed_product(rows: torch.Tensor, packed: torch.Tensor, bias: torch.Tensor | None) -> torch.Tensor:
    """rows [count, in_features] @ W^T + bias, (W, bias) given as `pack(W, bias)`."""
    return torch.ops.mkldnn._linear_pointwise(rows, packed, bias, "none", [], "")


class PrepackedLinear(nn.Linear):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not packing_on(x.device, self.weight.dtype):
            return F.linear(x, self.weight, self.bias)
        out = packed_product(x.reshape(-1, x.shape[-1]), *self.packed())
        return out.view(*x.shape[:-1], self.out_features)

    def packed(self) -> tuple[torch.Tensor, torch.Tensor | None]:
        """`pack` of the weight and bias, made on first use (two threads packing at once make the same copy)."""
        packed = self.__dict__.get("_packed")
        if packed is None:
            packed = self.__dict__["_packed"] = pack(self.weight, self.bias)
        return packed


def use_prepacked_linears(model: nn.Module):
    """Make every plain `nn.Linear` of `model` a `PrepackedLinear` (same parameters, same results outside
    `prepacked_linears()`)."""
    for module in model.modules():
        if type(module) is nn.Linear:
            module.__class__ = PrepackedLinear


class StackedLinears:
    """One or several `PrepackedLinear`s over the same input (e.g. a layer's q, k and v projections) as one
    packed product over their weights stacked: one call instead of several, without the layers' per-call
    checks (the caller asks `packing_on` once per forward pass). Each output column is the same dot product,
    summed in the same order, as in its own layer's product, so the floats are identical (checked by
    tests/test_runner_prepacked_linear.py). Where the packed weights do not apply, the layers' own products."""

    def __init__(self, linears: list[PrepackedLinear]):
        if len({linear.bias is None for linear in linears}) > 1:
            raise ValueError("stacked linear layers must all have a bias or all have none")
        self.linears = linears
        self._packed = None

    def __call__(self, rows: torch.Tensor, packing: bool) -> torch.Tensor:
        """[rows, in_features] -> [rows, the layers' out_features end to end]; `packing` is `packing_on`."""
        if not packing:
            outputs = [linear(rows) for linear in self.linears]
            return outputs[0] if len(outputs) == 1 else torch.cat(outputs, dim=-1)
        return packed_product(rows, *self.pack())

    def pack(self) -> tuple[torch.Tensor, torch.Tensor | None]:
        """(packed weight, bias or None), made on first use (two threads packing at once make the same copy). A
        single layer shares its own packed copy; a stack packs its weights end to end, keeping no plain copy."""
        if self._packed is None:
            if len(self.linears) == 1:
                self._packed = self.linears[0].packed()
            else:
                bias = None if self.linears[0].bias is None else torch.cat([linear.bias for linear in self.linears])
                self._packed = pack(torch.cat([linear.weight for linear in self.linears]), bias)
        return self._packed
