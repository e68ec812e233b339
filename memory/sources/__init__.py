"""Source memories: exact text under stable ids, in namespaces, with host-bound authority (memory/access)."""

from .memories import SourceMemories
from .search import recall, search

__all__ = ["SourceMemories", "recall", "search"]
