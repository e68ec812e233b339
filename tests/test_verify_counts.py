"""verify's numbers are carried by the cited items that involve what the sentence names, not by all it cites.

The first test is the store an outside review used to get two fabricated counts kept (a drone
seen "3 times" where it was seen once, "2 drones" at a sector only one drone visited); the
property test states the law for counts, gaps and spans over any set of sightings."""

from collections import Counter
from itertools import combinations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory import Memory

NOW = 1_780_000_000  # 2026-05-28 20:26:40 UTC


@pytest.fixture(scope="module")
def sightings():
    """HEDGE-1: d1 at s7, HEDGE-2: d2 at s7, HEDGE-3: admin on h1, HEDGE-4: d1 at s9 (a day earlier)."""
    m = Memory(":memory:", actor="test")
    tags = [m.remember(members, ts, w)["hedge_tag"] for members, ts, w in [
        (["drone:d1", "sector:s7"], NOW - 3_600, 0.9), (["drone:d2", "sector:s7"], NOW - 3_000, 0.6),
        (["host:h1", "account:admin"], NOW - 7_200, 0.8), (["drone:d1", "sector:s9"], NOW - 100_000, 0.5)]]
    yield m, dict(zip(("h1", "h2", "h3", "h4"), tags))
    m.close()


def _kept(m: Memory, sentence: str) -> tuple[bool, str | None]:
    out = m.verify(sentence, query="", now=NOW)["sentences"][0]
    return out["kept"], out["reason"]


@pytest.mark.parametrize("sentence, keep", [
    ("drone:d1 was seen at sector:s7 3 times [{h1}] [{h2}] [{h4}].", False),  # once at s7
    ("drone:d1 was seen at sector:s7 1 time [{h1}] [{h2}] [{h4}].", True),
    ("2 drones were seen at sector:s9 [{h1}] [{h2}] [{h4}].", False),  # only d1 at s9
    ("1 drone was seen at sector:s9 [{h1}] [{h2}] [{h4}].", True),
    ("2 drones were seen at sector:s7 [{h1}] [{h2}] [{h4}].", True),
    ("There were 2 observations of drone:d1 [{h1}] [{h2}] [{h4}].", True),
    ("There were 3 observations of drone:d1 [{h1}] [{h2}] [{h4}].", False),
    ("drone:d2 was seen at sector:s7 10 minutes apart [{h1}] [{h2}].", False),  # the gap is d1's to d2's
    ("drone:d1 and drone:d2 were seen at sector:s7 10 minutes apart [{h1}] [{h2}] [{h4}].", True),
    ("drone:d1 and drone:d2 were seen at sector:s7 within 2 days [{h1}] [{h2}] [{h4}].", True),
    ("drone:d1 and drone:d2 were seen at sector:s7 within 5 minutes [{h1}] [{h2}].", False),
    ("drone:d2 was seen at sector:s7 within 2 days [{h2}] [{h4}].", False),  # one d2 sighting: no span
    ("drone:d1 was seen at sector:s9 with weight 0.9 [{h1}] [{h4}].", False),  # 0.9 is the s7 sighting's
    ("drone:d2 was seen at sector:s9 0 times [{h1}] [{h2}] [{h4}].", False),  # what did not happen
    ("0 drones were seen at sector:s7 [{h1}] [{h2}] [{h4}].", False),
])
def test_numbers_are_carried_by_the_items_naming_the_subject(sightings, sentence, keep):
    m, tags = sightings
    kept, reason = _kept(m, sentence.format(**tags))
    assert kept is keep, reason


SECTORS = ["sector:a", "sector:b"]
DRONES = ["drone:p", "drone:q", "drone:r"]
events = st.lists(st.tuples(st.sampled_from(DRONES), st.sampled_from(SECTORS), st.integers(0, 5)),
                  min_size=1, max_size=6, unique=True)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(events, st.sampled_from(DRONES), st.sampled_from(SECTORS), st.integers(0, 6), st.integers(1, 5))
def test_counts_and_gaps_are_over_the_named_subjects_events(seen, drone, sector, n, minutes):
    """Citing every sighting, "D was seen at S N times" is kept exactly when D was seen at S N > 0 times
    (a count of none is a negation),
    "N drones were seen at S" when N drones were, and "D was seen at S M minutes apart" when two of D's
    sightings at S are M minutes apart: whatever else is cited."""
    m = Memory(":memory:", actor="test")
    try:
        tags = " ".join(f"[{m.remember([d, s], NOW - 3_600 + 60 * k, 0.5)['hedge_tag']}]" for d, s, k in seen)
        at = Counter((d, s) for d, s, _ in seen)
        drones = {d for d, s, _ in seen if s == sector}
        times = sorted(k for d, s, k in seen if (d, s) == (drone, sector))
        apart = {b - a for a, b in combinations(times, 2)}
        if any(drone == d for d, _, _ in seen) and any(sector == s for _, s, _ in seen):
            assert _kept(m, f"{drone} was seen at {sector} {n} times {tags}.")[0] is (at[(drone, sector)] == n > 0)
            assert _kept(m, f"{drone} was seen at {sector} {minutes} minutes apart {tags}.")[0] is \
                (minutes in apart)
        if drones:
            assert _kept(m, f"{n} drones were seen at {sector} {tags}.")[0] is (len(drones) == n > 0)
    finally:
        m.close()


@pytest.fixture(scope="module")
def logins():
    """HEDGE-1: admin on db01 at 14:30 UTC, HEDGE-2: 10.0.0.5 to db01 at 15:00 UTC (2026-03-26)."""
    m = Memory(":memory:", actor="test")
    tags = [m.remember(members, ts, w)["hedge_tag"] for members, ts, w in [
        (["account:admin", "host:db01"], 1_774_535_400, 0.9), (["ip:10.0.0.5", "host:db01"], 1_774_537_200, 1.0)]]
    yield m, tags
    m.close()


@pytest.mark.parametrize("when, keep", [
    # An offset from UTC is applied, however it is written; a time that is not the cited one's is stripped.
    ("at 14:30 UTC-5", False), ("at 14:30 GMT-5", False), ("at 14:30 Z-5", False), ("at 14:30 (UTC-5)", False),
    ("at 14:30 -0500", False), ("at 14:30 UTC-0500", False), ("at 2:30 pm UTC-7", False),
    ("at 14:30 UTC−5", False),  # a minus sign
    ("at 14:30 UTC+9", False), ("at 14:30 +05:00", False),
    ("between 14:00 and 15:00 UTC-5", False), ("at 14:30 PST-5", False),  # two zones in one: not read, not kept
    ("at 14:30 UTC-15", False),  # no such offset
    ("at 09:30 UTC-5", True), ("at 09:30 -05:00", True), ("at 9:30 am GMT-05:00", True), ("at 23:30 UTC+9", True),
    ("at 20:00 (UTC+05:30)", True), ("at 9:30 am EST", True), ("at 14:30 UTC", True), ("at 14:30", True),
    ("between 9:00 and 10:00 UTC-5", True),
])
def test_a_time_with_an_offset_from_utc_is_read_at_that_offset(logins, when, keep):
    m, (h1, _) = logins
    out = m.verify(f"account:admin logged in to host:db01 {when} [{h1}].", query="", now=1_774_569_600)
    sentence = out["sentences"][0]
    assert sentence["kept"] is keep, sentence["reason"]


def test_a_number_after_a_sign_is_read(logins):
    m, (h1, _) = logins
    sentence = m.verify(f"account:admin logged in to host:db01 -5 times [{h1}].", query="", now=1_774_569_600)
    assert sentence["sentences"][0]["kept"] is False
