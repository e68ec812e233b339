"""datalog-memory: durable, explainable memory for LLM agents in one SQLite file."""

from .api import Memory
from .errors import DatalogMemoryError

__version__ = "0.1.0"
__all__ = ["DatalogMemoryError", "Memory", "__version__"]
