"""Storage faults and floods against the real servers: what was acknowledged, what is present afterwards, and
what was refused (and how), one row per scenario.

    python benchmarks/faults.py [--writes 40] [--sessions 300] [--connections 300]

Scenarios (each in its own temporary folder; nothing outside it is touched):
- pipelined: over stdio, `remember_fact k(i)` then `query_logic k(i)` without waiting, --writes times:
  how many queries missed the write sent before them;
- folder removed: a stdio server with workers writes, its database folder is removed, it writes on:
  writes acknowledged after the removal (must be 0), refused (and their reason), the status it reports,
  and what a restart on the same path says;
- disk full: writes into a 2 MiB tmpfs until refused (root only; else SQLite's max_page_count stands in):
  acknowledged = present afterwards, refusals' reason, the status;
- read-only: a database seen through a read-only bind mount (root; else a read-only file and folder):
  reads, queries, proofs and export answered, writes refused;
- backup while writing: a backup taken while a server writes holds every write acknowledged before it;
- session flood: one token opens --sessions sessions on an HTTP server; then another caller initializes;
- connection flood: --connections idle TCP connections from 127.0.0.1; then a caller initializes.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import socket
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from http_requests import mcp_headers as _headers  # noqa: E402
from memory import Memory  # noqa: E402
from memory.workers.calls import run_call  # noqa: E402

ROWS: list[tuple[str, str, str, str, str]] = []


def row(scenario: str, acknowledged, present, refused, note: str = "") -> None:
    ROWS.append((scenario, str(acknowledged), str(present), str(refused), note))
    print(f"{scenario:<22} acknowledged={acknowledged!s:<6} present={present!s:<6} refused={refused!s:<6} {note}",
          flush=True)


def env(home: Path, db: str, extra: dict | None = None) -> dict:
    return dict(os.environ, HOME=str(home), XDG_DATA_HOME=str(home / "xdg"), XDG_CACHE_HOME=str(home / "cache"), DATALOG_MEMORY_DB=db,
                PYTHONPATH=str(ROOT), **(extra or {}))


class Stdio:
    """A stdio server over NDJSON; a reader thread collects replies by id."""

    def __init__(self, home: Path, db: str, extra: dict | None = None) -> None:
        self.proc = subprocess.Popen([sys.executable, "-m", "memory.cli", "serve"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
                                     env=env(home, db, extra))
        self.replies: dict = {}
        self.stderr: list[str] = []
        self.changed = threading.Condition()
        self.next = 1
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=lambda: self.stderr.extend(self.proc.stderr), daemon=True).start()
        self.wait(self.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                              "clientInfo": {"name": "faults", "version": "1"}}), 60)
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def _read(self) -> None:
        for line in self.proc.stdout:
            message = json.loads(line)
            with self.changed:
                self.replies[message.get("id")] = message
                self.changed.notify_all()

    def send(self, message: dict) -> None:
        self.proc.stdin.write(json.dumps(message) + "\n")
        self.proc.stdin.flush()

    def request(self, method: str, params: dict) -> int:
        rid, self.next = self.next, self.next + 1
        self.send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        return rid

    def call(self, name: str, arguments: dict) -> int:
        return self.request("tools/call", {"name": name, "arguments": arguments})

    def wait(self, rid: int, timeout: float = 30) -> dict:
        deadline = time.monotonic() + timeout
        with self.changed:
            while rid not in self.replies:
                if not self.changed.wait(max(0.0, deadline - time.monotonic())):
                    raise TimeoutError(f"no reply to {rid}")
            return self.replies[rid]

    def result(self, rid: int) -> dict:
        return self.wait(rid)["result"]

    def close(self) -> None:
        with contextlib.suppress(BrokenPipeError):
            self.proc.stdin.close()
        self.proc.wait(30)


def _error(result: dict) -> dict | None:
    return result.get("_meta", {}).get("datalog-memory/error") if result.get("isError") else None


def _facts(db: str, like: str) -> int:
    if not os.path.exists(db):
        return 0
    with contextlib.closing(sqlite3.connect(db)) as conn:
        return conn.execute("SELECT count(*) FROM facts WHERE text LIKE ?", (like,)).fetchone()[0]


def _mount(*args: str) -> bool:
    return os.geteuid() == 0 and subprocess.run(["mount", *args], capture_output=True).returncode == 0


def _umount(path: Path) -> None:
    subprocess.run(["umount", "-l", str(path)], capture_output=True)


# --- scenarios ----------------------------------------------------------------------------------------------

def pipelined(base: Path, writes: int) -> None:
    server = Stdio(base, str(base / "memory.db"), {"DATALOG_MEMORY_WORKERS": "2"})
    try:
        pairs = [(server.call("remember_fact", {"fact": f"k({i})"}), server.call("query_logic", {"goal": f"k({i})"}))
                 for i in range(writes)]
        acknowledged = sum(not server.result(w).get("isError") for w, _ in pairs)
        missed = sum(server.result(q)["content"][0]["text"] == "[]" for _, q in pairs)
    finally:
        server.close()
    row("pipelined", acknowledged, _facts(str(base / "memory.db"), "k(%"), 0,
        f"{missed}/{writes} queries missed the write sent before them")


def folder_removed(base: Path, writes: int) -> None:
    folder = base / "data"
    db = str(folder / "memory.db")
    server = Stdio(base, db, {"DATALOG_MEMORY_WORKERS": "2"})
    reasons: set[str] = set()
    try:
        before = sum(not server.result(server.call("remember_fact", {"fact": f"g(b{i})"})).get("isError")
                     for i in range(writes // 2))
        shutil.rmtree(folder)
        after = refused = 0
        for i in range(writes):
            result = server.result(server.call("remember_fact", {"fact": f"g(a{i})"}))
            if result.get("isError"):
                refused += 1
                reasons.add(_error(result)["reason"])
            else:
                after += 1
        status = server.result(server.call("get_persistence_status", {}))["structuredContent"]
        query = server.result(server.call("query_logic", {"goal": "g(X)"}))
    finally:
        server.close()
    present = _facts(db, "g(a%")
    row("folder removed", f"{before}+{after}", present, refused,
        f"after removal: {after} acknowledged, reasons {sorted(reasons)}; status {status['status']}; a query: "
        f"{(_error(query) or {}).get('reason', 'answered')}; folder recreated: {folder.exists()}")
    restart = Stdio(base, db)
    restart.close()
    said = [line.strip() for line in restart.stderr if "no database at" in line]
    row("restart after removal", "-", "-", "-", f"stderr says: {said[0][said[0].index('no database'):][:90] if said else 'NOTHING'}")


def disk_full(base: Path) -> None:
    folder = base / "small"
    folder.mkdir()
    mounted = _mount("-t", "tmpfs", "-o", "size=2m", "tmpfs", str(folder))
    db = str(folder / "memory.db")
    try:
        m = Memory(db)
        if not mounted:  # SQLite's page limit: the same "database or disk is full"
            m.store.ensure_created()
            m.store._conn.execute("PRAGMA max_page_count=400")
        acknowledged = refused = 0
        reasons: set[str] = set()
        for i in range(3000):
            outcome = run_call(m, "remember_fact", {"fact": f'big({i}, "{"x" * 2000}")'})
            if outcome.kind == "ok":
                acknowledged += 1
                continue
            refused += 1
            reasons.add(f"{outcome.result.structured['error']['code']}/{outcome.result.structured['error'].get('reason')}")
            if refused >= 5:
                break
        status = run_call(m, "get_persistence_status", {})
        m.close()
        present = _facts(db, "big(%")
        row("disk full" + ("" if mounted else " (page limit)"), acknowledged, present, refused,
            f"refusals {sorted(reasons)}; status {status.kind}: "
            f"{status.result.structured.get('status', status.result.text[:60])}")
    finally:
        if mounted:
            _umount(folder)


def read_only(base: Path) -> None:
    data = base / "ro-data"
    data.mkdir()
    db = str(data / "memory.db")
    with Memory(db) as m:
        m.add_facts(["a(1)", "a(2)"])
        m.define_rule("b(X)", "a(X)")
    view = base / "ro-view"
    view.mkdir()
    mounted = _mount("--bind", str(data), str(view)) and _mount("-o", "remount,bind,ro", str(view))
    if not mounted:
        _umount(view)
        os.chmod(db, 0o444)
        os.chmod(data, 0o555)
        view = data
    try:
        m = Memory(str(view / "memory.db"))
        answered = [run_call(m, "query_logic", {"goal": "b(X)"}).kind, run_call(m, "explain_why", {"fact": "b(1)"}).kind]
        try:
            answered.append("ok" if "a(1)." in m.export_program(None) else "wrong")
        except Exception as exc:  # noqa: BLE001 - reported, not raised
            answered.append(type(exc).__name__)
        write = run_call(m, "remember_fact", {"fact": "a(3)"})
        status = run_call(m, "get_persistence_status", {})
        m.close()
        error = write.result.structured.get("error", {})
        row("read-only" + (" mount" if mounted else " file"), 0, _facts(db, "a(%"), int(write.kind != "ok"),
            f"query/proof/export: {answered}; write: {error.get('code')}/{error.get('reason')}; "
            f"status {status.result.structured.get('status')}")
    finally:
        if mounted:
            _umount(view)
        else:
            os.chmod(data, 0o755)
            os.chmod(db, 0o644)


def backup_while_writing(base: Path) -> None:
    from memory.store.backup import backup

    db = str(base / "backup-src.db")
    server = Stdio(base, db)
    acknowledged: list[tuple[float, str]] = []
    stop = threading.Event()

    def write() -> None:
        i = 0
        while not stop.is_set():
            fact = f"s({i})"
            if not server.result(server.call("remember_fact", {"fact": fact})).get("isError"):
                acknowledged.append((time.monotonic(), fact))
            i += 1

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    time.sleep(0.5)
    began = time.monotonic()
    report = backup(db, str(base / "backup.db"))
    time.sleep(0.3)
    stop.set()
    writer.join(30)
    server.close()
    before = {f for at, f in acknowledged if at < began}
    with contextlib.closing(sqlite3.connect(str(base / "backup.db"))) as conn:
        held = {r[0] for r in conn.execute("SELECT text FROM facts")}
    row("backup while writing", len(before), len(before & held), 0,
        f"{len(before - held)} acknowledged before it missing; {report['bytes']} bytes in {report['seconds']} s, "
        f"integrity {report['integrity']}")


def _http_server(base: Path, db: str, extra: dict | None = None) -> tuple[subprocess.Popen, str, Path]:
    log = base / f"http-{time.monotonic_ns()}.log"
    with open(log, "wb") as errors:
        proc = subprocess.Popen([sys.executable, "-m", "memory.cli", "--db", db, "serve", "--http", "--port", "0"],
                                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=errors, cwd=base,
                                env=env(base, db, extra))
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        found = re.search(r" at (http://\S+/mcp) ", log.read_text(errors="replace"))
        if found:
            return proc, found.group(1), log
        time.sleep(0.05)
    proc.kill()
    raise RuntimeError(log.read_text(errors="replace"))




def _open(url: str, token: str | None = None, timeout: float = 10) -> tuple:
    """(HTTP status or the exception's name, the session id)."""
    import httpx2

    try:
        response = httpx2.post(url, timeout=timeout, headers=_headers(token), json={
            "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "f", "version": "1"}}})
        return response.status_code, response.headers.get("mcp-session-id")
    except Exception as exc:  # noqa: BLE001 - a refused or dropped connection is the result
        return type(exc).__name__, None


def _initialize(url: str, token: str | None = None, timeout: float = 10):
    return _open(url, token, timeout)[0]


def _alive(url: str, token: str | None, session: str) -> bool:
    import httpx2

    response = httpx2.post(url, timeout=10, headers=_headers(token, session),
                           json={"jsonrpc": "2.0", "id": 2, "method": "ping"})
    return response.status_code == 200


def _token(db: str, base: Path, principal: str) -> str:
    ran = subprocess.run([sys.executable, "-m", "memory.cli", "--db", db, "token", "create", "--name", principal,
                          "--principal", principal, "--json"], capture_output=True, text=True, cwd=base,
                         env=env(base, db), check=True)
    return json.loads(ran.stdout)["token"]


def session_flood(base: Path, sessions: int) -> None:
    db = str(base / "http.db")
    flooder, other = _token(db, base, "flooder"), _token(db, base, "other")
    proc, url, _ = _http_server(base, db, {"DATALOG_MEMORY_HTTP_MAX_SESSIONS": str(sessions)})
    try:
        status, early = _open(url, other)  # another principal's session, opened before the flood
        opened = [_open(url, flooder) for _ in range(sessions + 20)]
        answer = _initialize(url, other)
        kept = sum(_alive(url, flooder, sid) for code, sid in opened if sid)
        early_alive = bool(early) and _alive(url, other, early)
    finally:
        proc.terminate()
        proc.wait(20)
    granted = [code for code, _ in opened].count(200)
    row("session flood", granted, kept, len(opened) - granted,
        f"one token: {granted} of {len(opened)} opened, {kept} still open (global cap {sessions}); another "
        f"caller's earlier session alive: {early_alive}, its new initialize: {answer}")


def connection_flood(base: Path, connections: int) -> None:
    db = str(base / "conn.db")
    proc, url, _ = _http_server(base, db, {"DATALOG_MEMORY_HTTP_MAX_CONNECTIONS": str(connections)})
    host, port = re.match(r"http://([^:/]+):(\d+)/", url).groups()
    idle: list[socket.socket] = []
    try:
        for _ in range(connections + 50):
            with contextlib.suppress(OSError):
                idle.append(socket.create_connection((host, int(port)), timeout=5))
        time.sleep(0.5)
        answers = [_initialize(url, timeout=5) for _ in range(10)]
    finally:
        for s in idle:
            s.close()
        proc.terminate()
        proc.wait(20)
    row("connection flood", answers.count(200), "-", 10 - answers.count(200),
        f"{len(idle)} idle connections opened (cap {connections}); 10 callers' initialize: "
        f"{sorted(set(map(str, answers)))}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--writes", type=int, default=40)
    parser.add_argument("--sessions", type=int, default=300)
    parser.add_argument("--connections", type=int, default=300)
    args = parser.parse_args()
    scenarios = [("pipelined", lambda b: pipelined(b, args.writes)),
                 ("folder", lambda b: folder_removed(b, args.writes)),
                 ("full", disk_full), ("read-only", read_only), ("backup", backup_while_writing),
                 ("sessions", lambda b: session_flood(b, args.sessions)),
                 ("connections", lambda b: connection_flood(b, args.connections))]
    for name, scenario in scenarios:
        base = Path(tempfile.mkdtemp(prefix=f"dm-faults-{name}-"))
        try:
            scenario(base)
        except Exception as exc:  # noqa: BLE001 - one scenario failing does not hide the others
            row(name, "?", "?", "?", f"scenario failed: {type(exc).__name__}: {exc}"[:200])
        finally:
            shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
