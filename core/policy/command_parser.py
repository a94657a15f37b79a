"""Split a shell command line into the simple commands it runs, using bashlex."""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from .wrappers import (
    SHELLS,
    WRAPPERS,
    Word,
    program_name,
    shell_input,
    shell_script,
    strip_wrapper,
)

__all__ = ["ParsedCommand", "Segment", "parse_command"]

_MAX_DEPTH = 8
#: ``[`` and ``[[`` name the test command and keyword, not a glob.
_TEST_WORDS = frozenset({"[", "[["})
_NOT_WRITES = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty"})
_WRITE_REDIRECTS = frozenset({">", ">>", ">|", "&>", "&>>", "<>", ">&"})
_TRUNCATING_REDIRECTS = frozenset({">", ">|", "&>", ">&"})
# fmt: off
_RISKY_ENV_EXACT = frozenset(
    {
        "PATH", "HOME", "ENV", "BASH_ENV", "IFS", "SHELLOPTS", "BASHOPTS", "PS4",
        "PROMPT_COMMAND", "EDITOR", "VISUAL", "BROWSER", "LESSOPEN", "LESSCLOSE",
        "PYTHONHOME", "PYTHONSTARTUP", "PERL5OPT", "PERL5LIB", "RUBYOPT", "RUBYLIB",
        "NODE_OPTIONS", "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "XDG_CONFIG_HOME",
        "RIPGREP_CONFIG_PATH", "SUDO_ASKPASS", "SSH_ASKPASS", "TAR_OPTIONS", "ZDOTDIR",
    }
)
# fmt: on
_RISKY_ENV_PREFIXES = ("LD_", "DYLD_", "GIT_", "npm_config_", "NPM_CONFIG_")
# fmt: off
_GIT_FLAGS = frozenset(
    {
        "--no-pager", "-P", "-p", "--paginate", "--bare", "--no-replace-objects",
        "--literal-pathspecs", "--glob-pathspecs", "--noglob-pathspecs",
        "--icase-pathspecs", "--no-optional-locks", "--no-advice", "--no-lazy-fetch",
    }
)
# fmt: on
_GIT_WITH_ARG = frozenset({"-C", "--namespace", "--git-dir", "--work-tree", "--super-prefix"})
_GIT_UNVETTED = ("-c", "--config-env", "--exec-path", "--git-dir", "--work-tree")


def risky_env(name: str) -> bool:
    """Whether setting ``name`` can change which program runs or what it executes."""
    return (
        name in _RISKY_ENV_EXACT or name.startswith(_RISKY_ENV_PREFIXES) or name.endswith("PAGER")
    )


@dataclass(frozen=True, slots=True)
class Segment:
    """One simple command the line would run, ready to be judged.

    Attributes:
        text: the command's source text (for prompts), e.g. ``"rm -rf src"``.
        argv: the command to judge: leading ``NAME=value`` assignments and wrappers removed,
            and for ``git`` the global options (``-C dir``, ``--no-pager``) dropped, so
            ``sudo git -C x diff`` gives ``("git", "diff")``. Empty for a bare assignment.
        full_argv: the words as written after leading assignments (wrappers kept), used to
            match rules that name a wrapper (``sudo apt-get *``).
        env: names assigned for the command (``FOO=1 cmd``, ``env FOO=1 cmd``).
        wrappers: the wrapper programs stripped, outermost first (``("sudo", "timeout")``).
        writes: files written through output redirections, ``tee`` or ``time -o``.
        context: where it sits: ``""`` at top level, ``"command substitution"``,
            ``"process substitution"``, ``"bash -c"``, ``"eval"``, ``"find -exec"``,
            ``"xargs"`` or ``"unparsed"`` (from the rough split of an unparsable line).
        opaque: why what runs cannot be known before it runs (a computed program name,
            ``eval "$x"``), else ``None``.
        privileged: run under sudo/doas.
        hidden_args: more arguments arrive at run time (``xargs``).
        unvetted: reasons allow rules cannot vouch for it (``"sets PATH"``,
            ``"git -c can run arbitrary commands"``).
        words: the source spelling of each word of ``argv`` (quotes, ``~`` and ``$HOME``
            kept), for static expansion by :mod:`core.policy.reach`; same length as ``argv``.
        reads: source spelling of files read through input redirections (``< FILE``,
            ``0<FILE``; here-documents and ``<<<`` strings are text, not files).
        chdir: source spelling of directories the command runs in (``env -C DIR``).
        git_cwd: source spelling of ``git -C DIR`` options, in order (each relative to
            the one before).
        certain: the command runs in the line's own shell whenever the line gets that far
            (top level, first or after ``;``/a newline, not backgrounded, not in a pipeline,
            subshell or substitution), so a ``cd`` here moves every later command.
        truncates: the subset of ``writes`` opened for overwriting rather than appending
            (``>``, ``>|``, ``&>``, ``>&FILE``, ``tee`` without ``-a``), for the destructive
            guard.
        stdin: here-document bodies and ``<<<`` strings fed to the command (text, not
            files), so inline code such as ``python - <<EOF`` can be judged.
        git_config: for ``git``, the global options that change its configuration or the
            programs it runs, in order: ``-c`` values (``"core.pager=less"``),
            ``"--config-env=KEY=VAR"`` and ``"--exec-path=DIR"`` as written.
    """

    text: str
    argv: tuple[str, ...]
    full_argv: tuple[str, ...] = ()
    env: tuple[str, ...] = ()
    wrappers: tuple[str, ...] = ()
    writes: tuple[str, ...] = ()
    context: str = ""
    opaque: str | None = None
    privileged: bool = False
    hidden_args: bool = False
    unvetted: tuple[str, ...] = ()
    words: tuple[str, ...] = ()
    reads: tuple[str, ...] = ()
    chdir: tuple[str, ...] = ()
    git_cwd: tuple[str, ...] = ()
    certain: bool = False
    truncates: tuple[str, ...] = ()
    stdin: tuple[str, ...] = ()
    git_config: tuple[str, ...] = ()

    @property
    def program(self) -> str:
        """The program's basename (``"git"``), or ``""`` for a bare assignment."""
        return program_name(self.argv[0]) if self.argv else ""


@dataclass(frozen=True, slots=True)
class ParsedCommand:
    """A command line split into simple commands.

    Attributes:
        source: the command line (an argv list is shown joined with shell quoting).
        segments: every simple command, in source order; commands inside ``$(…)``,
            backticks and ``<(…)`` come just before the command holding them (they run
            first), those of ``bash -c``/``eval``/``find -exec`` replace or follow it.
        error: why the line could not be parsed, else ``None``. When set, ``segments``
            comes from a rough word split (context ``"unparsed"``): good enough to find
            deny-rule and destructive-command hits, never to allow anything.
    """

    source: str
    segments: tuple[Segment, ...]
    error: str | None = None

    @property
    def ok(self) -> bool:
        """Whether the line parsed completely."""
        return self.error is None


class _Unsupported(Exception):
    """A construct the parser will not vouch for; the whole line then asks."""


@dataclass(slots=True)
class _Inherit:
    wrappers: tuple[str, ...] = ()
    env: tuple[str, ...] = ()
    writes: tuple[str, ...] = ()
    privileged: bool = False
    hidden_args: bool = False
    reads: tuple[str, ...] = ()
    truncates: tuple[str, ...] = ()
    stdin: tuple[str, ...] = ()


def _refuse_bashlex_traps(src: str) -> None:
    """Refuse input that sends bashlex 0.18 into an endless, memory-eating loop.

    Found by fuzzing: a ``${`` whose braces never close (even inside quotes, e.g. ``'${'{``)
    makes ``bashlex.parse`` loop forever while its memory grows. Such lines cannot be judged,
    so they ask, like any other unparseable line.

    Raises:
        _Unsupported: the line has an unclosed ``${``.
    """
    start = src.find("${")
    while start != -1:
        depth, index = 0, start + 1
        while index < len(src):
            if src[index] == "{":
                depth += 1
            elif src[index] == "}":
                depth -= 1
                if depth == 0:
                    break
            index += 1
        if depth != 0:
            raise _Unsupported("unclosed ${ (cannot be parsed safely)")
        start = src.find("${", start + 2)


class _Walker:
    def __init__(self) -> None:
        self.out: list[Segment] = []
        self.certain: set[int] = set()
        # Side results of the latest ``redirects`` call (truncated files, stdin texts).
        self.last_truncates: list[str] = []
        self.last_stdin: list[str] = []

    # -- bashlex trees -------------------------------------------------------------------
    def script(self, src: str, ctx: str, inherit: _Inherit, depth: int) -> None:
        if depth > _MAX_DEPTH:
            raise _Unsupported("commands nested too deeply")
        if all(not line.strip() or line.lstrip().startswith("#") for line in src.splitlines()):
            return  # blank or comments only (bashlex fails on those)
        _refuse_bashlex_traps(src)
        import bashlex  # lazily: its parser tables cost ~0.1-0.4 s at import (issue 15)

        try:
            trees = bashlex.parse(src)
        except NotImplementedError as exc:
            if "time" not in str(exc):
                raise _Unsupported(f"unsupported shell syntax: {exc}") from exc
            # bashlex lacks the `time` keyword; it is a harmless wrapper, so blank it out
            # (same length, so positions and segment texts stay right) and parse again.
            blanked = re.sub(r"(^|[;&|(\n]\s*)time(\s+-p)?(?=\s)", _blank, src)
            try:
                trees = bashlex.parse(blanked)
            except Exception as again:
                raise _Unsupported(str(again)) from again
        except Exception as exc:
            raise _Unsupported(str(exc) or type(exc).__name__) from exc
        if depth == 0 and not ctx:
            self.certain.update(_certain_commands(trees))
        for tree in trees:
            self.node(tree, src, ctx, inherit, depth)

    def node(self, n: Any, src: str, ctx: str, inherit: _Inherit, depth: int) -> None:
        kind = n.kind
        if kind == "command":
            self.command(n, src, ctx, inherit, depth)
        elif kind == "compound":
            writes, reads = self.redirects(getattr(n, "redirects", None) or [], src, ctx, depth)
            inner = _Inherit(
                inherit.wrappers,
                inherit.env,
                inherit.writes + tuple(writes),
                inherit.privileged,
                inherit.hidden_args,
                inherit.reads + tuple(reads),
                inherit.truncates + tuple(self.last_truncates),
                inherit.stdin + tuple(self.last_stdin),
            )
            for part in n.list:
                self.node(part, src, ctx, inner, depth)
        elif kind in ("list", "pipeline", "if", "for", "while", "until", "function"):
            for part in n.parts:
                self.node(part, src, ctx, inherit, depth)
        elif kind in ("word", "assignment"):
            self.word(n, src, depth)
        elif kind in ("operator", "pipe", "reservedword"):
            return
        else:
            raise _Unsupported(f"unsupported shell construct ({kind})")

    def word(self, n: Any, src: str, depth: int) -> bool:
        """Judge substitutions inside a word; return whether its value is computed."""
        dynamic = False
        for part in getattr(n, "parts", None) or []:
            kind = part.kind
            if kind == "commandsubstitution":
                dynamic = True
                self.node(part.command, src, "command substitution", _Inherit(), depth)
            elif kind == "processsubstitution":
                dynamic = True
                self.node(part.command, src, "process substitution", _Inherit(), depth)
            elif kind == "parameter":
                dynamic = True
                value = str(getattr(part, "value", ""))
                if "$(" in value or "`" in value or "<(" in value or ">(" in value:
                    raise _Unsupported("a command substitution inside ${…}")
            elif kind != "tilde":
                raise _Unsupported(f"unsupported word part ({kind})")
        return dynamic

    def redirects(
        self, nodes: list[Any], src: str, ctx: str, depth: int
    ) -> tuple[list[str], list[str]]:
        """Files written and (source spelling of) files read by these redirections."""
        writes: list[str] = []
        reads: list[str] = []
        self.last_truncates, self.last_stdin = [], []
        for r in nodes:
            target = getattr(r, "output", None)
            if getattr(r, "heredoc", None) is not None:
                body = str(getattr(r.heredoc, "value", ""))
                if "$(" in body or "`" in body:
                    raise _Unsupported("a here-document that runs commands")
                self.last_stdin.append(body)
            if target is None or isinstance(target, int):
                continue
            self.word(target, src, depth)
            text = target.word
            if r.type == "<<<":
                self.last_stdin.append(text)
            if r.type in ("<", "<>"):
                reads.append(src[target.pos[0] : target.pos[1]])
            if r.type not in _WRITE_REDIRECTS:
                continue
            if r.type == ">&" and (text.isdigit() or text == "-"):
                continue
            if text in _NOT_WRITES or text.startswith("/dev/fd/"):
                continue
            writes.append(text)
            if r.type in _TRUNCATING_REDIRECTS:
                self.last_truncates.append(text)
        return writes, reads

    def command(self, n: Any, src: str, ctx: str, inherit: _Inherit, depth: int) -> None:
        words: list[Word] = []
        assigns: list[Word] = []
        redirect_nodes: list[Any] = []
        for part in n.parts:
            raw = src[part.pos[0] : part.pos[1]]
            if part.kind == "assignment" and not words:
                assigns.append(Word(part.word, self.word(part, src, depth), raw))
            elif part.kind in ("word", "assignment"):
                words.append(Word(part.word, self.word(part, src, depth), raw))
            elif part.kind == "redirect":
                redirect_nodes.append(part)
            else:
                raise _Unsupported(f"unsupported command part ({part.kind})")
        own_writes, own_reads = self.redirects(redirect_nodes, src, ctx, depth)
        writes = inherit.writes + tuple(own_writes)
        text = src[n.pos[0] : n.pos[1]]
        env = inherit.env + tuple(a.text.split("=", 1)[0] for a in assigns)
        reads = inherit.reads + tuple(own_reads)
        self.build(
            words,
            text,
            ctx,
            _Inherit(
                inherit.wrappers,
                env,
                writes,
                inherit.privileged,
                inherit.hidden_args,
                reads,
                inherit.truncates + tuple(self.last_truncates),
                inherit.stdin + tuple(self.last_stdin),
            ),
            depth,
            certain=id(n) in self.certain,
        )

    # -- simple commands -----------------------------------------------------------------
    def build(
        self,
        words: list[Word],
        text: str,
        ctx: str,
        inherit: _Inherit,
        depth: int,
        *,
        certain: bool = False,
    ) -> None:
        full = tuple(w.text for w in words)
        wrappers = list(inherit.wrappers)
        env = list(inherit.env)
        writes = list(inherit.writes)
        privileged, hidden = inherit.privileged, inherit.hidden_args
        reads = list(inherit.reads)
        chdir: list[str] = []
        opaque: str | None = None
        rest = words
        while rest and not rest[0].dynamic:
            name = program_name(rest[0].text)
            if name in SHELLS or name in ("source", "."):
                has_c, script = False, None
                if name in SHELLS:
                    has_c, script = shell_script(rest[1:])
                feed = None if has_c else shell_input(rest[1:], source=name not in SHELLS)
                judged = None if feed is None else self._stdin_script(name, feed, inherit, depth)
                if judged == "judged":
                    return
                if judged == "opaque":
                    opaque = f"`{name}` runs a script from its input, which the guard cannot see"
                    rest = []
                    break
                if not has_c:
                    break
                if script is None or script.dynamic:
                    opaque = f"`{name} -c` runs a script only known at run time"
                    rest = []
                    break
                sub = _Inherit(
                    tuple(wrappers),
                    tuple(env),
                    tuple(writes),
                    privileged,
                    hidden,
                    tuple(reads),
                    inherit.truncates,
                )
                self.script(script.text, f"{name} -c", sub, depth + 1)
                return
            if name == "eval":
                if any(w.dynamic for w in rest[1:]):
                    opaque = "`eval` runs code only known at run time"
                    rest = []
                    break
                sub = _Inherit(
                    tuple(wrappers),
                    tuple(env),
                    tuple(writes),
                    privileged,
                    hidden,
                    tuple(reads),
                    inherit.truncates,
                )
                self.script(" ".join(w.text for w in rest[1:]), "eval", sub, depth + 1)
                return
            if name not in WRAPPERS:
                break
            strip = strip_wrapper(name, rest[1:])
            if strip is None:
                break
            wrappers.append(name)
            env.extend(strip.env)
            writes.extend(strip.writes)
            reads.extend(w.source for w in strip.reads)
            chdir.extend(w.source for w in strip.chdir)
            privileged = privileged or strip.privileged
            hidden = hidden or strip.hidden_args
            if strip.hidden_args and not ctx:
                ctx = "xargs"
            opaque = opaque or strip.opaque
            rest = strip.inner
        unvetted = [f"sets {name}" for name in dict.fromkeys(env) if risky_env(name)]
        if rest and opaque is None:
            head = rest[0]
            glob = head.text not in _TEST_WORDS and re.search(r"[*?\[{]", head.text)
            if head.dynamic or glob:
                opaque = f"the program name `{head.text}` is only known at run time"
        git_cwd: list[str] = []
        git_config: list[str] = []
        if rest and program_name(rest[0].text) == "git":
            rest, git_unvetted, git_cwd, git_config = _canonical_git(rest)
            unvetted.extend(git_unvetted)
        argv = tuple(w.text for w in rest)
        truncates = list(inherit.truncates)
        if argv and program_name(argv[0]) == "tee":
            targets = [a for a in argv[1:] if not a.startswith("-") and a not in _NOT_WRITES]
            writes.extend(targets)
            if not any(a in ("-a", "--append") or _short_cluster_has(a, "a") for a in argv[1:]):
                truncates.extend(targets)
        if not argv and not opaque and not unvetted and not env and not writes and not reads:
            return
        self.out.append(
            Segment(
                text=text.strip(),
                argv=argv,
                full_argv=full,
                env=tuple(env),
                wrappers=tuple(wrappers),
                writes=tuple(writes),
                context=ctx,
                opaque=opaque,
                privileged=privileged,
                hidden_args=hidden,
                unvetted=tuple(unvetted),
                words=tuple(w.source for w in rest),
                reads=tuple(reads),
                chdir=tuple(chdir),
                git_cwd=tuple(git_cwd),
                certain=certain and not wrappers,
                truncates=tuple(truncates),
                stdin=inherit.stdin,
                git_config=tuple(git_config),
            )
        )
        if argv and program_name(argv[0]) == "find":
            self._find_exec(rest, inherit, privileged, depth)

    def _stdin_script(self, name: str, feed: str, inherit: _Inherit, depth: int) -> str:
        """Judge the script a shell reads from its input (bash(1) "INVOCATION").

        Returns:
            ``"judged"`` when every here-document or ``<<<`` body was judged as a script
            of its own; ``"file"`` for ``bash < script.sh`` (a script file, judged like
            ``bash script.sh``); ``"opaque"`` for a pipe, ``<(…)`` or ``/dev/fd/N``.
        """
        if feed == "stdin" and inherit.stdin and not inherit.reads:
            sub = _Inherit(
                wrappers=inherit.wrappers,
                env=inherit.env,
                writes=inherit.writes,
                privileged=inherit.privileged,
                hidden_args=inherit.hidden_args,
                truncates=inherit.truncates,
            )
            for body in inherit.stdin:
                self.script(body, f"{name} <<", sub, depth + 1)
            return "judged"
        if (
            feed == "stdin"
            and inherit.reads
            and all(not r.startswith(("<(", "$", "`", "/dev/", "/proc/")) for r in inherit.reads)
        ):
            return "file"
        return "opaque"

    def _find_exec(
        self, words: list[Word], inherit: _Inherit, privileged: bool, depth: int
    ) -> None:
        i = 1
        while i < len(words):
            if words[i].text in ("-exec", "-execdir", "-ok", "-okdir"):
                j = i + 1
                while j < len(words) and words[j].text not in (";", "+"):
                    j += 1
                inner = words[i + 1 : j]
                if inner:
                    sub = _Inherit(inherit.wrappers, (), (), privileged, True)  # gets `{}`
                    self.build(inner, " ".join(w.text for w in inner), "find -exec", sub, depth + 1)
                i = j
            i += 1


def _certain_commands(trees: list[Any]) -> set[int]:
    """Ids of the top-level command nodes that always run in the line's own shell."""
    found: set[int] = set()
    for tree in trees:
        if tree.kind == "command":
            found.add(id(tree))
        elif tree.kind == "list":
            parts = tree.parts
            for index, part in enumerate(parts):
                if part.kind != "command":
                    continue
                before = parts[index - 1] if index else None
                after = parts[index + 1] if index + 1 < len(parts) else None
                prev_op = getattr(before, "op", None)
                next_op = getattr(after, "op", None)
                if prev_op in (None, ";", "\n") and next_op != "&":
                    found.add(id(part))
    return found


def _short_cluster_has(arg: str, letter: str) -> bool:
    """Whether ``arg`` is a short-option cluster (``-ai``) holding ``letter``."""
    return arg.startswith("-") and not arg.startswith("--") and letter in arg[1:]


def _blank(match: re.Match[str]) -> str:
    lead = match.group(1)
    return lead + " " * (len(match.group(0)) - len(lead))


def _canonical_git(words: list[Word]) -> tuple[list[Word], list[str], list[str], list[str]]:
    """Drop git's global options before the subcommand.

    Returns:
        The words left (``git`` and the subcommand on), reasons for the options that can
        change what git runs, the source spelling of each ``-C DIR``, and the options that
        change git's configuration (see ``Segment.git_config``).
    """
    unvetted: list[str] = []
    cwd: list[str] = []
    config: list[str] = []
    i = 1
    while i < len(words):
        arg = words[i].text
        name = arg.split("=", 1)[0]
        if name in _GIT_UNVETTED:
            unvetted.append(f"`git {name}` can change what git runs")
        if arg == "-c":
            config.append(words[i + 1].text if i + 1 < len(words) else "")
        elif name in ("--config-env", "--exec-path") and (name != arg or arg == "--exec-path"):
            config.append(arg)
        elif arg == "--config-env":
            config.append("--config-env=" + (words[i + 1].text if i + 1 < len(words) else ""))
        if arg in _GIT_FLAGS:
            i += 1
        elif arg == "-C":
            cwd.append(words[i + 1].source if i + 1 < len(words) else "`?`")
            i += 2
        elif arg in _GIT_WITH_ARG or arg in ("-c", "--config-env", "--exec-path"):
            i += 2 if arg != "--exec-path" else 1
        elif arg.startswith("--") and "=" in arg and name in (*_GIT_WITH_ARG, *_GIT_UNVETTED):
            i += 1
        elif arg.startswith("-C") and len(arg) > 2:
            unvetted.append(f"`{arg}` is not a git option git documents")
            i += 1
        else:
            break
    return [words[0], *words[i:]], unvetted, cwd, config


def _rough_words(text: str) -> list[list[Word]]:
    """Best-effort split of an unparsable line into commands (for deny rules and guards)."""
    flat = text.replace("\n", " ; ").replace("`", " ; ").replace("$(", " ; ")
    try:
        lexer = shlex.shlex(flat, posix=True, punctuation_chars=";&|()<>")
        lexer.whitespace_split = True
        tokens = list(lexer)
    except ValueError:
        tokens = re.findall(r"[;&|()<>]+|[^\s;&|()<>]+", flat)
    groups: list[list[Word]] = [[]]
    skip_next = False
    for token in tokens:
        if skip_next:
            skip_next = False
            continue
        if set(token) <= set("<>&") and (">" in token or "<" in token):
            skip_next = True
            continue
        if set(token) <= set(";&|()"):
            groups.append([])
            continue
        groups[-1].append(Word(token, "$" in token))
    return [g for g in groups if g]


def parse_command(command: str | Sequence[str]) -> ParsedCommand:
    """Split a command into the simple commands it would run.

    Handles pipes, ``&&``, ``||``, ``;``, ``&``, newlines, subshells ``( … )``, groups
    ``{ …; }``, ``if``/``for``/``while``, function bodies, command substitution ``$(…)`` and
    backticks (also inside double quotes and assignments), process substitution ``<(…)``,
    output redirections, leading ``NAME=value`` assignments, wrappers (``sudo``, ``doas``,
    ``env``, ``nohup``, ``timeout N``, ``time``, ``nice``, ``ionice``, ``stdbuf``,
    ``command``, ``exec``, ``xargs``), ``sh/bash -c SCRIPT``, ``eval`` with literal
    arguments, and ``find … -exec CMD``.

    Args:
        command: a command line, or an argv list run without a shell (``local_shell``'s
            ``command``). An argv of the form ``["bash", "-lc", SCRIPT]`` parses ``SCRIPT``.

    Returns:
        The segments. Never raises for bad input: a line bashlex cannot parse, ``case``,
        ``[[ ]]``, arithmetic ``$(( ))``, quoted here-document delimiters, a here-document
        or ``${…}`` holding a command substitution, or unbalanced quotes give a
        :class:`ParsedCommand` with ``error`` set.
    """
    walker = _Walker()
    if isinstance(command, str):
        source = command
        try:
            walker.script(command, "", _Inherit(), 0)
        except (_Unsupported, RecursionError) as exc:
            return _rough(source, str(exc) if isinstance(exc, _Unsupported) else "too deep")
        except Exception as exc:  # a bashlex tree shape we do not know: judge it roughly
            return _rough(source, f"cannot be parsed ({type(exc).__name__})")
        return ParsedCommand(source, tuple(walker.out))
    argv = [str(a) for a in command]
    source = shlex.join(argv)
    try:
        walker.build([Word(a, False, shlex.quote(a)) for a in argv], source, "", _Inherit(), 0)
    except (_Unsupported, RecursionError) as exc:
        return _rough(source, str(exc) if isinstance(exc, _Unsupported) else "too deep")
    except Exception as exc:
        return _rough(source, f"cannot be parsed ({type(exc).__name__})")
    return ParsedCommand(source, tuple(walker.out))


def _rough(source: str, error: str) -> ParsedCommand:
    walker = _Walker()
    for words in _rough_words(source):
        try:
            walker.build(words, " ".join(w.text for w in words), "unparsed", _Inherit(), _MAX_DEPTH)
        except (_Unsupported, RecursionError):
            walker.out.append(
                Segment(
                    text=" ".join(w.text for w in words),
                    argv=tuple(w.text for w in words),
                    context="unparsed",
                )
            )
    segments = tuple(
        s if s.context == "unparsed" else _with_context(s, "unparsed") for s in walker.out
    )
    return ParsedCommand(source, segments, error or "cannot parse")


def _with_context(segment: Segment, ctx: str) -> Segment:
    return replace(segment, context=ctx)
