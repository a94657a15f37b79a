"""``codex_tool``: a strict function tool that delegates a task to the Codex CLI (spec §9, seed)."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import re
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ValidationError

from ..._util import maybe_await as _maybe_await
from ...context import RunContextWrapper, ToolContext
from ...errors import ModelBehaviorError, UserError
from ...usage import Usage
from ..function import FunctionTool, ToolErrorFunction, default_tool_error_function
from .context_store import check_writable, default_thread_id_key, read_thread_id, write_thread_id
from .events import (
    AgentMessageItem,
    CodexUsage,
    ItemCompletedEvent,
    ThreadErrorEvent,
    ThreadEvent,
    TurnCompletedEvent,
    TurnFailedEvent,
)
from .options import CodexOptions, ThreadOptions, TurnOptions, coerce_options
from .output_schema import normalize_output_schema
from .process import CodexExec, create_codex_exec
from .thread import CodexInput, CodexThread

__all__ = [
    "DEFAULT_CODEX_DESCRIPTION",
    "DEFAULT_CODEX_RESPONSE",
    "CodexToolResult",
    "CodexToolStreamEvent",
    "codex_input_schema",
    "codex_tool",
    "is_codex_tool",
    "validate_codex_tool_names",
]

logger = logging.getLogger("core")

DEFAULT_CODEX_DESCRIPTION = "Executes an agentic Codex task against the current workspace."
DEFAULT_CODEX_RESPONSE = "Codex task completed with inputs."
_NAME_ERROR = 'Codex tool name must be "codex" or start with "codex_".'
_KEY_SUFFIX = re.compile(r"[A-Za-z0-9_]+")
_UNSET: Any = object()


@dataclass(frozen=True, slots=True)
class CodexToolStreamEvent:
    """What ``on_stream`` receives for every Codex event (spec §9.4).

    Attributes:
        event: the typed JSONL event.
        thread: the thread being run (its ``id`` is known after ``thread.started``).
        tool_call: the raw ``function_call`` item of the outer agent.
    """

    event: ThreadEvent
    thread: CodexThread
    tool_call: Any


@dataclass(slots=True)
class CodexToolResult:
    """The tool's return value; ``str()`` gives the JSON the model receives (spec §9.6)."""

    thread_id: str | None
    response: str
    usage: CodexUsage | None

    def to_json(self) -> dict[str, Any]:
        """``{"thread_id", "response", "usage"}`` (``usage`` may be ``None``)."""
        return {
            "thread_id": self.thread_id,
            "response": self.response,
            "usage": self.usage.to_json() if self.usage else None,
        }

    def __str__(self) -> str:
        return json.dumps(self.to_json())


OnStream = Callable[[CodexToolStreamEvent], "Awaitable[None] | None"]


def codex_input_schema(*, include_thread_id: bool = True) -> dict[str, Any]:
    """The strict input schema of spec §9.2 (without ``thread_id`` when not included)."""
    properties: dict[str, Any] = {
        "inputs": {
            "type": "array",
            "minItems": 1,
            "items": {"$ref": "#/$defs/CodexToolInputItem"},
            "description": (
                "Structured inputs appended to the Codex task. Provide at least one input item."
            ),
        }
    }
    if include_thread_id:
        properties["thread_id"] = {
            "anyOf": [{"type": "string"}, {"type": "null"}],
            "description": (
                "Optional Codex thread ID to resume. If omitted, a new thread is started unless "
                "configured elsewhere."
            ),
        }
    return {
        "type": "object",
        "additionalProperties": False,
        "required": list(properties),
        "properties": properties,
        "$defs": {
            "CodexToolInputItem": {
                "type": "object",
                "additionalProperties": False,
                "required": ["type", "text", "path"],
                "properties": {
                    "type": {"enum": ["text", "local_image"], "type": "string"},
                    "text": {"anyOf": [{"type": "string"}, {"type": "null"}]},
                    "path": {"anyOf": [{"type": "string"}, {"type": "null"}]},
                },
            }
        },
    }


# -- argument parsing (spec §9.2 item rules) ------------------------------------------------


def _field(value: Any, key: str) -> Any:
    return value.get(key) if isinstance(value, Mapping) else getattr(value, key, None)


def _coerce_input(index: int, raw: Any) -> CodexInput:
    where = f"inputs[{index}]"
    if isinstance(raw, Mapping):
        extra = set(raw) - {"type", "text", "path"}
        if extra:
            raise ModelBehaviorError(f"{where} has unknown keys: {', '.join(sorted(extra))}.")
    kind, text, path = _field(raw, "type"), _field(raw, "text"), _field(raw, "path")
    for label, value in (("text", text), ("path", path)):
        if value is not None and not isinstance(value, str):
            raise ModelBehaviorError(f"{where}.{label} must be a string or null.")
    if kind == "text":
        if not text or not text.strip():
            raise ModelBehaviorError(f"{where}: a text input needs a non-empty 'text'.")
        if path:
            raise ModelBehaviorError(f"{where}: a text input must not have a 'path'.")
        return CodexInput("text", text=text)
    if kind == "local_image":
        if not path or not path.strip():
            raise ModelBehaviorError(f"{where}: a local_image input needs a non-empty 'path'.")
        if text:
            raise ModelBehaviorError(f"{where}: a local_image input must not have 'text'.")
        return CodexInput("local_image", path=path)
    raise ModelBehaviorError(f"{where}.type must be 'text' or 'local_image'; got {kind!r}.")


def _parse_call(
    tool_name: str,
    arguments: str,
    parameters: type[BaseModel] | None,
    allow_thread_id: bool,
) -> tuple[list[CodexInput], str | None]:
    """``(inputs, thread_id)`` from the model's JSON arguments.

    Raises:
        ModelBehaviorError: invalid JSON or arguments breaking the item rules.
    """
    try:
        data = json.loads(arguments) if arguments else {}
    except json.JSONDecodeError as exc:
        raise ModelBehaviorError(f"Invalid JSON input for tool {tool_name}") from exc
    if not isinstance(data, dict):
        raise ModelBehaviorError(f"Invalid JSON input for tool {tool_name}: expected an object")
    source: Any = data
    if parameters is not None:
        try:
            source = parameters.model_validate(data)
        except ValidationError as exc:
            raise ModelBehaviorError(f"Invalid JSON input for tool {tool_name}: {exc}") from exc
    else:
        allowed = {"inputs", "thread_id"} if allow_thread_id else {"inputs"}
        extra = set(data) - allowed
        if extra:
            raise ModelBehaviorError(
                f"Invalid JSON input for tool {tool_name}: unknown keys {sorted(extra)}"
            )
    raw_inputs = _field(source, "inputs")
    if not isinstance(raw_inputs, (list, tuple)) or not raw_inputs:
        raise ModelBehaviorError("inputs must be a list with at least one input item.")
    inputs = [_coerce_input(i, raw) for i, raw in enumerate(raw_inputs)]
    thread_id = _field(source, "thread_id")
    if thread_id is not None and (not isinstance(thread_id, str) or not thread_id.strip()):
        raise ModelBehaviorError("thread_id must be a non-blank string or null.")
    return inputs, thread_id


# -- the invoker ------------------------------------------------------------------------------


class _CodexInvoker:
    """``on_invoke_tool`` of a Codex tool; holds its configuration and persisted thread."""

    def __init__(
        self,
        *,
        name: str,
        codex: CodexExec | None,
        codex_options: CodexOptions,
        thread_options: ThreadOptions,
        turn_options: TurnOptions,
        thread_id: str | None,
        parameters: type[BaseModel] | None,
        persist_session: bool,
        on_stream: OnStream | None,
        failure_error_function: ToolErrorFunction | None,
        use_run_context_thread_id: bool,
        run_context_thread_id_key: str,
    ) -> None:
        self.name = name
        self.codex = codex
        self.codex_options = codex_options
        self.thread_options = thread_options
        self.turn_options = turn_options
        self.thread_id = thread_id
        self.parameters = parameters
        self.persist_session = persist_session
        self.on_stream = on_stream
        self.failure_error_function = failure_error_function
        self.use_run_context_thread_id = use_run_context_thread_id
        self.run_context_thread_id_key = run_context_thread_id_key
        self.thread: CodexThread | None = None  # the persisted thread (persist_session=True)
        self._lock: asyncio.Lock | None = None
        self._thread_usage: dict[str, CodexUsage] = {}  # last cumulative usage per thread id

    def _exec(self) -> CodexExec:
        if self.codex is None:
            self.codex = create_codex_exec(self.codex_options)
        return self.codex

    async def __call__(self, ctx: ToolContext[Any], arguments: str) -> Any:
        try:
            if not self.persist_session:
                return await self._run(ctx, arguments)
            if self._lock is None:
                self._lock = asyncio.Lock()
            async with self._lock:  # one turn at a time on the shared thread
                return await self._run(ctx, arguments)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            logger.debug("codex tool %s failed with %s", self.name, type(exc).__name__)
            if self.failure_error_function is None:
                raise
            return await _maybe_await(self.failure_error_function(ctx, exc))

    def _thread_for(self, requested: str | None) -> CodexThread:
        """The thread to run: the persisted one, or a new/resumed one (spec §9.5)."""
        active = self.thread
        if self.persist_session and active is not None:
            if requested is None or active.id is None or requested == active.id:
                if requested is not None and active.id is None:
                    active = self.thread = CodexThread(self._exec(), self.thread_options, requested)
                return active
            raise UserError(
                f"Codex tool {self.name} keeps thread {active.id} (persist_session=True); "
                f"cannot switch to thread {requested}."
            )
        thread = CodexThread(self._exec(), self.thread_options, requested)
        if self.persist_session:
            self.thread = thread
        return thread

    async def _run(self, ctx: ToolContext[Any], arguments: str) -> CodexToolResult:
        inputs, call_thread_id = _parse_call(
            self.name, arguments, self.parameters, not self.use_run_context_thread_id
        )
        key = self.run_context_thread_id_key
        context_thread_id = None
        if self.use_run_context_thread_id:
            check_writable(ctx.context, key)
            context_thread_id = read_thread_id(ctx.context, key)
        requested = call_thread_id or context_thread_id or self.thread_id
        thread = self._thread_for(requested)
        try:
            return await self._consume(ctx, thread, inputs)
        finally:
            if self.use_run_context_thread_id and thread.id:
                write_thread_id(ctx.context, key, thread.id)

    async def _consume(
        self, ctx: ToolContext[Any], thread: CodexThread, inputs: list[CodexInput]
    ) -> CodexToolResult:
        response: str | None = None
        usage: CodexUsage | None = None
        completed = False
        last_error: str | None = None
        events = thread.run_streamed(inputs, dataclasses.replace(self.turn_options))
        try:
            async for event in events:
                await self._emit(event, thread, ctx)
                if isinstance(event, ItemCompletedEvent) and isinstance(
                    event.item, AgentMessageItem
                ):
                    response = event.item.text
                elif isinstance(event, TurnCompletedEvent):
                    usage, completed = event.usage, True
                elif isinstance(event, TurnFailedEvent):
                    raise UserError(f"Codex turn failed: {event.message}")
                elif isinstance(event, ThreadErrorEvent):
                    last_error = event.message  # retries report here; fatal only without an end
        finally:
            await events.aclose()
        if not completed and last_error is not None:
            raise UserError(f"Codex stream error: {last_error}")
        if usage is not None:
            turn = self._turn_usage(thread.id, usage)
            ctx.usage.add(
                Usage(
                    requests=1,
                    input_tokens=turn.input_tokens,
                    output_tokens=turn.output_tokens,
                    total_tokens=turn.input_tokens + turn.output_tokens,
                    cached_input_tokens=turn.cached_input_tokens,
                    reasoning_tokens=turn.reasoning_output_tokens,
                )
            )
        return CodexToolResult(thread.id, response or DEFAULT_CODEX_RESPONSE, usage)

    def _turn_usage(self, thread_id: str | None, usage: CodexUsage) -> CodexUsage:
        """This turn's share of ``usage``, which the CLI reports cumulatively per thread.

        When this tool instance saw the thread's previous total, the difference is returned
        (so a resumed thread is not counted twice); otherwise ``usage`` itself.
        """
        previous = self._thread_usage.get(thread_id) if thread_id else None
        if thread_id:
            self._thread_usage[thread_id] = usage
        if previous is None:
            return usage
        delta = [
            getattr(usage, f.name) - getattr(previous, f.name)
            for f in dataclasses.fields(CodexUsage)
        ]
        return usage if min(delta) < 0 else CodexUsage(*delta)

    async def _emit(self, event: ThreadEvent, thread: CodexThread, ctx: ToolContext[Any]) -> None:
        if self.on_stream is None:
            return
        try:
            await _maybe_await(self.on_stream(CodexToolStreamEvent(event, thread, ctx.tool_call)))
        except Exception as exc:  # a viewer's failure must not break the Codex turn
            logger.warning("codex on_stream callback failed: %s", type(exc).__name__)


# -- construction -----------------------------------------------------------------------------

_OPTION_KEYS = (
    "name",
    "description",
    "parameters",
    "output_schema",
    "codex",
    "codex_options",
    "default_thread_options",
    "thread_id",
    "sandbox_mode",
    "working_directory",
    "skip_git_repo_check",
    "default_turn_options",
    "span_data_max_chars",
    "persist_session",
    "on_stream",
    "is_enabled",
    "needs_approval",
    "failure_error_function",
    "use_run_context_thread_id",
    "run_context_thread_id_key",
)


def _merge(options: Mapping[str, Any] | None, given: dict[str, Any]) -> dict[str, Any]:
    merged: dict[str, Any] = {}
    if options is not None:
        if not isinstance(options, Mapping):
            raise UserError("codex_tool options must be a dict of codex_tool keyword arguments.")
        unknown = sorted(str(k) for k in options if k not in _OPTION_KEYS)
        if unknown:
            raise UserError(f"Unknown codex_tool option(s): {', '.join(unknown)}.")
        merged.update(options)
    merged.update({k: v for k, v in given.items() if v is not _UNSET})
    return merged


def _resolve_name(configured: Any) -> str:
    """The tool name: ``"codex"`` when unset, else the stripped name (openai-agents 0.24 rules).

    Raises:
        UserError: not a string, blank, or neither ``"codex"`` nor ``"codex_..."``.
    """
    if configured is None:
        return "codex"
    if not isinstance(configured, str):
        raise UserError("Codex tool name must be a string.")
    name = configured.strip()
    if not name:
        raise UserError("Codex tool name must be a non-empty string.")
    if not (name == "codex" or name.startswith("codex_")):
        raise UserError(_NAME_ERROR)
    return name


def _resolve_thread_id_key(tool_name: str, configured: Any, use_context: bool) -> str:
    """The run-context key of the thread id (spec §9.5; openai-agents 0.24 rules).

    An explicit key is stripped and must not be blank. Without one, ``codex`` uses
    ``codex_thread_id`` and ``codex_<suffix>`` uses ``codex_thread_id_<suffix>``. When the key is
    actually used (``use_run_context_thread_id=True``) the suffix must be non-empty and match
    ``[A-Za-z0-9_]+``, so two tool names never share a key through lossy normalisation.
    Otherwise the suffix is lowercased and other characters become ``_``, as the reference
    does for a key it never reads.

    Raises:
        UserError: a non-string or blank explicit key; an empty or non-``[A-Za-z0-9_]`` suffix
            when the key is used and not given.
    """
    if configured is not None:
        if not isinstance(configured, str):
            raise UserError("run_context_thread_id_key must be a string.")
        if not configured.strip():
            raise UserError("run_context_thread_id_key must be a non-empty string.")
        return configured.strip()
    if tool_name == "codex":
        return default_thread_id_key(tool_name)
    suffix = tool_name[len("codex_") :].strip()
    omitted = "When use_run_context_thread_id=True and run_context_thread_id_key is omitted, "
    if use_context and not suffix:
        raise UserError(
            omitted + 'codex tool names must include a non-empty suffix after "codex_".'
        )
    if use_context and not _KEY_SUFFIX.fullmatch(suffix):
        raise UserError(
            omitted + 'the codex tool name suffix (after "codex_") must match [A-Za-z0-9_]+. '
            "Use only letters, numbers, and underscores, or set run_context_thread_id_key "
            "explicitly."
        )
    if not use_context:
        suffix = re.sub(r"[^0-9a-zA-Z_]+", "_", suffix.lower()).strip("_") or "tool"
    return default_thread_id_key(f"codex_{suffix}")


def _check_parameters(parameters: Any) -> type[BaseModel] | None:
    if parameters is None:
        return None
    if not (isinstance(parameters, type) and issubclass(parameters, BaseModel)):
        raise UserError("parameters must be a Pydantic model class with an 'inputs' field.")
    if "inputs" not in parameters.model_fields:
        raise UserError("parameters must define an 'inputs' field.")
    return parameters


def codex_tool(
    options: Mapping[str, Any] | None = None,
    *,
    name: str = _UNSET,
    description: str = _UNSET,
    parameters: type[BaseModel] | None = _UNSET,
    output_schema: Mapping[str, Any] | None = _UNSET,
    codex: CodexExec | None = _UNSET,
    codex_options: CodexOptions | Mapping[str, Any] | None = _UNSET,
    default_thread_options: ThreadOptions | Mapping[str, Any] | None = _UNSET,
    thread_id: str | None = _UNSET,
    sandbox_mode: str | None = _UNSET,
    working_directory: str | None = _UNSET,
    skip_git_repo_check: bool | None = _UNSET,
    default_turn_options: TurnOptions | Mapping[str, Any] | None = _UNSET,
    span_data_max_chars: int | None = _UNSET,
    persist_session: bool = _UNSET,
    on_stream: OnStream | None = _UNSET,
    is_enabled: bool | Callable[[RunContextWrapper[Any], Any], Any] = _UNSET,
    needs_approval: bool | Callable[[RunContextWrapper[Any], dict[str, Any], str], Any] = _UNSET,
    failure_error_function: ToolErrorFunction | None = _UNSET,
    use_run_context_thread_id: bool = _UNSET,
    run_context_thread_id_key: str | None = _UNSET,
) -> FunctionTool:
    """Build the Codex tool: a strict :class:`FunctionTool` running Codex turns (spec §9.1).

    Args:
        options: a dict of the keyword arguments below (explicit keywords win).
        name: ``"codex"`` (default) or ``"codex_<suffix>"``.
        description: defaults to :data:`DEFAULT_CODEX_DESCRIPTION`.
        parameters: a Pydantic model class replacing the input schema (needs ``inputs``;
            ``thread_id`` optional).
        output_schema: JSON object schema or descriptor for Codex's final answer; overrides
            ``default_turn_options.output_schema``.
        codex: the process implementation; default: the registered one (``harnesses.codex``),
            created at the first call from ``codex_options``.
        codex_options: :class:`CodexOptions` or its dict (unused when ``codex`` is given).
        default_thread_options: :class:`ThreadOptions` or its dict.
        thread_id: a thread to resume when neither the call nor the run context names one.
        sandbox_mode / working_directory / skip_git_repo_check: override the same fields of
            ``default_thread_options``.
        default_turn_options: :class:`TurnOptions` or its dict (idle timeout in seconds, signal).
        span_data_max_chars: accepted for compatibility (positive int); Tandem has no tracing.
        persist_session: reuse one thread across calls of this tool instance.
        on_stream: ``(CodexToolStreamEvent) -> None`` (sync or async), called for every event;
            its exceptions are logged and ignored.
        is_enabled / needs_approval: as for :class:`FunctionTool`.
        failure_error_function: formats failures into the tool output (default
            :func:`default_tool_error_function`; ``None`` re-raises).
        use_run_context_thread_id: read and store the thread id in the run context object.
        run_context_thread_id_key: the context key (default ``codex_thread_id`` /
            ``codex_thread_id_<suffix>``).

    Returns:
        The tool; its output is :class:`CodexToolResult` (JSON via ``str``).

    Raises:
        UserError: a bad name, unknown option keys, invalid option values or output schema.
    """
    cfg = _merge(options, {k: v for k, v in locals().items() if k in _OPTION_KEYS})
    tool_name = _resolve_name(cfg.get("name"))
    thread_options = coerce_options(
        ThreadOptions, cfg.get("default_thread_options"), "default_thread_options"
    )
    overrides = {
        k: cfg[k]
        for k in ("sandbox_mode", "working_directory", "skip_git_repo_check")
        if cfg.get(k) is not None
    }
    if overrides:
        thread_options = dataclasses.replace(thread_options, **overrides)
    turn_options = coerce_options(
        TurnOptions, cfg.get("default_turn_options"), "default_turn_options"
    )
    if cfg.get("output_schema") is not None:
        turn_options.output_schema = normalize_output_schema(cfg["output_schema"])
    else:
        normalize_output_schema(turn_options.output_schema)  # validate early
    span_chars = cfg.get("span_data_max_chars")
    if span_chars is not None and (
        isinstance(span_chars, bool) or not isinstance(span_chars, int) or span_chars <= 0
    ):
        raise UserError("span_data_max_chars must be a positive integer or None.")
    configured_thread = cfg.get("thread_id")
    if configured_thread is not None and (
        not isinstance(configured_thread, str) or not configured_thread.strip()
    ):
        raise UserError("thread_id must be a non-blank string or None.")
    use_context = bool(cfg.get("use_run_context_thread_id", False))
    key = _resolve_thread_id_key(tool_name, cfg.get("run_context_thread_id_key"), use_context)
    params = _check_parameters(cfg.get("parameters"))
    invoker = _CodexInvoker(
        name=tool_name,
        codex=cfg.get("codex"),
        codex_options=coerce_options(CodexOptions, cfg.get("codex_options"), "codex_options"),
        thread_options=thread_options,
        turn_options=turn_options,
        thread_id=configured_thread,
        parameters=params,
        persist_session=bool(cfg.get("persist_session", False)),
        on_stream=cfg.get("on_stream"),
        failure_error_function=cfg.get("failure_error_function", default_tool_error_function),
        use_run_context_thread_id=use_context,
        run_context_thread_id_key=key,
    )
    schema = (
        params.model_json_schema()
        if params is not None
        else codex_input_schema(include_thread_id=not use_context)
    )
    return FunctionTool(
        name=tool_name,
        description=cfg.get("description") or DEFAULT_CODEX_DESCRIPTION,
        params_json_schema=schema,
        on_invoke_tool=invoker,
        strict_json_schema=True,
        is_enabled=cfg.get("is_enabled", True),
        needs_approval=cfg.get("needs_approval", False),
    )


def is_codex_tool(tool: Any) -> bool:
    """Whether ``tool`` was built by :func:`codex_tool`."""
    return isinstance(tool, FunctionTool) and isinstance(tool.on_invoke_tool, _CodexInvoker)


def validate_codex_tool_names(tools: Iterable[Any]) -> None:
    """Reject a Codex tool whose name another tool of the agent also has (spec §9.1).

    The other tool may be any tool with that ``name`` (another Codex tool, a function tool,
    an MCP tool): openai-agents 0.24 ``Agent.get_all_tools`` counts every tool's name.

    Raises:
        UserError: ``"Duplicate Codex tool names found: <names, sorted>. Provide a unique
            codex_tool(name=...) per tool instance."``.
    """
    tools = list(tools)
    codex_names = {tool.name for tool in tools if is_codex_tool(tool)}
    if not codex_names:
        return
    counts: dict[str, int] = {}
    for tool in tools:
        name = getattr(tool, "name", None)
        if isinstance(name, str) and name:
            counts[name] = counts.get(name, 0) + 1
    duplicates = sorted(name for name in codex_names if counts.get(name, 0) > 1)
    if duplicates:
        raise UserError(
            f"Duplicate Codex tool names found: {', '.join(duplicates)}. Provide a unique "
            "codex_tool(name=...) per tool instance."
        )
