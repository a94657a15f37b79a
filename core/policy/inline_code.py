"""Interpreters given code on the command line: the destructive guard's verdict on it.

Code passed with ``python -c``, ``perl -e``, ``node -e``, ``ruby -e``, ``php -r``, an
``awk`` program, or on standard input (``python - <<EOF``, ``python <<< '…'``) is model
output the guard cannot run in its head. It scans the code for the calls that delete,
move or overwrite files or run other programs; a hit is destructive, anything else is
*possibly* destructive (the code can reach those calls in ways no scan sees).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from .harm import Harm
from .wrappers import program_name

__all__ = ["INTERPRETERS", "inline_code_harm"]

_PYTHON = re.compile(r"^(python|pypy)(\d+(\.\d+)?)?$")
# program -> (language shown, options whose next word is code)
INTERPRETERS: dict[str, tuple[str, frozenset[str]]] = {
    "perl": ("Perl", frozenset({"-e", "-E"})),
    "node": ("JavaScript", frozenset({"-e", "--eval", "-p", "--print"})),
    "nodejs": ("JavaScript", frozenset({"-e", "--eval", "-p", "--print"})),
    "deno": ("JavaScript", frozenset({"eval"})),
    "bun": ("JavaScript", frozenset({"-e", "--eval", "-p", "--print"})),
    "ruby": ("Ruby", frozenset({"-e"})),
    "php": ("PHP", frozenset({"-r"})),
    "lua": ("Lua", frozenset({"-e"})),
    "Rscript": ("R", frozenset({"-e"})),
    "osascript": ("AppleScript", frozenset({"-e"})),
}
"""Interpreters other than Python and the options that hand them code."""

_DANGER = re.compile(
    r"rmtree|remove|unlink|rmdir|rename|replace|truncate|move|shutil|os\.system|subprocess"
    r"|popen|spawn|exec|eval|child_process|writeFile|write_text|write_bytes|rmSync|rimraf"
    r"|rm_r|rm_rf|FileUtils|File\.(write|delete|open)|\bopen\s*\([^)]*[,=]\s*['\"][wax+]"
    r"|\bsystem\s*\(|`|qx|"
    r"\bfs\.|Deno\.(remove|write)|io\.open|os\.(remove|rename|execute)|file_put_contents"
    r"|\bdo\s+shell\s+script|>\s*\"|\|\s*\"",
)

_GENERIC = frozenset({"shutil", "fs.", "FileUtils", "move", "replace"})


_CLUSTERING = frozenset({"perl", "ruby"})
"""Interpreters whose short options cluster, so ``-pe CODE``/``-lne CODE`` give code."""


def _clustered_code(arg: str, code_opts: frozenset[str]) -> bool:
    """Whether ``arg`` is a short-option cluster ending in a code option (``-pe``)."""
    return len(arg) > 2 and arg[0] == "-" and arg[1] != "-" and "-" + arg[-1] in code_opts


def _code_words(name: str, args: Sequence[str]) -> tuple[str | None, list[str], bool]:
    """(language, code snippets, reads code from stdin) for ``name ARGS``; language None
    when ``name`` is no interpreter this module knows."""
    if any(a in ("-V", "--version", "-h", "--help") for a in args[:1]):
        return None, [], False
    if _PYTHON.match(name):
        for i, arg in enumerate(args):
            if arg == "-c":
                return "Python", list(args[i + 1 : i + 2]), False
            if arg.startswith("-c") and len(arg) > 2:
                return "Python", [arg[2:]], False
            if arg in ("-m",) or not arg.startswith("-"):
                return "Python", [], arg == "-"
            if arg == "-":
                return "Python", [], True
        return "Python", [], True
    if name in ("awk", "gawk", "mawk", "nawk"):
        ops = [a for a in args if not a.startswith("-")]
        if any(a == "-f" or a.startswith("-f") for a in args):
            return None, [], False
        return "awk", ops[:1], False
    if name in INTERPRETERS:
        language, code_opts = INTERPRETERS[name]
        snippets = [
            args[i + 1]
            for i, a in enumerate(args[:-1])
            if a in code_opts or (name in _CLUSTERING and _clustered_code(a, code_opts))
        ]
        if snippets:
            return language, snippets, False
        ops = [a for a in args if not a.startswith("-")]
        return language, [], not ops or ops[0] == "-"
    return None, [], False


def inline_code_harm(argv: Sequence[str], stdin: Sequence[str] = ()) -> Harm | None:
    """The guard's verdict on an interpreter run with code in the command line.

    ``python script.py``, ``node app.js`` (code from a file in the workspace) are not
    judged here: they are programs like ``make``. ``python`` with no script reads its
    code from standard input; with a here-document or ``<<<`` string the text is scanned,
    from a pipe (``curl … | python``) it is unknown.

    Args:
        argv: the simple command (program first).
        stdin: here-document bodies and ``<<<`` strings fed to it.

    Returns:
        A certain :class:`~core.policy.harm.Harm` when the code calls something that
        deletes, moves or overwrites files or runs programs (``shutil.rmtree``,
        ``os.remove``, ``fs.rmSync``, ``system(…)``…), a possible one for any other inline
        code, ``None`` when the command is not an interpreter given inline code.
    """
    if not argv:
        return None
    name = program_name(argv[0])
    language, snippets, from_stdin = _code_words(name, argv[1:])
    if language is None:
        return None
    if from_stdin:
        snippets = [*snippets, *stdin]
        if not stdin:
            return Harm(
                f"runs {language} code from its input, which the guard cannot see",
                certain=False,
                removes_unknown=True,
            )
    if not snippets:
        return None
    if name in ("awk", "gawk", "mawk", "nawk") and not re.search(
        r"system\s*\(|>\s*\"|>\s*[A-Za-z_$]|\|\s*\"|getline", snippets[0]
    ):
        return None  # an awk program that neither writes files nor runs commands
    for code in snippets:
        hits = [m.group(0) for m in _DANGER.finditer(code)]
        if hits:
            shown = next((h for h in hits if h not in _GENERIC), hits[0])
            return Harm(
                f"runs inline {language} code that can delete or overwrite files (`{shown}`)",
                removes_unknown=True,
            )
    return Harm(
        f"runs inline {language} code the guard cannot analyse",
        certain=False,
        removes_unknown=True,
    )
