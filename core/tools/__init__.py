"""Tandem's tools layer: function tools, structured outputs and the apply_patch editor seam."""

from .editor import ApplyPatchEditor, ApplyPatchOperation, ApplyPatchResult
from .function import (
    FunctionTool,
    ToolErrorFunction,
    ToolTimeoutBehavior,
    default_tool_error_function,
    evaluate_is_enabled,
    evaluate_needs_approval,
    function_tool,
    invoke_function_tool,
)
from .function_schema import FuncSchema, function_schema
from .outputs import (
    ToolOutputFileContent,
    ToolOutputFileContentDict,
    ToolOutputImage,
    ToolOutputImageDict,
    ToolOutputText,
    ToolOutputTextDict,
    function_call_output_item,
    tool_output_content,
)
from .strict_schema import ensure_strict_json_schema

__all__ = [
    "ApplyPatchEditor",
    "ApplyPatchOperation",
    "ApplyPatchResult",
    "FuncSchema",
    "FunctionTool",
    "ToolErrorFunction",
    "ToolOutputFileContent",
    "ToolOutputFileContentDict",
    "ToolOutputImage",
    "ToolOutputImageDict",
    "ToolOutputText",
    "ToolOutputTextDict",
    "ToolTimeoutBehavior",
    "default_tool_error_function",
    "ensure_strict_json_schema",
    "evaluate_is_enabled",
    "evaluate_needs_approval",
    "function_call_output_item",
    "function_schema",
    "function_tool",
    "invoke_function_tool",
    "tool_output_content",
]
