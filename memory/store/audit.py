"""`utc_now`, importable here as before: the clock itself is memory/clock.py, and the audit log is the
repository's (repository/audit.py)."""

from ..clock import utc_now

__all__ = ["utc_now"]
