"""One clock: every instant the library records, and every default "now" it reads against, comes from the
clock given to `Memory` (memory/clock.py), so tests order events by moving a ManualClock, never by sleeping."""

import re
from datetime import datetime, timedelta, timezone

import pytest

from conftest import ROOT
from memory import Memory
from memory.clock import SYSTEM_CLOCK, Clock, ManualClock, SystemClock, epoch_now, format_instant, utc_now
from memory.errors import NotFound
from memory.access import CallerContext
from memory.access.context import KNOWN_CAPABILITIES

START = datetime(2001, 2, 3, 4, 5, 6, 789012, tzinfo=timezone.utc)
START_TEXT = "2001-02-03T04:05:06.789012Z"


def test_a_manual_clock_stands_still_until_moved():
    clock = ManualClock(START)
    assert clock.now() == clock.now() == START
    assert clock.advance(timedelta(minutes=2)) == START + timedelta(minutes=2)
    assert clock.advance(0.5) == START + timedelta(minutes=2, seconds=0.5)
    clock.set("2030-01-01T00:00:00Z")
    assert utc_now(clock) == "2030-01-01T00:00:00.000000Z"
    with pytest.raises(ValueError):
        clock.advance(-1)


def test_a_ticking_clock_orders_every_reading():
    clock = ManualClock(START_TEXT, tick=timedelta(microseconds=1))
    readings = [utc_now(clock) for _ in range(100)]
    assert readings == sorted(set(readings)) and readings[0] == START_TEXT


def test_naive_starts_mean_utc_and_the_system_clock_is_a_clock():
    assert ManualClock(START.replace(tzinfo=None)).now() == START
    assert isinstance(SYSTEM_CLOCK, Clock) and isinstance(ManualClock(), Clock)
    before = datetime.now(timezone.utc)
    assert before <= SystemClock().now() <= datetime.now(timezone.utc)


def test_everything_the_store_records_is_stamped_by_the_memorys_clock(tmp_path):
    """Facts, rules, materializations, snapshots, segments (project and global), projects, source memories,
    their events and erasure, observations and their retraction, invariant checks and every audit row."""
    clock = ManualClock(START)
    context = CallerContext(principal="tester", session_id="s1", project_remote="git@example.com:team/repo.git",
                            capabilities=KNOWN_CAPABILITIES)
    with Memory(str(tmp_path / "m.db"), context=context, clock=clock,
                global_path=str(tmp_path / "global.db")) as m:
        m.remember_fact("parent(ann, bob)")
        m.define_rule("ancestor(X, Y)", "parent(X, Y)")
        m.materialize()
        m.save_snapshot("s")
        m.create_memory("extra")
        m.create_memory("shared", scope="global")
        m.mount_memory("shared")
        m.remember_fact("team(a)", memory="shared")
        kept = m.memory_remember("Ann leads the team.", projections=[
            {"predicate": "leads", "arguments": ["ann", "team"], "statement": "Ann leads the team"}])
        gone = m.memory_remember("A secret to erase.")
        m.memory_forget(ids=[gone["id"]], action="delete", erase=True)
        edge = m.remember(["ann", "bob"])
        m.remember_observations([{"members": ["bob", "carol"]}])
        m.forget_observation([edge["hedge_tag"]])
        assert m.check_invariants().at == START_TEXT
        assert m.recall("ann")["now"] == epoch_now(clock) == int(START.timestamp())
        assert m.memory_get(kept["id"])["recorded_at"] == START_TEXT
        stamps = _stamps(m.store) + _stamps(m.bases.global_base().store)
    assert {value for _, value in stamps if isinstance(value, str)} == {START_TEXT}, stamps
    assert {value for _, value in stamps if isinstance(value, int)} == {int(START.timestamp())}, stamps
    recorded = {column for column, _ in stamps}
    for column in ("audit_log.at", "facts.created_at", "rules.created_at", "materializations.materialized_at",
                   "snapshots.created_at", "segments.created_at", "projects.created_at", "sources.created_at",
                   "sources.erased_at", "source_memories.recorded_at", "memory_events.at", "hyperedges.event_ts",
                   "hyperedges.recorded_at", "hyperedges.retracted_at"):
        assert column in recorded, column


def _stamps(store) -> list[tuple[str, object]]:
    """Every non-null time column of every table, except the two the schema's migrations fill themselves
    (schema_migrations.applied_at, and the default segment the first migration creates)."""
    out = []
    with store.read() as conn:
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_schema WHERE type = 'table'")]
        for table in tables:
            for column in [r[1] for r in conn.execute(f'PRAGMA table_info("{table}")')]:
                if not re.fullmatch(r"(.+_)?at|.*_ts|valid_from", column) or table == "schema_migrations" \
                        or table == "maintenance":
                    continue
                extra = " AND name <> 'default'" if table == "segments" else ""
                out += [(f"{table}.{column}", value) for (value,) in conn.execute(
                    f'SELECT "{column}" FROM "{table}" WHERE "{column}" IS NOT NULL{extra}')]
    return out


def test_the_wall_clock_is_read_only_in_memory_clock():
    """Durations may use perf_counter or monotonic; the time of day comes from a Clock."""
    # ... and `utc_now()` or `epoch_now()` without a clock would read the system clock behind the Memory's back.
    reads = re.compile(r"\btime\.time\(|datetime\.now\(|datetime\.utcnow\(|date\.today\(|\btime\.gmtime\(|"
                       r"\btime\.localtime\(|'now'\)|\b(utc|epoch)_now\(\)")
    found = [f"{path.relative_to(ROOT)}:{n}" for folder in ("memory", "cli") for path in (ROOT / folder).rglob("*.py")
             if path != ROOT / "memory" / "clock.py"
             for n, line in enumerate(path.read_text().splitlines(), 1) if reads.search(line)]
    # Even when a migration was applied comes from the connection's clock.
    assert found == [], found


def test_an_ordered_history_needs_no_sleep():
    """Two writes one tick apart are told apart by as_of, with the clock moved rather than waited on."""
    clock = ManualClock(START)
    with Memory(":memory:", context=CallerContext(principal="tester", session_id="s1"), clock=clock) as m:
        first = m.memory_remember("The backend is SQLite.")["id"]
        clock.advance(timedelta(microseconds=1))
        between = utc_now(clock)
        clock.advance(timedelta(microseconds=1))
        m.memory_forget(ids=[first], action="expire")
        assert m.memory_get(first)["status"] == "expired"
        assert m.memory_get(first, as_of=between)["status"] == "active"
        with pytest.raises(NotFound):  # not yet recorded a microsecond before
            m.memory_get(first, as_of=format_instant(START - timedelta(microseconds=1)))
