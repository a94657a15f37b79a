"""The supervisor's cost per command: ``run_process`` of ``true`` through the spawner vs direct.

Prints the median and p90 wall time, in milliseconds, of N runs of ``true`` (and of
``bash -c true``) through :func:`harnesses.shell.process.run_process` (the supervisor:
``python -S -I supervisor.py``) and through a bare ``asyncio.create_subprocess_exec`` (what
the executor did before), the added latency, and the supervisor's own start-up (``python -S
-I`` importing what it needs, then exiting). The supervisor runs twice: with its PID and
mount namespace (the default where Tandem may create one: ``unshare``, the init's fork, a
fresh ``/proc``) and with ``TANDEM_PID_NAMESPACE=off``; the difference is the namespace's
cost per command.

Usage: ``python -m bench.spawn [--runs 50]``
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from harnesses.shell.process import run_process
from harnesses.spawn import ISOLATION_ENV, SUPERVISOR, can_isolate


async def _direct(argv: list[str], cwd: Path) -> None:
    proc = await asyncio.create_subprocess_exec(
        *argv,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    await proc.communicate()


async def _supervised(argv: list[str], cwd: Path, *, isolate: bool) -> None:
    if isolate:
        os.environ.pop(ISOLATION_ENV, None)
    else:
        os.environ[ISOLATION_ENV] = "off"
    try:
        await run_process(argv, cwd=cwd, env={"PATH": "/usr/bin:/bin"}, timeout_ms=None)
    finally:
        os.environ.pop(ISOLATION_ENV, None)


async def _time(run: Callable[[], Awaitable[None]], runs: int) -> list[float]:
    await run()  # warm-up (page cache, first import)
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        await run()
        times.append((time.perf_counter() - started) * 1000)
    return times


def _figures(label: str, times: list[float]) -> float:
    median = statistics.median(times)
    p90 = statistics.quantiles(times, n=10)[-1]
    print(f"  {label:<34} median {median:6.2f} ms   p90 {p90:6.2f} ms")
    return median


def _supervisor_start_up(runs: int) -> list[float]:
    code = f"import runpy,sys; sys.argv=['s']; import ctypes, os, signal, time  # {SUPERVISOR}"
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-S", "-I", "-c", code], check=True)
        times.append((time.perf_counter() - started) * 1000)
    return times


async def _main(runs: int) -> None:
    cwd = Path(tempfile.mkdtemp(prefix="bench-spawn-"))
    namespaces = "yes" if can_isolate() else "no (unprivileged: the subreaper fallback)"
    print(f"spawn bench: {runs} runs each, python {sys.version.split()[0]}")
    print(f"PID namespaces: {namespaces}")
    for argv in (["true"], ["bash", "-c", "true"]):
        print(f"{' '.join(argv)}:")
        direct = _figures(
            "direct create_subprocess_exec", await _time(lambda a=argv: _direct(a, cwd), runs)
        )
        plain = _figures(
            "run_process (supervisor, no ns)",
            await _time(lambda a=argv: _supervised(a, cwd, isolate=False), runs),
        )
        isolated = _figures(
            "run_process (supervisor + ns)",
            await _time(lambda a=argv: _supervised(a, cwd, isolate=True), runs),
        )
        print(f"  added by the supervisor: {plain - direct:+.2f} ms per command (median)")
        print(f"  added by the namespace:  {isolated - plain:+.2f} ms per command (median)")
    _figures("python -S -I start-up + imports", _supervisor_start_up(runs))


def main() -> None:
    """Parse ``--runs`` and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=50)
    asyncio.run(_main(parser.parse_args().runs))


if __name__ == "__main__":
    main()
