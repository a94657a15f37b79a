"""``ComputerTool`` and the ``Computer``/``AsyncComputer`` seam it drives (spec §6).

The tool maps a local harness (anything implementing :class:`Computer` or
:class:`AsyncComputer`) onto the Responses computer surface: the GA ``{"type": "computer"}``
payload or the preview ``computer_use_preview`` one, ``computer_call`` items with one ``action``
or batched ``actions[]``, and ``computer_call_output`` screenshots sent back.
"""

from __future__ import annotations

import abc
import inspect
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Generic, Literal, TypeAlias, TypeVar

from .._util import maybe_await as _maybe_await
from ..errors import AgentsException, ModelBehaviorError, UserError
from .local import ApprovalDecision, LocalCallResult, ask_on_approval

if TYPE_CHECKING:
    from ..agent import Agent
    from ..context import RunContextWrapper
    from ..items import ToolApprovalItem

__all__ = [
    "ACTION_TYPES",
    "AsyncComputer",
    "Button",
    "Computer",
    "ComputerActionRequest",
    "ComputerApprovalFunction",
    "ComputerCallResult",
    "ComputerFactory",
    "ComputerProvider",
    "ComputerRestartedError",
    "ComputerTool",
    "ComputerToolSafetyCheckData",
    "Environment",
    "ensure_single_computer_tool",
    "is_preview_model",
]

logger = logging.getLogger("core")

Environment: TypeAlias = Literal["mac", "windows", "ubuntu", "browser"]
Button: TypeAlias = Literal["left", "right", "wheel", "back", "forward"]

#: Every ``computer_call`` action type and the driver method it calls (spec §6.4).
ACTION_TYPES: tuple[str, ...] = (
    "click",
    "double_click",
    "drag",
    "keypress",
    "move",
    "screenshot",
    "scroll",
    "type",
    "wait",
)
_MOUSE_ACTIONS = frozenset({"click", "double_click", "drag", "move", "scroll"})
_CHOICE_ALIASES = frozenset({"computer", "computer_use", "computer_use_preview"})
_PREVIEW_PREFIX = "computer-use-preview"


# -- the seam (spec §6.1) -----------------------------------------------------------------------


class _ScreenDescription:
    """What both computer interfaces say about their screen (spec §6.1)."""

    @property
    def environment(self) -> Environment | None:
        """The kind of computer, or ``None`` when unknown."""
        return None

    @property
    def dimensions(self) -> tuple[int, int] | None:
        """``(width, height)`` of the screen in pixels, or ``None`` when unknown."""
        return None


class Computer(_ScreenDescription, abc.ABC):
    """A synchronous computer driver (spec §6.1). Coordinates are in screenshot pixels.

    ``environment`` (``"mac"|"windows"|"ubuntu"|"browser"``) and ``dimensions``
    (``(width, height)`` in pixels) are needed only for the preview payload; override them as
    properties or class attributes. Mouse methods may accept a keyword-only ``keys`` argument
    (held modifier key names); it is passed only when the call carries keys.
    """

    @abc.abstractmethod
    def screenshot(self) -> str:
        """The screen as a base64-encoded PNG (no ``data:`` prefix)."""

    @abc.abstractmethod
    def click(self, x: int, y: int, button: Button) -> None:
        """Click ``button`` at ``(x, y)``."""

    @abc.abstractmethod
    def double_click(self, x: int, y: int) -> None:
        """Double-click the left button at ``(x, y)``."""

    @abc.abstractmethod
    def scroll(self, x: int, y: int, scroll_x: int, scroll_y: int) -> None:
        """Scroll by ``(scroll_x, scroll_y)`` pixels with the pointer at ``(x, y)``."""

    @abc.abstractmethod
    def type(self, text: str) -> None:
        """Type ``text`` into the focused element."""

    @abc.abstractmethod
    def wait(self) -> None:
        """Wait a moment (the driver chooses how long) for the screen to settle."""

    @abc.abstractmethod
    def move(self, x: int, y: int) -> None:
        """Move the pointer to ``(x, y)``."""

    @abc.abstractmethod
    def keypress(self, keys: list[str]) -> None:
        """Press ``keys`` together (a combination such as ``["CTRL", "A"]``)."""

    @abc.abstractmethod
    def drag(self, path: list[tuple[int, int]]) -> None:
        """Press the left button at ``path[0]``, move through the path, release at the end."""


class AsyncComputer(_ScreenDescription, abc.ABC):
    """The asynchronous counterpart of :class:`Computer` (same methods, awaited)."""

    @abc.abstractmethod
    async def screenshot(self) -> str:
        """The screen as a base64-encoded PNG (no ``data:`` prefix)."""

    @abc.abstractmethod
    async def click(self, x: int, y: int, button: Button) -> None:
        """Click ``button`` at ``(x, y)``."""

    @abc.abstractmethod
    async def double_click(self, x: int, y: int) -> None:
        """Double-click the left button at ``(x, y)``."""

    @abc.abstractmethod
    async def scroll(self, x: int, y: int, scroll_x: int, scroll_y: int) -> None:
        """Scroll by ``(scroll_x, scroll_y)`` pixels with the pointer at ``(x, y)``."""

    @abc.abstractmethod
    async def type(self, text: str) -> None:
        """Type ``text`` into the focused element."""

    @abc.abstractmethod
    async def wait(self) -> None:
        """Wait a moment (the driver chooses how long) for the screen to settle."""

    @abc.abstractmethod
    async def move(self, x: int, y: int) -> None:
        """Move the pointer to ``(x, y)``."""

    @abc.abstractmethod
    async def keypress(self, keys: list[str]) -> None:
        """Press ``keys`` together (a combination such as ``["CTRL", "A"]``)."""

    @abc.abstractmethod
    async def drag(self, path: list[tuple[int, int]]) -> None:
        """Press the left button at ``path[0]``, move through the path, release at the end."""


class ComputerRestartedError(AgentsException):
    """Raised by a driver whose computer had died (crash, closed window) and was restarted.

    :class:`ComputerTool` catches it, stops the batch, sends a fresh screenshot and gives the
    model ``note`` (see :class:`ComputerCallResult`). Other driver exceptions fail the run
    (spec §6.4).

    Attributes:
        note: the text for the model, e.g. "The browser had crashed and was restarted...".
    """

    def __init__(self, note: str) -> None:
        super().__init__(note)
        self.note = note


# -- configuration value objects (spec §6.2, §6.5) ----------------------------------------------

AnyComputer: TypeAlias = Computer | AsyncComputer
#: ``create(*, run_context) -> computer`` (sync or async).
ComputerFactory: TypeAlias = Callable[..., "AnyComputer | Awaitable[AnyComputer]"]
#: ``dispose(*, run_context, computer) -> None`` (sync or async).
ComputerDisposer: TypeAlias = Callable[..., "Awaitable[None] | None"]


ComputerT = TypeVar("ComputerT", bound="Computer | AsyncComputer")


@dataclass(slots=True)
class ComputerProvider(Generic[ComputerT]):
    """A computer factory with an optional disposer, resolved once per run (spec §6.2).

    Generic in the computer type, so ``ComputerProvider[MyComputer]`` is a valid annotation
    (openai-agents 0.24 ``ComputerProvider`` is subscriptable the same way).

    Attributes:
        create: ``create(*, run_context) -> Computer | AsyncComputer`` (sync or async).
        dispose: ``dispose(*, run_context, computer)`` (sync or async), called when the run
            ends; its errors are logged, not raised.
    """

    create: ComputerFactory
    dispose: ComputerDisposer | None = None


@dataclass(slots=True)
class ComputerToolSafetyCheckData:
    """What ``on_safety_check`` receives for one pending safety check (spec §6.5).

    Attributes:
        ctx_wrapper: the run context.
        agent: the agent whose model made the call.
        tool_call: the raw ``computer_call`` item (wire dict).
        safety_check: ``{"id", "code"?, "message"?}`` as the model sent it.
    """

    ctx_wrapper: RunContextWrapper[Any]
    agent: Agent[Any] | None
    tool_call: dict[str, Any]
    safety_check: dict[str, Any]


@dataclass(slots=True)
class ComputerActionRequest:
    """What a ``needs_approval`` callable receives for one ``computer_call``.

    Attributes:
        computer: the resolved driver (e.g. to read a browser's current URL).
        actions: the call's actions in execution order (wire dicts ``{"type", ...}``).
        call_id: the call's ``call_id``.
        tool_call: the raw ``computer_call`` item.
    """

    computer: AnyComputer
    actions: list[dict[str, Any]]
    call_id: str
    tool_call: dict[str, Any]


#: ``(run_context, ComputerActionRequest) -> bool`` (sync or async).
ComputerApprovalFunction: TypeAlias = Callable[
    ["RunContextWrapper[Any]", ComputerActionRequest], "bool | Awaitable[bool]"
]
SafetyCheckFunction: TypeAlias = Callable[[ComputerToolSafetyCheckData], "Any | Awaitable[Any]"]


@dataclass(slots=True)
class ComputerCallResult(LocalCallResult):
    """A :class:`LocalCallResult` that may carry notes for the model.

    Attributes:
        notes: texts the model should read after the ``computer_call_output`` (a restarted
            browser, a declined action). The ``computer_call_output`` item cannot carry text,
            so the runner sends each note as a user message: see :meth:`note_items`.
    """

    notes: list[str] = field(default_factory=list)

    def note_items(self) -> list[dict[str, Any]]:
        """``[{"type": "message", "role": "user", "content": [{"type": "input_text", "text"}]}]``."""
        return [
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": note}]}
            for note in self.notes
        ]


def is_preview_model(model: str | None) -> bool:
    """Whether ``model`` names the preview computer-use model (``computer-use-preview*``)."""
    return model is not None and model.startswith(_PREVIEW_PREFIX)


def ensure_single_computer_tool(tools: Sequence[Any]) -> None:
    """Raise ``UserError`` when a request would carry more than one computer tool (spec §0).

    Raises:
        UserError: ``"You can only provide one computer tool per request."``
    """
    if sum(1 for tool in tools if isinstance(tool, ComputerTool)) > 1:
        raise UserError("You can only provide one computer tool per request.")


def _is_computer(value: Any) -> bool:
    if isinstance(value, Computer | AsyncComputer):
        return True
    return not inspect.isroutine(value) and callable(getattr(value, "screenshot", None))


# -- the tool (spec §6.2-§6.6) ------------------------------------------------------------------


class ComputerTool:
    """Lets the model use a computer through a local driver (spec §6).

    Implements :class:`~core.tools.local.LocalCallHandler` for ``computer_call`` items.

    Args:
        computer: a :class:`Computer`/:class:`AsyncComputer`, a factory
            ``create(*, run_context) -> computer`` (sync or async) or a :class:`ComputerProvider`.
            Factories are resolved once per run (``on_run_start``) and disposed when it ends.
        on_safety_check: ``(ComputerToolSafetyCheckData) -> bool`` (sync or async), asked for each
            pending safety check; every check must be acknowledged (spec §6.5).
        custom_data_extractor: SDK-only metadata hook; stored, never sent.
        needs_approval: ``bool`` or ``(run_context, ComputerActionRequest) -> bool`` (sync or
            async), e.g. ``harnesses.browser.AllowedDomainsPolicy`` (a Tandem extension).
        on_approval: ``(run_context, ToolApprovalItem) -> {"approve": bool, "reason"?: str}``
            (sync or async) consulted before interrupting the run.

    Raises:
        UserError: ``computer`` is neither a computer, a callable factory nor a provider; a
            callback is not callable.
    """

    call_item_types: ClassVar[tuple[str, ...]] = ("computer_call",)
    #: Bookkeeping name for approvals, hooks and run state (spec §6.2).
    name: str = "computer_use_preview"
    #: Name used in traces (spec §6.2).
    trace_name: ClassVar[str] = "computer"

    def __init__(
        self,
        computer: AnyComputer | ComputerFactory | ComputerProvider,
        on_safety_check: SafetyCheckFunction | None = None,
        *,
        custom_data_extractor: Callable[..., Any] | None = None,
        needs_approval: bool | ComputerApprovalFunction = False,
        on_approval: Callable[..., Any] | None = None,
    ) -> None:
        self._instance: AnyComputer | None = None
        self._provider: ComputerProvider | None = None
        if isinstance(computer, ComputerProvider):
            if not callable(computer.create):
                raise UserError("ComputerProvider.create must be callable.")
            self._provider = computer
        elif _is_computer(computer):
            self._instance = computer  # type: ignore[assignment]
        elif callable(computer):
            self._provider = ComputerProvider(create=computer)
        else:
            raise UserError(
                "ComputerTool needs a Computer, an AsyncComputer, a factory or a "
                f"ComputerProvider, got {type(computer).__name__}."
            )
        for label, value in (
            ("on_safety_check", on_safety_check),
            ("custom_data_extractor", custom_data_extractor),
            ("on_approval", on_approval),
        ):
            if value is not None and not callable(value):
                raise UserError(f"ComputerTool {label} must be callable.")
        if not isinstance(needs_approval, bool) and not callable(needs_approval):
            raise UserError("ComputerTool needs_approval must be a bool or a callable.")
        self.on_safety_check = on_safety_check
        self.custom_data_extractor = custom_data_extractor
        self.needs_approval_setting = needs_approval
        self.on_approval_callback = on_approval
        self._resolved: dict[RunContextWrapper[Any], AnyComputer] = {}
        self._last_resolved: AnyComputer | None = None
        self._last_image: dict[str, str] = {}

    def __repr__(self) -> str:
        source = self._instance if self._instance is not None else self._provider
        return f"ComputerTool(computer={source!r})"

    # -- resolution (spec §6.2) ---------------------------------------------------------------
    @property
    def computer(self) -> AnyComputer | None:
        """The computer instance given, else the most recently resolved one (``None`` before)."""
        return self._instance if self._instance is not None else self._last_resolved

    async def resolve(self, ctx: RunContextWrapper[Any]) -> AnyComputer:
        """The computer for this run context, creating it through the factory the first time.

        Raises:
            UserError: the factory returned something that is not a computer.
        """
        if self._instance is not None:
            return self._instance
        cached = self._resolved.get(ctx)
        if cached is not None:
            return cached
        assert self._provider is not None
        created = await _maybe_await(self._provider.create(run_context=ctx))
        if not _is_computer(created):
            raise UserError(
                f"Computer factory returned {type(created).__name__}, not a Computer or "
                "AsyncComputer."
            )
        self._resolved[ctx] = created
        self._last_resolved = created
        return created

    async def on_run_start(self, ctx: RunContextWrapper[Any]) -> None:
        """Resolve a factory once for the run (the runner calls this before the first turn)."""
        if self._provider is not None:
            await self.resolve(ctx)

    async def on_run_end(self, ctx: RunContextWrapper[Any]) -> None:
        """Dispose the computer this run's factory created; disposer errors are logged."""
        computer = self._resolved.pop(ctx, None)
        if computer is None or self._provider is None:
            return
        if self._last_resolved is computer:
            self._last_resolved = next(reversed(self._resolved.values()), None)
        if self._provider.dispose is None:
            return
        try:
            await _maybe_await(self._provider.dispose(run_context=ctx, computer=computer))
        except Exception:
            logger.exception("disposing the computer failed")

    # -- wire (spec §6.3, §6.6) ---------------------------------------------------------------
    def _uses_preview(self, model: str | None, tool_choice: Any) -> bool:
        if model is not None:
            return is_preview_model(model)
        return tool_choice not in ("computer", "computer_use")

    def to_wire(self, model: str | None = None, tool_choice: Any = None) -> dict[str, Any]:
        """The ``tools`` entry for the effective request model (spec §6.3).

        ``{"type": "computer"}`` when ``model`` is known and does not start with
        ``computer-use-preview``; otherwise (preview model, or no model unless ``tool_choice``
        is ``"computer"``/``"computer_use"``) ``{"type": "computer_use_preview", "environment",
        "display_width", "display_height"}``.

        Raises:
            UserError: the preview payload is needed but no resolved computer has both
                ``environment`` and ``dimensions``.
        """
        if not self._uses_preview(model, tool_choice):
            return {"type": "computer"}
        computer = self.computer
        if computer is None:
            raise UserError(
                "The computer_use_preview tool needs a resolved Computer/AsyncComputer to send "
                "environment and dimensions; resolve the computer factory first or use a GA "
                "model."
            )
        environment = computer.environment
        dimensions = computer.dimensions
        if not environment or not dimensions:
            raise UserError(
                "The computer_use_preview tool needs a computer with environment and dimensions "
                f"set (got environment={environment!r}, dimensions={dimensions!r})."
            )
        width, height = dimensions
        return {
            "type": "computer_use_preview",
            "environment": environment,
            "display_width": width,
            "display_height": height,
        }

    def normalize_tool_choice(self, choice: str, model: str | None) -> dict[str, Any] | None:
        """Map ``"computer"``, ``"computer_use"``, ``"computer_use_preview"`` (spec §6.6).

        Returns:
            ``{"type": "computer_use_preview"}`` for a preview model, ``{"type": "computer"}``
            for another known model; with no model, ``computer``/``computer_use`` give
            ``{"type": "computer"}`` and ``computer_use_preview`` keeps its own selector.
            ``None`` for any other string (the runner converts it as usual).
        """
        if choice not in _CHOICE_ALIASES:
            return None
        if model is None:
            preview = choice == "computer_use_preview"
        else:
            preview = is_preview_model(model)
        return {"type": "computer_use_preview" if preview else "computer"}

    # -- calls (spec §6.4, §6.5) --------------------------------------------------------------
    @staticmethod
    def actions_of(call: Mapping[str, Any]) -> list[dict[str, Any]]:
        """The call's actions in order: ``actions`` when non-empty, else ``[action]``.

        Raises:
            ModelBehaviorError: no action, an action that is not an object, or an unknown
                type (``"Computer tool returned unknown action type '<t>'"``).
        """
        actions = call.get("actions")
        if not actions:
            single = call.get("action")
            actions = [single] if single is not None else []
        if not isinstance(actions, list | tuple) or not actions:
            raise ModelBehaviorError("Computer call has no action.")
        result: list[dict[str, Any]] = []
        for action in actions:
            if not isinstance(action, Mapping):
                raise ModelBehaviorError(f"Computer call action is not an object: {action!r}")
            kind = action.get("type")
            if kind not in ACTION_TYPES:
                raise ModelBehaviorError(f"Computer tool returned unknown action type '{kind}'")
            result.append(dict(action))
        return result

    def validate_call(self, call: dict[str, Any]) -> None:
        """Raise ``ModelBehaviorError`` for a call without ``call_id`` or with bad actions."""
        if not call.get("call_id"):
            raise ModelBehaviorError("Computer call is missing call_id.")
        self.actions_of(call)

    async def needs_approval(self, ctx: RunContextWrapper[Any], call: dict[str, Any]) -> bool:
        """Evaluate ``needs_approval`` for one call (``False`` by default)."""
        setting = self.needs_approval_setting
        if isinstance(setting, bool):
            return setting
        request = ComputerActionRequest(
            computer=await self.resolve(ctx),
            actions=self.actions_of(call),
            call_id=str(call.get("call_id")),
            tool_call=call,
        )
        return bool(await _maybe_await(setting(ctx, request)))

    async def on_approval(
        self, ctx: RunContextWrapper[Any], item: ToolApprovalItem
    ) -> ApprovalDecision | None:
        """Ask the ``on_approval`` callback; ``None`` when absent or undecided."""
        return await ask_on_approval(self.on_approval_callback, ctx, item)

    async def _acknowledge(
        self, ctx: RunContextWrapper[Any], call: dict[str, Any], agent: Agent[Any] | None
    ) -> list[dict[str, Any]] | None:
        # ``None`` (sent as null) unless there were checks to acknowledge, never ``[]``: the
        # reference sends null when none were acknowledged (openai-agents 0.24 ComputerAction).
        if self.on_safety_check is None or not call.get("pending_safety_checks"):
            return None
        acknowledged: list[dict[str, Any]] = []
        for check in call.get("pending_safety_checks") or []:
            data = ComputerToolSafetyCheckData(ctx, agent, call, dict(check))
            if not await _maybe_await(self.on_safety_check(data)):
                raise UserError("Computer tool safety check was not acknowledged")
            acknowledged.append(
                {"id": check.get("id"), "code": check.get("code"), "message": check.get("message")}
            )
        return acknowledged

    async def execute(
        self, ctx: RunContextWrapper[Any], call: dict[str, Any], agent: Agent[Any] | None = None
    ) -> ComputerCallResult:
        """Acknowledge safety checks, run the actions in order, send a screenshot back.

        A screenshot is taken after the batch unless the last action was ``screenshot`` (its
        result is reused). A :class:`ComputerRestartedError` from the driver stops the batch:
        a fresh screenshot is sent and the error's note is returned in ``notes``.

        Returns:
            ``ComputerCallResult`` with ``input_item`` ``{"type": "computer_call_output",
            "call_id", "output": {"type": "computer_screenshot", "image_url":
            "data:image/png;base64,..." or ""}, "acknowledged_safety_checks": [...] or None}``
            and ``output`` the image URL.

        Raises:
            UserError: a safety check was not acknowledged.
            ModelBehaviorError: a bad action, or ``"Computer driver missing method <name>"``.
            Exception: whatever else the driver raises (it fails the run, spec §6.4).
        """
        call_id = str(call.get("call_id") or "")
        actions = self.actions_of(call)
        computer = await self.resolve(ctx)
        acknowledged = await self._acknowledge(ctx, call, agent)
        notes: list[str] = []
        shot: Any = None
        try:
            for index, action in enumerate(actions):
                result = await _run_action(computer, action)
                if action["type"] == "screenshot" and index == len(actions) - 1:
                    shot = result
        except ComputerRestartedError as exc:
            notes.append(exc.note)
            shot = None
        if shot is None:
            shot = await _maybe_await(_driver_method(computer, "screenshot")())
        image_url = f"data:image/png;base64,{shot}" if shot else ""
        self._last_image[call_id] = image_url
        item: dict[str, Any] = {
            "type": "computer_call_output",
            "call_id": call_id,
            "output": {"type": "computer_screenshot", "image_url": image_url},
            "acknowledged_safety_checks": acknowledged,
        }
        return ComputerCallResult(input_item=item, output=image_url, notes=notes)

    def rejection(self, call: dict[str, Any], message: str) -> ComputerCallResult:
        """The output for a declined call: the last screenshot sent (or ``""``) and a note.

        The actions are not run; the note tells the model the user declined them.
        """
        image_url = next(reversed(self._last_image.values()), "") if self._last_image else ""
        item = {
            "type": "computer_call_output",
            "call_id": str(call.get("call_id") or ""),
            "output": {"type": "computer_screenshot", "image_url": image_url},
            "acknowledged_safety_checks": None,
        }
        note = f"The computer action was not performed: {message}"
        return ComputerCallResult(input_item=item, output=message, notes=[note])


def _driver_method(computer: Any, name: str) -> Callable[..., Any]:
    method = getattr(computer, name, None)
    if not callable(method):
        raise ModelBehaviorError(f"Computer driver missing method {name}")
    return method


def _accepts_keys(method: Callable[..., Any]) -> bool:
    try:
        params = inspect.signature(method).parameters.values()
    except (TypeError, ValueError):
        return False
    return any(p.name == "keys" or p.kind is inspect.Parameter.VAR_KEYWORD for p in params)


def _point_path(path: Any) -> list[tuple[int, int]]:
    points: list[tuple[int, int]] = []
    for point in path or []:
        if isinstance(point, Mapping):
            points.append((point["x"], point["y"]))
        else:
            x, y = point
            points.append((x, y))
    return points


async def _run_action(computer: Any, action: dict[str, Any]) -> Any:
    """Call the driver method for one action (spec §6.4); returns its result."""
    kind = action["type"]
    method = _driver_method(computer, kind)
    try:
        args: tuple[Any, ...]
        if kind == "click":
            args = (action["x"], action["y"], action.get("button") or "left")
        elif kind in ("double_click", "move"):
            args = (action["x"], action["y"])
        elif kind == "scroll":
            args = (action["x"], action["y"], action["scroll_x"], action["scroll_y"])
        elif kind == "drag":
            args = (_point_path(action.get("path")),)
        elif kind == "keypress":
            args = (list(action.get("keys") or []),)
        elif kind == "type":
            args = (action.get("text") or "",)
        else:  # screenshot, wait
            args = ()
    except (KeyError, TypeError, ValueError) as exc:
        raise ModelBehaviorError(f"Computer action {kind} is malformed: {exc}") from exc
    kwargs: dict[str, Any] = {}
    keys = action.get("keys")
    if kind in _MOUSE_ACTIONS and keys:
        if _accepts_keys(method):
            kwargs["keys"] = list(keys)
        else:
            logger.warning("computer driver %s() does not accept keys; dropping them", kind)
    return await _maybe_await(method(*args, **kwargs))
