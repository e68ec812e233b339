"""schema/schema.sql, generated: every statement comes from the migration history, every comment from the file.

The migrations (`migrations/NNNN_name.sql`) are the one source of the schema's statements; schema/schema.sql is
what a reader opens beside `sqlite3 memory.db .schema`: the same statements, in the file's order, each with the
comments that explain it. Regenerating it (`python -m memory.store.schema_file --write`) migrates an empty
database, reads back every table, index, view and trigger as SQLite keeps them, lays each table out one
column per line, and puts back the comments the file already had: the paragraph above each statement, by
the object's name, and each line's comment, by that line's text. A new object is added at the end with no
comment (`tests/test_schema.py` asks for one); a comment whose line a migration changed is reported, not
kept silently. `--check` (run by the suite) fails when the file differs from what the migrations generate.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

import apsw

from .migrations import after_quoted, load_migrations, migrate, schema_objects, schema_sql_path, table_items, table_lines

COMMENT_COLUMN = 38  # where a line's comment starts when its code is shorter
_CREATE = re.compile(r"CREATE\s+(?:UNIQUE\s+|VIRTUAL\s+)?(?:TABLE|INDEX|VIEW|TRIGGER)\s+(?:IF\s+NOT\s+EXISTS\s+)?"
                     r"([A-Za-z_][A-Za-z0-9_]*)", re.I)


@dataclass
class Notes:
    """The comments of one statement: the paragraph above it, and per line (or table column) of its code."""

    above: list[str] = field(default_factory=list)  # the lines before the statement, blank ones included
    lines: dict[str, str] = field(default_factory=dict)  # normalized code -> its comment (without "-- ")
    before: dict[str, list[str]] = field(default_factory=dict)  # normalized code -> comment lines above it


def split_comment(line: str) -> tuple[str, str | None]:
    """A line's code and its `--` comment (None without one); quoted text is code, whatever it holds."""
    i, n = 0, len(line)
    while i < n:
        c = line[i]
        if c in "'\"":
            i = after_quoted(line, i)
        elif line.startswith("--", i):
            return line[:i].rstrip(), line[i + 2:].strip()
        else:
            i += 1
    return line.rstrip(), None


def _key(code: str) -> str:
    return re.sub(r"\s+", " ", code).strip().rstrip(";").rstrip(",").strip()


def _table_layout(sql: str) -> list[str] | None:
    """A plain table's statement one item per line (None for a virtual table or text it cannot lay out)."""
    open_at = sql.find("(")
    close_at = sql.rfind(")")
    if re.match(r"\s*CREATE\s+VIRTUAL", sql, re.I) or open_at == -1 or close_at < open_at:
        return None
    head, body, tail = sql[:open_at].strip(), sql[open_at + 1:close_at], sql[close_at + 1:].strip()
    return table_lines(" ".join(head.split()), table_items(body)) + [f") {tail};" if tail else ");"]


def _code_lines(sql: str) -> list[str]:
    """A statement as SQLite keeps it, without comments, one output line per code line, ending with ';'."""
    lines = [split_comment(line)[0] for line in sql.splitlines()]
    lines = [line for line in lines if line.strip()]
    lines[-1] += ";"
    return lines


def statements_of(conn: apsw.Connection) -> list[tuple[str, str, str]]:
    """(name, type, code lines joined) of every object of the schema, in the order SQLite created them;
    SQLite's own objects and FTS5's shadow tables are not the schema's."""
    out = []
    for name, kind, sql in schema_objects(conn):
        code = "\n".join(split_comment(line)[0] for line in sql.splitlines())  # the file's comments stand
        lines = (_table_layout(code) if kind == "table" else None) or _code_lines(code)
        out.append((name, kind, "\n".join(lines)))
    return out


def read_notes(text: str) -> tuple[list[str], dict[str, Notes]]:
    """The order of the file's statements (by object name) and each one's comments."""
    order: list[str] = []
    notes: dict[str, Notes] = {}
    pending: list[str] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        match = _CREATE.match(lines[i])
        if not match:
            pending.append(lines[i])
            i += 1
            continue
        statement = [lines[i]]
        while not apsw.complete("\n".join(statement)) and i + 1 < len(lines):
            i += 1
            statement.append(lines[i])
        i += 1
        name = match.group(1)
        note = Notes(above=_trim_blank(pending))
        pending = []
        _line_notes(statement, note, table=bool(re.match(r"CREATE\s+TABLE", statement[0], re.I)))
        order.append(name)
        notes[name] = note
    return order, notes


def _trim_blank(lines: list[str]) -> list[str]:
    """Keep only comment paragraphs: data statements the file once carried are not the schema's."""
    kept = [line for line in lines if not line.strip() or line.lstrip().startswith("--")]
    while kept and not kept[0].strip():
        kept.pop(0)
    while kept and not kept[-1].strip():
        kept.pop()
    return kept


def _line_notes(statement: list[str], note: Notes, table: bool) -> None:
    """Each comment of a statement's lines, keyed by the code it explains (a table's: by column)."""
    above: list[str] = []
    pieces: list[tuple[str, str | None]] = []  # (code, comment) of each line holding code
    for line in statement:
        code, comment = split_comment(line)
        if not code.strip():
            if comment is not None:
                above.append(line.strip())
            continue
        if above:
            note.before[_key(code)] = above
            above = []
        pieces.append((code, comment))
    if table and len(pieces) > 2:  # a column written over several lines is one key: it ends at its comma
        joined: list[tuple[str, str | None]] = [pieces[0]]
        open_item = False
        for code, comment in pieces[1:-1]:
            if open_item:
                prior, prior_comment = joined[-1]
                joined[-1] = (prior + " " + code.strip(), " ".join(c for c in (prior_comment, comment) if c) or None)
            else:
                joined.append((code, comment))
            open_item = not code.rstrip().endswith(",")
        pieces = joined + [pieces[-1]]
    for code, comment in pieces:
        if comment is not None:
            note.lines[_key(code)] = comment


def render(statements: list[tuple[str, str, str]], order: list[str], notes: dict[str, Notes],
           header: list[str]) -> tuple[str, list[str]]:
    """The file's text, and what could not be placed (comments whose line no longer exists)."""
    by_name = {name: code for name, _, code in statements}
    names = [n for n in order if n in by_name] + [n for n, _, _ in statements if n not in order]
    out: list[str] = list(header)
    unplaced: list[str] = []
    for name in names:
        note = notes.get(name, Notes())
        placed: set[str] = set()
        out.append("")
        out.extend(note.above)
        for line in by_name[name].splitlines():
            key = _key(line)
            indent = " " * (len(line) - len(line.lstrip()))
            out.extend(indent + above for above in note.before.get(key, []))
            if key in note.before or key in note.lines:
                placed.add(key)
            said = note.lines.get(key)
            if said is None:
                out.append(line)
            else:
                out.append(f"{line.ljust(COMMENT_COLUMN)}-- {said}" if len(line) < COMMENT_COLUMN - 1
                           else f"{line}  -- {said}")
        unplaced += [f"{name}: -- {note.lines[k]}" for k in note.lines if k not in placed]
        unplaced += [f"{name}: {' '.join(note.before[k])}" for k in note.before if k not in placed]
    return "\n".join(out).strip("\n") + "\n", unplaced


def header_lines(newest: int) -> list[str]:
    """The file's opening paragraph, which names the migrations it stands for."""
    return [f"-- datalog-memory: the whole current schema (migrations 0001-{newest:04d}), for anyone",
            "-- opening the database with sqlite3. Generated from migrations/ by",
            "-- `python -m memory.store.schema_file --write`, which keeps the comments below;",
            "-- tests/test_schema.py checks that the file is what the migrations make. On",
            "-- PostgreSQL (DATALOG_MEMORY_DB=postgresql://...) the same tables, views, columns",
            "-- and triggers come from migrations/postgresql/, generated from the same history",
            "-- (memory/store/postgresql_migrations.py); what PostgreSQL writes differently is in",
            "-- migrations/postgresql/differences/."]


def generate(current: str) -> tuple[str, list[str]]:
    """schema.sql as the migrations make it, with `current`'s comments."""
    conn = apsw.Connection(":memory:")
    migrations = load_migrations()
    migrate(conn, migrations)
    order, notes = read_notes(current)
    if order:  # the opening paragraph (up to a blank or bare "--" line) is generated; the rest stays
        first = notes[order[0]].above
        end = next((i + 1 for i, line in enumerate(first) if line.strip() in ("", "--")), 0)
        notes[order[0]].above = _trim_blank(first[end:])
    return render(statements_of(conn), order, notes, header_lines(migrations[-1].version))


def main(argv: list[str]) -> int:
    path: Path = schema_sql_path()
    current = path.read_text(encoding="utf-8")
    text, unplaced = generate(current)
    for line in unplaced:
        print(f"comment with no line to go on: {line}", file=sys.stderr)
    if "--write" in argv:
        path.write_text(text, encoding="utf-8")
        return 0
    if text != current:
        print(f"{path} is not what the migrations generate: run python -m memory.store.schema_file --write",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
