"""MCP ``CallToolResult`` to function-tool output (text, images, structured content, errors)."""

from __future__ import annotations

import json
from typing import Any

__all__ = ["MAX_MCP_OUTPUT_CHARS", "call_result_to_output"]

#: Text parts longer than this many characters are cut, with a note (a server that returns a
#: huge result must not blow the model's context or the journal).
MAX_MCP_OUTPUT_CHARS = 200_000


def _cut(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n[output truncated: {len(text) - limit} more characters]"


def _part(block: Any, limit: int) -> dict[str, Any]:
    kind = getattr(block, "type", None)
    if kind == "text":
        return {"type": "text", "text": _cut(str(block.text), limit)}
    if kind == "image":
        mime = getattr(block, "mime_type", None) or getattr(block, "mimeType", None) or "image/png"
        return {"type": "image", "image_url": f"data:{mime};base64,{block.data}"}
    dump = block.model_dump_json() if hasattr(block, "model_dump_json") else json.dumps(block)
    return {"type": "text", "text": _cut(dump, limit)}


def call_result_to_output(
    result: Any,
    *,
    tool_name: str,
    server_name: str,
    use_structured_content: bool = False,
    max_chars: int = MAX_MCP_OUTPUT_CHARS,
) -> Any:
    """The function-tool output for one MCP ``tools/call`` result.

    Follows the reference SDK 0.24 (``MCPUtil.invoke_mcp_tool``): with
    ``use_structured_content`` and a ``structuredContent`` on a successful result, the output is
    that JSON as a string; else each content block becomes a part (``text`` as text, ``image``
    as a ``data:`` URL image, other blocks as their JSON as text); one part is returned alone,
    several as a list, none as ``""``.

    Tandem differs on ``isError``: the model gets a text output that says the tool failed
    (``"Error: MCP tool '<tool>' on server '<server>' failed: <text>"``), not bare content.

    Args:
        result: an ``mcp_types.CallToolResult``.
        tool_name / server_name: for the error text.
        use_structured_content: prefer ``structuredContent`` when present.
        max_chars: per-text-part limit in characters.

    Returns:
        ``str``, a ``{"type": "text"|"image", ...}`` dict, or a list of them.
    """
    blocks = list(getattr(result, "content", None) or [])
    if getattr(result, "is_error", False) or getattr(result, "isError", False):
        texts = [str(b.text) for b in blocks if getattr(b, "type", None) == "text"]
        detail = "\n".join(texts) or "(no message)"
        return _cut(
            f"Error: MCP tool '{tool_name}' on server '{server_name}' failed: {detail}", max_chars
        )
    structured = getattr(result, "structured_content", None)
    if structured is None:
        structured = getattr(result, "structuredContent", None)
    if use_structured_content and structured:
        return _cut(json.dumps(structured), max_chars)
    parts = [_part(b, max_chars) for b in blocks]
    if not parts:
        return ""
    return parts[0] if len(parts) == 1 else parts
