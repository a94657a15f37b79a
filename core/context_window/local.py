"""The local compaction turn (issue 14 (b)): a hand-off summary written by the model itself.

Works with any Responses server: no endpoint beyond ``POST /responses`` is needed.
"""

from __future__ import annotations

import json
from typing import Any

from .trim import is_tool_output

__all__ = [
    "COMPACT_INSTRUCTIONS",
    "SUMMARY_HEADER",
    "fallback_summary",
    "is_summary_message",
    "kept_user_messages",
    "render_transcript",
    "summary_message",
    "summary_text",
    "tail_start",
]

#: The instructions of the compaction request (also how a scripted server recognises one).
COMPACT_INSTRUCTIONS = (
    "You are compacting a coding session so that it can continue in a fresh context window. "
    "Write a hand-off summary for the engineer (you) who will continue the work. Use these "
    "headings: Goal; Decisions; Files touched; Open problems; Next steps. Keep exact file "
    "paths, commands, error messages and identifiers. Do not call tools. Be brief: at most "
    "about 800 words."
)

#: First line of the summary message placed in the request history.
SUMMARY_HEADER = "[Tandem compaction] Hand-off summary of the earlier part of this session:"

_CALL_TYPES = {
    "function_call",
    "custom_tool_call",
    "shell_call",
    "local_shell_call",
    "computer_call",
    "apply_patch_call",
}
_ITEM_BYTES = 600


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, dict):
                parts.append(str(part.get("text") or part.get("refusal") or ""))
        return "".join(parts)
    return ""


def is_summary_message(item: dict[str, Any]) -> bool:
    """Whether ``item`` is a summary message made by :func:`summary_message`."""
    return item.get("role") == "user" and _text_of(item.get("content")).startswith(SUMMARY_HEADER)


def is_user_message(item: dict[str, Any]) -> bool:
    """A message the user wrote (not a summary message)."""
    return (
        item.get("role") == "user"
        and item.get("type", "message") == "message"
        and not is_summary_message(item)
    )


def _clip(text: str, limit: int) -> str:
    data = text.encode()
    if len(data) <= limit:
        return text
    half = limit // 2
    return (
        data[:half].decode(errors="ignore")
        + f" [... {len(data) - 2 * half} bytes ...] "
        + data[-half:].decode(errors="ignore")
    )


def _render(item: dict[str, Any]) -> str:
    kind = item.get("type", "message")
    if kind == "message":
        return (
            f"{item.get('role', 'user')}: {_clip(_text_of(item.get('content')), 4 * _ITEM_BYTES)}"
        )
    if kind == "compaction":
        return "(an earlier server compaction)"
    if kind in _CALL_TYPES:
        name = item.get("name") or kind
        args = item.get("arguments") or item.get("input") or item.get("action") or ""
        if not isinstance(args, str):
            args = json.dumps(args, ensure_ascii=False)
        return f"tool call {name}: {_clip(args, _ITEM_BYTES)}"
    if is_tool_output(item):
        output = item.get("output")
        text = output if isinstance(output, str) else json.dumps(output, ensure_ascii=False)
        return f"tool output ({len(text.encode())} bytes): {_clip(text, _ITEM_BYTES)}"
    if kind == "reasoning":
        return ""
    return f"{kind}: {_clip(json.dumps(item, ensure_ascii=False), _ITEM_BYTES // 2)}"


def render_transcript(items: list[dict[str, Any]], budget_bytes: int) -> str:
    """The items as a plain-text transcript of at most about ``budget_bytes`` UTF-8 bytes.

    Each item is one clipped line (tool outputs keep head and tail); when the whole is still
    too long, the middle lines give way to a note, the beginning and the end stay.
    """
    lines = [line for line in (_render(i) for i in items) if line]
    sizes = [len(line.encode()) + 1 for line in lines]
    if sum(sizes) <= budget_bytes:
        return "\n".join(lines)
    head: list[str] = []
    tail: list[str] = []
    used = 0
    left, right = 0, len(lines) - 1
    while left <= right:
        if len(head) <= len(tail):
            if used + sizes[left] > budget_bytes:
                break
            head.append(lines[left])
            used += sizes[left]
            left += 1
        else:
            if used + sizes[right] > budget_bytes:
                break
            tail.append(lines[right])
            used += sizes[right]
            right -= 1
    omitted = right - left + 1
    middle = [f"[... {omitted} items omitted from this transcript ...]"] if omitted > 0 else []
    return "\n".join([*head, *middle, *reversed(tail)])


def summary_message(summary: str) -> dict[str, Any]:
    """The user-role message that carries a summary in the request history."""
    return {"role": "user", "content": f"{SUMMARY_HEADER}\n\n{summary.strip()}"}


def summary_text(output: list[dict[str, Any]]) -> str:
    """The assistant text of a compaction response (``""`` when it has none)."""
    texts = [
        _text_of(item.get("content"))
        for item in output
        if item.get("type") == "message" and item.get("role", "assistant") == "assistant"
    ]
    return "\n".join(t for t in texts if t).strip()


def fallback_summary(items: list[dict[str, Any]], error: str) -> str:
    """A mechanical summary when the compaction turn failed: what was run, nothing invented."""
    calls = [_render(i) for i in items if i.get("type") in _CALL_TYPES][-40:]
    lines = "\n".join(f"- {c}" for c in calls) or "- (no tool calls)"
    return (
        f"(The model could not write the summary: {error}. This is a mechanical list.)\n"
        f"Latest tool calls of the summarised part:\n{lines}"
    )


def tail_start(full: list[dict[str, Any]], floor: int, keep: int) -> int:
    """The index from which the last ``keep`` items of ``full`` stay verbatim.

    The start moves earlier (never below ``floor``) until no tool output of the tail is
    separated from its call; calls still waiting for their output are in the tail by
    construction.
    """
    start = max(floor, len(full) - max(0, keep))
    moved = True
    while moved:
        moved = False
        seen: set[str] = set()
        for index in range(start, len(full)):
            item = full[index]
            call_id = item.get("call_id")
            if not call_id:
                continue
            if not is_tool_output(item):
                seen.add(str(call_id))
                continue
            if str(call_id) in seen:
                continue
            found = next(
                (
                    i
                    for i in range(start - 1, floor - 1, -1)
                    if full[i].get("call_id") == call_id and not is_tool_output(full[i])
                ),
                None,
            )
            if found is not None:
                start, moved = found, True
                break
    return start


def kept_user_messages(
    full: list[dict[str, Any]], upto: int, budget_bytes: int
) -> list[dict[str, Any]]:
    """The user's own messages before ``upto`` that stay verbatim, in order.

    The first one always stays; then the latest ones that fit ``budget_bytes`` (UTF-8 bytes
    of their JSON).
    """
    users = [i for i in full[:upto] if is_user_message(i)]
    if not users:
        return []
    first, rest = users[0], users[1:]
    chosen: list[dict[str, Any]] = []
    used = len(json.dumps(first, ensure_ascii=False).encode())
    for item in reversed(rest):
        size = len(json.dumps(item, ensure_ascii=False).encode())
        if used + size > budget_bytes:
            break
        chosen.append(item)
        used += size
    return [first, *reversed(chosen)]
