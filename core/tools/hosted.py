"""Hosted OpenAI tools: definitions sent to the Responses API, run on OpenAI's side (spec §2)."""

from __future__ import annotations

import copy
import inspect
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, NotRequired, TypedDict

from ..errors import UserError

if TYPE_CHECKING:
    from ..context import RunContextWrapper

__all__ = [
    "CodeInterpreterTool",
    "FileSearchTool",
    "HostedMCPTool",
    "ImageGenerationTool",
    "MCPToolApprovalFunction",
    "MCPToolApprovalFunctionResult",
    "MCPToolApprovalRequest",
    "WebSearchTool",
    "mcp_approval_response_item",
]

logger = logging.getLogger("core")

_CALLERS = ("direct", "programmatic")


def _plain(value: Any) -> Any:
    """A JSON-ready copy of ``value`` (pydantic models dumped), ``None`` entries of dicts dropped."""
    dump = getattr(value, "model_dump", None)
    if dump is not None:
        value = dump(mode="json", exclude_none=True)
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items() if v is not None}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def _validate_allowed_callers(tool: str, config: Mapping[str, Any]) -> None:
    if "allowed_callers" not in config or config["allowed_callers"] is None:
        return
    callers = config["allowed_callers"]
    if not isinstance(callers, list) or not callers:
        raise UserError(
            f"Tool `{tool}` allowed_callers must be a non-empty list containing "
            "'direct', 'programmatic', or both."
        )
    for index, caller in enumerate(callers):
        if caller not in _CALLERS:
            raise UserError(
                f"Tool `{tool}` allowed_callers contains unsupported caller {caller!r}. "
                "Expected 'direct' or 'programmatic'."
            )
        if caller in callers[:index]:
            raise UserError(f"Tool `{tool}` allowed_callers contains duplicate caller {caller!r}.")


def _config(tool: str, kind: str, tool_config: Any) -> dict[str, Any]:
    """``tool_config`` as a deep-copied dict of type ``kind``.

    Raises:
        UserError: not a mapping (or pydantic model), or a different ``type``.
    """
    config = _plain(tool_config) if not isinstance(tool_config, Mapping) else tool_config
    if not isinstance(config, Mapping):
        raise UserError(f"{tool} tool_config must be a mapping, got {type(tool_config).__name__}")
    data = copy.deepcopy(dict(config))
    data.setdefault("type", kind)
    if data["type"] != kind:
        raise UserError(f"{tool} tool_config type must be {kind!r}, got {data['type']!r}")
    return data


@dataclass(slots=True)
class WebSearchTool:
    """Web search run by OpenAI (spec §2.1).

    Attributes:
        user_location: ``{"type": "approximate", "city"?, "country"?, "region"?, "timezone"?}``.
        filters: ``{"allowed_domains": [...]}``: a dict (validated as, and stored as, the
            ``openai`` ``Filters`` model; unknown keys kept) or that model. Sent whole.

    Raises:
        TypeError: ``filters`` is neither a dict nor a pydantic model.
        pydantic.ValidationError: a ``filters`` dict with a badly typed known key.
        search_context_size: ``"low"``, ``"medium"`` (default) or ``"high"``.
        external_web_access: sent only when not ``None``.
    """

    user_location: Any = None
    filters: Any = None
    search_context_size: Literal["low", "medium", "high"] = "medium"
    external_web_access: bool | None = None

    def __post_init__(self) -> None:
        # A filters dict is read as the Responses API ``Filters`` model, unknown keys kept, and
        # sent whole (``model_dump()``): openai-agents 0.24 ``WebSearchTool.__post_init__``.
        if self.filters is None or hasattr(self.filters, "model_dump"):
            return
        if not isinstance(self.filters, Mapping):
            raise TypeError(
                "web search filters must be a Filters instance or a dict, "
                f"got {type(self.filters).__name__}"
            )
        from openai.types.responses.web_search_tool import Filters

        self.filters = Filters.model_validate(dict(self.filters))

    @property
    def name(self) -> str:
        return "web_search"

    def to_wire(self, model: str | None = None) -> dict[str, Any]:
        """``{"type": "web_search", "filters", "user_location", "search_context_size"}`` (the
        first two ``null`` when unset) plus ``external_web_access`` when set."""
        location = _plain(self.user_location) if self.user_location is not None else None
        if isinstance(location, dict):
            location.setdefault("type", "approximate")
        payload: dict[str, Any] = {
            "type": "web_search",
            "filters": self.filters.model_dump() if self.filters is not None else None,
            "user_location": location,
            "search_context_size": self.search_context_size,
        }
        if self.external_web_access is not None:
            payload["external_web_access"] = self.external_web_access
        return payload


@dataclass(slots=True)
class FileSearchTool:
    """Retrieval from OpenAI vector stores (spec §2.2).

    Attributes:
        vector_store_ids: the vector stores to search (required).
        max_num_results: 1-50; ``0`` or ``None`` leaves the provider default.
        include_search_results: add ``"file_search_call.results"`` to the request ``include``.
        ranking_options / filters: sent as given when truthy.

    Raises:
        UserError: no ``vector_store_ids`` list (``max_num_results`` is checked by
            :meth:`to_wire`).
    """

    vector_store_ids: list[str]
    max_num_results: int | None = None
    include_search_results: bool = False
    ranking_options: Any = None
    filters: Any = None

    def __post_init__(self) -> None:
        if not isinstance(self.vector_store_ids, (list, tuple)):
            raise UserError("FileSearchTool vector_store_ids must be a list of vector store ids.")

    @property
    def name(self) -> str:
        return "file_search"

    @property
    def request_include(self) -> list[str]:
        """Entries this tool adds to the request-level ``include`` array."""
        return ["file_search_call.results"] if self.include_search_results else []

    def to_wire(self, model: str | None = None) -> dict[str, Any]:
        """``{"type": "file_search", "vector_store_ids": [...]}`` plus the set options.

        ``max_num_results`` is checked here, when the tool is converted for a request, not at
        construction (openai-agents 0.24 ``Converter.convert_tools``, same message).

        Raises:
            UserError: ``max_num_results`` is not ``None``, ``0`` or an integer 1-50.
        """
        count = self.max_num_results
        if count is not None and (
            isinstance(count, bool) or not isinstance(count, int) or not 0 <= count <= 50
        ):
            raise UserError(
                "FileSearchTool max_num_results must be zero, an integer between 1 and 50, or None."
            )
        payload: dict[str, Any] = {
            "type": "file_search",
            "vector_store_ids": list(self.vector_store_ids),
        }
        if self.max_num_results:
            payload["max_num_results"] = self.max_num_results
        if self.ranking_options:
            payload["ranking_options"] = _plain(self.ranking_options)
        if self.filters:
            payload["filters"] = _plain(self.filters)
        return payload


@dataclass(slots=True)
class CodeInterpreterTool:
    """Code execution in an OpenAI container (spec §2.3).

    Attributes:
        tool_config: the raw ``code_interpreter`` definition, sent unchanged, e.g.
            ``{"type": "code_interpreter", "container": {"type": "auto"}}``.

    Raises:
        UserError: a config of another type or invalid ``allowed_callers``.
    """

    tool_config: Any

    def __post_init__(self) -> None:
        self.tool_config = _config("CodeInterpreterTool", "code_interpreter", self.tool_config)
        _validate_allowed_callers("code_interpreter", self.tool_config)

    @property
    def name(self) -> str:
        return "code_interpreter"

    def to_wire(self, model: str | None = None) -> dict[str, Any]:
        return copy.deepcopy(dict(self.tool_config))


@dataclass(slots=True)
class ImageGenerationTool:
    """Image generation by OpenAI (spec §2.4).

    Attributes:
        tool_config: the raw ``image_generation`` definition, sent unchanged, e.g.
            ``{"type": "image_generation", "quality": "low"}``.

    Raises:
        UserError: a config of another type.
    """

    tool_config: Any

    def __post_init__(self) -> None:
        self.tool_config = _config("ImageGenerationTool", "image_generation", self.tool_config)

    @property
    def name(self) -> str:
        return "image_generation"

    def to_wire(self, model: str | None = None) -> dict[str, Any]:
        return copy.deepcopy(dict(self.tool_config))


class MCPToolApprovalFunctionResult(TypedDict):
    """What an ``on_approval_request`` callback returns."""

    approve: bool
    reason: NotRequired[str]


@dataclass(slots=True)
class MCPToolApprovalRequest:
    """What an ``on_approval_request`` callback receives.

    Attributes:
        ctx_wrapper: the run context.
        data: the ``mcp_approval_request`` item (``openai`` ``McpApprovalRequest``: ``id``,
            ``server_label``, ``name``, ``arguments``).
    """

    ctx_wrapper: RunContextWrapper[Any]
    data: Any


MCPToolApprovalFunction = Callable[
    [MCPToolApprovalRequest],
    "MCPToolApprovalFunctionResult | Awaitable[MCPToolApprovalFunctionResult]",
]


@dataclass(slots=True)
class HostedMCPTool:
    """A remote MCP server whose tools OpenAI calls (spec §2.5).

    Attributes:
        tool_config: the raw ``mcp`` definition, sent unchanged: ``server_label`` (required),
            ``server_url``/``connector_id``/..., ``allowed_tools``, ``headers``,
            ``require_approval`` (``"always"|"never"`` or per-tool filters), ``defer_loading``...
        on_approval_request: ``(MCPToolApprovalRequest) -> {"approve": bool, "reason"?: str}``
            (sync or async); without it an approval request interrupts the run.

    Raises:
        UserError: no ``server_label``, another ``type`` or invalid ``allowed_callers``.
    """

    tool_config: Any
    on_approval_request: MCPToolApprovalFunction | None = field(default=None)

    def __post_init__(self) -> None:
        self.tool_config = _config("HostedMCPTool", "mcp", self.tool_config)
        label = self.tool_config.get("server_label")
        if not isinstance(label, str) or not label.strip():
            raise UserError("HostedMCPTool tool_config requires a non-empty server_label.")
        _validate_allowed_callers("hosted_mcp", self.tool_config)

    @property
    def name(self) -> str:
        return "hosted_mcp"

    @property
    def server_label(self) -> str:
        return str(self.tool_config["server_label"])

    @property
    def defer_loading(self) -> bool:
        """Whether the server's tools are loaded through tool search (spec §3.2)."""
        return bool(self.tool_config.get("defer_loading"))

    def to_wire(self, model: str | None = None) -> dict[str, Any]:
        return copy.deepcopy(dict(self.tool_config))

    async def decide(
        self, ctx: RunContextWrapper[Any], request: dict[str, Any]
    ) -> MCPToolApprovalFunctionResult | None:
        """The callback's answer for ``request``, or ``None`` without a callback.

        Raises:
            UserError: the callback returned something other than a mapping with ``approve``.
        """
        if self.on_approval_request is None:
            return None
        answer: Any = self.on_approval_request(MCPToolApprovalRequest(ctx, _typed(request)))
        if inspect.isawaitable(answer):
            answer = await answer
        if not isinstance(answer, Mapping) or "approve" not in answer:
            raise UserError(
                "HostedMCPTool on_approval_request must return {'approve': bool, 'reason'?: str}, "
                f"got {answer!r}"
            )
        result: MCPToolApprovalFunctionResult = {"approve": bool(answer["approve"])}
        if answer.get("reason"):
            result["reason"] = str(answer["reason"])
        return result


def _typed(request: dict[str, Any]) -> Any:
    """The request as the ``openai`` model (attribute access, as the SDK hands it out)."""
    from openai.types.responses.response_output_item import McpApprovalRequest

    try:
        return McpApprovalRequest.model_validate(request)
    except Exception:  # an odd item from a test server: keep attribute access anyway
        return McpApprovalRequest.model_construct(**request)


def mcp_approval_response_item(
    request: dict[str, Any], approve: bool, reason: str | None = None
) -> dict[str, Any]:
    """The ``mcp_approval_response`` input item answering ``request`` (spec §2.5).

    Returns:
        ``{"type": "mcp_approval_response", "approval_request_id", "approve"}`` plus
        ``reason`` when rejecting with a non-empty reason and ``caller`` when the request has one.
    """
    item: dict[str, Any] = {
        "type": "mcp_approval_response",
        "approval_request_id": request.get("id"),
        "approve": approve,
    }
    if not approve and reason:
        item["reason"] = reason
    if request.get("caller") is not None:
        item["caller"] = request["caller"]
    return item
