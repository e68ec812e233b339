"""The HTTP server's connections: how many it holds, how many one peer may hold, which go first when the cap
is reached, and how long a caller may take to send a request.

Uvicorn's HTTP/1.1 protocol keeps a connection that never completes a request open forever (any byte cancels
its keep-alive timer), so idle or trickling connections, with or without a token, could take every file
descriptor the process has and leave the server deaf to everyone else. `GuardedH11Protocol` adds the two
limits such a server needs: a cap on open connections (one over it is closed at once, before it costs more
than its accept) and a deadline for each request to arrive whole, head and body, counted from the moment the
server is ready for it (the connection opened, or the previous response finished). A response may then take
as long as it takes (an SSE stream, a long evaluation): the deadline covers what the caller sends, not what
the server answers.

Fair shares (issue 34): a connection that waits for a request and has not sent a byte of one is idle. At the
cap, a new connection closes the oldest idle one instead of being refused, and a peer address at its own cap
(DATALOG_MEMORY_HTTP_MAX_CONNECTIONS_PER_PEER; by default a quarter of the whole, at least 64) gives up its own oldest
idle connection; a connection is refused only when none is idle. Closing an idle keep-alive connection is
ordinary HTTP (a client opens another), so a flood of idle connections, with or without a token, no longer
leaves a caller unserved until the flood ends.

Why a subclass of uvicorn's `H11Protocol` (not public API) and not uvicorn's own settings: `limit_concurrency`
answers 503 to requests over the limit but neither closes idle connections nor lets one in by evicting them,
and `timeout_keep_alive` restarts with any byte, so nothing public bounds how long a request may take to
arrive. The subclass rests on four hooks (connection_made, data_received, on_response_complete,
connection_lost) and two attributes (`conn`, the h11 connection; `connections`, the server's set); this module
is the only place uvicorn's internals are used, pyproject pins the tested uvicorn minor release, and
tests/test_http_limits.py::test_the_uvicorn_hooks_the_connection_limits_rest_on_are_still_there fails by name
if a release moves them."""

from __future__ import annotations

import asyncio
import collections
import logging
import os
import resource

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from .settings import positive

log = logging.getLogger("datalog-memory")

MAX_CONNECTIONS = 1000
DESCRIPTORS_KEPT = 128  # file descriptors left for the database, the workers' pipes and the log
REQUEST_ARRIVAL_S = 30.0  # from ready-for-a-request to the request's last byte (16 MiB at 4.5 Mbit/s)
CONNECTIONS_ENV = "DATALOG_MEMORY_HTTP_MAX_CONNECTIONS"
PER_PEER_ENV = "DATALOG_MEMORY_HTTP_MAX_CONNECTIONS_PER_PEER"
PEER_SHARE = 4  # by default one peer address may hold a quarter of the connections,
PEER_FLOOR = 64  # and never fewer than this many (or the whole, when the cap is smaller): a host runs several clients
ARRIVAL_ENV = "DATALOG_MEMORY_HTTP_REQUEST_TIMEOUT_S"


def configure(environ=None) -> None:
    """The limits from the operator's environment (CONNECTIONS_ENV, ARRIVAL_ENV), the connection cap never above
    what the process's descriptor limit leaves room for."""
    env = os.environ if environ is None else environ
    wanted = positive(env, CONNECTIONS_ENV, int, MAX_CONNECTIONS)
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    room = wanted if soft == resource.RLIM_INFINITY else max(8, soft - DESCRIPTORS_KEPT)
    GuardedH11Protocol.limit = min(wanted, room)
    limit = GuardedH11Protocol.limit
    per_peer = positive(env, PER_PEER_ENV, int, max(limit // PEER_SHARE, min(limit, PEER_FLOOR)))
    GuardedH11Protocol.per_peer = min(per_peer, GuardedH11Protocol.limit)
    GuardedH11Protocol.arrival_s = positive(env, ARRIVAL_ENV, float, REQUEST_ARRIVAL_S)


class GuardedH11Protocol(H11Protocol):
    """Uvicorn's h11 protocol with a connection cap and a request-arrival deadline (see the module)."""

    limit = MAX_CONNECTIONS
    per_peer = MAX_CONNECTIONS // PEER_SHARE
    arrival_s = REQUEST_ARRIVAL_S
    refused = 0  # connections closed at once for the cap, since the start (logged once per 100)
    evicted = 0  # idle connections closed to make room, since the start (logged once per 100)
    # The idle connections (waiting for a request, none of it received), oldest first, and each peer's count:
    # one event loop serves them all, so plain class attributes need no lock.
    idle: dict = {}
    peers: collections.Counter = collections.Counter()

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arrival: asyncio.TimerHandle | None = None
        cls = type(self)
        peer = transport.get_extra_info("peername")
        self.peer = peer[0] if isinstance(peer, (tuple, list)) and peer else str(peer or "")
        cls.peers[self.peer] += 1
        over_peer = cls.peers[self.peer] > self.per_peer
        if (over_peer or len(self.connections) > self.limit) and not self._make_room(self.peer if over_peer else None):
            cls.refused += 1
            if cls.refused % 100 == 1:
                log.warning("refusing connections: %d open (at most %d, %d per peer), none idle (%d connections "
                            "refused so far)", len(self.connections), self.limit, self.per_peer, cls.refused)
            transport.abort()
            return
        self._expect_request()

    def _make_room(self, peer: str | None) -> bool:
        """Close the oldest idle connection (of `peer`, when given) other than this one; whether one was."""
        cls = type(self)
        victim = next((c for c in cls.idle if c is not self and (peer is None or c.peer == peer)), None)
        if victim is None:
            return False
        cls.idle.pop(victim, None)
        cls.evicted += 1
        if cls.evicted % 100 == 1:
            log.info("closing idle connections to make room (%d so far)", cls.evicted)
        victim.transport.close()
        return True

    def data_received(self, data: bytes) -> None:
        type(self).idle.pop(self, None)  # a request is coming: no longer idle
        super().data_received(data)
        if self.conn.their_state is not h11.IDLE and self.conn.their_state is not h11.SEND_BODY:
            self._stop_waiting()  # the request is in whole (or the connection is done)

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing() and self.conn.their_state is h11.IDLE:
            self._expect_request()

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop_waiting()
        cls = type(self)
        cls.idle.pop(self, None)
        peer = getattr(self, "peer", None)
        if peer is not None:
            cls.peers[peer] -= 1
            if cls.peers[peer] <= 0:
                del cls.peers[peer]
            self.peer = None
        super().connection_lost(exc)

    def _expect_request(self) -> None:
        self._stop_waiting()
        self._arrival = self.loop.call_later(self.arrival_s, self._too_slow)
        cls = type(self)
        cls.idle.pop(self, None)
        cls.idle[self] = None  # idle until a byte of the next request arrives (newest last)

    def _stop_waiting(self) -> None:
        arrival = getattr(self, "_arrival", None)
        if arrival is not None:
            arrival.cancel()
            self._arrival = None

    def _too_slow(self) -> None:
        """The request did not arrive in time: the connection goes (a request half read is told it was cut off)."""
        self._arrival = None
        if not self.transport.is_closing():
            self.transport.abort()
