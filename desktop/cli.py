"""The ``tandem`` command line: ``tandem demo --headless`` and friends."""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tandem", description="Tandem, a coding assistant on the Responses API."
    )
    sub = parser.add_subparsers(dest="command")
    demo = sub.add_parser("demo", help="replay the built-in scripted session (offline, no API key)")
    demo.add_argument("--headless", action="store_true", help="print the session in the terminal")
    demo.add_argument(
        "--screenshot", type=Path, help="answer approvals like a user, save screenshots there, quit"
    )
    run = sub.add_parser("run", help="run a task in a repository from the terminal")
    run.add_argument("task", help="what the agent should do")
    run.add_argument(
        "--repo", type=Path, default=Path.cwd(), help="repository folder (default: current)"
    )
    run.add_argument(
        "--mode", choices=["read-only", "ask", "auto", "full"], default="ask", help="approval mode"
    )
    run.add_argument(
        "--model", help="model name, or scripted:SESSION.json to replay a session file"
    )
    run.add_argument("--base-url", help="Responses API base URL (default: OPENAI_BASE_URL)")
    run.add_argument("--max-turns", type=int, default=50)
    run.add_argument("--no-sandbox", action="store_true", help="run commands without bubblewrap")
    return parser


def _window_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tandem",
        description="Open Tandem's window on a repository. Other commands: tandem demo, tandem run (see tandem demo --help).",
    )
    parser.add_argument(
        "folder", nargs="?", type=Path, help="repository folder (default: the last one)"
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``tandem`` console script; returns the exit code."""
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] not in ("demo", "run", "-h", "--help"):
        window_args = _window_parser().parse_args(argv)
        from .app import AppOptions, run_app

        return run_app(AppOptions(window_args.folder))
    args = _parser().parse_args(argv)
    if args.command == "demo":
        if args.headless:
            from .demo import run_headless_demo

            return asyncio.run(run_headless_demo())
        from .app import AppOptions, run_app

        return run_app(AppOptions(demo=True, screenshot=args.screenshot))
    if args.command == "run":
        from .headless import HeadlessOptions, run_headless

        options = HeadlessOptions(
            args.repo,
            args.task,
            mode=args.mode,
            model=args.model,
            base_url=args.base_url,
            max_turns=args.max_turns,
            sandbox=not args.no_sandbox,
        )
        return asyncio.run(run_headless(options))
    _parser().print_help()
    return 2


if __name__ == "__main__":
    sys.exit(main())
