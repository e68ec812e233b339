"""Facts: believed base facts of a segment, each one row per canonical text, with the supports that hold it.

Every read takes the caller's `Visibility` (None: sees everything): a fact is visible when one of its
supports is, and what a write reports is computed over visible supports only."""

from __future__ import annotations

from itertools import islice
from typing import Callable, Iterable, Iterator

from ...terms import Compound, Term, continued_range, format_term, indicator
from ...terms.codec import decode_args, decode_many, encode_args
from ...terms.plain import plain_forms
from ...clock import utc_now
from ._visibility import seen, visible
from .records import FactListing, FactRow, NewFact, PredicateState, Visibility
from .supports import release, visible_supports


IMPORT_BATCH = 10_000  # facts per set-based step of a stream (assert_all)
# The page cache while a stream of more than one batch is stored. New facts land all over the index on their text
# (random order, as in a table of integer pairs): with SQLite's default 2 MiB the pages of that index were read and
# spilled again and again (1M random pairs: 6.9 s of system time, 28 s in all); 64 MiB holds the index of a million
# facts (1M random pairs: ~2.5 s system time). Memory stays bounded: the cache is a fixed size, given back after.
BULK_CACHE_KIB = 64 * 1024


def new_fact(term: Term) -> NewFact:
    """A checked ground fact in the form `Facts` stores it."""
    if type(term) is Compound:  # most bulk facts: their forms without the printer and the codec
        forms = plain_forms(term.functor, term.args)
        if forms is not None:
            return NewFact(term.functor, len(term.args), *forms)
    functor, arity = indicator(term)
    return NewFact(functor, arity, format_term(term), encode_args(term.args if type(term) is Compound else ()))


class Facts:
    def __init__(self, conn) -> None:
        self._conn = conn

    # --- reads --------------------------------------------------------------------------------------
    def tuples(self, segment_id: int, functor: str, arity: int, visibility: Visibility | None = None,
               after: int = 0) -> list[tuple]:
        """The arguments of one predicate's visible facts (those with an id above `after`), decoded: the load path
        of every evaluation, so each row becomes its engine tuple and nothing else (no record per fact). A new list
        the caller owns: the rows are fetched by the store in one call, which measured faster than stepping its
        cursor from a generator."""
        condition, params = visible(visibility)
        rows = self._conn.execute(
            f"SELECT args FROM facts AS f WHERE segment_id = ? AND functor = ? AND arity = ? AND id > ? AND {condition}",
            (segment_id, functor, arity, after, *params)).fetchall()
        return decode_many([row[0] for row in rows])

    def tuple_runs(self, segment_id: int, functor: str, arity: int, visibility: Visibility | None = None,
                   after: int = 0, rows: int = 65536) -> Iterator[list[tuple]]:
        """`tuples`, decoded and handed over `rows` rows at a time (each a new list), for a caller that keeps them
        in another form (a compact relation): it never holds the whole predicate as Python tuples at once. To be
        read to the end inside the transaction."""
        condition, params = visible(visibility)
        cursor = self._conn.execute(
            f"SELECT args FROM facts AS f WHERE segment_id = ? AND functor = ? AND arity = ? AND id > ? AND {condition}",
            (segment_id, functor, arity, after, *params))
        while run := list(islice(cursor, rows)):
            yield decode_many([row[0] for row in run])

    def tuples_by_text(self, segment_id: int, functor: str, arity: int, text: str, prefix: bool,
                       visibility: Visibility | None = None) -> list[tuple]:
        """The arguments of one predicate's visible facts whose canonical text is `text` or, with `prefix`,
        starts with it and goes on with `, ` (`edge(5` finds `edge(5, X)`): read through the (segment, text)
        index, so a bound lookup costs what it finds, not what the predicate holds."""
        condition, params = visible(visibility)
        texts: tuple[str, ...]
        if prefix:
            where, texts = "text >= ? AND text < ?", continued_range(text)
        else:
            where, texts = "text = ?", (text,)
        rows = self._conn.execute(
            f"SELECT args FROM facts AS f WHERE segment_id = ? AND {where} AND functor = ? AND arity = ? AND {condition}",
            (segment_id, *texts, functor, arity, *params)).fetchall()
        return decode_many([row[0] for row in rows])

    def state(self, segment_id: int, functor: str, arity: int) -> PredicateState:
        """Where one predicate's facts stand in the change feed (see `PredicateState`)."""
        return PredicateState(*self._conn.execute(
            "SELECT coalesce((SELECT reshaped FROM predicate_versions WHERE segment_id = ?1 AND functor = ?2 "
            "AND arity = ?3), 0), (SELECT vacated FROM segments WHERE id = ?1), coalesce((SELECT max(id) FROM facts "
            "WHERE segment_id = ?1 AND functor = ?2 AND arity = ?3), 0)", (segment_id, functor, arity)).fetchone())

    def change_number(self) -> int:
        """The number of the last change the feed announced, in any predicate (see `changes_since`)."""
        return self._conn.execute("SELECT value FROM change_counter WHERE id = 1").fetchone()[0]

    def changes_since(self, segment_id: int, functor: str, arity: int, since: int,
                      visibility: Visibility | None = None) -> tuple[list[tuple], list[tuple]] | None:
        """The facts of one predicate that the changes numbered above `since` (a `change_number`) touched
        (migration 0010): the arguments they had in it before (to drop from a copy read at `since`) and the
        arguments of those the caller may see now (to add back); None when the feed no longer reaches back to
        `since`."""
        value, kept = self._conn.execute("SELECT value, kept_changes FROM change_counter WHERE id = 1").fetchone()
        if since < value - kept:
            return None
        rows = self._conn.execute(
            "SELECT fact_id, args FROM fact_changes WHERE segment_id = ? AND functor = ? AND arity = ? AND number > ?",
            (segment_id, functor, arity, since)).fetchall()
        ids = sorted({fact_id for fact_id, _ in rows})
        condition, params = visible(visibility)
        present = self._conn.execute(
            f"SELECT args FROM facts AS f WHERE {self._conn.sql.in_list('f.id')} AND segment_id = ? "
            f"AND functor = ? AND arity = ? AND {condition}",
            (self._conn.sql.listed(ids), segment_id, functor, arity, *params)).fetchall()
        return decode_many([args for _, args in rows if args is not None]), decode_many([row[0] for row in present])

    def forget_changes(self) -> None:
        """Empty the feed's list of facts it named (their old arguments are content an erasure must not leave
        behind) and stamp every segment `vacated`, so every warm copy is read again."""
        self._conn.execute("DELETE FROM fact_changes")
        self._conn.execute("UPDATE change_counter SET value = value + 1 WHERE id = 1")
        self._conn.execute("UPDATE segments SET vacated = (SELECT value FROM change_counter WHERE id = 1)")

    def find(self, segment_id: int, text: str, visibility: Visibility | None = None) -> int | None:
        """The id of the fact with this canonical text if the caller may see it."""
        condition, params = seen(visibility)
        row = self._conn.execute(f"SELECT f.id FROM facts AS f WHERE f.segment_id = ? AND f.text = ? AND EXISTS "
                                 f"(SELECT 1 FROM supports AS s WHERE s.fact_id = f.id AND {condition})",
                                 (segment_id, text, *params)).fetchone()
        return row[0] if row else None

    def id_of(self, segment_id: int, text: str) -> int | None:
        """The id of the row with this text, whoever's supports hold it."""
        row = self._conn.execute("SELECT id FROM facts WHERE segment_id = ? AND text = ?",
                                 (segment_id, text)).fetchone()
        return row[0] if row else None

    def text_of(self, fact_id: int) -> str:
        return self._conn.execute("SELECT text FROM facts WHERE id = ?", (fact_id,)).fetchone()[0]

    def count(self, segment_id: int, visibility: Visibility | None = None, functor: str | None = None,
              arity: int | None = None) -> int:
        where, params = self._where(segment_id, visibility, functor, arity)
        return self._conn.execute(f"SELECT count(*) FROM facts AS f WHERE {where}", params).fetchone()[0]

    def listing(self, segment_id: int, visibility: Visibility | None, functor: str | None, arity: int | None,
                limit: int, offset: int) -> list[FactListing]:
        """A page of facts by predicate and text. The supports and the time of the first one are those the
        caller sees: a fact row is shared with projections it may not see, which must not show through (not
        even as an earlier created_at)."""
        where, params = self._where(segment_id, visibility, functor, arity)
        condition, condition_params = seen(visibility)
        joined = self._conn.sql.concat("s.kind || CASE WHEN s.ref = '' THEN '' ELSE ':' || s.ref END, ',' ORDER BY s.id")
        rows = self._conn.execute(
            f"SELECT f.id, f.text, (SELECT min(s.created_at) FROM supports AS s WHERE s.fact_id = f.id AND {condition}), "
            f"(SELECT {joined} FROM supports AS s WHERE s.fact_id = f.id AND {condition}) "
            f"FROM facts AS f WHERE {where} ORDER BY f.functor, f.arity, f.text LIMIT ? OFFSET ?",
            [*condition_params, *condition_params, *params, limit, offset],
        ).fetchall()
        return [FactListing(i, t, c, s.split(",") if s else []) for i, t, c, s in rows]

    def rows(self, segment_id: int, functor: str, arity: int, visibility: Visibility | None = None) -> list[FactRow]:
        """The visible facts of one predicate, oldest row first, with decoded arguments."""
        condition, params = visible(visibility)
        return [FactRow(i, t, decode_args(a)) for i, t, a in self._conn.execute(
            f"SELECT f.id, f.text, f.args FROM facts AS f WHERE f.segment_id = ? AND f.functor = ? AND f.arity = ? "
            f"AND {condition} ORDER BY f.id", (segment_id, functor, arity, *params))]

    def exists(self, segment_id: int, functor: str, arity: int, visibility: Visibility | None = None) -> bool:
        condition, params = visible(visibility)
        return self._conn.execute(
            f"SELECT 1 FROM facts AS f WHERE segment_id = ? AND functor = ? AND arity = ? AND {condition} LIMIT 1",
            (segment_id, functor, arity, *params)).fetchone() is not None

    def predicates(self, segment_id: int, visibility: Visibility | None = None) -> dict[tuple[str, int], int]:
        """(functor, arity) -> number of visible facts."""
        condition, params = visible(visibility)
        return {(n, a): c for n, a, c in self._conn.execute(
            f"SELECT functor, arity, count(*) FROM facts AS f WHERE segment_id = ? AND {condition} "
            "GROUP BY functor, arity", (segment_id, *params))}

    def arities(self, segment_id: int, functor: str, visibility: Visibility | None = None) -> set[int]:
        condition, params = visible(visibility)
        return {r[0] for r in self._conn.execute(
            f"SELECT DISTINCT arity FROM facts AS f WHERE segment_id = ? AND functor = ? AND {condition}",
            (segment_id, functor, *params))}

    def first_texts(self, segment_id: int, functor: str, arity: int, size: int,
                    visibility: Visibility | None = None) -> list[str]:
        """The first facts of a predicate in the order the caller's supports arrived (a fact row can be older,
        created by a projection the caller cannot see)."""
        condition, params = seen(visibility)
        return [r[0] for r in self._conn.execute(
            f"SELECT f.text FROM facts AS f JOIN (SELECT s.fact_id, min(s.id) AS first FROM supports AS s "
            f"WHERE {condition} GROUP BY s.fact_id) AS v ON v.fact_id = f.id "
            "WHERE f.segment_id = ? AND f.functor = ? AND f.arity = ? ORDER BY v.first LIMIT ?",
            (*params, segment_id, functor, arity, size))]

    def texts_with_support(self, segment_id: int, kind: str) -> list[str]:
        """The facts holding a support of this kind, by predicate and text."""
        return [r[0] for r in self._conn.execute(
            "SELECT f.text FROM facts AS f WHERE f.segment_id = ? AND EXISTS (SELECT 1 FROM supports AS s "
            "WHERE s.fact_id = f.id AND s.kind = ?) ORDER BY f.functor, f.arity, f.text", (segment_id, kind))]

    def any_text_contains(self, needle: str) -> bool:
        """Whether any stored fact, in any segment, holds this string in its text."""
        return self._conn.execute("SELECT 1 FROM facts WHERE instr(text, ?) > 0 LIMIT 1", (needle,)).fetchone() is not None

    # --- writes -------------------------------------------------------------------------------------
    def support(self, segment_id: int, fact: NewFact, kind: str, ref: str, actor: str,
                visibility: Visibility | None = None) -> tuple[int, bool, bool]:
        """Make sure the fact row exists and carries the support (kind, ref).

        Returns (fact id, whether the fact is new to the caller, whether the support was new). A fact row that
        only hidden supports held is shared, but reported as new: to the caller it did not exist."""
        at = utc_now(self._conn.clock)
        fact_id = self.id_of(segment_id, fact.text)
        if fact_id is None:
            fact_id = self._conn.execute(
                "INSERT INTO facts (segment_id, functor, arity, text, args, created_at) VALUES (?, ?, ?, ?, ?, ?) "
                "RETURNING id", (segment_id, fact.functor, fact.arity, fact.text, fact.args, at)).fetchall()[0][0]
            created = True
        else:
            created = not visible_supports(self._conn, fact_id, visibility)
        self._conn.execute("INSERT INTO supports (fact_id, kind, ref, actor, created_at) VALUES (?, ?, ?, ?, ?) "
                           "ON CONFLICT DO NOTHING", (fact_id, kind, ref, actor, at))
        return fact_id, created, self._conn.changes() > 0

    def assert_all(self, segment_id: int, facts: Iterable[NewFact], actor: str, visibility: Visibility | None = None,
                   batch: int = IMPORT_BATCH, progress: Callable[[int], None] | None = None) -> tuple[int, int]:
        """Give a stream of facts an `asserted` support, `batch` facts at a time, all in the caller's transaction
        and with one creation time: whatever the stream's length, memory holds one batch (an error the stream
        raises part-way undoes everything with the transaction). `progress` gets each batch's size.

        Returns (how many the caller did not see before, how many were read): a fact read twice counts once
        as added, as a fact already there the second time."""
        at = utc_now(self._conn.clock)
        added = read = 0
        rows = iter(facts)
        restore = None
        try:
            while part := list(islice(rows, batch)):
                if read and restore is None:  # a second batch: a bulk stream
                    restore = self._conn.grow_cache(BULK_CACHE_KIB)
                added += self.assert_many(segment_id, part, actor, visibility, at)
                read += len(part)
                if progress is not None:
                    progress(len(part))
        finally:
            if restore is not None:
                restore()
        return added, read

    def assert_many(self, segment_id: int, facts: list[NewFact], actor: str,
                    visibility: Visibility | None = None, at: str | None = None) -> int:
        """Give many facts an `asserted` support; returns how many the caller did not see before (once each).

        Set-based: the facts go to a temporary table, then one statement each inserts the new fact rows (in
        the order given), counts the rows already there that only supports hidden from the caller held (new
        to the caller too), and adds the supports (when every fact was new, by id: SQLite gives a new row the
        id after the largest, so they are the rows above the newest before; otherwise by text). A fact row that existed is visible afterwards (an
        asserted support is seen by everyone), so that count plus the rows created is exactly how many more
        facts the caller sees."""
        at = at or utc_now(self._conn.clock)
        conn = self._conn
        # Connection-private scratch space (TEMP), not part of the database's schema; emptied before and after.
        conn.execute(f"CREATE TEMP TABLE IF NOT EXISTS fact_import (position {conn.sql.generated_key}, functor TEXT, "
                     "arity INTEGER, text TEXT, args TEXT)")
        conn.execute("DELETE FROM fact_import")
        conn.insert_rows("fact_import", ("functor", "arity", "text", "args"), facts)
        hidden = 0
        if visibility is not None:  # without one every existing row is visible
            condition, params = visible(visibility)
            hidden = conn.execute(
                f"SELECT count(*) FROM facts AS f WHERE f.segment_id = ? AND f.text IN "
                f"(SELECT text FROM fact_import) AND NOT {condition}", (segment_id, *params)).fetchone()[0]
        newest = conn.execute("SELECT max(id) FROM facts").fetchone()[0] or 0
        conn.execute(
            "INSERT INTO facts (segment_id, functor, arity, text, args, created_at) "
            "SELECT ?, functor, arity, text, args, ? FROM fact_import WHERE true ORDER BY position "
            "ON CONFLICT (segment_id, text) DO NOTHING", (segment_id, at))
        created = conn.changes()
        supported = 0
        if created == len(facts):  # all new: their rows are those above the newest before, in the order given
            conn.execute("INSERT INTO supports (fact_id, kind, ref, actor, created_at) "
                         "SELECT id, 'asserted', '', ?, ? FROM facts WHERE id > ? ORDER BY id", (actor, at, newest))
            supported = conn.changes()
        if supported < len(facts):  # facts met again (or ids that did not grow): each one found by its text
            conn.execute(
                "INSERT INTO supports (fact_id, kind, ref, actor, created_at) "
                "SELECT f.id, 'asserted', '', ?, ? FROM fact_import AS i "
                "JOIN facts AS f ON f.segment_id = ? AND f.text = i.text WHERE true ORDER BY i.position "
                "ON CONFLICT DO NOTHING", (actor, at, segment_id))
        conn.execute("DELETE FROM fact_import")
        return created + hidden

    def release(self, fact_id: int, visibility: Visibility | None = None) -> list[str]:
        """After supports were removed: delete the fact row when none is left at all. Returns the supports the
        caller still sees (empty: to the caller, the fact is gone)."""
        return release(self._conn, fact_id, visibility)

    def rename(self, fact_id: int, functor: str, text: str) -> None:
        self._conn.execute("UPDATE facts SET functor = ?, text = ? WHERE id = ?", (functor, text, fact_id))

    def copy_renamed(self, fact_id: int, functor: str, text: str) -> int:
        """A new row in the same segment with the same arguments and time under a new name; returns its id."""
        return self._conn.execute(
            "INSERT INTO facts (segment_id, functor, arity, text, args, created_at) "
            "SELECT segment_id, ?, arity, ?, args, created_at FROM facts WHERE id = ? RETURNING id",
            (functor, text, fact_id)).fetchall()[0][0]

    def clear_all_but(self, segment_id: int, kept_kind: str) -> None:
        """Remove every support of a segment's facts except those of one kind, and the facts left without."""
        self._conn.execute("DELETE FROM supports WHERE kind <> ? AND fact_id IN "
                           "(SELECT id FROM facts WHERE segment_id = ?)", (kept_kind, segment_id))
        self._conn.execute("DELETE FROM facts WHERE segment_id = ? AND NOT EXISTS "
                           "(SELECT 1 FROM supports AS s WHERE s.fact_id = facts.id)", (segment_id,))

    @staticmethod
    def _where(segment_id: int, visibility: Visibility | None, functor: str | None,
               arity: int | None) -> tuple[str, list]:
        condition, params = visible(visibility)
        where, out = ["f.segment_id = ?", condition], [segment_id, *params]
        if functor is not None:
            where.append("f.functor = ?")
            out.append(functor)
        if arity is not None:
            where.append("f.arity = ?")
            out.append(arity)
        return " AND ".join(where), out
