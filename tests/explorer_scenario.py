"""The store the explorer tests look at: two projects' principals, knowledge with a rule and an assumption,
source memories (one superseded), observations with planted patterns for detect, and a fact whose atom
holds markup. Built once per test module, with a stepping clock so recorded instants are strictly ordered."""

from __future__ import annotations

from dataclasses import dataclass

from memory import Memory
from memory.clock import utc_now
from memory.access import CallerContext
from memory.tools import call_tool

from conftest import stepping_clock
from evidence_scenario import planted

ALICE = {"DATALOG_MEMORY_PRINCIPAL": "alice", "DATALOG_MEMORY_SESSION_ID": "alice-1",
         "DATALOG_MEMORY_PROJECT_REMOTE": "https://example.org/acme/billing"}
BOB = {"DATALOG_MEMORY_PRINCIPAL": "bob", "DATALOG_MEMORY_SESSION_ID": "bob-1",
       "DATALOG_MEMORY_PROJECT_REMOTE": "https://example.org/other/shop"}
SOURCE_TEXT = "The v3 deploy rewrites the invoices table in the billing database."
OLD_WINDOW = "Deploys happen on Friday evenings."
NEW_WINDOW = "Deploys moved to Monday mornings after the Friday outage."
BOB_TEXT = "Bob's shop keeps its coupon codes in the promo database."
MARKUP_FACT = "note('<script>alert(1)</script>')"
PAGED = 120  # facts of item/1, more than two pages
RULES = [("risky(X)", "untested(X)"), ("needs_review(X)", "risky(X), \\+ approved(X)"),
         ("alert(X, N)", "needs_review(X), aggregate_all(count, touches(X, _), N)"), ("stock(X)", "item(X)")]
RULE_TEXTS = ["risky(X) :- touches(X, Y), critical(Y)", "reach(X, Y) :- link(X, Y)",
              "reach(X, Z) :- link(X, Y), reach(Y, Z)", *(f"{h} :- {b}" for h, b in RULES)]


@dataclass
class Scenario:
    db: str
    alice_memory: str = ""
    old_window: str = ""
    new_window: str = ""
    bob_memory: str = ""
    cutoff: str = ""  # an instant after alice's knowledge writes and before the later ones


def context(env: dict) -> CallerContext:
    return CallerContext.from_env(env)


def build(db: str) -> Scenario:
    scenario = Scenario(db)
    clock = stepping_clock()  # every instant recorded below comes from it: strictly ordered, no sleeping
    alice = Memory(db, context=context(ALICE), clock=clock)
    bob = Memory(db, context=context(BOB), clock=clock)

    def a(name: str, **arguments) -> dict:
        return call_tool(alice, name, arguments).structured

    scenario.alice_memory = a("memory_remember", memory=SOURCE_TEXT, scope="project", projections=[
        {"predicate": "touches", "arguments": ["deploy_v3", "billing_db"],
         "statement": "the v3 deploy touches the billing database"}])["id"]
    a("remember_fact", fact="critical(billing_db)")
    a("define_rule", head="risky(X)", body="touches(X, Y), critical(Y)")
    a("define_rule", head="reach(X, Y)", body="link(X, Y)")
    a("define_rule", head="reach(X, Z)", body="link(X, Y), reach(Y, Z)")
    a("remember_fact", fact="link(web, api)")
    a("remember_fact", fact="link(api, billing_db)")
    a("assume_fact", fact="available(server_a)", assumption="infra_healthy")
    a("assume_fact", fact="available(server_b)", assumption="infra_healthy")
    a("remember_fact", fact="available(server_b)")  # also asserted: survives the assumption
    a("remember_fact", fact=MARKUP_FACT)
    # The derived chain of the Knowledge page: a negated call (needs_review skips what is approved) two layers
    # away from what it reads, and an aggregate; one conclusion (deploy_v2's) rests on an assumption.
    for head, body in RULES:
        a("define_rule", head=head, body=body)
    a("remember_fact", fact="approved(deploy_v1)")
    a("assume_fact", fact="untested(deploy_v2)", assumption="ci_outage")
    a("remember_fact", fact="risky(legacy_app)")  # risky/1: rules and a stored fact
    scenario.cutoff = utc_now(clock)
    scenario.old_window = a("memory_remember", memory=OLD_WINDOW, scope="project")["id"]
    scenario.new_window = a("memory_remember", memory=NEW_WINDOW, scope="project",
                            supersedes=[scenario.old_window])["id"]
    alice.add_facts([f"item(i{n:03d})" for n in range(PAGED)])
    alice.remember_observations(planted())
    scenario.bob_memory = call_tool(bob, "memory_remember", {"memory": BOB_TEXT,
                                                            "scope": "project"}).structured["id"]
    call_tool(bob, "remember_fact", {"fact": "coupon(spring)"})
    alice.close()
    bob.close()
    return scenario
