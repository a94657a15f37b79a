"""What a read-only ``git`` command can reach: its options, and programs the repo's config runs."""

from __future__ import annotations

import os
import re
from collections.abc import Sequence

from .options import Effect, Scan

__all__ = ["config_hazard", "find_git_dir", "scan_git"]

# Long options of the read-only subcommands that write, run or read (git's parse-options
# accepts any unambiguous prefix, so every prefix counts as the option).
_DANGER: dict[str, Effect] = {
    "output": "write",
    "output-directory": "write",
    "ext-diff": "run",
    "textconv": "run",
    "open-files-in-pager": "run",
    "filters": "run",
    "contents": "read",
    "ignore-revs-file": "read",
    "orderfile": "read",
    "exclude-from": "read",
    "file": "read",
}
# Exact options that are also prefixes of a dangerous one, and harmless.
_EXACT_SAFE = frozenset({"text", "filter", "exclude"})
# Short options that run or read: `-O` (grep: open in a pager; diff: order file), blame `-S`.
_SHORT_DANGER = {"O": "", "S": "blame"}
_SHORT_READ = {"grep": "f", "ls-files": "X"}
_MAX_CONFIGS = 200
_LFS = re.compile(r"^git-lfs (clean|smudge|filter-process)( -- %f)?$")
_FALSE = frozenset({"false", "no", "off", "0", ""})


def _long_effect(name: str) -> Effect | None:
    if name in _EXACT_SAFE:
        return None
    hits = {effect for full, effect in _DANGER.items() if full.startswith(name)}
    if not hits:
        return None
    for worst in ("write", "run"):
        if worst in hits:
            return "write" if worst == "write" else "run"
    return "read"


def scan_git(sub: str, args: Sequence[str]) -> Scan:
    """Scan the expanded words after ``git <sub>`` (``sub`` may be ``"stash list"``).

    Every prefix of ``--output``, ``--ext-diff``, ``--textconv``, ``--open-files-in-pager``
    and cat-file's ``--filters`` is a problem; file arguments of ``--contents``,
    ``--orderfile``, ``--exclude-from``, ``--ignore-revs-file``, grep's ``-f``/``--file``
    and ls-files' ``-X`` are paths to check, and so is every operand (revisions look like
    relative paths and stay inside), except grep's pattern.

    Returns:
        The :class:`~core.policy.options.Scan`.
    """
    out = Scan()
    operands: list[str] = []
    pattern_given = False
    i = 0
    while i < len(args):
        arg = args[i]
        i += 1
        if arg == "--":
            operands.extend(args[i:])
            break
        if arg.startswith("--"):
            name, eq, value = arg[2:].partition("=")
            effect = _long_effect(name)
            if effect == "read":
                if not eq:
                    value = args[i] if i < len(args) else ""
                    i += 1
                out.paths.append(value)
                pattern_given |= sub == "grep"
            elif effect is not None:
                out.problems.append(
                    f"uses `--{name}`, which "
                    + ("writes a file" if effect == "write" else "runs another program")
                )
                if effect == "write":
                    out.writes.append(value)
            continue
        if arg.startswith("-") and len(arg) > 1:
            letters = arg[1:]
            read_letter = _SHORT_READ.get(sub)
            for pos, letter in enumerate(letters):
                if letter in _SHORT_DANGER and _SHORT_DANGER[letter] in ("", sub):
                    out.problems.append(
                        f"uses `-{letter}`, which runs a program or reads another file"
                    )
                    break
                if letter == "e" and sub == "grep":
                    pattern_given = True
                    if pos + 1 == len(letters):
                        i += 1  # the pattern
                    break
                if letter == read_letter:
                    value = letters[pos + 1 :]
                    if not value:
                        value = args[i] if i < len(args) else ""
                        i += 1
                    out.paths.append(value)
                    pattern_given = True
                    break
            continue
        operands.append(arg)
    if sub == "grep" and not pattern_given and operands:
        operands = operands[1:]
    out.operands.extend(operands)
    out.paths.extend(operands)
    return out


def find_git_dir(start: str, root: str) -> str | None:
    """The ``.git`` entry git would find from ``start``, searching up to ``root`` only.

    Returns:
        The path of the ``.git`` directory or file, or ``None`` when there is none at or
        below ``root`` (git would then keep searching the folders above the workspace).
    """
    here = start
    while True:
        candidate = os.path.join(here, ".git")
        if os.path.lexists(candidate):
            return candidate
        if here == root or not here.startswith(root.rstrip("/") + "/"):
            return None
        here = os.path.dirname(here)


def _config_files(dot_git: str) -> list[str] | None:
    if os.path.isdir(dot_git):
        git_dir = dot_git
    else:
        try:
            with open(dot_git, encoding="utf-8") as f:
                line = f.readline().strip()
        except OSError:
            return None
        if not line.startswith("gitdir:"):
            return None
        git_dir = os.path.join(os.path.dirname(dot_git), line[len("gitdir:") :].strip())
    dirs = [git_dir]
    try:
        with open(os.path.join(git_dir, "commondir"), encoding="utf-8") as f:
            dirs.append(os.path.join(git_dir, f.read().strip()))
    except FileNotFoundError:
        pass
    except OSError:
        return None
    files = [os.path.join(d, name) for d in dirs for name in ("config", "config.worktree")]
    for base in dirs:  # submodules: `git status`/`git diff` run git in them too
        for top, subdirs, names in os.walk(os.path.join(base, "modules")):
            subdirs[:] = [s for s in subdirs if s not in ("objects", "refs", "logs", "hooks")]
            if "config" in names:
                files.append(os.path.join(top, "config"))
            if len(files) > _MAX_CONFIGS:
                return None
    return files


def _hazard_in(text: str) -> str | None:
    """The first config key in ``text`` (git-config syntax) that makes a read run a program."""
    section = ""
    for raw_line in text.splitlines():
        line = raw_line.strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("["):
            end = line.find("]")
            if end == -1:
                return "an unreadable section header"
            header = line[1:end].strip()
            name = header.split(None, 1)[0] if header else ""
            section = name.split(".", 1)[0].lower()
            sub = header[len(name) :].strip() or (name.split(".", 1)[1] if "." in name else "")
            section = f"{section}.{sub.strip(chr(34))}" if sub else section
            line = line[end + 1 :].strip()
            if not line or line[0] in "#;":
                continue
        key, _, value = line.partition("=")
        key = key.strip().lower()
        value = value.strip().strip('"')
        head, _, tail = section.partition(".")
        head = head.lower()
        full = f"{head}.{key}"
        if head == "include" or head == "includeif":
            return f"`{section}.{key}` includes another config file"
        if full in ("core.fsmonitor",) and value.lower() not in _FALSE:
            return f"`{full}` runs a program"
        if full in ("core.pager", "diff.external", "gpg.program", "core.worktree"):
            return f"`{full}` is set"
        if head == "pager" or (head == "diff" and tail and key in ("command", "textconv")):
            return f"`{section}.{key}` runs a program"
        if head == "filter" and key in ("clean", "smudge", "process") and not _LFS.match(value):
            return f"`{section}.{key}` runs a program"
        if head == "gpg" and tail and key == "program":
            return f"`{section}.{key}` runs a program"
        if full == "blame.ignorerevsfile":
            return f"`{full}` reads another file"
    return None


def config_hazard(start: str, root: str) -> str | None:
    """Why a read-only git command run in ``start`` could run a program the repository's
    config names (``core.fsmonitor``, ``diff.external``, textconv, filters, pager, gpg) or
    reach outside ``root``; ``None`` when the repository's config sets none of them.

    Reads ``config`` and ``config.worktree`` of the git dir (following a ``.git`` file and
    ``commondir``) and of submodules under ``modules/``. Global and system config are the
    user's own and not read. What cannot be read counts as a hazard (fails closed).
    """
    dot_git = find_git_dir(start, root)
    if dot_git is None:
        return "there is no repository in the workspace, so git would search the folders above"
    files = _config_files(dot_git)
    if files is None:
        return "the repository's git dir cannot be read"
    for path in files:
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                text = f.read(1_000_000)
        except FileNotFoundError:
            continue
        except OSError:
            return f"`{path}` cannot be read"
        found = _hazard_in(text)
        if found is not None:
            return f"the repository's config {found}"
    return None
