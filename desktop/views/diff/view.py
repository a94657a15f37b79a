"""DiffView: review file diffs side by side or unified, accepting, rejecting or editing each hunk."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from PySide6.QtCore import QModelIndex, QPoint, Qt, QTimer, Signal, Slot
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QListWidgetItem, QWidget

from desktop.views.diff_highlight import SyntaxLines, lexer_for_path
from resources import read_text

from .actions import DiffViewActions
from .applied import DiffViewApplied
from .build import (
    EditorHunk,
    HunkLayout,
    converts_at_once,
    file_status,
    hunk_chunks,
    hunk_layout,
    side_lines,
)
from .keys import DiffViewInput
from .layout import STYLESHEET, DiffViewLayout
from .model import DiffHunk, DiffRow, FileDiff, HunkDecision, ReviewState, edit_hunk
from .painter import RowPainter
from .palette import FULL_LEX_LINES, MAX_CHARS
from .rows import RowsModel
from .status import DiffViewStatus
from .stream import UNIFIED, DiffStream
from .streaming import DiffViewStreaming

__all__ = ["DiffView"]


class DiffView(
    DiffViewApplied,
    DiffViewActions,
    DiffViewInput,
    DiffViewLayout,
    DiffViewStatus,
    DiffViewStreaming,
    QWidget,
):
    """Review file diffs hunk by hunk: a file list on the left, the diff on the right.

    The diff is shown side by side (old | new) or unified, with line numbers, red/green
    backgrounds, the changed words of paired lines highlighted more strongly and syntax colours
    (pygments, lexer guessed from the file name). Rows are virtual (laid out per hunk when
    painted) and painted by :class:`~desktop.views.diff.painter.RowPainter`; syntax lexing runs
    in slices of the event loop. :meth:`stream_file` shows a file at once and builds its hunks
    in a build process of its own (git's line diff, or a proposal's hunks), streaming them in,
    so a 50,000-line diff never stalls the window (issue 15, Build item 1).

    Keys (the diff or file list focused): ``j``/``k`` next/previous hunk, ``a`` accept,
    ``r`` reject (both then move on), ``Shift+A``/``Shift+R`` accept/reject every hunk still
    pending (*Accept all*/*Reject all*), ``e`` edit the proposed side, ``c`` comment, ``u``
    toggle unified view, ``Ctrl+Enter`` apply. Editing and commenting open inline panels (never a
    modal dialog). In read-only mode (checkpoint diffs) only navigation is available.

    Signals:
        applyRequested(proposal_id: str, decisions: dict[int, HunkDecision], comment: str):
            "Apply reviewed" on a file with a proposal; ``decisions`` holds every hunk of that
            file (pending ones as pending), ``comment`` the message to the agent.
        decisionChanged(path: str, hunk_id: int, decision: HunkDecision): a hunk's decision,
            edit or comment changed.
        decisionsChanged(path: str, decisions: dict[int, HunkDecision]): *Accept all* or
            *Reject all* decided these hunks at once (one signal, however many).
        currentHunkChanged(path: str, hunk_id: int): the current hunk moved (0: none).

    Args:
        files: the file diffs to show (paths unique).
        read_only: show without accept/reject/edit/comment/apply.
        build_process: build streamed files in a process of their own (``False``: on worker
            threads in this process; :class:`~desktop.views.diff.stream.DiffStream`).
        parent: the parent widget.

    Raises:
        ValueError: two files share a path.
    """

    applyRequested = Signal(str, object, str)
    decisionChanged = Signal(str, int, object)
    decisionsChanged = Signal(str, object)
    currentHunkChanged = Signal(str, int)

    def __init__(
        self,
        files: Sequence[FileDiff] = (),
        *,
        read_only: bool = False,
        build_process: bool = True,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self._files: dict[str, FileDiff] = {}
        self._review = ReviewState()
        self._path: str | None = None
        self._current = -1
        self._longest = 0
        self._unified = False
        #: issue 16: the mode the user chose; below ``split_min_columns`` a side, the
        #: view is unified whatever the choice (the Split button says why).
        self._prefer_unified = False
        self._too_narrow = False
        self.split_min_columns = 0
        self._read_only = read_only
        self._editing: int | None = None
        self._commenting: int | None = None
        self._model = RowsModel(self)
        self._delegate = RowPainter(self)
        self._layouts: dict[str, list[HunkLayout]] = {}  # per file, one per hunk
        self._counts_cache: dict[str, tuple[int, int]] = {}
        self._pending: dict[str, dict[int, HunkDecision]] = {}  # restored before hunks came
        self._errors: dict[str, str] = {}
        #: issue 16: files applied with *Apply reviewed*: path -> (added, removed) lines that landed
        self._applied: dict[str, tuple[int, int]] = {}
        self._stream = DiffStream(self, self._on_stream, process=build_process)
        self._claiming = False
        self._delegate.decision = self._decision_at
        self._delegate.lex_soon = self._lex_soon
        self._lex_timer = QTimer(self)
        self._lex_timer.setInterval(0)
        self._lex_timer.timeout.connect(self._lex_step)
        self._lex_whole = True
        self._build()
        self.setStyleSheet(read_text("styles", "dark.qss") + STYLESHEET)
        self.set_read_only(read_only)
        self.set_files(files)

    @property
    def _headers(self) -> list[int]:
        return self._model.headers

    # public API ----------------------------------------------------------------------------

    def set_files(self, files: Sequence[FileDiff]) -> None:
        """Show ``files``; decisions of files whose content is unchanged are kept.

        Raises:
            ValueError: two files share a path.
        """
        paths = [f.path for f in files]
        if len(set(paths)) != len(paths):
            raise ValueError("file diffs must have distinct paths")
        if not self._claiming:  # other files replace a checkpoint diff still being read
            self._stream.cancel(UNIFIED)
        previous, previous_review = self._files, self._review
        for path, file in previous.items():
            if self._stream.building(path) and all(f is not file for f in files):
                self._stream.cancel(path)
                self._pending.pop(path, None)
        self._files = {f.path: f for f in files}
        self._layouts = {
            p: v for p, v in self._layouts.items() if previous.get(p) is self._files.get(p)
        }
        self._counts_cache.clear()
        self._applied = {
            p: v for p, v in self._applied.items() if previous.get(p) is self._files.get(p)
        }
        self._review = ReviewState(files)
        for f in files:
            old = previous.get(f.path)
            if old is not None and (old.proposal_id, old.old_text, old.new_text) == (
                f.proposal_id,
                f.old_text,
                f.new_text,
            ):
                self._review.restore(f.path, previous_review.decisions(f.path))
        self._file_list.blockSignals(True)
        self._file_list.clear()
        for path in paths:
            item = QListWidgetItem(path)
            item.setData(Qt.ItemDataRole.UserRole, path)
            item.setToolTip(path)
            self._file_list.addItem(item)
        self._file_list.blockSignals(False)
        self._file_header.setText(f"Changed files ({len(paths)})")
        keep = self._path if self._path in self._files else (paths[0] if paths else None)
        if keep is None:
            self._show_nothing()
        else:
            self.show_file(keep)

    def stream_file(
        self,
        path: str,
        old: str | None,
        new: str | None,
        *,
        proposal_id: str | None = None,
        hunks: Sequence[EditorHunk] | None = None,
    ) -> FileDiff:
        """Add ``path`` (replacing a file of that path), show it at once, and build its hunks
        in a build process; they stream in (``hunks``: a review proposal's, converted, so ids
        match ``Proposal.hunks``; ``None``: git's line diff of ``old`` against ``new``).

        Until the build ends, *Apply reviewed* waits; decisions restored meanwhile are applied
        as their hunks arrive.

        Returns:
            The file diff, whose ``hunks`` list fills as the build streams.

        Raises:
            ValueError: both ``old`` and ``new`` are ``None``.
        """
        file = FileDiff(path, old, new, [], proposal_id, file_status(old, new))
        self._stream.cancel(path)
        self._errors.pop(path, None)
        small = hunks is not None and converts_at_once(old, new, hunks)
        if small:  # a few ms of conversion: no worker, the hunks are there at once
            file.hunks.extend(
                h for batch in hunk_chunks(path, old, new, hunks=hunks) for h in batch
            )
        self._layouts[path] = [hunk_layout(h) for h in file.hunks]
        files = [f for f in self._files.values() if f.path != path]
        self._files[path] = file  # set_files keeps the layouts of the same object
        if not small:
            self._stream.start(path, old, new, hunks=hunks)
        self._path = path  # set_files shows it (once)
        self.set_files([*files, file])
        return file

    def building(self, path: str) -> bool:
        """Whether ``path``'s hunks are still streaming in."""
        return self._stream.building(path)

    def wait_built(self, timeout_s: float = 30.0) -> bool:
        """Join the build workers (bounded; results still arrive through the event loop)."""
        return self._stream.wait(timeout_s)

    @Slot(str)
    def show_file(self, path: str) -> None:
        """Show the diff of ``path`` from its first hunk.

        Raises:
            KeyError: ``path`` is not among the files.
        """
        file = self._files[path]
        self._close_panels()
        self._path = path
        row = list(self._files).index(path)
        if self._file_list.currentRow() != row:
            self._file_list.blockSignals(True)
            self._file_list.setCurrentRow(row)
            self._file_list.blockSignals(False)
        lexer = lexer_for_path(path)
        if self._stream.building(path):  # the sides' lines come with the build
            self._set_syntax(lexer, [], [])
        else:
            self._set_syntax(lexer, side_lines(file, "old"), side_lines(file, "new"))
        self._current = 0 if file.hunks else -1
        self._rebuild_rows()
        self._hscroll.setValue(0)
        self._list.scrollToTop()
        self._stack.setCurrentIndex(0 if file.hunks else 1)
        self._empty.setText(self._empty_text(path))
        status = {"created": "  (new file)", "deleted": "  (deleted)"}.get(file.status, "")
        if path in self._applied:
            status += "  \u2713 applied"
        self._delegate.read_only = self._locked()
        self._delegate.applied = path in self._applied
        self._title.set_full_text(path + status)
        for label in (self._counts, self._hunk_label, self._progress):
            label.unpin()  # another file: the counts' widths start again
        self._show_counts(file)
        self._refresh()
        if self._lex_timer.isActive() or lexer is not None:
            self._lex_timer.start()
        self.currentHunkChanged.emit(path, self._hunk_id())

    def restore_decisions(self, path: str, decisions: dict[int, HunkDecision]) -> None:
        """Put back decisions made earlier on ``path`` (a review restored from the journal
        after a restart); unknown hunk ids are ignored."""
        if path not in self._files:
            return
        if self._stream.building(path):
            self._pending.setdefault(path, {}).update(decisions)
        self._review.restore(path, decisions)
        self._counts_cache.pop(path, None)
        if path == self._path:
            self._rebuild_rows()
            self._show_counts(self._files[path])
            self._refresh()
        self._file_list.viewport().update()

    def current_file(self) -> FileDiff | None:
        """The file shown, or ``None``."""
        return self._files.get(self._path) if self._path is not None else None

    def current_hunk(self) -> DiffHunk | None:
        """The current hunk of the shown file (as proposed, before any edit), or ``None``."""
        file = self.current_file()
        return file.hunks[self._current] if file is not None and self._current >= 0 else None

    def decisions(self, path: str | None = None) -> dict[int, HunkDecision]:
        """Hunk id → decision for ``path`` (default: the shown file)."""
        target = path if path is not None else self._path
        return self._review.decisions(target) if target is not None else {}

    def displayed_rows(self) -> list[DiffRow]:
        """The rows of the shown diff, in display order (headers included)."""
        return self._model.rows()

    def is_unified(self) -> bool:
        """Whether the diff is shown unified (else side by side)."""
        return self._unified

    def set_code_font(self, font: QFont) -> None:
        """Show code in ``font`` (row height, character width and every cached text layout
        follow; ``RowPainter.set_font``)."""
        self._delegate.set_font(font)
        self._list.verticalHeader().setDefaultSectionSize(self._delegate.row_height)
        self._list.verticalScrollBar().setSingleStep(3 * self._delegate.row_height)
        self._editor.setFont(self._delegate.font)
        self._update_hscroll()
        self._list.viewport().update()

    def restyle(self) -> None:
        """The theme changed (``palette.QCOLOURS`` or the token style): drop the painter's
        cached layouts and styles and repaint (``RowPainter.restyle``)."""
        self._delegate.restyle()
        self._list.viewport().update()
        self._file_list.viewport().update()

    def is_read_only(self) -> bool:
        """Whether accept/reject/edit/comment/apply are hidden."""
        return self._read_only

    @Slot(bool)
    def set_unified(self, unified: bool) -> None:
        """Show the diff unified (``True``) or side by side (``False``). Side by side is
        the user's choice kept for later while the view is too narrow for it
        (:meth:`set_split_min_columns`): the view stays unified until it is wide enough."""
        self._prefer_unified = unified
        self._apply_mode(unified or self._too_narrow)

    def set_split_min_columns(self, columns: int) -> None:
        """Issue 16 (``Settings.diff_split_min_columns``): below a width where each side
        would show fewer than ``columns`` characters, show the diff unified (0: never)."""
        self.split_min_columns = max(0, int(columns))
        self._check_width()

    def split_columns(self, width: int | None = None) -> int:
        """Characters a side of the split view shows at row ``width`` px (the row list's
        width by default)."""
        if width is None:
            width = self._list.viewport().width()
        unified, self._delegate.unified = self._delegate.unified, False
        try:
            text = self._delegate.text_width(width)
        finally:
            self._delegate.unified = unified
        return max(0, text // max(1, self._delegate.char_width))

    def _check_width(self) -> None:
        """The row list was resized: too narrow for side by side, or wide enough again."""
        narrow = bool(self.split_min_columns) and self.split_columns() < self.split_min_columns
        if narrow != self._too_narrow:
            self._too_narrow = narrow
            self._split_btn.setEnabled(not narrow)
            self._split_btn.setToolTip(
                f"Too narrow for side by side ({self.split_columns()} characters a side, "
                f"{self.split_min_columns} wanted): shown unified. Widen the panel, or change "
                "Settings > diff_split_min_columns."
                if narrow
                else "Side-by-side view (U toggles)"
            )
        self._apply_mode(self._prefer_unified or narrow)

    def _apply_mode(self, unified: bool) -> None:
        if unified == self._unified:
            return
        top = self._list.indexAt(QPoint(0, 0))
        top_hunk = self._model.row(top.row()).hunk if top.isValid() else -1
        self._unified = unified
        for button, checked in ((self._unified_btn, unified), (self._split_btn, not unified)):
            button.blockSignals(True)
            button.setChecked(checked)
            button.blockSignals(False)
        self._model.set_unified(unified)
        self._delegate.unified = unified
        if top_hunk > 0:
            self._scroll_to_hunk(top_hunk)

    @Slot(bool)
    def set_read_only(self, read_only: bool) -> None:
        """Switch read-only mode (no accept/reject/edit/comment/apply) on or off."""
        self._read_only = read_only
        self._delegate.read_only = self._locked()
        self._close_panels()
        self._apply_bar.setVisible(not read_only)
        self._list.viewport().update()
        self._file_list.viewport().update()

    # internals -----------------------------------------------------------------------------

    def _show_nothing(self) -> None:
        self._path = None
        self._current = -1
        self._model.set_hunks([])
        self._stack.setCurrentIndex(1)
        self._empty.setText("No changes to review")
        self._title.set_full_text("")
        self._counts.setText("")
        self._delegate.applied = False
        self._delegate.read_only = self._read_only
        self._lex_timer.stop()
        self._refresh()

    def _shown_hunks(self, file: FileDiff) -> list[DiffHunk]:
        shown = []
        for hunk in file.hunks:
            edited = self._review.get(file.path, hunk.id).edited_text
            shown.append(hunk if edited is None else edit_hunk(hunk, edited))
        return shown

    def _file_layouts(self, file: FileDiff) -> list[HunkLayout]:
        layouts = self._layouts.get(file.path)
        if layouts is None or len(layouts) != len(file.hunks):
            layouts = self._layouts[file.path] = [hunk_layout(h) for h in file.hunks]
        return layouts

    def _rebuild_rows(self) -> None:
        file = self.current_file()
        hunks = self._shown_hunks(file) if file is not None else []
        layouts = self._file_layouts(file) if file is not None else []
        layouts = [
            lay if h is f else hunk_layout(h)
            for h, f, lay in zip(hunks, file.hunks if file else [], layouts, strict=True)
        ]
        self._model.set_hunks(hunks, layouts, unified=self._unified)
        self._delegate.hunks = self._model.hunks
        self._delegate.unified = self._unified
        self._delegate.current = self._current
        self._longest = min(MAX_CHARS + 2, self._model.longest)
        self._update_hscroll()

    def _show_edited(self, index: int) -> None:
        """Show hunk ``index`` of the shown file as the user edited it (or as proposed)."""
        file = self.current_file()
        if file is None:
            return
        hunk = file.hunks[index]
        edited = self._review.get(file.path, hunk.id).edited_text
        self._model.replace_hunk(index, hunk if edited is None else edit_hunk(hunk, edited))
        self._longest = min(MAX_CHARS + 2, self._model.longest)
        self._update_hscroll()

    def _set_syntax(self, lexer: Any, old_lines: list[str], new_lines: list[str]) -> None:
        longest = max(len(old_lines), len(new_lines))
        self._use_syntax(SyntaxLines(lexer, old_lines), SyntaxLines(lexer, new_lines), longest)

    def _use_syntax(self, old: SyntaxLines, new: SyntaxLines, lines: int) -> None:
        """Paint with these sides' lexing state (``lines``: the longer side's length)."""
        self._delegate.old_syntax = old
        self._delegate.new_syntax = new
        self._delegate._run_cache.clear()
        self._lex_whole = lines <= FULL_LEX_LINES
        self._delegate.gutter_digits = max(3, len(str(max(lines, 1))))

    def _hunk_id(self) -> int:
        hunk = self.current_hunk()
        return hunk.id if hunk is not None else 0

    def _decision_at(self, hunk_index: int) -> HunkDecision | None:
        file = self.current_file()
        if file is None or not 0 <= hunk_index < len(file.hunks):
            return None
        return self._review.get(file.path, file.hunks[hunk_index].id)

    def _on_file_selected(self, item: QListWidgetItem | None, _previous: Any = None) -> None:
        if item is not None:
            self.show_file(item.data(Qt.ItemDataRole.UserRole))

    def _on_row_pressed(self, index: QModelIndex) -> None:
        if index.isValid():
            hunk = self._model.row(index.row()).hunk
            if hunk != self._current:
                self._set_current(hunk, scroll=False)
