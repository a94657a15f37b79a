"""What the conversation shows of hosted activity: cards and bodies built from Responses items.

Pure data (no Qt): the controller turns each output item of a hosted tool (``web_search_call``,
``file_search_call``, ``code_interpreter_call``, ``image_generation_call``, ``mcp_call``,
``mcp_list_tools``, ``mcp_approval_request``, ``tool_search_call``/``tool_search_output``; item
shapes in tools-wire-spec §2 and §3.7) into a :class:`CardSpec` when it starts and a
:class:`CardResult` when it is complete; :func:`citations` reads the sources a message cites
(``url_citation`` / ``file_citation`` annotations of its ``output_text`` parts).
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

__all__ = [
    "HOSTED_CALL_TYPES",
    "CardBody",
    "CardResult",
    "CardSpec",
    "Link",
    "SearchHit",
    "citations",
    "clip_text",
    "decode_image",
    "domain",
    "image_format",
    "hosted_card",
    "hosted_result",
    "mcp_list_tools_result",
    "tool_search_card",
    "tool_search_result",
]

#: Output item types run by the provider (they arrive complete; nothing runs locally).
HOSTED_CALL_TYPES = frozenset(
    {
        "web_search_call",
        "file_search_call",
        "code_interpreter_call",
        "image_generation_call",
        "mcp_call",
        "mcp_list_tools",
    }
)
_TEXT_LIMIT = 20_000  # characters of code, logs or MCP output kept for display
_FAILED = {"failed", "incomplete"}


@dataclass(frozen=True, slots=True)
class Link:
    """A source: ``title`` (the page title, or its domain) and ``url`` (may be empty for a
    file citation, whose ``title`` is the file name)."""

    title: str
    url: str = ""


@dataclass(frozen=True, slots=True)
class SearchHit:
    """One file search result: the file name, its relevance ``score`` (0 to 1 or ``None``) and
    the matched text (at most 400 characters)."""

    filename: str
    score: float | None
    text: str


@dataclass(slots=True)
class CardBody:
    """The expandable part of a tool card.

    Attributes:
        links: sources (web search) or pages opened.
        hits: file search results.
        code: source code run (code interpreter), shown highlighted as ``language``.
        output: plain text output (logs, MCP output, errors), monospace.
        images: encoded images (PNG/JPEG/WebP bytes) shown inline, newest last.
        lines: short lines (tool names listed or loaded).
        expanded: whether the card opens with the body visible.
    """

    links: list[Link] = field(default_factory=list)
    hits: list[SearchHit] = field(default_factory=list)
    code: str = ""
    language: str = "python"
    output: str = ""
    images: list[bytes] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)
    expanded: bool = False

    def is_empty(self) -> bool:
        """True when there is nothing to show."""
        return not (
            self.links or self.hits or self.code or self.output or self.images or self.lines
        )


@dataclass(frozen=True, slots=True)
class CardSpec:
    """A card's head: ``kind`` (icon and label), one-line ``title`` and a dim ``detail``."""

    kind: str
    title: str
    detail: str = ""


@dataclass(slots=True)
class CardResult:
    """A card's end: ``status`` (``completed``/``failed``), a one-line ``summary``, the body."""

    status: str
    summary: str
    body: CardBody | None = None


# -- starting cards ------------------------------------------------------------------------------


def hosted_card(raw: dict[str, Any]) -> CardSpec:
    """The head of a hosted call's card from its (possibly partial) output item."""
    kind = str(raw.get("type", ""))
    if kind == "web_search_call":
        action = _as_dict(raw.get("action"))
        what = action.get("type")
        if what == "open_page":
            return CardSpec("web_search", f"open {action.get('url') or 'a page'}", "web")
        if what in ("find", "find_in_page"):
            return CardSpec(
                "web_search",
                f"find “{action.get('pattern', '')}” in {action.get('url', '')}",
                "web",
            )
        queries = action.get("queries") or ([action["query"]] if action.get("query") else [])
        return CardSpec("web_search", " · ".join(map(str, queries)) or "searching the web", "web")
    if kind == "file_search_call":
        queries = [str(q) for q in raw.get("queries") or []]
        return CardSpec("file_search", " · ".join(queries) or "searching files", "vector stores")
    if kind == "code_interpreter_call":
        first = next((line for line in str(raw.get("code") or "").splitlines() if line.strip()), "")
        container = str(raw.get("container_id") or "")
        return CardSpec("code_interpreter", first or "running code", container)
    if kind == "image_generation_call":
        prompt = str(raw.get("revised_prompt") or "")
        return CardSpec("image_generation", prompt or "generating an image", "")
    if kind in ("mcp_call", "mcp_approval_request"):
        args = _compact(raw.get("arguments"))
        return CardSpec(
            "mcp", f"{raw.get('name', '?')}({args})", f"MCP server {raw.get('server_label', '?')}"
        )
    if kind == "mcp_list_tools":
        return CardSpec("mcp", "list tools", f"MCP server {raw.get('server_label', '?')}")
    return CardSpec("hosted", kind.removesuffix("_call").replace("_", " "), "")


def tool_search_card(raw: dict[str, Any]) -> CardSpec:
    """The head of a ``tool_search_call`` card: the query and the namespaces searched."""
    args = raw.get("arguments")
    if isinstance(args, str):
        try:
            args = json.loads(args)
        except ValueError:
            args = {"query": args}
    args = args if isinstance(args, dict) else {}
    query = str(args.get("query") or "")
    paths = [str(p) for p in args.get("paths") or []]
    detail = f"in {', '.join(paths)}" if paths else ""
    where = "on your machine" if raw.get("execution") == "client" else ""
    return CardSpec(
        "tool_search", query or "searching tools", " ".join(filter(None, [detail, where]))
    )


# -- completed cards -----------------------------------------------------------------------------


def hosted_result(raw: dict[str, Any]) -> CardResult:
    """The end of a hosted call's card from its complete output item."""
    kind = str(raw.get("type", ""))
    failed = str(raw.get("status") or "") in _FAILED
    if kind == "web_search_call":
        return _web_search(raw, failed)
    if kind == "file_search_call":
        return _file_search(raw, failed)
    if kind == "code_interpreter_call":
        return _code_interpreter(raw, failed)
    if kind == "image_generation_call":
        return _image_generation(raw, failed)
    if kind == "mcp_call":
        return _mcp_call(raw, failed)
    if kind == "mcp_list_tools":
        return mcp_list_tools_result(raw)
    return CardResult("failed" if failed else "completed", str(raw.get("status") or ""))


def _web_search(raw: dict[str, Any], failed: bool) -> CardResult:
    action = _as_dict(raw.get("action"))
    links = [
        _link(source.get("url", ""), source.get("title"))
        for source in action.get("sources") or []
        if isinstance(source, dict) and source.get("url")
    ]
    if action.get("type") == "open_page" and action.get("url"):
        links = [_link(action["url"], None)]
    if failed:
        summary = "search failed"
    elif links:
        domains = list(dict.fromkeys(domain(link.url) for link in links))
        shown = ", ".join(domains[:3]) + (
            f" and {len(domains) - 3} more" if len(domains) > 3 else ""
        )
        summary = f"{len(links)} source{'s' if len(links) != 1 else ''} from {shown}"
    else:
        summary = "searched"
    return CardResult("failed" if failed else "completed", summary, CardBody(links=links))


def _file_search(raw: dict[str, Any], failed: bool) -> CardResult:
    results = raw.get("results")
    hits = [
        SearchHit(
            str(r.get("filename") or r.get("file_id") or "?"),
            float(r["score"]) if isinstance(r.get("score"), int | float) else None,
            _clip(" ".join(str(r.get("text") or "").split()), 400),
        )
        for r in results or []
        if isinstance(r, dict)
    ]
    if failed:
        summary = "search failed"
    elif results is None:
        summary = "searched (results not included in the response)"
    else:
        files = len({h.filename for h in hits})
        summary = f"{len(hits)} result{'s' if len(hits) != 1 else ''} in {files} file{'s' if files != 1 else ''}"
    return CardResult("failed" if failed else "completed", summary, CardBody(hits=hits))


def _code_interpreter(raw: dict[str, Any], failed: bool) -> CardResult:
    logs: list[str] = []
    links: list[Link] = []
    for output in raw.get("outputs") or []:
        if not isinstance(output, dict):
            continue
        if output.get("type") == "logs":
            logs.append(str(output.get("logs") or ""))
        elif output.get("type") == "image" and output.get("url"):
            links.append(Link("image output", str(output["url"])))
    text = "".join(logs)
    lines = text.count("\n") + (1 if text and not text.endswith("\n") else 0)
    summary = (
        "failed"
        if failed
        else (f"{lines} line{'s' if lines != 1 else ''} of output" if text else "no output")
    )
    body = CardBody(
        links=links,
        code=clip_text(str(raw.get("code") or "")),
        output=clip_text(text),
        expanded=True,
    )
    return CardResult("failed" if failed else "completed", summary, body)


def _image_generation(raw: dict[str, Any], failed: bool) -> CardResult:
    result = raw.get("result")
    if failed:
        return CardResult("failed", "image generation failed")
    if not result:
        return CardResult("failed", "no image returned")
    image = decode_image(result)
    if image is None:
        return CardResult("failed", "the result is not base64 image data")
    if image_format(image) is None:
        return CardResult("failed", f"the result is not an image ({len(image)} bytes)")
    size = _image_size(image)
    summary = f"{size[0]} x {size[1]} image" if size else f"image, {len(image) // 1024} KiB"
    return CardResult("completed", summary, CardBody(images=[image], expanded=True))


def _mcp_call(raw: dict[str, Any], failed: bool) -> CardResult:
    error = raw.get("error")
    output = raw.get("output")
    text = _text(error if error else output)
    failed = failed or bool(error)
    first = _error_message(error) if error else ""
    first = first or next((line for line in text.splitlines() if line.strip()), "")
    if first:
        summary = ("error: " if error else "") + _clip(first, 160)
    else:
        summary = "failed" if failed else "no output"
    status = "failed" if failed else "completed"
    return CardResult(status, summary, CardBody(output=clip_text(text)))


def mcp_list_tools_result(raw: dict[str, Any]) -> CardResult:
    """The end of an ``mcp_list_tools`` card: the tools the server offers (or its error)."""
    if raw.get("error"):
        message = _error_message(raw["error"]) or _text(raw["error"])
        return CardResult("failed", _clip(message, 160))
    tools = [t for t in raw.get("tools") or [] if isinstance(t, dict)]
    lines = [
        f"{t.get('name', '?')} — {_clip(' '.join(str(t['description']).split()), 120)}"
        if t.get("description")
        else str(t.get("name", "?"))
        for t in tools
    ]
    summary = f"{len(tools)} tool{'s' if len(tools) != 1 else ''}"
    return CardResult("completed", summary, CardBody(lines=lines))


def tool_search_result(raw: dict[str, Any]) -> CardResult:
    """The end of a tool search card from its ``tool_search_output`` item: the tools loaded."""
    names: list[str] = []
    for tool in raw.get("tools") or []:
        if not isinstance(tool, dict):
            continue
        if tool.get("type") == "namespace":
            inner = [
                str(t.get("name", "?")) for t in tool.get("tools") or [] if isinstance(t, dict)
            ]
            names.extend(f"{tool.get('name', '?')}.{n}" for n in inner)
        elif tool.get("type") == "mcp":
            names.append(f"MCP server {tool.get('server_label', '?')}")
        else:
            names.append(str(tool.get("name") or tool.get("type") or "?"))
    failed = str(raw.get("status") or "") in _FAILED
    if failed:
        return CardResult("failed", "tool search failed", CardBody(lines=names))
    shown = ", ".join(names[:4]) + (f" and {len(names) - 4} more" if len(names) > 4 else "")
    summary = f"loaded {shown}" if names else "no tools found"
    return CardResult("completed", summary, CardBody(lines=names))


# -- citations ------------------------------------------------------------------------------------


def citations(message: dict[str, Any]) -> list[Link]:
    """The sources an assistant ``message`` cites, in order of first citation, without repeats.

    ``url_citation`` annotations give ``Link(title, url)``; ``file_citation`` and
    ``container_file_citation`` give ``Link(filename)``.
    """
    seen: dict[tuple[str, str], Link] = {}
    for part in message.get("content") or []:
        if not isinstance(part, dict) or part.get("type") != "output_text":
            continue
        for note in part.get("annotations") or []:
            if not isinstance(note, dict):
                continue
            if note.get("type") == "url_citation" and note.get("url"):
                link = _link(str(note["url"]), note.get("title"))
            elif note.get("type") in ("file_citation", "container_file_citation"):
                link = Link(str(note.get("filename") or note.get("file_id") or "a file"))
            else:
                continue
            seen.setdefault((link.url, link.title if not link.url else ""), link)
    return list(seen.values())


# -- helpers ----------------------------------------------------------------------------------------


def decode_image(data: Any) -> bytes | None:
    """Base64 image data (optionally a ``data:`` URL) as bytes, or ``None`` if not decodable."""
    if not isinstance(data, str) or not data:
        return None
    if data.startswith("data:") and "," in data:
        data = data.split(",", 1)[1]
    try:
        return base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return None


def image_format(data: bytes) -> str | None:
    """``"png"``, ``"jpeg"``, ``"webp"`` or ``"gif"`` from the leading bytes, else ``None``."""
    if data[:8] == b"\x89PNG\r\n\x1a\n":
        return "png"
    if data[:3] == b"\xff\xd8\xff":
        return "jpeg"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "webp"
    if data[:6] in (b"GIF87a", b"GIF89a"):
        return "gif"
    return None


def _error_message(error: Any) -> str:
    """The human part of an error: the string, or an object's ``message`` (and ``code``)."""
    if isinstance(error, str):
        return error.strip()
    if isinstance(error, dict):
        message = str(error.get("message") or error.get("error") or "").strip()
        code = error.get("code")
        return f"{message} (code {code})" if message and code is not None else message
    return ""


def clip_text(text: str) -> str:
    """Output kept for display: at most ``_TEXT_LIMIT`` characters, with a note of the cut."""
    if len(text) <= _TEXT_LIMIT:
        return text
    return f"{text[:_TEXT_LIMIT]}\n… ({_TEXT_LIMIT:,} of {len(text):,} characters shown)"


def _image_size(image: bytes) -> tuple[int, int] | None:
    if image[:8] == b"\x89PNG\r\n\x1a\n" and len(image) >= 24:
        return int.from_bytes(image[16:20], "big"), int.from_bytes(image[20:24], "big")
    return None


def _as_dict(value: Any) -> dict[str, Any]:
    """``value`` when it is an object, else ``{}`` (model output is not trusted to be)."""
    return value if isinstance(value, dict) else {}


def domain(url: str) -> str:
    """The host of ``url`` without ``www.`` (``url`` itself when it has none)."""
    try:
        host = urlsplit(url).hostname
    except ValueError:
        host = None
    return (host or url).removeprefix("www.")


def _link(url: str, title: Any) -> Link:
    return Link(str(title) if title else domain(url), url)


def _compact(value: Any) -> str:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return _clip(value, 80)
    if isinstance(value, dict):
        return _clip(", ".join(f"{k}={json.dumps(v)}" for k, v in value.items()), 80)
    return "" if value is None else _clip(json.dumps(value), 80)


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, indent=2)


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
