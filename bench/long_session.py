"""A scripted long session against the local Responses server with a context limit (issue 14).

Each turn the model calls one function tool whose output is ``--output-bytes`` bytes (20 KB);
after ``--turns`` turns (500) it answers. The server rejects any request above ``--limit``
tokens (100k) with ``context_length_exceeded`` in the OpenAI error shape and, with
``--no-compact-endpoint``, has no ``/responses/compact``. A compaction request (recognised by
its instructions) is answered with a hand-off summary. Tandem's context manager has to keep
every request under the limit: trimming old outputs, then compacting.

Prints turns completed, compactions (by strategy), rejected requests, peak request tokens,
tokens per request over time (every ``--every`` turns), and the client overhead per turn at
turn 50 and at the last turn: the gap between one answer and the next request, less the
server's handling (mean over the 10 turns up to that one).

Usage: ``python -m bench.long_session [--turns 500] [--output-bytes 20000] [--limit 100000]
[--strategy local|server|compact_endpoint|auto] [--no-compact-endpoint] [--every 50]``
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import openai

from tests.support import items
from tests.support.responses_server import ResponsesServer, ScriptedResponse

__all__ = ["SessionFigures", "long_session", "main", "scripted_session"]

SUMMARY = (
    "Goal: run the scripted commands.\nDecisions: none.\nFiles touched: none.\n"
    "Open problems: none.\nNext steps: keep running the next command."
)
FIRST_MESSAGE = "Run the scripted commands one by one, then say done."
_COMPACTION_MARK = '"type": "compaction"'


def _is_compaction_request(body: dict[str, Any]) -> bool:
    from core.context_window.local import COMPACT_INSTRUCTIONS

    return body.get("instructions") == COMPACT_INSTRUCTIONS


def scripted_session(
    turns: int,
    on_turn: Callable[[int], None] | None = None,
    make_call: Callable[[int], dict[str, Any]] | None = None,
) -> Callable[[dict[str, Any]], ScriptedResponse]:
    """A responder: ``turns`` tool calls (``run`` with ``{"n": i}``, or ``make_call(i)``), then
    ``done``; compaction requests get :data:`SUMMARY`. ``on_turn(i)`` runs before turn ``i``
    is answered."""
    state = {"turn": 0}

    def answer(body: dict[str, Any]) -> ScriptedResponse:
        if _is_compaction_request(body):
            return ScriptedResponse(output=[items.message(SUMMARY)])
        turn = state["turn"]
        state["turn"] += 1
        if on_turn is not None:
            on_turn(turn)
        if turn < turns:
            if make_call is not None:
                return ScriptedResponse(output=[make_call(turn)])
            call = items.function_call("run", {"n": turn}, call_id=f"call_{turn}")
            return ScriptedResponse(output=[call])
        return ScriptedResponse(output=[items.message("done")])

    return answer


@dataclass(slots=True)
class SessionFigures:
    """What one scripted session measured (tokens, ms)."""

    final_output: Any = None
    turns: int = 0
    compactions: dict[str, int] = field(default_factory=dict)
    rejected: int = 0
    peak_request_tokens: int = 0
    tokens_by_turn: list[int] = field(default_factory=list)
    overhead_ms: dict[int, float] = field(default_factory=dict)
    last_body: dict[str, Any] = field(default_factory=dict)
    bodies: list[dict[str, Any]] = field(default_factory=list)
    result: Any = None


def _output(n: int, size: int) -> str:
    line = f"output line of command {n}: " + "abcdefghij" * 6 + "\n"
    return (line * (size // len(line) + 1))[:size]


async def long_session(
    server: ResponsesServer,
    *,
    turns: int,
    output_bytes: int = 20_000,
    limit: int = 100_000,
    strategy: str = "local",
    on_turn: Callable[[int], None] | None = None,
    policy_overrides: dict[str, Any] | None = None,
    listener: Callable[[Any], None] | None = None,
    keep_bodies: bool = False,
) -> SessionFigures:
    """Run one session through ``Runner.run`` with a :class:`ContextPolicy` whose window is
    ``limit`` (the server's ``context_limit`` is set by the caller) and return its figures."""
    from core import Agent, OpenAIResponsesModel, RunConfig, Runner, function_tool
    from core.context_window import CompactionEvent, ContextPolicy

    @function_tool
    def run(n: int) -> str:
        """Run scripted command ``n``."""
        return _output(n, output_bytes)

    server.responder = scripted_session(turns, on_turn)
    figures = SessionFigures()

    def listen(event: Any) -> None:
        if isinstance(event, CompactionEvent) and not event.undone:
            name = event.record.strategy
            figures.compactions[name] = figures.compactions.get(name, 0) + 1
        if listener is not None:
            listener(event)

    policy = ContextPolicy(
        window=limit,
        strategy=strategy,  # type: ignore[arg-type]
        base_url=server.base_url,
        listener=listen,
        **(policy_overrides or {}),
    )
    client = openai.AsyncOpenAI(base_url=server.base_url, api_key="bench", max_retries=0)
    agent = Agent(
        name="long",
        instructions="You run commands.",
        model=OpenAIResponsesModel("bench-model", client),
        tools=[run],
    )
    start = len(server.requests)
    try:
        result = await Runner.run(
            agent, FIRST_MESSAGE, max_turns=turns + 5, run_config=RunConfig(context_policy=policy)
        )
    finally:
        await client.close()
    figures.result = result
    figures.final_output = result.final_output
    recorded = [r for r in server.requests[start:] if r.path.rstrip("/") == "/v1/responses"]
    turns_seen = [
        r for r in recorded if isinstance(r.body, dict) and not _is_compaction_request(r.body)
    ]
    figures.rejected = sum(1 for r in recorded if _rejected(r, server))
    served = [r for r in turns_seen if not _rejected(r, server)]
    figures.turns = max(0, len(served) - 1)
    figures.tokens_by_turn = [int(r.input_tokens or 0) for r in served]
    figures.peak_request_tokens = max((int(r.input_tokens or 0) for r in served), default=0)
    figures.last_body = served[-1].body if served else {}
    if keep_bodies:
        figures.bodies = [r.body for r in served]
    for mark in (50, figures.turns):
        gaps = [
            (b.received_at - (a.received_at + a.handling_s)) * 1000
            for a, b in zip(
                served[max(0, mark - 10) : mark], served[max(1, mark - 9) : mark + 1], strict=False
            )
        ]
        if gaps:
            figures.overhead_ms[mark] = statistics.mean(gaps)
    return figures


async def tandem_run_session(
    server: ResponsesServer,
    *,
    turns: int,
    output_bytes: int,
    limit: int,
    repo: Any,
    verbose: bool = False,
    strategy: str = "auto",
) -> tuple[int, str]:
    """The same session through ``tandem run`` (its real shell tool, full-access mode: no
    sandbox, no questions): each turn runs ``seq -w 1 N`` printing ``output_bytes`` bytes. The caller isolates
    the settings dir; the window comes from the ``context_windows`` setting for the server's
    base URL. Returns ``tandem run``'s exit code and its output."""
    import io
    import os

    from core.settings import Settings, save_settings
    from desktop.headless import HeadlessOptions, run_headless

    save_settings(
        Settings(
            context_windows={server.base_url: limit},
            explorer=False,
            context_strategy=strategy,  # type: ignore[arg-type]
        )
    )
    os.environ.setdefault("OPENAI_API_KEY", "bench-key")
    count = max(1, output_bytes // 5)
    server.responder = scripted_session(
        turns, make_call=lambda n: items.shell_call([f"seq -w 1 {count}"], call_id=f"call_{n}")
    )
    out = io.StringIO()
    options = HeadlessOptions(
        repo,
        FIRST_MESSAGE,
        mode="full",
        model="bench-model",
        base_url=server.base_url,
        max_turns=turns + 5,
        sandbox=False,
        interactive=False,
        verbose=verbose,
    )
    code = await run_headless(options, out)
    return code, out.getvalue()


def window_session(
    server: ResponsesServer,
    *,
    turns: int,
    output_bytes: int,
    limit: int,
    repo: Any,
    strategy: str = "local",
) -> dict[str, Any]:
    """The same session in the window (offscreen ``MainWindow`` + ``Controller``, qasync loop,
    the real openai client): returns what the window showed at the end."""
    import os

    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    import qasync
    from PySide6.QtWidgets import QApplication

    from core import Agent, OpenAIResponsesModel, RunConfig, function_tool
    from core.context_window import ContextPolicy
    from core.settings import Settings
    from desktop.controller import Controller
    from desktop.main_window import MainWindow
    from harnesses.workspace import Workspace

    @function_tool
    def run(n: int) -> str:
        """Run scripted command ``n``."""
        return _output(n, output_bytes)

    server.responder = scripted_session(turns)
    app = QApplication.instance() or QApplication([])
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    shown: dict[str, Any] = {"reports": 0}

    async def scenario() -> None:
        client = openai.AsyncOpenAI(base_url=server.base_url, api_key="bench", max_retries=0)
        workspace = Workspace(repo, mode="auto", data_dir=repo.parent / "data")

        def factory(_ws: Any) -> Any:
            return Agent(
                name="Tandem", model=OpenAIResponsesModel("bench-model", client), tools=[run]
            )

        policy = ContextPolicy(
            window=limit,
            strategy=strategy,  # type: ignore[arg-type]
            base_url=server.base_url,
        )
        controller = Controller(
            workspace, factory, run_config=RunConfig(context_policy=policy), max_turns=turns + 5
        )
        window = MainWindow(controller, Settings())
        controller.context.reportChanged.connect(
            lambda _r: shown.__setitem__("reports", shown["reports"] + 1)
        )
        ended: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        controller.runningChanged.connect(
            lambda running: None if running or ended.done() else ended.set_result(None)
        )
        controller.submit(FIRST_MESSAGE)
        await ended
        shown["meter"] = window.top_bar.context_meter.text()
        shown["cards"] = len(window._compaction_cards)
        shown["entries"] = window.conversation.entry_count()
        shown["history"] = len(controller._history)
        await controller.shutdown()
        await client.close()
        window.close()

    try:
        with loop:
            loop.run_until_complete(scenario())
    finally:
        asyncio.set_event_loop(None)
    return shown


def _rejected(rec: Any, server: ResponsesServer) -> bool:
    limit = server.context_limit
    return limit is not None and rec.input_tokens is not None and rec.input_tokens > limit


def main(argv: list[str] | None = None) -> None:
    """Run the bench and print its figures."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--turns", type=int, default=500)
    parser.add_argument("--output-bytes", type=int, default=20_000)
    parser.add_argument("--limit", type=int, default=100_000)
    parser.add_argument("--strategy", default="local")
    parser.add_argument("--no-compact-endpoint", action="store_true")
    parser.add_argument("--every", type=int, default=50)
    parser.add_argument("--via", choices=("runner", "tandem-run", "window"), default="runner")
    args = parser.parse_args(argv)
    if args.via == "window":
        _main_window(args)
        return
    if args.via == "tandem-run":
        _main_tandem_run(args)
        return
    with ResponsesServer() as server:
        server.context_limit = args.limit
        server.compact_endpoint = not args.no_compact_endpoint
        figures = asyncio.run(
            long_session(
                server,
                turns=args.turns,
                output_bytes=args.output_bytes,
                limit=args.limit,
                strategy=args.strategy,
            )
        )
    print(f"strategy {args.strategy}, limit {args.limit:,} tokens, outputs {args.output_bytes:,} B")
    print(f"final output: {figures.final_output!r}")
    print(f"turns completed: {figures.turns}")
    print(f"compactions: {sum(figures.compactions.values())} {figures.compactions}")
    print(f"rejected requests (over the limit): {figures.rejected}")
    print(
        f"peak request tokens: {figures.peak_request_tokens:,} ({figures.peak_request_tokens / args.limit:.0%} of the limit)"
    )
    series = figures.tokens_by_turn
    print(
        "tokens per request: "
        + ", ".join(f"t{i}={series[i]:,}" for i in range(0, len(series), args.every))
    )
    for mark, ms in figures.overhead_ms.items():
        print(f"client overhead per turn at turn {mark}: {ms:.2f} ms")
    if 50 in figures.overhead_ms and figures.turns in figures.overhead_ms:
        ratio = figures.overhead_ms[figures.turns] / max(figures.overhead_ms[50], 1e-9)
        print(f"overhead ratio turn {figures.turns} / turn 50: {ratio:.2f}")


def _main_window(args: Any) -> None:
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as tmp, ResponsesServer() as server:
        repo = Path(tmp) / "repo"
        repo.mkdir()
        server.context_limit = args.limit
        server.compact_endpoint = not args.no_compact_endpoint
        shown = window_session(
            server,
            turns=args.turns,
            output_bytes=args.output_bytes,
            limit=args.limit,
            repo=repo,
            strategy=args.strategy,
        )
        turns = [r for r in server.requests if r.path == "/v1/responses"]
        last = json.dumps(turns[-1].body.get("input")) if turns else ""
        print(f"window: {shown}")
        print(f"requests: {len(turns)}, rejected: {sum(1 for r in turns if _rejected(r, server))}")
        print(f"peak request tokens: {server.peak_input_tokens:,} (limit {args.limit:,})")
        print(
            f"last request has the first message: {FIRST_MESSAGE in last}; summary: "
            f"{'Hand-off summary' in last}; compaction item: {_COMPACTION_MARK in last}"
        )


def _main_tandem_run(args: Any) -> None:
    import os
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as tmp, ResponsesServer() as server:
        for name in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"):
            os.environ[name] = str(Path(tmp) / name.lower())
        repo = Path(tmp) / "repo"
        repo.mkdir()
        server.context_limit = args.limit
        server.compact_endpoint = not args.no_compact_endpoint
        code, text = asyncio.run(
            tandem_run_session(
                server,
                turns=args.turns,
                output_bytes=args.output_bytes,
                limit=args.limit,
                repo=repo,
                strategy=args.strategy,
            )
        )
        turns = [r for r in server.requests if r.path == "/v1/responses"]
        body = turns[-1].body if turns else {}
        last = json.dumps(body.get("input"))
        print(f"tandem run exit code: {code}")
        print(f"requests: {len(turns)}, rejected: {sum(1 for r in turns if _rejected(r, server))}")
        print(f"peak request tokens: {server.peak_input_tokens:,} (limit {args.limit:,})")
        print("compaction lines: " + str(text.count("[context] compacted")))
        print(
            f"last request has the first message: {FIRST_MESSAGE in last}; summary: "
            f"{'Hand-off summary' in last}; compaction item: {_COMPACTION_MARK in last}"
        )
        print(
            "closing line: "
            + [ln for ln in text.splitlines() if ln.startswith("context:")][-1:].__repr__()
        )


if __name__ == "__main__":
    main()
