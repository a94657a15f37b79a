"""Ctrl+C ends ``tandem run`` whichever thread the kernel hands the SIGINT to.

A process-directed signal may be delivered to any thread that does not block it
(``signal(7)``). ``tandem run`` waits at its approval prompt with the main thread asleep in
``epoll_wait`` and a reader thread blocked on the terminal; a SIGINT taken by the reader
thread was never acted on with ``asyncio.run``'s Python-level handler alone, and the run hung
(once in CI). The promise: SIGINT sent to the reader thread itself still cancels the run
and the process exits 130 (``desktop.cli._run_interruptible``).
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

CHILD = textwrap.dedent(
    """
    import asyncio, signal, sys, threading, time
    from desktop import cli

    async def wait_at_a_prompt():
        loop = asyncio.get_running_loop()
        answer = loop.create_future()

        def reader():  # stands for the prompt thread blocked on the terminal
            time.sleep(0.3)  # the main thread is asleep in the loop by now
            signal.pthread_kill(threading.get_ident(), signal.SIGINT)  # to THIS thread
            time.sleep(60)
            loop.call_soon_threadsafe(answer.set_result, "y")

        threading.Thread(target=reader, daemon=True).start()
        try:
            return await answer
        except asyncio.CancelledError:
            print("cancelled", flush=True)
            raise

    try:
        RUN(wait_at_a_prompt())
    except (KeyboardInterrupt, asyncio.CancelledError):
        sys.exit(130)
    sys.exit(0)
    """
)


def _child(run: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", CHILD.replace("RUN", run)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=30,
    )


def test_sigint_taken_by_another_thread_cancels_the_run() -> None:
    done = _child("cli._run_interruptible")
    assert (done.returncode, done.stdout.strip()) == (130, "cancelled"), done.stderr


def test_the_plain_event_loop_misses_it() -> None:
    """The cause, shown: with ``asyncio.run`` alone the same signal is not acted on before
    the reader thread's answer arrives (60 s later); the child is still waiting at 3 s."""
    try:
        done = subprocess.run(
            [sys.executable, "-c", CHILD.replace("RUN", "asyncio.run")],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=3,
        )
    except subprocess.TimeoutExpired:
        return  # still waiting: the SIGINT was lost, as in the hang
    raise AssertionError(f"the plain loop acted on it: exit {done.returncode} {done.stdout!r}")
