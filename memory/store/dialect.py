"""The SQL the program shares between SQLite and PostgreSQL, turned into PostgreSQL's.

Statements are written once, for SQLite; on PostgreSQL each one is rewritten by `to_postgresql` before it runs.
The rewriting is lexical: it walks the text once, copies string literals and quoted names unchanged, and only
touches what lies outside them:

- placeholders: `?` and `?NNN` become `%s` (the parameters reordered for `?NNN`), `:name` becomes `%(name)s`,
  and a literal `%` is doubled (psycopg's syntax);
- `INSERT OR IGNORE INTO ...` becomes `INSERT INTO ... ON CONFLICT DO NOTHING`;
- `x IN (SELECT value FROM json_each(?))` becomes `x = ANY(?)`, the parameter (a JSON array) passed as a list;
- `json_each(col) AS j` and `json_each(col, '$.key') AS j` become the rows of `json_array_elements_text`, with
  the column `j.value` as in SQLite;
- `group_concat(` becomes `string_agg(`; `max(a, b)` and `min(a, b)` (SQLite's scalar forms, two arguments or
  more) become `greatest`/`least`;
- a number with a fraction (`0.5`) is a double precision value, as in SQLite (PostgreSQL would make it numeric),
  and `CAST(x AS REAL)` is double precision too (PostgreSQL's real has 24 bits);
- `CROSS JOIN t ON ...` (a join order hint in SQLite) becomes `JOIN t ON ...`; `temp.` names PostgreSQL's
  `pg_temp.`; `INTEGER PRIMARY KEY` in a CREATE TEMP TABLE gets its ids as SQLite gives them.

SQLite's functions that have no PostgreSQL twin of the same meaning (json_valid, json_extract, instr,
json_array_length) are defined in the PostgreSQL schema (migrations/postgresql/), so they need no rewriting.
Anything else SQLite-only (PRAGMA, FTS5 MATCH, sqlite_schema) is not shared text: the code asks the connection's
`dialect` and says what it does on PostgreSQL.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from .migrations import after_quoted


class UnsupportedStatement(ValueError):
    """A statement the translation does not know how to carry to PostgreSQL."""


@dataclass(frozen=True)
class Translated:
    sql: str
    json_lists: tuple[int, ...]  # positions of `?` parameters that hold a JSON array to pass as a list
    named: bool  # the statement uses :name parameters
    order: tuple[int, ...] | None = None  # with `?NNN`: which parameter each `%s` takes, else None (in order)


_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_$]*")
_NUMBER = re.compile(r"\d+\.\d+(?:[eE][+-]?\d+)?|\d+[eE][+-]?\d+")
_JSON_IN = re.compile(r"IN\s*\(\s*SELECT\s+value\s+FROM\s+json_each\(\s*\?\s*\)\s*\)", re.I)
_JSON_EACH = re.compile(r"json_each\(\s*([A-Za-z_][\w.]*)\s*(?:,\s*'\$\.(\w+)'\s*)?\)\s+AS\s+(\w+)", re.I)
_INSERT_OR_IGNORE = re.compile(r"^\s*INSERT\s+OR\s+IGNORE\s+INTO\b", re.I)
_CROSS_JOIN_ON = re.compile(r"CROSS\s+JOIN\s+(\w+(?:\s+AS\s+\w+)?)\s+ON\b", re.I)
_CAST_REAL = re.compile(r"\bAS\s+REAL\s*\)", re.I)
_TEMP_KEY = re.compile(r"\bINTEGER\s+PRIMARY\s+KEY\b", re.I)


def _matching_paren(sql: str, start: int) -> tuple[int, int]:
    """From the '(' at `start`: the index of its ')' and how many commas lie at its own depth."""
    depth, commas, i, n = 0, 0, start, len(sql)
    while i < n:
        c = sql[i]
        if c in "'\"":
            i = after_quoted(sql, i)
            continue
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                return i, commas
        elif c == "," and depth == 1:
            commas += 1
        i += 1
    raise UnsupportedStatement(f"unbalanced parentheses in: {sql[:200]}")


@lru_cache(maxsize=4096)
def to_postgresql(sql: str) -> Translated:
    """The PostgreSQL form of one SQLite statement (see the module's docstring)."""
    ignore = bool(_INSERT_OR_IGNORE.match(sql))
    if ignore:
        sql = _INSERT_OR_IGNORE.sub("INSERT INTO", sql, count=1)
    temp_table = sql.lstrip().upper().startswith("CREATE TEMP")
    out: list[str] = []
    json_lists: list[int] = []
    placeholders = 0
    named = False
    numbered = False
    order: list[int] = []
    i, n = 0, len(sql)
    while i < n:
        c = sql[i]
        if c in "'\"":  # a string literal or quoted name: copied as it is, `%` doubled for psycopg
            end = sql.find(c, i + 1)
            while end != -1 and sql.startswith(c, end + 1):
                end = sql.find(c, end + 2)
            if end == -1:
                raise UnsupportedStatement(f"unterminated quote in: {sql[:200]}")
            out.append(sql[i:end + 1].replace("%", "%%"))
            i = end + 1
            continue
        if c == "%":
            out.append("%%")
            i += 1
            continue
        if c == "?":
            j = i + 1
            while j < n and sql[j].isdigit():
                j += 1
            number = int(sql[i + 1:j]) if j > i + 1 else None
            numbered = numbered or number is not None
            order.append(number - 1 if number is not None else len(order))
            out.append("%s")
            placeholders += 1
            i = j
            continue
        if c == ":" and i + 1 < n and (sql[i + 1].isalpha() or sql[i + 1] == "_") and not sql.startswith("::", i - 1):
            match = _WORD.match(sql, i + 1)
            out.append(f"%({match.group(0)})s")
            named = True
            i = match.end()
            continue
        if c == "-" and sql.startswith("--", i):
            end = sql.find("\n", i)
            i = n if end == -1 else end
            continue
        if c.isdigit() and (i == 0 or not (sql[i - 1].isalnum() or sql[i - 1] in "_.")):
            match = _NUMBER.match(sql, i)
            if match:
                out.append(f"CAST({match.group(0)} AS double precision)")
                i = match.end()
                continue
            j = i
            while j < n and sql[j].isdigit():
                j += 1
            out.append(sql[i:j])
            i = j
            continue
        if c in "Ii":
            match = _JSON_IN.match(sql, i)
            if match and (i == 0 or not (sql[i - 1].isalnum() or sql[i - 1] == "_")):
                out.append("= ANY(%s)")
                json_lists.append(placeholders)
                order.append(len(order))
                placeholders += 1
                i = match.end()
                continue
        if c in "Jj":
            match = _JSON_EACH.match(sql, i)
            if match:
                column, key, alias = match.groups()
                source = f"CAST({column} AS json)" + (f" -> '{key}'" if key else "")
                out.append(f"json_array_elements_text({source}) AS {alias} (value)")
                i = match.end()
                continue
        if c in "Cc":
            match = _CROSS_JOIN_ON.match(sql, i)
            if match:
                out.append(f"JOIN {match.group(1)} ON")
                i = match.end()
                continue
        if c in "Aa":
            match = _CAST_REAL.match(sql, i)
            if match:
                out.append("AS double precision)")
                i = match.end()
                continue
        if c.isalpha() or c == "_":
            match = _WORD.match(sql, i)
            word = match.group(0)
            lower = word.lower()
            after = match.end()
            if lower == "group_concat" and sql.startswith("(", after):
                out.append("string_agg")
            elif lower in ("max", "min") and sql.startswith("(", after) and _matching_paren(sql, after)[1] >= 1:
                out.append("greatest" if lower == "max" else "least")
            elif lower == "temp" and sql.startswith(".", after):
                out.append("pg_temp")
            elif temp_table and lower == "integer" and _TEMP_KEY.match(sql, i):
                out.append("BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY")
                after = _TEMP_KEY.match(sql, i).end()
            else:
                out.append(word)
            i = after
            continue
        out.append(c)
        i += 1
    text = "".join(out).rstrip()
    if ignore:
        text = _on_conflict_do_nothing(text)
    if named and placeholders:
        raise UnsupportedStatement("a statement mixes ? and :name parameters")
    return Translated(text, tuple(json_lists), named, tuple(order) if numbered else None)


def _on_conflict_do_nothing(sql: str) -> str:
    """`ON CONFLICT DO NOTHING` at the end of an INSERT (before a RETURNING clause, if any)."""
    body = sql.rstrip(";").rstrip()
    match = re.search(r"\sRETURNING\s", body, re.I)
    if match:
        return f"{body[:match.start()]} ON CONFLICT DO NOTHING{body[match.start():]}"
    return f"{body} ON CONFLICT DO NOTHING"
