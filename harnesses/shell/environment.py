"""The environment shell commands run with: non-interactive defaults, secrets scrubbed."""

from __future__ import annotations

import os
import shlex
from collections.abc import Collection, Iterable, Mapping
from pathlib import Path

from core.secret_names import ALWAYS_SECRET_NAMES, SECRET_NAME_MARKERS, is_secret_name

__all__ = [
    "ALWAYS_SCRUBBED",
    "BATCH_SSH_COMMAND",
    "NO_INPUT_HELPER",
    "NON_INTERACTIVE_DEFAULTS",
    "SECRET_MARKERS",
    "SHELL_BEHAVIOUR",
    "SHELL_BEHAVIOUR_PREFIXES",
    "build_env",
    "git_config_sets_ssh_command",
    "git_ssh_command",
    "is_secret",
    "is_shell_behaviour",
]

#: Never passed to commands, even when listed in ``allow_env`` (PRODUCT.md "Secrets").
ALWAYS_SCRUBBED = ALWAYS_SECRET_NAMES

#: A variable whose upper-cased name contains one of these is dropped unless allowed.
SECRET_MARKERS = SECRET_NAME_MARKERS

#: The stand-in editor and askpass program (a POSIX ``sh`` script shipped next to this module):
#: it prints why nobody can edit or answer (to stderr, nothing on stdout) and exits 1.
NO_INPUT_HELPER = Path(__file__).with_name("tandem-no-input")


def _helper() -> str:
    """:data:`NO_INPUT_HELPER` as a program name, or ``false`` when it is not executable (a
    copy that lost its mode bits still fails fast, only without the message)."""
    return str(NO_INPUT_HELPER) if os.access(NO_INPUT_HELPER, os.X_OK) else "false"


_HELPER = _helper()

#: Set for every command so tools never wait for a terminal, an editor, a pager or a prompt
#: (issue 13 Build 4; docs/shell.md). Editors and askpass programs are :data:`NO_INPUT_HELPER`
#: (git runs ``GIT_EDITOR`` through ``sh``, so that value is shell-quoted; ``EDITOR``,
#: ``VISUAL``, ``GIT_ASKPASS`` and ``SSH_ASKPASS`` are executed as one path). Git: no
#: terminal prompt (``GIT_TERMINAL_PROMPT=0``, git(1)), no merge-message editor
#: (``GIT_MERGE_AUTOEDIT=no``), no Git Credential Manager dialog (``GCM_INTERACTIVE=never``).
#: ssh(1): every passphrase, password and host-key question goes to the askpass program
#: (``SSH_ASKPASS_REQUIRE=force``), which refuses with a message rather than answering.
#: Pagers are ``cat``. Package managers do not ask (``DEBIAN_FRONTEND``, ``PIP_NO_INPUT``,
#: ``POETRY_NO_INTERACTION``, ``COMPOSER_NO_INTERACTION``, ``npm_config_yes``).
NON_INTERACTIVE_DEFAULTS: Mapping[str, str] = {
    "CI": "1",
    "TERM": "dumb",
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_EDITOR": shlex.quote(_HELPER),
    "GIT_SEQUENCE_EDITOR": shlex.quote(_HELPER),
    "EDITOR": _HELPER,
    "VISUAL": _HELPER,
    "GIT_ASKPASS": _HELPER,
    "SSH_ASKPASS": _HELPER,
    "SSH_ASKPASS_REQUIRE": "force",
    "GIT_MERGE_AUTOEDIT": "no",
    "GCM_INTERACTIVE": "never",
    "PAGER": "cat",
    "GIT_PAGER": "cat",
    "MANPAGER": "cat",
    "SYSTEMD_PAGER": "cat",
    "AWS_PAGER": "",
    "LESS": "-FRX",
    "DEBIAN_FRONTEND": "noninteractive",
    "DEBCONF_NONINTERACTIVE_SEEN": "true",
    "APT_LISTCHANGES_FRONTEND": "none",
    "PIP_NO_INPUT": "1",
    "POETRY_NO_INTERACTION": "1",
    "COMPOSER_NO_INTERACTION": "1",
    "npm_config_yes": "true",
}

#: ``GIT_SSH_COMMAND`` when nobody configured one: ssh(1) ``BatchMode`` never asks anything.
BATCH_SSH_COMMAND = "ssh -o BatchMode=yes"


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


def git_ssh_command(env: Mapping[str, str], *, ssh_configured: bool = False) -> str | None:
    """The ``GIT_SSH_COMMAND`` a command gets, given its otherwise final environment ``env``.

    Never replaces the user's own ssh set-up: a ``GIT_SSH_COMMAND`` whose program is ``ssh``
    gets ``-o BatchMode=yes`` appended (unless it names ``BatchMode`` already); any other
    ``GIT_SSH_COMMAND`` (a wrapper, plink) is kept as it is. With ``GIT_SSH`` set, or a
    ``core.sshCommand`` in git config (``ssh_configured``; the variable would override
    both, git-config(1)), nothing is set. Otherwise :data:`BATCH_SSH_COMMAND`. Without
    ``BatchMode`` ssh still cannot prompt: there is no terminal, and
    ``SSH_ASKPASS_REQUIRE=force`` sends its questions to the refusing helper.

    Returns:
        The value, or ``None`` to leave the variable unset.
    """
    current = env.get("GIT_SSH_COMMAND")
    if current is not None:
        try:
            words = shlex.split(current)
        except ValueError:
            return current
        if not words or os.path.basename(words[0]) != "ssh" or "batchmode" in current.lower():
            return current
        return f"{current} -o BatchMode=yes"
    if ssh_configured or env.get("GIT_SSH"):
        return None
    return BATCH_SSH_COMMAND


def git_config_sets_ssh_command(env: Mapping[str, str], repos: Iterable[Path] = ()) -> bool:
    """Whether the git config a command would read may set ``core.sshCommand``.

    A text search (case-insensitive ``sshcommand``) of the system, global and XDG config
    files named by ``env`` (``GIT_CONFIG_SYSTEM``/``/etc/gitconfig``,
    ``GIT_CONFIG_GLOBAL``/``$HOME/.gitconfig``, ``$XDG_CONFIG_HOME/git/config``), the
    ``config`` of each ``repos`` git dir (``<repo>/.git/config``) and ``GIT_CONFIG_KEY_<n>``;
    ``include`` files are not followed. Errs towards ``True`` (a match in a comment counts),
    which only means ``GIT_SSH_COMMAND`` stays unset. Unreadable files count as absent.
    """
    if any(k.startswith("GIT_CONFIG_KEY_") and "sshcommand" in v.lower() for k, v in env.items()):
        return True
    home = Path(env.get("HOME", "~")).expanduser()
    xdg = Path(env.get("XDG_CONFIG_HOME") or home / ".config")
    files = [
        Path(env.get("GIT_CONFIG_SYSTEM") or "/etc/gitconfig"),
        Path(env.get("GIT_CONFIG_GLOBAL") or home / ".gitconfig"),
        xdg / "git" / "config",
        *(Path(repo) / ".git" / "config" for repo in repos),
    ]
    for path in files:
        try:
            with open(path, "rb") as handle:
                if b"sshcommand" in handle.read(1 << 20).lower():
                    return True
        except OSError:
            continue
    return False


def build_env(
    base: Mapping[str, str],
    *,
    allow_env: Collection[str] = (),
    extra: Mapping[str, str] | None = None,
    ssh_configured: bool = False,
) -> dict[str, str]:
    """The environment for one command.

    Args:
        base: the inherited environment (usually ``os.environ``).
        allow_env: names kept even though they look like secrets (``OPENAI_API_KEY`` and
            ``CODEX_API_KEY`` are dropped regardless).
        extra: values set last (they override the non-interactive defaults, e.g. ``TERM``).
        ssh_configured: git config sets ``core.sshCommand``
            (:func:`git_config_sets_ssh_command`), so ``GIT_SSH_COMMAND`` is left unset.

    Returns:
        A new dict: ``base`` without secrets and without the shell-behaviour variables
        (:func:`is_shell_behaviour`: ``CDPATH``, ``OLDPWD``, ``BASH_ENV``, ``IFS``…), plus
        :data:`NON_INTERACTIVE_DEFAULTS`, plus ``extra`` (its shell-behaviour names dropped
        too), with ``GIT_SSH_COMMAND`` from :func:`git_ssh_command`. The policy judges a
        command with this same mapping (``Workspace.decide_commands``), so what it expands
        is what the command gets.
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
    ssh = git_ssh_command(env, ssh_configured=ssh_configured)
    if ssh is not None:
        env["GIT_SSH_COMMAND"] = ssh
    return env
