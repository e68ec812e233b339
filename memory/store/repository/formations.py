"""How an observation's structural formation is inferred (`formation_rules`): read in the order they apply."""

from __future__ import annotations

import json

from .records import FormationRule


class Formations:
    def __init__(self, conn) -> None:
        self._conn = conn

    def rules(self) -> list[FormationRule]:
        """Every rule, the first to match first (by priority, then id)."""
        return [FormationRule(f, json.loads(t), d) for f, t, d in self._conn.execute(
            "SELECT formation, member_types, description FROM formation_rules ORDER BY priority, id")]
