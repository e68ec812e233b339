"""The observation families of the repository (entities, formations, observations, observation_scans), on each
store: what they write, in what order they read it back, and what their windows and filters keep."""

from __future__ import annotations

import pytest

from memory.store import Store
from memory.store.repository import FormationRule, NewEntity, NewObservation, Repository, StoredObservation

ENTITIES = [NewEntity("account:Admin", "account", "admin"), NewEntity("host:db01", "host", "db01"),
            NewEntity("drone:d1", "drone", "d1"), NewEntity("plain", "entity", "plain")]
DAY = 86_400


@pytest.fixture
def repo(store_location):
    store = Store(store_location)
    yield Repository(store)
    store.close()


def observation(ident: int, ts: int, member_ids: tuple[int, ...], formation: str = "OBSERVATION",
                weight: float = 1.0) -> NewObservation:
    return NewObservation(ident, formation, f"label {ident}", ts, weight, "tester", "test", "2026-01-01T00:00:00Z",
                          f"content {ident}", f"chain {ident}", member_ids)


def stored(repo: Repository, observations: list[NewObservation]) -> dict[str, int]:
    """Writes the four entities and the observations (members named by entity index); entity name -> id."""
    with repo.write() as tx:
        tx.entities.add(ENTITIES)
        ids = tx.entities.ids_of([e.name for e in ENTITIES])
        order = [ids[e.name] for e in ENTITIES]
        tx.observations.add([o._replace(member_ids=tuple(order[m] for m in o.member_ids)) for o in observations])
    return ids


def test_entities_get_ids_in_the_order_added_and_are_found_by_folded_and_local_names(repo):
    with repo.write() as tx:
        assert tx.entities.ids_of(["account:Admin"]) == {}
        tx.entities.add(ENTITIES)
        assert set(tx.entities.ids_of(["plain", "host:db01", "nowhere"])) == {"plain", "host:db01"}
        ids = tx.entities.ids_of([e.name for e in ENTITIES])
    assert ids["account:Admin"] < ids["host:db01"] < ids["drone:d1"] < ids["plain"]
    with repo.read() as tx:
        assert tx.entities.named(["account:admin", "host:db01", "plain"]) == [
            ("account:Admin", ids["account:Admin"]), ("host:db01", ids["host:db01"]), ("plain", ids["plain"])]
        assert tx.entities.named(["Account:Admin"]) == []  # the caller folds the names it looks up
        assert tx.entities.named_locally(["plain", "db01", "admin"]) == [
            ("account:Admin", ids["account:Admin"]), ("host:db01", ids["host:db01"]), ("plain", ids["plain"])]
        assert tx.entities.types() == {"account", "host", "drone", "entity"}
        assert sorted(tx.entities.all()) == sorted((ids[e.name], e.name, e.type) for e in ENTITIES)
        assert sorted(tx.entities.names_and_types()) == sorted((e.name, e.type) for e in ENTITIES)
        assert all(type(row) is tuple for row in tx.entities.names_and_types())  # engine tuples
        assert tx.entities.exists("host:db01", "host") and not tx.entities.exists("host:db01", "entity")
        assert not tx.entities.exists("nowhere", "entity")


def test_formation_rules_come_first_match_first_with_their_member_types_decoded(repo):
    with repo.read() as tx:
        rules = tx.formations.rules()
    assert rules[:3] == [FormationRule("DRONE_EVENT", ["drone"], "any drone among the members"),
                         FormationRule("AUTH_EVENT", ["machine", "account"], "an account on a machine"),
                         FormationRule("AUTH_EVENT", ["host", "account"], "an account on a host")]
    assert [r.formation for r in rules[3:]] == ["NETWORK_EVENT", "PROCESS_EVENT", "FILE_EVENT"]


def test_observations_chain_from_the_newest_and_read_back_with_members_in_order(repo):
    with repo.read() as tx:
        assert tx.observations.chain_head() == "" and tx.observations.next_id() == 1
        assert tx.observations.load() == [] and tx.observations.load([]) == []
    ids = stored(repo, [observation(1, 100, (1, 0), "AUTH_EVENT", 0.5), observation(2, 50, (2,), "DRONE_EVENT")])
    admin, db01, d1 = ids["account:Admin"], ids["host:db01"], ids["drone:d1"]
    with repo.read() as tx:
        assert tx.observations.chain_head() == "chain 2" and tx.observations.next_id() == 3
        first = StoredObservation(1, "AUTH_EVENT", "label 1", 100, 0.5, "content 1", ("host:db01", "account:Admin"),
                                  (db01, admin))
        second = StoredObservation(2, "DRONE_EVENT", "label 2", 50, 1.0, "content 2", ("drone:d1",), (d1,))
        assert tx.observations.load() == [first, second]
        assert tx.observations.load([2, 1, 99]) == [first, second]  # by id; the caller orders as it asked
        assert tx.observations.load([99]) == []
        assert sorted(tx.observations.times_and_weights([1, 2, 99])) == [(1, 100, 0.5), (2, 50, 1.0)]
        assert tx.observations.hedges() == [(1, "AUTH_EVENT", 100, 0.5), (2, "DRONE_EVENT", 50, 1.0)]
        assert sorted(tx.observations.memberships()) == [(1, "account:Admin"), (1, "host:db01"), (2, "drone:d1")]
        assert tx.observations.has_hedge(1, "AUTH_EVENT", 100) and not tx.observations.has_hedge(1, "AUTH_EVENT", 99)
        assert tx.observations.has_member(2, "drone:d1") and not tx.observations.has_member(2, "host:db01")


def test_a_retracted_observation_stays_stored_and_leaves_the_relations(repo):
    stored(repo, [observation(1, 100, (0, 1)), observation(2, 200, (2,))])
    with repo.write() as tx:
        assert tx.observations.retraction_states([1, 2, 3]) == {1: None, 2: None}
        tx.observations.retract([1], "2026-02-01T00:00:00Z", "mistaken")
    with repo.read() as tx:
        assert tx.observations.retraction_states([1, 2]) == {1: "2026-02-01T00:00:00Z", 2: None}
        assert [o.id for o in tx.observations.load()] == [1, 2]  # the chain goes through it
        assert [h[0] for h in tx.observations.hedges()] == [2]
        assert tx.observations.memberships() == [(2, "drone:d1")]
        assert not tx.observations.has_hedge(1, "OBSERVATION", 100)
        assert not tx.observations.has_member(1, "account:Admin")
        assert [t[0] for t in tx.observation_scans.times()] == [2]
        assert [m[0] for m in tx.observation_scans.members()] == [1, 1, 2]  # members of retracted ones too


def test_a_failed_write_leaves_no_observation_rows(repo):
    with pytest.raises(RuntimeError):
        with repo.write() as tx:
            tx.entities.add(ENTITIES[:1])
            tx.observations.add([observation(1, 100, tuple(tx.entities.ids_of(["account:Admin"]).values()))])
            raise RuntimeError("the tool failed after writing")
    with repo.read() as tx:
        assert tx.observations.load() == [] and tx.entities.all() == [] and tx.observations.chain_head() == ""


def test_the_timeline_pages_newest_first_filtered_by_member_and_id(repo):
    stored(repo, [observation(1, 100, (0, 1)), observation(2, 300, (2,)), observation(3, 200, (0,)),
                  observation(4, 200, (1, 3))])
    with repo.write() as tx:
        tx.observations.retract([3], "2026-02-01T00:00:00Z", None)
    with repo.read() as tx:
        total, rows = tx.observations.timeline()
        assert total == 4 and [r.hedge_tag for r in rows] == ["HEDGE-2", "HEDGE-4", "HEDGE-3", "HEDGE-1"]
        assert rows[0].event_time == "1970-01-01T00:05:00Z" and rows[0].members == ["drone:d1"]
        assert rows[1].members == ["host:db01", "plain"] and rows[2].retracted_at == "2026-02-01T00:00:00Z"
        assert rows[3]._asdict() == {
            "hedge_tag": "HEDGE-1", "event_time": "1970-01-01T00:01:40Z", "event_ts": 100, "formation": "OBSERVATION",
            "label": "label 1", "weight": 1.0, "members": ["account:Admin", "host:db01"], "principal": "tester",
            "recorded_at": "2026-01-01T00:00:00Z", "retracted_at": None}
        total, rows = tx.observations.timeline(entity="account:Admin")
        assert total == 2 and [r.hedge_tag for r in rows] == ["HEDGE-3", "HEDGE-1"]
        assert tx.observations.timeline(entity="account:admin")[0] == 0  # the name as stored
        total, rows = tx.observations.timeline(edge_id=4)
        assert total == 1 and rows[0].hedge_tag == "HEDGE-4"
        assert tx.observations.timeline(entity="drone:d1", edge_id=4) == (0, [])
        assert tx.observations.timeline(edge_id=-1) == (0, [])
        total, rows = tx.observations.timeline(limit=2, offset=1)
        assert total == 4 and [r.hedge_tag for r in rows] == ["HEDGE-4", "HEDGE-3"]


def test_recalls_candidates_come_from_the_window_in_their_order(repo):
    ids = stored(repo, [observation(1, 1 * DAY, (0, 1)), observation(2, 2 * DAY, (0,)), observation(3, 3 * DAY, (1,)),
                        observation(4, 4 * DAY, (0, 1)), observation(5, 5 * DAY, (2,)), observation(6, 6 * DAY, (0, 1))])
    admin, db01 = ids["account:Admin"], ids["host:db01"]
    with repo.write() as tx:
        tx.observations.retract([6], "2026-02-01T00:00:00Z", None)
    with repo.read() as tx:
        scans = tx.observation_scans
        assert scans.sharing_entities([admin, db01], None, None, 10) == [(4, 2), (1, 2), (3, 1), (2, 1)]
        assert scans.sharing_entities([admin, db01], None, None, 2) == [(4, 2), (1, 2)]
        assert scans.sharing_entities([admin, db01], 2 * DAY, 4 * DAY, 10) == [(3, 1), (2, 1)]  # [start, end)
        assert scans.sharing_entities([admin], 3 * DAY, None, 10) == [(4, 1)]
        assert scans.with_types(["drone", "host"], None, None, 10) == [5, 4, 3, 1]
        assert scans.with_types(["host"], None, 3 * DAY, 10) == [1]
        assert scans.with_types(["nothing"], None, None, 10) == []
        assert scans.newest(None, None, 10) == [5, 4, 3, 2, 1]
        assert scans.newest(2 * DAY, 5 * DAY, 2) == [4, 3]


def test_the_newest_break_ties_by_the_lower_id(repo):
    stored(repo, [observation(1, 100, (0,)), observation(2, 200, (0,)), observation(3, 200, (1,))])
    with repo.read() as tx:
        assert tx.observation_scans.newest(None, None, 10) == [2, 3, 1]


def test_detects_graph_reads_the_window_and_the_weeks_before_it(repo):
    ids = stored(repo, [observation(1, 1 * DAY, (0, 1)), observation(2, 2 * DAY, (2,)), observation(3, 3 * DAY, (1,)),
                        observation(4, 3 * DAY, (3, 0))])
    admin, db01, d1, plain = (ids[e.name] for e in ENTITIES)
    with repo.write() as tx:
        tx.observations.retract([2], "2026-02-01T00:00:00Z", None)
    with repo.read() as tx:
        scans = tx.observation_scans
        assert sorted(scans.times()) == [(1, DAY, "OBSERVATION"), (3, 3 * DAY, "OBSERVATION"),
                                         (4, 3 * DAY, "OBSERVATION")]
        assert sorted(scans.times(2 * DAY, None)) == [(3, 3 * DAY, "OBSERVATION"), (4, 3 * DAY, "OBSERVATION")]
        assert sorted(scans.times(None, 3 * DAY)) == [(1, DAY, "OBSERVATION")]
        assert scans.members() == [(1, admin), (1, db01), (2, d1), (3, db01), (4, plain), (4, admin)]
        assert scans.event_times(0, 4 * DAY) == [DAY, 3 * DAY, 3 * DAY]
        assert scans.event_times(DAY + 1, 3 * DAY) == []
        assert sorted(scans.member_times(0, 3 * DAY)) == [(DAY, admin), (DAY, db01)]
        assert [ts for ts, _ in scans.member_times(0, 4 * DAY)] == [DAY, DAY, 3 * DAY, 3 * DAY, 3 * DAY]
