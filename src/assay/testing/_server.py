"""ScriptedLLMServer: an OpenAI-compatible endpoint on loopback whose answers a test scripts."""

from __future__ import annotations

import json
import threading
import time
import traceback
from collections import deque
from collections.abc import Sequence
from types import TracebackType
from urllib.parse import urlsplit

from assay.testing._completion import (
    completion_body,
    estimate_completion_tokens,
    models_body,
    normalize_reply,
    status_error_body,
)
from assay.testing._http import HTTPResponse, LoopbackHTTPServer, error_body, json_response
from assay.testing._reply import Fault, FaultKind, LatencyModel, Reply, ReplyFunction, ReplyValue
from assay.testing._request import ChatRequest

__all__ = ["ScriptedLLMServer"]

_HOST = "127.0.0.1"
_CHAT_PATH = "/v1/chat/completions"
_MODELS_PATH = "/v1/models"
_DROPPED = HTTPResponse(drop=True)


def echo_last_user_text(request: ChatRequest) -> ReplyValue:
    """The default reply function: answer the last user message's text."""
    return request.last_user_text


class ScriptedLLMServer:
    """An OpenAI-compatible chat-completions server on 127.0.0.1 that answers as scripted.

    Each ``POST /v1/chat/completions`` is recorded, then answered by the next queued fault
    (see :meth:`enqueue_faults`) or else by ``reply(request)``. The server runs in background
    threads; use it as a context manager, or call :meth:`start` and :meth:`close`.

    Example::

        with ScriptedLLMServer(lambda request: {"findings": []}) as server:
            client = openai.OpenAI(base_url=server.base_url, api_key="x", max_retries=0)
            client.chat.completions.create(model="assay-test", messages=[...])
            assert server.request_count == 1
    """

    def __init__(
        self,
        reply: ReplyFunction | None = None,
        *,
        models: Sequence[str] = ("assay-test",),
        latency: LatencyModel | None = None,
        port: int = 0,
    ) -> None:
        """Configure the server; nothing listens until :meth:`start` or ``with``.

        Args:
            reply: Called once per request that no queued fault answers; may be replaced
                later through the ``reply`` attribute. Echoes the last user message by default.
            models: The model ids ``GET /v1/models`` lists; the first is reported when a
                request names no model.
            latency: Simulated latency added to every reply; none by default.
            port: The port to listen on; 0 picks a free one.
        """
        if not models:
            raise ValueError("a server lists at least one model")
        self.reply: ReplyFunction = reply or echo_last_user_text
        self.models = tuple(models)
        self.latency = latency
        self._port = port
        self._lock = threading.Lock()
        self._requests: list[ChatRequest] = []
        self._errors: list[BaseException] = []
        self._faults: dict[str | None, deque[Fault]] = {}
        self._closing = threading.Event()
        self._http_server: LoopbackHTTPServer | None = None
        self._serve_thread: threading.Thread | None = None

    # -- lifecycle ---------------------------------------------------------------------------

    def start(self) -> ScriptedLLMServer:
        """Bind and start serving in a background thread.

        Returns:
            The server itself.
        """
        if self._http_server is not None:
            raise RuntimeError("the server is already running")
        self._closing.clear()
        http_server = LoopbackHTTPServer((_HOST, self._port), self._respond, self._record_error)
        self._serve_thread = threading.Thread(
            target=http_server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name=f"ScriptedLLMServer:{http_server.server_address[1]}",
            daemon=True,
        )
        self._http_server = http_server
        self._serve_thread.start()
        return self

    def close(self) -> None:
        """Stop serving: wake delayed replies, end open connections, join every thread."""
        http_server, serve_thread = self._http_server, self._serve_thread
        if http_server is None or serve_thread is None:
            return
        self._closing.set()
        http_server.shutdown()
        serve_thread.join()
        http_server.end_connections()
        http_server.server_close()  # joins the handler threads
        self._http_server = self._serve_thread = None

    def __enter__(self) -> ScriptedLLMServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc_value: BaseException | None,
        exc_traceback: TracebackType | None,
    ) -> None:
        self.close()

    # -- addresses ---------------------------------------------------------------------------

    @property
    def port(self) -> int:
        """The port the server listens on."""
        if self._http_server is None:
            raise RuntimeError("the server is not running; use `with` or start()")
        return int(self._http_server.server_address[1])

    @property
    def url(self) -> str:
        """The server's root, e.g. ``http://127.0.0.1:PORT``."""
        return f"http://{_HOST}:{self.port}"

    @property
    def base_url(self) -> str:
        """The OpenAI base URL, e.g. ``http://127.0.0.1:PORT/v1``."""
        return f"{self.url}/v1"

    # -- script and record -------------------------------------------------------------------

    def enqueue_faults(self, *faults: Fault, stage: str | None = None) -> None:
        """Answer the next requests with these faults, in order, before the reply function.

        A request takes the next fault queued for its stage, else the next one queued for
        any stage, else it goes to the reply function.

        Args:
            *faults: The faults, one per request.
            stage: Only requests whose ``X-Assay-Stage`` is this; ``None`` means any request.
        """
        for fault in faults:
            if not isinstance(fault, Fault):
                raise TypeError(f"enqueue_faults takes Fault values, not {type(fault).__name__}")
        with self._lock:
            self._faults.setdefault(stage, deque()).extend(faults)

    @property
    def requests(self) -> list[ChatRequest]:
        """A copy of the chat-completion requests received, in arrival order."""
        with self._lock:
            return list(self._requests)

    @property
    def request_count(self) -> int:
        """How many chat-completion requests were received."""
        with self._lock:
            return len(self._requests)

    def requests_for(self, stage: str | None) -> list[ChatRequest]:
        """Return the requests whose ``X-Assay-Stage`` header is ``stage`` (``None``: no header)."""
        return [request for request in self.requests if request.stage == stage]

    @property
    def errors(self) -> list[BaseException]:
        """Exceptions raised by the reply function (each also answered with HTTP 500)."""
        with self._lock:
            return list(self._errors)

    def reset(self) -> None:
        """Forget recorded requests and errors and drop queued faults; keep the reply function."""
        with self._lock:
            self._requests.clear()
            self._errors.clear()
            self._faults.clear()

    # -- answering (runs in handler threads) ---------------------------------------------------

    def _record_error(self, error: BaseException) -> None:
        with self._lock:
            self._errors.append(error)

    def _respond(
        self, method: str, target: str, headers: dict[str, str], body: bytes
    ) -> HTTPResponse:
        path = urlsplit(target).path.rstrip("/")
        if path == _CHAT_PATH and method == "POST":
            return self._respond_chat(headers, body)
        if path == _MODELS_PATH and method == "GET":
            return json_response(200, models_body(self.models))
        if path in (_CHAT_PATH, _MODELS_PATH):
            message = f"Method {method} not allowed on {path}."
            return json_response(405, error_body(message, "invalid_request_error", None))
        message = f"Unknown request URL: {method} {path}."
        return json_response(404, error_body(message, "invalid_request_error", "unknown_url"))

    def _respond_chat(self, headers: dict[str, str], body: bytes) -> HTTPResponse:
        try:
            parsed = json.loads(body)
        except (ValueError, RecursionError) as error:  # UnicodeDecodeError is a ValueError
            message = f"We could not parse the JSON body of your request: {error}."
            return json_response(400, error_body(message, "invalid_request_error", None))
        if not isinstance(parsed, dict):
            message = "The request body must be a JSON object."
            return json_response(400, error_body(message, "invalid_request_error", None))
        request = ChatRequest(body=parsed, headers=headers, received_at=time.monotonic())
        with self._lock:
            self._requests.append(request)
            number = len(self._requests)
        if parsed.get("stream") is True:
            message = "Streaming is not supported by the scripted server; send stream=false."
            return json_response(
                400, error_body(message, "invalid_request_error", "unsupported_parameter")
            )
        if not isinstance(parsed.get("messages"), list):
            message = "'messages' is a required property and must be an array."
            return json_response(400, error_body(message, "invalid_request_error", None))
        with self._lock:
            fault = self._next_fault(request.stage)
        try:
            if fault is not None:
                return self._resolve(fault, request, number, from_reply_function=False)
            return self._call_reply_function(request, number)
        except Exception as error:  # the script's mistake (raised, or a reply of a wrong type)
            return self._script_failed(error)

    def _next_fault(self, stage: str | None) -> Fault | None:
        # Caller holds the lock. The stage's own queue first: it is the more specific script.
        for key in (stage, None) if stage is not None else (None,):
            queue = self._faults.get(key)
            if queue:
                return queue.popleft()
        return None

    def _call_reply_function(self, request: ChatRequest, number: int) -> HTTPResponse:
        return self._resolve(self.reply(request), request, number, from_reply_function=True)

    def _resolve(
        self, value: object, request: ChatRequest, number: int, *, from_reply_function: bool
    ) -> HTTPResponse:
        answer = normalize_reply(value)
        if isinstance(answer, Reply):
            return self._completion(answer, request, number)
        if answer.kind is FaultKind.STATUS:
            return self._status(answer)
        if answer.kind is FaultKind.MALFORMED_JSON:
            body = (answer.body or "").encode("utf-8", "surrogatepass")
            return HTTPResponse(200, body, (("Content-Type", "application/json"),))
        if answer.kind is FaultKind.DELAY:
            if not self._sleep(answer.delay_s):
                return _DROPPED
            if answer.reply is not None:
                return self._resolve(answer.reply, request, number, from_reply_function=True)
            if from_reply_function:
                # The reply function already answered with this delay; calling it again
                # would loop, so the delayed answer is empty.
                return self._completion(Reply(""), request, number)
            return self._call_reply_function(request, number)
        if answer.kind is FaultKind.REPLY:
            fixed_reply = answer.reply if answer.reply is not None else Reply("")
            return self._resolve(fixed_reply, request, number, from_reply_function=True)
        return _DROPPED

    def _completion(self, reply: Reply, request: ChatRequest, number: int) -> HTTPResponse:
        wait_s = reply.delay_s
        if self.latency is not None:
            wait_s += self.latency.seconds_for(estimate_completion_tokens(reply))
        if not self._sleep(wait_s):
            return _DROPPED
        body = completion_body(
            reply,
            request,
            completion_id=f"chatcmpl-{number:08d}",
            created=int(time.time()),
            default_model=self.models[0],
        )
        return json_response(200, body, (("x-request-id", f"req_{number:08d}"),))

    def _status(self, fault: Fault) -> HTTPResponse:
        headers: tuple[tuple[str, str], ...] = ()
        if fault.retry_after is not None:
            headers = (("Retry-After", format(fault.retry_after, "g")),)
        if fault.body is None:
            return json_response(
                fault.status_code, status_error_body(fault.status_code, fault.message), headers
            )
        body = fault.body.encode("utf-8", "surrogatepass")
        return HTTPResponse(
            fault.status_code, body, (("Content-Type", "application/json"), *headers)
        )

    def _script_failed(self, error: Exception) -> HTTPResponse:
        self._record_error(error)
        details = "".join(traceback.format_exception(error)).rstrip()
        message = f"The scripted reply failed: {type(error).__name__}: {error}\n\n{details}"
        # A script bug is deterministic: tell the SDK not to retry it.
        return json_response(
            500,
            error_body(message, "server_error", "reply_function_error"),
            (("x-should-retry", "false"),),
        )

    def _sleep(self, seconds: float) -> bool:
        """Wait ``seconds`` unless the server closes first; returns False if it closed."""
        if seconds > 0:
            return not self._closing.wait(seconds)
        return not self._closing.is_set()
