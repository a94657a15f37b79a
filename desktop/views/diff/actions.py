"""The diff view's review actions: accept, reject, edit and comment a hunk, apply the review."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Slot

from .model import Verdict, editor_text_to_hunk_text, hunk_text_to_editor_text

__all__ = ["DiffViewActions"]


class DiffViewActions:
    """Mixin of :class:`~desktop.views.diff.view.DiffView`: the per-hunk decisions (the
    review state is ``ReviewState``; signals are the view's)."""

    _review: Any
    _list: Any

    @Slot()
    def accept_current(self) -> None:
        """Accept the current hunk and move to the next one."""
        self._decide_and_advance(Verdict.ACCEPTED)

    @Slot()
    def reject_current(self) -> None:
        """Reject the current hunk and move to the next one."""
        self._decide_and_advance(Verdict.REJECTED)

    @Slot()
    def edit_current(self) -> None:
        """Open the inline editor on the proposed side of the current hunk."""
        hunk = self.current_hunk()
        if self._locked() or hunk is None or self._path is None:
            return
        self._close_panels()
        decision = self._review.get(self._path, hunk.id)
        text = decision.edited_text if decision.edited_text is not None else hunk.new_text
        self._editing = self._current
        self._edit_label.setText(
            f"Edit the proposed lines of hunk {hunk.id} ({hunk.header}). "
            "Ctrl+Enter saves (and accepts the hunk), Esc cancels."
        )
        self._editor.setPlainText(hunk_text_to_editor_text(text))
        self._edit_panel.show()
        self._keep_current_in_view()
        self._editor.setFocus()

    @Slot()
    def comment_current(self) -> None:
        """Open the inline comment field on the current hunk."""
        hunk = self.current_hunk()
        if self._locked() or hunk is None or self._path is None:
            return
        self._close_panels()
        self._commenting = self._current
        self._comment_label.setText(f"Comment on hunk {hunk.id}:")
        self._comment_edit.setText(self._review.get(self._path, hunk.id).comment or "")
        self._comment_panel.show()
        self._keep_current_in_view()
        self._comment_edit.setFocus()

    @Slot()
    def accept_all(self) -> None:
        """Accept every hunk of the shown file still pending (explicit decisions stay);
        nothing while its build streams (every hunk must be there to be decided)."""
        self._decide_pending(Verdict.ACCEPTED)

    @Slot()
    def reject_all(self) -> None:
        """Reject every hunk of the shown file still pending (explicit decisions stay)."""
        self._decide_pending(Verdict.REJECTED)

    def _decide_pending(self, verdict: Verdict) -> None:
        file = self.current_file()
        if self._locked() or file is None or file.proposal_id is None:
            return
        if self._stream.building(file.path):
            return
        if file.path in self._errors and verdict is not Verdict.REJECTED:
            return  # a failed build's proposal can still be rejected, never accepted blind
        changed = self._review.decide_pending(file.path, verdict)
        if not changed:
            return
        self._list.viewport().update()
        self._refresh()
        self.decisionsChanged.emit(file.path, changed)

    @Slot()
    def apply_reviewed(self) -> None:
        """Emit ``applyRequested`` for the shown file (nothing in read-only mode or without a
        proposal)."""
        file = self.current_file()
        if self._locked() or file is None or file.proposal_id is None:
            return
        if self._stream.building(file.path):  # every hunk must be there to be decided
            return
        decisions = self._review.decisions(file.path)
        if file.path in self._errors and any(d.accepted for d in decisions.values()):
            return  # a failed build: never half a proposal applied (Ctrl+Enter included)
        self.applyRequested.emit(file.proposal_id, decisions, self._message.text().strip())

    @Slot()
    def _close_panels(self) -> None:
        had_focus = self._edit_panel.isVisible() or self._comment_panel.isVisible()
        self._editing = self._commenting = None
        self._edit_panel.hide()
        self._comment_panel.hide()
        if had_focus:
            self._list.setFocus()

    def _keep_current_in_view(self) -> None:
        """After a panel opened below the diff (the viewport shrank), show the hunk again."""
        layout = self.layout()
        if layout is not None:
            layout.activate()
        self._scroll_to_hunk(self._current)

    def _decide(self, index: int, verdict: Verdict) -> None:
        file = self.current_file()
        if self._locked() or file is None or not 0 <= index < len(file.hunks):
            return
        hunk_id = file.hunks[index].id
        decision = self._review.set_verdict(file.path, hunk_id, verdict)
        self._list.viewport().update()
        self._refresh()
        self.decisionChanged.emit(file.path, hunk_id, decision)

    def _decide_and_advance(self, verdict: Verdict) -> None:
        if self._locked() or self._current < 0:
            return
        self._decide(self._current, verdict)
        if self._current < len(self._headers) - 1:
            self._set_current(self._current + 1)

    def _header_action(self, index: int, action: str) -> None:
        if index != self._current:
            self._set_current(index, scroll=False)
        decision = self._decision_at(index)
        if decision is None:
            return
        if action == "accept":
            self._decide(index, Verdict.PENDING if decision.accepted else Verdict.ACCEPTED)
        elif action == "reject":
            self._decide(index, Verdict.PENDING if decision.rejected else Verdict.REJECTED)
        elif action == "edit":
            self.edit_current()
        elif action == "comment":
            self.comment_current()

    def _save_edit(self) -> None:
        file = self.current_file()
        if self._editing is None or file is None:
            return
        hunk = file.hunks[self._editing]
        index = self._editing
        edited = editor_text_to_hunk_text(self._editor.toPlainText(), hunk.new_text)
        self._review.set_edit(file.path, hunk.id, None if edited == hunk.new_text else edited)
        decision = self._review.set_verdict(file.path, hunk.id, Verdict.ACCEPTED)
        self._editing = None
        scroll = self._list.verticalScrollBar().value()
        self._show_edited(index)
        self._list.verticalScrollBar().setValue(scroll)
        self._close_panels()
        self._counts_cache.pop(file.path, None)
        self._show_counts(file)
        self._file_list.viewport().update()
        self._refresh()
        self.decisionChanged.emit(file.path, hunk.id, decision)

    def _save_comment(self) -> None:
        file = self.current_file()
        if self._commenting is None or file is None:
            return
        hunk = file.hunks[self._commenting]
        text = self._comment_edit.text().strip()
        decision = self._review.set_comment(file.path, hunk.id, text or None)
        self._commenting = None
        self._close_panels()
        self._list.viewport().update()
        self.decisionChanged.emit(file.path, hunk.id, decision)
