"""Local Responses API server on 127.0.0.1 that replays scripted answers to tests.

A real HTTP/1.1 server (stdlib only) on an ephemeral loopback port, run in background threads,
so it serves sync tests, ``openai.AsyncOpenAI`` in the test's event loop and subprocesses such
as the Codex CLI (docs: shared/reference/codex-cli-offline.md) alike.

Public API::

    server = ResponsesServer()            # or: with ResponsesServer() as server: ...
    server.start() -> server; server.stop()   # stop is idempotent and joins every thread
    server.base_url                       # "http://127.0.0.1:<port>/v1"
    server.enqueue(output=[...], usage=None, id=None, status=None, *, terminal="completed",
                   cut_after_events=None, delay_s=0.0, error_code=..., error_message=...,
                   incomplete_reason=...) -> ScriptedResponse
    server.enqueue_error(status=500, message=..., headers=None, *, code=None, delay_s=0.0)
    server.responder = fn(request_body: dict) -> ScriptedResponse | ScriptedError | None
    server.requests -> list[RecordedRequest]  (.method .path .headers .body .raw .handling_s)
    server.handling_time_s -> float           (sum of handling_s over all requests)
    server.pending -> int; server.errors -> list[BaseException] (bugs inside the server)
    server.context_limit = N              # issue 14: reject inputs above N tokens (or None)
    server.compact_endpoint / server.input_tokens_endpoint = False   # answer 404 instead
    server.count_usage = True             # usage.input_tokens = the server's own count
    server.count_tokens(body) -> int; server.peak_input_tokens -> int

Endpoints:

- ``POST /v1/responses``: the next script answers. Precedence: the FIFO queue first, then
  ``responder`` (called from a server thread; returning None means "nothing scripted"). With
  nothing scripted the reply is HTTP 500 ``{"error": {"code": "no_scripted_response", ...}}``.
  Without ``"stream": true`` the reply is a JSON ``Response`` object; with it, SSE frames
  ``event: <type>\\ndata: <json>\\n\\n`` (chunked, ``Content-Type: text/event-stream``) in the
  order of tools-wire-spec §11: ``response.created``, ``response.in_progress``, per item
  ``output_item.added`` .. ``output_item.done`` (messages add ``content_part.*`` and up to 3
  ``output_text.delta``; ``function_call`` adds ``function_call_arguments.delta/done``;
  ``custom_tool_call`` adds ``custom_tool_call_input.delta/done``; hosted calls add their
  ``response.<type>.<phase>`` progress events, code interpreter ``_code.delta/done`` and image
  generation one ``partial_image``; other items only added/done), then the terminal event. ``sequence_number`` counts from 0.
- ``GET /v1/models``: a one-model list. A WebSocket upgrade is refused with HTTP 426 (a Codex
  CLI custom provider never tries one; the root ``openai_base_url`` key does, 7 times).
  Other paths: 404. Every request is recorded.

Context (issue 14; all off by default): the server counts a body's input tokens as
ceil(UTF-8 bytes / 4) of the compact JSON of ``instructions``, ``tools`` and every ``input``
item from the latest ``compaction`` item on (so a compaction item stands for what it replaced).
With ``context_limit`` set, a larger request is answered HTTP 400 in the OpenAI error shape
(``code: "context_length_exceeded"``, ``param: "input"``, "This model's maximum context
length is N tokens. However, your messages resulted in M tokens."), before any script is
used, and usage reports the count. A body with ``context_management: [{"type":
"compaction", "compact_threshold": T}]`` whose count is above T gets a ``compaction`` item
(``id``, ``encrypted_content``) first in its output (Responses API server-side compaction).
``POST /v1/responses/compact`` answers a ``CompactedResponse`` (``object:
"response.compaction"``: the user messages then one compaction item); ``POST
/v1/responses/input_tokens`` answers ``{"object": "response.input_tokens", "input_tokens"}``.
Each recorded request carries its ``input_tokens`` count.

Faults: ``terminal`` is ``"completed"`` (``response.completed``), ``"failed"``
(``response.failed`` with ``error``), ``"incomplete"`` (``response.incomplete``), ``"error"`` (an
``error`` event; HTTP 500 when not streaming) or None (the stream just ends).
``cut_after_events=N`` drops the connection after N SSE events without the terminating chunk
(the client sees a broken stream); when not streaming it drops the connection before any reply.
``delay_s`` waits (seconds) before answering. ``status`` defaults from ``terminal``.

``handling_s`` is measured from the moment the request body is read until just before the last
write of the answer (booked before the client can see the end of the reply, so a test may read
it as soon as the client returns); it includes ``delay_s`` and building plus writing the answer.
"""

from __future__ import annotations

import base64
import gzip
import json
import math
import socket
import threading
import time
import zlib
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, HTTPServer
from types import TracebackType
from typing import Any
from urllib.parse import urlsplit

from tests.support.items import new_id
from tests.support.items import usage as _usage

__all__ = ["RecordedRequest", "ResponsesServer", "ScriptedError", "ScriptedResponse"]

_TERMINALS = ("completed", "failed", "incomplete", "error", None)
_STATUS_BY_TERMINAL = {
    "completed": "completed",
    "failed": "failed",
    "incomplete": "incomplete",
    "error": "failed",
    None: "completed",
}
_DELTAS = 3


@dataclass(slots=True)
class ScriptedResponse:
    """One scripted model answer (see the module docstring for every knob)."""

    output: list[dict[str, Any]] = field(default_factory=list)
    usage: dict[str, Any] | None = None
    id: str | None = None
    status: str | None = None
    terminal: str | None = "completed"
    cut_after_events: int | None = None
    delay_s: float = 0.0
    error_code: str = "server_error"
    error_message: str = "scripted failure"
    incomplete_reason: str = "max_output_tokens"

    def __post_init__(self) -> None:
        if self.terminal not in _TERMINALS:
            raise ValueError(f"terminal must be one of {_TERMINALS}, got {self.terminal!r}")
        if self.cut_after_events is not None and self.cut_after_events < 0:
            raise ValueError("cut_after_events must be >= 0")
        if self.delay_s < 0:
            raise ValueError("delay_s must be >= 0")
        self.output = json.loads(json.dumps(self.output))  # deep copy; fails early if not JSON


@dataclass(slots=True)
class ScriptedError:
    """One scripted HTTP error reply: ``{"error": {"message", "type", "code", "param"}}``."""

    status: int = 500
    message: str = "scripted error"
    headers: dict[str, str] | None = None
    code: str | None = None
    delay_s: float = 0.0


@dataclass(slots=True)
class RecordedRequest:
    """One request as received: ``body`` is the parsed JSON (None if absent or invalid)."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any
    raw: bytes
    handling_s: float = 0.0
    received_at: float = 0.0  # time.perf_counter() when the body had been read
    input_tokens: int | None = None  # the server's count of a Responses body (issue 14)


Script = ScriptedResponse | ScriptedError
Responder = Callable[[dict[str, Any]], Script | None]


class ResponsesServer:
    """Scriptable Responses API server; thread-safe; one instance per test."""

    def __init__(self, *, model: str = "test-model") -> None:
        self.model = model
        self.responder: Responder | None = None
        self._lock = threading.Lock()
        self._queue: deque[Script] = deque()
        self._requests: list[RecordedRequest] = []
        self._errors: list[BaseException] = []
        self._handling_total = 0.0
        self._stopping = threading.Event()
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None
        self.context_limit: int | None = None
        self.compact_endpoint = True
        self.input_tokens_endpoint = True
        self.count_usage = False
        self._peak_input = 0

    # -- lifecycle -------------------------------------------------------------------------
    def start(self) -> ResponsesServer:
        """Bind 127.0.0.1:0 and serve in a background thread; returns self."""
        if self._httpd is not None:
            raise RuntimeError("ResponsesServer already started")
        self._httpd = _HTTPServer(self)
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": 0.05},
            name=f"ResponsesServer-{self.port}",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving, drop open connections and join every server thread (idempotent)."""
        httpd, thread = self._httpd, self._thread
        if httpd is None or thread is None or self._stopping.is_set():
            return
        self._stopping.set()
        httpd.shutdown()
        thread.join(5)
        httpd.drop_connections_and_join(5)
        httpd.server_close()

    def __enter__(self) -> ResponsesServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    @property
    def port(self) -> int:
        """The bound TCP port (raises RuntimeError before ``start()``)."""
        if self._httpd is None:
            raise RuntimeError("ResponsesServer not started")
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        """``"http://127.0.0.1:<port>/v1"``, the value for ``AsyncOpenAI(base_url=...)``."""
        return f"http://127.0.0.1:{self.port}/v1"

    # -- scripting -------------------------------------------------------------------------
    def enqueue(
        self,
        output: list[dict[str, Any]] | None = None,
        usage: dict[str, Any] | None = None,
        id: str | None = None,
        status: str | None = None,
        **knobs: Any,
    ) -> ScriptedResponse:
        """Queue one answer (FIFO); ``knobs`` are the other ``ScriptedResponse`` fields.

        Raises:
            ValueError: unknown ``terminal`` or negative ``cut_after_events``/``delay_s``.
            TypeError: unknown knob.
        """
        script = ScriptedResponse(
            output=list(output or []), usage=usage, id=id, status=status, **knobs
        )
        with self._lock:
            self._queue.append(script)
        return script

    def enqueue_error(
        self,
        status: int = 500,
        message: str = "scripted error",
        headers: dict[str, str] | None = None,
        *,
        code: str | None = None,
        delay_s: float = 0.0,
    ) -> ScriptedError:
        """Queue one HTTP error reply (e.g. 429 with ``{"retry-after": "0"}``), served once."""
        script = ScriptedError(status, message, dict(headers or {}), code, delay_s)
        with self._lock:
            self._queue.append(script)
        return script

    @property
    def pending(self) -> int:
        """Number of queued scripts not yet served."""
        with self._lock:
            return len(self._queue)

    # -- recording -------------------------------------------------------------------------
    @property
    def requests(self) -> list[RecordedRequest]:
        """Snapshot of the recorded requests, oldest first."""
        with self._lock:
            return list(self._requests)

    @property
    def responses_requests(self) -> list[RecordedRequest]:
        """The ``POST .../responses`` requests only, oldest first (a client such as the Codex
        CLI also sends ``GET /v1/models`` at times of its own choosing)."""
        return [r for r in self.requests if r.method == "POST" and r.path.endswith("/responses")]

    @property
    def handling_time_s(self) -> float:
        """Total seconds spent answering requests (sum of ``handling_s``)."""
        with self._lock:
            return self._handling_total

    @property
    def errors(self) -> list[BaseException]:
        """Exceptions raised inside the server or by ``responder`` (empty when healthy)."""
        with self._lock:
            return list(self._errors)

    # -- context (issue 14) ----------------------------------------------------------------
    @staticmethod
    def count_tokens(body: dict[str, Any]) -> int:
        """The server's token count of a Responses body (see the module docstring)."""
        items = body.get("input") or []
        if isinstance(items, str):
            items = [{"role": "user", "content": items}]
        last = max((i for i, it in enumerate(items) if _is_compaction(it)), default=0)
        size = sum(len(_compact_json(it)) for it in items[last:])
        for key in ("instructions", "tools"):
            if body.get(key):
                size += len(_compact_json(body[key]))
        return (size + 3) // 4

    @property
    def peak_input_tokens(self) -> int:
        """The largest counted Responses request so far (tokens)."""
        with self._lock:
            return self._peak_input

    def _count(self, rec: RecordedRequest) -> int:
        tokens = self.count_tokens(rec.body)
        with self._lock:
            rec.input_tokens = tokens
            self._peak_input = max(self._peak_input, tokens)
        return tokens

    def _overflow(self, tokens: int) -> bytes | None:
        limit = self.context_limit
        if limit is None or tokens <= limit:
            return None
        message = (
            f"This model's maximum context length is {limit} tokens. However, your messages "
            f"resulted in {tokens} tokens. Please reduce the length of the messages."
        )
        err = {
            "message": message,
            "type": "invalid_request_error",
            "param": "input",
            "code": "context_length_exceeded",
        }
        return json.dumps({"error": err}).encode()

    def _compaction_item(self, body: dict[str, Any], tokens: int) -> dict[str, Any]:
        token = json.dumps({"tokens": tokens, "items": len(body.get("input") or [])})
        blob = base64.b64encode(token.encode()).decode()
        return {"type": "compaction", "id": new_id("cmp"), "encrypted_content": blob}

    def _compacted(self, body: dict[str, Any], tokens: int) -> dict[str, Any]:
        items = body.get("input") or []
        users = [
            it
            for it in items
            if isinstance(it, dict)
            and it.get("role") == "user"
            and it.get("type", "message") == "message"
        ]
        return {
            "id": new_id("resp"),
            "object": "response.compaction",
            "created_at": int(time.time()),
            "output": [
                *({**u, "type": "message"} for u in users),
                self._compaction_item(body, tokens),
            ],
            "usage": _usage(tokens, 64),
        }

    # -- internals used by the handler ------------------------------------------------------
    def _record(self, rec: RecordedRequest) -> None:
        with self._lock:
            self._requests.append(rec)

    def _finish(self, rec: RecordedRequest, elapsed: float) -> None:
        with self._lock:
            rec.handling_s = elapsed
            self._handling_total += elapsed

    def _record_error(self, exc: BaseException) -> None:
        with self._lock:
            self._errors.append(exc)

    def _next_script(self, body: dict[str, Any]) -> Script | None:
        with self._lock:
            if self._queue:
                return self._queue.popleft()
        responder = self.responder
        return None if responder is None else responder(body)

    def _response_object(
        self, script: ScriptedResponse, body: dict[str, Any], rid: str, created: int
    ) -> dict[str, Any]:
        status = script.status or _STATUS_BY_TERMINAL[script.terminal]
        obj: dict[str, Any] = {
            "id": rid,
            "object": "response",
            "created_at": created,
            "status": status,
            "model": body.get("model") or self.model,
            "output": script.output,
            "parallel_tool_calls": body.get("parallel_tool_calls", True),
            "tool_choice": body.get("tool_choice", "auto"),
            "tools": body.get("tools") or [],
            "instructions": body.get("instructions"),
            "metadata": body.get("metadata") or {},
            "previous_response_id": body.get("previous_response_id"),
            "temperature": body.get("temperature"),
            "top_p": body.get("top_p"),
            "error": None,
            "incomplete_details": None,
            "usage": script.usage if script.usage is not None else _usage(12, 8),
        }
        for key in ("text", "reasoning", "max_output_tokens", "truncation", "store"):
            if key in body:
                obj[key] = body[key]
        if status == "failed":
            obj["error"] = {"code": script.error_code, "message": script.error_message}
        if status == "incomplete":
            obj["incomplete_details"] = {"reason": script.incomplete_reason}
        return obj


def _chunks(text: str) -> list[str]:
    if not text:
        return []
    size = max(1, math.ceil(len(text) / _DELTAS))
    return [text[i : i + size] for i in range(0, len(text), size)]


def _compact_json(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()


def _is_compaction(item: Any) -> bool:
    return isinstance(item, dict) and item.get("type") == "compaction"


def _item_events(idx: int, item: dict[str, Any]) -> list[dict[str, Any]]:
    kind = item.get("type")
    iid = item.get("id") or f"item_{idx}"
    at = {"item_id": iid, "output_index": idx}
    added = dict(item)
    if "status" in item:
        added["status"] = "in_progress"
    events: list[dict[str, Any]] = []
    if kind == "message":
        added["content"] = []
        events.append({"type": "response.output_item.added", "output_index": idx, "item": added})
        for ci, part in enumerate(item.get("content") or []):
            pat = {**at, "content_index": ci}
            ptype = part.get("type")
            field_name = {"output_text": "text", "refusal": "refusal"}.get(ptype or "")
            empty = {**part, field_name: ""} if field_name else part
            events.append({"type": "response.content_part.added", **pat, "part": empty})
            if ptype == "output_text":
                for piece in _chunks(part.get("text", "")):
                    events.append(
                        {
                            "type": "response.output_text.delta",
                            **pat,
                            "delta": piece,
                            "logprobs": [],
                        }
                    )
                done = {"text": part.get("text", ""), "logprobs": []}
                events.append({"type": "response.output_text.done", **pat, **done})
            elif ptype == "refusal":
                for piece in _chunks(part.get("refusal", "")):
                    events.append({"type": "response.refusal.delta", **pat, "delta": piece})
                done = {"refusal": part.get("refusal", "")}
                events.append({"type": "response.refusal.done", **pat, **done})
            events.append({"type": "response.content_part.done", **pat, "part": part})
    elif kind in ("function_call", "custom_tool_call"):
        key, prefix = (
            ("arguments", "response.function_call_arguments")
            if kind == "function_call"
            else ("input", "response.custom_tool_call_input")
        )
        added[key] = ""
        events.append({"type": "response.output_item.added", "output_index": idx, "item": added})
        for piece in _chunks(item.get(key, "")):
            events.append({"type": f"{prefix}.delta", **at, "delta": piece})
        done = {key: item.get(key, "")}
        if kind == "function_call":
            done["name"] = item.get("name", "")
        events.append({"type": f"{prefix}.done", **at, **done})
    elif kind in _HOSTED_PROGRESS:
        events.append({"type": "response.output_item.added", "output_index": idx, "item": added})
        events.extend(_hosted_progress(kind, item, at))
    else:
        events.append({"type": "response.output_item.added", "output_index": idx, "item": added})
    events.append({"type": "response.output_item.done", "output_index": idx, "item": item})
    return events


#: Progress events a hosted call sends between ``added`` and ``done`` (Responses API stream).
_HOSTED_PROGRESS = {
    "web_search_call": ("in_progress", "searching", "completed"),
    "file_search_call": ("in_progress", "searching", "completed"),
    "code_interpreter_call": ("in_progress", "interpreting", "completed"),
    "image_generation_call": ("in_progress", "generating", "completed"),
    "mcp_call": ("in_progress", "completed"),
}


def _hosted_progress(kind: str, item: dict[str, Any], at: dict[str, Any]) -> list[dict[str, Any]]:
    """``response.<kind>.<phase>`` events; code interpreter code comes as ``_code.delta``
    pieces and ``_code.done``; an image as one ``partial_image`` (the final image) when
    ``partial_images`` of the item says so."""
    events: list[dict[str, Any]] = []
    phases = _HOSTED_PROGRESS[kind]
    events.append({"type": f"response.{kind}.{phases[0]}", **at})
    if kind == "code_interpreter_call":
        for piece in _chunks(item.get("code") or ""):
            events.append(
                {"type": "response.code_interpreter_call_code.delta", **at, "delta": piece}
            )
        events.append(
            {
                "type": "response.code_interpreter_call_code.done",
                **at,
                "code": item.get("code") or "",
            }
        )
    for phase in phases[1:-1]:
        events.append({"type": f"response.{kind}.{phase}", **at})
    if kind == "image_generation_call" and item.get("result"):
        events.append(
            {
                "type": "response.image_generation_call.partial_image",
                **at,
                "partial_image_b64": item["result"],
                "partial_image_index": 0,
            }
        )
    events.append({"type": f"response.{kind}.{phases[-1]}", **at})
    return events


def _stream_events(script: ScriptedResponse, final: dict[str, Any]) -> list[dict[str, Any]]:
    """Every SSE event of one streamed answer, without ``sequence_number`` (spec §11)."""
    start = {**final, "status": "in_progress", "output": [], "usage": None}
    start.update(error=None, incomplete_details=None)
    events: list[dict[str, Any]] = [
        {"type": "response.created", "response": start},
        {"type": "response.in_progress", "response": start},
    ]
    for idx, item in enumerate(script.output):
        events.extend(_item_events(idx, item))
    if script.terminal == "error":
        code, message = script.error_code, script.error_message
        events.append({"type": "error", "code": code, "message": message, "param": None})
    elif script.terminal is not None:
        events.append({"type": f"response.{script.terminal}", "response": final})
    return events


def _compact_threshold(body: dict[str, Any]) -> int | None:
    for entry in body.get("context_management") or []:
        if isinstance(entry, dict) and entry.get("type") == "compaction":
            value = entry.get("compact_threshold")
            return int(value) if value is not None else 0
    return None


def _fields(script: ScriptedResponse) -> dict[str, Any]:
    return {name: getattr(script, name) for name in ScriptedResponse.__dataclass_fields__}


def _error_body(message: str, status: int, code: str | None) -> bytes:
    kind = "invalid_request_error" if 400 <= status < 500 else "server_error"
    err = {"message": message, "type": kind, "code": code, "param": None}
    return json.dumps({"error": err}).encode()


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def setup(self) -> None:
        super().setup()
        # Small writes (headers, SSE frames) must not wait for delayed ACKs (Nagle).
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    server_version = "TandemResponsesServer/1"
    timeout = 60
    server: _HTTPServer
    _rec: RecordedRequest | None = None
    _t0 = 0.0

    def log_message(self, format: str, *args: Any) -> None:  # quiet test output
        return

    # -- request plumbing -----------------------------------------------------------------
    def _read_body(self) -> bytes:
        if "chunked" in self.headers.get("transfer-encoding", "").lower():
            parts = []
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    self.rfile.readline()
                    break
                parts.append(self.rfile.read(size))
                self.rfile.readline()
            raw = b"".join(parts)
        else:
            raw = self.rfile.read(int(self.headers.get("content-length") or 0))
        encoding = self.headers.get("content-encoding", "").lower()
        if encoding == "gzip":
            raw = gzip.decompress(raw)
        elif encoding == "deflate":
            raw = zlib.decompress(raw)
        return raw

    def _begin(self, raw: bytes) -> RecordedRequest:
        received_at = time.perf_counter()
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        rec = RecordedRequest(
            method=self.command,
            path=urlsplit(self.path).path,
            headers={k.lower(): v for k, v in self.headers.items()},
            body=body,
            raw=raw,
            received_at=received_at,
        )
        self.server.owner._record(rec)
        self._rec, self._t0 = rec, received_at
        return rec

    def _mark_done(self) -> None:
        """Book ``handling_s`` once, just before the last write (so the client can't see the
        answer before the timing is recorded)."""
        rec, self._rec = self._rec, None
        if rec is not None:
            self.server.owner._finish(rec, time.perf_counter() - self._t0)

    def _send(self, status: int, payload: bytes, headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.send_header("x-request-id", new_id("req"))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self._mark_done()
        self.wfile.write(payload)

    def _wait(self, delay_s: float) -> bool:
        """Sleep ``delay_s`` seconds; False when the server is stopping meanwhile."""
        return not (delay_s > 0 and self.server.owner._stopping.wait(delay_s))

    # -- verbs -----------------------------------------------------------------------------
    def do_GET(self) -> None:
        rec = self._begin(b"")
        if self.headers.get("upgrade", "").lower() == "websocket":
            self.close_connection = True
            msg = "ResponsesServer speaks HTTP only: WebSocket transport is not supported"
            self._send(426, _error_body(msg, 426, "websocket_unsupported"), {"Connection": "close"})
        elif rec.path.rstrip("/") == "/v1/models":
            model = {"id": self.server.owner.model, "object": "model", "created": 0}
            model["owned_by"] = "tandem-tests"
            self._send(200, json.dumps({"object": "list", "data": [model]}).encode())
        else:
            self._send(404, _error_body(f"no route GET {rec.path}", 404, "not_found"))

    def do_POST(self) -> None:
        owner = self.server.owner
        try:
            raw = self._read_body()
        except (ValueError, OSError, EOFError, zlib.error):
            self.close_connection = True
            self._begin(b"")
            self._send(400, _error_body("unreadable request body", 400, "bad_body"))
            return
        rec = self._begin(raw)
        try:
            self._answer(rec)
        except OSError:  # client went away or server stopping
            self.close_connection = True
        except Exception as exc:
            owner._record_error(exc)
            self.close_connection = True
            msg = f"ResponsesServer internal error: {exc!r}"
            try:
                self._send(500, _error_body(msg, 500, "server_bug"))
            except OSError:
                pass
        finally:
            self._mark_done()

    def _answer(self, rec: RecordedRequest) -> None:
        owner = self.server.owner
        path = rec.path.rstrip("/")
        extra = {
            "/v1/responses/compact": owner.compact_endpoint,
            "/v1/responses/input_tokens": owner.input_tokens_endpoint,
        }
        if path != "/v1/responses" and not extra.get(path):
            self._send(404, _error_body(f"no route POST {rec.path}", 404, "not_found"))
            return
        if not isinstance(rec.body, dict):
            encoding = rec.headers.get("content-encoding", "identity")
            msg = f"request body is not a JSON object (content-encoding: {encoding})"
            self._send(400, _error_body(msg, 400, "bad_json"))
            return
        tokens = owner._count(rec)
        if path == "/v1/responses/input_tokens":
            answer = {"object": "response.input_tokens", "input_tokens": tokens}
            self._send(200, json.dumps(answer).encode())
            return
        overflow = owner._overflow(tokens)
        if overflow is not None:
            self._send(400, overflow)
            return
        if path == "/v1/responses/compact":
            self._send(200, json.dumps(owner._compacted(rec.body, tokens)).encode())
            return
        try:
            script = owner._next_script(rec.body)
        except Exception as exc:
            owner._record_error(exc)
            msg = f"ResponsesServer responder raised {exc!r}"
            self._send(500, _error_body(msg, 500, "responder_error"))
            return
        if script is None:
            number = len(owner.requests)
            msg = (
                f"ResponsesServer: the test scripted no response for POST /v1/responses "
                f"(request #{number}); call server.enqueue(...) or set server.responder"
            )
            self._send(500, _error_body(msg, 500, "no_scripted_response"))
            return
        if not self._wait(script.delay_s):
            self.close_connection = True
            return
        if isinstance(script, ScriptedError):
            body = _error_body(script.message, script.status, script.code)
            self._send(script.status, body, script.headers)
            return
        final = owner._response_object(
            script, rec.body, script.id or new_id("resp"), int(time.time())
        )
        threshold = _compact_threshold(rec.body)
        if threshold is not None and tokens > threshold:
            final["output"] = [owner._compaction_item(rec.body, tokens), *final["output"]]
            script = ScriptedResponse(**{**_fields(script), "output": final["output"]})
        if owner.count_usage or owner.context_limit is not None:
            final["usage"] = {**final["usage"], "input_tokens": tokens}
            final["usage"]["total_tokens"] = tokens + int(final["usage"].get("output_tokens") or 0)
        if rec.body.get("stream"):
            self._stream(script, final)
        elif script.cut_after_events is not None:
            self.close_connection = True  # drop the connection before any reply
        elif script.terminal == "error":
            body = _error_body(script.error_message, 500, script.error_code)
            self._send(500, body)
        else:
            self._send(200, json.dumps(final).encode())

    def _stream(self, script: ScriptedResponse, final: dict[str, Any]) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("x-request-id", new_id("req"))
        self.end_headers()
        for seq, event in enumerate(_stream_events(script, final)):
            if script.cut_after_events is not None and seq >= script.cut_after_events:
                self.close_connection = True  # no terminating chunk: a broken stream
                return
            event["sequence_number"] = seq
            frame = f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode()
            self.wfile.write(b"%X\r\n%s\r\n" % (len(frame), frame))
        if script.cut_after_events is not None:  # cut at or beyond the last event
            self.close_connection = True
            return
        self._mark_done()
        self.wfile.write(b"0\r\n\r\n")


class _HTTPServer(HTTPServer):
    """``HTTPServer`` with one tracked thread per connection, all joined on stop."""

    def __init__(self, owner: ResponsesServer) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.owner = owner
        self._conn_lock = threading.Lock()
        self._conns: set[socket.socket] = set()
        self._threads: list[threading.Thread] = []

    def process_request(self, request: Any, client_address: Any) -> None:
        thread = threading.Thread(
            target=self._serve_connection,
            args=(request, client_address),
            name=f"ResponsesServer-{self.server_address[1]}-conn",
            daemon=True,
        )
        with self._conn_lock:
            self._conns.add(request)
            self._threads = [t for t in self._threads if t.is_alive()]
            self._threads.append(thread)
        thread.start()

    def _serve_connection(self, request: Any, client_address: Any) -> None:
        try:
            self.finish_request(request, client_address)
        except OSError:
            pass
        except Exception as exc:
            self.owner._record_error(exc)
        finally:
            with self._conn_lock:
                self._conns.discard(request)
            self.shutdown_request(request)

    def drop_connections_and_join(self, timeout_s: float) -> None:
        with self._conn_lock:
            conns, threads = list(self._conns), list(self._threads)
        for conn in conns:
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        for thread in threads:
            thread.join(timeout_s)
