"""Run items as terminal lines, for ``tandem run`` and ``tandem demo --headless``.

One line per call (``$ command``, ``apply_patch update_file path``, ``-> tool(args)``,
``[web_search] query -> 3 sources``), its output indented behind ``| ``, escape sequences
stripped so a model or a command cannot drive the terminal.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from typing import Any, TextIO

from core import RunItemStreamEvent
from core.items import ItemHelpers

from .activity import (
    HOSTED_CALL_TYPES,
    citations,
    hosted_card,
    hosted_result,
    mcp_list_tools_result,
    tool_search_card,
    tool_search_result,
)
from .views.ansi import display_text

__all__ = ["item_lines", "nested_printer", "print_item"]

_OUTPUT_LIMIT = 2000  # characters of a tool's output printed


def print_item(
    event: RunItemStreamEvent,
    out: TextIO,
    *,
    indent: str = "",
    patches: bool = False,
    shown_nested: set[str] | None = None,
) -> None:
    """Print a run item event's lines to ``out``, each prefixed with ``indent``.

    Args:
        shown_nested: call ids whose sub-agent run :func:`nested_printer` already printed;
            their outputs (the sub-agent's last answer) are not printed again.
    """
    raw = event.item.raw_item
    if event.name == "tool_output" and shown_nested and raw.get("call_id") in shown_nested:
        print(f"{indent}  | (the answer above)", file=out)
        return
    lines = item_lines(event.name, raw, getattr(event.item, "output", None), patches=patches)
    for line in lines:
        print(f"{indent}{line}".rstrip(), file=out)


def item_lines(name: str, raw: dict[str, Any], output: Any, *, patches: bool = False) -> list[str]:
    """The lines of one run item (``name`` is the stream event name, spec §10.3).

    Args:
        name: ``tool_called``, ``tool_output``, ``message_output_created``…
        raw: the item's wire dict.
        output: a tool output item's Python value (``None`` when unknown).
        patches: also print an ``apply_patch`` call's diff.
    """
    if name == "reasoning_item_created":
        summary = " ".join(str(s.get("text", "")) for s in raw.get("summary", []) or [])
        return [f"(thinking) {_clean(summary)}"] if summary else []
    if name == "tool_called":
        return _call_lines(raw, patches)
    if name == "tool_output":
        return _output_lines(raw, output)
    if name == "mcp_list_tools":
        return [f"[mcp] {raw.get('server_label')}: {mcp_list_tools_result(raw).summary}"]
    if name == "tool_search_called":
        return [f"[tool_search] {_clean(tool_search_card(raw).title)}"]
    if name == "tool_search_output_created":
        return [f"[tool_search] {tool_search_result(raw).summary}"]
    if name == "message_output_created":
        lines = ["", _clean(ItemHelpers.extract_last_text(raw) or "")]
        lines += [
            f"  [{n}] {link.title} {link.url}" for n, link in enumerate(citations(raw), start=1)
        ]
        return lines
    return []


def nested_printer(out: TextIO, shown: set[str] | None = None) -> Callable[[Any], None]:
    """An agent-tool stream listener (``AgentTool.add_stream_listener``) printing the
    sub-agent's items under its call, prefixed ``    <agent name> │ ``; the outer call ids it
    printed for are added to ``shown`` (pass it to :func:`print_item` as ``shown_nested``)."""

    def show(payload: Any) -> None:
        event = payload["event"]
        if isinstance(event, RunItemStreamEvent):
            if shown is not None and payload.get("tool_call"):
                shown.add(str(payload["tool_call"].get("call_id", "")))
            buffer = io.StringIO()
            print_item(event, buffer)
            for line in buffer.getvalue().strip("\n").splitlines():
                print(f"    {payload['agent'].name} │ {line.strip()}", file=out)

    return show


def _call_lines(raw: dict[str, Any], patches: bool) -> list[str]:
    kind = raw.get("type")
    if kind == "shell_call":
        return [f"$ {_clean(str(c))}" for c in raw.get("action", {}).get("commands", [])]
    if kind == "apply_patch_call":
        op = raw.get("operation", {})
        lines = [f"apply_patch {op.get('type')} {op.get('path')}"]
        if patches:
            lines += [f"   {line}" for line in _clean(str(op.get("diff", ""))).splitlines()]
        return lines
    if kind in HOSTED_CALL_TYPES:
        card, done = hosted_card(raw), hosted_result(raw)
        lines = [f"[{card.kind}] {_clean(card.title)} -> {_clean(done.summary)}"]
        links = done.body.links if done.body else []
        return lines + [f"   | {_clean(link.title)}: {link.url}" for link in links]
    if kind == "mcp_approval_request":
        return [f"[mcp] {raw.get('server_label')} asks to call {raw.get('name')}"]
    return [f"-> {raw.get('name') or kind}({_clean(str(raw.get('arguments', '')))})"]


def _output_lines(raw: dict[str, Any], output: Any) -> list[str]:
    if raw.get("type") == "shell_call_output":
        lines: list[str] = []
        for entry in raw.get("output", []):
            text = str(entry.get("stdout", "")) + str(entry.get("stderr", ""))
            lines += [f"  | {line}" for line in _clean(text).splitlines()]
            outcome = entry.get("outcome", {})
            if outcome.get("type") == "timeout":
                lines.append("  | (timed out)")
            elif outcome.get("exit_code"):
                lines.append(f"  | (exit {outcome.get('exit_code')})")
        return lines
    if raw.get("type") == "computer_call_output":  # a screenshot, not text (issue 17)
        return ["  | [screenshot of the page]"]
    text = str(output if output is not None else raw.get("output", ""))
    clipped = text[:_OUTPUT_LIMIT] + ("…" if len(text) > _OUTPUT_LIMIT else "")
    return [f"  | {line}" for line in _clean(clipped).splitlines()]


def _clean(text: str) -> str:
    # display_text redacts the text whole, before it is cut into lines: a PEM block spans
    # several (issue 11)
    return display_text(text)
