"""The Codex CLI process behind ``core.codex_tool``; importing this package registers it.

``SubprocessCodexExec`` implements core's ``CodexExec`` seam with the real
``codex exec --experimental-json`` (binary resolution, argv, environment, JSONL stream,
idle timeout, cancellation). On import it becomes the default for every ``codex_tool``
built without ``codex=`` (``core.tools.codex.register_codex_exec_factory``).
"""

from core.tools.codex import register_codex_exec_factory

from .argv import (
    PROVIDER_ID,
    SHELL_EXCLUDE_KEY,
    build_argv,
    provider_config,
    shell_env_excludes,
    toml_literal,
)
from .binary import (
    INSTALL_SCRIPT,
    LOCAL_INSTALL_DIR,
    PINNED_CODEX_VERSION,
    CodexNotFoundError,
    codex_install_hint,
    find_codex_binary,
    local_codex_binary,
    resolve_codex_binary,
)
from .environment import (
    KEY_ENV_NAMES,
    build_child_env,
    codex_home,
    needs_private_tmpdir,
    resolve_api_key,
)
from .instructions import (
    InstructionsSource,
    agents_md_source,
    codex_instructions_text,
    instructions_config,
)
from .process import STDERR_KEEP_BYTES, CodexTurnWatch, StallListener, SubprocessCodexExec

register_codex_exec_factory(SubprocessCodexExec)

__all__ = [
    "INSTALL_SCRIPT",
    "LOCAL_INSTALL_DIR",
    "PINNED_CODEX_VERSION",
    "PROVIDER_ID",
    "STDERR_KEEP_BYTES",
    "KEY_ENV_NAMES",
    "SHELL_EXCLUDE_KEY",
    "CodexNotFoundError",
    "CodexTurnWatch",
    "InstructionsSource",
    "StallListener",
    "SubprocessCodexExec",
    "agents_md_source",
    "build_argv",
    "build_child_env",
    "codex_home",
    "codex_install_hint",
    "codex_instructions_text",
    "find_codex_binary",
    "instructions_config",
    "local_codex_binary",
    "needs_private_tmpdir",
    "provider_config",
    "resolve_api_key",
    "resolve_codex_binary",
    "shell_env_excludes",
    "toml_literal",
]
