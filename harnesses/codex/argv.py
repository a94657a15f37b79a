"""The ``codex exec --experimental-json`` argument list for one turn (spec §9.3)."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import Any

from core.toml_text import toml_literal
from core.tools.codex import CodexExecArgs

__all__ = [
    "PROVIDER_ID",
    "SHELL_EXCLUDE_KEY",
    "SHELL_SNAPSHOT_KEY",
    "key_reader",
    "build_argv",
    "provider_config",
    "shell_env_excludes",
    "toml_literal",
]

#: Config id of the model provider ``base_url`` is mapped to (the CLI ignores OPENAI_BASE_URL).
PROVIDER_ID = "tandem"


#: The CLI setting naming variables its shell commands do not inherit (globs).
SHELL_EXCLUDE_KEY = "shell_environment_policy.exclude"
_KEY_VARIABLES = ("CODEX_API_KEY", "OPENAI_API_KEY")

#: The CLI feature that runs the user's login shell with Codex's whole environment at start-up
#: to snapshot it (a process whose ``environ`` any command could read); turned off per run.
SHELL_SNAPSHOT_KEY = "features.shell_snapshot"

#: Reads the pipe whose fd is ``argv[1]`` to its end and prints it (the provider's token).
_READ_PIPE = (
    "import os,sys\n"
    "fd=int(sys.argv[1]);data=b''\n"
    "while chunk:=os.read(fd,65536): data+=chunk\n"
    "if not data:\n"
    "    sys.exit('the server refused the key (HTTP 401 Unauthorized); Tandem hands Codex its "
    "key once, so check the key and base URL in Settings')\n"
    "sys.stdout.buffer.write(data)"
)


def key_reader(fd: int) -> dict[str, Any]:
    """The provider ``auth`` table that makes the CLI read its bearer token from pipe ``fd``.

    The CLI 0.171.0 runs ``auth.command`` once, before its first request, takes its stdout as
    the token and keeps it (``refresh_interval_ms = 0``: no timed refresh; a failed refresh
    keeps the cached token, checked with the CLI). The pipe is read to its end, so the key is
    nowhere afterwards: not in an environment, not in a command line, not in a file
    (red-team finding 6). The commands Codex runs do not inherit ``fd`` (the CLI closes it).
    The CLI runs the command again only after the server refused the token (HTTP 401); the
    pipe is empty then, and the reader fails with a message saying so.

    Returns:
        ``{"command": <python>, "args": ["-S", "-I", "-c", <reader>, "<fd>"],
        "refresh_interval_ms": 0}``.
    """
    return {
        "command": sys.executable,
        "args": ["-S", "-I", "-c", _READ_PIPE, str(int(fd))],
        "refresh_interval_ms": 0,
    }


def shell_env_excludes(configured: Any = None) -> list[str]:
    """``shell_environment_policy.exclude`` for a run: the key variables the CLI reads (its
    provider's ``env_key``), then what ``configured`` (a list of globs, or ``None``) adds.

    Without it the CLI 0.171.0 passes ``CODEX_API_KEY`` to every command it runs (seen with
    ``env``); a ``--config`` value replaces the config file's list, so user globs are kept.
    """
    extra = [str(v) for v in configured] if isinstance(configured, (list, tuple)) else []
    return list(dict.fromkeys([*_KEY_VARIABLES, *extra]))


def provider_config(base_url: str, *, key_fd: int | None = None) -> dict[str, Any]:
    """``--config`` entries selecting a Responses provider at ``base_url``.

    ``key_fd`` (the read end of a pipe holding the key, inherited by the CLI) adds the
    provider's ``auth`` command (:func:`key_reader`; sent as ``Authorization: Bearer``). No
    ``env_key``: a key in the CLI's environment is readable by a root command from
    ``/proc/<codex>/environ``. ``None``: a keyless server, no ``Authorization`` header.
    """
    prefix = f"model_providers.{PROVIDER_ID}"
    config: dict[str, Any] = {
        "model_provider": PROVIDER_ID,
        f"{prefix}.name": "Tandem base_url",
        f"{prefix}.base_url": base_url,
        f"{prefix}.wire_api": "responses",
    }
    if key_fd is not None:
        config[f"{prefix}.auth"] = key_reader(key_fd)
    return config


def build_argv(
    args: CodexExecArgs,
    *,
    output_schema_path: str | None = None,
    extra_config: Mapping[str, Any] | None = None,
) -> list[str]:
    """The arguments after the binary, in the order of spec §9.3.

    Args:
        args: the turn.
        output_schema_path: the written ``--output-schema`` file, if any.
        extra_config: more ``--config key=value`` pairs (provider override, user config),
            placed after the option-derived ``--config`` flags.

    Returns:
        ``["exec", "--experimental-json", ..., "-"]`` (``-``: the prompt comes from stdin).
    """
    opts = args.thread_options
    argv = ["exec", "--experimental-json"]
    if opts.model:
        argv += ["--model", opts.model]
    if opts.sandbox_mode:
        argv += ["--sandbox", opts.sandbox_mode]
    if opts.working_directory:
        argv += ["--cd", opts.working_directory]
    for directory in opts.additional_directories or ():
        argv += ["--add-dir", directory]
    if opts.skip_git_repo_check:
        argv.append("--skip-git-repo-check")
    if output_schema_path:
        argv += ["--output-schema", output_schema_path]
    config: dict[str, Any] = {}
    if opts.model_reasoning_effort:
        config["model_reasoning_effort"] = opts.model_reasoning_effort
    if opts.network_access_enabled is not None:
        config["sandbox_workspace_write.network_access"] = opts.network_access_enabled
    if opts.effective_web_search_mode is not None:
        config["web_search"] = opts.effective_web_search_mode
    if opts.approval_policy:
        config["approval_policy"] = opts.approval_policy
    config.update(extra_config or {})
    for key, value in config.items():
        argv += ["--config", f"{key}={toml_literal(value)}"]
    if args.thread_id:
        argv.append("resume")
    for image in args.images:
        argv += ["--image", image]
    if args.thread_id:
        argv.append(args.thread_id)
    argv.append("-")
    return argv
