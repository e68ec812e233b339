"""The fair share between callers of the evaluation pool (memory/workers/fairness.py), on its own: which
waiting call takes a free worker. Its laws over any sequence of arrivals, ends and give-ups (hypothesis),
and the cases the rules name. Through the pool, with real workers and two callers: test_workers.py."""

from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from memory.workers.fairness import FairShare, Ticket


def admit(share: FairShare, free: int) -> list[Ticket]:
    """What the pool does with `free` workers: the admitted calls take them."""
    chosen = share.admitted(free)
    for ticket in chosen:
        share.start(ticket)
    return chosen


def arrive(share: FairShare, key, n: int = 1) -> list[Ticket]:
    tickets = [share.ticket(key) for _ in range(n)]
    for ticket in tickets:
        share.wait(ticket)
    return tickets


def test_a_caller_alone_uses_every_worker():
    share = FairShare(3)
    zed = arrive(share, "zed", 5)
    assert admit(share, 3) == zed[:3]
    assert share.running == {"zed": 3}


def test_a_newcomer_gets_the_next_freed_worker_not_the_flooders_queue():
    """The report: zed holds both workers and has four calls waiting; bob's call, last to come, is next."""
    share = FairShare(2)
    zed = arrive(share, "zed", 6)
    admit(share, 2)
    (bob,) = arrive(share, "bob")
    assert share.admitted(0) == []
    share.finish(zed[0])
    assert admit(share, 1) == [bob]
    share.finish(zed[1])
    assert admit(share, 1) == [zed[2]]  # bob's call runs: zed alone waits again
    assert share.running == {"zed": 1, "bob": 1}


def test_the_flooder_asking_again_at_once_does_not_win():
    share = FairShare(2)
    first = arrive(share, "zed", 2)
    admit(share, 2)
    (bob,) = arrive(share, "bob")
    share.finish(first[0])
    again = arrive(share, "zed")  # zed's thread asks again before bob's is woken
    assert not share.may_start(again[0], 1) and share.may_start(bob, 1)


def test_fewest_running_before_longest_waiting():
    share = FairShare(3)
    (a_running,) = arrive(share, "a")
    admit(share, 1)
    (a_waiting,) = arrive(share, "a")
    (b_waiting,) = arrive(share, "b")
    assert share.admitted(1) == [b_waiting]  # a's call came first, but a already has one running
    assert share.admitted(2) == [b_waiting, a_waiting]


def test_among_equals_the_longest_waiting_goes_first():
    share = FairShare(4)
    for key in ("a", "b"):
        arrive(share, key)
    admit(share, 2)
    (b,) = arrive(share, "b")
    (a,) = arrive(share, "a")
    assert share.admitted(1) == [b]


def test_with_several_free_workers_no_caller_takes_the_last_while_another_waits():
    """Three free at once, zed's five calls older than bob's one: zed gets two, bob one."""
    share = FairShare(3)
    zed = arrive(share, "zed", 5)
    (bob,) = arrive(share, "bob")
    assert admit(share, 3) == [zed[0], bob, zed[1]]
    assert share.running == {"zed": 2, "bob": 1}


def test_the_servers_own_caller_is_a_caller_of_its_own():
    share = FairShare(2)
    http = arrive(share, "zed", 3)
    admit(share, 2)
    (own,) = arrive(share, None)
    share.finish(http[0])
    assert admit(share, 1) == [own]
    assert share.running == {"zed": 1, None: 1}


def test_a_call_sent_to_another_worker_keeps_its_place():
    """A worker that ended before taking the call: the call waits again, as old as it was."""
    share = FairShare(2)
    (a,) = arrive(share, "a")
    (b,) = arrive(share, "b")
    admit(share, 1)
    share.finish(a)
    assert share.withdraw(b) and not share.withdraw(b)  # b gave up; a waits again
    share.wait(a)
    (c,) = arrive(share, "c")
    assert share.admitted(1) == [a]


def test_one_worker_is_shared_in_turns():
    """With one worker nobody runs when it frees: the caller that had it goes after the others."""
    share = FairShare(1)
    zed = arrive(share, "zed", 4)
    admit(share, 1)
    (bob,) = arrive(share, "bob")
    share.finish(zed[0])
    assert admit(share, 1) == [bob]
    share.finish(bob)
    assert admit(share, 1) == [zed[1]]
    (again,) = arrive(share, "bob")
    share.finish(zed[1])
    assert admit(share, 1) == [again]  # before zed's older calls
    share.finish(again)
    assert admit(share, 1) == [zed[2]]
    share.finish(zed[2])
    assert admit(share, 1) == [zed[3]]  # zed alone: no turn is wasted


def test_a_pool_needs_a_worker():
    with pytest.raises(ValueError):
        FairShare(0)


KEYS = st.sampled_from([None, "ann", "bob", "zed"])
EVENTS = st.lists(st.one_of(st.tuples(st.just("arrive"), KEYS), st.tuples(st.just("finish"), st.integers(0, 99)),
                            st.tuples(st.just("give_up"), st.integers(0, 99))), max_size=80)


@settings(max_examples=300, deadline=None)
@given(workers=st.integers(1, 4), events=EVENTS)
def test_the_laws_over_any_sequence_of_calls(workers, events):
    """After each arrival, end or give-up the pool hands out its free workers one at a time: never a free worker
    while a call waits; each goes to a waiting caller with the fewest running, the longest-waiting among those
    (with one worker, the caller that had it last after the others); and a caller reaches all N workers only
    when no other caller's call waits."""
    share = FairShare(workers)
    running: list[Ticket] = []
    last: list = []  # the caller that took a worker last: with one worker, the others go first

    def weight(ticket: Ticket) -> tuple:
        return share.running[ticket.key] + (workers == 1 and last == [ticket.key]), ticket.seq
    for kind, what in events:
        if kind == "arrive":
            arrive(share, what)
        elif kind == "finish" and running:
            share.finish(running.pop(what % len(running)))
        elif kind == "give_up" and share.waiting:
            assert share.withdraw(share.waiting[what % len(share.waiting)])
        while share.waiting and len(running) < workers:
            (ticket,) = share.admitted(1)
            assert all(weight(ticket) <= weight(w) for w in share.waiting), "not the fairest next"
            share.start(ticket)
            last = [ticket.key]
            running.append(ticket)
            if workers > 1 and share.running[ticket.key] == workers:
                assert all(w.key == ticket.key for w in share.waiting), "one caller holds every worker"
        assert len(running) == workers or not share.waiting  # no worker idles while a call waits
        assert sum(share.running.values()) == len(running)
        assert share.admitted(workers - len(running)) == []
