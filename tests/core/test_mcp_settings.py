"""``[mcp_servers.NAME]`` in the settings file, the hosted servers' move, "Import from Codex"
(issue 18 item 2)."""

from __future__ import annotations

import tomllib

import pytest

from core.errors import UserError
from core.mcp.codex_import import codex_config_path, read_codex_servers
from core.mcp.config import LocalMcpServer
from core.settings import McpServer, Settings, load_settings, save_settings, settings_path

CODEX_SAMPLE = """
model = "gpt-5.5"

[mcp_servers.git]
command = "uvx"
args = ["mcp-server-git", "--repository", "."]
startup_timeout_sec = 20
enabled_tools = ["git_log", "git_status"]

[mcp_servers.git.env]
GIT_PAGER = "cat"

[mcp_servers.docs]
url = "https://docs.example.invalid/mcp"
bearer_token_env_var = "DOCS_TOKEN"
tool_timeout_sec = 120
disabled_tools = ["delete_page"]

[mcp_servers.figma]
url = "https://figma.example.invalid/mcp"
enabled = false
[mcp_servers.figma.oauth]
client_id = "abc"

[mcp_servers.broken]
args = ["no command"]

[mcp_servers."has space"]
command = "x"
"""


def test_local_servers_round_trip_as_codex_tables():
    servers = {
        "git": LocalMcpServer(
            command="mcp-server-git",
            args=["--repository", "/r"],
            env={"GIT_PAGER": "cat"},
            env_vars=["GITHUB_TOKEN"],
            enabled_tools=["git_log"],
            tools={"git_log": "allow", "git_commit": "deny"},
            sandbox=True,
        ),
        "docs": LocalMcpServer(
            url="http://127.0.0.1:5/mcp", bearer_token_env_var="DOCS_TOKEN", approval="allow"
        ),
    }
    path = save_settings(Settings(local_mcp_servers=servers))
    table = tomllib.loads(path.read_text())
    assert table["mcp_servers"]["git"] == {
        "command": "mcp-server-git",
        "args": ["--repository", "/r"],
        "env": {"GIT_PAGER": "cat"},
        "env_vars": ["GITHUB_TOKEN"],
        "enabled_tools": ["git_log"],
        "tools": {"git_log": "allow", "git_commit": "deny"},
        "sandbox": True,
    }
    assert table["mcp_servers"]["docs"] == {
        "url": "http://127.0.0.1:5/mcp",
        "bearer_token_env_var": "DOCS_TOKEN",
        "approval": "allow",
    }
    assert load_settings().local_mcp_servers == servers


def test_old_hosted_list_is_migrated_with_a_note():
    path = settings_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        'model = "m"\n\n[[mcp_servers]]\nlabel = "wiki"\nurl = "https://wiki.example.invalid/mcp"\n'
    )
    loaded = load_settings()
    assert loaded.mcp_servers == [McpServer(label="wiki", url="https://wiki.example.invalid/mcp")]
    assert loaded.local_mcp_servers == {}
    assert "hosted_mcp_servers" in loaded.migration_notes[0]
    assert "[[mcp_servers]]" in path.read_text()  # reading never changes the file
    save_settings(loaded)
    table = tomllib.loads(path.read_text())
    assert table["hosted_mcp_servers"] == {
        "wiki": {"url": "https://wiki.example.invalid/mcp", "require_approval": "always"}
    }
    again = load_settings()
    assert again.mcp_servers == loaded.mcp_servers and again.migration_notes == []


def test_hosted_and_local_side_by_side():
    s = Settings(
        mcp_servers=[McpServer(label="wiki", url="https://wiki.example.invalid/mcp")],
        local_mcp_servers={"time": LocalMcpServer(command="mcp-server-time")},
    )
    save_settings(s)
    assert load_settings() == s


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[mcp_servers.a]\nargs = ["x"]\n', "exactly one of 'command'"),
        ('[mcp_servers.a]\ncommand = "x"\nurl = "http://h"\n', "exactly one of 'command'"),
        ('[mcp_servers.a]\nurl = "ftp://h"\n', "not an http://"),
        (
            '[mcp_servers.a]\ncommand = "x"\nstartup_timeout_sec = 0\n',
            "'mcp_servers.a.startup_timeout_sec'",
        ),
        (
            '[mcp_servers.a]\ncommand = "x"\ncolour = "red"\n',
            "unknown key 'colour' in 'mcp_servers.a'",
        ),
        ('[mcp_servers.a]\ncommand = "x"\napproval = "maybe"\n', "'mcp_servers.a.approval'"),
        (
            '[mcp_servers.a]\ncommand = "x"\nenv_vars = ["1BAD"]\n',
            "not an environment variable name",
        ),
        ('[mcp_servers."a b"]\ncommand = "x"\n', "may only contain"),
    ],
)
def test_bad_local_servers_are_named(text, message):
    path = settings_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    with pytest.raises(UserError, match="settings file") as caught:
        load_settings()
    assert message in str(caught.value)


def test_import_from_codex_gives_the_same_servers(tmp_path, monkeypatch):
    home = tmp_path / "codex"
    home.mkdir()
    (home / "config.toml").write_text(CODEX_SAMPLE)
    monkeypatch.setenv("CODEX_HOME", str(home))
    assert codex_config_path() == home / "config.toml"
    found = read_codex_servers()
    assert list(found.servers) == ["git", "docs", "figma"]
    assert found.servers["git"] == LocalMcpServer(
        command="uvx",
        args=["mcp-server-git", "--repository", "."],
        env={"GIT_PAGER": "cat"},
        startup_timeout_sec=20,
        enabled_tools=["git_log", "git_status"],
    )
    assert found.servers["docs"] == LocalMcpServer(
        url="https://docs.example.invalid/mcp",
        bearer_token_env_var="DOCS_TOKEN",
        tool_timeout_sec=120,
        disabled_tools=["delete_page"],
    )
    assert found.servers["figma"].enabled is False
    assert found.ignored_keys == {"figma": ["oauth"]}
    assert (
        "exactly one of" in found.skipped["broken"]
        and "may only contain" in found.skipped["has space"]
    )
    save_settings(
        Settings(local_mcp_servers=found.servers)
    )  # imported servers are saved as they are
    assert load_settings().local_mcp_servers == found.servers


def test_import_from_codex_missing_or_broken_file(tmp_path):
    assert read_codex_servers(tmp_path / "none.toml").servers == {}
    bad = tmp_path / "bad.toml"
    bad.write_text("[mcp_servers.x\n")
    with pytest.raises(UserError, match="not valid TOML"):
        read_codex_servers(bad)
