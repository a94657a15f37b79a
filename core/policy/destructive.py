"""The destructive-command guard: commands that can lose work ask first and take a checkpoint.

It judges effects, not spellings (PRODUCT.md "Destructive-command guard"): a command is
destructive when it can discard content HEAD cannot bring back (uncommitted or staged
changes, untracked or ignored files, stash entries, branches, refs). What it cannot analyse
(inline interpreter code, aliases, ``eval``/``$CMD``, a git subcommand it does not know, a
line that does not parse) is *possibly* destructive.

Decisions taken here, documented for the engine and the prompt:

* ``rm``/``unlink`` of anything is destructive (not only recursive), except when every
  operand lies inside a build folder (:data:`BUILD_DIRS`). ``rmdir`` is not (empty folders).
* Truncation (``> f``, ``: > f``, ``tee f``, ``cp /dev/null f``), ``mv``/``cp``/``install``/
  ``ln -f``/``rsync`` onto an existing path is destructive; onto a new path it is not. The
  guard looks at the workspace to tell; without one it cannot, and counts the target as
  existing (fails closed).
* ``sed -i``, ``perl -i``, ``git apply`` and ``patch`` are modifications like apply_patch:
  they ask as writes do (ask mode) and the turn's checkpoint holds the previous content;
  not destructive. But a rewrite in place or a download (``sed -i``, ``perl -i``,
  ``sort -o``, ``find -fprint``, ``curl -o``/``-O``, ``wget -O``, ``tar -x``, ``unzip -o``)
  onto an existing file no checkpoint holds (ignored, outside the workspace, or git cannot
  tell) is destructive, with ``removes`` naming the files (red-team finding 7).
* git told to run code by its configuration or environment (``-c`` outside a safe list,
  ``--config-env``, ``--exec-path=``, ``GIT_CONFIG_*``, ``GIT_EXTERNAL_DIFF``, pagers and
  editors other than ``cat``/``less``/``true``, ``GIT_SSH*``, ``HOME``,
  ``XDG_CONFIG_HOME``, a ``git config`` write earlier on the line) is *possibly*
  destructive (red-team finding 2).
* Running a script file (``sh script.sh``, ``python tool.py``, ``make``) is judged like any
  program: its content is the workspace's own, covered by the turn's checkpoint.
* ``git reset --soft`` is not destructive (index and tree stay; the old HEAD is in the
  reflog), nor ``git stash`` (push), ``git checkout -b``, a branch ``git checkout``/
  ``git switch`` (git refuses to overwrite local changes), ``git clean -n``.
"""

from __future__ import annotations

import fnmatch
import os
import posixpath
import re
import shlex
import tarfile
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from .command_parser import ParsedCommand, Segment, parse_command
from .destructive_git import git_harm
from .destructive_paths import Places, describe_paths
from .harm import Harm
from .inline_code import inline_code_harm
from .wrappers import program_name

__all__ = [
    "BUILD_DIRS",
    "Harm",
    "destructive_harm",
    "destructive_reason",
    "inside_build_dir",
    "judge_line",
]

# fmt: off
BUILD_DIRS = frozenset(
    {
        "node_modules", "dist", "build", "target", "out", ".next", ".nuxt", ".svelte-kit",
        ".turbo", ".parcel-cache", ".angular", ".gradle", ".pytest_cache", "__pycache__",
        ".venv", ".mypy_cache", ".ruff_cache", ".tox", ".nox", ".hypothesis", ".eggs",
        "coverage", "htmlcov", ".coverage", ".ipynb_checkpoints", "*.egg-info",
    }
)
# fmt: on
"""Folder names whose contents are rebuilt by tools, so deleting them loses no work."""

_ALWAYS = {
    "shred": "destroys file contents",
    "wipefs": "erases file-system signatures",
    "mke2fs": "formats a file system",
}
_NOT_FILES = ("/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "/dev/fd/")
_MAX_ALIAS_DEPTH = 4


def _short_flags(args: Sequence[str]) -> set[str]:
    """Letters of short-option clusters (``-rf`` → ``{"r", "f"}``) before a ``--``."""
    letters: set[str] = set()
    for arg in args:
        if arg == "--":
            break
        if arg.startswith("-") and not arg.startswith("--") and len(arg) > 1:
            letters.update(arg[1:])
    return letters


def _long(args: Sequence[str], *names: str) -> bool:
    for arg in args:
        if arg == "--":
            return False
        if arg.split("=", 1)[0] in names:
            return True
    return False


def _operands(args: Sequence[str], with_arg: frozenset[str] = frozenset()) -> list[str]:
    """Non-option arguments (everything after ``--`` counts); skips ``with_arg`` values."""
    out: list[str] = []
    after_dashes = False
    skip = False
    for arg in args:
        if skip:
            skip = False
        elif after_dashes:
            out.append(arg)
        elif arg == "--":
            after_dashes = True
        elif arg in with_arg:
            skip = True
        elif not arg.startswith("-") or arg == "-":
            out.append(arg)
    return out


def inside_build_dir(path: str) -> bool:
    """Whether ``path`` lies inside (or is) a build/cache folder such as ``node_modules``.

    The path must be literal enough to judge: no ``..``, no ``$`` or backtick expansion, not
    the root. ``build/*`` and ``packages/*/node_modules`` count; ``*`` and ``src`` do not.
    """
    text = path.strip()
    if not text or "$" in text or "`" in text or text in ("/", "~", "~/"):
        return False
    parts = [p for p in posixpath.normpath(text).split("/") if p and p != "."]
    if ".." in text.split("/"):
        return False
    return any(fnmatch.fnmatchcase(part, d) for part in parts for d in BUILD_DIRS)


def _rm(seg: Segment, args: Sequence[str], places: Places) -> Harm | None:
    recursive = bool({"r", "R"} & _short_flags(args)) or _long(args, "--recursive")
    paths = _operands(args)
    if seg.hidden_args:
        source = "find selects" if seg.context == "find -exec" else "listed on its input"
        return Harm(f"deletes the files {source}", removes_unknown=True)
    if not paths:
        return Harm("deletes the files it is given", removes_unknown=True)
    if all(inside_build_dir(p) for p in paths):
        return None
    removes, unknown = places.resolve(paths)
    tail = " and everything under them" if recursive else ""
    if recursive and len(paths) == 1:
        tail = " and everything under it"
    return Harm(f"deletes {describe_paths(paths)}{tail}", removes=removes, removes_unknown=unknown)


_MV_ARG = frozenset({"-t", "--target-directory", "-S", "--suffix"})
_CP_ARG = frozenset({"-t", "--target-directory", "-S", "--suffix", "-m", "--mode", "-o", "-g"})


def _overwrites(name: str, seg: Segment, args: Sequence[str], places: Places) -> Harm | None:
    """``mv``/``cp``/``install``/``ln``: the destination paths that already exist."""
    letters = _short_flags(args)
    if "n" in letters or _long(args, "--no-clobber", "--backup") or "b" in letters:
        return None
    if name == "ln" and not ("f" in letters or _long(args, "--force")):
        return None
    if name == "install" and ("d" in letters or _long(args, "--directory")):
        return None
    ops = _operands(args, _MV_ARG if name == "mv" else _CP_ARG)
    target_dir = next(
        (args[i + 1] for i, a in enumerate(args[:-1]) if a in ("-t", "--target-directory")),
        None,
    ) or next((a.split("=", 1)[1] for a in args if a.startswith("--target-directory=")), None)
    if seg.hidden_args:
        return Harm(
            f"may overwrite files with `{name}` (its operands arrive at run time)",
            removes_unknown=True,
        )
    if target_dir is not None:
        sources, dest_dir = ops, target_dir
    elif len(ops) < 2:
        return None
    else:
        sources, dest_dir = ops[:-1], ops[-1]
        is_dir = places.is_dir(dest_dir)
        if is_dir is False or ("T" in letters or _long(args, "--no-target-directory")):
            if places.exists(dest_dir):
                removes, unknown = places.resolve([dest_dir])
                return Harm(
                    f"overwrites {dest_dir} (its current content is lost)",
                    removes=removes,
                    removes_unknown=unknown,
                )
            return None
        if is_dir is None and places.exists(dest_dir):
            removes, unknown = places.resolve([dest_dir])
            return Harm(
                f"may overwrite {dest_dir} (the guard cannot tell what is there)",
                removes=removes,
                removes_unknown=True,
            )
        if is_dir is None:
            return None
    hits = [
        posixpath.join(dest_dir, posixpath.basename(s.rstrip("/")))
        for s in sources
        if places.exists(posixpath.join(dest_dir, posixpath.basename(s.rstrip("/"))))
    ]
    if not hits:
        return None
    removes, unknown = places.resolve(hits)
    return Harm(
        f"overwrites {describe_paths(hits)} (the current content is lost)",
        removes=removes,
        removes_unknown=unknown,
    )


def _rsync(args: Sequence[str], places: Places) -> Harm | None:
    if any(a.startswith("--delete") or a == "--remove-source-files" for a in args):
        return Harm(
            "deletes files in the destination that the source lacks (rsync --delete)",
            removes_unknown=True,
        )
    ops = _operands(args)
    if len(ops) >= 2 and ":" not in ops[-1] and places.exists(ops[-1]):
        return Harm(f"may overwrite files in {ops[-1]}", removes_unknown=True)
    return None


def _value_of(args: Sequence[str], shorts: str, longs: Sequence[str]) -> list[str]:
    """Values of the options ``-X VALUE``/``-XVALUE`` (X in ``shorts``) and ``--long[=]V``."""
    out: list[str] = []
    for i, arg in enumerate(args):
        if arg == "--":
            break
        name, eq, value = arg.partition("=")
        if arg.startswith("--") and name in longs:
            out.extend([value] if eq else args[i + 1 : i + 2])
        elif len(arg) >= 2 and arg[0] == "-" and arg[1] != "-" and arg[1] in shorts:
            out.extend([arg[2:]] if len(arg) > 2 else args[i + 1 : i + 2])
    return out


def _archive_members(archive: str, places: Places, zip_file: bool) -> list[str] | None:
    """Member names of a tar or zip archive on disk (``None`` when it cannot be read)."""
    if archive in ("", "-") or not places.known or len(places.cwds) != 1:
        return None
    path = os.path.join(places.cwds[0] or "", archive)
    if not os.path.lexists(path):
        return []  # nothing to extract: the command fails
    try:
        if zip_file:
            with zipfile.ZipFile(path) as zf:
                names = zf.namelist()
        else:
            with tarfile.open(path) as tf:
                names = tf.getnames()
    except (OSError, tarfile.TarError, zipfile.BadZipFile, EOFError, ValueError):
        return None
    return names if len(names) <= 2000 else None


def _rewrite_targets(name: str, args: Sequence[str], places: Places) -> list[str] | None:
    """Files a command rewrites in place or writes over (``sed -i``, ``sort -o``,
    ``find -fprint``, ``curl -o``/``-O``, ``wget -O``, ``tar -x``, ``unzip -o``), relative
    to its directory; ``None`` when they are only known at run time (an unreadable archive)."""
    if name in ("sed", "gsed"):
        inplace = any(
            a.startswith("--in-place") or (a[:1] == "-" and a[1:2] != "-" and "i" in a[1:])
            for a in args
        )
        if not inplace:
            return []
        ops = _operands(args, frozenset({"-e", "-f", "-l", "--expression", "--file"}))
        scripted = any(a in ("-e", "-f") or a.startswith(("--expression", "--file")) for a in args)
        return ops if scripted else ops[1:]
    if name == "sort":
        return _value_of(args, "o", ("--output",))
    if name == "perl":
        if not any(a[:1] == "-" and a[1:2] != "-" and "i" in a[1:].split("e")[0] for a in args):
            return []
        ops = _operands(args, frozenset({"-e", "-E", "-I", "-M", "-m", "-x"}))
        coded = any(a in ("-e", "-E") or (a[:1] == "-" and a.endswith(("e", "E"))) for a in args)
        return ops if coded else ops[1:]
    if name == "find":
        return [
            args[i + 1]
            for i, a in enumerate(args[:-1])
            if a in ("-fprint", "-fprint0", "-fprintf", "-fls")
        ]
    if name == "curl":
        outs = _value_of(args, "o", ("--output",))
        if any(a in ("-O", "--remote-name", "--remote-name-all") or
               (a[:1] == "-" and a[1:2] != "-" and "O" in a[1:]) for a in args):  # fmt: skip
            urls = [a for a in _operands(args) if "://" in a]
            outs += [posixpath.basename(u.split("?", 1)[0].split("#", 1)[0]) for u in urls]
        return [o for o in outs if o and o != "-"]
    if name == "wget":
        return [o for o in _value_of(args, "O", ("--output-document",)) if o != "-"]
    if name in ("tar", "bsdtar", "gtar"):
        first = args[0] if args else ""
        extract = (
            any(a in ("-x", "--extract", "--get") for a in args)
            or (not first.startswith("-") and "x" in first)
            or any(a[:1] == "-" and a[1:2] != "-" and "x" in a[1:] for a in args)
        )
        if not extract:
            return []
        archive = (_value_of(args, "f", ("--file",)) or [""])[0]
        for i, arg in enumerate(args):  # a cluster ending in f: `-xzf ARCHIVE`
            if not archive and arg[:1] == "-" and arg[1:2] != "-" and arg.endswith("f"):
                archive = args[i + 1] if i + 1 < len(args) else ""
        if not archive and not first.startswith("-") and "f" in first:
            rest = _operands(args[1:])
            archive = rest[0] if rest else ""
        members = _archive_members(archive, places, zip_file=False)
        if members is None:
            return None
        dest = (_value_of(args, "C", ("--directory",)) or ["."])[-1]
        return [posixpath.join(dest, m) for m in members]
    if name == "unzip":
        if not any(a[:1] == "-" and "o" in a[1:] for a in args):
            return []
        ops = _operands(args, frozenset({"-d", "-x"}))
        members = _archive_members(ops[0], places, zip_file=True) if ops else None
        if members is None:
            return None
        dest = (_value_of(args, "d", ()) or ["."])[-1]
        return [posixpath.join(dest, m) for m in members if not m.endswith("/")]
    return []


def _rewrites(name: str, args: Sequence[str], places: Places) -> Harm | None:
    """A rewrite in place or a download onto files no checkpoint of the working tree holds:
    ignored files, files outside the workspace, or files git cannot tell about."""
    targets = _rewrite_targets(name, args, places)
    if targets is None:
        return Harm(f"may overwrite files with `{name}` (what it writes is known at run time)",
                    removes_unknown=True)  # fmt: skip
    hits = [t for t in targets if not t.startswith(_NOT_FILES) and places.exists(t)]
    if not hits:
        return None
    removes, unknown = places.resolve(hits)
    if not unknown and places.ignored(removes) is False:
        return None  # tracked or untracked: the turn's checkpoint holds the old content
    return Harm(
        f"overwrites {describe_paths(hits)}, which no checkpoint holds (ignored or outside "
        "the workspace)",
        removes=removes,
        removes_unknown=unknown,
    )


def _truncations(seg: Segment, places: Places) -> Harm | None:
    hits = [t for t in seg.truncates if not t.startswith(_NOT_FILES) and places.exists(t)]
    if not hits:
        return None
    removes, unknown = places.resolve(hits)
    return Harm(
        f"overwrites {describe_paths(hits)} (the current content is lost)",
        removes=removes,
        removes_unknown=unknown,
    )


# Configuration keys that run no program and read no file naming one (git-config(1)).
_SAFE_GIT_KEYS = frozenset(
    {
        "user.name", "user.email", "color.ui", "core.quotepath", "core.autocrlf",
        "core.safecrlf", "core.abbrev", "init.defaultbranch", "commit.gpgsign", "tag.gpgsign",
        "gc.auto", "column.ui", "log.decorate", "diff.noprefix", "diff.renames",
        "merge.conflictstyle", "pull.rebase", "pull.ff", "push.default", "fetch.prune",
        "rebase.autosquash", "status.short", "core.filemode", "maintenance.auto",
    }
)  # fmt: skip
_SAFE_GIT_PREFIXES = ("color.", "advice.")
# Environment that makes git run a program or read another configuration (git(1)).
_GIT_CODE_ENV = re.compile(
    r"GIT_CONFIG.*|GIT_EXTERNAL_DIFF|GIT_.*EDITOR|GIT_PAGER|PAGER|GIT_SSH.*|GIT_EXEC_PATH"
    r"|GIT_ASKPASS|SSH_ASKPASS|GIT_PROXY_COMMAND|GIT_TEMPLATE_DIR|EDITOR|VISUAL|HOME"
    r"|XDG_CONFIG_HOME|GIT_DIFF_PATH_.*|GIT_REPLACE_REF_BASE"
)


# Pager and editor variables set to a program that only shows text or does nothing
# (`GIT_PAGER=cat git log`, `GIT_EDITOR=true git rebase -i`) run nothing else.
_PROGRAM_VARS = frozenset(
    {"PAGER", "GIT_PAGER", "GIT_EDITOR", "GIT_SEQUENCE_EDITOR", "EDITOR", "VISUAL"}
)
_HARMLESS_PROGRAMS = frozenset({"", "cat", "less", "less -R", "less -FRX", "more", "true", ":"})


def _assigned(seg: Segment) -> dict[str, str | None]:
    """``NAME=value`` assignments written before the program (leading, or given to
    ``env``/``sudo``): name → value, ``None`` when the value is computed at run time."""
    out: dict[str, str | None] = {}
    try:
        words = shlex.split(seg.text)
    except ValueError:
        return out
    for word in words:
        name, eq, value = word.partition("=")
        if eq and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
            out[name] = None if ("$" in value or "`" in value) else value
        elif not (word in ("env", "sudo", "command", "nohup") or word.startswith("-")):
            break
    return out


def _safe_git_key(key: str) -> bool:
    low = key.lower()
    return low in _SAFE_GIT_KEYS or low.startswith(_SAFE_GIT_PREFIXES)


def _git_config_alias(seg: Segment) -> tuple[str, str] | None:
    """``(name, value)`` of a ``git -c alias.NAME=VALUE`` naming the subcommand, if any."""
    sub = seg.argv[1].lower() if len(seg.argv) > 1 else None
    for entry in seg.git_config:
        env = entry.startswith("--config-env=")
        key, _, body = (entry[len("--config-env=") :] if env else entry).partition("=")
        if key.lower().startswith("alias.") and key[len("alias.") :].lower() == sub:
            return key[len("alias.") :], "$UNKNOWN" if env else body
    return None


def _git_runs_code(seg: Segment, line: _Line) -> Harm | None:
    """Whether git is told to run a program the guard cannot see: ``-c KEY=…`` with a key
    outside :data:`_SAFE_GIT_KEYS`, ``--config-env``, ``--exec-path=DIR``, the environment
    in :data:`_GIT_CODE_ENV` (set on the command or earlier on the line), or ``git config``
    writing such a key earlier on the line."""
    sub = seg.argv[1].lower() if len(seg.argv) > 1 else ""
    why = None
    for entry in seg.git_config:
        env = entry.startswith("--config-env=")
        key = (entry[len("--config-env=") :] if env else entry).partition("=")[0]
        if entry.startswith("--exec-path="):
            why = f"`{entry}` makes git run programs from another folder"
        elif key.lower().startswith("alias."):
            if env and key[len("alias.") :].lower() == sub:
                why = f"`git {entry}` defines `git {sub}` at run time"
        elif not _safe_git_key(key):
            why = f"`git -c {key}=…` can make git run a command"
        if why:
            break
    values = {**line.env, **_assigned(seg)}
    names = [
        n
        for n in dict.fromkeys([*line.env, *seg.env])
        if _GIT_CODE_ENV.fullmatch(n)
        and not (n in _PROGRAM_VARS and values.get(n) in _HARMLESS_PROGRAMS)
    ]
    if why is None and names:
        why = f"setting {names[0]} can make git run a command"
    if why is None and line.git_config:
        why = f"`{line.git_config}` earlier on the line can make git run a command"
    if why is None:
        return None
    return Harm(f"may run commands the guard cannot see: {why}", certain=False,
                removes_unknown=True)  # fmt: skip


def _worst(harms: Sequence[Harm | None]) -> Harm | None:
    found = [h for h in harms if h is not None]
    return next((h for h in found if h.certain), found[0] if found else None)


@dataclass(slots=True)
class _Line:
    """What earlier commands of the line changed: aliases defined (name → body), variables
    assigned or exported, the last ``git config`` that wrote a key running code."""

    aliases: dict[str, str] = field(default_factory=dict)
    env: dict[str, str | None] = field(default_factory=dict)
    git_config: str = ""


def _judge_text(text: str, places: Places, depth: int) -> Harm | None:
    """The worst harm of a command text an alias expands to."""
    if depth > _MAX_ALIAS_DEPTH:
        return Harm("expands aliases too deeply to be analysed", certain=False)
    parsed = parse_command(text)
    if parsed.error is not None:
        return Harm(f"runs `{text}`, which cannot be analysed", certain=False, removes_unknown=True)
    return _worst(_judge_all(parsed, places, _Line(), depth + 1))


def _segment_harm(seg: Segment, places: Places, line: _Line, depth: int = 0) -> Harm | None:
    argv = seg.argv
    if seg.opaque is not None:
        return Harm(f"may do anything: {seg.opaque}", certain=False, removes_unknown=True)
    harm = _truncations(seg, places)
    if not argv:
        return harm
    name = program_name(argv[0])
    args = argv[1:]
    aliases = line.aliases
    if argv[0] in aliases:
        body = aliases[argv[0]]
        expanded = body + (" " + shlex.join(args) if args else "")
        inner = _judge_text(expanded, places, depth)
        if inner is not None:
            return replace(inner, reason=f"{inner.reason} (through the alias `{argv[0]}`)")
        return harm
    found: Harm | None = None
    if name == "git":
        alias = _git_config_alias(seg)
        if alias is not None and args and args[0] == alias[0]:
            body = alias[1]
            rest = shlex.join(args[1:])
            text = (body[1:] if body.startswith("!") else "git " + body) + (
                " " + rest if rest else ""
            )
            found = _judge_text(text, places, depth)
            if found is not None:
                found = replace(found, reason=f"{found.reason} (through `git -c alias.{alias[0]}`)")
        else:
            found = _worst([_git_runs_code(seg, line), git_harm(args, places)])
    elif name in ("rm", "unlink"):
        found = _rm(seg, args, places)
    elif name in ("mv", "cp", "install", "ln"):
        found = _overwrites(name, seg, args, places)
    elif name == "rsync":
        found = _rsync(args, places)
    elif name == "find" and any(a in ("-delete",) for a in args):
        found = Harm("deletes the files it finds", removes_unknown=True)
    elif name in ("sed", "gsed", "sort", "find", "curl", "wget", "tar", "bsdtar", "gtar", "unzip"):
        found = _rewrites(name, args, places)
    elif name == "perl":
        code, rewrite = inline_code_harm(argv, seg.stdin), _rewrites(name, args, places)
        unknown = code is not None and code.removes_unknown
        found = code if rewrite is None else replace(rewrite, removes_unknown=unknown)
    elif name == "truncate":
        ops = _operands(args, frozenset({"-s", "--size", "-r", "--reference"}))
        removes, unknown = places.resolve(ops)
        found = Harm(f"cuts {describe_paths(ops)} short", removes=removes, removes_unknown=unknown)
    elif name == "dd":
        outs = [a[3:] for a in args if a.startswith("of=")]
        removes, unknown = places.resolve(outs)
        found = Harm(
            f"overwrites {describe_paths(outs)} with raw data" if outs else "overwrites raw data",
            removes=removes,
            removes_unknown=unknown,
        )
    elif name in _ALWAYS:
        found = Harm(_ALWAYS[name], removes_unknown=True)
    elif name.startswith("mkfs"):
        found = Harm("formats a file system")
    elif name in ("chmod", "chown", "chgrp") and (
        "R" in _short_flags(args) or _long(args, "--recursive")
    ):
        found = Harm("changes permissions or owners recursively")
    elif name == "alias":
        found = None
    else:
        found = inline_code_harm(argv, seg.stdin)
    return _worst([found, harm])


def _record_alias(seg: Segment, line: _Line) -> None:
    """Remember ``alias NAME=VALUE`` definitions, assigned or exported variables and
    ``git config`` writes for the commands after them."""
    name = program_name(seg.argv[0]) if seg.argv else ""
    if not seg.argv or name in ("export", "declare", "typeset", "readonly", "local"):
        line.env.update(dict.fromkeys(seg.env))
        line.env.update(_assigned(seg))
        for word in seg.argv[1:]:
            if not word.startswith("-"):
                name, eq, value = word.partition("=")
                line.env[name] = value if eq and "$" not in value and "`" not in value else None
    if name == "git" and len(seg.argv) > 2 and seg.argv[1] == "config":
        ops = [a for a in seg.argv[2:] if not a.startswith("-")]
        reads = {"--get", "--get-all", "--get-regexp", "-l", "--list", "--get-urlmatch"}
        if len(ops) >= 2 and not _safe_git_key(ops[0]) and not reads & set(seg.argv):
            line.git_config = f"git config {ops[0]}"
    if name != "alias":
        return
    for word, source in zip(seg.argv[1:], seg.words[1:], strict=False):
        if "=" in word:
            key, value = word.split("=", 1)
            line.aliases[key] = "$UNKNOWN" if ("$" in source or "`" in source) else value


def _judge_all(parsed: ParsedCommand, start: Places, line: _Line, depth: int) -> list[Harm | None]:
    base = Places(start.root, list(start.cwds))
    out: list[Harm | None] = []
    for seg in parsed.segments:
        places = base.moved(seg.chdir).moved(seg.git_cwd)
        harm = _segment_harm(seg, places, line, depth)
        out.append(harm)
        _record_alias(seg, line)
        name = seg.program
        if name in ("cd", "pushd"):
            ops = [w for w in seg.words[1:] if not w.startswith("-")]
            base.cd(ops[0] if ops else None, certain=seg.certain)
        elif name == "popd":
            base.cd(None, certain=False)
    return out


def judge_line(
    parsed: ParsedCommand, workspace: str | os.PathLike[str] | None = None
) -> list[Harm | None]:
    """The guard's verdict on every simple command of a parsed line, in order.

    ``cd``/``pushd`` move later commands (a certain ``cd`` to an existing folder replaces
    the working directory, any other adds a candidate); ``git -C``/``env -C`` move one.
    ``alias NAME=…`` defines an alias later commands of the line are judged through
    (fails closed: aliases count as expanded), and so does ``git -c alias.NAME=…``.

    Args:
        parsed: the line (:func:`~core.policy.command_parser.parse_command`).
        workspace: the workspace root, where the line starts; ``None`` when the disk may
            not be consulted (then every path counts as existing).

    Returns:
        One :class:`~core.policy.harm.Harm` or ``None`` per segment.
    """
    return _judge_all(parsed, Places.start(workspace), _Line(), 0)


def destructive_harm(
    segment: Segment, workspace: str | os.PathLike[str] | None = None
) -> Harm | None:
    """The guard's verdict on one simple command run in ``workspace`` (see :func:`judge_line`).

    Returns:
        The :class:`~core.policy.harm.Harm`, or ``None`` when it cannot lose work.
    """
    return _segment_harm(segment, Places.start(workspace), _Line())


def destructive_reason(
    segment: Segment, workspace: str | os.PathLike[str] | None = None
) -> str | None:
    """Why a simple command can lose work, or ``None`` when it cannot.

    Covers (PRODUCT.md "Destructive-command guard") git path checkouts, restores, resets
    (all but ``--soft``), cleans, ref and branch deletions, stash drop/clear/pop, forced
    worktree removals, pruning, history rewrites; ``rm``/``unlink`` (build folders aside),
    ``find -delete``, truncation and overwriting moves and copies onto existing paths,
    ``dd``, ``mkfs*``, ``wipefs``, ``shred``, ``truncate``, recursive ``chmod/chown/chgrp``,
    and inline interpreter code; *possibly* destructive commands (see the module) give a
    reason too. Use :func:`destructive_harm` for the full verdict.

    Returns:
        A phrase completing "it …", such as ``"deletes untracked files"``.
    """
    harm = destructive_harm(segment, workspace)
    return harm.reason if harm is not None else None
