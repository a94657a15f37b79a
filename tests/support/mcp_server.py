"""A local MCP server for tests, built on the ``mcp`` package's server API (issue 18 item 5).

Run as ``python tests/support/mcp_server.py [--http] [--sse] [--mode MODE]``:

- stdio (default): speaks MCP on stdin/stdout.
- ``--http``: streamable HTTP on ``127.0.0.1`` at a free port, path ``/mcp``; the first stdout
  line is ``PORT <n>``.
- ``--sse``: the legacy SSE transport on ``127.0.0.1`` (path ``/sse``); prints ``PORT <n>``.

Modes (``--mode``) give the faults: ``ok`` (default), ``never-start`` (reads stdin, never
answers; the client's initialize times out), ``exit-at-start`` (exits with status 7 after a
stderr line), ``bad-stderr`` (writes non-UTF-8 bytes to stderr before serving).

Tools: ``echo(text)`` (``readOnlyHint``), ``add(a, b)`` (structured output), ``fail(message)``
(an ``isError`` result), ``crash()`` (the process exits mid-call), ``huge(chars)`` (a text of
that many characters), ``pixel()`` (a 1x1 PNG image), ``env(name)`` (a variable of the server's
environment or ``<unset>``), ``pid()`` (the server's process id).
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import os
import socket
import sys

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.utilities.types import Image
from mcp_types import ToolAnnotations
from pydantic import BaseModel

_PNG_1X1 = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)


class Sum(BaseModel):
    """The structured result of ``add``."""

    total: int


def build(name: str = "fault") -> MCPServer:
    """The server with its tools registered."""
    server: MCPServer = MCPServer(name)

    @server.tool(description="Echo the text back.", annotations=ToolAnnotations(readOnlyHint=True))
    def echo(text: str) -> str:
        return text

    @server.tool(description="Add two integers.")
    def add(a: int, b: int) -> Sum:
        return Sum(total=a + b)

    @server.tool(description="Always fails with the message.")
    def fail(message: str) -> str:
        raise ToolError(message)

    @server.tool(description="Exit the server process in the middle of the call.")
    def crash() -> str:
        sys.stderr.write("crashing now\n")
        sys.stderr.flush()
        os._exit(3)

    @server.tool(description="Return a text of the given number of characters.")
    def huge(chars: int) -> str:
        return "x" * chars

    @server.tool(description="Return a 1x1 PNG image.")
    def pixel() -> Image:
        return Image(data=_PNG_1X1, format="png")

    @server.tool(description="Read an environment variable of the server.")
    def env(name: str) -> str:
        return os.environ.get(name, "<unset>")

    @server.tool(description="The server's process id.")
    def pid() -> str:
        return str(os.getpid())

    return server


def _never_start() -> None:
    for _line in sys.stdin:  # read requests, answer none
        pass


async def _serve_http(server: MCPServer, sse: bool) -> None:
    import uvicorn

    app = server.sse_app() if sse else server.streamable_http_app()
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)  # connections queue until uvicorn accepts them
    print(f"PORT {sock.getsockname()[1]}", flush=True)
    config = uvicorn.Config(app, log_level="warning", lifespan="on")
    await uvicorn.Server(config).serve(sockets=[sock])


def main(argv: list[str] | None = None) -> int:
    """Entry point; see the module docstring."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--http", action="store_true")
    parser.add_argument("--sse", action="store_true")
    parser.add_argument("--name", default="fault")
    parser.add_argument(
        "--mode", default="ok", choices=["ok", "never-start", "exit-at-start", "bad-stderr"]
    )
    args = parser.parse_args(argv)
    if args.mode == "never-start":
        _never_start()
        return 0
    if args.mode == "exit-at-start":
        sys.stderr.write("fault server: refusing to start\n")
        return 7
    if args.mode == "bad-stderr":
        sys.stderr.buffer.write(b"bad bytes \xff\xfe\xfd follow\n")
        sys.stderr.flush()
    server = build(args.name)
    if args.http or args.sse:
        asyncio.run(_serve_http(server, args.sse))
    else:
        server.run("stdio")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
