"""The ``tandem`` command line: ``tandem demo --headless`` and friends."""

from __future__ import annotations

import argparse
import asyncio
import sys

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tandem", description="Tandem, a coding assistant on the Responses API."
    )
    sub = parser.add_subparsers(dest="command")
    demo = sub.add_parser("demo", help="replay the built-in scripted session (offline, no API key)")
    demo.add_argument("--headless", action="store_true", help="print the session in the terminal")
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``tandem`` console script; returns the exit code."""
    args = _parser().parse_args(argv)
    if args.command == "demo":
        if not args.headless:
            print(
                "The desktop window is not available in this version; running the headless demo.",
                file=sys.stderr,
            )
        from .demo import run_headless_demo

        return asyncio.run(run_headless_demo())
    _parser().print_help()
    return 2


if __name__ == "__main__":
    sys.exit(main())
