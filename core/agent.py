"""``Agent``: instructions, a model and tools (names follow ``agents.Agent``)."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Generic, Literal, TypedDict

from .context import RunContextWrapper, TContext
from .errors import UserError
from .model_settings import ModelSettings

if TYPE_CHECKING:
    from .models.interface import Model

__all__ = ["Agent", "AgentBase", "StopAtTools", "ToolsToFinalOutputResult"]


class StopAtTools(TypedDict):
    """``tool_use_behavior={"stop_at_tool_names": [...]}``: stop when one of these tools ran."""

    stop_at_tool_names: list[str]


@dataclass(slots=True)
class ToolsToFinalOutputResult:
    """What a callable ``tool_use_behavior`` returns."""

    is_final_output: bool
    final_output: Any = None


_DEFAULT_FAILURE: Any = object()

ToolUseBehavior = (
    Literal["run_llm_again", "stop_on_first_tool"]
    | StopAtTools
    | Callable[[RunContextWrapper[Any], list[Any]], Any]
)


@dataclass(eq=False)
class AgentBase(Generic[TContext]):
    """Fields shared by every agent: ``name``, ``handoff_description``, ``tools``."""

    name: str
    handoff_description: str | None = None
    tools: list[Any] = field(default_factory=list)
    #: local MCP servers (:mod:`core.mcp`, issue 18); their tools come first, as in ``agents.Agent``.
    mcp_servers: list[Any] = field(default_factory=list)
    #: ``convert_schemas_to_strict``, ``failure_error_function``, ``include_server_in_tool_names``.
    mcp_config: dict[str, Any] = field(default_factory=dict)

    async def get_mcp_tools(self, run_context: RunContextWrapper[TContext]) -> list[Any]:
        """The function tools of :attr:`mcp_servers` (issue 18; ``core.mcp.get_mcp_tools``)."""
        from .mcp.agent_tools import get_mcp_tools

        return await get_mcp_tools(self, run_context)

    async def get_all_tools(self, run_context: RunContextWrapper[TContext]) -> list[Any]:
        """The tools enabled for this turn, in declaration order (spec §1.11).

        The ``is_enabled`` checks run concurrently. When one raises, the checks still running
        are cancelled and that error is raised (openai-agents 0.24 ``Agent.get_all_tools``).

        Raises:
            Exception: the first error an ``is_enabled`` callable raised.
            UserError: an enabled Codex tool shares its name with another enabled tool.
        """
        from .tools.function import FunctionTool, evaluate_is_enabled

        checks = [
            evaluate_is_enabled(tool, run_context, self) if isinstance(tool, FunctionTool) else None
            for tool in self.tools
        ]
        results = await _gather_cancelling_siblings(checks)
        mcp_tools = await self.get_mcp_tools(run_context) if self.mcp_servers else []
        tools = [
            *mcp_tools,
            *(t for t, enabled in zip(self.tools, results, strict=True) if enabled),
        ]
        from .tools.codex import validate_codex_tool_names

        validate_codex_tool_names(tools)  # openai-agents 0.24 checks the enabled tools here
        return tools


async def _gather_cancelling_siblings(checks: list[Coroutine[Any, Any, bool] | None]) -> list[bool]:
    """Await ``checks`` concurrently (``None`` = enabled); on the first error cancel the rest."""
    tasks = {i: asyncio.ensure_future(c) for i, c in enumerate(checks) if c is not None}
    if tasks:
        done, pending = await asyncio.wait(tasks.values(), return_when=asyncio.FIRST_EXCEPTION)
        failed = next((t for t in tasks.values() if t in done and t.exception()), None)
        if failed is not None:
            for task in pending:
                task.cancel()
            await asyncio.gather(*pending, return_exceptions=True)
            raise failed.exception()  # type: ignore[misc]
    return [True if c is None else tasks[i].result() for i, c in enumerate(checks)]


@dataclass(eq=False)
class Agent(AgentBase[TContext]):
    """An LLM with instructions and tools.

    Attributes:
        instructions: the system prompt: a string, or ``(run_context, agent) -> str`` (sync or
            async) evaluated at every turn. Sent as the request's ``instructions``.
        model: a model name (resolved by the run's provider) or a :class:`~core.models.Model`.
        model_settings: :class:`ModelSettings` for this agent. Left unset, a model resolved
            by name sends its defaults (:func:`~core.model_settings.get_default_model_settings`:
            ``text.verbosity`` and a reasoning effort for GPT-5 models, as openai-agents 0.24).
        tools: function tools, local runtime tools and hosted tools, in wire order.
        handoffs: agents this one may hand off to (sent as ``transfer_to_<name>`` tools).
        output_type: ``None``/``str`` for text, or a type validated from the final message's
            JSON (sent as ``text.format`` json_schema).
        tool_use_behavior: ``"run_llm_again"`` (default), ``"stop_on_first_tool"``,
            ``{"stop_at_tool_names": [...]}`` or a callable (spec §10.1 step 8).
        reset_tool_choice: omit ``tool_choice`` after the agent used a tool (default ``True``).

    Raises:
        UserError: at construction, for a non-string name or a tools value that is not a list.
    """

    instructions: str | Callable[[RunContextWrapper[TContext], Agent[TContext]], Any] | None = None
    model: str | Model | None = None
    model_settings: ModelSettings = field(default_factory=ModelSettings.implicit)
    handoffs: list[Any] = field(default_factory=list)
    output_type: Any = None
    tool_use_behavior: ToolUseBehavior = "run_llm_again"
    reset_tool_choice: bool = True
    hooks: Any = None

    def __post_init__(self) -> None:
        if not isinstance(self.name, str):
            raise UserError(f"Agent name must be a string, got {type(self.name).__name__}")
        if not isinstance(self.tools, list):
            raise UserError(f"Agent tools must be a list, got {type(self.tools).__name__}")
        if not isinstance(self.model_settings, ModelSettings):
            raise UserError("Agent model_settings must be a ModelSettings instance")
        from .tools.codex import validate_codex_tool_names

        validate_codex_tool_names(self.tools)

    def clone(self, **kwargs: Any) -> Agent[TContext]:
        """A shallow copy with the given fields replaced."""
        return replace(self, **kwargs)

    async def get_system_prompt(self, run_context: RunContextWrapper[TContext]) -> str | None:
        """The instructions for this turn (callables are called, awaited when async)."""
        if self.instructions is None or isinstance(self.instructions, str):
            return self.instructions
        if callable(self.instructions):
            value = self.instructions(run_context, self)
            if inspect.isawaitable(value):
                value = await value
            return None if value is None else str(value)
        raise UserError(
            f"Agent instructions must be a string or a callable, got {self.instructions!r}"
        )

    def as_tool(
        self,
        tool_name: str | None = None,
        tool_description: str | None = None,
        custom_output_extractor: Callable[[Any], Any] | None = None,
        is_enabled: bool | Callable[[RunContextWrapper[Any], AgentBase[Any]], Any] = True,
        on_stream: Callable[[Any], Any] | None = None,
        run_config: Any = None,
        max_turns: int | None = None,
        hooks: Any = None,
        previous_response_id: str | None = None,
        conversation_id: str | None = None,
        session: Any = None,
        failure_error_function: Callable[[RunContextWrapper[Any], Exception], Any]
        | None = _DEFAULT_FAILURE,
        needs_approval: bool | Callable[[RunContextWrapper[Any], dict[str, Any], str], Any] = False,
        parameters: Any = None,
        input_builder: Callable[[Any], Any] | None = None,
        include_input_schema: bool = False,
    ) -> Any:
        """This agent as a function tool another agent can call (spec §7).

        A call runs this agent in a nested run that shares the caller's ``context`` object and
        ``usage`` but has its own approvals; approvals it needs surface as interruptions of the
        outer run and are decided on the outer ``RunState``.

        Args:
            tool_name: the tool name (default: the agent name lower-cased, characters outside
                ``[A-Za-z0-9_]`` replaced by ``_``, with a warning).
            tool_description: the tool description (default ``""``).
            custom_output_extractor: ``(RunResult) -> str`` (sync or async) producing the tool
                output; ``RunResult.agent_tool_invocation`` names the outer call.
            is_enabled: ``bool`` or ``(run_context, agent) -> bool`` (sync or async).
            on_stream: run the nested agent streamed and call this (sync or async) with each
                :class:`AgentToolStreamEvent`, in order.
            run_config: the nested run's config (default: the caller's).
            max_turns: the nested run's turn limit (default 10).
            hooks: run hooks of the nested run.
            previous_response_id / conversation_id: server-managed state of the nested run.
            session: accepted for compatibility; Tandem's runner has no sessions (ignored).
            failure_error_function: ``(run_context, error) -> str`` for a failed nested run or
                bad arguments (default: the standard message); ``None`` re-raises.
            needs_approval: ``bool`` or ``(run_context, args, call_id) -> bool``.
            parameters: a pydantic model or dataclass type for structured arguments.
            input_builder: ``(StructuredToolInputBuilderOptions) -> str | list[item]`` (sync or
                async) building the nested input.
            include_input_schema: put the full JSON schema in the default nested message.

        Returns:
            An ``AgentTool`` (a :class:`~core.tools.function.FunctionTool`).

        Raises:
            TypeError: ``parameters`` is neither a pydantic model nor a dataclass type.
        """
        from .tools.agent_tool import agent_as_tool
        from .tools.function import default_tool_error_function

        return agent_as_tool(
            self,
            tool_name=tool_name,
            tool_description=tool_description,
            custom_output_extractor=custom_output_extractor,
            is_enabled=is_enabled,
            on_stream=on_stream,
            run_config=run_config,
            max_turns=max_turns,
            hooks=hooks,
            previous_response_id=previous_response_id,
            conversation_id=conversation_id,
            session=session,
            failure_error_function=default_tool_error_function
            if failure_error_function is _DEFAULT_FAILURE
            else failure_error_function,
            needs_approval=needs_approval,
            parameters=parameters,
            input_builder=input_builder,
            include_input_schema=include_input_schema,
        )
