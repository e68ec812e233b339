"""datalog-memory: durable, explainable memory for LLM agents in one SQLite file."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .lazy import lazy_exports

if TYPE_CHECKING:
    from .api import Memory
    from .errors import DatalogMemoryError

__version__ = "0.1.0"
__all__ = ["DatalogMemoryError", "Memory", "__version__"]

# The public names load on first use (PEP 562), so importing one subpackage (the engine, the terms) does not
# load the whole library with apsw, the server and the command line behind it.
_LAZY = {"Memory": ".api", "DatalogMemoryError": ".errors"}


__getattr__, __dir__ = lazy_exports(__name__, _LAZY, __all__)


def _checkout_cli() -> None:
    """The wheel installs the repository's top-level cli/ folder as `memory.cli`; in a source checkout
    (or an editable install) `memory.cli` names that same folder, so both import it the same way."""
    import importlib.util
    import sys
    from pathlib import Path

    here = Path(__file__).resolve().parent
    folder = here.parent / "cli"
    if "memory.cli" in sys.modules or (here / "cli").is_dir() or not (folder / "main.py").is_file():
        return
    spec = importlib.util.spec_from_file_location(__name__ + ".cli", folder / "__init__.py",
                                                  submodule_search_locations=[str(folder)])
    if spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)


_checkout_cli()
