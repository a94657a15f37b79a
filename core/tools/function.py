"""Function tools: ``FunctionTool``, the ``@function_tool`` decorator and invocation (spec §1)."""

from __future__ import annotations

import asyncio
import copy
import inspect
import json
import logging
import math
import os
from collections.abc import Awaitable, Callable
from dataclasses import KW_ONLY, dataclass, field
from typing import Any, Literal, TypedDict, get_origin, get_type_hints, overload

from pydantic import TypeAdapter, ValidationError
from typing_extensions import Unpack

from .._util import maybe_await as _maybe_await
from ..context import RunContextWrapper, ToolContext
from ..errors import ModelBehaviorError, ToolTimeoutError, UserError
from ..redaction import redact_text
from .docstrings import DocstringStyle, is_callable_instance
from .function_schema import FuncSchema, bound_call, function_schema
from .strict_schema import ensure_strict_json_schema

__all__ = [
    "FunctionTool",
    "ToolErrorFunction",
    "ToolTimeoutBehavior",
    "default_tool_error_function",
    "evaluate_is_enabled",
    "evaluate_needs_approval",
    "function_tool",
    "invoke_function_tool",
]

logger = logging.getLogger("core")

ToolTimeoutBehavior = Literal["error_as_result", "raise_exception"]
ToolErrorFunction = Callable[[RunContextWrapper[Any], Exception], "str | Awaitable[str]"]
"""``(run_context, error) -> message`` (sync or async); the message becomes the tool output."""

_TIMEOUT_BEHAVIORS = ("error_as_result", "raise_exception")
_CALLERS = ("direct", "programmatic")
_UNSET: Any = object()
_REDACTION_ENV = "OPENAI_AGENTS_DONT_LOG_TOOL_DATA"


def _invalid_needs_approval(setting: Any) -> str:
    return (
        f"Invalid needs_approval value: expected a bool or callable, got {type(setting).__name__}."
    )


def _dont_log_tool_data() -> bool:
    """The tool-data redaction flag (spec §1.9): on unless the variable is set to another value."""
    value = os.environ.get(_REDACTION_ENV)
    return value is None or value.strip().lower() in ("1", "true")


def default_tool_error_function(ctx: RunContextWrapper[Any], error: Exception) -> str:
    """The default failure formatter of decorator-built tools (spec §1.9).

    Args:
        ctx: the run context (unused).
        error: what the tool raised.

    Returns:
        ``"An error occurred while parsing tool arguments. Please try again with valid JSON.
        Error: <json error>"`` for an argument-decoding :class:`ModelBehaviorError` chained to a
        ``JSONDecodeError``, else ``"An error occurred while running the tool. Please try
        again. Error: <error>"``. Registered secret values and secret shapes in the error's
        text are redacted (:func:`core.redaction.redact_text`; issue 11): an exception that
        quotes a key does not carry it to the model or the journal.
    """
    if isinstance(error, ModelBehaviorError) and isinstance(error.__cause__, json.JSONDecodeError):
        return (
            "An error occurred while parsing tool arguments. Please try again with valid JSON. "
            f"Error: {error.__cause__}"
        )
    return (
        "An error occurred while running the tool. Please try again. "
        f"Error: {redact_text(str(error))}"
    )


def _first_param_is_plain_wrapper(func: Any) -> bool:
    """Whether ``func``'s first parameter is annotated ``RunContextWrapper`` (not ``ToolContext``)."""
    try:
        params = list(inspect.signature(func).parameters.values())
    except (TypeError, ValueError):
        return False
    if not params:
        return False
    annotation: Any = params[0].annotation
    target = type(func).__call__ if is_callable_instance(func) else func
    try:
        annotation = get_type_hints(target).get(params[0].name, annotation)
    except Exception:  # unresolvable forward references: fall back to the raw annotation
        pass
    if isinstance(annotation, str):
        return annotation.split("[", 1)[0].strip().rsplit(".", 1)[-1] == "RunContextWrapper"
    origin = get_origin(annotation) or annotation
    return origin is RunContextWrapper


@dataclass
class FunctionTool:
    """A tool the model calls with JSON arguments (spec §1.1).

    Attributes:
        name: the name shown to the model.
        description: the description shown to the model.
        params_json_schema: the JSON schema of the arguments, as given (decorator-built tools:
            the Pydantic-derived, non-strict schema); the strict form goes on the wire.
        on_invoke_tool: ``async (ToolContext, arguments_json_str) -> output``.
        strict_json_schema: send the strict form of the schema (computed at construction).
        is_enabled: ``bool`` or ``(run_context, agent) -> bool`` (sync or async).
        tool_input_guardrails: per-tool input guardrails (stored for the runner).
        tool_output_guardrails: per-tool output guardrails (stored for the runner).
        needs_approval: ``bool`` or ``(run_context, parsed_args, call_id) -> bool``.
        timeout_seconds: per-invocation limit in seconds (finite, > 0) or ``None``.
        timeout_behavior: ``"error_as_result"`` or ``"raise_exception"`` (spec §1.10).
        timeout_error_function: ``(run_context, ToolTimeoutError) -> str`` (sync or async).
        defer_loading: hide the definition until tool search loads it (spec §3).
        custom_data_extractor: SDK-side metadata hook, never sent.
        allowed_callers: ``["direct"]``, ``["programmatic"]`` or both.
        output_json_schema: strict object schema of the output, sent as ``output_schema``.

    Raises:
        TypeError: ``timeout_seconds`` is not a number (``bool`` included), or
            ``timeout_error_function`` is set but not callable (openai-agents 0.24 alike).
        ValueError: ``timeout_seconds`` not finite or not > 0, set on a tool built from a sync
            function, or an unknown ``timeout_behavior``.
        UserError: ``params_json_schema`` cannot be made strict, ``allowed_callers`` is
            not a non-empty list of unique ``"direct"``/``"programmatic"``, or
            ``needs_approval`` is neither a bool nor a callable.
    """

    name: str
    description: str
    params_json_schema: dict[str, Any]
    on_invoke_tool: Callable[[ToolContext[Any], str], Awaitable[Any]]
    strict_json_schema: bool = True
    is_enabled: bool | Callable[[RunContextWrapper[Any], Any], Any] = True
    tool_input_guardrails: list[Any] | None = None
    tool_output_guardrails: list[Any] | None = None
    needs_approval: bool | Callable[[RunContextWrapper[Any], dict[str, Any], str], Any] = False
    timeout_seconds: float | None = None
    timeout_behavior: ToolTimeoutBehavior = "error_as_result"
    timeout_error_function: ToolErrorFunction | None = None
    defer_loading: bool = False
    _: KW_ONLY
    custom_data_extractor: Callable[..., Any] | None = None
    allowed_callers: list[str] | None = None
    output_json_schema: dict[str, Any] | None = None
    _namespace: str | None = field(default=None, repr=False)
    _is_from_sync_function: bool = field(default=False, repr=False)
    _strict_params_json_schema: dict[str, Any] | None = field(
        init=False, default=None, repr=False, compare=False
    )
    _context_as_wrapper: bool = field(init=False, default=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self._validate_timeout()
        self._validate_needs_approval()
        self._validate_allowed_callers()
        if self.strict_json_schema:
            self._strict_params_json_schema = ensure_strict_json_schema(self.params_json_schema)
        self._context_as_wrapper = _first_param_is_plain_wrapper(self.on_invoke_tool)

    def _validate_timeout(self) -> None:
        timeout = self.timeout_seconds
        if timeout is not None:
            if isinstance(timeout, bool) or not isinstance(timeout, (int, float)):
                raise TypeError(
                    "FunctionTool timeout_seconds must be a positive number in seconds or None."
                )
            if not math.isfinite(timeout):
                raise ValueError("FunctionTool timeout_seconds must be a finite number.")
            if timeout <= 0:
                raise ValueError("FunctionTool timeout_seconds must be greater than 0.")
            if self._is_from_sync_function:
                raise ValueError(
                    "FunctionTool timeout_seconds is only supported for async @function_tool "
                    "handlers."
                )
            self.timeout_seconds = float(timeout)
        if self.timeout_behavior not in _TIMEOUT_BEHAVIORS:
            raise ValueError(
                "FunctionTool timeout_behavior must be one of: " + ", ".join(_TIMEOUT_BEHAVIORS)
            )
        if self.timeout_error_function is not None and not callable(self.timeout_error_function):
            # openai-agents 0.24 raises this TypeError at construction too.
            raise TypeError("FunctionTool timeout_error_function must be callable or None.")

    def _validate_needs_approval(self) -> None:
        # openai-agents 0.24 raises this UserError when the setting is evaluated; we raise it
        # at construction, so a bad setting never reaches a run.
        setting = self.needs_approval
        if not isinstance(setting, bool) and not callable(setting):
            raise UserError(_invalid_needs_approval(setting))

    def _validate_allowed_callers(self) -> None:
        callers = self.allowed_callers
        if callers is None:
            return
        if not isinstance(callers, list) or not callers:
            raise UserError(
                f"Tool `{self.name}` allowed_callers must be a non-empty list containing "
                "'direct', 'programmatic', or both."
            )
        for caller in callers:
            if caller not in _CALLERS:
                raise UserError(
                    f"Tool `{self.name}` allowed_callers contains unsupported caller "
                    f"{caller!r}. Expected 'direct' or 'programmatic'."
                )
        duplicate = next((c for i, c in enumerate(callers) if c in callers[:i]), None)
        if duplicate is not None:
            raise UserError(
                f"Tool `{self.name}` allowed_callers contains duplicate caller {duplicate!r}."
            )
        self.allowed_callers = list(callers)

    @property
    def wire_parameters(self) -> dict[str, Any]:
        """The ``parameters`` sent to the model: the strict form when strict, else the schema."""
        if self.strict_json_schema:
            if self._strict_params_json_schema is None:
                self._strict_params_json_schema = ensure_strict_json_schema(self.params_json_schema)
            return copy.deepcopy(self._strict_params_json_schema)
        return copy.deepcopy(self.params_json_schema)

    def to_wire(self) -> dict[str, Any]:
        """The ``tools`` array entry for this tool (spec §1.5).

        Returns:
            ``{"name", "parameters", "strict", "type": "function", "description"}`` plus
            ``"defer_loading": true``, ``allowed_callers`` and ``output_schema`` when set.
        """
        payload: dict[str, Any] = {
            "name": self.name,
            "parameters": self.wire_parameters,
            "strict": self.strict_json_schema,
            "type": "function",
            "description": self.description,
        }
        if self.defer_loading:
            payload["defer_loading"] = True
        if self.allowed_callers:
            payload["allowed_callers"] = list(self.allowed_callers)
        if self.output_json_schema is not None:
            payload["output_schema"] = copy.deepcopy(self.output_json_schema)
        return payload


# -- invocation of decorator-built tools (spec §1.7, §1.9) ----------------------------------


class _DecoratedInvoker:
    """``on_invoke_tool`` of a decorator-built tool: parse, validate, bind, call, format failures."""

    def __init__(
        self,
        func: Callable[..., Any],
        schema: FuncSchema,
        failure_error_function: ToolErrorFunction | None,
        is_async: bool,
    ) -> None:
        self.func = func
        self.schema = schema
        self.failure_error_function = failure_error_function
        self.is_async = is_async

    async def __call__(self, ctx: ToolContext[Any], args: str) -> Any:
        try:
            return await self._invoke(ctx, args)
        except asyncio.CancelledError as exc:
            task = asyncio.current_task()
            if task is not None and task.cancelling():
                raise  # this task is being cancelled (timeout, sibling failure, shutdown)
            error = Exception(str(exc) or f"Tool {self._tool_name(ctx)} was cancelled.")
            error.__cause__ = exc
            return await self._on_failure(ctx, error)
        except Exception as exc:
            return await self._on_failure(ctx, exc)

    async def _on_failure(self, ctx: ToolContext[Any], error: Exception) -> Any:
        logger.debug("tool %s failed with %s", self._tool_name(ctx), type(error).__name__)
        if self.failure_error_function is None:
            raise error
        return await _maybe_await(self.failure_error_function(ctx, error))

    def _tool_name(self, ctx: ToolContext[Any]) -> str:
        """The called tool's current name: the context's ``tool_name`` (a copied or renamed
        tool shares this invoker), else the name the schema was built with (openai-agents 0.24
        reports errors under ``ctx.tool_name`` too)."""
        name = getattr(ctx, "tool_name", None)
        return name if isinstance(name, str) and name else self.schema.name

    async def _invoke(self, ctx: ToolContext[Any], args: str) -> Any:
        tool_name = self._tool_name(ctx)
        data = _parse_arguments(tool_name, args)
        model = self.schema.params_pydantic_model
        try:
            parsed = model.model_validate(data)
        except ValidationError as exc:
            message = f"Invalid JSON input for tool {tool_name}"
            if _dont_log_tool_data():
                raise ModelBehaviorError(message) from None
            raise ModelBehaviorError(f"{message}: {exc}") from exc
        positional, keyword = self.schema.to_call_args(parsed)
        if self.schema.takes_context:
            positional.insert(0, ctx)
        if self.is_async:
            return await self.func(*positional, **keyword)
        return await asyncio.to_thread(self.func, *positional, **keyword)


def _parse_arguments(tool_name: str, args: str) -> dict[str, Any]:
    """``args`` as a JSON object (``""`` = ``{}``), spec §1.7 step 4.

    Raises:
        ModelBehaviorError: invalid JSON (chained to the ``JSONDecodeError`` and carrying the
            raw text only when tool-data redaction is off) or a non-object value.
    """
    if not args:
        return {}
    message = f"Invalid JSON input for tool {tool_name}"
    try:
        data = json.loads(args)
    except json.JSONDecodeError as exc:
        if _dont_log_tool_data():
            raise ModelBehaviorError(message) from None
        raise ModelBehaviorError(f"{message}: {args}") from exc
    if not isinstance(data, dict):
        raise ModelBehaviorError(f"{message}: expected a JSON object")
    return data


# -- the decorator ------------------------------------------------------------------------


def _is_async_callable(func: Any) -> bool:
    return inspect.iscoroutinefunction(bound_call(func))


def _output_schema(output_type: Any, output_json_schema: dict[str, Any] | None) -> Any:
    if output_type is None:
        return output_json_schema
    if output_json_schema is not None:
        raise UserError("Pass either output_type or output_json_schema to function_tool, not both.")
    schema = ensure_strict_json_schema(TypeAdapter(output_type).json_schema())
    if schema.get("type") != "object":
        raise UserError(
            "Function tool output_type must define a JSON object schema (a Pydantic model, "
            "TypedDict or dataclass); or pass output_json_schema directly."
        )
    return schema


class _FunctionToolOptions(TypedDict, total=False):
    name_override: str | None
    description_override: str | None
    docstring_style: DocstringStyle | None
    use_docstring_info: bool
    failure_error_function: ToolErrorFunction | None
    strict_mode: bool
    is_enabled: bool | Callable[[RunContextWrapper[Any], Any], Any]
    needs_approval: bool | Callable[[RunContextWrapper[Any], dict[str, Any], str], Any]
    tool_input_guardrails: list[Any] | None
    tool_output_guardrails: list[Any] | None
    timeout: float | None
    timeout_behavior: ToolTimeoutBehavior
    timeout_error_function: ToolErrorFunction | None
    defer_loading: bool
    custom_data_extractor: Callable[..., Any] | None
    allowed_callers: list[str] | None
    output_type: Any
    output_json_schema: dict[str, Any] | None


@overload
def function_tool(
    func: Callable[..., Any], **options: Unpack[_FunctionToolOptions]
) -> FunctionTool: ...


@overload
def function_tool(
    func: None = None, **options: Unpack[_FunctionToolOptions]
) -> Callable[[Callable[..., Any]], FunctionTool]: ...


def function_tool(
    func: Callable[..., Any] | None = None,
    *,
    name_override: str | None = None,
    description_override: str | None = None,
    docstring_style: DocstringStyle | None = None,
    use_docstring_info: bool = True,
    failure_error_function: ToolErrorFunction | None = _UNSET,
    strict_mode: bool = True,
    is_enabled: bool | Callable[[RunContextWrapper[Any], Any], Any] = True,
    needs_approval: bool | Callable[[RunContextWrapper[Any], dict[str, Any], str], Any] = False,
    tool_input_guardrails: list[Any] | None = None,
    tool_output_guardrails: list[Any] | None = None,
    timeout: float | None = None,
    timeout_behavior: ToolTimeoutBehavior = "error_as_result",
    timeout_error_function: ToolErrorFunction | None = None,
    defer_loading: bool = False,
    custom_data_extractor: Callable[..., Any] | None = None,
    allowed_callers: list[str] | None = None,
    output_type: Any = None,
    output_json_schema: dict[str, Any] | None = None,
) -> FunctionTool | Callable[[Callable[..., Any]], FunctionTool]:
    """Turn a Python callable into a :class:`FunctionTool` (spec §1.1, §1.2).

    Usable bare (``@function_tool``) or with options (``@function_tool(...)``).

    Args:
        func: the function, bound method or callable instance (sync or async).
        name_override: tool name instead of the callable's name.
        description_override: description instead of the docstring's.
        docstring_style: ``"google"``, ``"numpy"`` or ``"sphinx"``; detected when ``None``.
        use_docstring_info: take descriptions from the docstring.
        failure_error_function: formatter for errors (unset: :func:`default_tool_error_function`;
            ``None``: errors propagate).
        strict_mode: send the strict schema (dict-typed parameters are then rejected).
        is_enabled: see :class:`FunctionTool`.
        needs_approval: see :class:`FunctionTool`.
        tool_input_guardrails: stored on the tool.
        tool_output_guardrails: stored on the tool.
        timeout: per-call limit in seconds; async callables only.
        timeout_behavior: ``"error_as_result"`` or ``"raise_exception"``.
        timeout_error_function: formatter of the timeout output.
        defer_loading: hide the definition until tool search loads it.
        custom_data_extractor: stored on the tool, never sent.
        allowed_callers: ``["direct"]``, ``["programmatic"]`` or both.
        output_type: a type whose strict object schema becomes ``output_json_schema``.
        output_json_schema: output schema sent as ``output_schema``.

    Returns:
        The tool, or a decorator producing it when ``func`` is omitted.

    Raises:
        UserError: unsupported callable, misplaced context parameter, non-strict-able schema.
        ValueError: a timeout on a sync callable or an invalid timeout setting.
    """

    def create(the_func: Callable[..., Any]) -> FunctionTool:
        schema = function_schema(
            the_func,
            docstring_style=docstring_style,
            name_override=name_override,
            description_override=description_override,
            use_docstring_info=use_docstring_info,
            strict_json_schema=strict_mode,
        )
        is_async = _is_async_callable(the_func)
        formatter = (
            default_tool_error_function
            if failure_error_function is _UNSET
            else failure_error_function
        )
        tool = FunctionTool(
            name=schema.name,
            description=schema.description or "",
            params_json_schema=schema.params_json_schema,
            on_invoke_tool=_DecoratedInvoker(bound_call(the_func), schema, formatter, is_async),
            strict_json_schema=strict_mode,
            is_enabled=is_enabled,
            tool_input_guardrails=tool_input_guardrails,
            tool_output_guardrails=tool_output_guardrails,
            needs_approval=needs_approval,
            timeout_seconds=timeout,
            timeout_behavior=timeout_behavior,
            timeout_error_function=timeout_error_function,
            defer_loading=defer_loading,
            custom_data_extractor=custom_data_extractor,
            allowed_callers=allowed_callers,
            output_json_schema=_output_schema(output_type, output_json_schema),
            _is_from_sync_function=not is_async,
        )
        return tool

    if func is not None:
        return create(func)
    return create


# -- what the runner calls -----------------------------------------------------------------


def _invoke_context(tool: FunctionTool, ctx: ToolContext[Any]) -> RunContextWrapper[Any]:
    """The context object handed to ``on_invoke_tool`` (spec §1.12 last bullet)."""
    if not tool._context_as_wrapper:
        return ctx
    return RunContextWrapper(
        context=ctx.context, usage=ctx.usage, tool_input=ctx.tool_input, _approvals=ctx._approvals
    )


async def invoke_function_tool(tool: FunctionTool, ctx: ToolContext[Any], arguments: str) -> Any:
    """Run one call of ``tool``, applying its timeout (spec §1.10).

    Exceptions of the tool (including hand-built tools' errors) propagate unchanged; the
    runner decides how to report them.

    Args:
        tool: the function tool.
        ctx: the call's :class:`ToolContext`.
        arguments: the raw JSON argument string from the model.

    Returns:
        The tool's return value, or on timeout with ``"error_as_result"`` the output of
        ``timeout_error_function`` or ``"Tool '<name>' timed out after <s:g> seconds."``.

    Raises:
        ToolTimeoutError: the call ran past ``timeout_seconds`` with ``"raise_exception"``.
    """
    invoke_ctx: Any = _invoke_context(tool, ctx)
    if tool.timeout_seconds is None:
        return await tool.on_invoke_tool(invoke_ctx, arguments)
    task = asyncio.ensure_future(tool.on_invoke_tool(invoke_ctx, arguments))
    try:
        done, _ = await asyncio.wait({task}, timeout=tool.timeout_seconds)
    except asyncio.CancelledError:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        raise
    if not done:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        if not task.cancelled():
            return task.result()  # it finished at the deadline: its real result wins
        error = ToolTimeoutError(tool.name, tool.timeout_seconds)
        if tool.timeout_behavior == "raise_exception":
            raise error
        if tool.timeout_error_function is not None:
            return await _maybe_await(tool.timeout_error_function(ctx, error))
        return f"Tool '{tool.name}' timed out after {tool.timeout_seconds:g} seconds."
    return task.result()


async def evaluate_is_enabled(
    tool: FunctionTool, run_context: RunContextWrapper[Any], agent: Any
) -> bool:
    """Whether ``tool`` is offered this turn (spec §1.11): the bool, or the callable's result."""
    setting = tool.is_enabled
    if not callable(setting):
        return bool(setting)
    return bool(await _maybe_await(setting(run_context, agent)))


def _reject_constant(constant: str) -> Any:
    raise ValueError(f"non-standard JSON constant {constant}")


async def evaluate_needs_approval(
    tool: FunctionTool, run_context: RunContextWrapper[Any], arguments: str, call_id: str
) -> bool:
    """Whether this call needs human approval (spec §1.11, §8).

    A bool setting is returned as is. A callable gets ``(run_context, parsed_args, call_id)``
    and its (awaited) result's truth value is returned; when ``arguments`` is not a JSON object
    (invalid or empty JSON, another JSON value, or ``NaN``/``Infinity``/``-Infinity``) the
    callable is not called and approval is required (fail closed).

    Raises:
        UserError: the setting is neither a bool nor a callable (set after construction).
        Exception: whatever the callable raises.
    """
    setting = tool.needs_approval
    if isinstance(setting, bool):
        return setting
    if not callable(setting):
        raise UserError(_invalid_needs_approval(setting))
    try:
        parsed = json.loads(arguments, parse_constant=_reject_constant)
    except ValueError:
        return True
    if not isinstance(parsed, dict):
        return True
    return bool(await _maybe_await(setting(run_context, parsed, call_id)))
