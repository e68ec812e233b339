"""The HTTP server's connections: how many it holds, and how long a caller may take to send a request.

Uvicorn's HTTP/1.1 protocol keeps a connection that never completes a request open forever (any byte cancels
its keep-alive timer), so idle or trickling connections, with or without a token, could take every file
descriptor the process has and leave the server deaf to everyone else. `GuardedH11Protocol` adds the two
limits such a server needs: a cap on open connections (one over it is closed at once, before it costs more
than its accept) and a deadline for each request to arrive whole, head and body, counted from the moment the
server is ready for it (the connection opened, or the previous response finished). A response may then take
as long as it takes (an SSE stream, a long evaluation): the deadline covers what the caller sends, not what
the server answers."""

from __future__ import annotations

import asyncio
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
ARRIVAL_ENV = "DATALOG_MEMORY_HTTP_REQUEST_TIMEOUT_S"


def configure(environ=None) -> None:
    """The limits from the operator's environment (CONNECTIONS_ENV, ARRIVAL_ENV), the connection cap never above
    what the process's descriptor limit leaves room for."""
    env = os.environ if environ is None else environ
    wanted = positive(env, CONNECTIONS_ENV, int, MAX_CONNECTIONS)
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    room = wanted if soft == resource.RLIM_INFINITY else max(8, soft - DESCRIPTORS_KEPT)
    GuardedH11Protocol.limit = min(wanted, room)
    GuardedH11Protocol.arrival_s = positive(env, ARRIVAL_ENV, float, REQUEST_ARRIVAL_S)


class GuardedH11Protocol(H11Protocol):
    """Uvicorn's h11 protocol with a connection cap and a request-arrival deadline (see the module)."""

    limit = MAX_CONNECTIONS
    arrival_s = REQUEST_ARRIVAL_S
    refused = 0  # connections closed at once for the cap, since the start (logged once per 100)

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arrival: asyncio.TimerHandle | None = None
        if len(self.connections) > self.limit:
            cls = type(self)
            cls.refused += 1
            if cls.refused % 100 == 1:
                log.warning("refusing connections: %d open, the limit (%d connections refused so far)",
                            self.limit, cls.refused)
            transport.abort()
            return
        self._expect_request()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self.conn.their_state is not h11.IDLE and self.conn.their_state is not h11.SEND_BODY:
            self._stop_waiting()  # the request is in whole (or the connection is done)

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing() and self.conn.their_state is h11.IDLE:
            self._expect_request()

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop_waiting()
        super().connection_lost(exc)

    def _expect_request(self) -> None:
        self._stop_waiting()
        self._arrival = self.loop.call_later(self.arrival_s, self._too_slow)

    def _stop_waiting(self) -> None:
        if getattr(self, "_arrival", None) is not None:
            self._arrival.cancel()
            self._arrival = None

    def _too_slow(self) -> None:
        """The request did not arrive in time: the connection goes (a request half read is told it was cut off)."""
        self._arrival = None
        if not self.transport.is_closing():
            self.transport.abort()
