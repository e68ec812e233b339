"""Source memories: exact text under stable ids, in namespaces, with host-bound authority."""

from .context import CallerContext
from .memories import SourceMemories
from .search import recall, search
from .visibility import CallerVisibility, visibility

__all__ = ["CallerContext", "SourceMemories", "recall", "search", "CallerVisibility", "visibility"]
