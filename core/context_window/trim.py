"""Head-and-tail trimming of old, large tool outputs: the cheapest way to win room (issue 14 (c)).

Same idea as the Agents SDK's tool-output trimmer; the note tells the model how to get the
text back.
"""

from __future__ import annotations

from typing import Any

__all__ = ["OUTPUT_ITEM_TYPES", "TRIM_NOTE", "is_tool_output", "trim_item"]

#: Responses API input items that carry a tool's output.
OUTPUT_ITEM_TYPES = frozenset(
    {
        "function_call_output",
        "custom_tool_call_output",
        "shell_call_output",
        "local_shell_call_output",
        "computer_call_output",
        "apply_patch_call_output",
        "mcp_call",
        "code_interpreter_call",
    }
)

#: What replaces the middle of a trimmed output ({omitted}: bytes left out).
TRIM_NOTE = "\n[... output trimmed by Tandem: {omitted} bytes omitted; run again to see it ...]\n"


def is_tool_output(item: dict[str, Any]) -> bool:
    """Whether ``item`` is a tool output item (see :data:`OUTPUT_ITEM_TYPES`)."""
    return item.get("type") in OUTPUT_ITEM_TYPES


def _trim_text(text: str, keep_bytes: int) -> str:
    data = text.encode()
    if len(data) <= keep_bytes + len(TRIM_NOTE) + 16:
        return text
    half = keep_bytes // 2
    head = data[:half].decode(errors="ignore")
    tail = data[-half:].decode(errors="ignore")
    return head + TRIM_NOTE.format(omitted=len(data) - 2 * half) + tail


def _trim_value(value: Any, keep_bytes: int) -> Any:
    if isinstance(value, str):
        return value if value.startswith("data:") else _trim_text(value, keep_bytes)
    if isinstance(value, list):
        return [_trim_value(v, keep_bytes) for v in value]
    if isinstance(value, dict):
        return {
            k: v if k in ("type", "call_id", "id") else _trim_value(v, keep_bytes)
            for k, v in value.items()
        }
    return value


def trim_item(item: dict[str, Any], keep_bytes: int) -> dict[str, Any] | None:
    """A trimmed copy of a tool output item, or ``None`` when nothing needed trimming.

    Every string inside ``output`` (a ``function_call_output`` string, ``output_text`` parts,
    ``shell_call_output`` stdout/stderr) longer than ``keep_bytes`` UTF-8 bytes keeps its
    first and last ``keep_bytes / 2`` bytes around :data:`TRIM_NOTE`. The original item is
    never changed (the journal keeps it whole).
    """
    if not is_tool_output(item) or "output" not in item:
        return None
    trimmed = _trim_value(item["output"], keep_bytes)
    if trimmed == item["output"]:
        return None
    return {**item, "output": trimmed}
