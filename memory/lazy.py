"""Packages whose exported names load on first use (PEP 562): importing the package, or one of its
modules, does not import everything it exports."""

from __future__ import annotations

import importlib
import sys
from types import ModuleType
from typing import Callable


def lazy_exports(package: str, modules: dict[str, str], names: list[str]) -> tuple[Callable, Callable]:
    """The package's `__getattr__` and `__dir__`: `modules` maps each lazily exported name to the module
    (relative to `package`) that defines it; `names` is the package's `__all__`."""
    def __getattr__(name: str) -> object:
        if name not in modules:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(modules[name], package), name)
        setattr(sys.modules[package], name, value)  # later lookups find it without coming back here
        return value

    def __dir__() -> list[str]:
        return sorted({*vars(sys.modules[package]), *names})

    return __getattr__, __dir__


class LazyModule:
    """A module imported at its first attribute read: `np = LazyModule("numpy")` at the top of a module that
    needs numpy only in some calls keeps importing that module from importing numpy (about 0.1 s)."""

    __slots__ = ("_name", "_module")

    def __init__(self, name: str) -> None:
        self._name = name
        self._module: ModuleType | None = None

    def __getattr__(self, attribute: str):
        module = self._module
        if module is None:
            module = self._module = importlib.import_module(self._name)
        return getattr(module, attribute)
