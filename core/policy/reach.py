"""What each command of a line can reach: working directory, expanded paths, writing options."""

from __future__ import annotations

import fnmatch
import glob
import os
import re
from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass

from .command_parser import ParsedCommand, Segment
from .expand import Expanded, expand_word
from .gitreach import config_hazard, scan_git
from .options import TOOLS, Scan, scan
from .wrappers import program_name

__all__ = ["Reach", "analyse"]

_SENTINEL_ROOT = "/__workspace__"
# Not /dev/zero, /dev/random, /dev/urandom: they never end, and a line reader of the
# read-only rules holds one endless line in memory (`sed -n 1p /dev/zero`, `tail -n 1`,
# `sort`, `nl`: gigabytes a second; red team), so reading them asks like any outside file.
_SAFE_FILES = frozenset(
    {"/dev/null", "/dev/stdin", "/dev/stdout", "/dev/stderr", "/dev/tty", "-"}
)  # fmt: skip
# Programs of the built-in rules that read no file (their operands are text).
_NO_PATHS = frozenset(
    {"echo", "printf", "pwd", "which", "type", "basename", "dirname", "whoami", "uname",
     "date", "true", "false", "cd", "tr", "df"}
)  # fmt: skip
_GIT_READ_SUBCOMMANDS = frozenset(
    {"status", "diff", "log", "show", "blame", "ls-files", "ls-tree", "rev-parse",
     "merge-base", "describe", "cat-file", "shortlog", "grep", "stash", "branch", "remote"}
)  # fmt: skip
_FIND_BAD = frozenset(
    {"-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf",
     "-fls"}
)  # fmt: skip
_FIND_FILE_ARG = re.compile(r"^-(newer|anewer|cnewer|samefile|newer[aBcm][aBcm])$")
# Programs of the built-in rules that walk every directory operand (and the working
# directory when they have none); grep and ls walk only with `-r`/`-R` (options.py).
_WALKERS = frozenset({"rg", "find", "du", "tree"})
_MAX_CWDS = 8
_MAX_GLOB = 2000


@dataclass(frozen=True, slots=True)
class Reach:
    """What one command of a line reaches, as far as the built-in rules care.

    Attributes:
        redirect: why an input redirection (``< FILE``) reads outside the workspace or
            cannot be resolved, else ``None``; applies whatever rule allowed the command.
        problem: why a built-in read-only rule cannot vouch for the command (it writes,
            runs a program, reads outside the workspace or a hidden secret path, runs
            outside it, or something cannot be resolved statically), else ``None``.
        secret: the hidden secret path ``problem`` or ``redirect`` is about, as shown to
            people (``"~/.ssh"``), else ``None``.
    """

    redirect: str | None = None
    problem: str | None = None
    secret: str | None = None


@dataclass(frozen=True, slots=True)
class _Secret:
    lexical: str
    real: str
    shown: str


@dataclass(slots=True)
class _State:
    root: str
    real: bool
    env: dict[str, str]
    pwd_known: bool
    cwds: list[str | None]
    prev: list[str | None]
    source: str = ""
    secrets: tuple[_Secret, ...] = ()
    hit: str | None = None


def analyse(
    parsed: ParsedCommand,
    workspace: str | None,
    env: Mapping[str, str],
    secret_paths: Collection[str | os.PathLike[str]] = (),
) -> list[Reach]:
    """Judge the reach of every segment of ``parsed``, tracking ``cd`` across the line.

    ``cd``/``pushd``/``popd`` move the working directory of later commands: a ``cd`` that
    always runs in the line's shell to an existing directory replaces it; any other (in a
    pipeline, subshell, after ``&&``/``||``, to a missing or unresolvable place) adds its
    target to the set of places later commands may run in, and every place is checked.

    A path equal to or under a secret path (compared both as written, normalised, and
    with symlinks resolved) is unreachable even inside the workspace, and so is a working
    directory there (``cd ~/.ssh``, ``git -C .ssh``); a command that walks a tree
    (``grep -r``, ``ls -R``, ``rg``, ``find``, ``du``, ``tree``, ``git grep``) may not
    start above one (``grep -r token ~``, ``find .`` in a home workspace).

    Args:
        parsed: the parsed line.
        workspace: the workspace root, or ``None`` (then relative paths count as inside
            and absolute ones as outside, and the file system is not consulted).
        env: variables known at run time (``HOME``); names the line itself assigns
            anywhere are dropped (their value is only known at run time).
        secret_paths: files and folders the sandbox hides (absolute, or starting with
            ``~/``, expanded with ``env["HOME"]``); one that contains the workspace is
            ignored, as the sandbox cannot hide it either.

    Returns:
        One :class:`Reach` per segment, in order.
    """
    root = os.path.realpath(workspace) if workspace else _SENTINEL_ROOT
    source = parsed.source
    known = {k: v for k, v in env.items() if not _assigned(k, source)}
    oldpwd = known.pop("OLDPWD", None)
    known.pop("PWD", None)
    state = _State(
        root, workspace is not None, known, not _assigned("PWD", source), [root], [oldpwd], source
    )
    if _assigned("OLDPWD", source):
        state.prev = [None]
    state.secrets = _secrets(secret_paths, env.get("HOME"), root)
    out: list[Reach] = []
    for seg in parsed.segments:
        state.hit = None
        out.append(_reach(seg, state))
        if seg.argv and program_name(seg.argv[0]) in ("cd", "pushd", "popd"):
            _move(seg, state)
    return out


def _secrets(
    paths: Collection[str | os.PathLike[str]], home: str | None, root: str
) -> tuple[_Secret, ...]:
    found: list[_Secret] = []
    for raw in paths:
        text = os.fspath(raw)
        if (text == "~" or text.startswith("~/")) and home:
            text = home + text[1:]
        if not os.path.isabs(text):
            continue  # a relative or `~user` entry: the sandbox resolves it, not here
        lexical = os.path.normpath(text)
        real = os.path.realpath(lexical)
        if _within(root, lexical) or _within(root, real) or "/" in (lexical, real):
            continue
        found.append(_Secret(lexical, real, _shown(lexical, home)))
    return tuple(found)


def _shown(path: str, home: str | None) -> str:
    """``path`` with the home folder written ``~`` (``/home/u/.ssh`` -> ``~/.ssh``)."""
    if home and home != "/":
        home = os.path.normpath(home)
        if path == home:
            return "~"
        if path.startswith(home + "/"):
            return "~/" + path[len(home) + 1 :]
    return path


def _secret_problem(
    raw: str, places: Sequence[str], state: _State, *, walks: bool = False, how: str = "through"
) -> str | None:
    """Why reaching ``places`` (one path, as written and resolved) touches a hidden secret
    path (``walks``: anything below them too), else ``None``; records the secret in
    ``state.hit``. ``how`` says how ``raw`` is reached (``"by running in"``)."""
    for secret in state.secrets:
        for place in places:
            inside = _within(place, secret.lexical) or _within(place, secret.real)
            above = walks and (_within(secret.lexical, place) or _within(secret.real, place))
            if inside or above:
                state.hit = state.hit or secret.shown
                if inside:
                    return f"reads a hidden secret path ({secret.shown}) {how} `{raw}`"
                return (
                    f"reads a hidden secret path ({secret.shown}): it walks `{raw}`, "
                    "which contains it"
                )
    return None


def _lexical(path: str, cwd: str | None) -> str | None:
    if os.path.isabs(path):
        return os.path.normpath(path)
    return os.path.normpath(os.path.join(cwd, path)) if cwd is not None else None


def _assigned(name: str, source: str) -> bool:
    """Whether ``name`` appears in ``source`` other than as ``$name``/``${name}``
    (``name=x``, ``read name``, ``for name in``, ``export name``, ``printf -v name``)."""
    if name not in source:
        return False
    stripped = re.sub(r"\$\{?[A-Za-z_][A-Za-z0-9_]*", "", source)
    return re.search(rf"(?<![A-Za-z0-9_]){re.escape(name)}(?![A-Za-z0-9_])", stripped) is not None


def _expand(raw: str, cwd: str | None, state: _State) -> Iterator[Expanded]:
    pwd = cwd if state.pwd_known else None
    for old in state.prev if ("OLDPWD" in raw or "~-" in raw) else [None]:
        yield expand_word(raw, state.env, cwd=pwd, oldpwd=old)


def _resolve(path: str, cwd: str | None, state: _State) -> str | None:
    if not os.path.isabs(path):
        if cwd is None:
            return None
        path = os.path.join(cwd, path)
    return _real(path) if state.real else os.path.normpath(path)


def _real(path: str) -> str:
    """``os.path.realpath`` that never resolves through ``/proc``: links such as
    ``/proc/self/cwd`` name the judging process, not the command, so any path that passes
    through ``/proc`` resolves to ``/proc`` itself (outside every workspace)."""
    done = "/"
    todo = [p for p in path.split("/") if p]
    hops = 0
    while todo:
        part = todo.pop(0)
        if part == ".":
            continue
        if part == "..":
            done = os.path.dirname(done)
            continue
        here = os.path.join(done, part)
        if here == "/proc":
            return "/proc"
        if os.path.islink(here):
            hops += 1
            if hops > 40:
                return "/proc"  # a link loop: unresolvable
            target = os.readlink(here)
            todo = [p for p in target.split("/") if p] + todo
            if target.startswith("/"):
                done = "/"
            continue
        done = here
    return done


def _within(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def _check_path(raw: str, cwd: str | None, state: _State) -> str | None:
    """Why the path written ``raw`` is not certainly inside the workspace, or is a hidden
    secret path, else ``None``."""
    for value in _expand(raw, cwd, state):
        problem = _check_value(raw, value, cwd, state)
        if problem is not None:
            return problem
    return None


def _check_value(
    raw: str, value: Expanded, cwd: str | None, state: _State, *, walks: bool = False
) -> str | None:
    if value.unresolved is not None:
        return f"reaches `{raw}`, which is only known at run time ({value.unresolved})"
    text = value.text
    if text in _SAFE_FILES or re.fullmatch(r"/dev/fd/\d+", text) or not text:
        return None
    if value.pattern is not None:
        return _check_glob(raw, value.pattern, cwd, state, walks=walks)
    resolved = _resolve(text, cwd, state)
    if resolved is None:
        return f"reaches `{raw}` from a working directory only known at run time"
    lexical = _lexical(text, cwd) or resolved
    secret = _secret_problem(raw, (lexical, resolved), state, walks=walks)
    if secret is not None:
        return secret
    if not _within(resolved, state.root):
        return f"reaches `{raw}` outside the workspace"
    return None


def _check_glob(
    raw: str,
    pattern: str,
    cwd: str | None,
    state: _State,
    *,
    walks: bool = False,
    names_only: bool = False,
) -> str | None:
    """Why the glob ``pattern`` (written ``raw``) reaches outside the workspace or a hidden
    secret path, else ``None``. ``names_only``: only the names of the matches are used
    (``echo *``), so each match's folder is checked, not where a matched link points."""
    full = pattern if os.path.isabs(pattern) else None
    if full is None:
        if cwd is None:
            return f"reaches `{raw}` from a working directory only known at run time"
        full = os.path.join(glob.escape(cwd), pattern)
    fixed = []
    for part in full.split("/"):
        if glob.has_magic(part):
            break
        fixed.append(part)
    lexical_base = os.path.normpath("/".join(fixed) or "/")
    base = _resolve(lexical_base, None, state) or "/"
    secret = _secret_problem(raw, (lexical_base, base), state)
    if secret is not None:
        return secret
    # bash matches `.` and `..` only with a pattern part that starts with a literal `.`
    # (`.*`, `.?`), dotglob or not (bash(1) "Filename Expansion"); Python's glob never does.
    parts = pattern.split("/")
    if any(
        p.startswith(".") and (fnmatch.fnmatchcase("..", p) or fnmatch.fnmatchcase(".", p))
        for p in parts
    ):
        return f"reaches `{raw}`, a pattern that can climb out of its folder"
    if not _within(base, state.root):
        return f"reaches `{raw}` outside the workspace"
    if not state.real:
        return None
    for count, match in enumerate(glob.iglob(full)):
        if count >= _MAX_GLOB:
            return f"reaches `{raw}`, a pattern with too many matches to check"
        lexical = os.path.normpath(os.path.abspath(match))
        real = _real(os.path.dirname(lexical)) if names_only else _real(lexical)
        places = (lexical, real) if not names_only else (lexical, os.path.dirname(lexical), real)
        secret = _secret_problem(match, places, state, walks=walks)
        if secret is not None:
            return secret
        if not _within(real, state.root):
            return f"reaches `{match}` (from `{raw}`) outside the workspace"
    return None


def _listing_problem(seg: Segment, state: _State) -> str | None:
    """Why a program that reads no file still shows what it should not: the shell expands
    its glob operands first, so ``echo /etc/*``, ``printf '%s\\n' ~/.ssh/*``, ``basename
    ~/.aws/*`` or ``cd ~/.ssh; echo *`` print the names in a folder outside the workspace
    or in a hidden secret path (red-team report, hole 10). Each word with an unquoted glob
    is checked like a path in every place the command may run in (only the folders the
    glob lists count, not where a matched link points); words without one are text.
    ``cd`` is left to :func:`_move` (a globbed target makes the next places unknown)."""
    for raw in seg.words[1:]:
        for cwd in state.cwds:
            for value in _expand(raw, cwd, state):
                if value.unresolved is not None or value.pattern is None:
                    continue  # text: an unresolved one prints a value, not a listing
                problem = _check_glob(raw, value.pattern, cwd, state, names_only=True)
                if problem is not None:
                    return f"lists file names: it {problem}"
    return None


def _cwds_for(seg: Segment, state: _State, extra: Sequence[str]) -> list[str | None] | str:
    """The directories ``seg`` runs in (after ``env -C``/``git -C``), or a problem."""
    places = list(state.cwds)
    for raw in extra:
        moved: list[str | None] = []
        for cwd in places:
            for value in _expand(raw, cwd, state):
                if value.unresolved is not None or value.pattern is not None:
                    return f"runs in `{raw}`, which is only known at run time"
                moved.append(_resolve(value.text, cwd, state))
        places = moved
    for place in places:
        if place is None:
            return "runs in a directory only known at run time"
        secret = _secret_problem(place, (place,), state, how="by running in")
        if secret is not None:
            return secret
        if not _within(place, state.root):
            return f"runs in `{place}`, outside the workspace"
    return places


def _reach(seg: Segment, state: _State) -> Reach:
    redirect = None
    for raw in seg.reads:
        for cwd in state.cwds:
            problem = _check_path(raw, cwd, state)
            if problem is not None:
                redirect = f"reads `{raw}` (a redirection or a file list): it {problem}"
                break
        if redirect:
            break
    problem = _problem(seg, state) if seg.argv else None
    return Reach(redirect, problem, state.hit if (redirect or problem) else None)


def _problem(seg: Segment, state: _State) -> str | None:
    name = program_name(seg.argv[0])
    if name == "printf" and seg.argv[1:2] and seg.argv[1].startswith("-v"):
        return "sets a variable with `printf -v`"
    if name in _NO_PATHS:
        return _listing_problem(seg, state) if name != "cd" else None
    if seg.hidden_args:
        return "gets more arguments at run time (xargs)"
    git = name == "git"
    places = _cwds_for(seg, state, (*seg.chdir, *(seg.git_cwd if git else ())))
    if isinstance(places, str):
        return places
    args = seg.words[1:]
    for cwd in places:
        values = [list(_expand(raw, cwd, state)) for raw in args]
        unknown = next((v for vs in values for v in vs if v.unresolved), None)
        if unknown is not None:
            return f"has an argument only known at run time ({unknown.unresolved})"
        texts = [vs[0].text for vs in values]
        found = _scan(name, texts)
        if isinstance(found, str):
            return found
        if found.problems:
            return found.problems[0]
        whole = {vs[0].text: vs for vs in values}
        globbed = any(v.pattern is not None for vs in values for v in vs)
        walks = found.recursive or name in _WALKERS or (git and texts[:1] == ["grep"])
        for text in found.paths:
            options = whole.get(text) or [
                Expanded(text, text if globbed and glob.has_magic(text) else None)
            ]
            for value in options:
                problem = _check_value(
                    text, value, cwd, state, walks=walks and text in found.operands
                )
                if problem is not None:
                    return problem
        if walks and not found.operands and cwd is not None:
            problem = _secret_problem(".", (cwd,), state, walks=True)
            if problem is not None:
                return problem
        if git and state.real and cwd is not None:
            hazard = config_hazard(cwd, state.root)
            if hazard is not None:
                return f"may run a program: {hazard}"
    return None


def _scan(name: str, args: list[str]) -> Scan | str:
    if name == "git":
        if not args or args[0] not in _GIT_READ_SUBCOMMANDS:
            return f"runs `git {args[0] if args else ''}`, whose options Tandem has no table for"
        skip = 2 if args[0] == "stash" else 1
        return scan_git(args[0], args[skip:])
    if name == "find":
        return _scan_find(args)
    tool = TOOLS.get(name)
    if tool is None:
        return f"runs `{name}`, whose options Tandem has no table for"
    found = scan(tool, args)
    if name == "jq":
        if found.pattern_given:
            found.problems.append(
                "runs a jq program from a file, which may import modules from outside"
            )
        elif found.jq_filter and re.search(r"\b(import|include)\b", found.jq_filter):
            found.problems.append("imports jq modules, which are read from outside")
    return found


def _scan_find(args: list[str]) -> Scan:
    """find's own syntax: ``[-H|-L|-P] [-D x] [-Olevel] [start…] [expression]``."""
    out = Scan()
    i = 0
    while i < len(args) and (args[i] in ("-H", "-L", "-P", "-D") or args[i].startswith("-O")):
        if args[i] in ("-H", "-L"):
            out.problems.append(f"uses `{args[i]}`, which follows symbolic links out of the folder")
        i += 2 if args[i] == "-D" else 1
    starts = []
    while i < len(args) and not args[i].startswith(("-", "(", "!", ",")) and args[i] != ")":
        starts.append(args[i])
        i += 1
    out.operands.extend(starts or ["."])
    out.paths.extend(starts or ["."])
    while i < len(args):
        word = args[i]
        if word in _FIND_BAD:
            out.problems.append(f"uses `{word}`, which runs, deletes or writes")
        elif word in ("-follow",):
            out.problems.append("uses `-follow`, which follows symbolic links out of the folder")
        elif word == "-files0-from":
            out.problems.append(
                "uses `-files0-from`, which reads start points only known at run time"
            )
        elif _FIND_FILE_ARG.match(word) and i + 1 < len(args):
            out.paths.append(args[i + 1])
            i += 1
        i += 1
    return out


def _move(seg: Segment, state: _State) -> None:
    """Apply a ``cd``/``pushd``/``popd`` to the tracked working directories."""
    name = program_name(seg.argv[0])
    words = list(seg.words[1:])
    while (
        words
        and words[0].startswith("-")
        and words[0] not in ("-",)
        and not (name != "cd" and re.fullmatch(r"[-+]\d+", words[0]))
    ):
        if words.pop(0) == "--":
            break
    before = list(state.cwds)
    targets: list[str | None] = []
    if name == "popd" or (name == "pushd" and (not words or re.fullmatch(r"[-+]\d+", words[0]))):
        return  # the directory stack only holds places already tracked
    raw = words[0] if words else "~"
    for cwd in before:
        if raw == "-":
            targets.extend(state.prev)
            continue
        for value in _expand(raw, cwd, state):
            if value.unresolved is not None or value.pattern is not None:
                targets.append(None)
            elif (
                not os.path.isabs(value.text)
                and ("CDPATH" in state.env or _assigned("CDPATH", state.source))
                and not value.text.startswith(("./", "../"))
            ):
                targets.append(None)
            else:
                targets.append(_resolve(value.text, cwd, state))
    exists = state.real and all(
        t is not None and os.path.isdir(t) and os.access(t, os.X_OK) for t in targets
    )
    if seg.certain and exists:
        state.cwds = list(dict.fromkeys(targets))
    else:
        state.cwds = list(dict.fromkeys(before + targets))
    state.prev = before if seg.certain and exists else list(dict.fromkeys(state.prev + before))
    if len(state.cwds) > _MAX_CWDS:
        state.cwds = [None]
