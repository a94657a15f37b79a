"""Settings: defaults, validation, the API key's sources and masking, the TOML file on disk."""

from __future__ import annotations

import logging
import os
import stat
import tomllib
from pathlib import Path

import pytest
from pydantic import ValidationError

from core.errors import UserError
from core.policy import ApprovalMode
from core.settings import (
    MAX_RECENT_FOLDERS,
    McpServer,
    Settings,
    data_dir,
    load_settings,
    mask_secret,
    save_settings,
    settings_dir,
    settings_path,
)

KEY = "sk-proj-Zq8TUVWXyzABCDEFGHijkl9876"


def _program(tmp_path: Path, name: str = "prog", mode: int = 0o755) -> Path:
    path = tmp_path / name
    path.write_text("#!/bin/sh\nexit 0\n")
    path.chmod(mode)
    return path


def test_defaults() -> None:
    s = Settings()
    assert s.model == "gpt-5.5"
    assert s.base_url is None
    assert s.api_key is None and s.api_key_source == "none"
    assert s.approval_mode is ApprovalMode.ASK
    assert s.sandbox_enabled is True
    assert s.chromium_path is None and s.codex_path is None
    assert s.recent_folders == [] and s.last_folder is None
    assert s.rules_path == settings_dir() / "rules.json"
    assert (s.web_search, s.code_interpreter, s.image_generation) == (False, False, False)
    assert s.mcp_servers == [] and s.explorer is True


def test_dirs_follow_xdg_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "dat"))
    assert settings_dir() == tmp_path / "cfg" / "tandem"
    assert data_dir() == tmp_path / "dat" / "tandem"
    assert settings_path() == tmp_path / "cfg" / "tandem" / "settings.toml"


def test_missing_file_gives_defaults_and_creates_nothing() -> None:
    s = load_settings()
    assert s == Settings()
    assert not settings_path().exists()


@pytest.mark.parametrize(
    "url", ["ftp://example.com", "localhost:8000", "http://", "not a url", "https://h:99999"]
)
def test_base_url_must_be_http_url(url: str) -> None:
    with pytest.raises(ValidationError, match="base_url"):
        Settings(base_url=url)


def test_base_url_accepts_http_and_https() -> None:
    assert Settings(base_url="http://127.0.0.1:8000/v1/").base_url == "http://127.0.0.1:8000/v1"
    assert Settings(base_url="https://gw.example.com/v1").base_url == "https://gw.example.com/v1"
    assert Settings(base_url="  ").base_url is None


def test_approval_mode_values() -> None:
    for value in ("read-only", "ask", "auto", "full"):
        assert Settings(approval_mode=value).approval_mode.value == value
    with pytest.raises(ValidationError, match="approval_mode"):
        Settings(approval_mode="yolo")


def test_executable_paths_are_checked(tmp_path: Path) -> None:
    good = _program(tmp_path)
    assert Settings(chromium_path=good, codex_path=str(good)).codex_path == good
    with pytest.raises(ValidationError, match=r"chromium_path[\s\S]*does not exist"):
        Settings(chromium_path=tmp_path / "missing")
    with pytest.raises(ValidationError, match=r"codex_path[\s\S]*not executable"):
        Settings(codex_path=_program(tmp_path, "plain", 0o644))
    with pytest.raises(ValidationError, match=r"codex_path[\s\S]*folder"):
        Settings(codex_path=tmp_path)


def test_validation_on_assignment() -> None:
    s = Settings()
    with pytest.raises(ValidationError):
        s.base_url = "gopher://x"
    assert s.base_url is None


def test_recent_folders_dedupe_and_cap(tmp_path: Path) -> None:
    folders = [tmp_path / f"f{i}" for i in range(15)]
    s = Settings(recent_folders=[folders[0], *folders])
    assert s.recent_folders == folders[:MAX_RECENT_FOLDERS]
    s2 = s.with_recent_folder(folders[5])
    assert s2.recent_folders[0] == folders[5]
    assert s2.recent_folders.count(folders[5]) == 1
    assert s2.last_folder == folders[5]
    s3 = s.with_recent_folder(tmp_path / "new")
    assert len(s3.recent_folders) == MAX_RECENT_FOLDERS
    assert s3.recent_folders[0] == tmp_path / "new"
    assert folders[9] not in s3.recent_folders


def test_api_key_never_in_repr_str_or_dump(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    s = Settings(api_key=KEY)
    for text in (repr(s), str(s), s.model_dump_json(), f"{s}", repr(s.model_dump())):
        assert KEY not in text
        assert "9876" not in text
    assert s.api_key is not None and s.api_key.get_secret_value() == KEY
    assert s.api_key_source == "file"
    assert s.masked_api_key() == "••••9876"
    assert s.api_key.masked() == "••••9876"
    save_settings(s)
    load_settings()
    assert KEY not in caplog.text


def test_mask_secret_shows_at_most_four_chars() -> None:
    assert mask_secret(None) == ""
    assert mask_secret("") == ""
    assert mask_secret("abc") == "••••"
    assert mask_secret("abcdefgh") == "••••gh"
    assert mask_secret("x" * 40 + "wxyz") == "••••wxyz"


def test_round_trip_with_file_mode_0600(tmp_path: Path) -> None:
    prog = _program(tmp_path)
    s = Settings(
        model="gpt-test",
        base_url="http://127.0.0.1:9/v1",
        api_key=KEY,
        approval_mode="auto",
        sandbox_enabled=False,
        chromium_path=prog,
        codex_path=prog,
        rules_file=tmp_path / 'my "rules".json',
        recent_folders=[tmp_path / "a", tmp_path / "b\\c"],
        last_folder=tmp_path / "a",
    )
    path = save_settings(s)
    assert path == settings_path()
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(path.parent).st_mode) == 0o700
    tomllib.loads(path.read_text())  # valid TOML
    back = load_settings()
    assert back == s
    assert back.api_key_source == "file"
    assert not [p for p in path.parent.iterdir() if p.name != "settings.toml"]  # no temp left


def test_explicit_path(tmp_path: Path) -> None:
    target = tmp_path / "deep" / "x.toml"
    save_settings(Settings(model="m1"), target)
    assert load_settings(target).model == "m1"
    assert not settings_path().exists()


def test_environment_key_wins_and_is_never_written(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    save_settings(Settings(api_key="sk-stored-key-000000000000"))
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    s = load_settings()
    assert s.api_key is not None and s.api_key.get_secret_value() == KEY
    assert s.api_key_source == "env"
    save_settings(s.model_copy(update={"model": "other"}))
    text = settings_path().read_text()
    assert KEY not in text
    assert "sk-stored-key-000000000000" in text  # the stored key is kept
    monkeypatch.delenv("OPENAI_API_KEY")
    again = load_settings()
    assert again.model == "other"
    assert again.api_key is not None
    assert again.api_key.get_secret_value() == "sk-stored-key-000000000000"


def test_replacing_the_key() -> None:
    s = Settings(api_key=KEY).with_api_key("sk-new-key-1111111111111111")
    assert s.api_key is not None and s.api_key.masked() == "••••1111"
    assert s.with_api_key(None).api_key is None
    assert s.with_api_key("").api_key_source == "none"
    with pytest.raises(ValidationError):
        s.with_api_key("sk-has space")


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        ('model = "x"\nbase_url = "ftp://nope"\n', "'base_url'"),
        ('approval_mode = "sometimes"\n', "'approval_mode'"),
        ("sandbox_enabled = 3\n", "'sandbox_enabled'"),
        ('codex_path = "/definitely/not/here"\n', "'codex_path'"),
        ('aproval_mode = "ask"\n', "unknown setting 'aproval_mode'"),
        ("model = \n", "not valid TOML"),
        ('web_search = "maybe"\n', "'web_search'"),
        ("explorer = 2\n", "'explorer'"),
        ('[[mcp_servers]]\nlabel = "wiki"\nurl = "ftp://x"\n', "'mcp_servers.0.url'"),
        ('[[mcp_servers]]\nlabel = "has space"\nurl = "http://x"\n', "'mcp_servers.0.label'"),
        ('[[mcp_servers]]\nurl = "http://x"\n', "'mcp_servers.0.label'"),
        (
            '[[mcp_servers]]\nlabel = "a"\nurl = "http://x"\nrequire_approval = "sometimes"\n',
            "'mcp_servers.0.require_approval'",
        ),
        (
            '[[mcp_servers]]\nlabel = "a"\nurl = "http://x"\n'
            '[[mcp_servers]]\nlabel = "a"\nurl = "http://y"\n',
            "duplicate MCP server label 'a'",
        ),
        (
            '[[mcp_servers]]\nlabel = "a"\nurl = "http://x"\nheaders = {}\n',
            "unknown key 'headers' in 'mcp_servers.0'",
        ),
    ],
)
def test_bad_content_names_the_field_and_keeps_the_file(content: str, needle: str) -> None:
    path = settings_path()
    path.parent.mkdir(parents=True)
    path.write_text(content)
    with pytest.raises(UserError) as info:
        load_settings()
    assert needle in str(info.value)
    assert str(path) in str(info.value)
    assert path.read_text() == content


def test_saving_over_an_invalid_file_keeps_a_copy() -> None:
    path = settings_path()
    path.parent.mkdir(parents=True)
    path.write_text('base_url = "ftp://mine"\n')
    save_settings(Settings(model="fresh"))
    assert load_settings().model == "fresh"
    kept = [p for p in path.parent.iterdir() if p.name.startswith("settings.toml.invalid-")]
    assert len(kept) == 1
    assert kept[0].read_text() == 'base_url = "ftp://mine"\n'
    assert stat.S_IMODE(os.stat(kept[0]).st_mode) == 0o600


def test_unwritable_folder_raises_user_error(tmp_path: Path) -> None:
    if os.geteuid() == 0:
        blocker = tmp_path / "file"
        blocker.write_text("")
        target = blocker / "settings.toml"  # a folder that is a file
    else:
        locked = tmp_path / "locked"
        locked.mkdir(mode=0o500)
        target = locked / "settings.toml"
    with pytest.raises(UserError, match="cannot write settings file"):
        save_settings(Settings(), target)


# -- tools: hosted tools, MCP servers, the Explorer ------------------------------------------------


def test_mcp_server_validation() -> None:
    server = McpServer(label=" deep_wiki-2 ", url=" https://mcp.example.com/mcp/ ")
    assert server.label == "deep_wiki-2"
    assert server.url == "https://mcp.example.com/mcp/"  # kept as typed (only stripped)
    assert server.require_approval == "always" and server.allowed_tools is None
    assert McpServer(label="a", url="http://h", allowed_tools=[" x ", ""]).allowed_tools == ["x"]
    assert McpServer(label="a", url="http://h", allowed_tools=[]).allowed_tools is None
    for label in ("", "  ", "has space", "dot.ted", "ümlaut", "a/b"):
        with pytest.raises(ValidationError, match="label"):
            McpServer(label=label, url="http://h")
    for url in ("", "ftp://h", "mcp.example.com", "http://", "https://h:99999"):
        with pytest.raises(ValidationError, match="url"):
            McpServer(label="a", url=url)
    with pytest.raises(ValidationError, match="require_approval"):
        McpServer(label="a", url="http://h", require_approval="sometimes")
    with pytest.raises(ValidationError):
        server.label = "other"  # immutable


def test_mcp_labels_must_be_unique() -> None:
    servers = [{"label": "wiki", "url": "http://a"}, {"label": "wiki", "url": "http://b"}]
    with pytest.raises(ValidationError, match="duplicate MCP server label 'wiki'"):
        Settings(mcp_servers=servers)
    s = Settings(mcp_servers=servers[:1])
    with pytest.raises(ValidationError, match="duplicate"):
        s.mcp_servers = [*s.mcp_servers, McpServer(label="wiki", url="http://c")]
    assert [m.url for m in s.mcp_servers] == ["http://a"]


def test_tools_round_trip_through_the_file() -> None:
    s = Settings(
        web_search=True,
        code_interpreter=True,
        image_generation=True,
        explorer=False,
        mcp_servers=[
            McpServer(label="deepwiki", url="https://mcp.deepwiki.com/mcp"),
            McpServer(
                label="gh",
                url="http://127.0.0.1:7/mcp",
                require_approval="never",
                allowed_tools=["search_issues", 'odd "name"'],
            ),
        ],
    )
    path = save_settings(s)
    table = tomllib.loads(path.read_text())
    assert "mcp_servers" not in table  # issue 18: hosted servers have tables of their own
    assert table["hosted_mcp_servers"] == {
        "deepwiki": {"url": "https://mcp.deepwiki.com/mcp", "require_approval": "always"},
        "gh": {
            "url": "http://127.0.0.1:7/mcp",
            "require_approval": "never",
            "allowed_tools": ["search_issues", 'odd "name"'],
        },
    }
    assert table["explorer"] is False and table["web_search"] is True
    back = load_settings()
    assert back == s
    assert back.mcp_servers[1].allowed_tools == ["search_issues", 'odd "name"']
    save_settings(back.model_copy(update={"mcp_servers": []}))
    assert load_settings().mcp_servers == []


def test_old_file_without_tool_keys_loads_with_defaults() -> None:
    path = settings_path()
    path.parent.mkdir(parents=True)
    path.write_text('model = "gpt-old"\napproval_mode = "auto"\nsandbox_enabled = false\n')
    s = load_settings()
    assert s.model == "gpt-old"
    assert (s.web_search, s.code_interpreter, s.image_generation) == (False, False, False)
    assert s.mcp_servers == [] and s.explorer is True


def test_sandbox_paths_round_trip_through_the_file(tmp_path: Path) -> None:
    settings = Settings(
        sandbox_hidden_paths=[
            Path("~/work/token.txt"),
            Path("/srv/keys"),
            Path("~/work/token.txt"),
        ],
        sandbox_shown_paths=[Path("~/.npmrc")],
    )
    assert settings.sandbox_hidden_paths == [Path("~/work/token.txt"), Path("/srv/keys")]
    file = save_settings(settings, tmp_path / "settings.toml")
    table = tomllib.loads(file.read_text())
    assert table["sandbox_hidden_paths"] == ["~/work/token.txt", "/srv/keys"]
    assert table["sandbox_shown_paths"] == ["~/.npmrc"]
    again = load_settings(file)
    assert again.sandbox_hidden_paths == settings.sandbox_hidden_paths
    assert again.sandbox_shown_paths == [Path("~/.npmrc")]
    assert "sandbox_hidden_paths" not in save_settings(Settings(), tmp_path / "b.toml").read_text()


@pytest.mark.parametrize(
    ("value", "message"),
    [
        pytest.param("relative/path", "not an absolute path", id="relative"),
        pytest.param("/", "whole file system", id="root"),
    ],
)
def test_sandbox_paths_are_validated(value: str, message: str, tmp_path: Path) -> None:
    with pytest.raises(ValidationError, match=message):
        Settings(sandbox_hidden_paths=[Path(value)])
    file = tmp_path / "settings.toml"
    file.write_text(f'sandbox_shown_paths = ["{value}"]\n')
    with pytest.raises(UserError, match="sandbox_shown_paths"):
        load_settings(file)
