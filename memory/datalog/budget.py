"""Evaluation budgets: wall-clock time and derived tuples, checked inside the loop."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from ..errors import BudgetExceeded

DEFAULT_TIMEOUT_S = 30.0
DEFAULT_MAX_TUPLES = 5_000_000
DEFAULT_MAX_ROWS = 20_000_000


@dataclass
class Budget:
    """Defaults: 30 s, 5,000,000 derived tuples, 20,000,000 intermediate rows per join."""

    timeout_s: float = DEFAULT_TIMEOUT_S
    max_tuples: int = DEFAULT_MAX_TUPLES
    max_rows: int = DEFAULT_MAX_ROWS
    derived: int = field(default=0, init=False)
    deadline: float = field(default=0.0, init=False)

    @classmethod
    def from_env(cls, environ: dict | None = None) -> "Budget":
        """Defaults overridden by DATALOG_MEMORY_TIMEOUT_S, _MAX_TUPLES and _MAX_ROWS (for a server's operator)."""
        import os

        env = os.environ if environ is None else environ
        try:
            return cls(
                float(env.get("DATALOG_MEMORY_TIMEOUT_S", DEFAULT_TIMEOUT_S)),
                int(env.get("DATALOG_MEMORY_MAX_TUPLES", DEFAULT_MAX_TUPLES)),
                int(env.get("DATALOG_MEMORY_MAX_ROWS", DEFAULT_MAX_ROWS)),
            )
        except ValueError as exc:
            raise ValueError(f"invalid evaluation budget in the environment: {exc}") from None

    def start(self) -> "Budget":
        self.derived = 0
        self.deadline = time.monotonic() + self.timeout_s
        return self

    def tick(self, new_tuples: int) -> None:
        self.derived += new_tuples
        if self.derived > self.max_tuples:
            raise BudgetExceeded(
                f"evaluation derived more than {self.max_tuples} tuples",
                reached=self.derived, limit=self.max_tuples, limit_kind="tuples",
            )
        if time.monotonic() > self.deadline:
            raise BudgetExceeded(
                f"evaluation ran longer than {self.timeout_s:g} s (derived {self.derived} tuples)",
                reached=self.derived, limit=self.timeout_s, limit_kind="seconds",
            )
