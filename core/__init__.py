"""Tandem's core: agents, the runner and the tools layer on the OpenAI Responses API.

Every public name of the seed (``docs/tools``) is importable from here, so its examples run
with ``from agents import X`` replaced by ``from core import X``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .models.openai_responses import OpenAIResponsesModel
    from .models.scripted import ScriptedModel

from .agent import Agent, AgentBase, StopAtTools, ToolsToFinalOutputResult
from .context import RunContextWrapper, ToolContext
from .errors import (
    AgentsException,
    MaxTurnsExceeded,
    ModelBehaviorError,
    ModelProviderError,
    RunCancelledError,
    ToolTimeoutError,
    UserError,
)
from .events import (
    AgentUpdatedStreamEvent,
    RawResponsesStreamEvent,
    RunItemStreamEvent,
    StreamEvent,
)
from .items import (
    HandoffCallItem,
    HandoffOutputItem,
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
from .lifecycle import AgentHooks, RunHooks
from .model_settings import ModelSettings
from .models.interface import Model, ModelProvider, ModelRequest
from .models.provider import OpenAIProvider
from .result import RunResult, RunResultStreaming
from .run_config import RunConfig, ToolErrorFormatterArgs
from .run_state import RunState
from .runner import Runner
from .tools.agent_tool import (
    AgentToolInvocation,
    AgentToolStreamEvent,
    StructuredToolInputBuilderOptions,
)
from .tools.apply_patch import ApplyPatchTool
from .tools.codex import (
    CodexOptions,
    CodexToolResult,
    CodexToolStreamEvent,
    ThreadOptions,
    TurnOptions,
    codex_tool,
)
from .tools.computer import (
    AsyncComputer,
    Computer,
    ComputerCallResult,
    ComputerProvider,
    ComputerRestartedError,
    ComputerTool,
    ComputerToolSafetyCheckData,
)
from .tools.editor import ApplyPatchEditor, ApplyPatchOperation, ApplyPatchResult
from .tools.function import FunctionTool, default_tool_error_function, function_tool
from .tools.hosted import (
    CodeInterpreterTool,
    FileSearchTool,
    HostedMCPTool,
    ImageGenerationTool,
    MCPToolApprovalFunctionResult,
    MCPToolApprovalRequest,
    WebSearchTool,
)
from .tools.outputs import (
    ToolOutputFileContent,
    ToolOutputFileContentDict,
    ToolOutputImage,
    ToolOutputImageDict,
    ToolOutputText,
    ToolOutputTextDict,
)
from .tools.shell import (
    LocalShellCommandRequest,
    LocalShellTool,
    ShellActionRequest,
    ShellCallData,
    ShellCallOutcome,
    ShellCommandOutput,
    ShellCommandRequest,
    ShellResult,
    ShellTool,
    ShellToolContainerAutoEnvironment,
    ShellToolContainerNetworkPolicy,
    ShellToolContainerNetworkPolicyAllowlist,
    ShellToolContainerNetworkPolicyDisabled,
    ShellToolContainerNetworkPolicyDomainSecret,
    ShellToolContainerReferenceEnvironment,
    ShellToolContainerSkill,
    ShellToolEnvironment,
    ShellToolHostedEnvironment,
    ShellToolInlineSkill,
    ShellToolInlineSkillSource,
    ShellToolLocalEnvironment,
    ShellToolLocalSkill,
    ShellToolSkillReference,
)
from .tools.tool_search import ToolSearchTool, tool_namespace
from .tools.v4a import apply_diff
from .usage import Usage

__all__ = [
    "Agent",
    "AgentBase",
    "AgentHooks",
    "AgentToolInvocation",
    "AgentToolStreamEvent",
    "AgentUpdatedStreamEvent",
    "AgentsException",
    "ApplyPatchEditor",
    "ApplyPatchOperation",
    "ApplyPatchResult",
    "ApplyPatchTool",
    "AsyncComputer",
    "CodeInterpreterTool",
    "CodexOptions",
    "CodexToolResult",
    "CodexToolStreamEvent",
    "Computer",
    "ComputerCallResult",
    "ComputerProvider",
    "ComputerRestartedError",
    "ComputerTool",
    "ComputerToolSafetyCheckData",
    "FileSearchTool",
    "FunctionTool",
    "HandoffCallItem",
    "HandoffOutputItem",
    "HostedMCPTool",
    "ImageGenerationTool",
    "ItemHelpers",
    "LocalShellCommandRequest",
    "LocalShellTool",
    "MCPApprovalRequestItem",
    "MCPApprovalResponseItem",
    "MCPListToolsItem",
    "MCPToolApprovalFunctionResult",
    "MCPToolApprovalRequest",
    "MaxTurnsExceeded",
    "MessageOutputItem",
    "Model",
    "ModelBehaviorError",
    "ModelProvider",
    "ModelProviderError",
    "ModelRequest",
    "ModelResponse",
    "ModelSettings",
    "OpenAIProvider",
    "OpenAIResponsesModel",
    "RawResponsesStreamEvent",
    "ReasoningItem",
    "RunCancelledError",
    "RunConfig",
    "RunContextWrapper",
    "RunHooks",
    "RunItem",
    "RunItemStreamEvent",
    "RunResult",
    "RunResultStreaming",
    "RunState",
    "Runner",
    "ScriptedModel",
    "ShellActionRequest",
    "ShellCallData",
    "ShellCallOutcome",
    "ShellCommandOutput",
    "ShellCommandRequest",
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
    "StopAtTools",
    "StreamEvent",
    "StructuredToolInputBuilderOptions",
    "ThreadOptions",
    "ToolApprovalItem",
    "ToolCallItem",
    "ToolCallOutputItem",
    "ToolContext",
    "ToolErrorFormatterArgs",
    "ToolOutputFileContent",
    "ToolOutputFileContentDict",
    "ToolOutputImage",
    "ToolOutputImageDict",
    "ToolOutputText",
    "ToolOutputTextDict",
    "ToolSearchCallItem",
    "ToolSearchOutputItem",
    "ToolSearchTool",
    "ToolTimeoutError",
    "ToolsToFinalOutputResult",
    "TurnOptions",
    "Usage",
    "UserError",
    "WebSearchTool",
    "apply_diff",
    "codex_tool",
    "default_tool_error_function",
    "function_tool",
    "tool_namespace",
]


def __getattr__(name: str) -> Any:
    """Load the ``openai``-backed models on first use (importing ``openai`` takes ~0.7 s)."""
    if name == "OpenAIResponsesModel":
        from .models.openai_responses import OpenAIResponsesModel

        return OpenAIResponsesModel
    if name == "ScriptedModel":
        from .models.scripted import ScriptedModel

        return ScriptedModel
    raise AttributeError(f"module 'core' has no attribute {name!r}")
