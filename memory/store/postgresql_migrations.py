"""migrations/postgresql/, generated: PostgreSQL's migrations come from the one history, migrations/NNNN_name.sql.

The history is written once, in SQLite's SQL. Each PostgreSQL migration is made from the SQLite migration of
the same number, statement by statement, reading what SQLite made of it (each table's row id and integer key):
a table's types become PostgreSQL's (TYPES) and its row id an identity column; an insert that gives a row id
moves the identity past it; an index of a table with an integer key ends with that key (every SQLite index
does, implicitly, and "the newest row of a key" reads one entry only when the index is in id order);
everything else is copied, quoted text exactly as written. Where the SQL really differs (triggers are PL/pgSQL
functions there, FTS5's virtual table is a plain table, a few SQLite functions have no PostgreSQL namesake, a
comparison in a view's columns is a boolean) the statement's PostgreSQL form is written by hand in
`migrations/postgresql/differences/NNNN.sql`, in sections that each open with one of

    -- [first]               statements before every statement of the migration
    -- [instead of NAME]     what replaces the statement NAME (nothing: it is not run on PostgreSQL)
    -- [after NAME]          statements right after the statement NAME
    -- [last]                statements after every statement of the migration

NAME is an object a statement creates (its name), `drop NAME`, `alter TABLE`, `insert into TABLE`, `update
TABLE`, `delete from TABLE` or `pragma NAME`. A statement the generator cannot translate faithfully (a trigger,
a virtual table, dropping a trigger, `INSERT OR ...`, a PRAGMA, LIKE or GLOB outside quotes: SQLite's LIKE
ignores ASCII case, PostgreSQL's does not) without a section that replaces it, a section naming no statement,
or a line that looks like a section and is not one, stops the generation with the reason, so no statement of
the history is left without its PostgreSQL form. What the generator cannot see (a comparison used as a value
in a view) the `[postgresql]` tests catch: they run every migration, and no view may answer a boolean.

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
from .migrations import (Migration, after_quoted, load_migrations, migrate, plain_ddl, schema_objects, shipped,
                         squeeze, table_items, table_lines)

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
    (re.compile(r"(?:INSERT|REPLACE)\s+(?:OR\s+[A-Z]+\s+)?INTO\s+" + _IDENTIFIER, re.I), "insert into {}"),
    (re.compile(r"UPDATE\s+(?:OR\s+[A-Z]+\s+)?" + _IDENTIFIER, re.I), "update {}"),
    (re.compile(r"DELETE\s+FROM\s+" + _IDENTIFIER, re.I), "delete from {}"),
    (re.compile(r"PRAGMA\s+" + _IDENTIFIER, re.I), "pragma {}"),
]
# Statements with no PostgreSQL form, and words whose meaning differs there (SQLite's LIKE ignores ASCII case,
# PostgreSQL's does not; GLOB and PRAGMA do not exist there): each needs a section.
_UNTRANSLATABLE = re.compile(r"CREATE\s+(?:VIRTUAL\s+TABLE|TRIGGER)|DROP\s+TRIGGER|(?:INSERT|UPDATE)\s+OR\b|REPLACE\b"
                             r"|PRAGMA\b", re.I)
_DIFFERENT_WORDS = re.compile(r"\b(LIKE|GLOB)\b", re.I)


@dataclass(frozen=True)
class Keys:
    """What the SQLite schema says about each table's integer key (table names lower-case)."""

    row_ids: dict[str, str]  # the column that is the table's row id (SQLite numbers it when an insert leaves it out)
    indexed: dict[str, str]  # the single INTEGER primary key column SQLite keeps at the end of every index entry


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


def outside_quotes(text: str) -> str:
    """`text` with every quoted span blanked: what is left is its keywords, names and operators."""
    out, i, n = [], 0, len(text)
    while i < n:
        if text[i] in "'\"":
            end = after_quoted(text, i)
            out.append(text[i] + " " * (end - i - 2) + text[end - 1:end])
            i = end
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def bare_name(text: str) -> str:
    """A name as SQLite compares it: without its quotes, lower-case."""
    text = text.strip()
    if len(text) > 1 and text[0] == text[-1] and text[0] in "\"`":
        text = text[1:-1]
    return text.lower()


def column(item: str, row_id: bool) -> str:
    """A column's definition in PostgreSQL's types; the table's row id an identity column (PostgreSQL then hands
    out its value when an insert leaves it out, as SQLite does)."""
    match = re.match(_IDENTIFIER + r"\s+([A-Za-z]+)\b(.*)$", item)
    if not match or match.group(2).upper() not in TYPES:
        raise StorageError(f"a column the generator has no PostgreSQL type for: {item}")
    name, kind, rest = match.group(1), match.group(2).upper(), match.group(3)
    rest = re.sub(r"\s+AUTOINCREMENT\b", "", rest, flags=re.I)  # an identity's values only grow, never come back
    if row_id:
        return f"{name} BIGINT GENERATED BY DEFAULT AS IDENTITY{rest}"
    return f"{name} {TYPES[kind]}{rest}"


def create_table(statement: str, keys: Keys) -> str:
    match = re.match(r"CREATE\s+TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?" + _IDENTIFIER + r"\s*\(", statement, re.I)
    close_at = statement.rfind(")")
    if not match or close_at < match.end():
        raise StorageError("a table the generator cannot read")
    head, body = squeeze(statement[:match.end() - 1]), statement[match.end():close_at]
    tail = statement[close_at + 1:].strip()
    if tail and re.sub(r"\b(WITHOUT\s+ROWID|STRICT)\b|,", "", tail, flags=re.I).strip():
        raise StorageError(f"a table option the generator cannot translate: {tail}")
    row_id = keys.row_ids.get(match.group(1).lower())
    items = [item if _CONSTRAINT.match(item) else column(item, bare_name(item.split()[0]) == row_id)
             for item in table_items(body)]
    return "\n".join(table_lines(head, items) + [")"])


def create_index(statement: str, keys: Keys) -> str:
    """A non-unique index of a table with an integer key ends with that key, as SQLite's index entries do."""
    match = re.match(r"CREATE\s+(UNIQUE\s+)?INDEX\s+(?:IF\s+NOT\s+EXISTS\s+)?(\"?\w+\"?)\s+ON\s+(\"?\w+\"?)\s*\(",
                     statement, re.I)
    if not match:
        raise StorageError("an index the generator cannot read")
    depth, close_at = 1, None
    code = outside_quotes(statement)
    for i in range(match.end(), len(code)):
        depth += {"(": 1, ")": -1}.get(code[i], 0)
        if depth == 0:
            close_at = i
            break
    if close_at is None:
        raise StorageError("an index the generator cannot read")
    items = table_items(statement[match.end():close_at])
    key = keys.indexed.get(bare_name(match.group(3)))
    named = {bare_name(re.split(r"\s+(?:COLLATE|ASC|DESC)\b", item, flags=re.I)[0]) for item in items}
    if not match.group(1) and key and key not in named:
        items.append(key)
    return squeeze(statement[:match.end()]) + ", ".join(items) + ")" + (
        " " + squeeze(statement[close_at + 1:]) if statement[close_at + 1:].strip() else "")


def alter_table(statement: str) -> str:
    match = re.match(r"(ALTER\s+TABLE\s+\w+\s+ADD\s+(?:COLUMN\s+)?)(.*)$", statement, re.I | re.S)
    if not match:
        return statement
    return squeeze(match.group(1)) + " " + column(squeeze(match.group(2)), False)


def insert(statement: str, keys: Keys) -> str:
    """An insert as it is; one that gives a row id moves the identity past it, as SQLite's next row id would."""
    match = re.match(r"INSERT\s+INTO\s+" + _IDENTIFIER + r"\s*(\([^()]*\))?", outside_quotes(statement), re.I)
    table = match.group(1).lower() if match else ""
    row_id = keys.row_ids.get(table)
    given = [bare_name(c) for c in match.group(2)[1:-1].split(",")] if match and match.group(2) else None
    if not row_id or (given is not None and row_id not in given):
        return statement
    return (f"{statement};\nSELECT setval(pg_get_serial_sequence('{table}', '{row_id}'), max({row_id})) "
            f"FROM {table}")


def table_keys(conn: apsw.Connection) -> Keys:
    """Each table's integer key, read from SQLite's schema: the row id when a column is it (a rowid table whose
    one key column is declared INTEGER and has no index of its own: `INTEGER PRIMARY KEY DESC` gets one and is
    not the row id), and a single INTEGER key of any table (the end of every index entry)."""
    row_ids, indexed = {}, {}
    for table, without_rowid in conn.execute("SELECT name, wr FROM pragma_table_list WHERE schema = 'main' "
                                             "AND type = 'table' AND name NOT LIKE 'sqlite_%'").fetchall():
        name = str(table)
        keys = [(str(r[1]), str(r[2]).upper()) for r in conn.execute(f'PRAGMA table_info("{name}")') if r[5]]
        if len(keys) != 1 or keys[0][1] != "INTEGER":
            continue
        indexed[name.lower()] = keys[0][0]
        own_index = conn.execute(f"SELECT 1 FROM pragma_index_list('{name}') WHERE origin = 'pk'").fetchone()
        if not without_rowid and not own_index:
            row_ids[name.lower()] = keys[0][0]
    return Keys(row_ids, indexed)


def translate(statement: str, keys: Keys) -> str:
    """The PostgreSQL form of a statement that has one without a hand-written section."""
    if _UNTRANSLATABLE.match(statement):
        raise StorageError("no PostgreSQL form")
    different = _DIFFERENT_WORDS.search(outside_quotes(statement))
    if different:
        raise StorageError(f"{different.group(1).upper()}, which means something else on PostgreSQL")
    if re.match(r"CREATE\s+TABLE", statement, re.I):
        return create_table(statement, keys)
    if re.match(r"CREATE\s+(UNIQUE\s+)?INDEX", statement, re.I):
        return create_index(statement, keys)
    if re.match(r"ALTER\s+TABLE", statement, re.I):
        return alter_table(statement)
    if re.match(r"INSERT\s+INTO", statement, re.I):
        return insert(statement, keys)
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
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        match = _SECTION.match(line)
        if not match and line.startswith("-- ["):
            raise StorageError(f"{path.name}:{number}: not a section: {line!r} (-- [first], -- [last], "
                               "-- [instead of NAME], -- [after NAME])")
        if not match and target is None and line.strip() and not line.startswith("--"):
            raise StorageError(f"{path.name}:{number}: a statement before the first section: {line!r}")
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


def assemble(statements: list[str], keys: Keys, diff: Differences, where: str) -> list[str]:
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
    objects = [(name, kind, sql) for name, kind, sql in schema_objects(conn) if name != "schema_migrations"]
    seeded = {name.lower() for name, kind, _ in objects
              if kind == "table" and conn.execute(f'SELECT 1 FROM "{name}" LIMIT 1').fetchone()}
    seeds: dict[str, list[str]] = {}
    for migration in history[:FIRST_VERSION]:
        for statement in split_statements(migration.sql):
            name = statement_name(statement)
            if name.startswith("insert into ") and name.removeprefix("insert into ") in seeded:
                seeds.setdefault(name.removeprefix("insert into "), []).append(statement)
    out = []
    for name, _, sql in objects:
        out.append(plain_ddl(sql).strip())
        out.extend(seeds.get(name.lower(), []))
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
    strays = sorted(p.name for p in (directory / "differences").glob("*.sql") if p.name not in versions)
    if strays:
        raise StorageError(f"{', '.join(strays)} in {directory / 'differences'} name no migration from "
                           f"{FIRST_VERSION:04d} to {history[-1].version:04d}")
    conn = apsw.Connection(":memory:")

    def made(version: int, name: str, source: str, statements: list[str]) -> Generated:
        """One PostgreSQL migration, from `conn` migrated to `version` (its tables' keys, for its indexes)."""
        diff = read_differences(directory / "differences" / f"{version:04d}.sql")
        blocks = assemble(statements, table_keys(conn), diff, f"PostgreSQL {version:04d}")
        return Generated(version, name, "\n\n".join([_header(version, source, diff)] + blocks) + "\n")

    migrate(conn, history[:FIRST_VERSION])
    out = [made(FIRST_VERSION, "initial", f"migrations/0001-{FIRST_VERSION:04d}", _initial_statements(conn, history))]
    for migration in history[FIRST_VERSION:]:
        migrate(conn, history[:migration.version])
        out.append(made(migration.version, migration.name,
                        f"migrations/{migration.version:04d}_{migration.name}.sql", split_statements(migration.sql)))
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
