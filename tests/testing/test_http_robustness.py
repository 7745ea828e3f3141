"""Bad requests get OpenAI-style errors and never take the server down (raw HTTP on loopback)."""

from __future__ import annotations

import http.client
import json
import socket
from collections.abc import Iterator
from typing import Any

import openai
import pytest

from assay.testing import ScriptedLLMServer

USER_HI: Any = [{"role": "user", "content": "hi"}]


@pytest.fixture
def connection(server: ScriptedLLMServer) -> Iterator[http.client.HTTPConnection]:
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    yield connection
    connection.close()


def _exchange(
    connection: http.client.HTTPConnection, method: str, path: str, body: bytes | None = None
) -> tuple[int, dict[str, Any]]:
    connection.request(method, path, body=body, headers={"Content-Type": "application/json"})
    response = connection.getresponse()
    return response.status, json.loads(response.read())


def _assert_openai_error(body: dict[str, Any]) -> None:
    assert set(body) == {"error"}
    assert {"message", "type", "code"} <= set(body["error"])
    assert body["error"]["message"]


@pytest.mark.parametrize(
    "body",
    [
        b"{not json",
        b"",
        b"\xff\xfe",  # not UTF-8
        b"[" * 100_000 + b"]" * 100_000,  # deep enough to exhaust the recursion limit
        b'["a list", "not an object"]',
    ],
    ids=["syntax", "empty", "not-utf8", "deep", "not-object"],
)
def test_unparseable_body_is_a_400_and_is_not_recorded(
    server: ScriptedLLMServer, connection: http.client.HTTPConnection, body: bytes
) -> None:
    status, error = _exchange(connection, "POST", "/v1/chat/completions", body)

    assert status == 400
    _assert_openai_error(error)
    assert error["error"]["type"] == "invalid_request_error"
    assert server.request_count == 0
    # The same keep-alive connection still works.
    status, completion = _exchange(
        connection, "POST", "/v1/chat/completions", json.dumps({"messages": USER_HI}).encode()
    )
    assert (status, completion["choices"][0]["message"]["content"]) == (200, "hi")


def test_missing_messages_is_a_400_but_recorded(
    server: ScriptedLLMServer, connection: http.client.HTTPConnection
) -> None:
    status, error = _exchange(connection, "POST", "/v1/chat/completions", b'{"model": "m"}')

    assert status == 400
    assert "messages" in error["error"]["message"]
    assert [request.body for request in server.requests] == [{"model": "m"}]


def test_streaming_is_refused_with_a_bad_request(
    server: ScriptedLLMServer, client: openai.OpenAI
) -> None:
    with pytest.raises(openai.BadRequestError) as raised:
        client.chat.completions.create(model="m", messages=USER_HI, stream=True)

    assert raised.value.code == "unsupported_parameter"
    assert server.requests[0].body["stream"] is True


def test_unknown_path_is_a_404(connection: http.client.HTTPConnection) -> None:
    status, error = _exchange(connection, "POST", "/v1/embeddings", b"{}")

    assert status == 404
    _assert_openai_error(error)
    assert error["error"]["code"] == "unknown_url"


def test_wrong_method_is_a_405(connection: http.client.HTTPConnection) -> None:
    status, error = _exchange(connection, "GET", "/v1/chat/completions")

    assert status == 405
    _assert_openai_error(error)


def test_query_string_and_trailing_slash_are_ignored(
    connection: http.client.HTTPConnection,
) -> None:
    status, models = _exchange(connection, "GET", "/v1/models/?limit=1")

    assert status == 200
    assert [model["id"] for model in models["data"]] == ["assay-test"]


@pytest.mark.parametrize(
    ("content_length", "expected_status"),
    [("nope", 400), ("-1", 400), (str(10**12), 413)],
)
def test_bad_content_length_is_refused_and_the_connection_closed(
    server: ScriptedLLMServer, content_length: str, expected_status: int
) -> None:
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as raw:
        raw.sendall(
            b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n"
            + f"Content-Length: {content_length}\r\n\r\n".encode()
        )
        reply = b""
        while chunk := raw.recv(65536):
            reply += chunk

    head, _, body = reply.partition(b"\r\n\r\n")
    assert head.startswith(f"HTTP/1.1 {expected_status} ".encode())
    assert b"Connection: close" in head
    _assert_openai_error(json.loads(body))


def test_garbage_request_line_does_not_stop_the_server(
    server: ScriptedLLMServer, client: openai.OpenAI
) -> None:
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as raw:
        raw.sendall(b'\x00\x01 "garbage\r\n\r\n')
        reply = b""
        while chunk := raw.recv(65536):
            reply += chunk

    head, _, body = reply.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 400 ")
    _assert_openai_error(json.loads(body))

    assert client.chat.completions.create(model="m", messages=USER_HI).choices[0].message.content
    assert server.errors == []
    assert server.request_count == 1
