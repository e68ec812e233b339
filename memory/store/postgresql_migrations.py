"""migrations/postgresql/, generated: PostgreSQL's migrations come from the one history, migrations/NNNN_name.sql.

The history is written once, in SQLite's SQL. Each PostgreSQL migration is made from the SQLite migration of
the same number, statement by statement: a table's types become PostgreSQL's (below), an index of a table
with an integer key ends with that key (every SQLite index does, implicitly, and "the newest row of a key" reads
one entry only when the index is in id order), everything else is copied as it is. Where the SQL really differs
(triggers are PL/pgSQL functions there, FTS5's virtual table is a plain table, a few SQLite functions have no
PostgreSQL namesake) the statement's PostgreSQL form is written by hand in
`migrations/postgresql/differences/NNNN.sql`, in sections that each open with one of

    -- [first]               statements before every statement of the migration
    -- [instead of NAME]     what replaces the statement NAME (nothing: it is not run on PostgreSQL)
    -- [after NAME]          statements right after the statement NAME
    -- [last]                statements after every statement of the migration

NAME is an object a statement creates (its name), `drop NAME`, `alter TABLE`, `insert into TABLE`, `update
TABLE` or `delete from TABLE`. A statement that cannot be translated (a trigger, a virtual table, dropping a
trigger) without a section that replaces it, or a section naming no statement, stops the generation with the
reason, so no statement of the history is left without its PostgreSQL form.

PostgreSQL's history starts at 0012 (no PostgreSQL store predates it): its first migration is SQLite's whole
schema at version 12 (every table, index, view and trigger as SQLite keeps it, and the rows the migrations
seed), translated the same way. `python -m memory.store.postgresql_migrations --write` writes the files;
`--check` (run by the suite, tests/test_postgresql_migrations.py) fails when they differ from what it generates.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

import apsw

from ..errors import StorageError
from .migrations import Migration, after_quoted, load_migrations, migrate, plain_ddl, shipped, table_items

FIRST_VERSION = 12  # PostgreSQL's first migration stands for SQLite's 0001-0012
TYPES = {"INTEGER": "BIGINT", "TEXT": 'TEXT COLLATE "C"', "REAL": "DOUBLE PRECISION", "BLOB": "BYTEA"}
_SECTION = re.compile(r"^-- \[(first|last|instead of ([a-z0-9_ ]+)|after ([a-z0-9_ ]+))\]\s*$")
_CONSTRAINT = re.compile(r"(PRIMARY\s+KEY|UNIQUE|CHECK|FOREIGN\s+KEY|CONSTRAINT)\b", re.I)
_IDENTIFIER = r"([A-Za-z_][A-Za-z0-9_]*)"
_NAMES = [  # (pattern, how the statement is named in a section), first match wins
    (re.compile(r"CREATE\s+(?:UNIQUE\s+|VIRTUAL\s+)?(?:TABLE|INDEX|VIEW|TRIGGER)\s+(?:IF\s+NOT\s+EXISTS\s+)?"
                + _IDENTIFIER, re.I), "{}"),
    (re.compile(r"DROP\s+(?:TABLE|INDEX|VIEW|TRIGGER)\s+(?:IF\s+EXISTS\s+)?" + _IDENTIFIER, re.I), "drop {}"),
    (re.compile(r"ALTER\s+TABLE\s+" + _IDENTIFIER, re.I), "alter {}"),
    (re.compile(r"INSERT\s+(?:OR\s+[A-Z]+\s+)?INTO\s+" + _IDENTIFIER, re.I), "insert into {}"),
    (re.compile(r"UPDATE\s+" + _IDENTIFIER, re.I), "update {}"),
    (re.compile(r"DELETE\s+FROM\s+" + _IDENTIFIER, re.I), "delete from {}"),
]
_UNTRANSLATABLE = re.compile(r"CREATE\s+(?:VIRTUAL\s+TABLE|TRIGGER)|DROP\s+TRIGGER", re.I)


def postgresql_dir() -> Path:
    return shipped("_migrations/postgresql", "migrations/postgresql")


def split_statements(sql: str) -> list[str]:
    """The statements of `sql`, without their comments, in order. A `;` ends a statement only where SQLite
    would (not inside quotes, comments or a trigger's BEGIN ... END)."""
    out: list[str] = []
    current: list[str] = []  # the statement's text so far, block comments left out
    i, n = 0, len(sql)
    while i < n:
        c = sql[i]
        if c in "'\"":
            end = after_quoted(sql, i)
        elif sql.startswith("--", i):
            end = sql.find("\n", i)
            end = n if end == -1 else end
        elif sql.startswith("/*", i):
            end = sql.find("*/", i + 2)
            i = n if end == -1 else end + 2
            current.append(" ")
            continue
        else:
            end = i + 1
        current.append(sql[i:end])
        i = end
        if c == ";" and apsw.complete("".join(current)):
            statement = plain_ddl("".join(current)[:-1]).strip()
            if statement:
                out.append(statement)
            current = []
    rest = plain_ddl("".join(current)).strip() if "".join(current).strip() else ""
    if rest:
        raise StorageError(f"a statement does not end with ';': {rest[:80]}")
    return out


def statement_name(statement: str) -> str:
    """What a section calls the statement: see the module's docstring."""
    for pattern, form in _NAMES:
        match = pattern.match(statement)
        if match:
            return form.format(match.group(1).lower())
    raise StorageError(f"a statement the generator cannot name: {statement[:80]}")


def column(item: str) -> str:
    """A column's definition in PostgreSQL's types. An INTEGER PRIMARY KEY the database hands out (SQLite's row
    id) is an identity column; one that REFERENCES another table's key or is fixed by a CHECK is the writer's."""
    match = re.match(_IDENTIFIER + r"\s+([A-Za-z]+)\b(.*)$", item)
    if not match or match.group(2).upper() not in TYPES:
        raise StorageError(f"a column the generator has no PostgreSQL type for: {item}")
    name, kind, rest = match.group(1), match.group(2).upper(), match.group(3)
    rest = re.sub(r"\s+AUTOINCREMENT\b", "", rest, flags=re.I)
    if (kind == "INTEGER" and re.match(r"\s+PRIMARY\s+KEY\b", rest, re.I)
            and not re.search(r"\b(REFERENCES|CHECK)\b", rest, re.I)):
        return f"{name} BIGINT GENERATED BY DEFAULT AS IDENTITY{rest}"
    return f"{name} {TYPES[kind]}{rest}"


def create_table(statement: str) -> str:
    open_at, close_at = statement.find("("), statement.rfind(")")
    head, body = " ".join(statement[:open_at].split()), statement[open_at + 1:close_at]
    tail = statement[close_at + 1:].strip()
    if tail and re.sub(r"\b(WITHOUT\s+ROWID|STRICT)\b|,", "", tail, flags=re.I).strip():
        raise StorageError(f"a table option the generator cannot translate: {tail}")
    items = [item if _CONSTRAINT.match(item) else column(item) for item in table_items(body)]
    return "\n".join([f"{head} ("] + [f"    {item}," for item in items[:-1]] + [f"    {items[-1]}", ")"])


def create_index(statement: str, row_keys: dict[str, str]) -> str:
    """A non-unique index of a table with an integer key ends with that key, as SQLite's index does."""
    match = re.match(r"(CREATE\s+INDEX\s+\w+\s+ON\s+(\w+)\s*\()([^()]*)\)(.*)$", statement, re.I | re.S)
    if not match:
        return " ".join(statement.split())
    head, table, columns, tail = match.groups()
    names = [c.strip() for c in columns.split(",")]
    key = row_keys.get(table.lower())
    if key and names[-1].lower() != key:
        names.append(key)
    return " ".join(f"{head}{', '.join(names)}){tail}".split())


def alter_table(statement: str) -> str:
    match = re.match(r"(ALTER\s+TABLE\s+\w+\s+ADD\s+(?:COLUMN\s+)?)(.*)$", statement, re.I | re.S)
    if not match:
        return statement
    return match.group(1) + column(" ".join(match.group(2).split()))


def row_keys(conn: apsw.Connection) -> dict[str, str]:
    """Each table whose rows have an integer key SQLite keeps in every index (its row id alias): that key."""
    out = {}
    for (table,) in conn.execute("SELECT name FROM pragma_table_list WHERE schema = 'main' AND type = 'table' "
                                 "AND name NOT LIKE 'sqlite_%'").fetchall():
        keys = [(str(r[1]), str(r[2]).upper()) for r in conn.execute(f'PRAGMA table_info("{table}")') if r[5]]
        if len(keys) == 1 and keys[0][1] == "INTEGER":
            out[str(table).lower()] = keys[0][0]
    return out


def translate(statement: str, keys: dict[str, str]) -> str:
    """The PostgreSQL form of a statement that has one without a hand-written section."""
    if _UNTRANSLATABLE.match(statement):
        raise StorageError("no PostgreSQL form")
    if re.match(r"CREATE\s+TABLE", statement, re.I):
        return create_table(statement)
    if re.match(r"CREATE\s+INDEX", statement, re.I):
        return create_index(statement, keys)
    if re.match(r"ALTER\s+TABLE", statement, re.I):
        return alter_table(statement)
    return statement


@dataclass
class Differences:
    """One migration's hand-written PostgreSQL statements, by where they go."""

    header: list[str] = field(default_factory=list)  # the file's opening comment
    first: list[str] = field(default_factory=list)
    last: list[str] = field(default_factory=list)
    instead: dict[str, list[str]] = field(default_factory=dict)
    after: dict[str, list[str]] = field(default_factory=dict)


def read_differences(path: Path) -> Differences:
    """The sections of a differences file; each section's text is kept with its comments."""
    found = Differences()
    if not path.is_file():
        return found
    target: list[str] | None = None
    for line in path.read_text(encoding="utf-8").splitlines():
        match = _SECTION.match(line)
        if match:
            kind, instead, after = match.groups()
            if kind == "first":
                target = found.first
            elif kind == "last":
                target = found.last
            else:
                table = found.instead if instead else found.after
                name = (instead or after).strip()
                if name in table:
                    raise StorageError(f"{path.name}: two sections for {name}")
                target = table[name] = []
        elif target is None:
            found.header.append(line)
        else:
            target.append(line)
    return found


def _text(lines: list[str]) -> list[str]:
    while lines and not lines[0].strip():
        lines = lines[1:]
    while lines and not lines[-1].strip():
        lines = lines[:-1]
    return [line.rstrip() for line in lines]


def assemble(statements: list[str], keys: dict[str, str], diff: Differences, where: str) -> list[str]:
    """The blocks of a PostgreSQL migration: each statement translated or replaced, sections in their places."""
    names = [statement_name(s) for s in statements]
    for name in list(diff.instead) + list(diff.after):
        count = names.count(name)
        if count != 1:
            raise StorageError(f"{where}: a section names {name}, which {count} statements of the migration are")
    blocks: list[list[str]] = [_text(diff.first)]  # a section's text as it is written, with its comments
    for statement, name in zip(statements, names):
        if name in diff.instead:
            blocks.append(_text(diff.instead[name]))
        else:
            try:
                blocks.append((translate(statement, keys) + ";").splitlines())
            except StorageError as e:
                raise StorageError(f"{where}: {name} has {e}: write its PostgreSQL form in a section "
                                   f"[instead of {name}]") from None
        blocks.append(_text(diff.after.get(name, [])))
    blocks.append(_text(diff.last))
    return ["\n".join(block) for block in blocks if block]


@dataclass(frozen=True)
class Generated:
    version: int
    name: str
    text: str

    @property
    def filename(self) -> str:
        return f"{self.version:04d}_{self.name}.sql"


def _initial_statements(conn: apsw.Connection, history: list[Migration]) -> list[str]:
    """SQLite's schema at FIRST_VERSION as SQLite keeps it, each table a new store starts with rows in followed
    by the statements of the migrations that insert them (the other data statements change what an older
    store holds: a new one has nothing for them to do)."""
    shadow = {name for (name,) in conn.execute("SELECT name FROM pragma_table_list WHERE type = 'shadow'")}
    tables = [str(name) for (name,) in conn.execute("SELECT name FROM pragma_table_list WHERE schema = 'main' "
                                                    "AND type = 'table' AND name <> 'schema_migrations'").fetchall()]
    seeded = {name.lower() for name in tables if conn.execute(f'SELECT 1 FROM "{name}" LIMIT 1').fetchone()}
    seeds: dict[str, list[str]] = {}
    for migration in history[:FIRST_VERSION]:
        for statement in split_statements(migration.sql):
            table = statement_name(statement).removeprefix("insert into ")
            if statement_name(statement).startswith("insert into ") and table in seeded:
                seeds.setdefault(table, []).append(statement)
    out = []
    for name, sql in conn.execute("SELECT name, sql FROM sqlite_schema WHERE sql IS NOT NULL "
                                  "AND name NOT LIKE 'sqlite_%' AND name <> 'schema_migrations' ORDER BY rowid"):
        if name not in shadow:
            out.append(plain_ddl(str(sql)).strip())
            out.extend(seeds.get(str(name).lower(), []))
    return out


def _header(version: int, sources: str, diff: Differences) -> str:
    lines = [f"-- PostgreSQL {version:04d}, generated from {sources} and",
             f"-- migrations/postgresql/differences/{version:04d}.sql by `python -m memory.store.postgresql_migrations",
             "-- --write`: edit those, not this file (tests/test_postgresql_migrations.py checks it)."]
    said = _text(diff.header)
    return "\n".join(lines + (["--"] + said if said else []))


def generate(history: list[Migration] | None = None, directory: Path | None = None) -> list[Generated]:
    """Every PostgreSQL migration, from FIRST_VERSION to the newest of the history."""
    history = history if history is not None else load_migrations()
    directory = directory or postgresql_dir()
    versions = {f"{m.version:04d}.sql" for m in history[FIRST_VERSION - 1:]}
    strays = sorted(p.name for p in (directory / "differences").glob("*") if p.name not in versions)
    if strays:
        raise StorageError(f"{', '.join(strays)} in {directory / 'differences'} name no migration from "
                           f"{FIRST_VERSION:04d} to {history[-1].version:04d}")
    conn = apsw.Connection(":memory:")
    migrate(conn, history[:FIRST_VERSION])
    diff = read_differences(directory / "differences" / f"{FIRST_VERSION:04d}.sql")
    first = f"migrations/0001-{FIRST_VERSION:04d}"
    blocks = assemble(_initial_statements(conn, history), row_keys(conn), diff, f"PostgreSQL {FIRST_VERSION:04d}")
    out = [Generated(FIRST_VERSION, "initial", "\n\n".join([_header(FIRST_VERSION, first, diff)] + blocks) + "\n")]
    for migration in history[FIRST_VERSION:]:
        migrate(conn, history[:migration.version])  # its tables' keys, for its indexes
        diff = read_differences(directory / "differences" / f"{migration.version:04d}.sql")
        blocks = assemble(split_statements(migration.sql), row_keys(conn), diff, f"PostgreSQL {migration.version:04d}")
        source = f"migrations/{migration.version:04d}_{migration.name}.sql"
        out.append(Generated(migration.version, migration.name,
                             "\n\n".join([_header(migration.version, source, diff)] + blocks) + "\n"))
    return out


def main(argv: list[str]) -> int:
    directory = postgresql_dir()
    generated = generate(directory=directory)
    wanted = {g.filename: g.text for g in generated}
    present = {p.name for p in directory.glob("[0-9][0-9][0-9][0-9]_*.sql")}
    if "--write" in argv:
        for name in present - set(wanted):
            (directory / name).unlink()
        for name, text in wanted.items():
            (directory / name).write_text(text, encoding="utf-8")
        return 0
    stale = sorted(name for name in present | set(wanted)
                   if name not in wanted or name not in present
                   or (directory / name).read_text(encoding="utf-8") != wanted[name])
    if stale:
        print(f"{', '.join(stale)} in {directory} differ from what the history generates: "
              "run python -m memory.store.postgresql_migrations --write", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
