"""The HTTP plumbing: a threaded loopback server that hands each request to one function.

Nothing here knows about chat completions; ``_server.py`` decides what to answer.
"""

from __future__ import annotations

import json
import logging
import socket
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = [
    "MAX_BODY_BYTES",
    "HTTPResponse",
    "LoopbackHTTPServer",
    "Responder",
    "error_body",
    "json_response",
]

log = logging.getLogger("assay.testing")

MAX_BODY_BYTES = 32 * 1024 * 1024
"""Larger request bodies are refused with 413 (the server may be run by hand on a shared host)."""


@dataclass(frozen=True)
class HTTPResponse:
    """What to send back; ``drop`` closes the connection without sending anything."""

    status: int = 200
    body: bytes = b""
    headers: tuple[tuple[str, str], ...] = ()
    close: bool = False
    drop: bool = False


def json_response(
    status: int, body: object, headers: tuple[tuple[str, str], ...] = (), *, close: bool = False
) -> HTTPResponse:
    """Build a JSON response (ASCII-escaped, so any Python string encodes)."""
    return HTTPResponse(
        status,
        json.dumps(body).encode("ascii"),
        (("Content-Type", "application/json"), *headers),
        close=close,
    )


def error_body(message: str, error_type: str, code: str | None) -> dict[str, Any]:
    """Build an OpenAI-style error body: ``{"error": {"message", "type", "param", "code"}}``."""
    return {"error": {"message": message, "type": error_type, "param": None, "code": code}}


Responder = Callable[[str, str, dict[str, str], bytes], HTTPResponse]
"""``(method, path, lower-cased headers, body) -> response``, called from handler threads."""

_ErrorSink = Callable[[BaseException], None]


class LoopbackHTTPServer(ThreadingHTTPServer):
    """A ThreadingHTTPServer that can end its keep-alive connections, so closing never hangs."""

    # Benchmarks open many connections at once; the default backlog of 5 drops SYNs and
    # turns into one-second client stalls.
    request_queue_size = 128

    def __init__(
        self, address: tuple[str, int], responder: Responder, on_error: _ErrorSink
    ) -> None:
        super().__init__(address, _Handler)
        self.responder = responder
        self.on_error = on_error
        self._connections: set[socket.socket] = set()
        self._connections_lock = threading.Lock()

    def process_request(self, request: Any, client_address: Any) -> None:
        with self._connections_lock:
            self._connections.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        with self._connections_lock:
            self._connections.discard(request)
        super().shutdown_request(request)

    def end_connections(self) -> None:
        """Shut every open connection down, waking handlers blocked reading a keep-alive socket."""
        with self._connections_lock:
            connections = list(self._connections)
        for connection in connections:
            try:
                connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass  # already closed by its handler

    def handle_error(self, request: Any, client_address: Any) -> None:
        error = sys.exc_info()[1]
        if isinstance(error, OSError):
            # The client went away (timed out, dropped): normal for a fault-injecting server.
            log.debug("connection from %s ended: %r", client_address, error)
            return
        if error is not None:
            self.on_error(error)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as real endpoints do
    server_version = "assay-testing"
    sys_version = ""
    # Errors found before the request line's version is parsed still get a status line.
    default_request_version = "HTTP/1.0"
    server: LoopbackHTTPServer

    def do_GET(self) -> None:
        self._dispatch("GET")

    def do_POST(self) -> None:
        self._dispatch("POST")

    def do_PUT(self) -> None:
        self._dispatch("PUT")

    def do_PATCH(self) -> None:
        self._dispatch("PATCH")

    def do_DELETE(self) -> None:
        self._dispatch("DELETE")

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("%s " + format, self.address_string(), *args)

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        # The stdlib's own rejections (bad request line, oversized headers, unknown method),
        # in OpenAI's error shape instead of an HTML page.
        text = message or HTTPStatus(code).phrase
        error = error_body(text, "invalid_request_error", None)
        self._send(json_response(int(code), error, close=True))

    def _dispatch(self, method: str) -> None:
        body_or_error = self._read_body()
        if isinstance(body_or_error, HTTPResponse):
            self._send(body_or_error)
            return
        headers: dict[str, str] = {}
        for name, value in self.headers.items():
            key = name.lower()
            headers[key] = f"{headers[key]}, {value}" if key in headers else value
        self._send(self.server.responder(method, self.path, headers, body_or_error))

    def _read_body(self) -> bytes | HTTPResponse:
        length_header = self.headers.get("Content-Length")
        if length_header is None:
            if self.headers.get("Transfer-Encoding"):
                return _refuse(411, "Send the request body with a Content-Length header.")
            return b""
        try:
            length = int(length_header)
        except ValueError:
            length = -1
        if length < 0:
            return _refuse(400, f"Invalid Content-Length header: {length_header!r}.")
        if length > MAX_BODY_BYTES:
            return _refuse(413, f"Request body larger than {MAX_BODY_BYTES} bytes.")
        return self.rfile.read(length)

    def _send(self, response: HTTPResponse) -> None:
        if response.drop:
            self.close_connection = True
            return
        self.send_response(response.status)
        for name, value in response.headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(response.body)))
        if response.close:
            self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(response.body)


def _refuse(status: int, message: str) -> HTTPResponse:
    # The body was not read, so the connection cannot carry another request.
    return json_response(status, error_body(message, "invalid_request_error", None), close=True)
