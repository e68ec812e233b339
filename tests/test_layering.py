"""The layers stay layered: importing the engine loads no storage, server or command line, importing the
command line loads none of what only some commands use, and the import contracts in pyproject.toml
([tool.importlinter]) hold."""

import shutil
import subprocess
import sys
from pathlib import Path

from conftest import ROOT

HEAVY = ("apsw", "typer", "mcp", "numpy")  # numpy: the columnar path imports it at its first large delta
ABOVE_THE_ENGINE = ("memory.api", "memory.store", "memory.knowledge", "memory.sources", "memory.evidence",
                    "memory.tools", "memory.mcp_server")


def test_importing_the_engine_loads_no_storage_server_or_command_line():
    probe = ("import sys, memory.datalog; "
             f"print(' '.join(m for m in {HEAVY!r} if m in sys.modules)); "
             "print(' '.join(sorted(m for m in sys.modules if m.startswith('memory.'))))")
    proc = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    loaded, ours = proc.stdout.split("\n")[:2]
    assert loaded == "", f"import memory.datalog loaded {loaded}"
    above = [m for m in ours.split() if m.split(".")[0] + "." + m.split(".")[1] in ABOVE_THE_ENGINE]
    assert above == [], f"import memory.datalog loaded the layers above it: {above}"


# What importing the command line leaves for the commands that use it: the MCP package (serve imports it once
# its first worker is starting), the argument checker (the first checked call), the renderer and progress bar
# (the first printed result) and the evidence code beyond observations (its first call).
LATER = ("mcp", "memory.mcp_server", "jsonschema", "rich.console", "rich.progress", "rich.table",
         "memory.evidence.recall", "memory.evidence.reasoning", "memory.evidence.verify", "memory.evidence.detect")


def test_the_command_line_loads_what_a_command_needs_when_it_runs():
    probe = f"import sys, memory.cli.main; print(' '.join(m for m in {LATER!r} if m in sys.modules))"
    proc = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "", f"import memory.cli.main loaded {proc.stdout.strip()}"


def test_the_package_front_door_still_opens():
    probe = "import memory; from memory import DatalogMemoryError, Memory, __version__; print(Memory.__module__)"
    proc = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and proc.stdout.strip() == "memory.api", proc.stderr


def test_the_import_contracts_hold():
    """pyproject.toml's [tool.importlinter] contracts: each layer imports only the layers below it, nothing
    below the surfaces imports mcp or typer, and the engine imports no storage and no domain service."""
    beside = Path(sys.executable).with_name("lint-imports")
    command = str(beside) if beside.exists() else shutil.which("lint-imports")
    assert command, "lint-imports is missing: install the test extras (pip install -e '.[test]')"
    proc = subprocess.run([command, "--no-cache"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "0 broken" in proc.stdout, proc.stdout


def test_the_architecture_note_names_every_part_of_the_package():
    """ARCHITECTURE.md's folder list covers every subpackage and module of memory/ and every top-level folder."""
    note = (ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8")
    listing = note.split("## What each folder holds", 1)[1].split("```")[1]
    entries = {line.split()[0] for line in listing.splitlines() if line.strip()}
    package = ROOT / "memory"
    parts = {f"{p.name}/" for p in package.iterdir() if (p / "__init__.py").is_file()} | \
            {p.name for p in package.glob("*.py")}
    entries |= {entry.split("/")[0] + "/" for entry in entries if "/" in entry}  # schema/schema.sql names schema/
    untracked = {"build", "dist", "venv", "node_modules"}  # what .gitignore keeps out of the repository
    folders = {f"{p.name}/" for p in ROOT.iterdir() if p.is_dir() and not p.name.startswith((".", "_"))
               and p.name not in untracked and not p.name.endswith(".egg-info")}
    missing = sorted((parts | folders | {".ci/"}) - entries)
    assert not missing, f"ARCHITECTURE.md's folder list misses {missing}"
