"""`serve` over stdio answers `initialize` before the MCP SDK has loaded.

Importing the SDK (its pydantic models of both protocol eras) costs more CPU than the rest of a start
together, about 1.2 s of a 2 s start on two cores, and a client waits for its `initialize` answer meanwhile. The
answer does not depend on the client beyond the protocol version it asks for, so the server keeps the SDK's own
answer to each version it was asked (`$XDG_CACHE_HOME/datalog-memory/initialize-answers.json`, by default
under ~/.cache; keyed by a fingerprint of
this build and of the SDK), and a later start sends that answer as soon as the request is read; then the SDK
loads and gets the same request, and its answer is checked against what was sent (and kept, when it differs:
the fingerprint missed a change) instead of being sent twice. A first start, a new build or SDK, a request of
another shape, or a folder that cannot be written: the SDK answers, as always.

This module imports nothing of the SDK (that is its point), nor the engine or the store.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import os
from importlib import metadata
from pathlib import Path

from . import __version__

log = logging.getLogger("datalog-memory")

ANSWERS_FILE = "initialize-answers.json"
# What shapes the answer besides the requested version: this package's server and guide, and the SDK's release.
SHAPING = ("mcp_server.py", "guide.py", "early_initialize.py")
MAX_FIRST_LINE = 1 << 16  # an initialize is a few hundred bytes; past this the SDK reads the line as usual
# How long the first line may take before the SDK loads anyway (it is what a client sends first, at once).
FIRST_LINE_S = 2.0


@dataclasses.dataclass
class EarlyStart:
    """What was read from stdin before the SDK loaded, and what was answered from it."""

    lines: list[str]  # whole lines read, in order (the SDK gets them first)
    rest: bytes  # the bytes read after them (the start of a line)
    ended: bool  # stdin ended while reading
    answered: str | int | None = None  # the initialize request's id answered early (its SDK answer is not sent)
    version: str | None = None  # the protocol version that request asked for
    sent: dict | None = None  # the result sent


def answers_path() -> Path:
    """A cache, not data: losing it costs one slower start."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "datalog-memory" / ANSWERS_FILE


def fingerprint() -> str:
    """Of this build's server and of the SDK: a kept answer is used only by the build that made it."""
    here = Path(__file__).parent
    parts = [__version__]
    try:
        parts.append(metadata.version("mcp"))
    except metadata.PackageNotFoundError:
        parts.append("no mcp")
    for name in SHAPING:
        try:
            st = (here / name).stat()
            parts.append(f"{name}:{st.st_size}:{st.st_mtime_ns}")
        except OSError:
            parts.append(f"{name}:missing")
    return hashlib.sha256("|".join(parts).encode()).hexdigest()[:24]


def _kept(path: Path, key: str) -> dict:
    try:
        found = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(found, dict) or found.get("fingerprint") != key or not isinstance(found.get("answers"), dict):
        return {}
    return found["answers"]


def keep(version: str, result: dict, path: Path | None = None) -> None:
    """Keep the SDK's `result` to an initialize asking for `version`, for the next start (never fails a start)."""
    path = path or answers_path()
    key = fingerprint()
    answers = _kept(path, key)
    if answers.get(version) == result:
        return
    answers[version] = result
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        scratch = path.with_name(f".{path.name}.{os.getpid()}")
        scratch.write_text(json.dumps({"fingerprint": key, "answers": answers}), encoding="utf-8")
        os.replace(scratch, path)  # whole or not at all: another server may be reading it
    except OSError as exc:
        log.debug("could not keep the initialize answer at %s: %s", path, exc)


def decode_line(data: bytes) -> str:
    """A line of input as text. Bytes that are not UTF-8 are kept as lone surrogates (Python's
    surrogateescape), not replaced: the server refuses such a line (`undecodable`) instead of storing altered
    text as if it were what the client sent."""
    return data.decode("utf-8", "surrogateescape")


def undecodable(line: str) -> int | None:
    """Where the first byte that was not UTF-8 sits in a line `decode_line` made (a character index); None when
    every byte was."""
    if line.isascii():
        return None
    try:
        line.encode("utf-8")
    except UnicodeEncodeError as error:
        return error.start
    return None


def requested_version(line: str) -> tuple[str | int, str] | None:
    """(id, protocolVersion) of a line that is an initialize request as the SDK accepts one; None otherwise
    (anything doubtful is left to the SDK, which answers it as it would)."""
    if undecodable(line) is not None:
        return None
    try:
        message = json.loads(line)
    except (ValueError, RecursionError):
        return None
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0" or message.get("method") != "initialize":
        return None
    rid, params = message.get("id"), message.get("params")
    if not (type(rid) is str or type(rid) is int) or not isinstance(params, dict):  # bool is no id
        return None
    info, version = params.get("clientInfo"), params.get("protocolVersion")
    if not (isinstance(version, str) and isinstance(params.get("capabilities"), dict) and isinstance(info, dict)
            and isinstance(info.get("name"), str) and isinstance(info.get("version"), str)):
        return None
    return rid, version


def _first_line(fd: int) -> tuple[list[str], bytes, bool]:
    """Read until the first whole line (or end of input, or more than MAX_FIRST_LINE bytes, or FIRST_LINE_S)."""
    import select

    chunks: list[bytes] = []
    size = 0
    while size <= MAX_FIRST_LINE:
        ready, _, _ = select.select([fd], [], [], FIRST_LINE_S)
        if not ready:
            break
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            data = b"".join(chunks)
            *whole, rest = data.split(b"\n")
            return [decode_line(w) for w in whole], rest, True
        chunks.append(chunk)
        size += len(chunk)
        if b"\n" in chunk:
            break
    data = b"".join(chunks)
    *whole, rest = data.split(b"\n")
    return [decode_line(w) for w in whole], rest, False


def early_start(stdin_fd: int = 0, stdout_fd: int = 1) -> EarlyStart | None:
    """Read the first line of stdin and, when it is an initialize this build has answered before, send the
    SDK's kept answer to it. None when stdin cannot be read here (the server reads it as usual)."""
    try:
        lines, rest, ended = _first_line(stdin_fd)
    except (OSError, ValueError) as exc:
        log.debug("stdin not read ahead: %s", exc)
        return None
    start = EarlyStart(lines, rest, ended)
    if not lines:
        return start
    found = requested_version(lines[0])
    if found is None:
        return start
    rid, version = found
    result = _kept(answers_path(), fingerprint()).get(version)
    if not isinstance(result, dict):
        return start
    data = (json.dumps({"jsonrpc": "2.0", "id": rid, "result": result}, separators=(",", ":")) + "\n").encode()
    try:
        while data:
            data = data[os.write(stdout_fd, data):]
    except OSError as exc:  # the client is gone: the SDK finds out too
        log.debug("could not answer initialize early: %s", exc)
        return start
    start.answered, start.version, start.sent = rid, version, result
    return start
