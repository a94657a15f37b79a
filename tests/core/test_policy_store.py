"""RuleStore: persistence, atomic writes, revocation and clear errors (core.policy.store)."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from core.errors import UserError
from core.policy import RuleStore, command_rule, decide_command, patch_rule, suggest_rule


def test_round_trip_and_revocation(tmp_path: Path):
    path = tmp_path / "cfg" / "rules.json"
    store = RuleStore(path)
    assert store.list() == []
    a = store.add(command_rule("git diff *"))
    b = store.add(patch_rule("docs/**"))
    c = store.add(command_rule("curl *", "deny", unless=["--version"]))
    assert a.created_at is not None

    fresh = RuleStore(path)  # another window / a restart
    assert fresh.list() == [a, b, c]
    assert fresh.get(b.id) == b
    assert all(r.source == "user" for r in fresh.list())

    removed = fresh.revoke(a.id)
    assert removed == a
    assert [r.id for r in store.list()] == [b.id, c.id]
    assert store.get(a.id) is None
    with pytest.raises(UserError, match=a.id):
        store.revoke(a.id)


def test_revoked_rule_stops_allowing(tmp_path: Path):
    store = RuleStore(tmp_path / "rules.json")
    rule = store.add(suggest_rule("make test -j4"))
    assert decide_command("make test", "ask", store.list(), sandbox_available=True).allowed
    store.revoke(rule.id)
    assert not decide_command("make test", "ask", store.list(), sandbox_available=True).allowed


def test_file_is_private_and_json(tmp_path: Path):
    path = tmp_path / "rules.json"
    store = RuleStore(path)
    store.add(command_rule("ls *"))
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["version"] == 1
    assert data["rules"][0]["pattern"] == "ls *"
    assert "source" not in data["rules"][0]
    assert [p.name for p in tmp_path.iterdir()] == ["rules.json"]  # no temp files left


def test_duplicates_are_not_stored_twice(tmp_path: Path):
    store = RuleStore(tmp_path / "rules.json")
    first = store.add(command_rule("git diff *"))
    again = store.add(command_rule("git diff *"))
    assert again == first and len(store.list()) == 1
    other = store.add(command_rule("git diff *", "deny"))
    assert len(store.list()) == 2 and other.id != first.id


def test_id_clash_is_refused(tmp_path: Path):
    store = RuleStore(tmp_path / "rules.json")
    store.add(command_rule("a *", rule_id="r-same"))
    with pytest.raises(UserError, match="already has"):
        store.add(command_rule("b *", rule_id="r-same"))


@pytest.mark.parametrize("source", ["session", "default"])
def test_only_user_rules_are_stored(tmp_path: Path, source: str):
    with pytest.raises(UserError, match="only user"):
        RuleStore(tmp_path / "r.json").add(command_rule("ls *", source=source))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "not valid JSON"),
        ("[]", "'rules' list"),
        ('{"version": 9, "rules": []}', "version 9"),
        ('{"rules": [42]}', "rule #1 must be an object"),
        ('{"rules": [{"id": "x", "action": "allow", "kind": "command"}]}', "lacks 'pattern'"),
        (
            '{"rules": [{"id": "x", "action": "sometimes", "kind": "command", "pattern": "ls"}]}',
            "unknown action",
        ),
        (
            '{"rules": [{"id": "x", "action": "allow", "kind": "command", "pattern": "* x"}]}',
            "names no program",
        ),
        (
            '{"rules": [{"id": 1, "action": "allow", "kind": "command", "pattern": "ls"}]}',
            "'id' must be a string",
        ),
        (
            '{"rules": [{"id": "x", "action": "allow", "kind": "command", "pattern": "ls",'
            ' "unless": "-x"}]}',
            "'unless' must be a list",
        ),
        (
            '{"rules": [{"id": "x", "action": "allow", "kind": "command", "pattern": "ls"},'
            ' {"id": "x", "action": "deny", "kind": "command", "pattern": "rm"}]}',
            "repeats id",
        ),
    ],
)
def test_bad_files_give_clear_errors_and_are_kept(tmp_path: Path, content: str, message: str):
    path = tmp_path / "rules.json"
    path.write_text(content, encoding="utf-8")
    store = RuleStore(path)
    with pytest.raises(UserError, match=message) as info:
        store.list()
    assert str(path) in str(info.value)
    with pytest.raises(UserError):
        store.add(command_rule("ls *"))
    with pytest.raises(UserError):
        store.revoke("x")
    assert path.read_text(encoding="utf-8") == content


def test_empty_file_means_no_rules(tmp_path: Path):
    path = tmp_path / "rules.json"
    path.write_text("", encoding="utf-8")
    assert RuleStore(path).list() == []


def test_unreadable_location_is_a_user_error(tmp_path: Path):
    folder = tmp_path / "rules.json"
    folder.mkdir()
    with pytest.raises(UserError, match="cannot read"):
        RuleStore(folder).list()


def test_failed_write_leaves_the_old_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    path = tmp_path / "rules.json"
    store = RuleStore(path)
    store.add(command_rule("ls *"))
    before = path.read_bytes()

    def disk_full(src: object, dst: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", disk_full)  # fault injection at the last step
    with pytest.raises(UserError, match=r"cannot write .*No space left"):
        store.add(command_rule("cat *"))
    monkeypatch.undo()
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["rules.json"]  # temp file cleaned up
    assert [r.pattern for r in store.list()] == ["ls *"]
