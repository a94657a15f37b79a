"""What a checkpoint copies beyond the tracked files, within the size cap.

Untracked files and the ignored files a destructive command would remove (``rm`` targets,
what ``git clean -n`` lists) are new content for the store. They are copied smallest first
while the running total stays within the cap (bytes per checkpoint); the rest is skipped and
reported, never copied silently (issue 12, Build items 2 and 3).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ._nested import is_nested_repository

__all__ = [
    "DEFAULT_CAP_BYTES",
    "CapPlan",
    "Recoverability",
    "clean_dry_run_args",
    "expand_targets",
    "exclude_pattern",
    "human_bytes",
    "parse_clean_output",
    "plan_cap",
    "plan_sizes",
]

DEFAULT_CAP_BYTES = 100 * 1024 * 1024
"""Default cap on the untracked + ignored bytes one checkpoint copies (100 MiB)."""

# git clean options that only select what is removed (kept for the dry run); the rest
# (-f, -i, -q...) is dropped and -n added. Options taking a value: -e PATTERN.
_SELECTING = frozenset({"-d", "-x", "-X"})
_KNOWN_NOOPS = frozenset({"-f", "--force", "-ff", "-q", "--quiet", "-n", "--dry-run"})


@dataclass(frozen=True, slots=True)
class CapPlan:
    """Which candidate files a checkpoint copies and which it skips.

    Attributes:
        included: relative paths copied, with their sizes in bytes.
        skipped: ``(relative path, size in bytes)`` left out because of the cap, sorted.
        cap_bytes: the cap applied (bytes).
    """

    included: tuple[tuple[str, int], ...]
    skipped: tuple[tuple[str, int], ...]
    cap_bytes: int


@dataclass(frozen=True, slots=True)
class Recoverability:
    """What a checkpoint taken now would make recoverable (for the approval prompt).

    Attributes:
        covered: ``(path, bytes)`` of the untracked/ignored files it would hold.
        lost: ``(path, bytes)`` over the cap: not recoverable after the command.
        ignored_lost: how many of ``lost`` are ignored files (the rest are untracked).
        unknown: why what it removes could not be listed (git failed...), else ``None``;
            the command still runs only after a checkpoint succeeds.
        nested: nested repositories it removes (relative paths): a checkpoint holds only
            the commit each one's ``HEAD`` names, not its history, files or uncommitted
            work, so they are not recoverable.
    """

    covered: tuple[tuple[str, int], ...]
    lost: tuple[tuple[str, int], ...]
    ignored_lost: int = 0
    unknown: str | None = None
    nested: tuple[str, ...] = ()

    @property
    def lost_bytes(self) -> int:
        """Total size of :attr:`lost`, bytes."""
        return sum(size for _, size in self.lost)

    def summary(self) -> str:
        """One line for the prompt, e.g. ``"2 ignored files, 1.3 GB, are over the cap and
        will not be recoverable"``; ``"everything it removes is recoverable"`` when nothing
        is lost; when it could not be told, says so."""
        if self.unknown is not None:
            return (
                f"what the checkpoint will hold could not be checked ({self.unknown}); "
                "the command runs only if its checkpoint succeeds"
            )
        repos = ""
        if self.nested:
            names = ", ".join(self.nested[:3]) + (", …" if len(self.nested) > 3 else "")
            noun = "repository" if len(self.nested) == 1 else "repositories"
            repos = (
                f"{len(self.nested)} nested git {noun} ({names}) with {'its' if len(self.nested) == 1 else 'their'}"
                " history and uncommitted work will not be recoverable"
            )
        if not self.lost:
            return repos or "everything it removes is recoverable"
        n = len(self.lost)
        what = (
            "ignored "
            if self.ignored_lost == n
            else ("untracked " if not self.ignored_lost else "")
        )
        noun = "file" if n == 1 else "files"
        verb = "is" if n == 1 else "are"
        files = (
            f"{n} {what}{noun}, {human_bytes(self.lost_bytes)}, {verb} over the cap "
            "and will not be recoverable"
        )
        return f"{files}; {repos}" if repos else files


def human_bytes(size: int) -> str:
    """``size`` bytes in decimal units (``"1.3 GB"``, ``"400 MB"``, ``"12 bytes"``)."""
    if size < 1000:
        return f"{size} bytes"
    value = float(size)
    for unit in ("kB", "MB", "GB", "TB"):
        value /= 1000
        if value < 1000 or unit == "TB":
            return f"{value:.1f} {unit}" if value < 10 else f"{value:.0f} {unit}"
    raise AssertionError("unreachable")


def plan_cap(workspace: Path, candidates: Iterable[str], cap_bytes: int) -> CapPlan:
    """Pick the candidates to copy: smallest first while the total stays within the cap.

    Args:
        workspace: the work tree (resolved).
        candidates: relative paths (files or symlinks; missing ones are ignored).
        cap_bytes: the cap in bytes (``0``: copy none).

    Returns:
        The :class:`CapPlan`. A symlink counts as the length of its target string.
    """
    sized: list[tuple[int, str]] = []
    base = os.fspath(workspace) + os.sep  # plain strings: 10k lstat calls without pathlib
    lstat = os.lstat
    for rel in dict.fromkeys(candidates):
        try:
            sized.append((lstat(base + rel).st_size, rel))
        except OSError:
            continue
    return plan_sizes(sized, cap_bytes)


def plan_sizes(sized: list[tuple[int, str]], cap_bytes: int) -> CapPlan:
    """:func:`plan_cap` for candidates whose sizes are known.

    Args:
        sized: ``(size in bytes, relative path)`` per candidate, paths unique (sorted in
            place when they do not all fit).
        cap_bytes: the cap in bytes.

    Returns:
        The :class:`CapPlan`: smallest first while the total stays within the cap.
    """
    if sum(size for size, _ in sized) <= cap_bytes:  # all fit: no need to order by size
        everything = sorted((rel, size) for size, rel in sized)
        return CapPlan(tuple(everything), (), cap_bytes)
    sized.sort()
    total = 0
    included: list[tuple[str, int]] = []
    skipped: list[tuple[str, int]] = []
    for size, rel in sized:
        if total + size <= cap_bytes:
            total += size
            included.append((rel, size))
        else:
            skipped.append((rel, size))
    return CapPlan(tuple(sorted(included)), tuple(sorted(skipped)), cap_bytes)


def expand_targets(
    workspace: Path, targets: Sequence[str], nested: list[str] | None = None
) -> list[str]:
    """Files (relative, POSIX) under ``rm``-style targets inside ``workspace``.

    Directories are walked without following symlinks; ``.git`` and paths outside the
    workspace are left out (the refs part covers the repository), and so is a nested
    repository's content (a folder with its own ``.git``: git holds it as a gitlink, never
    its files), whose relative path is appended to ``nested`` instead.
    """
    out: list[str] = []
    for target in targets:
        path = Path(target)
        if not path.is_absolute():
            path = workspace / path
        path = Path(os.path.normpath(path))
        try:
            rel = path.relative_to(workspace)
        except ValueError:
            continue
        if rel.parts and rel.parts[0] == ".git":
            continue
        if path.is_dir() and not path.is_symlink():
            if rel.parts and is_nested_repository(str(path)):
                if nested is not None:
                    nested.append(rel.as_posix())
                continue
            for dirpath, dirnames, filenames in os.walk(path):
                kept = []
                for d in dirnames:
                    if Path(dirpath) == workspace and d == ".git":
                        continue
                    folder = os.path.join(dirpath, d)
                    if is_nested_repository(folder):
                        if nested is not None:
                            nested.append(Path(folder).relative_to(workspace).as_posix())
                        continue
                    kept.append(d)
                dirnames[:] = kept
                for name in filenames:
                    out.append((Path(dirpath) / name).relative_to(workspace).as_posix())
        elif os.path.lexists(path) and rel.parts:
            out.append(rel.as_posix())
    return out


def clean_dry_run_args(args: Sequence[str] | None) -> list[str]:
    """The ``git clean`` dry-run arguments that list what ``git clean <args>`` removes.

    Args:
        args: the user's arguments after ``clean``; ``None`` or anything not understood
            gives the widest listing (``-n -d -x``: untracked and ignored, everywhere).

    Returns:
        Arguments for ``git clean`` through the door (always with ``-n``).
    """
    widest = ["-n", "-d", "-x"]
    if args is None:
        return widest
    flags: list[str] = []
    paths: list[str] = []
    items = list(args)
    i = 0
    while i < len(items):
        arg = items[i]
        if arg == "--":
            paths.extend(items[i + 1 :])
            break
        if arg in _SELECTING:
            flags.append(arg)
        elif arg in _KNOWN_NOOPS:
            pass
        elif arg in ("-e", "--exclude") and i + 1 < len(items):
            flags.extend(["-e", items[i + 1]])
            i += 1
        elif arg.startswith("--exclude="):
            flags.extend(["-e", arg.partition("=")[2]])
        elif arg.startswith("-") and len(arg) > 2 and not arg.startswith("--"):
            letters = arg[1:]
            if set(letters) <= set("dxXfqn"):
                flags.extend(f"-{c}" for c in letters if c in "dxX")
            else:
                return widest  # fails closed
        elif arg.startswith("-"):
            return widest
        else:
            paths.append(arg)
        i += 1
    return ["-n", *flags, "--", *paths]


def parse_clean_output(out: str) -> list[str]:
    """Paths from ``git clean -n`` output (``Would remove <path>`` lines, C-quoted or not).

    Directory entries keep their trailing ``/``.
    """
    prefix = "Would remove "
    paths: list[str] = []
    for line in out.splitlines():
        if line.startswith(prefix):
            paths.append(_unquote(line[len(prefix) :]))
    return paths


def _unquote(text: str) -> str:
    """Undo git's C-style path quoting (``core.quotePath``)."""
    if not (len(text) >= 2 and text.startswith('"') and text.endswith('"')):
        return text
    body = text[1:-1]
    raw = bytearray()
    simple = {"n": 10, "t": 9, '"': 34, "\\": 92, "a": 7, "b": 8, "f": 12, "r": 13, "v": 11}
    i = 0
    while i < len(body):
        ch = body[i]
        if ch == "\\" and i + 1 < len(body):
            nxt = body[i + 1]
            if nxt in simple:
                raw.append(simple[nxt])
                i += 2
                continue
            if body[i + 1 : i + 4].isdigit():
                raw.append(int(body[i + 1 : i + 4], 8))
                i += 4
                continue
        raw.extend(ch.encode("utf-8", "surrogateescape"))
        i += 1
    return raw.decode("utf-8", "surrogateescape")


def exclude_pattern(rel: str) -> str | None:
    """An ignore-file line matching exactly ``rel`` (anchored, glob characters escaped).

    Returns:
        The line, or ``None`` when the path cannot be written as one (a newline in it).
    """
    if "\n" in rel or "\r" in rel:
        return None
    escaped = "".join("\\" + c if c in "\\*?[" else c for c in rel)
    if escaped.endswith(" "):
        escaped = escaped[:-1] + "\\ "
    return "/" + escaped
