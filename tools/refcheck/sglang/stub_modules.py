"""Empty stand-ins for packages SGLang imports at module level and its scheduler never calls: `torchvision`
(the registry's wheel is a CUDA build whose C ops fail against the CPU torch) and `vllm` (SGLang's rotary
embedding imports `vllm._custom_ops` on a platform that is neither CUDA nor SGLang's CPU engine).

`install("torchvision", "vllm")` puts a finder first on `sys.meta_path` that serves those names and every
submodule as a module whose attributes are all one permissive placeholder class."""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
import types


class _AnythingMeta(type):
    """The placeholder answers any attribute, call, subscript or `|` with itself (so it also works as a
    decorator, a base class, a type annotation)."""

    def __getattr__(cls, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return Anything

    def __call__(cls, *args, **kwargs):
        return Anything

    def __getitem__(cls, item):
        return Anything

    def __or__(cls, other):
        return Anything

    __ror__ = __or__


class Anything(metaclass=_AnythingMeta):
    pass


class _StubModule(types.ModuleType):
    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return Anything


class _StubFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def __init__(self, roots: set[str]):
        self.roots = roots

    def find_spec(self, fullname, path=None, target=None):
        if fullname.partition(".")[0] in self.roots:
            return importlib.machinery.ModuleSpec(fullname, self, is_package=True)
        return None

    def create_module(self, spec):
        module = _StubModule(spec.name)
        module.__path__, module.__version__ = [], "0.0.0"
        return module

    def exec_module(self, module):
        pass


def install(*roots: str):
    sys.meta_path.insert(0, _StubFinder(set(roots)))
