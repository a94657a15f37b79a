"""The environment shell commands run with: non-interactive defaults, secrets scrubbed."""

from __future__ import annotations

from collections.abc import Collection, Mapping

from core.secret_names import ALWAYS_SECRET_NAMES, SECRET_NAME_MARKERS, is_secret_name

__all__ = [
    "ALWAYS_SCRUBBED",
    "NON_INTERACTIVE_DEFAULTS",
    "SECRET_MARKERS",
    "SHELL_BEHAVIOUR",
    "SHELL_BEHAVIOUR_PREFIXES",
    "build_env",
    "is_secret",
    "is_shell_behaviour",
]

#: Never passed to commands, even when listed in ``allow_env`` (PRODUCT.md "Secrets").
ALWAYS_SCRUBBED = ALWAYS_SECRET_NAMES

#: A variable whose upper-cased name contains one of these is dropped unless allowed.
SECRET_MARKERS = SECRET_NAME_MARKERS

#: Set for every command so tools never wait for a terminal or a pager.
NON_INTERACTIVE_DEFAULTS: Mapping[str, str] = {
    "CI": "1",
    "GIT_TERMINAL_PROMPT": "0",
    "PAGER": "cat",
    "GIT_PAGER": "cat",
    "TERM": "dumb",
}


# fmt: off
#: Variables that change what a shell line does, not what programs see: where ``cd`` goes
#: (``CDPATH``, ``OLDPWD`` for ``cd -``, ``PWD`` for ``cd ..`` through a link), what a glob
#: or a word split yields (``GLOBIGNORE``, ``GLOBSORT``, ``IFS``, ``FIGNORE``), code run
#: before the line (``BASH_ENV``, ``ENV``, ``PROMPT_COMMAND``, ``PS0``/``PS4`` under
#: ``xtrace``), shell options (``SHELLOPTS``, ``BASHOPTS``, ``POSIXLY_CORRECT``,
#: ``BASH_COMPAT``), builtins loaded from files (``BASH_LOADABLES_PATH``) and others of
#: bash(1) "Shell Variables". They come from the environment Tandem was started with, so
#: the policy, which reads the line as written, would judge a different command than the
#: one that runs (``CDPATH=.:$HOME`` makes ``cd .ssh`` land in ``~/.ssh``: red-team
#: report, hole 5). Never passed to commands, not even through ``extra``.
SHELL_BEHAVIOUR: frozenset[str] = frozenset(
    {
        "CDPATH", "OLDPWD", "PWD", "GLOBIGNORE", "GLOBSORT", "FIGNORE", "EXECIGNORE", "IFS",
        "BASH_ENV", "ENV", "PROMPT_COMMAND", "PS0", "PS1", "PS2", "PS3", "PS4",
        "SHELLOPTS", "BASHOPTS", "POSIXLY_CORRECT", "BASH_COMPAT", "BASH_XTRACEFD",
        "BASH_LOADABLES_PATH", "BASH_ARGV0", "INPUTRC", "HISTFILE", "HISTCONTROL",
        "HISTIGNORE", "HISTTIMEFORMAT", "HOSTFILE", "TIMEFORMAT", "TMOUT", "FUNCNEST",
        "MAIL", "MAILPATH", "MAILCHECK", "ZDOTDIR",
    }
)
# fmt: on
#: Name prefixes of the same kind: exported bash functions (``BASH_FUNC_cat%%=() { ...; }``
#: replaces ``cat`` in every ``bash -c``; the policy would judge the real ``cat``).
SHELL_BEHAVIOUR_PREFIXES = ("BASH_FUNC_",)


def is_shell_behaviour(name: str) -> bool:
    """Whether ``name`` changes how the shell reads a line (:data:`SHELL_BEHAVIOUR`,
    :data:`SHELL_BEHAVIOUR_PREFIXES`); compared exactly (variable names are case-sensitive)."""
    return name in SHELL_BEHAVIOUR or name.startswith(SHELL_BEHAVIOUR_PREFIXES)


def is_secret(name: str) -> bool:
    """Whether ``name`` looks like a secret: :func:`core.secret_names.is_secret_name` (the
    same test decides what redaction registers)."""
    return is_secret_name(name)


def build_env(
    base: Mapping[str, str],
    *,
    allow_env: Collection[str] = (),
    extra: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """The environment for one command.

    Args:
        base: the inherited environment (usually ``os.environ``).
        allow_env: names kept even though they look like secrets (``OPENAI_API_KEY`` and
            ``CODEX_API_KEY`` are dropped regardless).
        extra: values set last (they override the non-interactive defaults, e.g. ``TERM``).

    Returns:
        A new dict: ``base`` without secrets and without the shell-behaviour variables
        (:func:`is_shell_behaviour`: ``CDPATH``, ``OLDPWD``, ``BASH_ENV``, ``IFS``…), plus
        :data:`NON_INTERACTIVE_DEFAULTS`, plus ``extra`` (its shell-behaviour names dropped
        too). The policy judges a command with this same mapping
        (``Workspace.decide_commands``), so what it expands is what the command gets.
    """
    allowed = set(allow_env) - ALWAYS_SCRUBBED
    env = {
        k: v
        for k, v in base.items()
        if (k in allowed or not is_secret(k)) and not is_shell_behaviour(k)
    }
    env.update(NON_INTERACTIVE_DEFAULTS)
    if extra:
        env.update(
            {
                k: v
                for k, v in extra.items()
                if k not in ALWAYS_SCRUBBED and not is_shell_behaviour(k)
            }
        )
    return env
