"""The evidence tools over the real surfaces: the MCP server in both protocol eras, and the CLI."""

from memory.tools.notes import iso
import pytest

from evidence_scenario import CONVERGE_RULE, THREAT_RULE
from memory.tools import REGISTRY
from surfaces import ERAS, call_checked, cli, cli_json, error_of, run_client

EVIDENCE_TOOLS = {"remember", "recall", "reason", "prove", "verify", "detect", "forget_observation"}
T = 1_780_000_000


run = run_client


async def call(client, name, args):
    result = await call_checked(client, name, args)
    assert not result.is_error, (name, result.content[0].text)
    return result


def test_every_evidence_tool_is_registered():
    assert EVIDENCE_TOOLS <= set(REGISTRY)


@pytest.mark.parametrize("era", ERAS)
def test_the_six_tools_over_mcp(store_file, era):
    async def scenario(client):
        out = {}
        a = await call(client, "remember", {"members": ["drone:x1", "sector:q"], "event_ts": T, "weight": 0.9,
                                            "formation": "SIGHTING"})
        b = await call(client, "remember", {"members": ["drone:x2", "sector:q"], "event_ts": T + 120, "weight": 0.8})
        await call(client, "define_rule", {"head": CONVERGE_RULE[0], "body": CONVERGE_RULE[1], "name": "converge",
                                           "confidence": 0.9})
        await call(client, "define_rule", {"head": THREAT_RULE[0], "body": THREAT_RULE[1]})
        out["recall"] = await call(client, "recall", {"query": "sector:q in the last 2 days", "now": T + 600})
        out["reason"] = await call(client, "reason", {"query": "sector:q", "now": T + 600})
        out["prove"] = await call(client, "prove", {"query": "sector:q", "goal_pred": "coordinated_threat",
                                                    "now": T + 600})
        tags = [a.structured_content["hedge_tag"], b.structured_content["hedge_tag"]]
        out["verify"] = await call(client, "verify", {
            "answer": f"drone:x1 and drone:x2 were seen at sector:q [{tags[0]}] [{tags[1]}]. They are hostile.",
            "query": "sector:q", "now": T + 600})
        out["detect"] = await call(client, "detect", {"full_scan": True, "window": "last 2 days", "sensitivity": 1.5,
                                                      "now": T + 600})
        out["forget"] = await call(client, "forget_observation", {"hedge_tags": [tags[1]], "reason": "glitch"})
        out["after"] = await call(client, "reason", {"query": "sector:q", "now": T + 600})
        out["bad"] = error_of(await client.call_tool("remember", {"members": []}))["code"]
        return a, tags, out
    a, tags, out = run(store_file, era, scenario)
    assert a.content[0].text == f"Stored observation {tags[0]} (DRONE_EVENT/SIGHTING) at {T} ({iso(T)}): drone:x1, sector:q"
    assert a.structured_content["table"] == "MEMORY" and a.structured_content["formation"] == "SIGHTING"
    assert [e["hedge_tag"] for e in out["recall"].structured_content["edges"]] == tags
    derived = out["reason"].structured_content["derived"]
    assert [(d["fact"], d["confidence"]) for d in derived if d["pred"] == "coordinated_threat"] == [
        ("coordinated_threat('sector:q')", pytest.approx(0.9 * 0.9 * 0.8))]
    assert out["prove"].structured_content["count"] == 1
    verified = out["verify"].structured_content
    assert verified["outcome"] == "stripped" and verified["stripped"][0]["reason"] == "no citation"
    answer, notes = out["verify"].content[0].text.split("\n\n")
    assert answer == f"drone:x1 and drone:x2 were seen at sector:q [{tags[0]}] [{tags[1]}]."
    assert notes.splitlines()[:2] == ["% outcome: stripped (1 of 2 sentence(s) kept)",
                                      '% stripped: "They are hostile.": no citation']
    assert "risk_score" in out["detect"].content[0].text
    summary = out["detect"].structured_content["summary"]
    assert summary["sensitivity"] == 1.5 and summary["window"]["end"] == T + 601 and summary["edges_scanned"] == 2
    assert out["forget"].content[0].text == f"Retracted 1 observation(s): {tags[1]}"
    assert out["after"].structured_content["derived"] == []
    assert out["bad"] == "invalid_arguments"


def test_cli_remember_recall_and_detect(store_file):
    stored = cli_json(store_file, "remember", "--members", '["account:admin", "host:db01"]', "--event-ts", str(T))
    assert stored["structural_formation"] == "AUTH_EVENT"
    recalled = cli_json(store_file, "recall", "--query", "admin", "--now", str(T + 60))
    assert [e["hedge_tag"] for e in recalled["edges"]] == [stored["hedge_tag"]]
    human = cli(store_file, "recall", "--query", "admin", "--now", str(T + 60))
    assert human.returncode == 0 and stored["hedge_tag"] in human.stdout
    assert cli(store_file, "remember", "--members", "[]").returncode == 2
    assert cli_json(store_file, "detect", "--full-scan", "true")["summary"]["findings"] == 0
    impossible = cli(store_file, "recall", "--query", "admin since 2026-13-45")
    assert impossible.returncode != 0 and "not a real date" in impossible.stderr
    scoped = cli_json(store_file, "detect", "--window", "last 2 days", "--sensitivity", "2", "--now", str(T + 60))
    assert scoped["summary"]["sensitivity"] == 2 and scoped["summary"]["edges_scanned"] == 1


def test_cli_import_observations_is_all_or_nothing(store_file, tmp_path):
    good = tmp_path / "good.jsonl"
    good.write_text('{"members": ["drone:a", "sector:1"], "event_ts": 1780000000}\n\n'
                    '{"members": ["drone:b", "sector:1"], "weight": 0.5, "formation": "SIGHTING"}\n')
    stored = cli_json(store_file, "import-observations", str(good))
    assert stored["stored"] == 2 and stored["last_id"] == stored["first_id"] + 1
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"members": ["drone:c"]}\n{"members": ["drone:d"], "weight": 2}\n')
    refused = cli(store_file, "import-observations", str(bad))
    assert refused.returncode == 1 and "weight" in refused.stderr
    assert cli_json(store_file, "recall", "--query", "drone:c")["edges"] == []


def test_acknowledged_memories_and_observations_survive_kill_9(store_file):
    import os
    import signal

    from memory import Memory
    from surfaces import MODERN_META, RawServer

    server = RawServer(store_file)
    stored = []
    for i in range(10):
        for name, args in (("memory_remember", {"memory": f"note {i}"}),
                           ("remember", {"members": [f"host:h{i}", "account:a"], "event_ts": T + i})):
            reply = server.request({"jsonrpc": "2.0", "id": len(stored) + 1, "method": "tools/call",
                                    "params": {"name": name, "arguments": args, "_meta": MODERN_META}})
            assert not reply["result"]["isError"]
            stored.append(reply["result"]["structuredContent"])
    os.kill(server.proc.pid, signal.SIGKILL)
    server.proc.wait()
    with Memory(store_file) as m:
        notes = [s["id"] for s in stored if "source_id" in s]
        assert [m.memory_get(i)["source_text"] for i in notes] == [f"note {i}" for i in range(10)]
        assert m.recall("account:a", top_k=50, now=T + 100)["count"] == 10
