"""The turn loop shared by ``Runner.run`` and ``Runner.run_streamed`` (spec §10.1)."""

from __future__ import annotations

import copy
import inspect
import json
import logging
import os
from collections.abc import Callable
from typing import Any

from ._tool_exec import (
    CLIENT_TOOL_SEARCH_MESSAGE,
    ProcessedResponse,
    StepOutcome,
    process_response,
    run_tools,
)
from .agent import Agent, ToolsToFinalOutputResult
from .context import RunContextWrapper
from .context_window.manager import ContextManager, is_context_overflow
from .errors import MaxTurnsExceeded, ModelBehaviorError, ModelProviderError, UserError
from .events import (
    AgentUpdatedStreamEvent,
    RawResponsesStreamEvent,
    RunItemStreamEvent,
    StreamEvent,
)
from .items import (
    ItemHelpers,
    MCPApprovalRequestItem,
    MCPApprovalResponseItem,
    MCPListToolsItem,
    MessageOutputItem,
    ModelResponse,
    ReasoningItem,
    RunItem,
    ToolApprovalItem,
    ToolCallItem,
    ToolCallOutputItem,
    ToolSearchCallItem,
    ToolSearchOutputItem,
)
from .lifecycle import call_hook
from .models.history import InputHistory
from .models.interface import Model, ModelRequest
from .models.provider import OpenAIProvider
from .models.stream_ids import ItemIds
from .models.wire import item_to_dict
from .result import RunResult
from .run_config import RunConfig
from .run_state import RunState
from .secret_handoff import env_value
from .tools.computer import ensure_single_computer_tool
from .tools.tool_search import (
    ToolSearchTool,
    tools_payload,
    validate_named_tool_choice,
    validate_tool_search_configuration,
)
from .usage import Usage

__all__ = ["RunLoop", "convert_tool_choice"]

logger = logging.getLogger("core")

_HOSTED_CHOICES = {
    "file_search",
    "web_search",
    "web_search_preview",
    "image_generation",
    "code_interpreter",
    "computer_use_preview",
    "mcp",
    "programmatic_tool_calling",
}
_TERMINAL_EVENTS = {"response.failed", "response.incomplete", "error"}


def convert_tool_choice(choice: Any) -> Any:
    """``ModelSettings.tool_choice`` in wire form (spec §0)."""
    if choice is None or isinstance(choice, dict):
        return choice
    if choice in ("auto", "required", "none"):
        return choice
    if choice in _HOSTED_CHOICES:
        return {"type": choice}
    return {"type": "function", "name": str(choice)}


_NAMED_ITEMS: tuple[tuple[type[Any], str], ...] = (
    (MessageOutputItem, "message_output_created"),
    (ReasoningItem, "reasoning_item_created"),
    (ToolSearchCallItem, "tool_search_called"),
    (ToolSearchOutputItem, "tool_search_output_created"),
    (MCPApprovalRequestItem, "mcp_approval_requested"),
    (MCPApprovalResponseItem, "mcp_approval_response"),
    (MCPListToolsItem, "mcp_list_tools"),
    (ToolCallOutputItem, "tool_output"),
)


def _item_event_name(item: RunItem) -> str | None:
    """The ``RunItemStreamEvent`` name of an item (spec §10.3); ``None``: not streamed."""
    for cls, name in _NAMED_ITEMS:
        if isinstance(item, cls):
            return name
    if isinstance(item, ToolCallItem):
        return "tool_called"
    return None


class RunLoop:
    """One run: owns the history, the generated items and the turn counter."""

    def __init__(
        self,
        agent: Agent[Any],
        input: str | list[dict[str, Any]] | RunState,
        *,
        context: Any,
        max_turns: int | None,
        run_config: RunConfig | None,
        previous_response_id: str | None,
        auto_previous_response_id: bool,
        conversation_id: str | None,
        emit: Callable[[StreamEvent], None] | None,
        hooks: Any = None,
        context_wrapper: RunContextWrapper[Any] | None = None,
    ) -> None:
        self.hooks = hooks
        if run_config is Ellipsis:  # the docs' placeholder ``run_config=...``: the default
            run_config = None
        self.run_config = run_config or RunConfig()
        self.emit = emit
        self.resume_pending = False
        if isinstance(input, RunState):
            state = input
            self.agent = state.current_agent
            self.original_input = state.original_input
            self.ctx = state.context
            if context is not None:
                self.ctx.context = context
            self.generated: list[RunItem] = list(state.generated_items)
            self.responses: list[ModelResponse] = list(state.model_responses)
            self.current_turn = state.current_turn
            self.max_turns = state.max_turns if max_turns is None else max_turns
            self.previous_response_id = state.previous_response_id
            self.conversation_id = state.conversation_id
            self.auto_previous_response_id = state.auto_previous_response_id
            self.tool_use_tracker = dict(state.tool_use_tracker)
            self.last_output = state.last_model_output
            self.resume_pending = (
                bool(state.get_interruptions()) and state.last_model_output is not None
            )
        else:
            self.agent = agent
            self.original_input = copy.deepcopy(input) if isinstance(input, list) else input
            self.ctx = context_wrapper or RunContextWrapper(context=context)
            self.generated = []
            self.responses = []
            self.current_turn = 0
            self.max_turns = 10 if max_turns is None else max_turns
            self.previous_response_id = previous_response_id
            self.conversation_id = conversation_id
            self.auto_previous_response_id = auto_previous_response_id
            self.tool_use_tracker = {}
            self.last_output = None
        self.history = InputHistory(ItemHelpers.input_to_new_input_list(self.original_input))
        # call ids (and MCP approval request ids) already answered: kept as items are recorded,
        # never rebuilt over the whole run (issue 15, item 4)
        self.done_ids: set[str] = set()
        for item in self.generated:
            _note_done(self.done_ids, item)
            wire = item.to_input_item()
            if wire is not None:
                self.history.append(wire)
        self.auto_previous_response_id = (
            self.auto_previous_response_id or self.run_config.auto_previous_response_id
        )
        self.chain_only = bool(self.auto_previous_response_id and not self.conversation_id)
        self.chain_only = self.chain_only and previous_response_id is None
        self.server_managed = bool(
            self.previous_response_id or self.conversation_id or self.auto_previous_response_id
        )
        self.sent_upto = len(self.history) if self.previous_response_id and self.generated else 0
        policy = self.run_config.context_policy  # issue 14: context-window management
        resumed = input.context_state if isinstance(input, RunState) else None
        self.context_manager = ContextManager(policy, resumed) if policy is not None else None

    # -- plumbing ----------------------------------------------------------------------------
    def _send(self, event: StreamEvent) -> None:
        if self.emit is not None:
            self.emit(event)

    def _record(self, items: list[RunItem], *, stream: bool = True) -> None:
        for item in items:
            self.generated.append(item)
            _note_done(self.done_ids, item)
            wire = item.to_input_item()
            if wire is not None:
                self.history.append(wire)
            if stream:
                name = _item_event_name(item)
                if name is not None:
                    self._send(RunItemStreamEvent(name=name, item=item))  # type: ignore[arg-type]

    def _state(self) -> RunState:
        return RunState(
            current_agent=self.agent,
            original_input=self.original_input,
            context=self.ctx,
            generated_items=list(self.generated),
            model_responses=list(self.responses),
            last_model_output=self.last_output,
            current_turn=self.current_turn,
            max_turns=self.max_turns,
            previous_response_id=self.previous_response_id,
            conversation_id=self.conversation_id,
            auto_previous_response_id=self.auto_previous_response_id,
            tool_use_tracker=dict(self.tool_use_tracker),
            context_state=self.context_manager.state if self.context_manager else None,
        )

    def _result(
        self, final_output: Any, interruptions: list[ToolApprovalItem] | None = None
    ) -> RunResult:
        return RunResult(
            input=self.original_input,
            new_items=list(self.generated),
            raw_responses=list(self.responses),
            final_output=final_output,
            last_agent=self.agent,
            context_wrapper=self.ctx,
            interruptions=interruptions or [],
            _state=self._state(),
        )

    def _model(self) -> Model:
        chosen = self.run_config.model or self.agent.model
        if isinstance(chosen, Model):
            return chosen
        provider = self.run_config.model_provider or _default_provider()
        return provider.get_model(chosen)

    # -- the loop ----------------------------------------------------------------------------
    async def run(self, *, streamed: bool) -> RunResult:
        """Run turns until a final output or an interruption.

        Tools that define ``async on_run_start(ctx)`` / ``async on_run_end(ctx)`` (e.g. a
        ``ComputerTool`` resolving its factory once per run) are called around the run, the
        end hook also when the run fails or is cancelled.

        Raises:
            MaxTurnsExceeded, ModelBehaviorError, ModelProviderError, UserError, ToolTimeoutError.
        """
        started = await self._run_start_hooks()
        try:
            return await self._run(streamed)
        finally:
            for tool in reversed(started):
                try:
                    await tool.on_run_end(self.ctx)
                except Exception:  # a failing dispose must not hide the run's outcome
                    logger.exception("on_run_end of %s failed", type(tool).__name__)

    async def _run_start_hooks(self) -> list[Any]:
        started: list[Any] = []
        for tool in self.agent.tools:
            hook = getattr(tool, "on_run_start", None)
            if hook is None:
                continue
            try:
                await hook(self.ctx)
            except BaseException:
                for done in reversed(started):
                    await done.on_run_end(self.ctx)
                raise
            started.append(tool)
        return started

    async def _run(self, streamed: bool) -> RunResult:
        self._send(AgentUpdatedStreamEvent(new_agent=self.agent))
        if self.resume_pending and self.last_output is not None:
            result = await self._resolve(self.last_output, resumed=True)
            if result is not None:
                return result
        while True:
            if self.max_turns is not None and self.current_turn >= self.max_turns:
                raise MaxTurnsExceeded(f"Max turns ({self.max_turns}) exceeded")
            self.current_turn += 1
            response = await self._call_model(streamed)
            self.responses.append(response)
            self.ctx.usage.add(Usage.from_response_usage(response.usage))
            self.last_output = response.output
            if self.server_managed:
                self.previous_response_id = response.response_id or self.previous_response_id
            result = await self._resolve(response.output, resumed=False)
            if result is not None:
                return result

    async def _build_request(self) -> ModelRequest:
        agent = self.agent
        tools = await agent.get_all_tools(self.ctx)
        self._tools = tools
        settings = agent.model_settings.resolve(self.run_config.model_settings)
        if agent.reset_tool_choice and self.tool_use_tracker.get(agent.name):
            settings.tool_choice = None
        model_name = self.run_config.model if isinstance(self.run_config.model, str) else None
        if model_name is None and isinstance(agent.model, str):
            model_name = agent.model
        if model_name is None:  # a Model object: its name decides payloads (computer GA vs preview)
            named = getattr(self.run_config.model or agent.model, "model", None)
            model_name = named if isinstance(named, str) else None
        ensure_single_computer_tool(tools)
        settings.tool_choice = _normalize_tool_choice(settings.tool_choice, tools, model_name)
        validate_tool_search_configuration(tools)
        if any(isinstance(t, ToolSearchTool) and t.execution == "client" for t in tools):
            # the standard runner cannot execute client tool search: refuse before any request
            raise UserError(CLIENT_TOOL_SEARCH_MESSAGE)
        includes = [i for tool in tools for i in getattr(tool, "request_include", ())]
        if includes:
            settings.include = list(dict.fromkeys([*(settings.include or []), *includes]))
        if self.server_managed and (self.previous_response_id or self.conversation_id):
            history = self.history.view(self.sent_upto)  # the unsent tail, bytes cached
        else:
            history = self.history
        return ModelRequest(
            model=model_name,
            instructions=await agent.get_system_prompt(self.ctx),
            input=history,
            tools=tools_payload(tools, model_name),
            model_settings=settings,
            output_schema=_output_schema(agent.output_type),
            previous_response_id=self.previous_response_id if self.server_managed else None,
            conversation_id=self.conversation_id,
        )

    async def _call_model(self, streamed: bool) -> ModelResponse:
        request = await self._build_request()
        model = self._model()
        if self.context_manager is not None and not self.server_managed:
            request = await self.context_manager.before_request(request, model, self.history)
        self.sent_upto = len(self.history)
        if self.current_turn == 1 and not self.generated:
            await call_hook(self.hooks, self.agent, "on_agent_start", self.ctx, self.agent)
        await call_hook(
            self.hooks,
            self.agent,
            "on_llm_start",
            self.ctx,
            self.agent,
            request.instructions,
            request.input.items,
        )
        try:
            response = await self._fetch_managed(model, request, streamed)
        except ModelProviderError as exc:
            if not self._chain_refused(request, exc):
                raise
            # the server does not keep responses (or lost this one): send the whole history
            logger.warning("previous_response_id refused (%s); sending the full history", exc)
            self.server_managed = self.auto_previous_response_id = self.chain_only = False
            self.previous_response_id = None
            request = await self._build_request()
            if self.context_manager is not None:
                request = await self.context_manager.before_request(request, model, self.history)
            response = await self._fetch_managed(model, request, streamed)
        await call_hook(self.hooks, self.agent, "on_llm_end", self.ctx, self.agent, response)
        return response

    def _chain_refused(self, request: ModelRequest, exc: ModelProviderError) -> bool:
        """Whether ``exc`` is the server refusing a ``previous_response_id`` this run chose on
        its own (``auto_previous_response_id``): then the run goes on with full bodies."""
        return (
            self.chain_only
            and request.previous_response_id is not None
            and exc.status_code in (400, 404)
            and "previous" in f"{exc} {exc.__cause__ or ''}".lower()  # the server's own words
        )

    async def _fetch_managed(
        self, model: Model, request: ModelRequest, streamed: bool
    ) -> ModelResponse:
        """``_fetch`` with issue 14's recovery: a ``context_length_exceeded`` answer makes the
        context manager compact and the request is sent again (twice at most)."""
        manager = self.context_manager
        attempts = 0
        while True:
            try:
                response = await self._fetch(model, request, streamed)
            except (ModelProviderError, ModelBehaviorError) as exc:
                if manager is None or self.server_managed or attempts >= 2:
                    raise
                if not is_context_overflow(exc):
                    raise
                attempts += 1
                request = await manager.recover(request, model, self.history, exc)
                continue
            if manager is not None and not self.server_managed:
                manager.after_response(request, response, self.history)
            return response

    async def _fetch(self, model: Model, request: ModelRequest, streamed: bool) -> ModelResponse:
        ids = ItemIds()  # issue 16: one id per output item, when the server sends none
        if not streamed:
            response = await model.get_response(request)
            ids.items(response.output)
            return response
        completed: Any = None
        done_items: list[dict[str, Any]] = []
        async for event in model.stream_response(request):
            ids.event(event)
            self._send(RawResponsesStreamEvent(data=event))
            kind = getattr(event, "type", "")
            if kind == "response.output_item.done":
                done_items.append(item_to_dict(event.item))
            elif kind == "response.completed":
                completed = event.response
            elif kind in _TERMINAL_EVENTS:
                raise ModelBehaviorError(
                    f"Responses stream ended with terminal event {kind}: {_event_detail(event)}"
                )
        if completed is None:
            raise ModelBehaviorError("Model did not produce a final response!")
        output = ids.items([item_to_dict(i) for i in completed.output or []] or done_items)
        return ModelResponse(output=output, usage=completed.usage, response_id=completed.id)

    async def _resolve(self, output: list[dict[str, Any]], *, resumed: bool) -> RunResult | None:
        agent = self.agent
        tools = getattr(self, "_tools", None)
        if tools is None or resumed:
            tools = await agent.get_all_tools(self.ctx)
        processed = process_response(agent, tools, output, self.run_config)
        if resumed:
            self.generated = [i for i in self.generated if not isinstance(i, ToolApprovalItem)]
        else:
            self._record(processed.items)
            if self.server_managed:
                self.sent_upto = len(self.history)
        outcome = await run_tools(
            agent, processed, self.ctx, self.run_config, self.done_ids, self.hooks
        )
        self._record(list(outcome.outputs))
        self._record(list(outcome.notes), stream=False)
        if outcome.outputs:
            self.tool_use_tracker[agent.name] = True
        self._record(list(outcome.mcp_manual))
        if outcome.approvals:
            self._record(list(outcome.approvals), stream=False)
        self._record(list(outcome.mcp_callback))
        if outcome.approvals:
            return self._result(None, outcome.approvals)
        final = await self._tool_use_final(processed, outcome)
        if final is not None:
            await call_hook(self.hooks, agent, "on_agent_end", self.ctx, agent, final.final_output)
            return self._result(final.final_output)
        if processed.has_tools_to_run or resumed:
            return None
        messages = [i for i in processed.items if isinstance(i, MessageOutputItem)]
        if not messages and processed.hosted_activity:
            return None
        text = ItemHelpers.text_message_output(messages[-1]) if messages else ""
        final_output = _parse_final_output(agent.output_type, text)
        await call_hook(self.hooks, agent, "on_agent_end", self.ctx, agent, final_output)
        return self._result(final_output)

    async def _tool_use_final(
        self, processed: ProcessedResponse, outcome: StepOutcome
    ) -> ToolsToFinalOutputResult | None:
        behavior = self.agent.tool_use_behavior
        results = outcome.function_results
        if behavior == "run_llm_again" or not results:
            return None
        if behavior == "stop_on_first_tool":
            return ToolsToFinalOutputResult(is_final_output=True, final_output=results[0][1])
        if isinstance(behavior, dict):
            names = set(behavior.get("stop_at_tool_names", []))
            for tool, value in results:
                if tool.name in names:
                    return ToolsToFinalOutputResult(is_final_output=True, final_output=value)
            return None
        if callable(behavior):
            value = behavior(self.ctx, [_FunctionToolResult(t, v) for t, v in results])
            if inspect.isawaitable(value):
                value = await value
            if isinstance(value, ToolsToFinalOutputResult) and value.is_final_output:
                return value
            return None
        raise UserError(f"Invalid tool_use_behavior: {behavior!r}")


def _note_done(done: set[str], item: RunItem) -> None:
    """Add the id an item answers to ``done``: a tool output's ``call_id``, an MCP approval
    response's ``approval_request_id`` (what ``run_tools`` must not run again)."""
    if isinstance(item, ToolCallOutputItem):
        done.add(str(item.raw_item.get("call_id")))
    elif isinstance(item, MCPApprovalResponseItem):
        done.add(str(item.raw_item.get("approval_request_id")))


class _FunctionToolResult:
    """What a callable ``tool_use_behavior`` sees for each function tool run."""

    __slots__ = ("output", "tool")

    def __init__(self, tool: Any, output: Any) -> None:
        self.tool = tool
        self.output = output


def _normalize_tool_choice(choice: Any, tools: list[Any], model: str | None) -> Any:
    """Let a tool claim a ``tool_choice`` alias first (e.g. ``ComputerTool`` maps ``"computer"``
    to the selector of the effective model, spec §6.6), then check a named choice against tool
    search (spec §3.6) and convert it (spec §0).

    Raises:
        UserError: a named choice on a namespace, a bare inner name, a deferred-only tool or
            ``"tool_search"`` (spec §3.6).
    """
    if isinstance(choice, str):
        for tool in tools:
            claim = getattr(tool, "normalize_tool_choice", None)
            if claim is not None:
                claimed = claim(choice, model)
                if claimed is not None:
                    return claimed
        if choice not in _HOSTED_CHOICES:
            validate_named_tool_choice(choice, tools)
    return convert_tool_choice(choice)


def _output_schema(output_type: Any) -> dict[str, Any] | None:
    if output_type is None or output_type is str:
        return None
    from pydantic import TypeAdapter

    from .tools.strict_schema import ensure_strict_json_schema

    schema = TypeAdapter(output_type).json_schema()
    if schema.get("type") != "object":
        schema = {
            "type": "object",
            "properties": {"response": schema},
            "required": ["response"],
            "additionalProperties": False,
        }
    strict: dict[str, Any] = ensure_strict_json_schema(schema)
    return strict


def _parse_final_output(output_type: Any, text: str) -> Any:
    if output_type is None or output_type is str:
        return text
    from pydantic import TypeAdapter, ValidationError

    adapter = TypeAdapter(output_type)
    try:
        if adapter.json_schema().get("type") == "object":
            return adapter.validate_json(text)
        return adapter.validate_python(json.loads(text)["response"])
    except (ValidationError, ValueError, KeyError, TypeError) as exc:
        raise ModelBehaviorError(
            f"Invalid JSON when parsing {text!r} for {output_type}: {exc}"
        ) from exc


def _event_detail(event: Any) -> str:
    response = getattr(event, "response", None)
    if response is not None:
        return str(
            getattr(response, "error", None) or getattr(response, "incomplete_details", None)
        )
    return str(getattr(event, "message", "") or "")


_providers: dict[tuple[str | None, str | None], OpenAIProvider] = {}


def _default_provider() -> OpenAIProvider:
    """The OpenAI provider for the current ``OPENAI_API_KEY``/``OPENAI_BASE_URL`` (cached per pair)."""
    key = (env_value("OPENAI_API_KEY"), os.environ.get("OPENAI_BASE_URL"))
    provider = _providers.get(key)
    if provider is None:
        provider = _providers[key] = OpenAIProvider(api_key=key[0], base_url=key[1])
    return provider
