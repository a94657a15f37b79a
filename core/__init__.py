"""Tandem's core: agents, the runner and the tools layer on the OpenAI Responses API.

Every public name of the seed (``docs/tools``) is importable from here, so its examples run
with ``from agents import X`` replaced by ``from core import X``.
"""

from __future__ import annotations

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
    MessageOutputItem,
    ModelResponse,
    ReasoningItem,
    RunItem,
    ToolApprovalItem,
    ToolCallItem,
    ToolCallOutputItem,
)
from .lifecycle import AgentHooks, RunHooks
from .model_settings import ModelSettings
from .models.interface import Model, ModelProvider, ModelRequest
from .models.openai_responses import OpenAIProvider, OpenAIResponsesModel
from .models.scripted import ScriptedModel
from .result import RunResult, RunResultStreaming
from .run_config import RunConfig, ToolErrorFormatterArgs
from .run_state import RunState
from .runner import Runner
from .tools.apply_patch import ApplyPatchTool
from .tools.editor import ApplyPatchEditor, ApplyPatchOperation, ApplyPatchResult
from .tools.function import FunctionTool, default_tool_error_function, function_tool
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
from .tools.v4a import apply_diff
from .usage import Usage

__all__ = [
    "Agent",
    "AgentBase",
    "AgentHooks",
    "AgentUpdatedStreamEvent",
    "AgentsException",
    "ApplyPatchEditor",
    "ApplyPatchOperation",
    "ApplyPatchResult",
    "ApplyPatchTool",
    "FunctionTool",
    "HandoffCallItem",
    "HandoffOutputItem",
    "ItemHelpers",
    "LocalShellCommandRequest",
    "LocalShellTool",
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
    "ToolTimeoutError",
    "ToolsToFinalOutputResult",
    "Usage",
    "UserError",
    "apply_diff",
    "default_tool_error_function",
    "function_tool",
]
