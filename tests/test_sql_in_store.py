"""No SQL outside memory/store: every statement the library runs is written in the store's families
(memory/store/repository), and the rest of memory/ calls their typed methods.

A module holds SQL when one of its string literals (docstrings aside) reads as a statement or a statement's
part (SELECT ..., INSERT INTO, UPDATE x SET, DELETE FROM, CREATE/DROP/ALTER, WITH x AS (, PRAGMA), or when it
calls `.execute`/`.executemany`/`.executescript` (a statement passed in a variable is SQL all the same). SQL is
written with upper-case keywords here, which is what tells it from prose ("select the newest ...")."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "memory"
STORE = PACKAGE / "store"

STATEMENT = re.compile(
    r"\bSELECT\s+\S"
    r"|\bINSERT\s+(?:OR\s+[A-Z]+\s+)?INTO\b"
    r"|\bREPLACE\s+INTO\b"
    r"|\bUPDATE\s+[\w.\"{}]+\s+SET\b"
    r"|\bDELETE\s+FROM\b"
    r"|\b(?:CREATE|DROP)\s+(?:TEMP(?:ORARY)?\s+|UNIQUE\s+|VIRTUAL\s+)?(?:TABLE|INDEX|VIEW|TRIGGER)\b"
    r"|\bALTER\s+TABLE\b"
    r"|\bWITH\s+(?:RECURSIVE\s+)?\w+\s*(?:\([^)]*\)\s*)?AS\s*\("
    r"|^\s*PRAGMA\s+\w+"
)
RUNS_SQL = {"execute", "executemany", "executescript", "insert_rows"}


def _docstrings(tree: ast.AST) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) \
                    and isinstance(first.value.value, str):
                found.add(id(first.value))
    return found


def _text(node: ast.AST) -> str | None:
    """A string literal's text, an f-string's with `{}` for each placeholder."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value if isinstance(v, ast.Constant) and isinstance(v.value, str) else "{}"
                       for v in node.values)
    return None


def sql_in(source: str) -> list[tuple[int, str]]:
    """(line, what) for each piece of SQL in a module's source."""
    tree = ast.parse(source)
    skip = _docstrings(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            skip |= {id(v) for v in node.values}  # read as part of their f-string
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in RUNS_SQL:
            found.append((node.lineno, f".{node.func.attr}(...)"))
        if id(node) in skip:
            continue
        text = _text(node)
        if text is not None and STATEMENT.search(text):
            found.append((getattr(node, "lineno", 0), " ".join(text.split())[:100]))
    return sorted(found)


def _modules() -> dict[str, list[tuple[int, str]]]:
    """Each module of memory/ outside memory/store that holds SQL, with where."""
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        if STORE in path.parents:
            continue
        found = sql_in(path.read_text(encoding="utf-8"))
        if found:
            out[path.relative_to(ROOT).as_posix()] = found
    return out


def test_no_module_outside_the_store_holds_sql():
    holding = _modules()
    offenders = [f"{name}:{line}: {what}" for name, found in holding.items() for line, what in found]
    assert offenders == [], "SQL belongs in a store family (memory/store/repository):\n" + "\n".join(offenders)


def test_the_families_sql_is_found():
    """The check sees the statements where they are: each source-memory family reads as SQL."""
    for name in ("source_memories.py", "memory_projections.py", "memory_words.py", "fulltext.py", "vectors.py"):
        assert sql_in((STORE / "repository" / name).read_text(encoding="utf-8")), name


def test_what_reads_as_sql_and_what_does_not():
    statements = [
        'x = "SELECT id FROM t WHERE a = ?"',
        'x = f"SELECT {COLUMNS} FROM {FROM} WHERE m.id = ?"',
        'x = ("m.seq IN (SELECT seq FROM memory_words "\n     "WHERE word = ?)")',
        'x = "INSERT INTO t (a) VALUES (?)"',
        'x = "INSERT OR IGNORE INTO t (a) VALUES (?)"',
        'x = f"UPDATE {table} SET a = ?"',
        'x = "UPDATE source_memories SET status = ?"',
        'x = "DELETE FROM memory_words WHERE seq = ?"',
        'x = "CREATE INDEX i ON t (a)"',
        'x = "CREATE VIRTUAL TABLE f USING fts5 (text)"',
        'x = "WITH RECURSIVE walk(id) AS (SELECT 1)"',
        'x = "WITH kept AS (SELECT 1)"',
        'x = "PRAGMA quick_check"',
        'conn.execute(statement, params)',
        'conn.executemany(statement, rows)',
    ]
    prose = [
        '"""Select the newest memories and update the counts."""',
        'def f():\n    """SELECT: a docstring may name SQL."""\n',
        'x = "Run PRAGMA quick_check now and record it"',
        'x = "select, insert into the list, update the index, delete from the cache"',
        'x = "WITH the newest first"',
        'x = "Memories created with a key are kept"',
        'x = f"the {n} selected memories"',
    ]
    assert [s for s in statements if not sql_in(s)] == []
    assert [s for s in prose if sql_in(s)] == []


# Forms only one dialect reads. A shared statement takes them from its connection's `sql` (memory/store/dialect.py),
# so they are written only there; nothing rewrites a statement for the other store.
# SQLite's scalar max/min (two arguments or more), a decimal (numeric on PostgreSQL, a double on SQLite) and
# CAST(... AS REAL) (24 bits on PostgreSQL) mean something else there, so they are refused too.
ONE_DIALECT = re.compile(r"json_each\(|group_concat\(|CROSS\s+JOIN|\bOR\s+IGNORE\b|\btemp\.|string_agg\(|"
                         r"json_array_elements|=\s*ANY\(|\bgreatest\(|\bleast\(|pg_temp|"
                         r"\b(?:max|min)\([^()]*,|(?<![\w.])\d+\.\d+\b|\bAS\s+REAL\b", re.I)
DIALECT_MODULES = {"dialect.py", "postgresql.py"}  # the forms themselves, and PostgreSQL's own statements


def shared_statements_with_one_dialects_form() -> list[str]:
    found = []
    for path in sorted(STORE.rglob("*.py")):
        if path.name in DIALECT_MODULES:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        skip = _docstrings(tree)
        for node in ast.walk(tree):
            text = None if id(node) in skip else _text(node)
            if text is not None and ONE_DIALECT.search(text):
                found.append(f"{path.relative_to(ROOT).as_posix()}:{node.lineno}: {' '.join(text.split())[:100]}")
    return found


def test_no_shared_statement_holds_a_form_only_one_dialect_reads():
    offenders = shared_statements_with_one_dialects_form()
    assert offenders == [], "take the form from conn.sql (memory/store/dialect.py):\n" + "\n".join(offenders)


def test_the_one_dialect_forms_are_recognised():
    """The check above finds each form it names, written as the repository used to write them."""
    for written in ("x IN (SELECT value FROM json_each(?))", "group_concat(k, ',')", "a CROSS JOIN b ON b.x = a.x",
                    "INSERT OR IGNORE INTO t (a) VALUES (?)", "DELETE FROM temp.fact_import", "x = ANY(?)",
                    "string_agg(k, ',')", "greatest(a, b)", "max(a, ?)", "WHERE w > 0.5", "CAST(s AS REAL)"):
        assert ONE_DIALECT.search(written), written
    for shared in ("INSERT INTO t (a) VALUES (?) ON CONFLICT DO NOTHING", "SELECT max(id) FROM facts",
                   "SELECT coalesce(max(id), 0) FROM t", "min(s.created_at)", "x = 10",
                   "CREATE TEMP TABLE fact_import (position {})", "a JOIN b ON b.x = a.x"):
        assert not ONE_DIALECT.search(shared), shared
