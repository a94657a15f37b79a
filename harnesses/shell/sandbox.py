"""Bubblewrap (``bwrap``) sandboxing of shell commands (PRODUCT.md "Sandbox")."""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import platformdirs

from core.settings import APP_NAME

from .environment import NO_INPUT_HELPER
from .git_paths import GitProtection, find_git_protection
from .git_watch import GitWatch
from .secret_paths import HiddenPath, HiddenPlan, needs_mask, plan_hidden, plan_sockets

__all__ = [
    "SandboxMode",
    "empty_file",
    "SandboxPlan",
    "SandboxSummary",
    "describe_sandbox",
    "bwrap_argv",
    "find_bwrap",
    "plan_sandbox",
    "sandbox_available",
    "sandbox_unavailable_reason",
]

#: ``off``: no sandbox; ``read-only``: the whole filesystem read-only; ``workspace-write``:
#: read-only except the workspace (and a private ``/tmp``).
SandboxMode = Literal["off", "read-only", "workspace-write"]
_MODES = ("off", "read-only", "workspace-write")


def find_bwrap() -> str | None:
    """The absolute path of ``bwrap`` on ``PATH``, or ``None``."""
    return shutil.which("bwrap")


@functools.cache
def _probe(bwrap: str) -> str | None:
    """Run a trivial sandboxed command once per binary; ``None`` when it works, else why not."""
    argv = [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    argv += ["--unshare-pid", "--unshare-net", "--die-with-parent", "--", "true"]
    try:
        done = subprocess.run(argv, capture_output=True, timeout=10, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bwrap failed: {exc}"
    if done.returncode != 0:
        detail = done.stderr.decode("utf-8", "replace").strip().splitlines()
        return f"bwrap failed: {detail[0] if detail else f'exit code {done.returncode}'}"
    return None


def sandbox_unavailable_reason() -> str | None:
    """``None`` when sandboxing works here, else a one-line reason (``"bwrap not found"``...).

    The first call runs ``bwrap ... true`` (blocking, a few ms); the answer is cached per binary.
    """
    bwrap = find_bwrap()
    if bwrap is None:
        return "bwrap not found"
    return _probe(bwrap)


def sandbox_available() -> bool:
    """Whether ``bwrap`` is on ``PATH`` and can create a sandbox here."""
    return sandbox_unavailable_reason() is None


def empty_file() -> Path:
    """An empty regular file (mode 0444) in Tandem's cache folder, the source of file masks.

    It is re-created when anything changed it; the cache folder itself is hidden inside the
    sandbox, so a command cannot reach the file's host path.

    Raises:
        OSError: the cache folder cannot be written.
    """
    folder = Path(platformdirs.user_cache_dir(APP_NAME, appauthor=False)) / "sandbox"
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    path = folder / "empty"
    try:
        info = os.lstat(path)
        if not (path.is_file() and not path.is_symlink() and info.st_size == 0):
            raise FileNotFoundError(path)
    except FileNotFoundError:
        if os.path.lexists(path):
            shutil.rmtree(path) if path.is_dir() and not path.is_symlink() else path.unlink()
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o444))
    return path


def bwrap_argv(
    bwrap: str,
    mode: SandboxMode,
    workspace: Path,
    *,
    network: bool,
    hidden: Iterable[HiddenPath] = (),
    git: GitProtection | None = None,
    empty: Path | None = None,
    sockets: Iterable[HiddenPath] = (),
    visible: Iterable[Path] = (),
) -> list[str]:
    """The ``bwrap`` prefix for ``mode`` (the command follows after ``--``).

    ``visible``: folders bound read-only where they are, after the private ``/tmp`` (a
    program installed under ``/tmp``, e.g. an MCP server of a clone there); the hidden
    paths are masked after them, so they still win.

    Layout, in mount order: ``/`` bound read-only, fresh ``/dev`` and ``/proc``, a private
    ``/tmp`` (tmpfs), the workspace bound again after it (read-write in ``workspace-write``
    mode, read-only otherwise, so a workspace under ``/tmp`` stays visible), Tandem's
    no-input helper (``GIT_EDITOR``, ``SSH_ASKPASS``...) bound read-only where it is; in
    ``workspace-write`` mode each git dir of ``git`` bound onto itself (a mount point cannot be
    renamed or removed) with its ``config``/``hooks``/``info``... bound read-only on top; then
    each ``hidden`` path masked (a folder by an empty read-only tmpfs, a file by a read-only
    bind of ``empty``), then each of ``sockets`` the same way (a socket file covered by an
    empty file refuses ``connect()``); cwd = workspace, a new PID namespace (so every process of the command
    dies with it and ``/proc`` shows no Tandem process), ``--die-with-parent``, every
    capability dropped (``--cap-drop ALL``: as root the command could otherwise unmount the
    read-only binds), and ``--unshare-net`` unless ``network``.

    ``--new-session`` is deliberately not used: commands have no controlling terminal (the
    executor starts them in a new session with stdin from ``/dev/null``), so the TIOCSTI
    injection it guards against is impossible, and staying in the executor's process group lets
    a timeout kill reach every sandboxed process.

    Raises:
        ValueError: a hidden file but no ``empty`` source.
    """
    ws = str(workspace)
    argv = [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]
    argv += ["--bind" if mode == "workspace-write" else "--ro-bind", ws, ws]
    if NO_INPUT_HELPER.is_file():  # the editor/askpass stand-in: visible even from under /tmp
        helper = str(NO_INPUT_HELPER)
        argv += ["--ro-bind", helper, helper]
    for folder in visible:
        if os.path.isdir(folder):
            argv += ["--ro-bind", str(folder), str(folder)]
    if git is not None and mode == "workspace-write":
        for pin in git.pins:
            argv += ["--bind", str(pin), str(pin)]
        for path in git.read_only:
            argv += ["--ro-bind", str(path), str(path)]
    for item in [*hidden, *sockets]:
        if not needs_mask(item, workspace):
            continue
        target = str(item.target)
        if item.kind == "dir":
            argv += ["--perms", "0555", "--tmpfs", target, "--remount-ro", target]
        else:
            if empty is None:
                raise ValueError("a hidden file needs an empty source file")
            argv += ["--ro-bind", str(empty), target]
    # run as root, bwrap keeps every capability: CAP_SYS_ADMIN would let the command unmount
    # the read-only binds above (``umount .git/config``); drop them all (a no-op unprivileged)
    argv += ["--cap-drop", "ALL"]
    argv += ["--chdir", ws, "--unshare-pid", "--die-with-parent"]
    if not network:
        argv.append("--unshare-net")
    argv.append("--")
    return argv


@dataclass(frozen=True, slots=True)
class SandboxPlan:
    """How one command will run.

    Attributes:
        prefix: argv to put before the shell (empty when not sandboxed).
        mode: the requested mode.
        sandboxed: whether the command really runs under ``bwrap``.
        unavailable: why a requested sandbox could not be used (``None`` otherwise).
        hidden: the secret paths masked (see :mod:`harnesses.shell.secret_paths`).
        git: the protected git paths (``None`` when not sandboxed).
        sockets: the socket paths masked (:func:`~harnesses.shell.secret_paths.plan_sockets`).
    """

    prefix: tuple[str, ...]
    mode: SandboxMode
    sandboxed: bool
    unavailable: str | None = None
    hidden: HiddenPlan = field(default_factory=lambda: HiddenPlan(hidden=()))
    git: GitProtection | None = None
    sockets: tuple[HiddenPath, ...] = ()

    @property
    def disarmed(self) -> list[str]:
        """Planted redirections renamed aside while planning (``GitProtection.disarmed``)."""
        return list(self.git.disarmed) if self.git is not None else []

    def watch(self) -> GitWatch:
        """A started :class:`~harnesses.shell.git_watch.GitWatch` over the paths that must stay
        absent during the command (``commondir``...); stop it when the command has ended,
        before :meth:`after_command`. A no-op watcher outside ``workspace-write``."""
        if not self.sandboxed or self.git is None or self.mode != "workspace-write":
            return GitWatch(())
        return GitWatch(self.git.absent).start()

    def after_command(self) -> list[str]:
        """Repairs after a sandboxed command ended (see :meth:`GitProtection.sweep`)."""
        if not self.sandboxed or self.git is None or self.mode != "workspace-write":
            return []
        return self.git.sweep()


def plan_sandbox(
    mode: SandboxMode,
    workspace: Path,
    *,
    network: bool,
    hidden_extra: Iterable[Path] = (),
    hidden_shown: Iterable[Path] = (),
) -> SandboxPlan:
    """Decide how to run under ``mode`` (may probe ``bwrap`` once, see above).

    Reads the git layout and the secret paths afresh (file reads, no git), so a repository or
    a secret created since the last command is covered.

    Args:
        mode: the sandbox mode.
        workspace: the resolved workspace.
        network: keep the network.
        hidden_extra / hidden_shown: the user's additions to and removals from the default
            hidden paths (``Settings.sandbox_hidden_paths`` / ``sandbox_shown_paths``).

    Raises:
        ValueError: an unknown ``mode``.
        OSError: the git dir's missing ``hooks``/``info`` or the mask source cannot be made.
    """
    if mode not in _MODES:
        raise ValueError(f"unknown sandbox mode {mode!r}; expected one of {_MODES}")
    if mode == "off":
        return SandboxPlan(prefix=(), mode=mode, sandboxed=False)
    reason = sandbox_unavailable_reason()
    bwrap = find_bwrap()
    if reason is not None or bwrap is None:
        return SandboxPlan(prefix=(), mode=mode, sandboxed=False, unavailable=reason)
    hidden = plan_hidden(workspace, extra=hidden_extra, shown=hidden_shown)
    covered = [h.target for h in hidden.hidden if h.kind == "dir"]
    sockets = tuple(
        s
        for s in plan_sockets(workspace)
        if s.target not in {h.target for h in hidden.hidden}
        and not any(s.target != d and d in s.target.parents for d in covered)
    )
    writable = mode == "workspace-write"
    # workspace-write: every git dir in the workspace (nested ones too) is protected, and the
    # ones the command creates are neutralised after it (new_repos.py); a commondir git never
    # writes itself (planted while no sweep ran) is disarmed before it could be followed
    git = find_git_protection(workspace, create_missing=writable, nested=writable, disarm=True)
    files = any(h.kind == "file" for h in [*hidden.hidden, *sockets])
    empty = empty_file() if files else None
    prefix = bwrap_argv(
        bwrap,
        mode,
        workspace,
        network=network,
        hidden=hidden.hidden,
        git=git,
        empty=empty,
        sockets=sockets,
    )
    return SandboxPlan(
        prefix=tuple(prefix), mode=mode, sandboxed=True, hidden=hidden, git=git, sockets=sockets
    )


@dataclass(frozen=True, slots=True)
class SandboxSummary:
    """What the sandbox does for commands in one workspace, for the window and ``tandem run``.

    Attributes:
        mode: the sandbox mode commands run in (``"off"`` for full access or sandbox off).
        network: whether commands keep the network.
        unavailable: why ``bwrap`` cannot be used here, or ``None``.
        hidden: hidden secret paths that exist now, for display (``~/.ssh``...).
        skipped: listed paths that are not hidden, with the reason (``"~/x: ..."``).
        protected: read-only git paths relative to the workspace (``.git/config``...).
        sockets: socket paths masked (``/run/user``, ``/run/docker.sock``...).
    """

    mode: SandboxMode
    network: bool
    unavailable: str | None
    hidden: tuple[str, ...]
    skipped: tuple[str, ...]
    protected: tuple[str, ...]
    sockets: tuple[str, ...] = ()

    def headline(self, limit: int = 4) -> str:
        """One line, e.g. ``sandbox: workspace-write, network off, hiding 7 secret paths
        (~/.ssh, ~/.aws, ...), .git/config and hooks read-only``."""
        if self.mode == "off":
            return "sandbox: off (commands can read and write everything the user can)"
        if self.unavailable:
            return f"sandbox: unavailable ({self.unavailable}); commands run unsandboxed"
        parts = [self.mode, f"network {'on' if self.network else 'off'}"]
        shown = ", ".join(self.hidden[:limit]) + (", ..." if len(self.hidden) > limit else "")
        count = len(self.hidden)
        shown = shown if limit > 0 else ""
        parts.append(
            f"hiding {count} secret path{'s' if count != 1 else ''}"
            + (f" ({shown})" if count else "")
        )
        if self.protected:
            parts.append(".git/config and hooks read-only")
        return "sandbox: " + ", ".join(parts)

    def details(self) -> str:
        """Several lines: the headline's facts with every hidden and protected path."""
        lines = [self.headline(limit=0)]
        if self.hidden:
            lines += ["Hidden from commands:", *(f"  {p}" for p in self.hidden)]
        if self.protected:
            lines += ["Read-only git paths:", *(f"  {p}" for p in self.protected)]
        if self.sockets:
            lines += ["Sockets masked:", *(f"  {p}" for p in self.sockets)]
        if self.skipped:
            lines += ["Not hidden:", *(f"  {p}" for p in self.skipped)]
        return "\n".join(lines)


def describe_sandbox(
    mode: SandboxMode,
    workspace: Path,
    *,
    network: bool = False,
    hidden_extra: Iterable[Path] = (),
    hidden_shown: Iterable[Path] = (),
) -> SandboxSummary:
    """Summarise what :func:`plan_sandbox` would do (file reads only; creates nothing).

    Args:
        mode, workspace, network, hidden_extra, hidden_shown: as for :func:`plan_sandbox`.
    """
    from .secret_paths import display_path

    ws = Path(os.path.realpath(workspace))
    hidden = plan_hidden(ws, extra=hidden_extra, shown=hidden_shown)
    git = find_git_protection(ws, create_missing=False)
    protected = []
    for path in [*git.read_only, *(p / name for p in git.git_dirs for name in ("hooks", "info"))]:
        try:
            rel = path.relative_to(ws).as_posix()
        except ValueError:
            rel = str(path)
        rel += "/" if path.is_dir() else ""
        if rel not in protected:
            protected.append(rel)
    return SandboxSummary(
        mode=mode,
        network=network,
        unavailable=sandbox_unavailable_reason() if mode != "off" else None,
        hidden=tuple(hidden.display()),
        skipped=tuple(f"{display_path(p)}: {why}" for p, why in hidden.skipped),
        protected=tuple(protected),
        sockets=tuple(str(s.path) for s in plan_sockets(ws)) if mode != "off" else (),
    )
