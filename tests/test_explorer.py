"""The explorer over plain HTTP, in process (Starlette's test client): the token, read-only methods, the host
check, escaping, paging, what each page shows, and that another project's principal sees none of the first
project's memories. The browser tests (test_explorer_browser.py) drive the same pages in Chromium."""

from __future__ import annotations

import html
import re
import shutil

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from starlette.testclient import TestClient

from conftest import snapshot_counts
from explorer_scenario import (ALICE, BOB, BOB_TEXT, MARKUP_FACT, NEW_WINDOW, OLD_WINDOW, PAGED, RULE_TEXTS,
                               SOURCE_TEXT, build, context)
from memory import Memory
from memory.errors import PermissionDenied
from memory.explorer import build_app, read_only
from memory.explorer.graph import KINDS, NODE_H, NODE_W, Edge, layers, layout, rule_edges
from memory.explorer.html import Markup, escape, h, url
from memory.explorer.pages import PAGES, View
from memory.access.context import READ
from memory.tools import call_tool

TOKEN = "test-token-0123456789"
PAGES_TO_VISIT = ["/", "/facts", "/facts?functor=item&arity=1&offset=50", "/query?goal=risky(X)",
                  "/why?fact=risky(deploy_v3)", "/beliefs", "/beliefs?assumption=infra_healthy", "/memories",
                  "/memories?q=deploys&history=1", "/observations", "/observations?entity=host:c2", "/audit",
                  "/audit?actor=alice&operation=define_rule", "/facts?functor=alert&arity=2", "/facts?functor=risky",
                  "/beliefs?assumption=ci_outage", "/observations?formation=DRONE_EVENT&per=hour"]


@pytest.fixture(scope="module")
def scenario(tmp_path_factory):
    return build(str(tmp_path_factory.mktemp("explorer") / "memory.db"))


def explorer(db: str, env: dict, token: str = TOKEN) -> tuple[TestClient, Memory]:
    memory = Memory(db, context=read_only(context(env)))
    # Every page lives under /<token>/: the client's base carries it, as the printed link does.
    return TestClient(build_app(memory, token), base_url=f"http://127.0.0.1/{token}"), memory


@pytest.fixture
def alice(scenario):
    client, memory = explorer(scenario.db, ALICE)
    assert client.get(f"/?token={TOKEN}").status_code == 200  # sets the cookie
    yield client
    memory.close()


@pytest.fixture(scope="module")
def alice_view_client(scenario):
    """Alice's explorer for a whole module (hypothesis runs many examples in one test)."""
    client, memory = explorer(scenario.db, ALICE)
    client.get(f"/?token={TOKEN}")
    yield client
    memory.close()


@pytest.fixture
def bob(scenario):
    client, memory = explorer(scenario.db, BOB)
    assert client.get(f"/?token={TOKEN}").status_code == 200
    yield client
    memory.close()


def cells(page: str, table_class: str) -> list[list[str]]:
    """The text of each body row of the table with this class."""
    found = re.search(rf'<table class="{table_class}">.*?<tbody>(.*?)</tbody>', page, re.S)
    assert found, f"no table {table_class}"
    return [[html.unescape(re.sub(r"<[^>]+>", "", c)).strip() for c in re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)]
            for row in re.findall(r"<tr[^>]*>(.*?)</tr>", found.group(1), re.S)]


# --- access -------------------------------------------------------------------------------------------------
def test_every_request_needs_the_token_and_a_refusal_reveals_nothing(scenario):
    """The token is the first path segment, on every request; nothing else stands for it (no query parameter,
    no cookie: a browser sends a host's cookies to every port on it, so another local server would get it)."""
    memory = Memory(scenario.db, context=read_only(context(ALICE)))
    client = TestClient(build_app(memory, TOKEN), base_url="http://127.0.0.1")
    for path in [*PAGES, f"/memories/{scenario.alice_memory}", "/static/explorer.css"]:
        for attempt in (path, f"/not-it{path}", f"/{TOKEN.upper()}{path}", f"{path}?token={TOKEN}",
                        f"/{TOKEN[:-1]}{path}", f"/x/{TOKEN}{path}"):
            for headers in ({}, {"cookie": f"datalog_memory_explorer={TOKEN}"}):
                refused = client.get(attempt, headers=headers)
                assert refused.status_code == 403 and refused.text == "Forbidden", attempt
        assert client.post(path, content=b"x").status_code == 403  # refused before the method is even looked at
    first = client.get(f"/{TOKEN}/")
    assert first.status_code == 200 and "critical/1" in first.text and "set-cookie" not in first.headers
    assert f'href="/{TOKEN}/audit"' in first.text and f'href="/{TOKEN}/static/explorer.css"' in first.text
    assert client.get(f"/{TOKEN}").status_code == 200 and client.get(f"/{TOKEN}/audit").status_code == 200
    memory.close()


def test_only_get_and_head_exist_and_nothing_is_written(scenario, alice):
    before = snapshot_counts(Memory(scenario.db))
    for path in [*PAGES, f"/memories/{scenario.alice_memory}", "/nowhere"]:
        for method in ("POST", "PUT", "DELETE", "PATCH", "OPTIONS"):
            answer = alice.request(method, path + "?goal=x", content=b"fact=evil(1)")
            assert answer.status_code == 405 and answer.headers["allow"] == "GET, HEAD", (method, path)
        assert alice.head(path).status_code in (200, 404)
    for path in PAGES_TO_VISIT + [f"/memories/{scenario.alice_memory}", f"/memories/{scenario.old_window}"]:
        assert alice.get(path).status_code == 200, path
    assert snapshot_counts(Memory(scenario.db)) == before


def test_a_foreign_host_header_is_refused(alice):
    """A page on another origin rebinding its name to 127.0.0.1 sends its own Host: refused, token or not."""
    assert alice.get(f"/?token={TOKEN}", headers={"host": "evil.example"}).status_code == 403
    assert alice.get("/", headers={"host": "localhost"}).status_code == 200


def test_the_explorer_holds_no_capability_but_reading(scenario):
    wide = context(ALICE)
    assert len(wide.capabilities) > 1
    narrowed = read_only(wide)
    assert narrowed.capabilities == frozenset({READ}) and narrowed.principal == "alice"
    assert read_only(context({**ALICE, "DATALOG_MEMORY_CAPABILITIES": ""})).capabilities == frozenset()
    memory = Memory(scenario.db, context=narrowed)
    view = View(memory)
    with pytest.raises(PermissionError):
        view.tool("remember_fact", fact="evil(1)")
    with pytest.raises(PermissionError):
        view.tool("explain_why", fact="risky(deploy_v3)", record_proof=True)
    with pytest.raises(PermissionDenied):  # and the registry itself refuses every write for this context
        call_tool(memory, "remember_fact", {"fact": "evil(1)"})
    memory.close()


def test_security_headers_forbid_scripts_and_framing(alice):
    answer = alice.get("/")
    policy = answer.headers["content-security-policy"]
    assert "default-src 'none'" in policy and "script-src" not in policy and "frame-ancestors 'none'" in policy
    assert answer.headers["referrer-policy"] == "no-referrer" and answer.headers["cache-control"] == "no-store"
    assert "<script" not in answer.text.lower()


# --- escaping -----------------------------------------------------------------------------------------------
def test_markup_in_an_atom_or_a_parameter_is_shown_as_text(alice):
    page = alice.get("/facts?functor=note&arity=1").text
    assert "<script>" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert [MARKUP_FACT] == [row[0] for row in cells(page, "facts")]
    asked = alice.get("/query", params={"goal": 'x("><script>alert(2)</script>)'})
    assert "<script>" not in asked.text and "&lt;script&gt;alert(2)" in asked.text
    why = alice.get("/why", params={"fact": MARKUP_FACT}).text
    assert "<script>" not in why and "&lt;script&gt;" in why


# Characters that matter to HTML, to Prolog and to URLs, with a few from far planes. A sampled alphabet, not
# st.text(): hypothesis builds its Unicode tables once per process, which costs seconds on a fresh home.
TRICKY = [*"<>&\"'`=/\\;:,.()[]{}%#?+-_ \t\n\r\x00\x7f", *"aZ09éß€\u2028\u202e\ufeff😀", "&amp;", "<script>"]
TEXT = st.lists(st.sampled_from(TRICKY), max_size=30).map("".join)


@given(TEXT)
@settings(max_examples=100, deadline=None)
def test_escaped_text_is_the_same_text_and_never_markup(value):
    out = escape(value)
    assert html.unescape(out) == value
    assert not set(out) & set("<>\"'")
    assert html.unescape(h("a", {"title": value}, value)) == f'<a title="{value}">{value}</a>'
    assert isinstance(Markup("<b>") + value, Markup) and "<" not in (Markup("") + value)


def test_links_are_local_and_their_arguments_encoded():
    assert url("/why", fact="p(a, 'b&c')") == "/why?fact=p%28a%2C+%27b%26c%27%29"
    for bad in ("http://evil.example/", "//evil.example/", "javascript:alert(1)"):
        with pytest.raises(ValueError):
            url(bad)


# --- paging and filters -------------------------------------------------------------------------------------
def test_facts_are_paged(alice):
    first = alice.get("/facts?functor=item&arity=1").text
    assert [r[0] for r in cells(first, "facts")] == [f"item(i{n:03d})" for n in range(50)]
    assert f"1–50 of {PAGED}" in first and "offset=50" in first and "previous" not in first
    last = alice.get("/facts?functor=item&arity=1&offset=100").text
    assert [r[0] for r in cells(last, "facts")] == [f"item(i{n:03d})" for n in range(100, PAGED)]
    assert "next →" not in last and "offset=50" in last
    for offset in ("-1", "²", "1e3", "9" * 20):
        bad = alice.get("/facts", params={"offset": offset})
        assert bad.status_code == 400 and ("whole number" in bad.text or "too long" in bad.text), offset


def test_audit_is_filtered_by_actor_operation_and_time(scenario, alice):
    everything = cells(alice.get("/audit").text, "audit")
    assert {row[2] for row in everything} == {"alice", "bob"}  # bob's fact is shared knowledge; his memory is not
    assert scenario.bob_memory not in alice.get("/audit").text
    assert [row[3] for row in cells(alice.get("/audit?actor=bob").text, "audit")] == ["remember_fact"]
    rules = cells(alice.get("/audit?operation=define_rule").text, "audit")
    assert len(rules) == len(RULE_TEXTS) and {row[3] for row in rules} == {"define_rule"}
    later = cells(alice.get("/audit", params={"since": scenario.cutoff}).text, "audit")
    assert later and all(row[1] >= scenario.cutoff for row in later)
    assert {row[3] for row in later} >= {"memory_remember", "import_facts"} and "define_rule" not in \
        {row[3] for row in later}
    earlier = cells(alice.get("/audit", params={"until": scenario.cutoff}).text, "audit")
    assert len(earlier) + len(later) == len(everything)
    page = alice.get("/audit?operation=define_rule").text
    assert f'href="/{TOKEN}/#rule-1"' in page
    remembered = alice.get("/audit?operation=memory_remember").text
    assert f'href="/{TOKEN}/memories/{scenario.alice_memory}"' in remembered
    assert alice.get("/audit?since=yesterday").status_code == 400


def test_bob_sees_his_own_audit_rows_and_not_alices_memories(scenario, bob):
    rows = cells(bob.get("/audit").text, "audit")
    assert {"bob", "alice"} == {row[2] for row in rows}  # alice's knowledge writes are shared knowledge
    page = bob.get("/audit").text
    assert scenario.bob_memory in page and scenario.alice_memory not in page and scenario.new_window not in page


# --- what the pages show ------------------------------------------------------------------------------------
def test_knowledge_page_lists_predicates_rules_graph_and_segments(alice):
    page = alice.get("/").text
    predicates = {row[0]: row for row in cells(page, "predicates")}
    assert predicates["item/1"][2] == str(PAGED) and predicates["risky/1"][1] == "both"
    assert predicates["alert/2"][1] == "rule"
    graph = re.search(r'<svg class="graph".*?</svg>', page, re.S).group(0)
    assert graph.count("<rect") == len(rule_edges(RULE_TEXTS)[0])
    assert 'class="edge positive back"' in graph  # the recursive rule's loop
    assert cells(page, "segments")[0][:3] == ["default", "project", "yes"]


def test_a_proof_leads_to_the_memory_and_its_exact_text(scenario, alice):
    answers = alice.get("/query?goal=risky(X)").text
    assert "deploy_v3" in [row[0] for row in cells(answers, "answers")]
    assert f'href="/{TOKEN}/why?fact=risky%28deploy_v3%29"' in answers
    anonymous = alice.get("/query?goal=touches(X, _), critical(_)").text
    assert f'href="/{TOKEN}/why?fact=touches%28deploy_v3%2C' not in anonymous
    assert cells(anonymous, "answers")[0][0] == "deploy_v3"
    both = alice.get("/query", params={"goal": "touches(X, Y), critical(Y)"}).text
    assert "why touches(deploy_v3, billing_db)" in both and "why critical(billing_db)" in both
    proof = alice.get("/why?fact=risky(deploy_v3)").text
    assert "<details open" in proof and html.escape(SOURCE_TEXT) in proof
    assert f'href="/{TOKEN}/memories/{scenario.alice_memory}"' in proof and "asserted" in proof
    page = alice.get(f"/memories/{scenario.alice_memory}").text
    assert f'<pre class="source-text">{html.escape(SOURCE_TEXT)}</pre>' in page


def test_a_proof_shows_observations_with_tag_and_time(scenario, alice):
    # A rule over observations, defined in a copy of the store so the shared scenario stays as it is.
    db = scenario.db.replace("memory.db", "observed.db")
    shutil.copy(scenario.db, db)
    writer = Memory(db, context=context(ALICE))
    call_tool(writer, "define_rule", {"head": "seen_with(A, B)", "body": "hedge(E, _, _, _), member(E, A), "
                                      "member(E, B), A == 'host:c2', B \\== A"})
    writer.close()
    client, memory = explorer(db, ALICE)
    page = client.get("/why", params={"token": TOKEN, "fact": "seen_with('host:c2', 'account:spoke')"}).text
    memory.close()
    assert "observation" in page and re.search(rf'href="/{TOKEN}/observations\?tag=HEDGE-\d+">HEDGE-\d+</a> at 2026-', page)


def test_beliefs_dry_run_says_what_would_go_and_retracts_nothing(scenario, alice):
    before = snapshot_counts(Memory(scenario.db))
    page = alice.get("/beliefs?assumption=infra_healthy").text
    assert cells(page, "assumptions") == [["infra_healthy", "2", "what rests on it"],
                                          ["ci_outage", "1", "what rests on it"]]
    gone = re.search(r'<ul class="gone">(.*?)</ul>', page, re.S).group(1)
    kept = re.search(r'<ul class="kept">(.*?)</ul>', page, re.S).group(1)
    assert "available(server_a)" in gone and "server_b" not in gone
    assert "available(server_b)" in kept and "asserted" in kept
    assert snapshot_counts(Memory(scenario.db)) == before


def test_beliefs_dry_run_is_what_retracting_removes(scenario, alice):
    """The dry run's list of what would go is exactly what retract_assumption removes (on a copy)."""
    gone = re.search(r'<ul class="gone">(.*?)</ul>', alice.get("/beliefs?assumption=infra_healthy").text, re.S).group(1)
    db = scenario.db.replace("memory.db", "retracted.db")
    shutil.copy(scenario.db, db)
    writer = Memory(db, context=context(ALICE))
    removed = call_tool(writer, "retract_assumption", {"assumption": "infra_healthy"}).structured["removed"]
    writer.close()
    assert removed and len(re.findall(r"<li", gone)) == len(removed)
    assert all(html.escape(fact) in gone for fact in removed)


def test_memories_page_search_history_and_as_of(scenario, alice):
    listed = alice.get("/memories").text
    assert scenario.alice_memory in listed and scenario.new_window in listed
    assert scenario.old_window not in listed  # superseded: not current
    found = cells(alice.get("/memories?q=deploys&history=1").text, "memories")
    # "deploys" finds every form of the word: the v3 deploy's memory too
    assert {row[0] for row in found} == {scenario.old_window, scenario.new_window, scenario.alice_memory}
    assert {row[1] for row in found} == {"project"}
    assert "No memory matches." in alice.get("/memories?q=deploys&history=1&scope=session").text
    assert alice.get("/memories?q=deploys&scope=elsewhere").status_code == 400
    old = alice.get(f"/memories/{scenario.old_window}").text
    assert html.escape(OLD_WINDOW) in old and f'href="/{TOKEN}/memories/{scenario.new_window}"' in old
    assert "superseded" in [row[1] for row in cells(old, "history")]
    new = alice.get(f"/memories/{scenario.new_window}").text
    assert f'href="/{TOKEN}/memories/{scenario.old_window}"' in new and html.escape(NEW_WINDOW) in new
    before = alice.get(f"/memories/{scenario.old_window}", params={"as_of": scenario.cutoff}).text
    assert alice.get(f"/memories/{scenario.old_window}", params={"as_of": scenario.cutoff}).status_code == 404
    assert "so it did not exist then" in before  # recorded after as_of, and readable by alice: said why
    assert alice.get(f"/memories/{scenario.old_window}?as_of=not-a-date").status_code == 400
    listed_then = alice.get("/memories", params={"as_of": "2000-01-01T00:00:00Z"}).text  # the list honours as_of too
    assert "No memories you may read." in listed_then and scenario.alice_memory not in listed_then
    assert scenario.alice_memory in alice.get("/memories").text


def test_observations_timeline_filters_and_marks_detect_findings(alice):
    page = alice.get("/observations").text
    findings = cells(page, "findings")
    assert {"hub", "burst", "dense_cluster"} <= {row[0] for row in findings}
    hub = cells(alice.get("/observations?entity=host:c2").text, "timeline")
    assert hub and all("host:c2" in row[3] for row in hub) and "hub" in hub[0][5]
    times = [row[0] for row in hub]
    assert times == sorted(times, reverse=True)
    one = cells(alice.get("/observations?tag=HEDGE-1").text, "timeline")
    assert [row[1] for row in one] == ["HEDGE-1"]


def test_bad_input_is_a_clear_error_page(alice):
    broken = alice.get("/query", params={"goal": "risky(X"})
    assert broken.status_code == 400 and "SyntaxError" in broken.text
    assert alice.get("/memories/mem_nope").status_code == 404
    assert alice.get("/facts", params={"functor": "x" * 300}).status_code == 400


# --- another project's principal ----------------------------------------------------------------------------
def test_another_projects_principal_sees_none_of_its_memories(scenario, bob):
    alice_ids = (scenario.alice_memory, scenario.old_window, scenario.new_window)
    alice_texts = [html.escape(t) for t in (SOURCE_TEXT, OLD_WINDOW, NEW_WINDOW)]
    for path in PAGES_TO_VISIT + ["/memories?q=deploy&history=1", "/memories?q=invoices", "/facts?functor=touches"]:
        page = bob.get(path).text
        assert not any(i in page for i in alice_ids) and not any(t in page for t in alice_texts), path
    mine = bob.get("/memories").text
    assert scenario.bob_memory in mine and html.escape(BOB_TEXT) in mine
    hidden, unknown = (bob.get(f"/memories/{i}") for i in (scenario.alice_memory, "mem_00000000-0000"))
    assert hidden.status_code == unknown.status_code == 404
    assert hidden.text.replace(scenario.alice_memory, "X") == unknown.text.replace("mem_00000000-0000", "X")
    assert "No proof" in bob.get("/why?fact=risky(deploy_v3)").text  # it rests on alice's memory
    assert "touches/2" not in [row[0] for row in cells(bob.get("/").text, "predicates")]  # the rule still uses it


# --- the graph layout ---------------------------------------------------------------------------------------
@given(st.lists(st.tuples(st.integers(0, 12), st.integers(0, 12)), max_size=40))
@settings(max_examples=100, deadline=None)
def test_layers_put_what_a_predicate_uses_left_of_it(pairs):
    """On any graph (cycles included): every node gets a layer; an edge not closing a cycle goes rightwards."""
    nodes = sorted({f"p{n}/0" for pair in pairs for n in pair})
    edges = [Edge(f"p{a}/0", f"p{b}/0") for a, b in pairs]
    layer = layers(nodes, edges)
    assert set(layer) == set(nodes)
    acyclic = all(a < b for a, b in pairs)  # sources below targets: no cycle anywhere
    if acyclic:
        assert all(layer[e.source] < layer[e.target] for e in edges)


# --- the command ----------------------------------------------------------------------------------------------
def test_explore_on_a_busy_port_fails_with_one_line(scenario):
    import socket

    from surfaces import cli

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        ran = cli(scenario.db, "explore", "--port", str(taken.getsockname()[1]))
    assert ran.returncode == 1 and ran.stderr.startswith("Error: cannot listen on 127.0.0.1:")
    assert "Traceback" not in ran.stderr and "token" not in ran.stdout
    assert cli(scenario.db, "explore", "--port", "70000").returncode == 2


def test_detect_is_computed_again_only_when_the_store_changed(scenario):
    db = scenario.db.replace("memory.db", "detect.db")
    shutil.copy(scenario.db, db)
    memory = Memory(db, context=read_only(context(ALICE)))
    view = View(memory)
    first = view.detect()
    assert view.detect() is first  # nothing changed: the same findings, not a second scan
    writer = Memory(db, context=context(ALICE))
    writer.remember(["host:new", "user:new"], event_ts=1_780_000_000)
    writer.close()
    again = view.detect()
    assert again is not first and again["summary"]["edges_scanned"] == first["summary"]["edges_scanned"] + 1
    memory.close()


PARAMETERS = ["memory", "functor", "arity", "offset", "goal", "fact", "depth", "assumption", "q", "as_of", "history",
              "scope", "entity", "tag", "actor", "operation", "since", "until", "formation", "per"]


@given(path=st.sampled_from(sorted(PAGES)), params=st.dictionaries(
    st.sampled_from(PARAMETERS), TEXT,
    max_size=3))
@settings(max_examples=80, deadline=None)
def test_any_parameters_give_a_page_or_a_clear_refusal_never_a_crash(alice_view_client, path, params):
    """Whatever a link or a hand-edited URL carries: 200, or 400/404/422 with the error's line; never a 500, and
    nothing from the parameters comes back as markup."""
    answer = alice_view_client.get(path, params=params)
    assert answer.status_code in (200, 400, 404, 422), (path, params, answer.text[-300:])
    if answer.status_code != 200:
        assert '<p class="error">' in answer.text
    assert "<script" not in answer.text.lower()


def test_the_audit_log_hides_edits_of_a_fact_the_viewer_cannot_see(scenario):
    """Alice's forget_fact on a fact resting only on her project's memory leaves it stored (still supported)
    and writes an audit row naming it: bob, who cannot see the fact, does not see that row either."""
    db = scenario.db.replace("memory.db", "edited.db")
    shutil.copy(scenario.db, db)
    writer = Memory(db, context=context(ALICE))
    kept = call_tool(writer, "forget_fact", {"fact": "touches(deploy_v3, billing_db)"}).structured
    assert kept["removed"] is False
    call_tool(writer, "forget_fact", {"fact": "critical(billing_db)"})  # gone for everyone: a row everyone sees
    writer.close()
    shown = {}
    for who, env in (("alice", ALICE), ("bob", BOB)):
        client, memory = explorer(db, env)
        shown[who] = [row[5] for row in cells(client.get(f"/audit?token={TOKEN}&operation=forget_fact").text, "audit")]
        memory.close()
    assert shown["alice"] == ["forgot critical(billing_db) (no support left: removed)",
                              "forgot touches(deploy_v3, billing_db) (still supported)"]
    assert shown["bob"] == ["forgot critical(billing_db) (no support left: removed)"]


def test_another_principals_materialize_count_is_not_shown(scenario):
    """Alice's materialize counts conclusions over what she sees, her project's memories included: bob's audit
    page showed "materialized 3 conclusion(s)" though he can derive none of them. Her own page still shows it."""
    db = scenario.db.replace("memory.db", "materialized.db")
    shutil.copy(scenario.db, db)
    writer = Memory(db, context=context(ALICE))
    call_tool(writer, "materialize", {})
    writer.close()
    shown = {}
    for who, env in (("alice", ALICE), ("bob", BOB)):
        client, memory = explorer(db, env)
        shown[who] = cells(client.get("/audit", params={"operation": "materialize"}).text, "audit") \
            if "materialize" in client.get("/audit").text else []
        memory.close()
    assert [row[2] for row in shown["alice"]] == ["alice"] and "conclusion" in shown["alice"][0][5]
    assert shown["bob"] == []


def test_a_principal_without_memory_read_sees_nothing(scenario):
    client, memory = explorer(scenario.db, {**ALICE, "DATALOG_MEMORY_CAPABILITIES": "memory_write_session"})
    client.get(f"/?token={TOKEN}")
    for path in PAGES_TO_VISIT + [f"/memories/{scenario.alice_memory}"]:
        answer = client.get(path)
        assert answer.status_code == 403 and "PermissionDenied" in answer.text, path
        assert "critical" not in answer.text and SOURCE_TEXT not in answer.text and "HEDGE-" not in answer.text
    memory.close()


# --- derived knowledge ----------------------------------------------------------------------------------------
def test_a_rule_defined_predicate_lists_its_answers_each_with_its_proof(alice):
    """alert/2 has no stored fact: its page lists what it holds for, derived, each linked to its proof."""
    page = alice.get("/facts?functor=alert&arity=2").text
    assert "No facts match" not in page and "0–0 of 0" not in page
    rows = cells(page, "derived")
    assert [r[:2] for r in rows] == [["alert(deploy_v2, 0)", "derived"], ["alert(deploy_v3, 1)", "derived"],
                                     ["alert(legacy_app, 0)", "derived"]]
    assert f'href="/{TOKEN}/why?fact=alert%28deploy_v3%2C+1%29"' in page and "No stored facts" in page
    proof = alice.get("/why", params={"fact": "alert(deploy_v3, 1)"}).text
    assert "<details open" in proof and "needs_review(deploy_v3)" in proof


def test_a_predicate_with_rules_and_stored_facts_marks_each_answer(alice):
    page = alice.get("/facts?functor=risky&arity=1").text
    marked = {r[0]: r[1] for r in cells(page, "derived")}
    assert marked == {"risky(deploy_v2)": "derived", "risky(deploy_v3)": "derived", "risky(legacy_app)": "stored"}
    assert [r[0] for r in cells(page, "facts")] == ["risky(legacy_app)"]  # and the stored one again, as stored


def test_derived_answers_are_paged(alice):
    first = alice.get("/facts?functor=stock&arity=1").text
    assert [r[0] for r in cells(first, "derived")] == [f"stock(i{n:03d})" for n in range(50)]
    assert f"1–50 of {PAGED}" in first
    last = alice.get("/facts?functor=stock&arity=1&offset=100").text
    assert [r[0] for r in cells(last, "derived")] == [f"stock(i{n:03d})" for n in range(100, PAGED)]


def test_every_graph_node_link_opens_a_page_that_is_not_empty(alice):
    """Clicking any box of the rule graph shows something that holds: stored facts or derived answers."""
    page = alice.get("/").text
    graph = re.search(r'<svg class="graph".*?</svg>', page, re.S).group(0)
    for href in sorted(set(re.findall(r'<a href="([^"]+)"', graph))):
        opened = alice.get(html.unescape(href).removeprefix(f"/{TOKEN}")).text
        assert "No facts match" not in opened and ("<table class=\"derived\">" in opened or
                                                   "<table class=\"facts\">" in opened), href


# --- the rule graph's geometry --------------------------------------------------------------------------------
def _attrs(tag: str) -> dict[str, str]:
    return {k: html.unescape(v) for k, v in re.findall(r'([\w-]+)="([^"]*)"', tag)}


def _crosses(p: tuple, q: tuple, box: tuple) -> bool:
    """Whether segment p-q passes through the inside of box (x, y, w, h), shrunk by half a pixel (Liang-Barsky)."""
    x, y, w, hh = box
    low, high = 0.0, 1.0
    dx, dy = q[0] - p[0], q[1] - p[1]
    for step, room in ((-dx, p[0] - (x + .5)), (dx, (x + w - .5) - p[0]), (-dy, p[1] - (y + .5)),
                       (dy, (y + hh - .5) - p[1])):
        if step == 0:
            if room < 0:
                return False
        elif step < 0:
            low = max(low, room / step)
        else:
            high = min(high, room / step)
    return low < high


def _on_border(point: tuple, box: tuple) -> bool:
    x, y, w, hh = box
    inside = x - .01 <= point[0] <= x + w + .01 and y - .01 <= point[1] <= y + hh + .01
    return inside and min(abs(point[0] - x), abs(point[0] - x - w), abs(point[1] - y), abs(point[1] - y - hh)) < .01


def check_geometry(boxes: dict[str, tuple], paths: list[tuple[str, str, list[tuple]]]) -> None:
    """No edge segment passes through a box the edge does not connect; each edge starts and ends on the borders
    of its two boxes; no two boxes overlap."""
    for source, target, points in paths:
        assert _on_border(points[0], boxes[source]) and _on_border(points[-1], boxes[target]), (source, target)
        for p, q in zip(points, points[1:]):
            for node, box in boxes.items():
                if node not in (source, target):
                    assert not _crosses(p, q, box), (source, target, node, p, q)
    placed = list(boxes.values())
    for i, (x, y, w, hh) in enumerate(placed):
        for (x2, y2, w2, h2) in placed[i + 1:]:
            assert x + w <= x2 or x2 + w2 <= x or y + hh <= y2 or y2 + h2 <= y


def svg_geometry(svg: str) -> tuple[dict[str, tuple], list[tuple[str, str, list[tuple]]]]:
    boxes = {}
    for tag in re.findall(r"<rect [^>]*>", svg):
        a = _attrs(tag)
        boxes[a["data-node"]] = (float(a["x"]), float(a["y"]), float(a["width"]), float(a["height"]))
    paths = []
    for tag in re.findall(r"<path [^>]*data-source[^>]*>", svg):
        a = _attrs(tag)
        points = [tuple(map(float, p.split(","))) for p in re.findall(r"[ML](-?[\d.]+,-?[\d.]+)", a["d"])]
        paths.append((a["data-source"], a["data-target"], points))
    return boxes, paths


def test_no_edge_of_the_knowledge_graph_passes_under_a_box(alice):
    """The reported drawing: needs_review/1 uses approved/1 two layers away, past risky/1's column."""
    svg = re.search(r'<svg class="graph".*?</svg>', alice.get("/").text, re.S).group(0)
    boxes, paths = svg_geometry(svg)
    assert len(paths) == len(rule_edges(RULE_TEXTS)[1])
    check_geometry(boxes, paths)
    approved = next(points for s, t, points in paths if (s, t) == ("approved/1", "needs_review/1"))
    assert len(approved) > 2  # it bends through a slot of its own in risky/1's layer


@given(st.lists(st.tuples(st.integers(0, 9), st.integers(0, 9), st.sampled_from(KINDS)), min_size=1, max_size=30))
@settings(max_examples=80, deadline=None)
def test_no_edge_passes_under_a_box_on_any_graph(triples):
    edges = list(dict.fromkeys(Edge(f"p{a}/1", f"p{b}/1", kind) for a, b, kind in triples))
    nodes = list(dict.fromkeys(n for e in edges for n in (e.source, e.target)))
    drawn = layout(nodes, edges)
    boxes = {n: (x, y, NODE_W, NODE_H) for n, (x, y) in drawn.boxes.items()}
    assert len(drawn.paths) == len(edges)
    check_geometry(boxes, [(e.source, e.target, points) for e, points, _ in drawn.paths])
    assert all(x + NODE_W <= drawn.width and y + NODE_H <= drawn.height for x, y in drawn.boxes.values())


def test_negated_and_aggregate_dependencies_are_drawn_differently_with_a_legend(alice):
    nodes, edges = rule_edges(["a(X) :- b(X), \\+ c(X), not(d(X))", "e(N) :- aggregate_all(count, f(_), N)",
                               "g(X) :- b(X), aggregate_all(count, \\+ h(X), N), N > 0"])
    kinds = {(e.source, e.target): e.kind for e in edges}
    assert kinds == {("b/1", "a/1"): "positive", ("c/1", "a/1"): "negated", ("d/1", "a/1"): "negated",
                     ("f/1", "e/1"): "aggregate", ("b/1", "g/1"): "positive", ("h/1", "g/1"): "negated"}
    page = alice.get("/").text
    svg = re.search(r'<svg class="graph".*?</svg>', page, re.S).group(0)
    classes = {(a["data-source"], a["data-target"]): a["class"]
               for a in map(_attrs, re.findall(r"<path [^>]*data-source[^>]*>", svg))}
    assert classes[("approved/1", "needs_review/1")] == "edge negated"
    assert classes[("touches/2", "alert/2")] == "edge aggregate" and classes[("risky/1", "needs_review/1")] == \
        "edge positive"
    assert "needs_review/1 uses under negation" in svg and 'marker-end="url(#arrow-negated)"' in svg
    legend = re.search(r'<ul class="legend">(.*?)</ul>', page, re.S).group(1)
    assert "negation" in legend and "aggregate_all" in legend and "edge negated" in legend


# --- the dry run ---------------------------------------------------------------------------------------------
def test_the_dry_run_lists_every_conclusion_that_would_stop_holding(scenario, alice):
    """Retracting ci_outage removes untested(deploy_v2) and with it risky, needs_review and alert of deploy_v2:
    the dry run lists exactly what retract_assumption then reports as withdrawn (on a copy); nothing is written."""
    before = snapshot_counts(Memory(scenario.db))
    page = alice.get("/beliefs?assumption=ci_outage").text
    gone = re.findall(r"<li>(.*?)</li>", re.search(r'<ul class="gone">(.*?)</ul>', page, re.S).group(1))
    withdrawn = re.findall(r"<li>(.*?)</li>", re.search(r'<ul class="withdrawn">(.*?)</ul>', page, re.S).group(1))
    text = lambda items: [html.unescape(re.sub(r"<[^>]+>", "", i)) for i in items]  # noqa: E731
    assert text(gone) == ["untested(deploy_v2)"]
    assert text(withdrawn) == ["alert(deploy_v2, 0)", "needs_review(deploy_v2)", "risky(deploy_v2)"]
    assert "Conclusions that would stop holding (3)" in page
    assert snapshot_counts(Memory(scenario.db)) == before
    db = scenario.db.replace("memory.db", "ci.db")
    shutil.copy(scenario.db, db)
    writer = Memory(db, context=context(ALICE))
    done = call_tool(writer, "retract_assumption", {"assumption": "ci_outage"}).structured
    writer.close()
    assert done["removed"] == text(gone) and done["withdrawn"] == text(withdrawn)
    nothing = alice.get("/beliefs?assumption=infra_healthy").text  # available/1: no rule reads it
    assert "Conclusions that would stop holding (0)" in nothing
    unknown = alice.get("/beliefs?assumption=no_such_thing").text
    assert "supports anything here: retracting it would change nothing" in unknown and "Would go" not in unknown


# --- empty inputs --------------------------------------------------------------------------------------------
def test_an_empty_field_shows_an_example_never_a_value(alice):
    """Every placeholder reads as an example ("e.g. ...") and empty fields carry no value; the stylesheet makes
    placeholders grey and italic (the browser test checks the rendering)."""
    for path in ("/", "/facts", "/query", "/why", "/memories", "/observations", "/audit", "/memories?as_of="):
        for tag in re.findall(r"<input [^>]*>", alice.get(path).text):
            a = _attrs(tag)
            if "placeholder" in a:
                assert a["placeholder"].startswith("e.g. ") and a["value"] == "", (path, tag)
    css = alice.get("/static/explorer.css").text
    assert re.search(r"::placeholder \{[^}]*font-style: italic", css)


# --- observations: the pictures ------------------------------------------------------------------------------
def _svg(page: str, cls: str) -> str:
    return re.search(rf'<svg class="{cls}".*?</svg>', page, re.S).group(0)


def _bars(svg: str) -> int:
    return sum(int(n) for n in re.findall(r": (\d+) observation\(s\)", "".join(
        re.findall(r'<rect class="bar[^"]*"[^>]*><title>(.*?)</title>', svg))))


def test_the_activity_chart_counts_every_observation_and_marks_findings(alice):
    page = alice.get("/observations").text
    chart = _svg(page, "chart activity")
    total = int(re.search(r"<h2>Timeline \((\d+)\)</h2>", page).group(1))
    assert _bars(chart) == total and 'data-bucket="day"' in chart  # a month: one bar per day
    marked = set(re.findall(r'<text class="finding"[^>]*>(\w+)\??</text>', chart))
    assert {"burst", "hub", "dense_cluster", "convergence"} <= marked
    assert 'class="bar flagged"' in chart
    hourly = _svg(alice.get("/observations?per=hour").text, "chart activity")
    assert 'data-bucket="hour"' in hourly and _bars(hourly) == total
    assert alice.get("/observations?per=week").status_code == 400
    thresholds = cells(page, "thresholds")
    assert {row[0] for row in thresholds} >= {"hub", "burst", "dense_cluster", "beaconing"}
    assert any("min_count=15" in row[1] for row in thresholds if row[0] == "burst")


def test_the_chart_follows_the_entity_and_formation_filters(alice):
    one = alice.get("/observations?entity=host:c2").text
    total = int(re.search(r"<h2>Timeline \((\d+)\)</h2>", one).group(1))
    assert _bars(_svg(one, "chart activity")) == total
    sightings = alice.get("/observations?formation=DRONE_EVENT").text  # the two drones converging
    rows = cells(sightings, "timeline")
    assert len(rows) == 2 and {r[2] for r in rows} == {"DRONE_EVENT"}
    assert _bars(_svg(sightings, "chart activity")) == 2
    assert "convergence" in _svg(sightings, "chart activity") and "hub" not in _svg(sightings, "chart activity")


def test_the_entity_graph_weighs_each_pair_by_its_observations(alice):
    graph = _svg(alice.get("/observations?entity=account:spoke").text, "entities")
    weights = {re.search(r"<title>(.*?) with (.*?): \d+ observation", line).groups(): int(a["data-weight"])
               for line, a in ((m, _attrs(m)) for m in re.findall(r"<line [^>]*>.*?</line>", graph, re.S))}
    assert weights == {("account:spoke", "host:c2"): 80}  # the spoke: 80 observations, all with the hub
    assert 'data-entity="host:c2"' in graph and 'class="flagged"' in graph


def test_a_finding_in_a_store_too_small_for_its_detector_says_so(tmp_path):
    """Sixteen logins in eight minutes in a store of eighteen: a burst against the flat rate, flagged as thin
    (details.small_store) and shown as uncertain; the scenario's month-long burst is not."""
    db = str(tmp_path / "small.db")
    writer = Memory(db, context=context(ALICE))
    t = 1_780_000_000
    writer.remember_observations([{"members": ["account:a1", "host:x"], "event_ts": t + i * 30} for i in range(16)] +
                                 [{"members": ["account:a2", "host:y"], "event_ts": t + k} for k in (-3600, 108_000)])
    found = call_tool(writer, "detect", {}).structured["findings"]
    writer.close()
    assert found and all("only 18 observations" in f["details"]["small_store"] for f in found)
    client, memory = explorer(db, ALICE)
    page = client.get("/observations").text
    memory.close()
    assert all(row[4].startswith("uncertain: the store is too small for this detector — only 18") for row in cells(page, "findings"))
    assert "burst?" in _svg(page, "chart activity")


def test_bursts_in_the_scenario_are_not_flagged_as_thin(alice, scenario):
    memory = Memory(scenario.db, context=read_only(context(ALICE)))
    bursts = [f for f in View(memory).detect()["findings"] if f["pattern"] == "burst"]
    memory.close()
    assert bursts and not any("small_store" in f["details"] for f in bursts)


def test_markup_in_entity_and_predicate_names_stays_text_in_every_picture(tmp_path):
    evil = ['user:"><script>alert(1)</script>', "host:<img src=x onerror=alert(2)>"]
    db = str(tmp_path / "evil.db")
    writer = Memory(db, context=context(ALICE))
    writer.remember_observations([{"members": evil, "event_ts": 1_780_000_000 + i * 20} for i in range(20)])
    call_tool(writer, "define_rule", {"head": "'<b>x</b>'(X)", "body": "'\"><svg onload=alert(3)>'(X), \\+ q(X)"})
    writer.close()
    client, memory = explorer(db, ALICE)
    pages = [client.get("/observations").text, client.get("/").text,
             client.get("/observations", params={"entity": evil[0]}).text]
    memory.close()
    for page in pages:
        assert "<script" not in page and "<img" not in page and "<b>" not in page and "<svg onload" not in page
    drawn = _svg(pages[0], "entities")
    assert "&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;" in drawn and "&lt;img src=x onerror=alert(2)&gt;" in drawn
    assert "&lt;b&gt;x&lt;/b&gt;/1" in _svg(pages[1], "graph")
    assert _bars(_svg(pages[2], "chart activity")) == 20


def test_derived_answers_and_the_dry_run_see_only_what_the_viewer_may(bob):
    """risky(deploy_v3) rests on alice's project memory: bob's risky/1 page and alert/2 page leave it out."""
    risky = [r[0] for r in cells(bob.get("/facts?functor=risky&arity=1").text, "derived")]
    assert risky == ["risky(deploy_v2)", "risky(legacy_app)"]
    assert "deploy_v3" not in bob.get("/facts?functor=alert&arity=2").text
    page = bob.get("/beliefs?assumption=ci_outage").text
    assert "Conclusions that would stop holding (3)" in page and "deploy_v3" not in page
