"""One step of the run loop: classify a model response and run its tool calls (spec §10.1 5-7)."""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
from dataclasses import dataclass, field
from typing import Any

from .agent import Agent
from .context import RunContextWrapper, ToolContext
from .errors import AgentsException, ModelBehaviorError, UserError
from .items import (
    InputItem,
    MCPApprovalRequestItem,
    MCPApprovalResponseItem,
    MCPListToolsItem,
    MessageOutputItem,
    ReasoningItem,
    RunItem,
    ToolApprovalItem,
    ToolCallItem,
    ToolCallOutputItem,
    ToolSearchCallItem,
    ToolSearchOutputItem,
    _strip_created_by,
    mcp_approval_key,
)
from .lifecycle import call_hook
from .run_config import RunConfig, ToolErrorFormatterArgs
from .tools.function import FunctionTool, evaluate_needs_approval, invoke_function_tool
from .tools.hosted import HostedMCPTool, mcp_approval_response_item
from .tools.local import LocalCallHandler
from .tools.outputs import function_call_output_item
from .tools.tool_search import FunctionToolLookup

__all__ = [
    "CLIENT_TOOL_SEARCH_MESSAGE",
    "DEFAULT_APPROVAL_REJECTION_MESSAGE",
    "NestedInterruption",
    "ProcessedResponse",
    "StepOutcome",
    "process_response",
    "run_tools",
]

logger = logging.getLogger("core")

DEFAULT_APPROVAL_REJECTION_MESSAGE = "Tool execution was not approved."
CLIENT_TOOL_SEARCH_MESSAGE = (
    "Client-executed tool_search calls are not supported by the standard agent runner. "
    "Handle the tool_search_call yourself and return a matching tool_search_output item with "
    "the same call_id."
)

#: Output order of local tool kinds in a step (spec §10.1 step 7).
_LOCAL_ORDER = {
    "computer_call": 0,
    "custom_tool_call": 1,
    "shell_call": 2,
    "apply_patch_call": 3,
    "local_shell_call": 4,
}
_MISSING_HANDLER = {
    "shell_call": "Model produced shell call without a shell tool.",
    "apply_patch_call": "Model produced apply_patch call without an apply_patch tool.",
    "computer_call": "Model produced computer action without a computer tool.",
    "local_shell_call": "Model produced local shell call without a local shell tool.",
}
_HOSTED_CALLS = frozenset(
    {
        "web_search_call",
        "file_search_call",
        "code_interpreter_call",
        "image_generation_call",
        "mcp_call",
    }
)


class NestedInterruption:
    """Returned by a tool whose nested run stopped on approvals (an ``Agent.as_tool`` run):
    the approvals surface on the outer run and the call gets no output yet (spec §7.4)."""

    __slots__ = ("approvals",)

    def __init__(self, approvals: list[ToolApprovalItem]) -> None:
        self.approvals = approvals


@dataclass(slots=True)
class MCPApprovalRun:
    request: dict[str, Any]
    tool: HostedMCPTool


@dataclass(slots=True)
class FunctionRun:
    call: dict[str, Any]
    tool: FunctionTool


@dataclass(slots=True)
class LocalRun:
    call: dict[str, Any]
    handler: LocalCallHandler


@dataclass(slots=True)
class ProcessedResponse:
    """A classified model response: items to record and calls to run."""

    items: list[RunItem] = field(default_factory=list)
    functions: list[FunctionRun] = field(default_factory=list)
    locals: list[LocalRun] = field(default_factory=list)
    not_found: list[dict[str, Any]] = field(default_factory=list)
    malformed: list[tuple[LocalRun, str]] = field(default_factory=list)
    mcp_approvals: list[MCPApprovalRun] = field(default_factory=list)
    hosted_activity: bool = False

    @property
    def has_tools_to_run(self) -> bool:
        return bool(
            self.functions or self.locals or self.not_found or self.malformed or self.mcp_approvals
        )


@dataclass(slots=True)
class StepOutcome:
    """What running the tools of a step produced."""

    outputs: list[ToolCallOutputItem] = field(default_factory=list)
    approvals: list[ToolApprovalItem] = field(default_factory=list)
    function_results: list[tuple[FunctionTool, Any]] = field(default_factory=list)
    mcp_manual: list[MCPApprovalResponseItem] = field(default_factory=list)
    mcp_callback: list[MCPApprovalResponseItem] = field(default_factory=list)
    notes: list[InputItem] = field(default_factory=list)


def process_response(
    agent: Agent[Any], tools: list[Any], output: list[dict[str, Any]], run_config: RunConfig
) -> ProcessedResponse:
    """Classify ``output`` items in order (spec §10.1 step 5).

    Raises:
        ModelBehaviorError: a call names no enabled tool (unless the run config returns the
            error to the model) or needs a local tool the agent does not have; an MCP approval
            request names an unconfigured server; a ``tool_search_call`` is client-executed.
    """
    functions = FunctionToolLookup(tools)
    handlers: dict[str, LocalCallHandler] = {}
    mcp_servers: dict[str, HostedMCPTool] = {}
    for tool in tools:
        if isinstance(tool, HostedMCPTool):
            mcp_servers.setdefault(tool.server_label, tool)
        for call_type in getattr(tool, "call_item_types", ()):
            handlers.setdefault(call_type, tool)
    if "local_shell_call" not in handlers and "shell_call" in handlers:
        handlers["local_shell_call"] = handlers["shell_call"]

    processed = ProcessedResponse()
    for raw in output:
        kind = raw.get("type")
        if kind == "message":
            processed.items.append(MessageOutputItem(agent=agent, raw_item=raw))
        elif kind == "reasoning":
            processed.items.append(ReasoningItem(agent=agent, raw_item=raw))
        elif kind == "function_call":
            processed.items.append(ToolCallItem(agent=agent, raw_item=raw))
            key = (raw.get("namespace"), str(raw.get("name")))
            tool = functions.find(*key)
            if tool is None:
                qualified = f"{key[0]}.{key[1]}" if key[0] else key[1]
                if run_config.tool_not_found_behavior == "raise":
                    raise ModelBehaviorError(f"Tool {qualified} not found in agent {agent.name}")
                processed.not_found.append(raw)
            else:
                processed.functions.append(FunctionRun(raw, tool))
        elif kind in _LOCAL_ORDER:
            handler = handlers.get(str(kind))
            if handler is None:
                message = _MISSING_HANDLER.get(
                    str(kind), f"Tool {raw.get('name')} not found in agent {agent.name}"
                )
                raise ModelBehaviorError(message)
            clean = {k: v for k, v in raw.items() if k != "created_by"}
            processed.items.append(ToolCallItem(agent=agent, raw_item=clean))
            if getattr(handler, "is_hosted", False):
                processed.hosted_activity = True
                continue
            try:
                handler.validate_call(clean)
            except ModelBehaviorError as exc:
                if run_config.malformed_tool_call_behavior == "raise" or not clean.get("call_id"):
                    raise
                processed.malformed.append((LocalRun(clean, handler), f"Invalid {kind}: {exc}"))
                continue
            processed.locals.append(LocalRun(clean, handler))
        elif kind in _HOSTED_CALLS:
            processed.items.append(ToolCallItem(agent=agent, raw_item=raw))
            processed.hosted_activity = True
        elif kind == "tool_search_call":
            if raw.get("execution") == "client":
                raise ModelBehaviorError(CLIENT_TOOL_SEARCH_MESSAGE)
            processed.items.append(ToolSearchCallItem(agent=agent, raw_item=raw))
            processed.hosted_activity = True
        elif kind == "tool_search_output":
            processed.items.append(ToolSearchOutputItem(agent=agent, raw_item=raw))
            processed.hosted_activity = True
        elif kind == "mcp_list_tools":
            processed.items.append(MCPListToolsItem(agent=agent, raw_item=raw))
            processed.hosted_activity = True
        elif kind == "mcp_approval_request":
            label = str(raw.get("server_label"))
            server = mcp_servers.get(label)
            if server is None:
                raise ModelBehaviorError(f"MCP server label {label} not found")
            processed.items.append(MCPApprovalRequestItem(agent=agent, raw_item=raw))
            processed.mcp_approvals.append(MCPApprovalRun(raw, server))
        elif kind in ("shell_call_output", "local_shell_call_output"):
            clean = _strip_created_by(raw)
            processed.items.append(
                ToolCallOutputItem(agent=agent, raw_item=clean, output=clean.get("output"))
            )
            processed.hosted_activity = True
        else:
            logger.warning("ignoring output item of unknown type %r", kind)
    return processed


async def _rejection_text(
    ctx: RunContextWrapper[Any],
    run_config: RunConfig,
    tool_type: str,
    tool_name: str,
    call_id: str,
    shown_name: str | None = None,
) -> str:
    explicit = ctx.rejection_message(tool_name, call_id)
    if explicit is not None:
        return explicit
    formatter = run_config.tool_error_formatter
    if formatter is not None:
        value = formatter(
            ToolErrorFormatterArgs(
                kind="approval_rejected",
                tool_type=tool_type,
                tool_name=shown_name or tool_name,
                call_id=call_id,
                default_message=DEFAULT_APPROVAL_REJECTION_MESSAGE,
                run_context=ctx,
            )
        )
        if inspect.isawaitable(value):
            value = await value
        if isinstance(value, str):
            return value
    return DEFAULT_APPROVAL_REJECTION_MESSAGE


async def _not_found_text(
    ctx: RunContextWrapper[Any], run_config: RunConfig, call: dict[str, Any]
) -> str:
    name = str(call.get("name"))
    default = f"Tool '{name}' not found."
    formatter = run_config.tool_error_formatter
    if formatter is not None:
        value = formatter(
            ToolErrorFormatterArgs(
                kind="tool_not_found",
                tool_type="function",
                tool_name=name,
                call_id=str(call.get("call_id")),
                default_message=default,
                run_context=ctx,
            )
        )
        if inspect.isawaitable(value):
            value = await value
        if isinstance(value, str):
            return value
    return default


async def run_tools(
    agent: Agent[Any],
    processed: ProcessedResponse,
    ctx: RunContextWrapper[Any],
    run_config: RunConfig,
    done_call_ids: set[str],
    hooks: Any = None,
) -> StepOutcome:
    """Decide approvals and run every call of the step not already in ``done_call_ids``.

    Function tools run concurrently; local tools run serially in model order, alongside.
    Outputs come back in the order of spec §10.1 step 7, whatever the completion order.

    Raises:
        AgentsException: a tool failed fatally (siblings are cancelled first).
        UserError: a tool without a failure handler raised ("Error running tool <name>: ...").
    """
    outcome = StepOutcome()
    function_slots: list[Any] = []
    to_run: list[tuple[int, FunctionRun]] = []
    for run in processed.functions:
        call_id = str(run.call.get("call_id"))
        if call_id in done_call_ids:
            continue
        name = _qualified(run)
        decision = ctx.is_tool_approved(name, call_id)
        if decision is None and await evaluate_needs_approval(
            run.tool, ctx, str(run.call.get("arguments") or ""), call_id
        ):
            outcome.approvals.append(
                ToolApprovalItem(
                    agent=agent,
                    raw_item=run.call,
                    tool_name=run.tool.name,
                    tool_namespace=run.tool._namespace,
                    arguments=run.call.get("arguments"),
                )
            )
            continue
        if decision is False:
            text = await _rejection_text(ctx, run_config, "function", name, call_id)
            function_slots.append(_output(agent, run.call, text))
            continue
        function_slots.append(None)
        to_run.append((len(function_slots) - 1, run))

    async def run_functions() -> None:
        if not to_run:
            return
        tasks = [
            asyncio.create_task(_invoke(agent, run, ctx, run_config, hooks)) for _, run in to_run
        ]
        try:
            await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
        except asyncio.CancelledError:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            raise
        failed = next((t for t in tasks if t.done() and not t.cancelled() and t.exception()), None)
        if failed is not None:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            raise failed.exception()  # type: ignore[misc]
        for (slot, run), task in zip(to_run, tasks, strict=True):
            value = task.result()
            if isinstance(value, NestedInterruption):
                outcome.approvals.extend(value.approvals)
                continue
            function_slots[slot] = _output(agent, run.call, value)
            outcome.function_results.append((run.tool, value))

    local_outputs: list[tuple[int, int, ToolCallOutputItem]] = []

    async def run_locals() -> None:
        for index, run in enumerate(processed.locals):
            call_id = str(run.call.get("call_id") or run.call.get("id"))
            if call_id in done_call_ids:
                continue
            item = await _run_local(agent, run, ctx, run_config, outcome, hooks)
            if item is not None:
                local_outputs.append((_LOCAL_ORDER[str(run.call["type"])], index, item))

    results = await asyncio.gather(run_functions(), run_locals(), return_exceptions=True)
    for result in results:
        if isinstance(result, BaseException):
            raise result
    outcome.outputs.extend(item for item in function_slots if item is not None)
    outcome.outputs.extend(item for _, _, item in sorted(local_outputs, key=lambda t: (t[0], t[1])))
    for call in processed.not_found:
        if str(call.get("call_id")) in done_call_ids:
            continue
        outcome.outputs.append(_output(agent, call, await _not_found_text(ctx, run_config, call)))
    for bad, message in processed.malformed:  # the error goes back as the call's output
        if str(bad.call.get("call_id")) in done_call_ids:
            continue
        refused = bad.handler.rejection(bad.call, message)
        outcome.outputs.append(
            ToolCallOutputItem(agent=agent, raw_item=refused.input_item, output=refused.output)
        )
    await _decide_mcp_approvals(agent, processed, ctx, run_config, done_call_ids, outcome)
    return outcome


async def _decide_mcp_approvals(
    agent: Agent[Any],
    processed: ProcessedResponse,
    ctx: RunContextWrapper[Any],
    run_config: RunConfig,
    done_call_ids: set[str],
    outcome: StepOutcome,
) -> None:
    """Answer hosted MCP approval requests (spec §2.5): the server's ``on_approval_request``
    callback, else a stored decision, else an interruption."""
    for run in processed.mcp_approvals:
        request = run.request
        request_id = str(request.get("id"))
        if request_id in done_call_ids:
            continue
        answer = await run.tool.decide(ctx, request)
        if answer is not None:
            item = mcp_approval_response_item(request, answer["approve"], answer.get("reason"))
            outcome.mcp_callback.append(MCPApprovalResponseItem(agent=agent, raw_item=item))
            continue
        name = str(request.get("name"))
        key = mcp_approval_key(run.tool.server_label, name)
        decision = ctx.is_tool_approved(key, request_id)
        if decision is None:
            outcome.approvals.append(
                ToolApprovalItem(
                    agent=agent,
                    raw_item=request,
                    tool_name=name,
                    arguments=request.get("arguments"),
                )
            )
            continue
        reason = None
        if decision is False:
            reason = await _rejection_text(ctx, run_config, "mcp", key, request_id, name)
        item = mcp_approval_response_item(request, decision, reason)
        outcome.mcp_manual.append(MCPApprovalResponseItem(agent=agent, raw_item=item))


def _qualified(run: FunctionRun) -> str:
    namespace = run.tool._namespace
    return f"{namespace}.{run.tool.name}" if namespace else run.tool.name


def _output(agent: Agent[Any], call: dict[str, Any], value: Any) -> ToolCallOutputItem:
    return ToolCallOutputItem(
        agent=agent, raw_item=function_call_output_item(call, value), output=value
    )


async def _invoke(
    agent: Agent[Any],
    run: FunctionRun,
    ctx: RunContextWrapper[Any],
    run_config: RunConfig,
    hooks: Any = None,
) -> Any:
    call = run.call
    if run.tool._namespace is None and "namespace" in call:
        call = {k: v for k, v in call.items() if k != "namespace"}  # synthetic (spec §3.5)
    tool_ctx = ToolContext.from_run_context(
        ctx,
        tool_name=run.tool.name,
        tool_call_id=str(call.get("call_id")),
        tool_arguments=str(call.get("arguments") or ""),
        tool_call=call,
        tool_namespace=run.tool._namespace,
        agent=agent,
        run_config=run_config,
    )
    await call_hook(hooks, agent, "on_tool_start", tool_ctx, agent, run.tool)
    try:
        value = await invoke_function_tool(run.tool, tool_ctx, str(call.get("arguments") or ""))
        if not isinstance(value, NestedInterruption):
            await call_hook(hooks, agent, "on_tool_end", tool_ctx, agent, run.tool, value)
        return value
    except AgentsException:
        raise
    except asyncio.CancelledError:
        raise
    except Exception as exc:
        raise UserError(f"Error running tool {run.tool.name}: {exc}") from exc


async def _run_local(
    agent: Agent[Any],
    run: LocalRun,
    ctx: RunContextWrapper[Any],
    run_config: RunConfig,
    outcome: StepOutcome,
    hooks: Any = None,
) -> ToolCallOutputItem | None:
    handler = run.handler
    call_id = str(run.call.get("call_id") or run.call.get("id"))
    decision = ctx.is_tool_approved(handler.name, call_id)
    rejection: str | None = None
    if decision is None and await handler.needs_approval(ctx, run.call):
        approval = ToolApprovalItem(
            agent=agent,
            raw_item=run.call,
            tool_name=handler.name,
            arguments=json.dumps(
                run.call.get("action") or run.call.get("operation") or run.call.get("actions")
            ),
        )
        answer = await handler.on_approval(ctx, approval)
        if answer is None:
            outcome.approvals.append(approval)
            return None
        decision = answer.approve
        if not answer.approve:
            rejection = answer.reason
    if decision is False:
        text = rejection or await _rejection_text(
            ctx, run_config, run.call["type"].removesuffix("_call"), handler.name, call_id
        )
        result = handler.rejection(run.call, text)
    else:
        await call_hook(hooks, agent, "on_tool_start", ctx, agent, handler)
        result = await handler.execute(ctx, run.call, agent)
        await call_hook(hooks, agent, "on_tool_end", ctx, agent, handler, result.output)
        note_items = getattr(result, "note_items", None)
        if note_items is not None:  # e.g. "the browser crashed and was restarted"
            outcome.notes.extend(InputItem(agent=agent, raw_item=note) for note in note_items())
    return ToolCallOutputItem(agent=agent, raw_item=result.input_item, output=result.output)
