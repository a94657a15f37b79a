"""The card of a local MCP tool call: server, tool, arguments, then the result or the error."""

from __future__ import annotations

import json
from typing import Any

from .activity import CardBody, decode_image

__all__ = ["McpCall", "arguments_body", "card_head", "mcp_call", "mcp_result"]

_TEXT_LIMIT = 20_000  # characters of a result shown in the card


class McpCall(tuple[str, str]):
    """``(server, tool)`` parsed from a function name ``mcp_<server>__<tool>``."""

    __slots__ = ()

    @property
    def server(self) -> str:
        """The server's name (as in the tool-name prefix)."""
        return self[0]

    @property
    def tool(self) -> str:
        """The MCP tool's name."""
        return self[1]


def mcp_call(name: Any) -> McpCall | None:
    """The server and tool of a prefixed MCP function name (``core.mcp.prefixed_tool_name``),
    else ``None``."""
    text = str(name or "")
    if not text.startswith("mcp_") or "__" not in text[4:]:
        return None
    server, tool = text[4:].split("__", 1)
    return McpCall((server, tool)) if server and tool else None


def _pretty(arguments: Any) -> str:
    try:
        return json.dumps(json.loads(str(arguments or "{}")), indent=2, ensure_ascii=False)
    except ValueError:
        return str(arguments)


def card_head(raw: dict[str, Any]) -> tuple[str, str, str] | None:
    """``(kind, title, detail)`` of an MCP call's card: ``("mcp", "git > git_log", "MCP git")``."""
    found = mcp_call(raw.get("name"))
    if found is None:
        return None
    return ("mcp", f"{found.server} > {found.tool}", f"MCP server {found.server}")


def arguments_body(raw: dict[str, Any]) -> CardBody:
    """The card body shown while the call runs: the arguments, pretty-printed JSON."""
    return CardBody(code=_pretty(raw.get("arguments")), language="json")


def mcp_result(raw: dict[str, Any], output: Any) -> tuple[str, str, CardBody]:
    """``(status, summary, body)`` of a finished MCP call: text, images and JSON shown; an
    ``isError`` result or a server failure is ``failed``.

    Args:
        raw: the call's ``function_call`` item (for the arguments).
        output: the tool's output (a string, a ``{"type": "text"|"image"}`` dict or a list).
    """
    parts = output if isinstance(output, list) else [output]
    texts: list[str] = []
    images: list[bytes] = []
    for part in parts:
        if isinstance(part, dict) and part.get("type") in ("image", "input_image"):
            url = str(part.get("image_url") or "")
            data = url.split(",", 1)[1] if url.startswith("data:") and "," in url else ""
            image = decode_image(data) if data else None
            if image:
                images.append(image)
            texts.append("[image]")
        elif isinstance(part, dict) and part.get("type") in ("text", "input_text"):
            texts.append(str(part.get("text", "")))
        elif part is not None:
            texts.append(part if isinstance(part, str) else json.dumps(part))
    text = "\n".join(texts)
    failed = text.startswith(("Error: MCP tool", "An error occurred while running the tool"))
    shown = text
    try:  # a JSON result is shown pretty-printed
        shown = json.dumps(json.loads(text), indent=2, ensure_ascii=False)
    except ValueError:
        pass
    if len(shown) > _TEXT_LIMIT:
        shown = shown[:_TEXT_LIMIT] + f"\n… ({len(shown) - _TEXT_LIMIT} more characters)"
    body = CardBody(
        code=_pretty(raw.get("arguments")),
        language="json",
        output=shown,
        images=images,
        expanded=failed,
    )
    first = next((line for line in text.splitlines() if line.strip()), "")
    summary = first[:160] if first else ("image" if images else "no output")
    return ("failed" if failed else "completed", summary, body)
