"""Secrets out of Tandem's environment: re-exec at start-up, values handed over through a pipe.

``/proc/<pid>/environ`` shows a process's environment *as it was at exec time*, whatever
``os.environ`` says later, and every child inherits what the parent had. So when the user
exported ``OPENAI_API_KEY`` (or any variable named like a secret), Tandem re-executes itself at
start-up (:func:`reexec_without_secrets`) with those variables removed, writing their values to
a pipe whose read end is passed by number in :data:`HANDOFF_FD_ENV`. The new process reads them
(:func:`receive`), closes the pipe and keeps them in memory only; :func:`handed_over` answers
``os.environ``-style look-ups. No process Tandem starts afterwards inherits them (issue 11,
"Without the sandbox"; PRODUCT.md "Secrets").

Pure Python, no Tandem imports: the caller passes the "is this a secret" predicate.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import Callable, Mapping, Sequence

__all__ = [
    "HANDOFF_FD_ENV",
    "MAX_PAYLOAD_BYTES",
    "full_environ",
    "env_value",
    "handed_over",
    "handed_over_all",
    "receive",
    "reexec_without_secrets",
]

#: Names the file descriptor (decimal) of the pipe the values arrive on, in the new process.
HANDOFF_FD_ENV = "TANDEM_SECRETS_FD"
#: Largest payload handed over (JSON bytes); the pipe is grown to hold it before the exec.
MAX_PAYLOAD_BYTES = 1024 * 1024
_F_SETPIPE_SZ = 1031
_values: dict[str, str] = {}
_state = {"received": False}


def handed_over(name: str) -> str | None:
    """The value of secret variable ``name`` handed over at start-up, or ``None``."""
    return _values.get(name)


def env_value(name: str) -> str | None:
    """``name`` from the environment the user started Tandem with: the handed-over value when
    the start-up re-exec moved it out of ``os.environ``, else ``os.environ``'s (``None`` when
    neither has it). Core's own look-ups of ``OPENAI_API_KEY`` go through this."""
    return _values.get(name) or os.environ.get(name)


def handed_over_all() -> dict[str, str]:
    """Every handed-over ``{name: value}`` (a copy)."""
    return dict(_values)


def full_environ(base: Mapping[str, str] | None = None) -> dict[str, str]:
    """``base`` (default ``os.environ``) plus the handed-over secrets: the environment the user
    started Tandem with. For code that filters secrets itself (e.g. a command's ``allow_env``)."""
    env = dict(os.environ if base is None else base)
    env.update(_values)
    return env


def receive(environ: dict[str, str] | None = None) -> bool:
    """In the re-executed process: read the values from the pipe named by
    :data:`HANDOFF_FD_ENV`, close it and drop the variable. Idempotent.

    Args:
        environ: the environment to take the variable from (default ``os.environ``).

    Returns:
        Whether values were handed over to this process.

    Raises:
        RuntimeError: the variable names no readable pipe or the payload is not valid
            (fails closed: Tandem does not start with a half-received key).
    """
    env = os.environ if environ is None else environ
    text = env.pop(HANDOFF_FD_ENV, None)
    if text is None:
        return _state["received"]
    try:
        fd = int(text)
        chunks = []
        while chunk := os.read(fd, 65536):
            chunks.append(chunk)
        os.close(fd)
        payload = json.loads(b"".join(chunks).decode("utf-8"))
    except (ValueError, OSError) as exc:
        raise RuntimeError(f"secret hand-over failed: {exc}") from None
    if not isinstance(payload, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in payload.items()
    ):
        raise RuntimeError("secret hand-over failed: malformed payload")
    _values.update(payload)
    _state["received"] = True
    return True


def reexec_without_secrets(
    is_secret: Callable[[str], bool], argv: Sequence[str] | None = None
) -> None:
    """Re-execute this interpreter without the secret variables, handing their values over.

    Returns (does nothing) when no variable is a secret, when this process already received
    a hand-over (the loop guard), or when the payload exceeds :data:`MAX_PAYLOAD_BYTES`
    (a warning on stderr). Otherwise it does not return.

    Args:
        is_secret: whether a variable name is a secret (e.g. ``harnesses.shell.is_secret``).
        argv: the interpreter's full command line (default ``sys.orig_argv``, which keeps
            ``-m module`` and script paths, so ``python -m``, console scripts and subprocess
            calls all re-execute the same way); ``argv[0]`` is replaced by ``sys.executable``.

    Raises:
        OSError: the pipe or the exec failed.
    """
    if _state["received"] or HANDOFF_FD_ENV in os.environ:
        return
    secrets = {k: v for k, v in os.environ.items() if is_secret(k)}
    if not secrets:
        return
    payload = json.dumps(secrets).encode("utf-8")
    if len(payload) > MAX_PAYLOAD_BYTES:
        print("tandem: secret variables too large to hand over; kept", file=sys.stderr)
        return
    read_end, write_end = os.pipe()
    try:
        if len(payload) > 60_000 and sys.platform.startswith("linux"):
            import fcntl

            fcntl.fcntl(write_end, _F_SETPIPE_SZ, len(payload))
        view = memoryview(payload)
        while view:
            view = view[os.write(write_end, view) :]
    finally:
        os.close(write_end)
    os.set_inheritable(read_end, True)
    env = {k: v for k, v in os.environ.items() if not is_secret(k)}
    env[HANDOFF_FD_ENV] = str(read_end)
    command = list(sys.orig_argv if argv is None else argv)
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os.execve(sys.executable, [sys.executable, *command[1:]], env)
