"""Core's stream events as the window's signals: cards, bodies, messages, nesting."""

from __future__ import annotations

import json
import logging
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from core import RawResponsesStreamEvent, RunItemStreamEvent
from core.items import ItemHelpers
from core.tools.agent_tool import AgentTool, AgentToolStreamEvent

from .activity import (
    HOSTED_CALL_TYPES,
    CardBody,
    CardResult,
    CardSpec,
    citations,
    clip_text,
    decode_image,
    hosted_card,
    hosted_result,
    image_format,
    mcp_list_tools_result,
    tool_search_card,
    tool_search_result,
)
from .mcp_cards import arguments_body as mcp_arguments_body
from .mcp_cards import card_head as mcp_card_head
from .mcp_cards import mcp_result

__all__ = ["EventRelay"]

logger = logging.getLogger("desktop")

#: Code streamed into a code interpreter card is re-rendered at most this often (s).
_CODE_INTERVAL_S = 0.05


@dataclass(slots=True)
class _Call:
    kind: str
    started: float = field(default_factory=time.monotonic)
    raw: dict[str, Any] = field(default_factory=dict)  # the call item (MCP cards, issue 18)


class EventRelay:
    """Turns the runner's stream events (and journaled items) into the controller's signals.

    Live events and journal replay go through :meth:`show_item`, so a reopened session looks
    like the live one. Nested runs of agent tools (``AgentTool.add_stream_listener``) come in
    with the outer call id as ``parent``; their entries are adopted by that card.

    Args:
        out: the object whose signals are emitted (the :class:`~desktop.controller.Controller`).
        journal: ``journal(kind, payload)`` records an event.
        root: the workspace folder (shown under shell cards).

    Attributes:
        current: the run result being streamed (its usage is read on ``response.completed``).
        replaying: journaled items are being shown (no durations: they are unknown).
        patch_call_id: the last ``apply_patch`` call (its card waits for the review).
        patch_paths: each ``apply_patch`` card's operation path (call id -> path), so a
            proposal finds its own card when one turn patches several files.
        verdicts: call id → ``(status, summary)`` decided outside the tool's output (the user
            rejected it, a review was withdrawn); the output then keeps that status.
        killed_by: call id → who ended its command (``"you"``: the terminal's kill button;
            ``"Tandem"``: a stopped run or the app closing), for the card's summary.
        on_patch_call: called with ``(call_id, path)`` when an ``apply_patch`` card starts
            (the controller ties a review proposal to its card).
    """

    def __init__(self, out: Any, journal: Callable[[str, dict[str, Any]], None], root: str) -> None:
        self._out = out
        self._journal_event = journal
        self._root = root
        self.current: Any = None
        self.replaying = False
        #: issue 16: call id -> duration (ms) measured from the journal's timestamps, shown
        #: on replayed cards instead of none.
        self.replay_durations: dict[str, int] = {}
        self.patch_call_id: str | None = None
        self.patch_paths: dict[str, str] = {}  # apply_patch call id -> its operation's path
        self.verdicts: dict[str, tuple[str, str]] = {}
        self.killed_by: dict[str, str] = {}
        self.on_patch_call: Callable[[str, str], None] | None = None
        #: call id -> (lines added, lines removed) of what the user's review landed.
        self.patch_counts: dict[str, tuple[int, int]] = {}
        #: call id -> why the policy refused it (``None``: it did not), for the card.
        self.refusal_of: Callable[[str], str | None] = lambda call_id: None
        self._calls: dict[str, _Call] = {}
        self._display_error_shown = False
        self._adopted: set[str] = set()
        self._agent_tools: dict[str, str] = {}  # agent-tool name -> the nested agent's name
        self._mcp_requests: set[str] = set()
        self._open_searches: list[str] = []
        self._code: dict[str, str] = {}  # code interpreter code streamed so far, by item id
        self._code_shown: dict[str, float] = {}  # when that code was last sent (monotonic s)

    def open_calls(self) -> list[str]:
        """Cards started whose output has not arrived, oldest first."""
        return list(self._calls)

    def close_open_calls(self, status: str, summary: str) -> list[str]:
        """Give every open card a final ``status`` (a stopped run: ``cancelled``; a session
        reopened after a crash: ``interrupted``) and forget them; returns their ids."""
        closed = list(self._calls)
        for call_id in closed:
            self.patch_paths.pop(call_id, None)
            call = self._calls.pop(call_id)
            duration = None if self.replaying else int((time.monotonic() - call.started) * 1000)
            self._out.toolUpdated.emit(call_id, status, duration, summary)
        return closed

    def close_open_calls_of(self, call_ids: list[str], status: str, summary: str) -> None:
        """Give the open cards among ``call_ids`` a final ``status`` and forget them."""
        for call_id in call_ids:
            self.patch_paths.pop(call_id, None)
            call = self._calls.pop(call_id, None)
            if call is None:
                continue
            duration = None if self.replaying else int((time.monotonic() - call.started) * 1000)
            self._out.toolUpdated.emit(call_id, status, duration, summary)

    def restart_clock(self, call_id: str) -> None:
        """A card's duration measures the work, not the time it waited for the user."""
        call = self._calls.get(call_id)
        if call is not None:
            call.started = time.monotonic()

    def on_event(self, event: Any, result: Any, parent: str = "") -> None:
        """Show one stream event; an item the window cannot show is logged and skipped (a
        display problem never stops the run)."""
        try:
            if isinstance(event, RawResponsesStreamEvent):
                self._on_raw(event.data, result, parent)
                return
            if not isinstance(event, RunItemStreamEvent):
                return
            raw = event.item.raw_item
            self._journal_event(
                event.name, {"item": raw, "parent": parent} if parent else {"item": raw}
            )
            self.show_item(event.name, raw, getattr(event.item, "output", None), parent)
        except Exception as exc:
            logger.exception("could not show a stream event")
            if not self._display_error_shown:
                self._display_error_shown = True
                self._out.notice.emit(
                    f"Some of the agent's activity could not be shown ({type(exc).__name__}); "
                    "the run goes on.",
                    "warning",
                )

    def _on_raw(self, data: Any, result: Any, parent: str) -> None:
        kind = getattr(data, "type", "")
        if kind == "response.output_text.delta":
            self._adopt(str(data.item_id), parent)
            self._out.assistantDelta.emit(str(data.item_id), str(data.delta))
        elif kind == "response.output_item.added":
            item = data.item
            if getattr(item, "type", "") in HOSTED_CALL_TYPES and getattr(item, "id", None):
                raw = item.model_dump(exclude_none=True, warnings=False)
                self._start_card(self._hosted_card_id(raw), hosted_card(raw), parent)
        elif kind == "response.output_item.done" and getattr(data.item, "type", "") == "reasoning":
            raw = data.item.model_dump(
                exclude_none=True, warnings=False
            )  # in order, before later items
            self.show_item("reasoning_item_created", raw, None, parent)
        elif kind == "response.code_interpreter_call_code.delta":
            item_id = str(data.item_id)
            self._code[item_id] = self._code.get(item_id, "") + str(data.delta)
            now = time.monotonic()  # at most one render per _CODE_INTERVAL_S per cell
            if now - self._code_shown.get(item_id, 0.0) >= _CODE_INTERVAL_S:
                self._code_shown[item_id] = now
                code = clip_text(self._code[item_id])  # bounded, like the finished cell
                self._out.toolBody.emit(item_id, CardBody(code=code, expanded=True))
        elif kind == "response.code_interpreter_call_code.done":
            item_id = str(data.item_id)
            self._code[item_id] = str(data.code)
            self._code_shown.pop(item_id, None)
            self._out.toolBody.emit(
                item_id, CardBody(code=clip_text(self._code[item_id]), expanded=True)
            )
        elif kind == "response.image_generation_call.partial_image":
            image = decode_image(getattr(data, "partial_image_b64", None))
            if image is not None and image_format(image) is not None:
                self._out.toolBody.emit(str(data.item_id), CardBody(images=[image], expanded=True))
        elif kind == "response.completed" and result is not None:
            usage = result.context_wrapper.usage
            self._out.usageChanged.emit(usage.input_tokens, usage.output_tokens, usage.total_tokens)

    def show_item(self, name: str, raw: dict[str, Any], output: Any, parent: str) -> None:
        """Show one run item (live or replayed from the journal) in the conversation."""
        item_id = str(raw.get("id", ""))
        if name == "message_output_created":
            self._adopt(item_id, parent)
            self._out.assistantDone.emit(item_id, ItemHelpers.extract_last_text(raw) or "")
            links = citations(raw)
            if links:
                self._out.citations.emit(item_id, links)
        elif name == "reasoning_item_created":
            self._adopt(item_id, parent)
            text = " ".join(str(s.get("text", "")) for s in raw.get("summary", []) or [])
            self._out.reasoning.emit(item_id, text)
        elif name == "tool_called" and raw.get("type") in HOSTED_CALL_TYPES:
            self._hosted_done(raw, parent)
        elif name == "tool_called":
            self._tool_called(raw, parent)
        elif name == "tool_output":
            self._tool_output(raw, output)
        elif name == "mcp_list_tools":
            self._hosted_done(raw, parent)
        elif name == "tool_search_called":
            call_id = str(raw.get("call_id") or item_id)
            self._open_searches.append(call_id)
            self._start_card(call_id, tool_search_card(raw), parent)
        elif name == "tool_search_output_created":
            call_id = str(raw.get("call_id") or "")
            if call_id in self._open_searches:
                self._open_searches.remove(call_id)
            elif self._open_searches:
                call_id = self._open_searches.pop(0)
            else:
                call_id = call_id or item_id
                self._start_card(call_id, CardSpec("tool_search", "tool search"), parent)
            self._finish_card(call_id, tool_search_result(raw))
        elif name == "mcp_approval_requested":
            self._mcp_requests.add(item_id)
            self._start_card(item_id, hosted_card(raw), parent)
            self._out.toolUpdated.emit(item_id, "waiting-approval", None, "waiting for approval")
        elif name == "mcp_approval_response":
            request_id = str(raw.get("approval_request_id", ""))
            if raw.get("approve"):
                self._out.toolUpdated.emit(request_id, "running", None, "approved")
            else:
                reason = str(raw.get("reason") or "")
                self._out.toolUpdated.emit(request_id, "rejected", None, reason or "rejected")

    def _adopt(self, entry_id: str, parent: str) -> None:
        if parent and entry_id and entry_id not in self._adopted:
            self._adopted.add(entry_id)
            self._out.nestedEntry.emit(entry_id, parent)

    def _start_card(self, call_id: str, spec: CardSpec, parent: str) -> None:
        if call_id not in self._calls:
            self._calls[call_id] = _Call(spec.kind)
        self._adopt(call_id, parent)
        self._out.toolStarted.emit(call_id, spec.kind, spec.title, spec.detail)

    def _finish_card(self, call_id: str, result: CardResult) -> None:
        self.patch_paths.pop(call_id, None)
        call = self._calls.pop(call_id, None)
        duration = int((time.monotonic() - call.started) * 1000) if call else None
        if self.replaying:
            duration = self.replay_durations.pop(call_id, None)
        self._out.toolUpdated.emit(call_id, result.status, duration, result.summary)
        if result.body is not None and not result.body.is_empty():
            self._out.toolBody.emit(call_id, result.body)

    def _hosted_done(self, raw: dict[str, Any], parent: str) -> None:
        """A hosted call arrived complete: its card (started live or now) gets the result."""
        call_id = self._hosted_card_id(raw)
        self._code.pop(call_id, None)
        self._start_card(call_id, hosted_card(raw), parent)
        if raw.get("type") == "mcp_list_tools":
            self._finish_card(call_id, mcp_list_tools_result(raw))
        else:
            self._finish_card(call_id, hosted_result(raw))

    def _hosted_card_id(self, raw: dict[str, Any]) -> str:
        request = str(raw.get("approval_request_id") or "")
        if raw.get("type") == "mcp_call" and request in self._mcp_requests:
            return request  # the approved request's card becomes the call's card
        return str(raw.get("id", ""))

    def _on_nested(self, payload: AgentToolStreamEvent) -> None:
        tool_call = payload.get("tool_call") or {}
        parent = str(tool_call.get("call_id") or "")
        self.on_event(payload["event"], self.current, parent)

    def watch_agent_tools(self, agent: Any, seen: set[int] | None = None) -> None:
        """Listen to the nested runs of every agent tool reachable from ``agent``."""
        seen = set() if seen is None else seen
        if id(agent) in seen:
            return
        seen.add(id(agent))
        for tool in getattr(agent, "tools", []) or []:
            if isinstance(tool, AgentTool):
                self._agent_tools[tool.name] = str(getattr(tool.agent, "name", tool.name))
                tool.add_stream_listener(self._on_nested)
                self.watch_agent_tools(tool.agent, seen)

    def _tool_called(self, raw: dict[str, Any], parent: str = "") -> None:
        call_id = str(raw.get("call_id") or raw.get("id") or "")
        kind = str(raw.get("type"))
        if kind == "shell_call":
            commands = raw.get("action", {}).get("commands", [])
            card = ("shell", " && ".join(map(str, commands)), self._root)
        elif kind == "apply_patch_call":
            op = raw.get("operation", {})
            card = (
                "apply_patch",
                f"apply_patch {op.get('path')}",
                str(op.get("type", "")).replace("_file", ""),
            )
        elif kind == "function_call" and raw.get("name") in self._agent_tools:
            card = ("agent", _agent_task(raw.get("arguments")), self._agent_tools[raw["name"]])
        elif kind == "function_call" and (mcp := mcp_card_head(raw)) is not None:
            card = mcp  # issue 18: a local MCP tool (desktop/mcp_cards.py)
        elif kind == "function_call":
            card = ("function", f"{raw.get('name')}({_short(raw.get('arguments', ''))})", "")
        elif kind == "computer_call":
            actions = raw.get("actions") or [raw.get("action") or {}]
            card = ("computer", ", ".join(str(a.get("type", "action")) for a in actions), "browser")
        else:
            card = ("hosted", kind.removesuffix("_call").replace("_", " "), "")
        self._calls[call_id] = _Call(card[0], raw=raw if card[0] == "mcp" else {})
        if card[0] == "apply_patch":
            self.patch_call_id = call_id
            operation = raw.get("operation")
            path = operation.get("path") if isinstance(operation, dict) else None
            self.patch_paths[call_id] = str(path or "")
        self._adopt(call_id, parent)
        self._out.toolStarted.emit(call_id, *card)
        if card[0] == "mcp":
            self._out.toolBody.emit(call_id, mcp_arguments_body(raw))
        if card[0] == "apply_patch" and self.on_patch_call is not None and not self.replaying:
            self.on_patch_call(call_id, str(raw.get("operation", {}).get("path", "")))

    def _tool_output(self, raw: dict[str, Any], output: Any) -> None:
        call_id = str(raw.get("call_id") or "")
        call = self._calls.pop(call_id, None)
        duration = int((time.monotonic() - call.started) * 1000) if call else None
        if self.replaying:  # shown again from the journal: timed by its events (issue 16)
            duration = self.replay_durations.pop(call_id, None)
        if output is None:  # replayed: the wire item carries the output
            output = raw.get("output") if isinstance(raw.get("output"), str) else None
        status, summary = "completed", _short(str(output or ""), 160)
        if call is not None and call.kind == "agent":  # a sub-agent answers in Markdown
            summary = _short(_plain_markdown(str(output or "")), 160)
        verdict = self.verdicts.pop(call_id, None)
        refusal = self.refusal_of(call_id) if verdict is None else None
        if refusal:
            verdict = ("rejected", f"refused by policy: {refusal}")
        if verdict is not None:  # rejected by the user, or by policy: not "failed, exit 1"
            status, summary = verdict
        elif call is not None and call.kind == "mcp":  # issue 18: text, image, JSON or error
            status, summary, body = mcp_result(call.raw, output)
            self._out.toolBody.emit(call_id, body)
        elif raw.get("type") == "shell_call_output":
            status, summary = _shell_status(raw.get("output", []), self.killed_by.pop(call_id, ""))
        elif raw.get("type") == "computer_call_output":
            summary = "screenshot sent to the model"
        elif raw.get("type") == "apply_patch_call_output":
            text = str(raw.get("output", ""))
            status = "failed" if raw.get("status") == "failed" else "completed"
            if status == "failed" and text.startswith("The user rejected"):
                status = "rejected"
            summary = _short(text, 160)
            counts = self.patch_counts.pop(call_id, None)
            if counts is not None and status == "completed":
                summary = f"+{counts[0]} \u2212{counts[1]} · {summary}"
        self._out.toolUpdated.emit(call_id, status, duration, summary)


#: Exit codes of a process ended by a signal, as a shell reports them (128 + N) or as
#: ``returncode`` does (-N).
_SIGNALS = {1: "SIGHUP", 2: "SIGINT", 3: "SIGQUIT", 6: "SIGABRT", 9: "SIGKILL", 15: "SIGTERM"}


def _signal_of(code: Any) -> str | None:
    if not isinstance(code, int):
        return None
    number = -code if code < 0 else code - 128 if 128 < code < 160 else 0
    return _SIGNALS.get(number) if number else None


def _shell_status(entries: list[dict[str, Any]], killed_by: str) -> tuple[str, str]:
    """A shell card's status and summary from its ``shell_call_output`` entries: ``timed
    out (ended by Tandem)``, ``killed by you (SIGTERM)``, ``killed by SIGKILL (not by
    Tandem)``, ``exit 2``; ``killed`` when any command was ended by a signal."""
    parts: list[str] = []
    status = "completed"
    for entry in entries:
        outcome = entry.get("outcome", {}) or {}
        code = outcome.get("exit_code")
        signal = _signal_of(code)
        if outcome.get("type") == "timeout":
            parts.append("timed out (ended by Tandem)")
            status = "killed"
        elif signal is not None:
            who = f"by {killed_by}" if killed_by else "by a signal, not by Tandem"
            parts.append(f"killed {who} ({signal}, exit {code})")
            status = "killed"
        else:
            parts.append(f"exit {code}")
            if code and status == "completed":
                status = "failed"
    return status, ", ".join(parts)


def _plain_markdown(text: str) -> str:
    """Markdown as a plain line: code ticks, emphasis marks and link targets dropped."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    return re.sub(r"`+|\*\*|__|(?<!\w)[*_](?=\S)|(?<=\S)[*_](?!\w)", "", text)


def _agent_task(arguments: Any) -> str:
    """The task an agent-tool call gives its agent: the ``input`` argument, else the JSON."""
    try:
        args = json.loads(arguments) if isinstance(arguments, str) else arguments
    except ValueError:
        return _short(arguments, 200)
    if isinstance(args, dict) and isinstance(args.get("input"), str):
        return _short(args["input"], 200)
    return _short(args, 200)


def _short(text: Any, limit: int = 80) -> str:
    value = text if isinstance(text, str) else json.dumps(text)
    value = " ".join(value.split())
    return value if len(value) <= limit else value[: limit - 1] + "…"
