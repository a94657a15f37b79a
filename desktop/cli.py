"""The ``tandem`` command line: the window, ``tandem demo``, ``tandem run``,
``tandem sessions`` and ``tandem checkpoints``."""

from __future__ import annotations

import argparse
import asyncio
import gc
import importlib.util
import os
import signal
import sys
import time
from pathlib import Path
from types import ModuleType
from typing import Any

__all__ = ["EXIT_BROKEN_PIPE", "main"]

_COMMANDS = ("demo", "run", "checkpoints", "sessions", "replay")


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version  # ~10 ms: only for --version

    try:
        return f"tandem {version('tandem')}"
    except PackageNotFoundError:
        return "tandem (not installed)"


class _VersionAction(argparse.Action):
    """``--version``: prints :func:`_version` and exits, read only when asked (issue 15:
    the package metadata is not read on the window's start-up path)."""

    def __init__(self, option_strings: list[str], dest: str = argparse.SUPPRESS, **kwargs: Any):
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, *_: Any) -> None:
        print(_version())  # on stdout, as argparse's own ``version`` action
        parser.exit()


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tandem",
        description="Tandem, a coding assistant on the Responses API. "
        "`tandem [FOLDER]` opens the window on a repository.",
    )
    parser.add_argument("--version", action=_VersionAction, help="print the version and exit")
    sub = parser.add_subparsers(dest="command")
    demo = sub.add_parser("demo", help="the built-in scripted session (offline, no API key)")
    demo.add_argument("--headless", action="store_true", help="print the session in the terminal")
    demo.add_argument(
        "--screenshot", type=Path, help="answer approvals like a user, save screenshots there, quit"
    )
    demo.add_argument(
        "--scenario",
        choices=["fix", "research", "browser"],
        default="fix",
        help="fix: find and fix a bug, run the tests (default); research: hosted tools "
        "(web search, code interpreter, MCP, tool search, image generation) and a sub-agent; "
        "browser: a dev server, real Chromium, a form error (issue 17)",
    )
    run = sub.add_parser(
        "run",
        help="run a task in a repository from the terminal",
        description="Run a task with the window's settings (flags override them). Exit codes: "
        "0 done, 1 failed, 2 usage, 3 stopped on a rejection or an approval without a "
        "terminal, 130 interrupted (docs/tandem-run.md).",
    )
    run.add_argument("task", help="what the agent should do")
    _run_flags(run)
    _sessions_parser(sub)
    _replay_parser(sub)
    _checkpoints_parser(sub)
    return parser


def _run_flags(run: argparse.ArgumentParser) -> None:
    """The flags of ``tandem run`` (and ``tandem sessions resume``), issue 16."""
    run.add_argument(
        "--repo", type=Path, default=Path.cwd(), help="repository folder (default: current)"
    )
    run.add_argument(
        "--mode",
        choices=["read-only", "ask", "auto", "full"],
        default=None,
        help="approval mode (default: the saved setting, else ask)",
    )
    run.add_argument(
        "--model",
        help="model name (default: the saved setting), or scripted:SESSION.json to replay "
        "a session file",
    )
    run.add_argument(
        "--base-url",
        help="Responses API base URL (default: the saved setting, else OPENAI_BASE_URL)",
    )
    run.add_argument(
        "--max-turns", type=_positive, default=50, help="model round trips allowed (default 50)"
    )
    run.add_argument("--no-sandbox", action="store_true", help="run commands without bubblewrap")
    run.add_argument(
        "--verbose",
        action="store_true",
        help="print the context left after every turn, and every line of command output",
    )
    run.add_argument(
        "--full-output",
        action="store_true",
        help="print every line of command output (by default a long one shows its first 20 "
        "and last 10 lines)",
    )
    run.add_argument(
        "--yes", action="store_true", help="approve what would ask (not destructive commands)"
    )
    run.add_argument(
        "--yes-destructive",
        action="store_true",
        help="approve destructive commands too (they are rejected without a terminal otherwise)",
    )
    run.add_argument(
        "--json", action="store_true", help="JSONL events on stdout (the lines go to stderr)"
    )
    run.add_argument(
        "--output-last-message", type=Path, metavar="FILE", help="write the final answer there"
    )


def _sessions_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``tandem sessions``: a subcommand group (``list``, ``show``, ``resume``; others add
    theirs through :data:`SESSIONS_ACTIONS`)."""
    sessions = sub.add_parser("sessions", help="list, show, resume journaled sessions")
    what = sessions.add_subparsers(dest="action", required=True)
    listing = what.add_parser("list", help="sessions of a repository, newest first")
    listing.add_argument(
        "--repo", type=Path, default=Path.cwd(), help="repository folder (default: current)"
    )
    listing.add_argument("--all", action="store_true", help="every repository's sessions")
    show = what.add_parser("show", help="a session's transcript")
    show.add_argument("id")
    resume = what.add_parser(
        "resume", help="continue a session: its pending approvals, or a new message"
    )
    resume.add_argument("id")
    resume.add_argument("task", nargs="?", default="", help="the next message (optional)")
    _run_flags(resume)
    for extend in SESSIONS_ACTIONS:  # e.g. ``export`` (issue 16, Build item 3)
        extend(what)


#: Functions ``f(subparsers)`` adding more ``tandem sessions`` actions; their ``action`` name
#: is dispatched to ``SESSIONS_HANDLERS[name](args) -> int``.
SESSIONS_ACTIONS: list[Any] = []
SESSIONS_HANDLERS: dict[str, Any] = {}


def _headless_options(args: argparse.Namespace, task: str, resume: str | None = None) -> Any:
    from .headless import HeadlessOptions

    return HeadlessOptions(
        args.repo,
        task,
        mode=args.mode,
        model=args.model,
        base_url=args.base_url,
        max_turns=args.max_turns,
        sandbox=False if args.no_sandbox else None,
        verbose=args.verbose,
        yes=args.yes,
        yes_destructive=args.yes_destructive,
        json=args.json,
        output_last_message=args.output_last_message,
        resume=resume,
        full_output=args.full_output,
    )


def _sessions(args: argparse.Namespace) -> int:
    """``tandem sessions list|show ID|resume ID [MESSAGE]`` (the window's journal)."""
    from .run_cli.sessions_cmd import (
        SessionIdError,
        list_sessions,
        resolve_session_id,
        show_session,
    )

    if args.action == "list":
        if args.all:
            return list_sessions(None)
        from .run_cli.setup import project_root  # runs are journaled at the repo's top level

        return list_sessions(project_root(args.repo) if args.repo.is_dir() else args.repo)
    if args.action == "show":
        return show_session(args.id)
    try:  # every action takes a unique prefix of an id; a bad id is a usage error (2)
        args.id = resolve_session_id(args.id)
    except SessionIdError as exc:
        print(f"tandem sessions {args.action}: {exc}", file=sys.stderr)
        return 2
    if args.action == "resume":
        from .headless import run_headless

        return _run_interruptible(run_headless(_headless_options(args, args.task, resume=args.id)))
    return int(SESSIONS_HANDLERS[args.action](args))


def _checkpoints_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    cps = sub.add_parser(
        "checkpoints", help="list, diff, restore a repository's checkpoints, undo a restore"
    )
    cps.add_argument(
        "--repo", type=Path, default=Path.cwd(), help="repository folder (default: current)"
    )
    what = cps.add_subparsers(dest="action", required=True)
    what.add_parser("list", help="all checkpoints, oldest first")
    diff = what.add_parser("diff", help="diff from checkpoint A to B (default: working tree)")
    diff.add_argument("a")
    diff.add_argument("b", nargs="?")
    restore = what.add_parser("restore", help="restore working tree, index and stash")
    restore.add_argument("id")
    what.add_parser("undo", help="undo the latest restore")
    for action in what.choices.values():  # --repo also after the action
        action.add_argument("--repo", type=Path, default=argparse.SUPPRESS, help=argparse.SUPPRESS)


async def _checkpoints(args: argparse.Namespace) -> int:
    """``tandem checkpoints list|diff A [B]|restore ID|undo --repo PATH`` (same store as the
    window: the platform data dir)."""
    from core.errors import UserError
    from core.settings import load_settings
    from harnesses.checkpoints import CheckpointError, CheckpointStore, human_bytes

    try:
        cap = load_settings().checkpoint_cap_bytes
    except UserError as exc:
        print(f"tandem: {exc} (using the default checkpoint cap)", file=sys.stderr)
        cap = 100 * 1024 * 1024
    try:
        store = CheckpointStore(args.repo, cap_bytes=cap)
        if args.action == "list":
            for cp in await store.list():
                when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(cp.created_at))
                extra = f" (restore of {cp.restored_to})" if cp.restored_to else ""
                files = cp.files_touched_count or len(cp.files_touched)
                print(f"{cp.id}  {when}  {cp.kind}{extra}  {cp.label}  [{files} files]")
                for path, size in cp.skipped:
                    print(f"    skipped (over the cap): {path} ({human_bytes(size)})")
        elif args.action == "diff":
            sys.stdout.write(await store.diff(args.a, args.b))
        elif args.action == "restore":
            pre = await store.restore(args.id)
            print(f"restored {args.id}; `tandem checkpoints undo` goes back ({pre})")
        else:
            pre = await store.undo_restore()
            print(f"undid the latest restore ({pre})")
    except (CheckpointError, ValueError) as exc:
        print(f"tandem checkpoints: {exc}", file=sys.stderr)
        return 1
    return 0


def _window_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tandem",
        description="Open Tandem's window on a repository. Other commands: `tandem demo`, "
        "`tandem run` (see `tandem run --help`).",
    )
    parser.add_argument(
        "folder", nargs="?", type=Path, help="repository folder (default: the last one)"
    )
    parser.add_argument("--version", action=_VersionAction, help="print the version and exit")
    return parser


def _has_display() -> bool:
    platform = os.environ.get("QT_QPA_PLATFORM", "")
    return bool(
        os.environ.get("DISPLAY")
        or os.environ.get("WAYLAND_DISPLAY")
        or platform.startswith("offscreen")
    )


def _no_display(what: str) -> int:
    print(
        f"tandem: no display for {what}. Run it under Xvfb (`xvfb-run -a tandem ...`), "
        "or use `tandem demo --headless` / `tandem run` in a terminal.",
        file=sys.stderr,
    )
    return 2


def _light_module(relative: str) -> ModuleType:
    """Load a standard-library-only module by file path, under a private name, without running
    its package's ``__init__`` (``import core`` costs most of a second before the re-exec)."""
    path = Path(__file__).resolve().parents[1] / relative
    spec = importlib.util.spec_from_file_location("_tandem_startup_" + path.stem, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _start_up() -> None:
    """Issue 11 "Without the sandbox": no secret in Tandem's exec-time environment.

    Re-executes the interpreter without secret-named variables (their values go through a
    pipe, see :mod:`core.secret_handoff`; no-op without secrets, guarded against looping),
    then makes this process undumpable (same-uid processes cannot read its memory or environ;
    root still can), a child subreaper (stray agent processes are reparented here), and
    registers the handed-over values for redaction.
    """
    if "TANDEM_SECRETS_FD" not in os.environ:  # before the re-exec: import nothing heavy
        rule = _light_module("core/secret_names.py")  # stdlib only (redaction's name test)
        _light_module("core/secret_handoff.py").reexec_without_secrets(rule.is_secret_name)
    from core import secret_handoff
    from core.redaction import register_environment
    from harnesses.spawn import become_subreaper, set_undumpable

    secret_handoff.receive()
    set_undumpable()
    become_subreaper()
    register_environment(secret_handoff.handed_over_all())  # no longer in os.environ


def _redact_output(*, wrap_streams: bool) -> None:
    """Issue 11 "Redaction": logs, crash tracebacks and (as the entry point) everything
    printed on stdout/stderr pass through :mod:`core.redaction`."""
    from core.redaction import install_log_redaction, redacting

    install_log_redaction()
    if wrap_streams:
        sys.stdout = redacting(sys.stdout)
        sys.stderr = redacting(sys.stderr)


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``tandem`` console script; returns the exit code.

    Called as the entry point (``argv`` is ``None``), it first moves secrets out of the
    process environment (:func:`_start_up`); called with an ``argv`` list (tests), it does not.
    Ctrl+C at any point, start-up included, returns 130; a closed stdout (``| head``) returns
    :data:`EXIT_BROKEN_PIPE` without a traceback.
    """
    entry = argv is None
    # issue 15: the start-up imports ran ~165 collections (0.2-0.3 s of the window's launch);
    # off until _main knows the command: a window keeps it off (desktop.gc_policy collects)
    collecting = gc.isenabled()
    gc.disable()
    try:  # Ctrl+C during the start-up imports is an interruption too (130, no traceback)
        if entry:
            _start_up()
        _redact_output(wrap_streams=entry)
        code = _main(sys.argv[1:] if argv is None else argv, collecting=collecting)
        if entry:
            sys.stdout.flush()  # a closed pipe shows here, not at interpreter exit
        return code
    except (KeyboardInterrupt, asyncio.CancelledError):  # Ctrl+C (see _run_interruptible)
        print("tandem: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `tandem sessions list | head`: the reader left; stop quietly
        _quiet_stdout()
        return EXIT_BROKEN_PIPE
    finally:
        if collecting:  # as it was (an in-process caller; a window has closed by now)
            gc.enable()


def _run_interruptible(coro: Any) -> Any:
    """``asyncio.run(coro)`` where Ctrl+C (SIGINT) cancels ``coro``'s task through the event
    loop's own signal handler.

    ``asyncio.run`` alone catches SIGINT with a Python-level handler, which runs only when
    the main thread next executes bytecode. The kernel may hand a process-directed SIGINT
    to any thread that does not block it (``signal(7)``): given to the prompt's reader
    thread while the main thread sleeps in ``epoll_wait`` with nothing scheduled, it was
    never acted on and ``tandem run`` hung at its approval prompt (seen rarely, under
    load; ``tests/desktop/test_ctrl_c_any_thread.py`` shows it). ``loop.add_signal_handler``
    also sets the wake-up file descriptor (``signal.set_wakeup_fd``), so the loop wakes
    whichever thread took the signal. The task's ``CancelledError`` handlers journal the
    session as on the window's Stop; the error then reaches :func:`main` (exit 130). A
    second Ctrl+C cancels the clean-up too.
    """

    async def interruptible() -> Any:
        loop = asyncio.get_running_loop()
        task = asyncio.current_task()
        try:
            loop.add_signal_handler(signal.SIGINT, task.cancel)  # type: ignore[union-attr]
        except (NotImplementedError, RuntimeError, ValueError):  # not the main thread
            return await coro
        try:
            return await coro
        finally:
            loop.remove_signal_handler(signal.SIGINT)

    return asyncio.run(interruptible())


def _task_problem(task: object) -> str:
    """Why a task given on the command line cannot be sent (``""``: it can).

    Arguments that are not UTF-8 reach Python as lone surrogates (``surrogateescape``,
    PEP 383); no JSON request, journal row or session title can hold them, so the run is
    refused before anything starts rather than failing halfway (it failed with a
    ``UnicodeEncodeError`` once the session was being created).
    """
    if not isinstance(task, str):
        return ""
    try:
        task.encode("utf-8")
    except UnicodeEncodeError as exc:
        raw = task[exc.start : exc.end].encode("utf-8", "surrogateescape")
        return (
            f"the task is not valid UTF-8 (bytes {raw.hex(' ')} at character {exc.start + 1});"
            " write it in UTF-8 (e.g. `iconv -t UTF-8`)"
        )
    return ""


EXIT_BROKEN_PIPE = 141
"""The exit code when stdout's reader goes away (``| head``): 128 + ``SIGPIPE``, what a Unix
tool killed by the signal reports, without a traceback."""


def _quiet_stdout() -> None:
    """Point stdout at ``/dev/null`` so the interpreter's final flush does not fail again
    (the ``signal(7)``/Python ``BrokenPipeError`` note's recipe)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):  # no real fd (a test's StringIO)
        pass


def _main(argv: list[str], *, collecting: bool = True) -> int:
    """Run the command in ``argv``; ``collecting``: automatic garbage collection was on
    before :func:`main` turned it off for the start-up, and comes back on for a command
    without a window (a window's collection is ``desktop.gc_policy``'s)."""
    if not argv or (argv[0] not in _COMMANDS and argv[0] not in ("-h", "--help")):
        window_args = _window_parser().parse_args(argv)
        if window_args.folder is not None and not window_args.folder.is_dir():
            print(f"tandem: {window_args.folder} is not a folder", file=sys.stderr)
            return 2
        if not _has_display():
            return _no_display("the window")
        from .app import AppOptions, run_app

        return run_app(AppOptions(window_args.folder))
    args = _parser().parse_args(argv)
    if collecting and (args.command != "demo" or args.headless):  # no window
        gc.enable()
    problem = _task_problem(getattr(args, "task", None))
    if problem:
        print(f"tandem {args.command}: {problem}", file=sys.stderr)
        return 2
    if args.command == "demo":
        if args.headless:
            from .demo import run_headless_demo

            return _run_interruptible(run_headless_demo(scenario=args.scenario))
        if not _has_display():
            return _no_display("the demo window")
        from .app import AppOptions, run_app

        return run_app(AppOptions(demo=True, screenshot=args.screenshot, scenario=args.scenario))
    if args.command == "run":
        if not args.task.strip():
            print("tandem run: the task is empty", file=sys.stderr)
            return 2
        from .headless import run_headless

        return _run_interruptible(run_headless(_headless_options(args, args.task)))
    if args.command == "sessions":
        return _sessions(args)
    if args.command == "replay":  # issue 16, Build item 3
        from .replay import run_replay

        return _run_interruptible(run_replay(args.file, args.repo, mode=args.mode))
    if args.command == "checkpoints":
        return _run_interruptible(_checkpoints(args))
    _parser().print_help()
    return 2


def _replay_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``tandem replay FILE [--repo PATH]`` (issue 16, Build item 3; docs/record-replay.md)."""
    replay = sub.add_parser(
        "replay",
        help="replay an exported session: recorded model answers, real tools, compared",
    )
    replay.add_argument("file", type=Path, help="the export (`tandem sessions export`)")
    replay.add_argument(
        "--repo",
        type=Path,
        default=None,
        help="run the tools in this folder (default: a new checkout of the recorded state)",
    )
    replay.add_argument(
        "--mode",
        choices=["read-only", "ask", "auto", "full"],
        default=None,
        help="approval mode (default: the recorded one; a full-mode recording replays in auto)",
    )


def _export_parser(what: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``tandem sessions export ID -o FILE`` (issue 16, Build item 3)."""
    export = what.add_parser("export", help="write a session to a replayable file")
    export.add_argument("id")
    export.add_argument("-o", "--output", type=Path, required=True, help="the file to write")


def _export(args: argparse.Namespace) -> int:
    from .replay import export_command

    return export_command(args.id, args.output)


SESSIONS_ACTIONS.append(_export_parser)
SESSIONS_HANDLERS["export"] = _export


if __name__ == "__main__":
    sys.exit(main())
