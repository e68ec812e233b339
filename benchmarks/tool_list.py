"""How much of a model's context the tool list costs: `tools/list` as a real stdio server sends it, for the
default toolsets and for `all`, with what a host passes the model (names, descriptions, input schemas).

    python benchmarks/tool_list.py [--toolsets default,all,...]

Prints a table: tools, bytes on the wire, the bytes a host sends the model, the longest description, and the
issue's targets (default: at most 15 tools and 16,000 bytes; no description over 400 characters). Runs the
server in a temporary folder with HOME, XDG_DATA_HOME and the database pointed there."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

TARGET_TOOLS, TARGET_BYTES, TARGET_DESCRIPTION = 15, 16_000, 400


def listing(toolsets: str) -> tuple[list[dict], int]:
    """The tools/list result of a fresh `serve` with these toolsets, and its size on the wire."""
    home = tempfile.mkdtemp(prefix="tool-list-")
    env = {**os.environ, "HOME": home, "XDG_DATA_HOME": home, "XDG_CACHE_HOME": home, "DATALOG_MEMORY_DB": os.path.join(home, "m.db"),
           "DATALOG_MEMORY_TOOLSETS": toolsets, "DATALOG_MEMORY_WORKERS": "0"}
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}},
    ]
    text = "".join(json.dumps(m) + "\n" for m in messages)
    done = subprocess.run([sys.executable, "-m", "memory.cli", "serve"], input=text, capture_output=True,
                          text=True, env=env, cwd=home, timeout=120)
    for line in done.stdout.splitlines():
        reply = json.loads(line)
        if reply.get("id") == 2:
            return reply["result"]["tools"], len(line.encode())
    raise RuntimeError(f"no tools/list reply: {done.stderr[-2000:]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--toolsets", default="default,all", help="comma-separated selections to measure, each "
                        "alone (default: default,all)")
    selections = parser.parse_args().toolsets.split(",")
    print("| toolsets | tools | tools/list bytes | to the model (name, description, input schema) | longest "
          "description | targets |")
    print("| --- | --- | --- | --- | --- | --- |")
    for selection in selections:
        tools, wire = listing(selection)
        to_model = sum(len(json.dumps({"name": t["name"], "description": t.get("description", ""),
                                       "input_schema": t["inputSchema"]}, separators=(",", ":"))) for t in tools)
        longest = max(tools, key=lambda t: len(t.get("description", "")))
        checks = [f"description ≤ {TARGET_DESCRIPTION}: {'met' if len(longest['description']) <= TARGET_DESCRIPTION else 'missed'}"]
        if selection == "default":
            checks.insert(0, f"≤ {TARGET_TOOLS} tools and ≤ {TARGET_BYTES:,} bytes: "
                             f"{'met' if len(tools) <= TARGET_TOOLS and wire <= TARGET_BYTES else 'missed'}")
        print(f"| {selection} | {len(tools)} | {wire:,} | {to_model:,} | {len(longest['description'])} "
              f"({longest['name']}) | {'; '.join(checks)} |")


if __name__ == "__main__":
    main()
