"""``ContextManager``: the run loop's hook for accounting, trimming, compaction and recovery.

Per request (issue 14): build the request history from the full history and the
:class:`~core.context_window.state.ContextState` (O(new items) per turn), estimate its tokens,
make room when it would cross the threshold (trim first, then compact), and after the response
learn from ``usage``. A ``context_length_exceeded`` error is answered by :meth:`recover`.
"""

from __future__ import annotations

import logging
import re
import sys
from dataclasses import replace
from typing import Any
from urllib.parse import urlsplit

from ..errors import ModelBehaviorError, ModelProviderError
from ..items import ModelResponse
from ..model_settings import ModelSettings
from ..models.history import InputHistory
from ..models.interface import ModelRequest
from ..usage import Usage
from . import local, remote
from .estimate import TokenEstimator, raw_of, raw_size
from .policy import ContextPolicy, ContextWindowExceeded
from .state import (
    CompactionEvent,
    CompactionRecord,
    ContextEvent,
    ContextReport,
    ContextState,
    ContextUsageEvent,
)
from .trim import is_tool_output
from .windows import context_window_for

__all__ = ["ContextManager", "is_context_overflow"]

logger = logging.getLogger("core")

_OVERFLOW = re.compile(r"context_length_exceeded|context (?:length|window)", re.IGNORECASE)
_LIMIT = re.compile(r"maximum context length is (\d[\d,]*) tokens", re.IGNORECASE)
_ACTUAL = re.compile(r"resulted in (\d[\d,]*) tokens", re.IGNORECASE)


def is_context_overflow(exc: BaseException) -> bool:
    """Whether ``exc`` is a ``context_length_exceeded`` answer (HTTP 400 with that code, or a
    failed response naming it), from any server."""
    if isinstance(exc, ContextWindowExceeded):
        return False
    cause = exc.__cause__
    # not imported, or half-imported by the warm-up thread: no openai error (issue 15)
    status_error = getattr(sys.modules.get("openai"), "APIStatusError", None)
    if (
        status_error is not None
        and isinstance(cause, status_error)
        and getattr(cause, "code", None) == "context_length_exceeded"
    ):
        return True
    if isinstance(exc, ModelProviderError) and exc.status_code not in (400, 413, None):
        return False
    return isinstance(exc, ModelProviderError | ModelBehaviorError) and bool(
        _OVERFLOW.search(str(exc))
    )


def _figure(pattern: re.Pattern[str], text: str) -> int | None:
    found = pattern.search(text)
    return int(found.group(1).replace(",", "")) if found else None


def _category(item: dict[str, Any]) -> str:
    if is_tool_output(item):
        return "tool outputs"
    if item.get("type", "message") == "message":
        return "messages"
    return "other"


class ContextManager:
    """One run's context management (created by the run loop from ``RunConfig.context_policy``).

    Args:
        policy: the settings.
        state: the compaction state to continue from (default: ``policy.state``, else empty);
            mutated in place, so the host sees every compaction.

    Attributes:
        state: the :class:`ContextState` in force.
        estimator: the calibrated :class:`TokenEstimator`.
        last_report: the latest :class:`ContextReport` (``None`` before the first request).
        peak_request_tokens: the largest estimated request so far (tokens).
        compact_requested: set to make the next request compact first ("Compact now").
    """

    def __init__(self, policy: ContextPolicy, state: ContextState | None = None) -> None:
        self.policy = policy
        chosen = state if state is not None else policy.state
        self.state = chosen if chosen is not None else ContextState(trim_bytes=policy.trim_bytes)
        self.estimator = TokenEstimator()
        self.last_report: ContextReport | None = None
        self.peak_request_tokens = 0
        self.compact_requested = False
        self._req: InputHistory | None = None
        self._cats: dict[str, int] = {}
        self._key: tuple[int, int] | None = None
        self._synced = 0
        self._trim_cache: dict[int, dict[str, Any]] = {}
        self._offset = 0
        self._trimmed = 0
        self._last_raw = 0
        self._last_parts: dict[str, int] = {}
        self._learned_window: int | None = None
        self._no_compact_endpoint = False
        self._no_input_tokens = False
        self._method = self.estimator.method

    # -- accounting ---------------------------------------------------------------------------
    def window_for(self, model_name: str | None) -> int:
        """The context window for ``model_name`` (tokens), lowered to what an overflow error
        reported when it reported less."""
        policy = self.policy
        window = policy.window or context_window_for(
            model_name, policy.base_url, policy.window_overrides
        )
        return min(window, self._learned_window or window)

    def _sent(self, full: list[dict[str, Any]], index: int) -> dict[str, Any]:
        """``full[index]`` as sent, the trimmed copy made once per item."""
        if index >= self.state.trim_upto or not is_tool_output(full[index]):
            return full[index]
        found = self._trim_cache.get(index)
        if found is None:
            found = self._trim_cache[index] = self.state.item_at(full, index)
        return found

    def _add(self, item: dict[str, Any], raw: int, sign: int = 1) -> None:
        category = _category(item)
        self._cats[category] = self._cats.get(category, 0) + sign * raw

    def request_input(self, full: InputHistory) -> InputHistory:
        """The request history for the loop's full history: rebuilt (sharing the full
        history's cached bytes) after a compaction or an undo; after a trim only the newly
        trimmed items change; otherwise only the new items are added.

        Raises:
            ValueError: the state does not belong to this history (it covers more items).
        """
        state = self.state
        key = (len(state.compactions), state.covers)
        items = full.items
        req = self._req
        if req is None or key != self._key or self._synced > len(items):
            if state.covers > len(items):
                raise ValueError(
                    f"compaction covers {state.covers} items but the history has {len(items)}"
                )
            current = state.current
            prefix = list(current.prefix) if current else []
            req = self._req = full.view(state.covers)
            req.replace(0, 0, prefix)
            self._offset = len(prefix) - state.covers  # request index = full index + offset
            self._cats = {"summary": sum(map(raw_of, req.encoded[: len(prefix)], prefix))}
            for index in range(state.covers, len(items)):
                data = req.encoded[index + self._offset]
                self._add(items[index], raw_of(data, items[index]))
            self._synced, self._key, self._trimmed = len(items), key, state.covers
        if self._trimmed < min(state.trim_upto, self._synced):
            for index in range(
                max(self._trimmed, state.covers), min(state.trim_upto, self._synced)
            ):
                sent = self._sent(items, index)
                if sent is items[index]:
                    continue
                at = index + self._offset
                self._add(items[index], raw_of(req.encoded[at], items[index]), -1)
                req.replace(at, at + 1, [sent])
                self._add(items[index], raw_of(req.encoded[at], sent))
            self._trimmed = min(state.trim_upto, self._synced)
        for index in range(self._synced, len(items)):
            sent = self._sent(items, index)
            req.append(sent)
            self._add(items[index], raw_of(req.encoded[-1], sent))
        self._synced = len(items)
        self._trimmed = max(self._trimmed, min(state.trim_upto, self._synced))
        return req

    def _estimate(self, request: ModelRequest) -> int:
        parts = dict(self._cats)
        parts["instructions"] = raw_size(request.instructions or "")
        parts["tools"] = raw_size(request.tools) if request.tools else 0
        self._last_parts = parts
        self._last_raw = sum(parts.values())
        return self.estimator.tokens(self._last_raw)

    def _report(self, window: int, used: int, *, measured: bool, cached: int = 0) -> ContextReport:
        ratio = self.estimator.ratio
        report = ContextReport(
            window=window,
            threshold=int(window * self.policy.threshold),
            used=used,
            measured=measured,
            cached=cached,
            method=self._method,
            breakdown={k: int(v * ratio + 0.5) for k, v in self._last_parts.items() if v},
            compactions=len(self.state.compactions),
        )
        self.last_report = report
        return report

    def _emit(self, event: ContextEvent) -> None:
        listener = self.policy.listener
        if listener is not None:
            try:
                listener(event)
            except Exception:  # a display bug must not end the run
                logger.exception("context listener failed")

    # -- the hook -----------------------------------------------------------------------------
    def _strategy(self) -> str:
        chosen = self.policy.strategy
        if chosen != "auto":
            return chosen
        host = urlsplit(self.policy.base_url or "https://api.openai.com/v1").hostname or ""
        return "server" if host == "api.openai.com" else "auto"

    async def before_request(
        self, request: ModelRequest, model: Any, full: InputHistory
    ) -> ModelRequest:
        """Make ``request`` fit: its input becomes the request history; room is made first
        when it would cross the threshold (or "Compact now" was asked).

        Raises:
            ContextWindowExceeded: still over the window after trimming and compaction.
        """
        window = self.window_for(request.model)
        threshold = int(window * self.policy.threshold)
        request.input = self.request_input(full)
        tokens = self._estimate(request)
        reason: str | None = None
        if self.compact_requested:
            reason = "manual"
        elif tokens > threshold and self.policy.auto_compact:
            reason = "threshold"
            counted = await self._count(model, request, tokens, window)
            if counted is not None and counted <= threshold:
                reason, tokens = None, counted
        elif tokens > window:
            reason = "threshold"
        if reason is not None:
            self.compact_requested = False
            tokens = await self.make_room(request, model, full, reason)
        if tokens > window:
            raise self._too_big(tokens, window, request.model)
        if (
            self._strategy() == "server"
            and request.model_settings.context_management is None
            and remote.remote_client(model) is not None  # a model that talks to a server
        ):
            entry = {"type": "compaction", "compact_threshold": threshold}
            request.model_settings = replace(request.model_settings, context_management=[entry])
        self.peak_request_tokens = max(self.peak_request_tokens, tokens)
        self._emit(ContextUsageEvent(self._report(window, tokens, measured=False)))
        return request

    async def _count(
        self, model: Any, request: ModelRequest, tokens: int, window: int
    ) -> int | None:
        if not self.policy.count_with_server or self._no_input_tokens or self._method == "usage":
            return None
        counted = await remote.count_input_tokens(model, request)
        if counted is None:
            self._no_input_tokens = True
            return None
        self.estimator.calibrate(self._last_raw, counted)
        self._method = "input_tokens"
        return counted

    def after_response(
        self, request: ModelRequest, response: ModelResponse, full: InputHistory
    ) -> None:
        """Learn from the response: calibrate on ``usage``, keep a server compaction item.

        Call it before the response's items join ``full``.
        """
        window = self.window_for(request.model)
        usage = Usage.from_response_usage(response.usage)
        compaction = [i for i in response.output if i.get("type") == "compaction"]
        if usage.input_tokens > 0 and not compaction:
            self.estimator.calibrate(self._last_raw, usage.input_tokens)
            self._method = "usage"
        used = usage.input_tokens or self.estimator.tokens(self._last_raw)
        if compaction:
            before = used
            covers = len(full.items)
            budget = int(window * self.policy.user_message_share * 4 / self.estimator.ratio)
            prefix = [*local.kept_user_messages(full.items, covers, budget), compaction[-1]]
            record = CompactionRecord(
                strategy="server",
                reason="threshold",
                covers=covers,
                prefix=prefix,
                items_summarised=covers - self.state.covers,
                tokens_before=before,
            )
            self.state.compactions.append(record)
            self.request_input(full)
            record.tokens_after = self.estimator.tokens(sum(self._cats.values()))
            self._emit(
                CompactionEvent(record, self._report(window, record.tokens_after, measured=False))
            )
        cached = usage.cached_input_tokens
        self._emit(ContextUsageEvent(self._report(window, used, measured=True, cached=cached)))

    async def recover(
        self, request: ModelRequest, model: Any, full: InputHistory, exc: BaseException
    ) -> ModelRequest:
        """Answer a ``context_length_exceeded`` error: learn the figures it gives, compact,
        and return the request to retry.

        Raises:
            ContextWindowExceeded: the history cannot be made to fit.
        """
        text = str(exc)
        limit, actual = _figure(_LIMIT, text), _figure(_ACTUAL, text)
        if limit:
            self._learned_window = min(self._learned_window or limit, limit)
        if actual:
            self.estimator.calibrate(self._last_raw, actual)
        window = self.window_for(request.model)
        request.input = self.request_input(full)
        tokens = await self.make_room(request, model, full, "context_length_exceeded")
        if tokens > window:
            raise self._too_big(tokens, window, request.model) from exc
        self._emit(ContextUsageEvent(self._report(window, tokens, measured=False)))
        return request

    def _too_big(self, tokens: int, window: int, model: str | None) -> ContextWindowExceeded:
        parts = ", ".join(
            f"{k} {int(v * self.estimator.ratio):,}" for k, v in self._last_parts.items() if v
        )
        return ContextWindowExceeded(
            f"The conversation does not fit the context window of {model or 'the model'} even "
            f"after compaction: the next request needs about {tokens:,} tokens, the window is "
            f"{window:,} ({parts}). Start a new session, or raise the window in the settings "
            f"if the model allows more.",
            tokens,
            window,
        )

    # -- making room --------------------------------------------------------------------------
    def _trim(self, full: list[dict[str, Any]]) -> bool:
        outputs = [i for i in range(self.state.covers, len(full)) if is_tool_output(full[i])]
        keep = self.policy.keep_recent_outputs
        upto = outputs[-keep] if keep and len(outputs) >= keep else len(full)
        if not keep:
            upto = len(full)
        if upto <= self.state.trim_upto:
            return False
        self.state.trim_upto = upto
        return True

    async def make_room(
        self, request: ModelRequest, model: Any, full: InputHistory, reason: str
    ) -> int:
        """Trim old outputs, then compact when that is not enough (always for ``manual``).

        Returns:
            The estimated tokens of ``request`` afterwards (its input is rebuilt).
        """
        window = self.window_for(request.model)
        threshold = int(window * self.policy.threshold)
        before = self._estimate(request)
        if reason != "manual" and self._trim(full.items):
            request.input = self.request_input(full)
            tokens = self._estimate(request)
            if tokens <= threshold or (self._strategy() == "server" and reason == "threshold"):
                return tokens
        record = await self._compact(request, model, full, reason, window)
        request.input = self.request_input(full)
        tokens = self._estimate(request)
        if record is not None:
            record.tokens_before, record.tokens_after = before, tokens
            self._emit(CompactionEvent(record, self._report(window, tokens, measured=False)))
        return tokens

    async def _compact(
        self, request: ModelRequest, model: Any, full: InputHistory, reason: str, window: int
    ) -> CompactionRecord | None:
        strategy = self._strategy()
        if strategy != "local" and not self._no_compact_endpoint:
            import openai  # lazily: 1-2 s at import, not before the window is up (issue 15)

            try:
                output = await remote.compact(model, request)
            except openai.APIError as exc:
                logger.warning("responses.compact failed (%s); compacting locally", exc)
                output = None
            if output is None:
                self._no_compact_endpoint = True
            else:
                record = CompactionRecord(
                    strategy="compact_endpoint",
                    reason=reason,
                    covers=len(full.items),
                    prefix=output,
                    items_summarised=len(full.items) - self.state.covers,
                )
                self.state.compactions.append(record)
                return record
        return await self._compact_locally(request, model, full.items, reason, window)

    async def _compact_locally(
        self,
        request: ModelRequest,
        model: Any,
        full: list[dict[str, Any]],
        reason: str,
        window: int,
    ) -> CompactionRecord | None:
        floor = self.state.covers
        start = local.tail_start(full, floor, self.policy.keep_items)
        if start <= floor and reason != "manual":
            start = local.tail_start(full, floor, 1)
        if start <= floor:
            return None
        bytes_per_token = 4 / self.estimator.ratio
        current = self.state.current
        folded = [
            *(current.prefix if current else []),
            *(self.state.item_at(full, i) for i in range(floor, start)),
        ]
        budget = int(window * self.policy.target_after * bytes_per_token)
        transcript = local.render_transcript(folded, budget)
        ask = ModelRequest(
            model=request.model,
            instructions=local.COMPACT_INSTRUCTIONS,
            input=InputHistory(
                [{"role": "user", "content": f"Transcript to summarise:\n\n{transcript}"}]
            ),
            tools=[],
            model_settings=ModelSettings(),
        )
        try:
            answer = await model.get_response(ask)
            summary = local.summary_text(answer.output) or local.fallback_summary(
                folded, "empty answer"
            )
        except (ModelProviderError, ModelBehaviorError) as exc:
            logger.warning("compaction turn failed: %s", exc)
            summary = local.fallback_summary(folded, str(exc))
        cap = int(window * 0.1 * bytes_per_token)
        if len(summary.encode()) > cap:
            summary = summary.encode()[:cap].decode(errors="ignore") + "\n[summary cut]"
        users = local.kept_user_messages(
            full, start, int(window * self.policy.user_message_share * bytes_per_token)
        )
        record = CompactionRecord(
            strategy="local",
            reason=reason,
            covers=start,
            prefix=[*users, local.summary_message(summary)],
            summary=summary,
            items_summarised=start - floor,
        )
        self.state.compactions.append(record)
        return record

    def undo(self, model_name: str | None = None) -> CompactionRecord | None:
        """Take back the compaction in force; the next request uses the history before it."""
        record = self.state.undo()
        if record is not None:
            self._key = None
            window = self.window_for(model_name)
            self._emit(
                CompactionEvent(
                    record, self._report(window, record.tokens_before, measured=False), undone=True
                )
            )
        return record
