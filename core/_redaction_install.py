"""Start-up wiring of redaction: log records, crash hooks and redacting text streams."""

from __future__ import annotations

import io
import logging
import sys
import threading
import traceback
from typing import Any, TextIO

from . import redaction as _redaction

__all__ = ["RedactingFilter", "RedactingStream", "install", "redacting", "scrub_record"]

_LOGGERS = ("core", "harnesses", "desktop")
_installed = threading.Lock()
_done = False


class RedactingFilter(logging.Filter):
    """A filter that redacts a record in place (message, arguments, traceback, stack) and
    always lets it through. Idempotent: a record is scrubbed once."""

    def filter(self, record: logging.LogRecord) -> bool:
        scrub_record(record)
        return True


def scrub_record(record: logging.LogRecord) -> logging.LogRecord:
    """Redact ``record`` in place: its formatted message replaces ``msg`` (``args`` cleared);
    the traceback is formatted and redacted into ``exc_text``; ``stack_info`` is redacted."""
    if getattr(record, "_tandem_redacted", False):
        return record
    try:
        message = record.getMessage()
    except Exception:  # a bad format string: keep what can be shown
        message = f"{record.msg!r} % {record.args!r}"
    record.msg = _redaction.redact_text(message)
    record.args = None
    if record.exc_info and not record.exc_text:
        record.exc_text = logging.Formatter().formatException(record.exc_info)
    if record.exc_text:
        record.exc_text = _redaction.redact_text(record.exc_text)
    if record.stack_info:
        record.stack_info = _redaction.redact_text(record.stack_info)
    record._tandem_redacted = True
    return record


class RedactingStream(io.TextIOBase):
    """A text stream that redacts each ``write`` before passing it to ``stream``.

    A secret split across two ``write`` calls is not recognised; ``print`` writes its whole
    text in one call, which is how Tandem prints.

    Args:
        stream: the underlying text stream (``sys.stdout``, a ``StringIO``…).
    """

    def __init__(self, stream: TextIO) -> None:
        super().__init__()
        self.stream = stream

    def write(self, text: str) -> int:
        self.stream.write(_redaction.redact_text(text))
        return len(text)

    def flush(self) -> None:
        self.stream.flush()

    def isatty(self) -> bool:
        return self.stream.isatty()

    def fileno(self) -> int:
        return self.stream.fileno()

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return getattr(self.stream, "encoding", "utf-8")

    def __getattr__(self, name: str) -> Any:  # buffer, mode, name…: the stream's own
        return getattr(self.stream, name)

    def getvalue(self) -> str:
        """The underlying stream's ``getvalue()`` (for ``StringIO``)."""
        return self.stream.getvalue()  # type: ignore[attr-defined]


def redacting(stream: TextIO) -> TextIO:
    """``stream`` wrapped in a :class:`RedactingStream` (itself when already wrapped)."""
    return stream if isinstance(stream, RedactingStream) else RedactingStream(stream)  # type: ignore[return-value]


def _excepthook(exc_type: type[BaseException], exc: BaseException, tb: Any) -> None:
    text = "".join(traceback.format_exception(exc_type, exc, tb))
    sys.stderr.write(_redaction.redact_text(text))


def _thread_excepthook(args: threading.ExceptHookArgs) -> None:
    if args.exc_type is SystemExit:
        return
    name = args.thread.name if args.thread is not None else "<unknown>"
    text = "".join(traceback.format_exception(args.exc_type, args.exc_value, args.exc_traceback))
    sys.stderr.write(_redaction.redact_text(f"Exception in thread {name}:\n{text}"))


def _unraisable_hook(unraisable: Any) -> None:
    lines = traceback.format_exception(
        unraisable.exc_type, unraisable.exc_value, unraisable.exc_traceback
    )
    head = f"{unraisable.err_msg or 'Exception ignored in'}: {unraisable.object!r}\n"
    sys.stderr.write(_redaction.redact_text(head + "".join(lines)))


def install() -> None:
    """Register the environment's secrets, redact every log record at creation (a record
    factory, so records of any logger and any handler added later are covered) and on the
    root handlers and our loggers (``core``, ``harnesses``, ``desktop``), and install
    ``sys.excepthook``, ``threading.excepthook`` and ``sys.unraisablehook`` that print
    redacted tracebacks. Idempotent."""
    global _done
    _redaction.register_environment()
    with _installed:
        if _done:
            return
        _done = True
        previous = logging.getLogRecordFactory()

        def factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
            return scrub_record(previous(*args, **kwargs))

        logging.setLogRecordFactory(factory)
        redactor = RedactingFilter()
        for handler in logging.getLogger().handlers:
            handler.addFilter(redactor)
        for name in _LOGGERS:
            logging.getLogger(name).addFilter(redactor)
        sys.excepthook = _excepthook
        threading.excepthook = _thread_excepthook
        sys.unraisablehook = _unraisable_hook
