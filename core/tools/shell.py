"""The shell tools: ``ShellTool`` (local executor or hosted container) and ``LocalShellTool``.

Behaviour follows the reference spec §4 (configuration, wire payload, ``coerce_shell_call``,
output construction, approvals) and §8 (approval flow). Core only defines the executor contract;
``harnesses.shell`` provides the subprocess/bubblewrap implementation.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Literal, NotRequired, TypeAlias, TypedDict

from .._util import maybe_await as _maybe_await
from ..errors import ModelBehaviorError, UserError
from .local import ApprovalDecision, LocalCallResult, ask_on_approval

if TYPE_CHECKING:
    from ..agent import Agent
    from ..context import RunContextWrapper
    from ..items import ToolApprovalItem

__all__ = [
    "DEFAULT_APPROVAL_REJECTION_MESSAGE",
    "LocalShellCommandRequest",
    "LocalShellExecutor",
    "LocalShellTool",
    "ShellActionRequest",
    "ShellApprovalFunction",
    "ShellCallData",
    "ShellCallOutcome",
    "ShellCommandOutput",
    "ShellCommandRequest",
    "ShellExecutor",
    "ShellOnApprovalFunction",
    "ShellResult",
    "ShellTool",
    "ShellToolContainerAutoEnvironment",
    "ShellToolContainerNetworkPolicy",
    "ShellToolContainerNetworkPolicyAllowlist",
    "ShellToolContainerNetworkPolicyDisabled",
    "ShellToolContainerNetworkPolicyDomainSecret",
    "ShellToolContainerReferenceEnvironment",
    "ShellToolContainerSkill",
    "ShellToolEnvironment",
    "ShellToolHostedEnvironment",
    "ShellToolInlineSkill",
    "ShellToolInlineSkillSource",
    "ShellToolLocalEnvironment",
    "ShellToolLocalSkill",
    "ShellToolSkillReference",
    "coerce_shell_call",
    "render_shell_outputs",
    "truncate_shell_outputs",
]

#: Default rejection text (spec §8, ``DEFAULT_APPROVAL_REJECTION_MESSAGE``).
DEFAULT_APPROVAL_REJECTION_MESSAGE = "Tool execution was not approved."

#: Allowed ``container_auto.memory_limit`` values (spec §4.2).
_MEMORY_LIMITS = frozenset({"1g", "4g", "16g", "64g"})
_HOSTED_TYPES = frozenset({"container_auto", "container_reference"})
_TIMEOUT_ERROR = (
    "Shell call action timeout must be a positive integer in milliseconds, zero, or None."
)


# -- environment TypedDicts (spec §4.2) ---------------------------------------------------------


class ShellToolLocalSkill(TypedDict):
    """A skill available to a local shell: ``{"name", "description", "path"}``."""

    name: str
    description: str
    path: str


class ShellToolLocalEnvironment(TypedDict):
    """``{"type": "local", "skills"?: [...]}``: commands run through the tool's executor."""

    type: Literal["local"]
    skills: NotRequired[list[ShellToolLocalSkill]]


class ShellToolSkillReference(TypedDict):
    """A hosted skill by id: ``{"type": "skill_reference", "skill_id", "version"?}``."""

    type: Literal["skill_reference"]
    skill_id: str
    version: NotRequired[str]


class ShellToolInlineSkillSource(TypedDict):
    """Inline skill bundle: ``{"type": "base64", "media_type": "application/zip", "data"}``."""

    type: Literal["base64"]
    media_type: Literal["application/zip"]
    data: str


class ShellToolInlineSkill(TypedDict):
    """``{"type": "inline", "name", "description", "source": ShellToolInlineSkillSource}``."""

    type: Literal["inline"]
    name: str
    description: str
    source: ShellToolInlineSkillSource


ShellToolContainerSkill: TypeAlias = ShellToolSkillReference | ShellToolInlineSkill


class ShellToolContainerNetworkPolicyDisabled(TypedDict):
    """``{"type": "disabled"}``: the container has no network."""

    type: Literal["disabled"]


class ShellToolContainerNetworkPolicyDomainSecret(TypedDict):
    """A secret injected for one domain: ``{"domain", "name", "value"}``."""

    domain: str
    name: str
    value: str


class ShellToolContainerNetworkPolicyAllowlist(TypedDict):
    """``{"type": "allowlist", "allowed_domains": [...], "domain_secrets"?: [...]}``."""

    type: Literal["allowlist"]
    allowed_domains: list[str]
    domain_secrets: NotRequired[list[ShellToolContainerNetworkPolicyDomainSecret]]


ShellToolContainerNetworkPolicy: TypeAlias = (
    ShellToolContainerNetworkPolicyAllowlist | ShellToolContainerNetworkPolicyDisabled
)


class ShellToolContainerAutoEnvironment(TypedDict):
    """A container provisioned per request (``memory_limit`` ∈ ``1g|4g|16g|64g``)."""

    type: Literal["container_auto"]
    file_ids: NotRequired[list[str]]
    memory_limit: NotRequired[Literal["1g", "4g", "16g", "64g"] | None]
    network_policy: NotRequired[ShellToolContainerNetworkPolicy]
    skills: NotRequired[list[ShellToolContainerSkill]]


class ShellToolContainerReferenceEnvironment(TypedDict):
    """An existing container: ``{"type": "container_reference", "container_id"}``."""

    type: Literal["container_reference"]
    container_id: str


ShellToolHostedEnvironment: TypeAlias = (
    ShellToolContainerAutoEnvironment | ShellToolContainerReferenceEnvironment
)
ShellToolEnvironment: TypeAlias = ShellToolLocalEnvironment | ShellToolHostedEnvironment


# -- value objects (spec §4.4) ------------------------------------------------------------------


@dataclass(slots=True)
class ShellActionRequest:
    """The normalized ``action`` of a ``shell_call``.

    Attributes:
        commands: shell command lines, run in order.
        timeout_ms: per-call limit in milliseconds, ``None`` for "no explicit timeout".
        max_output_length: character budget for the whole output, ``None`` for none.
    """

    commands: list[str]
    timeout_ms: int | None = None
    max_output_length: int | None = None


@dataclass(slots=True)
class ShellCallData:
    """One normalized ``shell_call``: ``call_id``, ``action``, ``status`` and the ``raw`` item."""

    call_id: str
    action: ShellActionRequest
    status: Literal["in_progress", "completed"] | None = None
    raw: Any | None = None


@dataclass(slots=True)
class ShellCommandRequest:
    """What a ``ShellTool`` executor receives: the run context and the call data."""

    ctx_wrapper: RunContextWrapper[Any]
    data: ShellCallData


@dataclass(slots=True)
class ShellCallOutcome:
    """How a command ended: ``type`` ``"exit"`` (with ``exit_code``) or ``"timeout"``."""

    type: Literal["exit", "timeout"]
    exit_code: int | None = None


def _default_outcome() -> ShellCallOutcome:
    return ShellCallOutcome(type="exit", exit_code=None)


@dataclass(slots=True)
class ShellCommandOutput:
    """The output of one command.

    Attributes:
        stdout: decoded standard output (characters).
        stderr: decoded standard error (characters).
        outcome: exit (code, ``None`` when unknown) or timeout.
        command: the command line, used by :func:`render_shell_outputs`; never sent.
        provider_data: executor details (cwd, sandbox flags...); never sent to the model.
    """

    stdout: str = ""
    stderr: str = ""
    outcome: ShellCallOutcome = field(default_factory=_default_outcome)
    command: str | None = None
    provider_data: dict[str, Any] | None = None

    @property
    def exit_code(self) -> int | None:
        """The outcome's exit code (``None`` for a timeout or an unknown code)."""
        return self.outcome.exit_code

    @property
    def status(self) -> Literal["completed", "timeout"]:
        """``"timeout"`` for a timed-out command, else ``"completed"``."""
        return "timeout" if self.outcome.type == "timeout" else "completed"


@dataclass(slots=True)
class ShellResult:
    """An executor's structured result: one :class:`ShellCommandOutput` per command.

    Attributes:
        output: entries in command order (``ShellCommandOutput`` or equivalent mappings).
        max_output_length: the executor's own character budget, combined with the action's
            by taking the minimum (spec §4.4).
        provider_data: executor details; never sent to the model.
    """

    output: list[ShellCommandOutput]
    max_output_length: int | None = None
    provider_data: dict[str, Any] | None = None


@dataclass(slots=True)
class LocalShellCommandRequest:
    """What a ``LocalShellTool`` executor receives; ``data`` is the raw ``local_shell_call``."""

    ctx_wrapper: RunContextWrapper[Any]
    data: dict[str, Any]


ShellExecutor: TypeAlias = Callable[[ShellCommandRequest], "str | ShellResult | Awaitable[Any]"]
ShellApprovalFunction: TypeAlias = Callable[
    ["RunContextWrapper[Any]", ShellActionRequest, str], "bool | Awaitable[bool]"
]
ShellOnApprovalFunction: TypeAlias = Callable[["RunContextWrapper[Any]", "ToolApprovalItem"], Any]
LocalShellExecutor: TypeAlias = Callable[[LocalShellCommandRequest], "str | Awaitable[str]"]


# -- coerce_shell_call (spec §4.4) --------------------------------------------------------------


def _coerce_timeout(action: Mapping[str, Any]) -> int | None:
    for key in ("timeout_ms", "timeoutMs", "timeout"):
        value = action.get(key)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ModelBehaviorError(_TIMEOUT_ERROR)
        if value != 0:
            return value
    return None


def _coerce_max_length(action: Mapping[str, Any]) -> int | None:
    for key in ("max_output_length", "maxOutputLength"):
        value = action.get(key)
        if value is None:
            continue
        if isinstance(value, int | float) and not isinstance(value, bool):
            return int(value)
        return None
    return None


def coerce_shell_call(call: Mapping[str, Any]) -> ShellCallData:
    """Normalize a raw ``shell_call`` item (spec §4.4 ``coerce_shell_call``).

    Args:
        call: the output item as a wire dict (``call_id``, ``action``, ``status``...).

    Returns:
        The :class:`ShellCallData` the executor will receive.

    Raises:
        ModelBehaviorError: missing ``call_id`` or ``action``, ``commands`` not a sequence of
            strings or empty after dropping ``None`` entries, or an invalid timeout.
    """
    call_id = call.get("call_id")
    if not call_id:
        raise ModelBehaviorError("Shell call is missing call_id.")
    action = call.get("action")
    if action is None:
        raise ModelBehaviorError("Shell call is missing an action payload.")
    commands = action.get("commands") if isinstance(action, Mapping) else None
    if not isinstance(commands, Sequence) or isinstance(commands, str | bytes):
        raise ModelBehaviorError(
            "Shell call action commands must be a sequence of command strings."
        )
    cleaned = [str(command) for command in commands if command is not None]
    if not cleaned:
        raise ModelBehaviorError("Shell call action must include at least one command.")
    assert isinstance(action, Mapping)
    status = call.get("status")
    return ShellCallData(
        call_id=str(call_id),
        action=ShellActionRequest(
            commands=cleaned,
            timeout_ms=_coerce_timeout(action),
            max_output_length=_coerce_max_length(action),
        ),
        status=status if status in ("in_progress", "completed") else None,
        raw=call,
    )


# -- output construction (spec §4.4) ------------------------------------------------------------


def _normalize_entry(entry: ShellCommandOutput | Mapping[str, Any]) -> ShellCommandOutput:
    if isinstance(entry, ShellCommandOutput):
        return entry
    outcome_raw = entry.get("outcome")
    if isinstance(outcome_raw, ShellCallOutcome):
        outcome = outcome_raw
    elif isinstance(outcome_raw, Mapping):
        if outcome_raw.get("type") == "timeout":
            outcome = ShellCallOutcome(type="timeout", exit_code=outcome_raw.get("exit_code"))
        else:
            outcome = ShellCallOutcome(type="exit", exit_code=outcome_raw.get("exit_code"))
    elif entry.get("status") == "timeout":
        outcome = ShellCallOutcome(type="timeout")
    else:
        outcome = ShellCallOutcome(type="exit", exit_code=entry.get("exit_code"))
    return ShellCommandOutput(
        stdout=str(entry.get("stdout") or ""),
        stderr=str(entry.get("stderr") or ""),
        outcome=outcome,
        command=entry.get("command"),
        provider_data=entry.get("provider_data"),
    )


def truncate_shell_outputs(
    outputs: Sequence[ShellCommandOutput], max_length: int
) -> list[ShellCommandOutput]:
    """Cut outputs to one shared character budget (spec §4.4).

    Entries are walked in order; each entry's ``stdout`` then ``stderr`` takes what is left of
    ``max_length`` characters (negative budgets count as 0). Entries are kept even when emptied.
    """
    remaining = max(0, max_length)
    result: list[ShellCommandOutput] = []
    for entry in outputs:
        stdout = entry.stdout[:remaining]
        remaining -= len(stdout)
        stderr = entry.stderr[:remaining]
        remaining -= len(stderr)
        result.append(
            ShellCommandOutput(
                stdout=stdout,
                stderr=stderr,
                outcome=entry.outcome,
                command=entry.command,
                provider_data=entry.provider_data,
            )
        )
    return result


def _serialize_entry(entry: ShellCommandOutput) -> dict[str, Any]:
    outcome: dict[str, Any]
    if entry.outcome.type == "timeout":
        outcome = {"type": "timeout"}
    else:
        outcome = {"type": "exit", "exit_code": entry.outcome.exit_code}
    return {"stdout": entry.stdout, "stderr": entry.stderr, "outcome": outcome}


def render_shell_outputs(outputs: Sequence[ShellCommandOutput]) -> str:
    """The human-readable rendering recorded as the tool output (spec §4.4, last bullet).

    Per entry: ``$ <command>``, stdout, a blank line then ``stderr:`` and stderr, ``exit code: N``
    when non-zero, ``status: timeout``; each block stripped, ``(no output)`` when empty; blocks
    joined by a blank line; ``(no output)`` for no entries.
    """
    if not outputs:
        return "(no output)"
    blocks: list[str] = []
    for entry in outputs:
        lines: list[str] = []
        if entry.command:
            lines.append(f"$ {entry.command}")
        if entry.stdout:
            lines.append(entry.stdout.rstrip("\n"))
        if entry.stderr:
            lines.extend(["", "stderr:", entry.stderr.rstrip("\n")])
        code = entry.outcome.exit_code
        if code is not None and code != 0:
            lines.append(f"exit code: {code}")
        if entry.outcome.type == "timeout":
            lines.append("status: timeout")
        blocks.append("\n".join(lines).strip() or "(no output)")
    return "\n\n".join(blocks)


def _effective_max_length(*values: int | None) -> int | None:
    present = [max(0, v) for v in values if v is not None]
    return min(present) if present else None


def _shell_output_result(
    call_id: str, entries: list[ShellCommandOutput], max_length: int | None
) -> LocalCallResult:
    if max_length is not None:
        entries = truncate_shell_outputs(entries, max_length)
    item: dict[str, Any] = {"type": "shell_call_output", "call_id": call_id}
    if max_length is not None:
        item["max_output_length"] = max_length
    item["output"] = [_serialize_entry(entry) for entry in entries]
    return LocalCallResult(input_item=item, output=render_shell_outputs(entries))


def _format_error(error: BaseException) -> str:
    return str(error) or type(error).__name__


# -- ShellTool (spec §4.1-§4.5) -----------------------------------------------------------------


def _validate_hosted_environment(env: Mapping[str, Any]) -> None:
    if env["type"] == "container_reference":
        if not env.get("container_id"):
            raise UserError("ShellTool container_reference environment requires a container_id.")
        return
    memory_limit = env.get("memory_limit")
    if memory_limit is not None and memory_limit not in _MEMORY_LIMITS:
        raise UserError(
            f"ShellTool memory_limit must be one of 1g, 4g, 16g, 64g (got {memory_limit!r})."
        )
    policy = env.get("network_policy")
    if policy is not None:
        kind = policy.get("type") if isinstance(policy, Mapping) else None
        if kind not in ("disabled", "allowlist"):
            raise UserError(f"Unknown ShellTool network_policy type: {kind!r}.")
    for skill in env.get("skills") or []:
        kind = skill.get("type") if isinstance(skill, Mapping) else None
        if kind not in ("skill_reference", "inline"):
            raise UserError(f"Unknown ShellTool container skill type: {kind!r}.")


def _drop_none(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _drop_none(v) for k, v in value.items() if v is not None}
    if isinstance(value, list | tuple):
        return [_drop_none(v) for v in value]
    return value


class ShellTool:
    """The Responses ``shell`` tool, executed locally or in a hosted container (spec §4).

    Implements :class:`core.tools.local.LocalCallHandler` for ``shell_call`` items.

    Args:
        executor: ``(ShellCommandRequest) -> str | ShellResult`` (sync or async); required in
            local mode, forbidden in hosted mode.
        name: bookkeeping name for approvals and hooks (not sent).
        needs_approval: ``bool`` or ``(run_context, ShellActionRequest, call_id) -> bool``
            (sync or async). Local mode only.
        on_approval: ``(run_context, ToolApprovalItem) -> {"approve": bool, "reason"?: str}``
            (sync or async), consulted before interrupting the run. Local mode only.
        environment: ``None`` or a mapping without ``type`` means ``{"type": "local"}``.
        allowed_callers: sent as ``allowed_callers`` when set.

    Raises:
        UserError: local mode without executor; hosted mode with executor, ``needs_approval``
            or ``on_approval``; an unknown environment/network policy/skill type, a
            ``memory_limit`` outside ``1g|4g|16g|64g``, or a reference without ``container_id``.
    """

    call_item_types: ClassVar[tuple[str, ...]] = ("shell_call",)
    type: ClassVar[str] = "shell"

    def __init__(
        self,
        executor: ShellExecutor | None = None,
        name: str = "shell",
        needs_approval: bool | ShellApprovalFunction = False,
        on_approval: ShellOnApprovalFunction | None = None,
        environment: ShellToolEnvironment | Mapping[str, Any] | None = None,
        *,
        allowed_callers: list[Any] | None = None,
    ) -> None:
        env: dict[str, Any] = dict(environment or {})
        env.setdefault("type", "local")
        kind = env["type"]
        if kind == "local":
            if executor is None:
                raise UserError("ShellTool with local environment requires an executor.")
        elif kind in _HOSTED_TYPES:
            if executor is not None:
                raise UserError("ShellTool with hosted environment does not accept an executor.")
            if needs_approval is not False or on_approval is not None:
                raise UserError(
                    "ShellTool with hosted environment does not support needs_approval or "
                    "on_approval."
                )
            _validate_hosted_environment(env)
        else:
            raise UserError(f"Unknown ShellTool environment type: {kind!r}.")
        self.executor = executor
        self.name = name
        self.needs_approval_setting = needs_approval
        self.on_approval_callback = on_approval
        self.environment: dict[str, Any] = env
        self.allowed_callers = allowed_callers

    def __repr__(self) -> str:
        return (
            f"ShellTool(name={self.name!r}, environment={{'type': {self.environment['type']!r}}})"
        )

    @property
    def is_hosted(self) -> bool:
        """``True`` for ``container_auto``/``container_reference``: calls run on the server."""
        return self.environment["type"] in _HOSTED_TYPES

    def to_wire(self, model: str | None = None) -> dict[str, Any]:
        """``{"type": "shell", "environment": {...}}`` plus ``allowed_callers`` (spec §4.2)."""
        payload: dict[str, Any] = {"type": "shell", "environment": _drop_none(self.environment)}
        if self.allowed_callers is not None:
            payload["allowed_callers"] = list(self.allowed_callers)
        return payload

    def validate_call(self, call: dict[str, Any]) -> None:
        """Raise ``ModelBehaviorError`` for a malformed local call (spec §4.4)."""
        if not self.is_hosted:
            coerce_shell_call(call)

    async def needs_approval(self, ctx: RunContextWrapper[Any], call: dict[str, Any]) -> bool:
        """Evaluate ``needs_approval`` for one call (spec §4.5); hosted calls never need it."""
        setting = self.needs_approval_setting
        if self.is_hosted or setting is False:
            return False
        if setting is True:
            return True
        data = coerce_shell_call(call)
        return bool(await _maybe_await(setting(ctx, data.action, data.call_id)))

    async def on_approval(
        self, ctx: RunContextWrapper[Any], item: ToolApprovalItem
    ) -> ApprovalDecision | None:
        """Ask the ``on_approval`` callback; ``None`` when absent or undecided (spec §4.5)."""
        return await ask_on_approval(self.on_approval_callback, ctx, item)

    async def execute(
        self, ctx: RunContextWrapper[Any], call: dict[str, Any], agent: Agent[Any] | None = None
    ) -> LocalCallResult:
        """Run the executor and build the ``shell_call_output`` item (spec §4.4).

        Returns:
            ``LocalCallResult`` whose ``input_item`` is ``{"type": "shell_call_output",
            "call_id", "max_output_length"?, "output": [{"stdout", "stderr", "outcome"}]}`` and
            whose ``output`` is the :func:`render_shell_outputs` string.

        Raises:
            ModelBehaviorError: a malformed call. Executor exceptions are reported in the
                output (stdout, exit code 1), not raised.
            UserError: called on a hosted tool (the server executes those calls).
        """
        if self.is_hosted or self.executor is None:
            raise UserError("Hosted ShellTool calls are executed by the server, not locally.")
        data = coerce_shell_call(call)
        action_max = data.action.max_output_length
        try:
            result = await _maybe_await(self.executor(ShellCommandRequest(ctx, data)))
        except Exception as exc:
            entry = ShellCommandOutput(
                stdout=_format_error(exc), outcome=ShellCallOutcome(type="exit", exit_code=1)
            )
            return _shell_output_result(data.call_id, [entry], _effective_max_length(action_max))
        if isinstance(result, ShellResult):
            entries = [_normalize_entry(entry) for entry in result.output]
            max_length = _effective_max_length(result.max_output_length, action_max)
            return _shell_output_result(data.call_id, entries, max_length)
        text = "" if result is None else str(result)
        entries = (
            [ShellCommandOutput(stdout=text, outcome=ShellCallOutcome(type="exit", exit_code=0))]
            if text
            else []
        )
        return _shell_output_result(data.call_id, entries, _effective_max_length(action_max))

    def rejection(self, call: dict[str, Any], message: str) -> LocalCallResult:
        """The output for a rejected call: ``message`` as stderr, exit code 1 (spec §4.5)."""
        text = message or DEFAULT_APPROVAL_REJECTION_MESSAGE
        item = {
            "type": "shell_call_output",
            "call_id": str(call.get("call_id") or ""),
            "output": [{"stdout": "", "stderr": text, "outcome": {"type": "exit", "exit_code": 1}}],
        }
        return LocalCallResult(input_item=item, output=text)


# -- LocalShellTool (spec §4.6) -----------------------------------------------------------------


class LocalShellTool:
    """The legacy ``local_shell`` tool (spec §4.6): no approvals; executor errors fail the run.

    Args:
        executor: ``(LocalShellCommandRequest) -> str`` (sync or async); ``request.data`` is the
            raw ``local_shell_call`` (``action: {type: "exec", command: [...], env, ...}``).

    Raises:
        UserError: no executor given.
    """

    call_item_types: ClassVar[tuple[str, ...]] = ("local_shell_call",)
    type: ClassVar[str] = "local_shell"

    def __init__(self, executor: LocalShellExecutor) -> None:
        if executor is None:
            raise UserError("LocalShellTool requires an executor.")
        self.executor = executor
        self.name = "local_shell"

    def __repr__(self) -> str:
        return "LocalShellTool()"

    def to_wire(self, model: str | None = None) -> dict[str, Any]:
        """``{"type": "local_shell"}``."""
        return {"type": "local_shell"}

    @staticmethod
    def _call_id(call: Mapping[str, Any]) -> str:
        return str(call.get("call_id") or call.get("id") or "")

    def validate_call(self, call: dict[str, Any]) -> None:
        """Raise ``ModelBehaviorError`` when the call has no id."""
        if not self._call_id(call):
            raise ModelBehaviorError("Local shell call is missing call_id.")

    async def needs_approval(self, ctx: RunContextWrapper[Any], call: dict[str, Any]) -> bool:
        """Never: the legacy tool has no approval support."""
        return False

    async def on_approval(
        self, ctx: RunContextWrapper[Any], item: ToolApprovalItem
    ) -> ApprovalDecision | None:
        """Always ``None`` (no approval support)."""
        return None

    async def execute(
        self, ctx: RunContextWrapper[Any], call: dict[str, Any], agent: Agent[Any] | None = None
    ) -> LocalCallResult:
        """Run the executor; ``{"type": "local_shell_call_output", "call_id", "output": str}``.

        Raises:
            Exception: whatever the executor raises (it fails the run, spec §4.6).
        """
        result = await _maybe_await(self.executor(LocalShellCommandRequest(ctx, call)))
        text = "" if result is None else str(result)
        item = {"type": "local_shell_call_output", "call_id": self._call_id(call), "output": text}
        return LocalCallResult(input_item=item, output=text)

    def rejection(self, call: dict[str, Any], message: str) -> LocalCallResult:
        """A ``local_shell_call_output`` carrying the rejection text (not reached in practice)."""
        text = message or DEFAULT_APPROVAL_REJECTION_MESSAGE
        item = {"type": "local_shell_call_output", "call_id": self._call_id(call), "output": text}
        return LocalCallResult(input_item=item, output=text)
