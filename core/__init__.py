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
from .model_settings import ModelSettings
from .models.interface import Model, ModelProvider, ModelRequest
from .models.openai_responses import OpenAIProvider, OpenAIResponsesModel
from .models.scripted import ScriptedModel
from .result import RunResult, RunResultStreaming
from .run_config import RunConfig, ToolErrorFormatterArgs
from .run_state import RunState
from .runner import Runner
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
from .usage import Usage

__all__ = [
    "Agent",
    "AgentBase",
    "AgentUpdatedStreamEvent",
    "AgentsException",
    "ApplyPatchEditor",
    "ApplyPatchOperation",
    "ApplyPatchResult",
    "FunctionTool",
    "HandoffCallItem",
    "HandoffOutputItem",
    "ItemHelpers",
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
    "RunItem",
    "RunItemStreamEvent",
    "RunResult",
    "RunResultStreaming",
    "RunState",
    "Runner",
    "ScriptedModel",
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
    "default_tool_error_function",
    "function_tool",
]
