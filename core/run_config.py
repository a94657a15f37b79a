"""Settings for a whole run (names follow ``agents.RunConfig``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from .model_settings import ModelSettings

if TYPE_CHECKING:
    from .context_window.policy import ContextPolicy
    from .models.interface import Model, ModelProvider

__all__ = ["RunConfig", "ToolErrorFormatterArgs"]


@dataclass(frozen=True, slots=True)
class ToolErrorFormatterArgs:
    """What ``RunConfig.tool_error_formatter`` receives (spec §1.13, §8).

    Attributes:
        kind: ``"approval_rejected"`` or ``"tool_not_found"``.
        tool_type: ``"function"``, ``"shell"``, ``"apply_patch"``...
        default_message: the text sent when the formatter returns ``None``.
    """

    kind: Literal["approval_rejected", "tool_not_found"]
    tool_type: str
    tool_name: str
    call_id: str
    default_message: str
    run_context: Any = None


@dataclass(slots=True)
class RunConfig:
    """Run-wide settings.

    Attributes:
        model: overrides every agent's model (a name or a :class:`Model`).
        model_provider: resolves model names (default: OpenAI Responses on ``AsyncOpenAI``).
        model_settings: overrides agent model settings field by field.
        tool_not_found_behavior: ``"raise"`` (``ModelBehaviorError``, the default) or
            ``"return_error_to_model"`` (spec §1.13).
        malformed_tool_call_behavior: for a malformed ``shell_call``/``apply_patch_call``/
            ``computer_call`` (no command, empty path, bad timeout...): ``"raise"``
            (``ModelBehaviorError``, the SDK's behaviour and the default) or
            ``"return_error_to_model"`` (Tandem's app: the error becomes the call's output).
        tool_error_formatter: ``(ToolErrorFormatterArgs) -> str | None`` for rejection and
            not-found texts.
        workflow_name: a label for logs and journals.
        auto_previous_response_id: as ``Runner.run(auto_previous_response_id=True)`` for every
            run with this config: after the first turn, send only the new items with the last
            response's ``previous_response_id`` (the server must store responses; Tandem's
            ``use_previous_response_id`` setting; issue 15, item 4).
    """

    model: str | Model | None = None
    model_provider: ModelProvider | None = None
    model_settings: ModelSettings | None = None
    tool_not_found_behavior: Literal["raise", "return_error_to_model"] = "raise"
    malformed_tool_call_behavior: Literal["raise", "return_error_to_model"] = "raise"
    tool_error_formatter: Callable[[ToolErrorFormatterArgs], Any] | None = None
    workflow_name: str = "Agent workflow"
    trace_metadata: dict[str, Any] | None = None
    #: Context-window management (issue 14; :class:`core.context_window.ContextPolicy`):
    #: ``None`` leaves the history as it is (the reference SDK's behaviour).
    context_policy: ContextPolicy | None = None
    auto_previous_response_id: bool = False
