"""Static expansion of one shell word: quotes, ``~``, ``$NAME``/``${NAME}``, globs (bash rules)."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

__all__ = ["Expanded", "expand_word"]

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_GLOB_CHARS = frozenset("*?[")
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*\+?=")
_Add = Callable[[str, bool], None]


@dataclass(frozen=True, slots=True)
class Expanded:
    """What a shell word becomes before the command sees it.

    Attributes:
        text: the value after quote removal and expansion (``"/home/u/.ssh/id_rsa"``); only
            meaningful when ``unresolved`` is ``None``.
        pattern: when the word holds an unquoted glob (``*``, ``?``, ``[``), the value as a
            :mod:`glob` pattern, with quoted parts escaped; else ``None``.
        unresolved: why the value cannot be known before the command runs (``"$RANDOM is
            only known at run time"``), else ``None``.
    """

    text: str
    pattern: str | None = None
    unresolved: str | None = None


class _Unknown(Exception):
    pass


def _escape(text: str) -> str:
    return re.sub(r"([*?\[])", r"[\1]", text)


def _lookup(name: str, env: Mapping[str, str], quoted: bool) -> str:
    value = env.get(name)
    if value is None:
        raise _Unknown(f"${name} is only known at run time")
    if not quoted and (any(c.isspace() for c in value) or _GLOB_CHARS & set(value)):
        raise _Unknown(f"${name} is split or globbed by the shell")
    return value


def _close_brace(raw: str, start: int) -> int:
    """Index of the ``}`` closing a ``${`` whose ``{`` is at ``start``, or -1."""
    depth = 0
    for i in range(start, len(raw)):
        if raw[i] == "{":
            depth += 1
        elif raw[i] == "}":
            depth -= 1
            if depth == 0:
                return i
    return -1


def _has_brace_expansion(raw: str) -> bool:
    """Whether an unquoted ``{a,b}`` or ``{1..3}`` appears (bash brace expansion)."""
    depth, quote, i = 0, "", 0
    stack: list[bool] = []
    while i < len(raw):
        c = raw[i]
        if quote:
            if c == quote:
                quote = ""
            elif c == "\\" and quote == '"':
                i += 1
        elif c == "\\":
            i += 1
        elif c in "'\"":
            quote = c
        elif c == "$" and raw[i + 1 : i + 2] == "{":
            end = _close_brace(raw, i + 1)
            i = end if end != -1 else len(raw)
        elif c == "{":
            depth += 1
            stack.append(False)
        elif c == "}" and depth:
            depth -= 1
            if stack.pop():
                return True
        elif depth and (c == "," or raw.startswith("..", i)):
            stack[-1] = True
        i += 1
    return False


def _tilde(prefix: str, env: Mapping[str, str], cwd: str | None, oldpwd: str | None) -> str:
    if prefix == "":
        if "HOME" not in env:
            raise _Unknown("~ (HOME is not known)")
        return env["HOME"]
    if prefix == "+":
        if cwd is None:
            raise _Unknown("~+ (the working directory is not known)")
        return cwd
    if prefix == "-":
        if oldpwd is None:
            raise _Unknown("~- (the previous directory is not known)")
        return oldpwd
    raise _Unknown(f"~{prefix} names another user's home")


def expand_word(
    raw: str,
    env: Mapping[str, str],
    *,
    cwd: str | None = None,
    oldpwd: str | None = None,
) -> Expanded:
    """Expand one word as bash would, without running anything.

    Handles single and double quotes, backslashes, ``$'…'`` without escapes, a leading
    ``~``/``~+``/``~-`` (and ``~`` after the first ``=`` or a ``:`` of an assignment-like
    word, and after ``--opt=``, to stay on the safe side), ``$NAME``, ``${NAME}``,
    ``$PWD``/``$OLDPWD``, a whole-word process substitution (``/dev/fd/63``), and marks
    unquoted globs. Anything else (``$(…)``, backticks, ``$RANDOM``, ``$1``, ``${x:-y}``,
    brace expansion, names not in ``env``) is unresolved. Follows the bash manual,
    "Shell Expansions".

    Args:
        raw: the word as written in the source (quotes included).
        env: variables known to hold at run time (``HOME``…); ``PWD`` and ``OLDPWD`` come
            from ``cwd``/``oldpwd`` instead.
        cwd: the directory the command runs in (absolute), if known.
        oldpwd: the previous directory, if known.

    Returns:
        The :class:`Expanded` value; never raises.
    """
    if re.fullmatch(r"[<>]\(.*\)", raw, flags=re.S):
        return Expanded("/dev/fd/63")
    if _has_brace_expansion(raw):
        return Expanded(raw, unresolved=f"`{raw}` uses brace expansion")
    names = dict(env)
    names.pop("PWD", None)
    names.pop("OLDPWD", None)
    if cwd is not None:
        names["PWD"] = cwd
    if oldpwd is not None:
        names["OLDPWD"] = oldpwd
    try:
        text, pattern, globbed = _expand(raw, names, cwd, oldpwd)
    except _Unknown as exc:
        return Expanded(raw, unresolved=str(exc))
    return Expanded(text, pattern if globbed else None)


def _expand(
    raw: str, env: Mapping[str, str], cwd: str | None, oldpwd: str | None
) -> tuple[str, str, bool]:
    text: list[str] = []
    pattern: list[str] = []
    globbed = False
    assignment = bool(_ASSIGNMENT.match(raw)) or raw.startswith("--")
    seen_eq = False
    i, n = 0, len(raw)

    def add(chunk: str, quoted: bool) -> None:
        text.append(chunk)
        pattern.append(_escape(chunk) if quoted else chunk)

    def tilde_at(pos: int) -> int:
        end = pos + 1
        while end < n and raw[end] not in "/:" and (raw[end].isalnum() or raw[end] in "+-_."):
            end += 1
        if end < n and raw[end] not in "/:":
            return pos  # quoted or odd characters follow: not a tilde prefix
        add(_tilde(raw[pos + 1 : end], env, cwd, oldpwd), True)
        return end

    if raw.startswith("~"):
        i = tilde_at(0)
        if i == 0:
            add("~", True)
            i = 1
    while i < n:
        c = raw[i]
        if c == "\\":
            add(raw[i + 1 : i + 2], True)
            i += 2
        elif c == "'":
            end = raw.find("'", i + 1)
            if end == -1:
                raise _Unknown("an unclosed quote")
            add(raw[i + 1 : end], True)
            i = end + 1
        elif c == "$" and raw[i + 1 : i + 2] == "'":
            end = raw.find("'", i + 2)
            body = raw[i + 2 : end] if end != -1 else "\\"
            if "\\" in body:
                raise _Unknown("a $'…' string with escapes")
            add(body, True)
            i = end + 1
        elif c == '"' or (c == "$" and raw[i + 1 : i + 2] == '"'):
            i = _double(raw, i + (2 if c == "$" else 1), env, add)
        elif c == "$":
            i = _dollar(raw, i, env, add, quoted=False)
        elif c == "`":
            raise _Unknown("a command substitution")
        else:
            if c in _GLOB_CHARS:
                globbed = True
            if c in "<>" and raw[i + 1 : i + 2] == "(":
                raise _Unknown("a process substitution")
            text.append(c)
            pattern.append(c)
            i += 1
            if assignment and ((c == "=" and not seen_eq) or (c == ":" and seen_eq)):
                seen_eq = seen_eq or c == "="
                if i < n and raw[i] == "~":
                    j = tilde_at(i)
                    i = j if j != i else i
    return "".join(text), "".join(pattern), globbed


def _double(raw: str, i: int, env: Mapping[str, str], add: _Add) -> int:
    n = len(raw)
    while i < n:
        c = raw[i]
        if c == '"':
            return i + 1
        if c == "\\" and raw[i + 1 : i + 2] in ('"', "\\", "$", "`", "\n"):
            add(raw[i + 1], True)
            i += 2
        elif c == "$":
            i = _dollar(raw, i, env, add, quoted=True)
        elif c == "`":
            raise _Unknown("a command substitution")
        else:
            add(c, True)
            i += 1
    raise _Unknown("an unclosed quote")


def _dollar(raw: str, i: int, env: Mapping[str, str], add: _Add, *, quoted: bool) -> int:
    nxt = raw[i + 1 : i + 2]
    if nxt == "(":
        raise _Unknown("a command substitution")
    if nxt == "{":
        end = _close_brace(raw, i + 1)
        inner = raw[i + 2 : end] if end != -1 else ""
        if not _NAME.fullmatch(inner):
            raise _Unknown(f"${{{inner}}} is only known at run time")
        add(_lookup(inner, env, quoted), True)
        return end + 1
    match = _NAME.match(raw, i + 1)
    if match is None:
        if nxt == "" or nxt in ' "/:':
            add("$", True)  # a lone dollar is literal
            return i + 1
        raise _Unknown(f"${nxt} is only known at run time")
    add(_lookup(match.group(0), env, quoted), True)
    return match.end()
