"""SettingsDialog: fields, inline validation on Apply, the masked API key, rule revocation."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QLineEdit, QPushButton, QWidget

from core.policy import RuleStore, command_rule, patch_rule
from core.settings import Settings, load_settings, save_settings
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
    assert dialog.rules_empty.isVisible() and not tree.isVisible()


def test_unreadable_rules_file_shows_message(qtbot, tmp_path: Path) -> None:
    path = tmp_path / "rules.json"
    path.write_text("{not json")
    dialog = _dialog(qtbot, Settings(), RuleStore(path))
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
