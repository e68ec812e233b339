"""The explorer in a real headless Chromium (Debian's, driven by Playwright; never a downloaded browser), served
by `datalog-memory explore` run as a user runs it, once as a principal of one project and once as a principal
of another. One browser for the module. Screenshots of every page go to $DATALOG_MEMORY_TEST_ARTIFACTS, else
<tmp>/datalog-memory-explorer-screenshots."""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from explorer_scenario import ALICE, BOB, BOB_TEXT, RULE_TEXTS, SOURCE_TEXT, build
from surfaces import COMMAND, env

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
ARTIFACTS = Path(os.environ.get("DATALOG_MEMORY_TEST_ARTIFACTS")
                 or Path(tempfile.gettempdir()) / "datalog-memory-explorer-screenshots")
LINK = re.compile(r"((http://127\.0\.0\.1:\d+)/[A-Za-z0-9_-]{20,}/)")

try:
    from playwright.sync_api import expect, sync_playwright
except ImportError:  # pragma: no cover - the test extras bring it
    sync_playwright = None


def _missing() -> str | None:
    if sync_playwright is None:
        return "playwright is not installed"
    if not os.path.exists(CHROMIUM):
        return f"{CHROMIUM} is missing (apt-get install chromium)"
    return None


@pytest.fixture(scope="module")
def chromium():
    missing = _missing()
    if missing:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI must run the browser tests: {missing}")
        pytest.skip(missing)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield browser
        browser.close()


class Explorer:
    """`datalog-memory explore` as its own process; `url` is the link it prints."""

    def __init__(self, db: str, principal_env: dict) -> None:
        self.proc = subprocess.Popen([*COMMAND, "--db", db, "explore"], stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True, env=env(principal_env))
        self.url = self.base = self.origin = ""

    def wait(self) -> "Explorer":
        line = self.proc.stdout.readline()  # printed once the port is bound
        found = LINK.search(line)
        if not found:
            self.proc.kill()
            raise AssertionError(f"no link printed: {line!r} {self.proc.stderr.read()}")
        self.url, self.origin = found.group(1), found.group(2)  # the printed link; the server without the token
        self.base = self.url.rstrip("/")  # where every page lives
        return self

    def close(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=20)


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    scenario = build(str(tmp_path_factory.mktemp("explorer-browser") / "memory.db"))
    alice, bob = Explorer(scenario.db, ALICE), Explorer(scenario.db, BOB)  # both start at once
    alice.wait(), bob.wait()
    yield scenario, alice, bob
    alice.close()
    bob.close()


@pytest.fixture
def page(chromium):
    context = chromium.new_context(viewport={"width": 1100, "height": 760})
    yield context.new_page()
    context.close()


def shot(page, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"explorer-{name}.png"), full_page=True)


def _status(request) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(request, timeout=20) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as refused:
        return refused.code, refused.read().decode()


def test_the_served_command_guards_every_request(served):
    """The real server (uvicorn), without a browser: token, methods, host."""
    _, alice, _ = served
    assert _status(alice.origin + "/audit") == (403, "Forbidden")
    assert _status(urllib.request.Request(alice.origin + "/audit", method="POST", data=b"x"))[0] == 403
    assert _status(alice.url)[0] == 200
    for method in ("POST", "PUT", "DELETE"):
        assert _status(urllib.request.Request(alice.url, data=b"x=1", method=method))[0] == 405
    assert _status(urllib.request.Request(alice.url, headers={"Host": "evil.example"}))[0] == 403
    assert alice.proc.poll() is None  # still serving


def test_every_page_opens_and_is_captured(served, page):
    scenario, alice, _ = served
    refused = page.goto(alice.origin + "/audit")  # no token
    assert refused.status == 403 and page.locator("body").inner_text() == "Forbidden"
    page.goto(alice.url)  # the printed link: every page's links carry the token, no cookie is set
    assert page.context.cookies() == []
    expect(page.locator("h1")).to_have_text("Knowledge")
    expect(page.locator("svg.graph")).to_be_visible()
    expect(page.locator("header .who")).to_contain_text("alice")
    shot(page, "knowledge")
    visits = [("Query and why", "/query?goal=risky(X)", "table.answers"),
              ("Why", "/why?fact=risky(deploy_v3)", "details.node"),
              ("Beliefs", "/beliefs?assumption=infra_healthy", "#dry-run"),
              ("Memories", "/memories", "table.memories"),
              (f"Memory {scenario.new_window}", f"/memories/{scenario.new_window}", "pre.source-text"),
              ("Observations", "/observations?entity=host:c2", "tr.flagged"),
              ("Audit", "/audit", "table.audit"),
              ("Facts", "/facts?functor=note&arity=1", "table.facts")]
    for title, path, marker in visits:
        answer = page.goto(alice.base + path)
        assert answer.status == 200, path
        expect(page.locator("h1")).to_have_text(title)
        expect(page.locator(marker).first).to_be_visible()
        shot(page, title.split()[0].lower())
    # A fact whose atom is markup shows as text (and the page has no script at all).
    expect(page.locator("table.facts td").first).to_have_text("note('<script>alert(1)</script>')")
    assert page.locator("script").count() == 0
    for name in ("knowledge", "why", "beliefs", "memories", "observations", "audit", "query"):
        assert (ARTIFACTS / f"explorer-{name}.png").stat().st_size > 5000


def test_following_a_proof_to_the_memory_it_came_from(served, page):
    scenario, alice, _ = served
    page.goto(alice.url)
    page.get_by_role("link", name="Query and why").click()
    page.locator("input[name=goal]").fill("risky(X)")
    page.get_by_role("button", name="Run").click()
    page.get_by_role("link", name="why risky(deploy_v3)").click()
    expect(page.locator("h1")).to_have_text("Why")
    leaf = page.locator("details.node details.node", has_text="touches(deploy_v3, billing_db)")
    expect(leaf.locator("blockquote.source-text")).to_have_text(SOURCE_TEXT)
    leaf.locator("summary").click()  # the tree folds without any script
    expect(leaf.locator("blockquote.source-text")).to_be_hidden()
    leaf.locator("summary").click()
    leaf.get_by_role("link", name=scenario.alice_memory).click()
    expect(page.locator("h1")).to_have_text(f"Memory {scenario.alice_memory}")
    assert page.locator("pre.source-text").inner_text() == SOURCE_TEXT


def test_filtering_the_audit_log(served, page):
    _, alice, _ = served
    page.goto(alice.url)
    page.get_by_role("link", name="Audit").click()
    page.locator("select[name=actor]").select_option("bob")
    page.get_by_role("button", name="Filter").click()
    expect(page.locator("table.audit tbody td:nth-child(3)")).to_have_text(["bob"])
    page.locator("select[name=actor]").select_option("")
    page.locator("select[name=operation]").select_option("define_rule")
    page.get_by_role("button", name="Filter").click()
    # expect() waits for the filtered page; reading the cells at once could catch the previous one.
    expect(page.locator("table.audit tbody td:nth-child(4)")).to_have_text(["define_rule"] * len(RULE_TEXTS))
    page.locator("table.audit tbody tr").last.get_by_role("link").click()  # the row links to the rule it made
    assert page.url.endswith("/#rule-1")
    expect(page.locator("#rule-1")).to_be_visible()


def test_another_projects_principal_sees_none_of_the_first_ones_memories(served, page):
    scenario, _, bob = served
    page.goto(bob.url)
    expect(page.locator("header .who")).to_contain_text("bob")
    page.get_by_role("link", name="Memories").click()
    listed = page.locator("main").inner_text()
    assert BOB_TEXT in listed and SOURCE_TEXT not in listed and scenario.alice_memory not in listed
    page.locator("input[name=q]").fill("billing invoices deploy")
    page.get_by_role("button", name="Search").click()
    expect(page.locator("main")).to_contain_text("No memory matches.")
    answer = page.goto(f"{bob.base}/memories/{scenario.alice_memory}")
    assert answer.status == 404 and SOURCE_TEXT not in page.content()
    page.goto(f"{bob.base}/why?fact=risky(deploy_v3)")
    expect(page.locator("main")).to_contain_text("No proof")
    shot(page, "other-principal")


# What the browser drew: every edge sampled every 2 px along its rendered path; a sample strictly inside a box
# the edge does not connect is a crossing. Run in the page through the driver (the pages themselves carry no script).
CROSSINGS = """() => {
  const boxes = [...document.querySelectorAll('svg.graph rect[data-node]')].map(r => ({node: r.dataset.node,
    x: r.x.baseVal.value, y: r.y.baseVal.value, w: r.width.baseVal.value, h: r.height.baseVal.value}));
  const found = [];
  for (const p of document.querySelectorAll('svg.graph path[data-source]')) {
    const length = p.getTotalLength();
    for (let at = 0; at <= length; at += 2) {
      const pt = p.getPointAtLength(at);
      for (const b of boxes) {
        if (b.node === p.dataset.source || b.node === p.dataset.target) continue;
        if (pt.x > b.x + 1 && pt.x < b.x + b.w - 1 && pt.y > b.y + 1 && pt.y < b.y + b.h - 1)
          found.push(`${p.dataset.source} -> ${p.dataset.target} under ${b.node}`);
      }
    }
  }
  return [boxes.length, document.querySelectorAll('svg.graph path[data-source]').length, [...new Set(found)]];
}"""


def test_the_rule_graph_routes_around_boxes_and_marks_negation(served, page):
    _, alice, _ = served
    page.goto(alice.url)
    boxes, edges, crossings = page.evaluate(CROSSINGS)
    assert boxes >= 10 and edges >= 10 and crossings == []
    style = page.evaluate("""() => Object.fromEntries(['positive', 'negated', 'aggregate'].map(k => {
        const s = getComputedStyle(document.querySelector(`svg.graph path.edge.${k}`));
        return [k, [s.stroke, s.strokeDasharray]]; }))""")
    assert style["positive"][1] == "none" and style["negated"][1] != "none" and style["aggregate"][1] != "none"
    assert len({style[k][0] for k in style}) == 3  # three colours
    expect(page.locator("ul.legend")).to_contain_text("negation")
    page.locator("svg.graph").screenshot(path=str(ARTIFACTS / "explorer-rule-graph.png"))
    assert (ARTIFACTS / "explorer-rule-graph.png").stat().st_size > 5000


def test_a_derived_predicate_opens_its_answers_from_the_graph(served, page):
    _, alice, _ = served
    page.goto(alice.url)
    page.locator("svg.graph a", has=page.locator('rect[data-node="alert/2"]')).click()
    expect(page.locator("h1")).to_have_text("Facts")
    answers = page.locator("table.derived tbody tr")
    expect(answers.filter(has_text="alert(deploy_v3, 1)")).to_contain_text("derived")
    assert "No facts match" not in page.locator("main").inner_text()
    shot(page, "derived")
    answers.filter(has_text="alert(deploy_v3, 1)").get_by_role("link", name="why").click()
    expect(page.locator("h1")).to_have_text("Why")
    expect(page.locator("details.node").first).to_contain_text("needs_review(deploy_v3)")


def test_the_dry_run_lists_the_conclusions_that_would_go(served, page):
    _, alice, _ = served
    page.goto(alice.base + "/beliefs")
    page.locator("table.assumptions tr", has_text="ci_outage").get_by_role("link").click()
    expect(page.locator("ul.gone")).to_have_text("untested(deploy_v2)")
    expect(page.locator("ul.withdrawn li")).to_have_text(["alert(deploy_v2, 0)", "needs_review(deploy_v2)",
                                                          "risky(deploy_v2)"])
    shot(page, "dry-run")


def test_an_empty_field_looks_empty(served, page):
    _, alice, _ = served
    page.goto(alice.base + "/memories")
    field = page.locator("input[name=as_of]")
    assert field.input_value() == "" and field.get_attribute("placeholder").startswith("e.g. ")
    shown = field.evaluate("""e => { const p = getComputedStyle(e, '::placeholder'), s = getComputedStyle(e);
                                     return [p.fontStyle, p.color, s.color, s.borderStyle]; }""")
    assert shown[0] == "italic" and shown[1] != shown[2] and shown[3] == "dashed"
    field.fill("2026-05-01T12:00")
    filled = field.evaluate("e => [getComputedStyle(e).fontStyle, getComputedStyle(e).borderStyle]")
    assert filled == ["normal", "solid"]  # a value typed in looks like a value


def test_the_observations_page_draws_activity_and_who_touched_what(served, page):
    _, alice, _ = served
    page.goto(alice.base + "/observations")
    expect(page.locator("svg.chart.activity")).to_be_visible()
    expect(page.locator("svg.entities")).to_be_visible()
    assert page.locator("svg.chart rect.bar").count() >= 20 and page.locator("svg.chart g.mark").count() >= 5
    expect(page.locator("details.thresholds")).to_contain_text("must cross")
    shot(page, "observations-chart")
    page.locator("select[name=formation]").select_option("DRONE_EVENT")
    page.get_by_role("button", name="Filter").click()
    assert "formation=DRONE_EVENT" in page.url
    expect(page.locator("svg.chart text.finding")).to_contain_text(["convergence"])
    assert page.locator("table.timeline tbody tr").count() == 2
    page.locator("svg.entities a", has=page.locator('circle[data-entity="sector:s-target"]')).click()
    assert "entity=sector%3As-target" in page.url
    expect(page.locator("table.timeline")).to_contain_text("sector:s-target")
