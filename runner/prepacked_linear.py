"""Linear layers over weights prepacked once for MKL, for the few-row inputs of batched decoding on CPU.

A plain x @ W^T with a handful of rows (a decode batch of 4 or 16 tokens) spends much of its time repacking the
weight into MKL's internal layout, on every call: at 16 rows the product is little more than one pass over the
weight, and the repacking reads and writes it again. MKL's packed GEMM keeps that layout from one call to the next
(`torch.ops.mkl._mkl_linear`, as inductor's frozen CPU graphs use it). A packed weight serves the row count it was
packed for, so inputs of 2 to PACKED_ROWS rows are padded to PACKED_ROWS: rows of a matrix product never mix, so
the padding changes no result. One row (a single decode) is a matrix-vector product that MKL does not repack, and
from a few dozen rows on (a prefill) the product is compute-bound: both keep the plain product.

`use_prepacked_linears` turns the model's `nn.Linear`s into `PrepackedLinear`s, which compute exactly like
`nn.Linear` unless the calling thread is inside `prepacked_linears()`: the runner enters it around its own forward
pass only, so the shared model stays stock for everyone else (e.g. generate()). A flag per layer call costs far
less than a TorchFunctionMode, which would see every one of the ~2,600 torch calls of a decode step. A layer packs
its weight on its first prepacked call (the weights are final by then); the copies add about the weights' size to
the resident memory. Builds of torch without MKL (e.g. on ARM) always take the plain product.
"""

import threading
from contextlib import contextmanager

import torch
import torch.nn.functional as F
from torch import nn

PACKED_ROWS = 16  # the row count weights are packed for: a decode batch of up to 16 sequences

_thread = threading.local()


@contextmanager
def prepacked_linears():
    """On this thread, for the block's duration, CPU inputs of 2 to PACKED_ROWS rows take the prepacked weights."""
    _thread.active = True
    try:
        yield
    finally:
        _thread.active = False


def packing_on(device: torch.device) -> bool:
    """Whether products on `device`, on this thread, now take packed weights for 2 to PACKED_ROWS rows."""
    return getattr(_thread, "active", False) and device.type == "cpu" and torch.backends.mkl.is_available()


def _takes_packed(rows: torch.Tensor) -> bool:
    """Whether a product over these [rows, features] takes a packed weight on this thread now."""
    return 1 < len(rows) <= PACKED_ROWS and packing_on(rows.device)


class PrepackedLinear(nn.Linear):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        rows = x.reshape(-1, x.shape[-1])
        if not _takes_packed(rows):
            return F.linear(x, self.weight, self.bias)
        padded = rows if len(rows) == PACKED_ROWS else F.pad(rows, (0, 0, 0, PACKED_ROWS - len(rows)))
        out = torch.ops.mkl._mkl_linear(padded, self.packed_weight(), self.weight, self.bias, PACKED_ROWS)
        return out[:len(rows)].reshape(*x.shape[:-1], self.out_features)

    def packed_weight(self) -> torch.Tensor:
        """MKL's packed copy of the weight, made on first use (two threads packing at once make the same copy)."""
        packed = self.__dict__.get("_packed")
        if packed is None:
            packed = self.__dict__["_packed"] = torch.ops.mkl._mkl_reorder_linear_weight(self.weight, PACKED_ROWS)
        return packed


def use_prepacked_linears(model: nn.Module):
    """Make every plain `nn.Linear` of `model` a `PrepackedLinear` (same parameters, same results outside
    `prepacked_linears()`)."""
    for module in model.modules():
        if type(module) is nn.Linear:
            module.__class__ = PrepackedLinear


class StackedLinears:
    """One or several `PrepackedLinear`s over the same input (e.g. a layer's q, k and v projections) as one
    packed product over their weights stacked: one MKL call instead of several, without the layers' per-call
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
        count = rows.shape[0]
        if not (packing and 1 < count <= PACKED_ROWS):
            outputs = [linear(rows) for linear in self.linears]
            return outputs[0] if len(outputs) == 1 else torch.cat(outputs, dim=-1)
        packed, bias, weight_shape = self.pack()
        padded = rows if count == PACKED_ROWS else F.pad(rows, (0, 0, 0, PACKED_ROWS - count))
        out = torch.ops.mkl._mkl_linear(padded, packed, weight_shape, bias, PACKED_ROWS)
        return out if count == PACKED_ROWS else out[:count]

    def pack(self) -> tuple:
        """(packed weight, bias or None, a tensor of the weight's shape), made on first use (two threads packing
        at once make the same copy)."""
        if self._packed is None:
            self._packed = self._pack()
        return self._packed

    def _pack(self):
        """A single layer keeps its own packed copy. _mkl_linear reads the plain weight only for a row count
        other than PACKED_ROWS, which padding rules out, so for a stack a zero-stride stand-in keeps the stacked
        plain copy out of memory."""
        if len(self.linears) == 1:
            linear = self.linears[0]
            return linear.packed_weight(), linear.bias, linear.weight
        stacked = torch.cat([linear.weight for linear in self.linears])
        bias = None if self.linears[0].bias is None else torch.cat([linear.bias for linear in self.linears])
        shape_only = stacked.new_zeros(()).expand(stacked.shape)
        return torch.ops.mkl._mkl_reorder_linear_weight(stacked, PACKED_ROWS), bias, shape_only
