"""Who is calling and what they may do: the caller and its capabilities, access tokens, namespaces and which
stored supports a caller may see. The domain services (knowledge, sources, evidence) ask here; nothing here
asks them."""

from .context import CallerContext
from .visibility import CallerVisibility, visibility

__all__ = ["CallerContext", "CallerVisibility", "visibility"]
