"""The guard's read-only questions to git, answered by whoever may run git.

``core`` starts no git process: git reads repository config that can name programs, so every
git run goes through the harness's one hardened door (``harnesses.vcs.run_git``). The guard
asks two kinds of question (does branch X exist: ``show-ref``; is this path ignored:
``check-ignore``); the harness installs a :data:`GitProbe` that answers them through the
door (``harnesses.workspace`` does it on import). Without one every answer is "unknown",
which the guard treats conservatively.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Sequence

__all__ = ["GitProbe", "git_exec_commands", "git_status", "set_git_probe"]

#: ``(cwd, args) -> exit status``, or ``None`` when git could not answer.
GitProbe = Callable[[str, Sequence[str]], "int | None"]

_probe: GitProbe | None = None


def set_git_probe(probe: GitProbe | None) -> None:
    """Install (or with ``None`` remove) the function that runs the guard's git questions."""
    global _probe
    _probe = probe


def git_status(cwd: str | None, args: Sequence[str]) -> int | None:
    """Exit status of the read-only ``git ARGS`` in ``cwd``; ``None`` when unknown (no probe
    installed, no such folder, git failed to run). ``check-ignore -q --no-index -- PATHS``
    answers 0 when one of PATHS is ignored and untracked, 1 when none is."""
    if cwd is None or not os.path.isdir(cwd) or _probe is None:
        return None
    try:
        return _probe(cwd, list(args))
    except Exception:
        return None


@functools.cache
def git_exec_commands() -> frozenset[str] | None:
    """The ``git-<name>`` programs in git's exec path (builtins are installed there as links),
    read from the folder without running git; ``None`` when no exec path is found."""
    candidates = ["/usr/lib/git-core", "/usr/libexec/git-core"]
    for folder in os.environ.get("PATH", "").split(os.pathsep):
        if folder and os.path.isfile(os.path.join(folder, "git")):  # the git PATH finds
            prefix = os.path.dirname(os.path.realpath(os.path.join(folder, "git")))
            prefix = os.path.dirname(prefix)
            candidates += [os.path.join(prefix, s, "git-core") for s in ("libexec", "lib")]
            break
    for folder in candidates:
        try:
            names = [n[4:] for n in os.listdir(folder) if n.startswith("git-")]
        except OSError:
            continue
        if "status" in names or "checkout" in names:
            return frozenset(names)
    return None
