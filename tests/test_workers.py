"""Evaluation workers, driven directly (the server's use of them is tested over the real server in
test_server_workers.py): a call answers the same in a worker as in process, with the server's identity;
the registry's `evaluates` flag names every tool that runs the engine; the pool's own budget backstops
(time, memory, cancellation, a crashed worker) give typed errors and a fresh worker; the protocol refuses
what is not a message."""

from __future__ import annotations

import json
import os
import signal
import threading
import time

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from memory import Memory
from memory.datalog.budget import Budget, Cancellation
from memory.access import CallerContext
from memory.access.context import ADMIN, DEFAULT_CAPABILITIES
from memory.tools import REGISTRY
from memory.workers import WorkerPool, WorkerSettings, run_call
from memory.workers.fairness import FairShare
from memory.workers.protocol import Call, ProtocolError, Start, decode
from surfaces import alive
from test_tool_fuzz import _arguments

# A representative call of every tool that evaluates, on the store `fill` builds.
EVALUATING_CALLS = [
    ("query_logic", {"goal": "path(a, X)"}),
    ("query_logic", {"goal": "path(X, Y), \\+ edge(X, Y)", "limit": 2, "offset": 1}),
    ("query_logic", {"goal": "X is 2 ** 0.5"}),
    ("explain_why", {"fact": "path(a, d)"}),
    ("explain_why", {"fact": "path(d, a)"}),
    ("get_belief_status", {"fact": "path(a, c)"}),
    ("trace_dependency", {"start_node": "path"}),
    ("verify_consistency", {}),
    ("reason", {"query": "sensor"}),
    ("prove", {"query": "sensor"}),
    ("verify", {"answer": "sensor alarm", "query": "sensor"}),
    ("memory_recall", {"predicate": "owner"}),
    ("materialize", {}),
    # removals that change nothing here, so they answer alike twice
    ("forget_rule", {"name": "no_such_rule"}),
    ("retract_assumptions", {"pattern": "zz*"}),
]
# Changes that say which conclusions they withdrew: they evaluate what rests on what they remove.
WITHDRAWING_CALLS = [
    ("forget_rule", {"rule": "path(X, Y) :- edge(X, Y)"}),
    ("retract_assumption", {"assumption": "guess"}),
    ("retract_assumptions", {"pattern": "gu*"}),
    ("memory_forget", {"ids": ["$ada"]}),  # (a query only lists: forgetting is by id)
]
# ... and calls that fail, each in its own way.
FAILING_CALLS = [
    ("query_logic", {"goal": "path(a,"}),  # syntax_error
    ("query_logic", {"goal": "X is foo + 1"}),  # evaluation_error
    ("query_logic", {"goal": "p(X)", "limit": -1}),  # invalid_arguments (schema)
    ("explain_why", {"fact": "path(a, X)", "memory": "nowhere"}),  # not_found
]


def fill(memory: Memory) -> None:
    memory.add_facts(["edge(a,b)", "edge(b,c)", "edge(c,d)"])
    memory.define_rule("path(X,Y)", "edge(X,Y)")
    memory.define_rule("path(X,Z)", "path(X,Y), edge(Y,Z)")
    memory.define_rule("integrity_violation(X)", "edge(X, X)")
    memory.define_rule("owner(X)", "owns(X, Y)")
    memory.assume_fact("edge(d,e)", "guess")
    memory.remember(["sensor:s1", "alarm:a1"], 1_700_000_000, 0.8, "ALARM")
    memory.memory_remember("Ada owns the lab.", projections=[
        {"predicate": "owns", "arguments": ["ada", "lab"], "statement": "Ada owns the lab"}])


def comparable(outcome) -> tuple:
    """An outcome as the client sees it, without what is measured (materialize's seconds)."""
    structured = {k: v for k, v in outcome.result.structured.items() if k != "seconds"}
    text = outcome.result.text if "seconds" not in outcome.result.structured else ""
    return outcome.kind, text, json.dumps(structured, sort_keys=True)


@pytest.fixture
def session(store_file):
    """A Memory with a caller that is not the default one, and a pool over it."""
    context = CallerContext(principal="alice", session_id="s-42", project_remote="git@example.org:p.git",
                            capabilities=DEFAULT_CAPABILITIES)
    memory = Memory(store_file, context=context, budget=Budget(timeout_s=5, max_memory_mb=1000))
    fill(memory)
    with WorkerPool.for_memory(memory, WorkerSettings(workers=2)) as pool:
        assert pool.wait_ready()
        yield memory, pool
    memory.close()


def test_every_call_answers_the_same_in_a_worker_as_in_process(session):
    memory, pool = session
    for name, arguments in EVALUATING_CALLS + FAILING_CALLS:
        in_process, in_worker = run_call(memory, name, arguments), pool.call(name, arguments)
        assert comparable(in_worker) == comparable(in_process), (name, arguments)
    assert {name for name, _ in EVALUATING_CALLS + WITHDRAWING_CALLS} == {n for n, t in REGISTRY.items()
                                                                          if t.evaluates}
    assert [run_call(memory, n, a).kind for n, a in FAILING_CALLS] == ["error"] * len(FAILING_CALLS)


def test_a_worker_acts_as_the_servers_caller_only(store_file):
    """Session memories are the session's: the worker's recall sees this caller's, and a caller without a
    capability is refused in the worker exactly as in process."""
    with Memory(store_file, context=CallerContext(session_id="other")) as other:
        other.memory_remember("Bob owns the shed.", scope="session",
                              projections=[{"predicate": "owns", "arguments": ["bob", "shed"],
                                            "statement": "Bob owns the shed"}])
    context = CallerContext(principal="reader", session_id="mine",
                            capabilities=DEFAULT_CAPABILITIES - {ADMIN})
    memory = Memory(store_file, context=context)
    memory.memory_remember("Ada owns the lab.", scope="session",
                           projections=[{"predicate": "owns", "arguments": ["ada", "lab"],
                                         "statement": "Ada owns the lab"}])
    with WorkerPool.for_memory(memory, WorkerSettings(workers=1)) as pool:
        recalled = pool.call("memory_recall", {"predicate": "owns"})
        refused = pool.call("materialize", {})
    assert [m["arguments"] for m in recalled.result.structured["memories"]] == [["ada", "lab"]]
    assert refused.code == "permission_denied"
    assert comparable(refused) == comparable(run_call(memory, "materialize", {}))
    start = Start.of(memory)
    assert Start.from_message(decode(json.dumps(start.to_message()).encode())) == start


class Evaluated(BaseException):
    """Raised where an evaluation would start its clock (a BaseException: no handler turns it into a result)."""


@settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_only_tools_flagged_evaluates_run_the_engine(data, tmp_path_factory, monkeypatch):
    """Over the whole registry: a call of a tool not flagged `evaluates` never starts an evaluation (it
    would run in the server process, where nothing stops it from holding the protocol loop)."""
    memory = _fuzz_memory(tmp_path_factory)
    name = data.draw(st.sampled_from(sorted(n for n, t in REGISTRY.items() if not t.evaluates)))
    arguments = data.draw(_arguments(REGISTRY[name], typed=True))
    monkeypatch.setattr(Budget, "_start_clock", _refuse)
    try:
        run_call(memory, name, arguments)
    except Evaluated:
        pytest.fail(f"{name} evaluates but is not flagged evaluates: {arguments}")


def test_every_flagged_tool_does_run_the_engine(store_file, monkeypatch):
    memory = Memory(store_file)
    fill(memory)
    monkeypatch.setattr(Budget, "_start_clock", _refuse)
    ada = memory.memory_search("Ada")["results"][0]["id"]
    for name, arguments in EVALUATING_CALLS + WITHDRAWING_CALLS:
        if arguments in ({"name": "no_such_rule"}, {"pattern": "zz*"}):
            continue  # nothing to remove: nothing to evaluate
        arguments = {k: [ada] if v == ["$ada"] else v for k, v in arguments.items()}
        with pytest.raises(Evaluated):  # stopped at the evaluation before the change: nothing changes
            run_call(memory, name, arguments)


def _refuse(self):
    raise Evaluated


_FUZZ: dict = {}


def _fuzz_memory(factory) -> Memory:
    if "memory" not in _FUZZ:
        memory = Memory(str(factory.mktemp("fuzz") / "memory.db"))
        fill(memory)
        _FUZZ["memory"] = memory
    return _FUZZ["memory"]


# --- the pool's backstops ---------------------------------------------------------------------------
@pytest.fixture(scope="module")
def runaway_db(tmp_path_factory):
    """A store whose closure query runs far past any small budget, and a cross product that grows fast."""
    db = str(tmp_path_factory.mktemp("runaway") / "memory.db")
    with Memory(db) as memory:
        _runaway_rules(memory)
    return db


@pytest.fixture
def runaway(runaway_db):
    memory = Memory(runaway_db, budget=Budget(timeout_s=30, max_tuples=50_000_000, max_memory_mb=4000))
    yield memory
    memory.close()


def _runaway_rules(memory: Memory) -> None:
    memory.add_facts([f"edge({i},{i + 1})" for i in range(3000)])
    memory.define_rule("p(X,Y)", "edge(X,Y)")
    memory.define_rule("p(X,Y)", "p(X,Z), p(Z,Y)")
    memory.add_facts([f"v({i})" for i in range(300)])
    memory.define_rule("c(A,B,C)", "v(A), v(B), v(C)")


def _busy_worker(pool: WorkerPool) -> int:
    with pool._changed:
        return next(w.pid for w in pool._workers if w.busy)


def test_a_worker_past_the_time_limit_is_killed_and_replaced(runaway):
    """The worker's own budget is 30 s; the server's is 0.5 s: the server kills it at its deadline and
    answers budget_exceeded naming the time limit; a fresh worker answers the next call."""
    with WorkerPool.for_memory(runaway, WorkerSettings(workers=1)) as pool:
        assert pool.wait_ready()
        first = pool.pids
        pool.budget = Budget(timeout_s=0.5, max_memory_mb=4000)
        started = time.monotonic()
        outcome = pool.call("query_logic", {"goal": "p(X, Y)"})
        elapsed = time.monotonic() - started
        error = outcome.result.structured["error"]
        assert error["code"] == "budget_exceeded" and error["limit_kind"] == "seconds", error
        assert "DATALOG_MEMORY_TIMEOUT_S" in outcome.result.text
        assert elapsed < 0.5 * 1.1 + 0.1, elapsed  # the constant: thread and process scheduling
        assert not alive(first[0])
        assert pool.call("query_logic", {"goal": "edge(1, X)"}).result.structured["total"] == 1
        assert pool.pids != first


def test_a_worker_over_the_memory_limit_is_killed_and_replaced(runaway):
    """The worker may grow to 4000 MiB by its own budget; the server's limit is 120 MiB: it is killed
    there, with budget_exceeded naming the memory limit and the setting that raises it."""
    with WorkerPool.for_memory(runaway, WorkerSettings(workers=1)) as pool:
        assert pool.wait_ready()
        pool.budget = Budget(timeout_s=30, max_memory_mb=120)
        outcome = pool.call("query_logic", {"goal": "c(A, B, C)"})
        error = outcome.result.structured["error"]
        assert error["code"] == "budget_exceeded" and error["limit_kind"] == "memory_mb", error
        assert error["setting"] == "DATALOG_MEMORY_MAX_MEMORY_MB" and error["setting"] in outcome.result.text
        assert error["reached"] > 120
        assert pool.call("query_logic", {"goal": "edge(1, X)"}).kind == "ok"


def test_a_crashed_worker_fails_its_call_with_a_typed_error(runaway):
    with WorkerPool.for_memory(runaway, WorkerSettings(workers=1)) as pool:
        assert pool.wait_ready()
        token = Cancellation()
        outcomes = []
        caller = threading.Thread(target=lambda: outcomes.append(pool.call("query_logic", {"goal": "p(X, Y)"},
                                                                            token)))
        caller.start()
        time.sleep(0.5)
        os.kill(_busy_worker(pool), signal.SIGSEGV)
        caller.join(10)
        error = outcomes[0].result.structured["error"]
        assert error["code"] == "evaluation_error" and error["reason"] == "worker_exited", error
        assert "signal 11" in error["message"]
        assert pool.call("query_logic", {"goal": "edge(1, X)"}).kind == "ok"


def test_a_cancelled_call_stops_its_worker(runaway):
    """The worker stops at its next budget check; the call ends `cancelled` at once."""
    with WorkerPool.for_memory(runaway, WorkerSettings(workers=1)) as pool:
        assert pool.wait_ready()
        token = Cancellation()
        threading.Timer(0.4, token.cancel).start()
        started = time.monotonic()
        outcome = pool.call("query_logic", {"goal": "p(X, Y)"}, token)
        assert outcome.code == "cancelled"
        assert time.monotonic() - started < 0.4 + 1.0
        assert pool.call("query_logic", {"goal": "edge(1, X)"}).kind == "ok"


def test_a_second_call_does_not_wait_behind_a_long_one_and_idle_extras_exit(runaway):
    with WorkerPool.for_memory(runaway, WorkerSettings(workers=3, idle_s=0.3)) as pool:
        assert pool.call("query_logic", {"goal": "edge(1, X)"}).kind == "ok"  # which starts the spare
        assert pool.wait_ready(workers=2)
        token = Cancellation()
        long = threading.Thread(target=pool.call, args=("query_logic", {"goal": "p(X, Y)"}, token))
        long.start()
        time.sleep(0.3)
        started = time.monotonic()
        assert pool.call("query_logic", {"goal": "edge(1, X)"}).kind == "ok"
        assert not token.cancelled and long.is_alive()  # the long one runs on (its budget is 30 s) ...
        assert time.monotonic() - started < 2  # ... and this one did not wait for it (2 s: a loaded machine)
        token.cancel()
        long.join(5)
        deadline = time.monotonic() + 10
        while len(pool.pids) > pool.warm and time.monotonic() < deadline:
            time.sleep(0.1)
        assert len(pool.pids) == pool.warm == 2
        pids = pool.pids
    assert not any(alive(pid) for pid in pids)  # closing the pool stops every worker


def test_the_protocol_refuses_what_is_not_a_message():
    for line in (b"not json", b"[1]", b'{"no": "type"}', b'{"type": 1}'):
        with pytest.raises(ProtocolError):
            decode(line)
    for message in ({"type": "call", "id": "1", "tool": "x", "elapsed": 0},
                    {"type": "call", "id": 1, "tool": "x", "elapsed": -1},
                    {"type": "call", "id": True, "tool": "x", "elapsed": 0}):
        with pytest.raises(ProtocolError):
            Call.from_message(message)
    good = Start.of(Memory(":memory:")).to_message()
    for broken in ({**good, "type": "call"}, {**good, "budget": {**good["budget"], "max_tuples": 0}},
                   {**good, "context": {**good["context"], "capabilities": [1]}},
                   {**good, "context": {**good["context"], "principal": None}}):
        with pytest.raises(ProtocolError):
            Start.from_message(broken)


def test_worker_settings_come_from_the_environment():
    assert WorkerSettings.from_env({}).workers == 2
    assert WorkerSettings.from_env({"DATALOG_MEMORY_WORKERS": "0"}).workers == 0
    for bad in ("-1", "two", "1000"):
        with pytest.raises(ValueError, match="DATALOG_MEMORY_WORKERS"):
            WorkerSettings.from_env({"DATALOG_MEMORY_WORKERS": bad})
    assert WorkerPool.for_memory(Memory(":memory:")) is None  # no other process can open it


def test_a_worker_keeps_what_it_holds_warm_after_a_successful_call(runaway):
    """Any growth counts here (retire_mb=0): the relations a successful call left warm stay with the worker,
    and the same process answers the next call (replacement after failures: the tests above)."""
    with WorkerPool.for_memory(runaway, WorkerSettings(workers=1, retire_mb=0)) as pool:
        assert pool.wait_ready()
        first = pool.pids
        assert pool.call("query_logic", {"goal": "edge(X, Y), Y > 10"}).result.structured["total"] == 2990
        assert pool.call("query_logic", {"goal": "edge(X, Y), Y > 20"}).result.structured["total"] == 2980
        assert pool.pids == first


def test_workers_evaluate_at_a_lower_priority_than_the_server(runaway):
    """A busy machine gives the server's protocol loop the CPU before an evaluation."""
    from memory.workers.worker import WORKER_NICENESS
    with WorkerPool.for_memory(runaway, WorkerSettings(workers=1)) as pool:
        assert pool.wait_ready()
        (pid,) = pool.pids
        with open(f"/proc/{pid}/stat") as f:
            niceness = int(f.read().rsplit(")", 1)[1].split()[16])
        assert niceness == min(19, os.nice(0) + WORKER_NICENESS)


# --- fairness between callers -------------------------------------------------------------------------
def _slow_goal(k: int) -> str:
    """A join of three 40-fact relations (64,000 rows, ~0.2 s) with no answer; `k` varies the goal."""
    return f"v(A), v(B), v(C), A + B + C =:= -{k}"


class _Watched(FairShare):
    """The pool's fair share, unchanged, logging who waits and who takes a worker (under the pool's lock)."""

    def __init__(self, workers: int) -> None:
        super().__init__(workers)
        self.log: list[tuple[str, object]] = []
        self.flooded = threading.Event()

    def wait(self, ticket) -> None:
        super().wait(ticket)
        self.log.append(("waits", ticket.key))
        if self.running["zed"] == self.workers and len(self.waiting) == 4:
            self.flooded.set()

    def start(self, ticket) -> None:
        super().start(ticket)
        self.log.append(("starts", ticket.key))


def test_a_caller_flooding_the_pool_does_not_starve_another(store_file):
    """zed keeps six slow calls in flight on two workers; bob's quick call comes once zed holds both and has
    four waiting. zed alone uses every worker; bob's call then takes the next one freed, before any of zed's
    waiting calls, and is answered while most of zed's calls are still to end (before, whichever waiting thread
    took the lock first won: mostly zed's, asking again at once)."""
    memory = Memory(store_file, budget=Budget(timeout_s=10, max_memory_mb=1000))
    memory.add_facts([f"v({i})" for i in range(40)] + ["bob_secret(42)"])
    zed, bob = (CallerContext(principal=p, capabilities=DEFAULT_CAPABILITIES) for p in ("zed", "bob"))
    answers: list[str] = []
    goals = iter(range(1, 1000))
    lock = threading.Lock()

    def flood(pool: WorkerPool) -> None:
        for _ in range(2):
            with lock:
                goal = _slow_goal(next(goals))
            outcome = pool.call("query_logic", {"goal": goal}, context=zed)
            with lock:
                answers.append(f"zed {outcome.kind}")

    with WorkerPool.for_memory(memory, WorkerSettings(workers=2)) as pool:
        assert pool.wait_ready(workers=2)
        share = pool._fair = _Watched(2)
        flooders = [threading.Thread(target=flood, args=(pool,)) for _ in range(6)]
        for thread in flooders:
            thread.start()
        assert share.flooded.wait(30)  # zed alone: both workers, and four calls waiting
        answer = pool.call("query_logic", {"goal": "bob_secret(X)"}, context=bob)
        with lock:
            answers.append("bob answered")
        for thread in flooders:
            thread.join(60)
    memory.close()
    assert answer.kind == "ok" and answer.result.structured["total"] == 1
    assert answers.count("zed ok") == 12, answers
    log = share.log
    came, began = log.index(("waits", "bob")), log.index(("starts", "bob"))
    assert ("starts", "zed") not in log[came:began], log  # the next worker freed went to bob
    assert len(answers) - answers.index("bob answered") - 1 >= 8, answers  # zed's calls answered after bob's
