"""The diff view's side of a streamed build: lines, hunk chunks and the end, as they arrive."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .build import HunkLayout, hunk_layout
from .model import DiffHunk, FileDiff, edit_hunk
from .palette import MAX_CHARS
from .stream import UNIFIED, StreamMessage

__all__ = ["DiffViewStreaming"]


class DiffViewStreaming:
    """Mixin of :class:`~desktop.views.diff.view.DiffView`: applies a
    :class:`~desktop.views.diff.stream.StreamMessage` in a few milliseconds (a chunk's hunks
    are appended to the row model; decisions restored early are put on them)."""

    _files: dict[str, FileDiff]
    _path: str | None
    _review: Any
    _model: Any
    _stream: Any
    _claiming: bool

    def stream_unified(self, text: str, parse: Callable[[str], list[FileDiff]]) -> None:
        """Show a ``git diff`` text (a checkpoint's diff): parsed on a worker thread, the
        files listed as soon as their headers are read, their hunks streaming in.

        The files' full texts are unknown: their ``old_text``/``new_text`` are ``None`` and the
        syntax colours come from the hunks' lines. Replaces the files shown; any other
        :meth:`set_files` or stream call cancels it.

        Args:
            text: the diff text (``git diff`` or ``diff -u`` format; blank: no files).
            parse: text to files (``desktop.unified_diff.parse_unified_diff``), run on the
                worker for each file's section.
        """
        self.set_files([])
        if not text.strip():
            return
        self._stream.start_unified(text, parse)
        self._empty.setText("Building the diff…")

    def _on_stream(self, message: StreamMessage) -> None:
        """A build's result, on the GUI thread (a few ms of work per message)."""
        if message.path == UNIFIED:
            self._on_unified(message)
            return
        file = self._files.get(message.path)
        if file is None:
            return
        shown = message.path == self._path
        if message.kind == "lines":
            if shown:
                self._use_syntax(*message.data)
                self._lex_soon()
        elif message.kind == "hunks":
            self._add_hunks(file, *message.data)
        else:
            if message.kind == "error":
                self._errors[file.path] = str(message.data)
            self._pending.pop(file.path, None)
            self._counts_cache.pop(file.path, None)
            if shown:
                self._empty.setText(self._empty_text(file.path))
        if shown:
            self._show_counts(file)
            self._refresh()
        else:
            self._update_file_row(message.path)

    def _on_unified(self, message: StreamMessage) -> None:
        if message.kind == "files":
            self._claiming = True
            try:
                self.set_files(message.data)
            finally:
                self._claiming = False
            self._stream.claim([f.path for f in message.data])
            if self._path is not None:
                self.show_file(self._path)  # now "building"
        elif message.kind == "error":
            self.set_files([])
            self._empty.setText(f"Could not read the diff: {message.data}")

    def _add_hunks(self, file: FileDiff, hunks: list[DiffHunk], layouts: list[HunkLayout]) -> None:
        first = not file.hunks
        file.hunks.extend(hunks)
        self._layouts.setdefault(file.path, []).extend(layouts)
        self._review.add_hunks(file.path, (h.id for h in hunks))
        pending = self._pending.get(file.path)
        counted = self._counts_cache.get(file.path)
        if pending:
            self._review.restore(file.path, pending)
            self._counts_cache.pop(file.path, None)  # an edit may have come back: recount
        elif counted is not None:  # new hunks are unedited: O(chunk), not O(file)
            added = counted[0] + sum(layout.added for layout in layouts)
            self._counts_cache[file.path] = (added, counted[1] + sum(x.removed for x in layouts))
        if file.path != self._path:
            return
        shown = self._shown_hunks_of(file.path, hunks, layouts)
        self._model.append(*shown)
        self._longest = min(MAX_CHARS + 2, self._model.longest)
        self._update_hscroll()
        if first:
            self._stack.setCurrentIndex(0)
            self._set_current(0, scroll=False)

    def _shown_hunks_of(
        self, path: str, hunks: list[DiffHunk], layouts: list[HunkLayout]
    ) -> tuple[list[DiffHunk], list[HunkLayout]]:
        out_hunks, out_layouts = [], []
        for hunk, layout in zip(hunks, layouts, strict=True):
            edited = self._review.get(path, hunk.id).edited_text
            shown = hunk if edited is None else edit_hunk(hunk, edited)
            out_hunks.append(shown)
            out_layouts.append(layout if edited is None else hunk_layout(shown))
        return out_hunks, out_layouts
