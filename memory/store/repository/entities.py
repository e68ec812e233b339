"""The entities observations link (`entities`): their ids, types and the names recall looks them up by."""

from __future__ import annotations

from .records import NewEntity


class Entities:
    def __init__(self, conn) -> None:
        self._conn = conn

    def ids_of(self, names: list[str]) -> dict[str, int]:
        """name -> id of those of `names` that are stored."""
        return dict(self._conn.execute(f"SELECT name, id FROM entities WHERE {self._conn.sql.in_list('name')}",
                                       (self._conn.sql.listed(names),)).fetchall())

    def add(self, entities: list[NewEntity]) -> None:
        """New entities, given ids in the order listed (the caller checked that none is stored)."""
        self._conn.insert_rows("entities", ("name", "type", "local_name"), [tuple(e) for e in entities])

    def named(self, folded: list[str]) -> list[tuple[str, int]]:
        """(name, id) of the entities whose lower-cased name is one of `folded`, oldest first."""
        rows = self._conn.execute(f"SELECT name, id FROM entities WHERE {self._conn.sql.in_list('lower(name)')} "
                                  "ORDER BY id", (self._conn.sql.listed(folded),)).fetchall()
        return [(n, i) for n, i in rows]

    def named_locally(self, folded: list[str]) -> list[tuple[str, int]]:
        """(name, id) of the entities whose part after the colon (`local_name`) is one of `folded`, oldest first."""
        rows = self._conn.execute(f"SELECT name, id FROM entities WHERE {self._conn.sql.in_list('local_name')} "
                                  "ORDER BY id", (self._conn.sql.listed(folded),)).fetchall()
        return [(n, i) for n, i in rows]

    def types(self) -> set[str]:
        """Every type an entity has."""
        return {t for (t,) in self._conn.execute("SELECT DISTINCT type FROM entities")}

    def all(self) -> list[tuple[int, str, str]]:
        """(id, name, type) of every entity."""
        return [(i, n, t) for i, n, t in self._conn.execute("SELECT id, name, type FROM entities")]

    def names_and_types(self) -> list[tuple[str, str]]:
        """(name, type) of every entity: the relation entity_type/2."""
        return [(n, t) for n, t in self._conn.execute("SELECT name, type FROM entities").fetchall()]

    def exists(self, name: str, type: str) -> bool:
        return self._conn.execute("SELECT 1 FROM entities WHERE name = ? AND type = ?",
                                  (name, type)).fetchone() is not None
