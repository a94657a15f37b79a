"""The one exception tree of Tandem's core.

::

    AgentsException                 base of everything core raises on purpose
    ├── UserError                   misuse of the API: bad configuration, raised at construction
    ├── ModelBehaviorError          the model produced something unusable (bad JSON, unknown tool,
    │                               a failed or cut response stream)
    ├── ToolTimeoutError            a function tool ran past ``timeout_seconds`` (seed: "Function
    │                               tool timeouts"; spec §1.10)
    ├── MaxTurnsExceeded            the run used more than ``max_turns`` model round trips
    ├── RunCancelledError           the host cancelled the run (``RunResultStreaming.cancel``)
    └── ModelProviderError          the model service failed after retries (HTTP, network)

Names follow the OpenAI Agents SDK (``agents.exceptions``) so seed examples run unchanged.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "AgentsException",
    "MaxTurnsExceeded",
    "ModelBehaviorError",
    "ModelProviderError",
    "RunCancelledError",
    "ToolTimeoutError",
    "UserError",
]


class AgentsException(Exception):
    """Base class of every exception core raises on purpose.

    Attributes:
        run_data: optional snapshot of the run at the time of the error (set by the runner).
    """

    def __init__(self, message: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.run_data: Any = None


class UserError(AgentsException):
    """The API was used wrongly (a configuration error, raised as early as possible)."""


class ModelBehaviorError(AgentsException):
    """The model produced output the runner cannot use (malformed JSON, unknown tool, ...)."""


class MaxTurnsExceeded(AgentsException):
    """The run exceeded ``max_turns`` model round trips; message ``"Max turns (<n>) exceeded"``."""


class RunCancelledError(AgentsException):
    """The run was cancelled by its host before it finished."""


class ModelProviderError(AgentsException):
    """The model provider failed after its retries (HTTP status or network error).

    Attributes:
        status_code: the last HTTP status, or ``None`` for a network failure.
    """

    def __init__(self, message: str, status_code: int | None = None) -> None:
        super().__init__(message)
        self.status_code = status_code


class ToolTimeoutError(AgentsException):
    """A function tool invocation exceeded its ``timeout_seconds`` (spec §1.10).

    Attributes:
        tool_name: the tool's name as sent to the model.
        timeout_seconds: the configured limit, in seconds.
    """

    def __init__(self, tool_name: str, timeout_seconds: float) -> None:
        self.tool_name = tool_name
        self.timeout_seconds = timeout_seconds
        super().__init__(f"Tool '{tool_name}' timed out after {timeout_seconds:g} seconds.")
