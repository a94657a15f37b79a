"""SettingsDialog: edit the settings model, validated inline; list and revoke saved rules."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from pydantic import ValidationError
from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QTabWidget,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from core.errors import UserError
from core.policy import MODE_DESCRIPTIONS, ApprovalMode, Rule, RuleStore
from core.settings import API_KEY_ENV, Settings
from core.settings_check import base_url_hint, check_base_url
from desktop.dialogs.hidden_paths import HiddenPathsEditor
from desktop.dialogs.local_mcp_table import LocalMcpServersEditor
from desktop.dialogs.mcp_table import McpServersEditor

__all__ = ["SettingsDialog"]

_log = logging.getLogger("desktop")

_MODE_LABELS = {
    ApprovalMode.READ_ONLY: "Read-only",
    ApprovalMode.ASK: "Ask (default)",
    ApprovalMode.AUTO: "Auto",
    ApprovalMode.FULL: "Full access",
}
_HOSTED_NOTE = "Hosted tools run on OpenAI's side: they need the OpenAI API, not a local server."
_ACTION_COLORS = {"allow": "#7ee787", "ask": "#e3b341", "deny": "#ff7b72"}
_STYLE = """
SettingsDialog { background: #15171c; }
QGroupBox { color: #8b949e; border: 1px solid #2d323b; border-radius: 6px; margin-top: 14px;
            padding: 10px 8px 8px 8px; font-weight: bold; }
QGroupBox::title { subcontrol-origin: margin; left: 10px; padding: 0 4px; }
QLabel { color: #c9d1d9; background: transparent; }
QLabel[role="hint"] { color: #8b949e; }
QLabel[role="error"] { color: #ff7b72; }
QLabel[role="ok"] { color: #7ee787; }
QLabel#apiKeyMasked { font-family: monospace; color: #f0f6fc; }
QLineEdit, QComboBox { background: #0f1115; color: #c9d1d9; border: 1px solid #353b45;
                       border-radius: 4px; padding: 3px 6px; min-height: 18px; }
QLineEdit[invalid="true"], QComboBox[invalid="true"] { border-color: #e5534b; }
QLineEdit:focus, QComboBox:focus { border-color: #3f6fa8; }
QLineEdit[invalid="true"]:focus { border-color: #ff7b72; }
QComboBox QAbstractItemView { background: #1b1e24; color: #c9d1d9;
                              selection-background-color: #2b3340; }
QCheckBox { color: #c9d1d9; }
QPushButton { color: #c9d1d9; background: #262a32; border: 1px solid #353b45;
              border-radius: 4px; padding: 4px 12px; }
QPushButton:hover { background: #30353f; }
QPushButton:disabled { color: #6e7681; }
QPushButton#revokeButton { color: #ffb4ad; background: #3b1d1d; border-color: #6e2c2c;
                           padding: 1px 10px; }
QTreeWidget { background: #0f1115; color: #c9d1d9; border: 1px solid #2d323b;
              border-radius: 4px; outline: none; }
QTreeWidget::item { padding: 4px 2px; }
QTableWidget { background: #0f1115; color: #c9d1d9; border: 1px solid #2d323b;
               border-radius: 4px; gridline-color: #2d323b; outline: none; }
QTableWidget[invalid="true"] { border-color: #e5534b; }
QTableWidget QLineEdit { border-radius: 0; padding: 0 4px; }
QHeaderView::section { background: #1b1e24; color: #8b949e; border: none;
                       border-bottom: 1px solid #2d323b; padding: 4px 6px; }
"""


def _error_message(error: Any) -> str:
    text = str(error.get("msg", "invalid value"))
    text = text.removeprefix("Value error, ")
    if error.get("type") == "bool_parsing":
        return "must be on or off"
    return text[:1].upper() + text[1:]


def _set_flag(widget: QWidget, name: str, value: bool | str) -> None:
    widget.setProperty(name, value)
    widget.style().unpolish(widget)
    widget.style().polish(widget)


class _Field(QWidget):
    """An input with a red message line under it; ``marked`` (default: the editor) turns red."""

    def __init__(self, editor: QWidget, *extra: QWidget, marked: QWidget | None = None) -> None:
        super().__init__()
        self.editor = editor
        self._marked = marked or editor
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(editor, 1)
        for widget in extra:
            row.addWidget(widget)
        self.error = QLabel()
        self.error.setProperty("role", "error")
        self.error.setWordWrap(True)
        self.error.hide()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addLayout(row)
        layout.addWidget(self.error)

    def set_error(self, message: str) -> None:
        self.error.setText(message)
        self.error.setVisible(bool(message))
        _set_flag(self._marked, "invalid", bool(message))


class SettingsDialog(QDialog):
    """Edit :class:`~core.settings.Settings`; never modal, never saves by itself.

    *Apply* (or *OK*) validates every field with the settings model and shows problems in
    red under the field concerned; valid settings are emitted with :attr:`settingsApplied`
    (the app saves them). The API key is never shown: the dialog shows ``••••abcd`` and
    where the key comes from; *Replace…* opens an empty masked field for a new key and
    *Forget* drops the stored one. The user's saved rules from the :class:`RuleStore` are
    listed with a *Revoke* button each (revoking writes the rules file at once and emits
    :attr:`ruleRevoked`). The *Tools* section turns on OpenAI-hosted tools (web search, code
    interpreter, image generation), the read-only Explorer sub-agent and remote MCP servers
    (a table: label, URL, approval; blank rows are ignored, invalid rows are reported under
    the table and nothing is applied). Show it with ``show()`` or ``open()``, never ``exec()``.

    Signals:
        settingsApplied(object): the new, validated :class:`Settings`.
        ruleRevoked(str): the id of a rule just removed from the store.

    Args:
        settings: the settings to edit (unchanged by the dialog: copies are emitted).
        rule_store: the user's rules, or ``None`` to hide the rules section.
        parent: the parent widget (the main window).
    """

    settingsApplied = Signal(object)
    ruleRevoked = Signal(str)

    def __init__(
        self,
        settings: Settings,
        rule_store: RuleStore | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("settingsDialog")
        self.setWindowTitle("Settings")
        self.setModal(False)
        self.setStyleSheet(_STYLE)
        self._settings = settings
        self._rule_store = rule_store
        self._forget_key = False
        self._file_dialog: QFileDialog | None = None

        # -- model -------------------------------------------------------------------------
        self.model_edit = QLineEdit()
        self.model_edit.setPlaceholderText("gpt-5.5")
        self.base_url_edit = QLineEdit()
        self.base_url_edit.setPlaceholderText("https://api.openai.com/v1 (default)")
        self.base_url_edit.setToolTip(
            "Any server that speaks the Responses API: vLLM, Ollama, a company gateway…"
        )
        self.api_key_label = QLabel()
        self.api_key_label.setObjectName("apiKeyMasked")
        self.api_key_label.setTextInteractionFlags(Qt.TextInteractionFlag.NoTextInteraction)
        self.api_key_source_label = QLabel()
        self.api_key_source_label.setProperty("role", "hint")
        self.replace_key_button = QPushButton("Replace…")
        self.replace_key_button.setObjectName("replaceKeyButton")
        self.replace_key_button.setToolTip("Type a new key; it is stored in the settings file")
        self.forget_key_button = QPushButton("Forget")
        self.forget_key_button.setObjectName("forgetKeyButton")
        self.forget_key_button.setToolTip("Remove the key stored in the settings file")
        self.api_key_edit = QLineEdit()
        self.api_key_edit.setObjectName("apiKeyEdit")
        self.api_key_edit.setEchoMode(QLineEdit.EchoMode.Password)
        self.api_key_edit.setPlaceholderText("Paste the new API key")
        self.api_key_edit.hide()
        self.replace_key_button.clicked.connect(self._start_replace)
        self.forget_key_button.clicked.connect(self._forget)
        key_row = QWidget()
        key_layout = QHBoxLayout(key_row)
        key_layout.setContentsMargins(0, 0, 0, 0)
        key_layout.addWidget(self.api_key_label)
        key_layout.addWidget(self.api_key_source_label, 1)
        key_layout.addWidget(self.replace_key_button)
        key_layout.addWidget(self.forget_key_button)
        key_box = QWidget()
        key_box_layout = QVBoxLayout(key_box)
        key_box_layout.setContentsMargins(0, 0, 0, 0)
        key_box_layout.setSpacing(4)
        key_box_layout.addWidget(key_row)
        key_box_layout.addWidget(self.api_key_edit)
        self.no_key_check = QCheckBox("No key needed (the server takes requests without one)")
        self.no_key_check.setObjectName("noKeyNeeded")
        self.no_key_check.setToolTip(
            "A server on localhost, 127.0.0.1 or ::1 never needs a key; tick this for another "
            "server that needs none (a gateway on the network)"
        )
        key_box_layout.addWidget(self.no_key_check)

        self._fields: dict[str, _Field] = {
            "model": _Field(self.model_edit),
            "base_url": _Field(self.base_url_edit),
            "api_key": _Field(key_box),
        }
        model_group = self._group(
            "Model",
            [("Model", "model"), ("Base URL", "base_url"), ("API key", "api_key")],
        )

        # -- safety ------------------------------------------------------------------------
        self.mode_combo = QComboBox()
        for mode in ApprovalMode:
            self.mode_combo.addItem(_MODE_LABELS[mode], mode.value)
            self.mode_combo.setItemData(
                self.mode_combo.count() - 1, MODE_DESCRIPTIONS[mode], Qt.ItemDataRole.ToolTipRole
            )
        self.mode_hint = QLabel()
        self.mode_hint.setProperty("role", "hint")
        self.mode_hint.setWordWrap(True)
        self.mode_combo.currentIndexChanged.connect(self._update_mode_hint)
        self.sandbox_check = QCheckBox(
            "Run shell commands in a sandbox (bubblewrap) when available"
        )
        self.rules_file_edit = QLineEdit()
        self._fields["approval_mode"] = _Field(self.mode_combo)
        self._fields["sandbox_enabled"] = _Field(self.sandbox_check)
        self._fields["rules_file"] = _Field(self.rules_file_edit)
        safety_group = self._group(
            "Safety",
            [
                ("Approval mode", "approval_mode"),
                ("", self.mode_hint),
                ("Sandbox", "sandbox_enabled"),
                ("Rules file", "rules_file"),
            ],
        )

        self.hidden_editor = HiddenPathsEditor()
        self._fields["sandbox_hidden_paths"] = _Field(
            self.hidden_editor, marked=self.hidden_editor.extra_edit
        )
        self._fields["sandbox_shown_paths"] = self._fields["sandbox_hidden_paths"]
        self.hidden_group = self._group(
            "Hidden from commands", [("Secrets", "sandbox_hidden_paths")]
        )

        # -- tools -------------------------------------------------------------------------
        self.chromium_edit = QLineEdit()
        self.chromium_edit.setPlaceholderText("found on PATH when empty (e.g. /usr/bin/chromium)")
        self.codex_edit = QLineEdit()
        self.codex_edit.setPlaceholderText("found on PATH when empty (e.g. ~/.local/bin/codex)")
        self._fields["chromium_path"] = _Field(
            self.chromium_edit, self._browse_button(self.chromium_edit, "Chromium")
        )
        self._fields["codex_path"] = _Field(
            self.codex_edit, self._browse_button(self.codex_edit, "the Codex CLI")
        )
        self.codex_login_check = QCheckBox("Use my Codex login (instead of this model and key)")
        self.codex_login_check.setToolTip(
            "Codex runs on your own Codex CLI sign-in (codex login, e.g. ChatGPT) rather than "
            "on the model, server and key above"
        )
        self._fields["codex_use_login"] = _Field(self.codex_login_check)
        self.web_search_check = QCheckBox("Web search (OpenAI-hosted)")
        self.code_interpreter_check = QCheckBox("Code interpreter (OpenAI-hosted)")
        self.image_generation_check = QCheckBox("Image generation (OpenAI-hosted)")
        self.hosted_note = QLabel(_HOSTED_NOTE)
        self.hosted_note.setProperty("role", "hint")
        self.hosted_note.setWordWrap(True)
        self.explorer_check = QCheckBox("Explorer sub-agent (read-only repository questions)")
        self.explorer_check.setToolTip(
            "The agent can ask a nested agent that only reads the repository (rg, ls, cat, "
            "git log/show/diff); its commands follow the approval mode"
        )
        self._fields["web_search"] = _Field(self.web_search_check)
        self._fields["code_interpreter"] = _Field(self.code_interpreter_check)
        self._fields["image_generation"] = _Field(self.image_generation_check)
        self._fields["explorer"] = _Field(self.explorer_check)
        self.mcp_editor = McpServersEditor()
        self.mcp_table = self.mcp_editor.table
        self.add_mcp_button = self.mcp_editor.add_button
        self.remove_mcp_button = self.mcp_editor.remove_button
        self._fields["mcp_servers"] = _Field(self.mcp_editor, marked=self.mcp_table)
        self.local_mcp_editor = LocalMcpServersEditor()  # issue 18: [mcp_servers.NAME]
        self._fields["local_mcp_servers"] = _Field(self.local_mcp_editor)
        tools_group = self._group(
            "Tools",
            [
                ("Chromium", "chromium_path"),
                ("Codex CLI", "codex_path"),
                ("", "codex_use_login"),
                ("Hosted", "web_search"),
                ("", "code_interpreter"),
                ("", "image_generation"),
                ("", self.hosted_note),
                ("Sub-agents", "explorer"),
                ("MCP servers", "mcp_servers"),
                ("Local MCP", "local_mcp_servers"),
            ],
        )

        # -- rules -------------------------------------------------------------------------
        self.rules_tree = QTreeWidget()
        self.rules_tree.setObjectName("rulesTree")
        self.rules_tree.setHeaderLabels(["Action", "Pattern", "Matches", ""])
        self.rules_tree.setRootIsDecorated(False)
        self.rules_tree.setSelectionMode(QTreeWidget.SelectionMode.NoSelection)
        header = self.rules_tree.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(3, QHeaderView.ResizeMode.ResizeToContents)
        self.rules_tree.setMinimumHeight(110)
        self.rules_empty = QLabel("No saved rules. “Always allow” in an approval adds one here.")
        self.rules_empty.setProperty("role", "hint")
        self.rules_error = QLabel()
        self.rules_error.setProperty("role", "error")
        self.rules_error.setWordWrap(True)
        self.rules_error.hide()
        self.rules_group = QGroupBox("Saved rules")
        rules_layout = QVBoxLayout(self.rules_group)
        rules_layout.addWidget(self.rules_tree)
        rules_layout.addWidget(self.rules_empty)
        rules_layout.addWidget(self.rules_error)
        self.rules_group.setVisible(rule_store is not None)

        # -- buttons -----------------------------------------------------------------------
        self.status_label = QLabel()
        self.status_label.setObjectName("settingsStatus")
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok
            | QDialogButtonBox.StandardButton.Apply
            | QDialogButtonBox.StandardButton.Cancel
        )
        for button in self.buttons.buttons():
            if isinstance(button, QPushButton):
                button.setAutoDefault(False)
                button.setDefault(False)
        self.apply_button = self.buttons.button(QDialogButtonBox.StandardButton.Apply)
        self.ok_button = self.buttons.button(QDialogButtonBox.StandardButton.Ok)
        self.apply_button.clicked.connect(self.apply)
        self.ok_button.clicked.connect(self._ok)
        self.buttons.rejected.connect(self.reject)
        bottom = QHBoxLayout()
        bottom.addWidget(self.status_label, 1)
        bottom.addWidget(self.buttons)

        self.tabs = QTabWidget()
        for title, groups in (
            ("Model", [model_group]),
            ("Safety", [safety_group, self.hidden_group, self.rules_group]),
            ("Tools", [tools_group]),
        ):
            page = QWidget()
            column = QVBoxLayout(page)
            column.setContentsMargins(6, 8, 6, 6)
            for group in groups:
                column.addWidget(group, 1 if group is self.rules_group else 0)
            if self.rules_group not in groups:
                column.addStretch(1)
            self.tabs.addTab(page, title)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(14, 8, 14, 12)
        layout.addWidget(self.tabs, 1)
        layout.addLayout(bottom)
        self.resize(640, min(self.sizeHint().height(), 620))

        self.set_settings(settings)
        self.reload_rules()

    # -- public ----------------------------------------------------------------------------

    @property
    def settings(self) -> Settings:
        """The settings last applied (or given)."""
        return self._settings

    @Slot(object)
    def set_settings(self, settings: Settings) -> None:
        """Show ``settings`` in the fields, discarding unapplied edits and messages."""
        self._settings = settings
        self.model_edit.setText(settings.model)
        self.base_url_edit.setText(settings.base_url or "")
        self.no_key_check.setChecked(settings.no_key_needed)
        self.mode_combo.setCurrentIndex(self.mode_combo.findData(settings.approval_mode.value))
        self._update_mode_hint()
        self.sandbox_check.setChecked(settings.sandbox_enabled)
        self.rules_file_edit.setText(str(settings.rules_file) if settings.rules_file else "")
        self.rules_file_edit.setPlaceholderText(f"{settings.rules_path} (default)")
        self.chromium_edit.setText(str(settings.chromium_path or ""))
        self.codex_edit.setText(str(settings.codex_path or ""))
        self.codex_login_check.setChecked(settings.codex_use_login)
        self.web_search_check.setChecked(settings.web_search)
        self.code_interpreter_check.setChecked(settings.code_interpreter)
        self.image_generation_check.setChecked(settings.image_generation)
        self.explorer_check.setChecked(settings.explorer)
        self.mcp_editor.set_servers(settings.mcp_servers)
        self.local_mcp_editor.set_servers(settings.local_mcp_servers)
        self.hidden_editor.set_paths(settings.sandbox_hidden_paths, settings.sandbox_shown_paths)
        self._forget_key = False
        self._end_replace()
        self._show_key()
        for field in self._fields.values():
            field.set_error("")
        self._status("", "hint")

    @Slot()
    def reload_rules(self) -> None:
        """Re-read the rules from the store and list them."""
        self.rules_tree.clear()
        if self._rule_store is None:
            return
        try:
            rules = self._rule_store.list()
        except UserError as exc:
            self._rules_error(exc.message)
            rules = []
        else:
            self._rules_error("")
        for rule in rules:
            self._add_rule_row(rule)
        self.rules_tree.setVisible(bool(rules))
        self.rules_empty.setVisible(not rules and self.rules_error.isHidden())

    @Slot()
    def apply(self) -> bool:
        """Validate the fields; emit :attr:`settingsApplied` when they are valid.

        Returns:
            Whether the settings were valid (and emitted).
        """
        for field in self._fields.values():
            field.set_error("")
        url_problem = None
        try:  # issue 16: the validator ``tandem run`` uses too
            check_base_url(self.base_url_edit.text())
        except UserError as exc:
            url_problem = exc.message
            self._fields["base_url"].set_error(url_problem)
        try:
            new = Settings.model_validate(self._collect())
        except ValidationError as exc:
            first: _Field | None = None
            for error in exc.errors():
                name = str(error["loc"][0]) if error.get("loc") else "model"
                field = self._fields.get(name, self._fields["model"])
                if field.error.isHidden():
                    if name == "mcp_servers":
                        row, message = self.mcp_editor.locate_error(
                            error.get("loc", ()), _error_message(error)
                        )
                        field.set_error(message)
                        if row is not None:
                            self.mcp_table.selectRow(row)
                    else:
                        field.set_error(_error_message(error))
                first = first or field
            self._status("Not applied: fix the fields marked in red.", "error")
            if first is not None:
                self._show_tab_of(first.editor)
                first.editor.setFocus()
            return False
        if url_problem is not None:
            self._status("Not applied: fix the fields marked in red.", "error")
            self._show_tab_of(self.base_url_edit)
            self.base_url_edit.setFocus()
            return False
        self._settings = new
        self._forget_key = False
        self._end_replace()
        self._show_key()
        hint = base_url_hint(new.base_url)
        self._status(f"Applied. {hint}." if hint else "Applied.", "warning" if hint else "ok")
        self.settingsApplied.emit(new)
        return True

    def _show_tab_of(self, widget: QWidget) -> None:
        """Bring forward the tab that holds ``widget`` (an invalid field the user must see)."""
        for index in range(self.tabs.count()):
            page = self.tabs.widget(index)
            if page is widget or page.isAncestorOf(widget):
                self.tabs.setCurrentIndex(index)
                return

    @Slot()
    def add_mcp_server(self) -> None:
        """Append an empty MCP server row and start editing its label."""
        self.mcp_editor.add_server()

    @Slot()
    def remove_mcp_server(self) -> None:
        """Remove the selected MCP server rows (applied with the other fields)."""
        self.mcp_editor.remove_selected()

    # -- building ----------------------------------------------------------------------------

    def _group(self, title: str, rows: list[tuple[str, str | QWidget]]) -> QGroupBox:
        group = QGroupBox(title)
        grid = QGridLayout(group)
        grid.setColumnStretch(1, 1)
        grid.setColumnMinimumWidth(0, 100)
        grid.setHorizontalSpacing(12)
        grid.setVerticalSpacing(6)
        for row, (label, target) in enumerate(rows):
            widget = self._fields[target] if isinstance(target, str) else target
            if label:
                name = QLabel(label)
                name.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignTop)
                name.setContentsMargins(0, 4, 0, 0)
                grid.addWidget(name, row, 0)
            grid.addWidget(widget, row, 1)
        return group

    def _browse_button(self, edit: QLineEdit, what: str) -> QPushButton:
        button = QPushButton("Browse…")
        button.setAutoDefault(False)
        button.clicked.connect(lambda: self._browse(edit, what))
        return button

    def _browse(self, edit: QLineEdit, what: str) -> None:
        dialog = QFileDialog(self, f"Choose {what}")
        dialog.setFileMode(QFileDialog.FileMode.ExistingFile)
        if edit.text().strip():
            dialog.setDirectory(str(Path(edit.text().strip()).expanduser().parent))
        dialog.fileSelected.connect(edit.setText)
        self._file_dialog = dialog
        dialog.open()  # window-modal without a nested event loop

    def _add_rule_row(self, rule: Rule) -> None:
        item = QTreeWidgetItem([rule.action, rule.pattern, rule.description, ""])
        item.setForeground(0, QBrush(QColor(_ACTION_COLORS.get(rule.action, "#c9d1d9"))))
        item.setToolTip(1, f"{rule.kind} rule {rule.id}")
        mono = item.font(1)
        mono.setFamily("monospace")
        mono.setStyleHint(mono.StyleHint.Monospace)
        item.setFont(1, mono)
        if rule.created_at:
            item.setToolTip(2, f"{rule.description}\nadded {rule.created_at}")
        self.rules_tree.addTopLevelItem(item)
        button = QPushButton("Revoke")
        button.setObjectName("revokeButton")
        button.setAutoDefault(False)
        button.setToolTip(f"Remove the rule `{rule.pattern}`")
        button.setProperty("ruleId", rule.id)
        button.clicked.connect(lambda: self._revoke(rule.id))
        self.rules_tree.setItemWidget(item, 3, button)

    # -- behaviour ---------------------------------------------------------------------------

    def _collect(self) -> dict[str, Any]:
        s = self._settings
        # every setting the dialog does not show is kept as it is (checkpoint retention, the
        # input-wait watch, context thresholds...), then the dialog's fields on top
        data: dict[str, Any] = {name: getattr(s, name) for name in type(s).model_fields}
        data |= {
            "model": self.model_edit.text(),
            "base_url": self.base_url_edit.text().strip() or None,
            "no_key_needed": self.no_key_check.isChecked(),
            "agents_md_cap_bytes": s.agents_md_cap_bytes,
            "approval_mode": self.mode_combo.currentData(),
            "sandbox_enabled": self.sandbox_check.isChecked(),
            "chromium_path": self.chromium_edit.text().strip() or None,
            "codex_path": self.codex_edit.text().strip() or None,
            "codex_use_login": self.codex_login_check.isChecked(),
            "codex_stall_seconds": s.codex_stall_seconds,
            "rules_file": self.rules_file_edit.text().strip() or None,
            "recent_folders": list(s.recent_folders),
            "last_folder": s.last_folder,
            "web_search": self.web_search_check.isChecked(),
            "code_interpreter": self.code_interpreter_check.isChecked(),
            "image_generation": self.image_generation_check.isChecked(),
            "explorer": self.explorer_check.isChecked(),
            "mcp_servers": self.mcp_editor.servers(),
            "local_mcp_servers": self.local_mcp_editor.servers(),
            "sandbox_hidden_paths": self.hidden_editor.hidden_paths(),
            "sandbox_shown_paths": self.hidden_editor.shown_paths(),
            "api_key": s.api_key,
            "api_key_source": s.api_key_source,
        }
        typed = self.api_key_edit.text().strip()
        if not self.api_key_edit.isHidden() and typed:
            data["api_key"] = typed
            data["api_key_source"] = "file"
        elif self._forget_key:
            data["api_key"] = None
            data["api_key_source"] = "none"
        return data

    def _show_key(self) -> None:
        s = self._settings
        if self._forget_key:
            self.api_key_label.setText("(none)")
            self.api_key_source_label.setText("the stored key will be removed on Apply")
        elif s.api_key is None:
            self.api_key_label.setText("(none)")
            self.api_key_source_label.setText(f"not set: set {API_KEY_ENV} or store one here")
        else:
            self.api_key_label.setText(s.masked_api_key())
            if s.api_key_source == "env":
                self.api_key_source_label.setText(f"from ${API_KEY_ENV}")
            else:
                self.api_key_source_label.setText("stored in the settings file (mode 0600)")
        if s.api_key_source == "env":
            self.api_key_source_label.setToolTip(
                f"${API_KEY_ENV} wins over a stored key; a replacement is stored in the "
                "settings file and used when the variable is unset"
            )
        else:
            self.api_key_source_label.setToolTip("")
        self.forget_key_button.setVisible(s.api_key_source == "file" and not self._forget_key)

    def _start_replace(self) -> None:
        self.api_key_edit.clear()
        self.api_key_edit.show()
        self.api_key_edit.setFocus()
        self.replace_key_button.setEnabled(False)

    def _end_replace(self) -> None:
        self.api_key_edit.clear()
        self.api_key_edit.hide()
        self.replace_key_button.setEnabled(True)

    def _forget(self) -> None:
        self._forget_key = True
        self._end_replace()
        self._show_key()

    def _ok(self) -> None:
        if self.apply():
            self.accept()

    def _revoke(self, rule_id: str) -> None:
        if self._rule_store is None:
            return
        try:
            self._rule_store.revoke(rule_id)
        except UserError as exc:
            self._rules_error(exc.message)
            return
        _log.info("rule %s revoked", rule_id)
        self.reload_rules()
        self.ruleRevoked.emit(rule_id)

    def _rules_error(self, message: str) -> None:
        self.rules_error.setText(message)
        self.rules_error.setVisible(bool(message))

    def _update_mode_hint(self) -> None:
        value = self.mode_combo.currentData()
        self.mode_hint.setText(MODE_DESCRIPTIONS[ApprovalMode(value)] if value else "")

    def _status(self, text: str, role: str) -> None:
        self.status_label.setText(text)
        _set_flag(self.status_label, "role", role)
