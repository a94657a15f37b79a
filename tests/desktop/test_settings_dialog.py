"""SettingsDialog: fields, inline validation on Apply, the masked API key, rule revocation,
the tools section (hosted tools, the Explorer, MCP servers)."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtWidgets import QComboBox, QLabel, QLineEdit, QPushButton, QWidget

from core.policy import RuleStore, command_rule, patch_rule
from core.settings import McpServer, Settings, load_settings, save_settings
from desktop.dialogs.settings_dialog import SettingsDialog

KEY = "sk-proj-SECRETSECRETSECRETwxyz"


def _program(tmp_path: Path, name: str) -> Path:
    path = tmp_path / name
    path.write_text("#!/bin/sh\n")
    path.chmod(0o755)
    return path


@pytest.fixture
def store(tmp_path: Path) -> RuleStore:
    s = RuleStore(tmp_path / "rules.json")
    s.add(command_rule("git diff *"))
    s.add(patch_rule("docs/**"))
    return s


def _dialog(qtbot, settings: Settings, store: RuleStore | None = None) -> SettingsDialog:
    dialog = SettingsDialog(settings, store)
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitExposed(dialog)
    return dialog


def _all_text(widget: QWidget) -> str:
    parts: list[str] = []
    for child in [widget, *widget.findChildren(QWidget)]:
        parts.append(child.toolTip())
        if isinstance(child, QLabel | QLineEdit | QPushButton):
            parts.append(child.text())
        if isinstance(child, QLineEdit):
            parts.append(child.placeholderText())
    return "\n".join(parts)


def test_non_modal_and_populated(qtbot, tmp_path: Path) -> None:
    chromium = _program(tmp_path, "chromium")
    settings = Settings(
        model="gpt-x",
        base_url="http://127.0.0.1:9000/v1",
        approval_mode="auto",
        sandbox_enabled=False,
        chromium_path=chromium,
    )
    dialog = _dialog(qtbot, settings)
    assert not dialog.isModal()
    assert dialog.model_edit.text() == "gpt-x"
    assert dialog.base_url_edit.text() == "http://127.0.0.1:9000/v1"
    assert dialog.mode_combo.currentData() == "auto"
    assert "sandboxed" in dialog.mode_hint.text()
    assert not dialog.sandbox_check.isChecked()
    assert dialog.chromium_edit.text() == str(chromium)
    assert dialog.codex_edit.text() == ""
    assert not dialog.rules_group.isVisibleTo(dialog)  # no store given


def test_apply_valid_changes_emits_new_settings(qtbot, tmp_path: Path) -> None:
    codex = _program(tmp_path, "codex")
    original = Settings(recent_folders=[tmp_path], last_folder=tmp_path)
    dialog = _dialog(qtbot, original)
    dialog.model_edit.setText("  gpt-other ")
    dialog.base_url_edit.setText("https://gw.example.com/v1")
    dialog.mode_combo.setCurrentIndex(dialog.mode_combo.findData("read-only"))
    dialog.sandbox_check.setChecked(False)
    dialog.codex_edit.setText(str(codex))
    dialog.rules_file_edit.setText(str(tmp_path / "r.json"))
    with qtbot.waitSignal(dialog.settingsApplied) as sig:
        qtbot.mouseClick(dialog.apply_button, Qt.MouseButton.LeftButton)
    new = sig.args[0]
    assert isinstance(new, Settings)
    assert new.model == "gpt-other"
    assert new.base_url == "https://gw.example.com/v1"
    assert new.approval_mode.value == "read-only"
    assert new.sandbox_enabled is False
    assert new.codex_path == codex
    assert new.rules_file == tmp_path / "r.json"
    assert new.recent_folders == [tmp_path] and new.last_folder == tmp_path  # preserved
    assert dialog.settings is new
    assert original.model == "gpt-5.5"  # the given settings are not mutated
    assert dialog.status_label.text() == "Applied."
    assert dialog.isVisible()


def test_invalid_fields_show_inline_messages_and_emit_nothing(qtbot, tmp_path: Path) -> None:
    dialog = _dialog(qtbot, Settings())
    dialog.base_url_edit.setText("ftp://files.example.com")
    dialog.codex_edit.setText(str(tmp_path / "missing-codex"))
    dialog.chromium_edit.setText(str(_program(tmp_path, "chromium")))
    dialog.model_edit.setText("")
    with qtbot.assertNotEmitted(dialog.settingsApplied):
        assert dialog.apply() is False
    fields = dialog._fields
    assert "http:// or https://" in fields["base_url"].error.text()
    assert fields["base_url"].error.isVisible()
    assert fields["base_url"].error.property("role") == "error"
    assert "does not exist" in fields["codex_path"].error.text()
    assert "empty" in fields["model"].error.text().lower()
    assert not fields["chromium_path"].error.isVisible()
    assert dialog.base_url_edit.property("invalid") is True
    assert "red" in dialog.status_label.text()

    # OK with errors keeps the dialog open; after fixing, OK applies and closes.
    qtbot.mouseClick(dialog.ok_button, Qt.MouseButton.LeftButton)
    assert dialog.isVisible()
    dialog.base_url_edit.setText("")
    dialog.codex_edit.setText("")
    dialog.model_edit.setText("gpt-5.5")
    with qtbot.waitSignal(dialog.settingsApplied):
        qtbot.mouseClick(dialog.ok_button, Qt.MouseButton.LeftButton)
    assert not dialog.isVisible()
    assert not dialog._fields["base_url"].error.isVisible()
    assert dialog.base_url_edit.property("invalid") is False


def test_api_key_is_masked_and_never_shown(qtbot) -> None:
    dialog = _dialog(qtbot, Settings(api_key=KEY))
    assert dialog.api_key_label.text() == "••••wxyz"
    assert "settings file" in dialog.api_key_source_label.text()
    text = _all_text(dialog)
    assert KEY not in text and "SECRET" not in text
    assert dialog.api_key_edit.isHidden()
    assert dialog.api_key_edit.echoMode() == QLineEdit.EchoMode.Password


def test_replace_the_key(qtbot) -> None:
    dialog = _dialog(qtbot, Settings(api_key=KEY))
    qtbot.mouseClick(dialog.replace_key_button, Qt.MouseButton.LeftButton)
    assert dialog.api_key_edit.isVisible() and dialog.api_key_edit.text() == ""
    qtbot.keyClicks(dialog.api_key_edit, "sk-new-key-000000000000001234")
    with qtbot.waitSignal(dialog.settingsApplied) as sig:
        dialog.apply()
    new = sig.args[0]
    assert new.api_key.get_secret_value() == "sk-new-key-000000000000001234"
    assert new.api_key_source == "file"
    assert dialog.api_key_label.text() == "••••1234"
    assert dialog.api_key_edit.isHidden() and dialog.api_key_edit.text() == ""
    assert "sk-new-key" not in _all_text(dialog)


def test_replace_with_nothing_keeps_the_key_and_forget_removes_it(qtbot) -> None:
    dialog = _dialog(qtbot, Settings(api_key=KEY))
    dialog.replace_key_button.click()
    with qtbot.waitSignal(dialog.settingsApplied) as sig:
        dialog.apply()
    assert sig.args[0].api_key.get_secret_value() == KEY
    assert dialog.forget_key_button.isVisible()
    qtbot.mouseClick(dialog.forget_key_button, Qt.MouseButton.LeftButton)
    assert "removed" in dialog.api_key_source_label.text()
    with qtbot.waitSignal(dialog.settingsApplied) as sig:
        dialog.apply()
    assert sig.args[0].api_key is None
    assert dialog.api_key_label.text() == "(none)"
    assert not dialog.forget_key_button.isVisible()


def test_key_from_environment(qtbot, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    settings = load_settings()
    dialog = _dialog(qtbot, settings)
    assert dialog.api_key_label.text() == "••••wxyz"
    assert "$OPENAI_API_KEY" in dialog.api_key_source_label.text()
    assert not dialog.forget_key_button.isVisible()
    dialog.model_edit.setText("m2")
    with qtbot.waitSignal(dialog.settingsApplied) as sig:
        dialog.apply()
    assert sig.args[0].api_key_source == "env"
    path = save_settings(sig.args[0])
    assert KEY not in path.read_text()


def test_rules_listed_and_revoked(qtbot, store: RuleStore) -> None:
    dialog = _dialog(qtbot, Settings(), store)
    tree = dialog.rules_tree
    assert tree.topLevelItemCount() == 2
    first = tree.topLevelItem(0)
    assert (first.text(0), first.text(1)) == ("allow", "git diff *")
    assert "git diff" in first.text(2)
    assert tree.topLevelItem(1).text(1) == "docs/**"
    button = tree.itemWidget(first, 3)
    assert isinstance(button, QPushButton) and button.text() == "Revoke"
    rule_id = button.property("ruleId")
    with qtbot.waitSignal(dialog.ruleRevoked) as sig:
        qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    assert sig.args == [rule_id]
    assert [r.pattern for r in store.list()] == ["docs/**"]
    assert tree.topLevelItemCount() == 1
    tree.itemWidget(tree.topLevelItem(0), 3).click()
    assert store.list() == []
    dialog.tabs.setCurrentIndex(1)  # Safety
    assert dialog.rules_empty.isVisible() and not tree.isVisible()


def test_unreadable_rules_file_shows_message(qtbot, tmp_path: Path) -> None:
    path = tmp_path / "rules.json"
    path.write_text("{not json")
    dialog = _dialog(qtbot, Settings(), RuleStore(path))
    dialog.tabs.setCurrentIndex(1)  # Safety
    assert dialog.rules_error.isVisible()
    assert "not valid JSON" in dialog.rules_error.text()
    assert path.read_text() == "{not json"


def test_set_settings_discards_edits(qtbot) -> None:
    dialog = _dialog(qtbot, Settings())
    dialog.base_url_edit.setText("ftp://x")
    dialog.apply()
    dialog.set_settings(Settings(model="reset"))
    assert dialog.model_edit.text() == "reset"
    assert dialog.base_url_edit.text() == ""
    assert not dialog._fields["base_url"].error.isVisible()


# -- tools: hosted tools, the Explorer, MCP servers -----------------------------------------------


def _combo(dialog: SettingsDialog, row: int) -> QComboBox:
    widget = dialog.mcp_table.cellWidget(row, 2)
    assert isinstance(widget, QComboBox)
    return widget


def _row(dialog: SettingsDialog, row: int) -> tuple[str, str, str]:
    table = dialog.mcp_table
    return (table.item(row, 0).text(), table.item(row, 1).text(), _combo(dialog, row).currentText())


def test_tools_section_shows_the_settings(qtbot) -> None:
    settings = Settings(
        code_interpreter=True,
        explorer=False,
        mcp_servers=[
            McpServer(label="deepwiki", url="https://mcp.deepwiki.com/mcp"),
            McpServer(label="gh", url="http://127.0.0.1:7/mcp", require_approval="never"),
        ],
    )
    dialog = _dialog(qtbot, settings)
    assert dialog.web_search_check.text() == "Web search (OpenAI-hosted)"
    assert dialog.code_interpreter_check.text() == "Code interpreter (OpenAI-hosted)"
    assert dialog.image_generation_check.text() == "Image generation (OpenAI-hosted)"
    assert dialog.explorer_check.text() == "Explorer sub-agent (read-only repository questions)"
    assert "OpenAI" in dialog.hosted_note.text() and "local server" in dialog.hosted_note.text()
    dialog.tabs.setCurrentIndex(2)  # Tools
    assert dialog.hosted_note.isVisible()
    checks = (dialog.web_search_check, dialog.code_interpreter_check, dialog.image_generation_check)
    assert [c.isChecked() for c in checks] == [False, True, False]
    assert not dialog.explorer_check.isChecked()
    table = dialog.mcp_table
    assert [table.horizontalHeaderItem(i).text() for i in range(3)] == ["Label", "URL", "Approval"]
    assert table.rowCount() == 2
    assert _row(dialog, 0) == ("deepwiki", "https://mcp.deepwiki.com/mcp", "always")
    assert _row(dialog, 1) == ("gh", "http://127.0.0.1:7/mcp", "never")
    assert [_combo(dialog, 0).itemText(i) for i in range(2)] == ["always", "never"]
    assert not dialog.remove_mcp_button.isEnabled()  # nothing selected
    dialog.set_settings(Settings())
    assert table.rowCount() == 0 and dialog.explorer_check.isChecked()


def test_add_edit_and_apply_tools(qtbot, tmp_path: Path) -> None:
    keep = McpServer(label="gh", url="http://127.0.0.1:7/mcp", allowed_tools=["search_issues"])
    dialog = _dialog(qtbot, Settings(mcp_servers=[keep]))
    box = dialog.web_search_check  # click its indicator (the widget is wider than its text)
    qtbot.mouseClick(box, Qt.MouseButton.LeftButton, pos=QPoint(8, box.height() // 2))
    dialog.image_generation_check.setChecked(True)
    dialog.explorer_check.setChecked(False)

    qtbot.mouseClick(dialog.add_mcp_button, Qt.MouseButton.LeftButton)
    table = dialog.mcp_table
    assert table.rowCount() == 2 and table.currentRow() == 1
    editor = table.indexWidget(table.model().index(1, 0))  # the label cell is being edited
    assert isinstance(editor, QLineEdit)
    qtbot.keyClicks(editor, "deepwiki")
    qtbot.keyClick(editor, Qt.Key.Key_Return)  # the delegate commits in a queued call
    qtbot.waitUntil(lambda: table.item(1, 0).text() == "deepwiki")
    table.item(1, 1).setText("https://mcp.deepwiki.com/mcp")
    _combo(dialog, 1).setCurrentText("never")

    with qtbot.waitSignal(dialog.settingsApplied) as sig:
        qtbot.mouseClick(dialog.apply_button, Qt.MouseButton.LeftButton)
    new = sig.args[0]
    assert (new.web_search, new.code_interpreter, new.image_generation) == (True, False, True)
    assert new.explorer is False
    assert new.mcp_servers == [
        keep,  # allowed_tools kept although the table does not show them
        McpServer(label="deepwiki", url="https://mcp.deepwiki.com/mcp", require_approval="never"),
    ]
    path = save_settings(new, tmp_path / "settings.toml")
    assert load_settings(path) == new

    # Remove the selected row; the change is applied with the rest.
    table.selectRow(0)
    assert dialog.remove_mcp_button.isEnabled()
    qtbot.mouseClick(dialog.remove_mcp_button, Qt.MouseButton.LeftButton)
    assert table.rowCount() == 1 and table.item(0, 0).text() == "deepwiki"
    with qtbot.waitSignal(dialog.settingsApplied) as sig:
        dialog.apply()
    assert [m.label for m in sig.args[0].mcp_servers] == ["deepwiki"]


def test_blank_rows_are_ignored(qtbot) -> None:
    dialog = _dialog(qtbot, Settings())
    dialog.add_mcp_server()
    dialog.add_mcp_server()
    with qtbot.waitSignal(dialog.settingsApplied) as sig:
        dialog.apply()
    assert sig.args[0].mcp_servers == []


@pytest.mark.parametrize(
    ("rows", "needle", "bad_row"),
    [
        ([("wiki", "ftp://mcp.example.com")], "Row 1 (URL): 'ftp://mcp.example.com' is not", 0),
        ([("ok", "http://a"), ("has space", "http://b")], "Row 2 (Label):", 1),
        ([("ok", "http://a"), ("", "http://b")], "Row 2 (Label): Must not be empty", 1),
        ([("ok", "http://a"), ("ok", "http://b")], "Duplicate MCP server label 'ok'", None),
    ],
)
def test_invalid_mcp_rows_are_reported_and_not_applied(
    qtbot, rows: list[tuple[str, str]], needle: str, bad_row: int | None
) -> None:
    original = Settings()
    dialog = _dialog(qtbot, original)
    dialog.web_search_check.setChecked(True)
    for label, url in rows:
        dialog.add_mcp_server()
        row = dialog.mcp_table.rowCount() - 1
        dialog.mcp_table.item(row, 0).setText(label)
        dialog.mcp_table.item(row, 1).setText(url)
    with qtbot.assertNotEmitted(dialog.settingsApplied):
        assert dialog.apply() is False
    field = dialog._fields["mcp_servers"]
    assert field.error.isVisible()
    assert needle in field.error.text()
    assert dialog.mcp_table.property("invalid") is True
    assert "red" in dialog.status_label.text()
    if bad_row is not None:
        assert dialog.mcp_table.currentRow() == bad_row
    assert dialog.settings is original and original.mcp_servers == []

    # Fixing the rows clears the message and applies.
    for row in range(dialog.mcp_table.rowCount()):
        dialog.mcp_table.item(row, 0).setText(f"server{row}")
        dialog.mcp_table.item(row, 1).setText(f"https://mcp{row}.example.com/mcp")
    with qtbot.waitSignal(dialog.settingsApplied) as sig:
        dialog.apply()
    assert [m.label for m in sig.args[0].mcp_servers] == [f"server{i}" for i in range(len(rows))]
    assert not field.error.isVisible()
    assert dialog.mcp_table.property("invalid") is False


def test_an_invalid_field_brings_its_tab_forward(qtbot, tmp_path: Path) -> None:
    dialog = _dialog(qtbot, Settings())
    assert [dialog.tabs.tabText(i) for i in range(dialog.tabs.count())] == ["Model", "Safety", "Tools"]
    assert dialog.tabs.currentIndex() == 0
    dialog._fields["chromium_path"].editor.setText(str(tmp_path / "no-such-chromium"))
    assert not dialog.apply()
    page = dialog.tabs.currentWidget()
    assert page.isAncestorOf(dialog._fields["chromium_path"].editor)
    assert dialog._fields["chromium_path"].error.isVisible()


def _default_item(dialog: SettingsDialog, text: str):
    items = dialog.hidden_editor.defaults.findItems(text, Qt.MatchFlag.MatchExactly)
    assert items, text
    return items[0]


def test_hidden_paths_listed_added_and_taken_out(qtbot) -> None:
    settings = Settings(
        sandbox_hidden_paths=[Path("~/work/token.txt")], sandbox_shown_paths=[Path("~/.npmrc")]
    )
    dialog = _dialog(qtbot, settings)
    dialog.tabs.setCurrentIndex(1)
    assert dialog.hidden_group.isVisibleTo(dialog)
    assert _default_item(dialog, "~/.ssh").checkState() == Qt.CheckState.Checked
    assert _default_item(dialog, "~/.npmrc").checkState() == Qt.CheckState.Unchecked
    assert dialog.hidden_editor.extra_edit.toPlainText() == "~/work/token.txt"
    own = _default_item(dialog, _own_settings_text())
    assert not own.flags() & Qt.ItemFlag.ItemIsEnabled  # Tandem's own folder stays hidden

    _default_item(dialog, "~/.ssh").setCheckState(Qt.CheckState.Unchecked)
    dialog.hidden_editor.extra_edit.setPlainText("~/work/token.txt\n\n/srv/keys\n")
    with qtbot.waitSignal(dialog.settingsApplied) as blocker:
        assert dialog.apply()
    new = blocker.args[0]
    assert new.sandbox_hidden_paths == [Path("~/work/token.txt"), Path("/srv/keys")]
    assert set(new.sandbox_shown_paths) == {Path("~/.npmrc"), Path("~/.ssh")}


@pytest.mark.parametrize(
    ("typed", "message"),
    [
        pytest.param("relative/secret", "not an absolute path", id="relative"),
        pytest.param("/", "whole file system", id="root"),
    ],
)
def test_invalid_hidden_path_is_reported_in_the_dialog(qtbot, typed: str, message: str) -> None:
    dialog = _dialog(qtbot, Settings())
    dialog.tabs.setCurrentIndex(0)
    dialog.hidden_editor.extra_edit.setPlainText(typed)
    applied: list[object] = []
    dialog.settingsApplied.connect(applied.append)
    assert not dialog.apply()
    field = dialog._fields["sandbox_hidden_paths"]
    assert message in field.error.text()
    assert field.error.isVisibleTo(dialog)
    assert dialog.tabs.currentIndex() == 1  # the Safety tab is brought forward
    assert applied == []


def _own_settings_text() -> str:
    from core.settings import settings_dir
    from harnesses.shell.secret_paths import display_path

    return display_path(settings_dir())


def test_apply_keeps_the_settings_the_dialog_does_not_show(qtbot) -> None:
    """Checkpoint retention and the cap (issue 12) are not fields of the dialog: Apply must
    not reset them to their defaults."""
    original = Settings(
        checkpoint_cap_bytes=5 * 1024 * 1024,
        checkpoint_keep_count=7,
        checkpoint_keep_days=3,
    )
    dialog = _dialog(qtbot, original)
    dialog.model_edit.setText("gpt-other")
    with qtbot.waitSignal(dialog.settingsApplied) as sig:
        qtbot.mouseClick(dialog.apply_button, Qt.MouseButton.LeftButton)
    new = sig.args[0]
    assert new.model == "gpt-other"
    assert (new.checkpoint_cap_bytes, new.checkpoint_keep_count, new.checkpoint_keep_days) == (
        5 * 1024 * 1024,
        7,
        3,
    )
