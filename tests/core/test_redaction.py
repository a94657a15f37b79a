"""core.redaction: every secret shape, the registry of known values, logs, streams, crash hooks."""

from __future__ import annotations

import io
import logging
import subprocess
import sys
import threading
from pathlib import Path

import pytest

import core.redaction
from core.redaction import (
    REDACTED,
    RedactingFilter,
    forget_secrets,
    is_secret_name,
    redact,
    redact_text,
    redacting,
    register_environment,
    register_secret,
    secret_count,
)

ROOT = Path(__file__).resolve().parents[2]

SHAPES = [
    pytest.param('api_key = "sk-proj-AbC123xyz789"', 'api_key = "[REDACTED]"', id="toml-api-key"),
    pytest.param("api_key = 'q7Zx9w-short'", "api_key = '[REDACTED]'", id="toml-single-quotes"),
    pytest.param("password = hunter22", "password = [REDACTED]", id="ini-password"),
    pytest.param("PASSWD=abc", "PASSWD=[REDACTED]", id="env-passwd"),
    pytest.param("OPENAI_API_KEY=gw-1a2b3c", "OPENAI_API_KEY=[REDACTED]", id="dotenv-line"),
    pytest.param("export GITHUB_TOKEN=abc123", "export GITHUB_TOKEN=[REDACTED]", id="export-token"),
    pytest.param("  token: abc.def", "  token: [REDACTED]", id="yaml-token"),
    pytest.param("client_secret: s3cr3t", "client_secret: [REDACTED]", id="yaml-client-secret"),
    pytest.param('{"api_key": "plain"}', '{"api_key": "[REDACTED]"}', id="json-api-key"),
    pytest.param('{"apiKey":"v4lue"}', '{"apiKey":"[REDACTED]"}', id="json-camel-case"),
    pytest.param("x-api-key: k3y-value", "x-api-key: [REDACTED]", id="x-api-key-header"),
    pytest.param('"auth": "dXNlcjpw"', '"auth": "[REDACTED]"', id="docker-auth"),
    pytest.param("DB_PWD=pw1234", "DB_PWD=[REDACTED]", id="pwd-suffix"),
    pytest.param("passphrase: open sesame", "passphrase: [REDACTED] sesame", id="passphrase"),
    pytest.param("ApI_KeY = 'MiXeD'", "ApI_KeY = '[REDACTED]'", id="mixed-case-name"),
    pytest.param(
        "Authorization: Bearer abc.def-123", "Authorization: Bearer [REDACTED]", id="bearer"
    ),
    pytest.param(
        "authorization: token ghx99", "authorization: token [REDACTED]", id="token-scheme"
    ),
    pytest.param(
        'curl -H "Authorization: Basic dXNlcjpwYXNz" x',
        'curl -H "Authorization: Basic [REDACTED]" x',
        id="basic-header",
    ),
    pytest.param("Cookie: session=abc123", "Cookie: [REDACTED]", id="cookie"),
    pytest.param("use Bearer eyAbCdEf123", "use Bearer [REDACTED]", id="bare-bearer"),
    pytest.param("mysql --password hunter2 db", "mysql --password [REDACTED] db", id="flag-password"),
    pytest.param("cli --api-key gw-12ab34 x", "cli --api-key [REDACTED] x", id="flag-api-key"),
    pytest.param("x --auth-token a.b-c y", "x --auth-token [REDACTED] y", id="flag-auth-token"),
    pytest.param('--db-password "p w" x', '--db-password "[REDACTED]" x', id="flag-quoted"),
    pytest.param("MY_SERVICE_PASS=hunter2x", "MY_SERVICE_PASS=[REDACTED]", id="pass-suffix"),
    pytest.param(
        "AccountName=a;AccountKey=abc123==;EndpointSuffix=x",
        "AccountName=a;AccountKey=[REDACTED];EndpointSuffix=x",
        id="azure-account-key",
    ),
    pytest.param("curl -u bob:pa55word https://x", "curl -u bob:[REDACTED] https://x", id="curl-u"),
    pytest.param("curl --user bob:pa55 x", "curl --user bob:[REDACTED] x", id="curl-user"),
    pytest.param("mysql -u root -pS3cret db", "mysql -u root -p[REDACTED] db", id="mysql-p"),
    pytest.param("key sk-AbCdEf12", "key [REDACTED]", id="sk-short"),
    pytest.param("sk-proj-Zq8vN3bT5wK1mR7yL2cX9dF4", REDACTED, id="sk-proj"),
    pytest.param("sk-ant-api03-AbCdEf0123456789", REDACTED, id="sk-ant"),
    pytest.param("sk-or-v1-0123456789abcdef", REDACTED, id="sk-or-gateway"),
    pytest.param("gsk_AbCdEf0123456789xyz", REDACTED, id="groq-gsk"),
    pytest.param("sk_live_AbCdEf0123456789", REDACTED, id="stripe-live"),
    pytest.param("xai-AbCdEf0123456789", REDACTED, id="xai"),
    pytest.param("AIzaSyA-0123456789abcdefghijklmnopqrstu", REDACTED, id="google-aiza"),
    pytest.param("ghp_0123456789abcdefghijABCDEFGHIJ", REDACTED, id="github-ghp"),
    pytest.param("github_pat_11ABCDEFG0123456789_abcdefghijkl", REDACTED, id="github-pat"),
    pytest.param("glpat-abcdefghij0123456789", REDACTED, id="gitlab-glpat"),
    pytest.param("xoxb-1234567890-abcdefghij", REDACTED, id="slack-xoxb"),
    pytest.param("hf_abcdefghijabcdefghijabcdefghij1234", REDACTED, id="huggingface"),
    pytest.param("id AKIAABCDEFGHIJKLMNOP.", f"id {REDACTED}.", id="aws-akia"),
    pytest.param("ASIAABCDEFGHIJKLMNOP", REDACTED, id="aws-asia"),
    pytest.param(
        "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "aws_secret_access_key = [REDACTED]",
        id="aws-secret",
    ),
    pytest.param(
        "jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.Qm9iYnk", f"jwt {REDACTED}", id="jwt"
    ),
    pytest.param(
        "a\n-----BEGIN RSA PRIVATE KEY-----\nMIIEow\nAAKC\n-----END RSA PRIVATE KEY-----\nb",
        f"a\n{REDACTED}\nb",
        id="pem-block",
    ),
    pytest.param(
        "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk", REDACTED, id="pem-unterminated"
    ),
    pytest.param(
        "git clone https://bob:Tr0ub4dor@example.com/r.git",
        f"git clone https://bob:{REDACTED}@example.com/r.git",
        id="url-password",
    ),
    pytest.param("ünïcode password=päss", f"ünïcode password={REDACTED}", id="non-ascii-text"),
    pytest.param("İ PASSWORD=päss", f"İ PASSWORD={REDACTED}", id="length-changing-lowercase"),
]


@pytest.mark.parametrize(("text", "expected"), SHAPES)
def test_secret_shapes_are_redacted(text: str, expected: str) -> None:
    assert redact_text(text) == expected


KEPT = [
    pytest.param('{"input_tokens": 12, "max_tokens": 100}', id="token-counts"),
    pytest.param("max_tokens = 100", id="token-count-assignment"),
    pytest.param("monkey = banana", id="monkey-is-no-key"),
    pytest.param("key = value", id="bare-key-name"),
    pytest.param("author = me", id="author-is-no-auth"),
    pytest.param("desk-organizer task_list_manager", id="sk-inside-words"),
    pytest.param("basic configuration", id="basic-prose"),
    pytest.param("primary_key = True", id="boolean-value"),
    pytest.param("password: null", id="null-value"),
    pytest.param("tests/test_x.py::test_y PASSED", id="passed-is-no-password"),
    pytest.param("https://example.com:8080/path", id="url-with-port"),
    pytest.param("", id="empty"),
    pytest.param("gh --token-file tok.txt", id="flag-token-file"),
    pytest.param("llm --max-tokens 100", id="flag-token-count"),
    pytest.param("mysql --password-file f", id="flag-password-file"),
    pytest.param("bypass=1 X_PASSAGE=ok", id="pass-inside-words"),
    pytest.param("git push -u origin main", id="push-u"),
    pytest.param("mysql -u root -p db", id="mysql-p-prompt"),
]


@pytest.mark.parametrize("text", KEPT)
def test_ordinary_text_is_kept(text: str) -> None:
    assert redact_text(text) == text


def test_registered_values_are_redacted_exactly_wherever_they_occur() -> None:
    assert register_secret("q7Zx9w", source="test")  # a 6-character gateway key
    assert redact_text("keyq7Zx9wglued and q7Zx9w.") == f"key{REDACTED}glued and {REDACTED}."
    assert register_secret("q7Zx9wLONGER", source="test")  # longest first: no leftover
    assert redact_text("q7Zx9wLONGER") == REDACTED
    forget_secrets("test")
    assert redact_text("q7Zx9w") == "q7Zx9w"


def test_short_values_are_refused_with_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="core"):
        assert not register_secret("abc", source="env:X")
        assert not register_secret("ACTE", source="env:Y")  # part of the marker itself
    assert "env:X" in caplog.text and "3 characters" in caplog.text
    assert "abc" not in caplog.text.replace("characters", "")
    assert redact_text("abc") == "abc"
    assert register_secret("abcd", source="t") and redact_text("abcd") == REDACTED


def test_values_with_whitespace_register_their_stripped_form() -> None:
    register_secret("  padded-key\n", source="t")
    assert redact_text("x padded-key y") == f"x {REDACTED} y"


def test_registry_is_thread_safe() -> None:
    def work(n: int) -> None:
        for i in range(200):
            register_secret(f"secret-{n}-{i}", source=f"t{n}")

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert secret_count() == 800
    assert redact_text("secret-3-199 secret-0-0") == f"{REDACTED} {REDACTED}"


def test_extra_secrets_argument() -> None:
    assert redact_text("my hunter2hunter2", ["hunter2hunter2"]) == f"my {REDACTED}"
    assert redact_text("short ab", ["ab"]) == "short ab"


@pytest.mark.parametrize(
    ("name", "secret"),
    [
        pytest.param("OPENAI_API_KEY", True, id="openai"),
        pytest.param("CODEX_API_KEY", True, id="codex"),
        pytest.param("github_token", True, id="lower-case"),
        pytest.param("DB_PASSWD", True, id="passwd"),
        pytest.param("AWS_SHARED_CREDENTIALS_FILE", True, id="credential"),
        pytest.param("PATH", False, id="path"),
        pytest.param("HOME", False, id="home"),
        pytest.param("GIT_CONFIG_KEY_0", False, id="git-config-key-name"),
        pytest.param("GIT_CONFIG_KEYS", True, id="not-git-config-key-n"),
    ],
)
def test_secret_names(name: str, secret: bool) -> None:
    assert is_secret_name(name) is secret


def test_environment_registration_skips_non_secrets() -> None:
    env = {
        "OPENAI_API_KEY": "sk-env-key-1",
        "MY_SERVICE_TOKEN": "tok9",
        "TOKENIZERS_PARALLELISM": "false",
        "KEY_COUNT": "12345",
        "AWS_SHARED_CREDENTIALS_FILE": "/home/u/.aws/credentials",
        "PATH": "/usr/bin:/bin",
    }
    assert register_environment(env) == 2
    assert (
        redact_text("a sk-env-key-1 b tok9 c false 12345")
        == f"a {REDACTED} b {REDACTED} c false 12345"
    )


def test_shell_environment_uses_the_same_name_test() -> None:
    from harnesses.shell import environment

    assert environment.is_secret("DB_PASSWD")
    assert environment.build_env({"DB_PASSWD": "x", "PATH": "/bin"})["PATH"] == "/bin"
    assert "DB_PASSWD" not in environment.build_env({"DB_PASSWD": "x"})


def test_settings_register_their_key_and_mcp_passwords() -> None:
    from core.settings import McpServer, Settings

    settings = Settings(
        api_key="gw-abc1", mcp_servers=[McpServer(label="w", url="https://u:mcp-pw-77@h/x")]
    )
    assert redact_text("gw-abc1 mcp-pw-77") == f"{REDACTED} {REDACTED}"
    settings.api_key = "zz-assigned-key"  # type: ignore[assignment]
    assert redact_text("zz-assigned-key") == REDACTED


def test_structured_redaction_by_key_and_value() -> None:
    register_secret("known-value-1", source="t")
    out = redact(
        {
            "api_key": "abc",
            "usage": {"input_tokens": 3},
            "items": [("known-value-1", Path("/tmp/x"))],
            "blob": b"\x00",
        }
    )
    assert out == {
        "api_key": REDACTED,
        "usage": {"input_tokens": 3},
        "items": [[REDACTED, "/tmp/x"]],
        "blob": "<1 bytes>",
    }
    assert redact({"k": "x"}, by_key=False) == {"k": "x"}


def test_log_filter_redacts_message_arguments_and_traceback() -> None:
    register_secret("log-secret-9", source="t")
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.addFilter(RedactingFilter())
    log = logging.getLogger("core.test_redaction")
    log.addHandler(handler)
    try:
        log.warning("key %s and api_key=%s", "log-secret-9", "plain-arg")
        try:
            raise RuntimeError("boom log-secret-9")
        except RuntimeError:
            log.exception("failed with token: abcdef")
    finally:
        log.removeHandler(handler)
    text = stream.getvalue()
    assert "log-secret-9" not in text and "plain-arg" not in text and "abcdef" not in text
    assert text.count(REDACTED) >= 4 and "RuntimeError" in text


def test_redacting_stream_wraps_once_and_passes_writes_through() -> None:
    register_secret("stream-secret", source="t")
    target = io.StringIO()
    out = redacting(target)
    assert redacting(out) is out
    print("a stream-secret b", file=out)
    assert target.getvalue() == f"a {REDACTED} b\n"
    assert out.getvalue() == target.getvalue()


_CRASH = """
import threading, sys
from core.redaction import install_log_redaction, register_secret
install_log_redaction()
register_secret("crash-secret-42", source="test")
def boom():
    raise ValueError("token=crash-secret-42 and Bearer abcdefgh1234")
t = threading.Thread(target=boom); t.start(); t.join()
import logging
logging.getLogger("harnesses.x").error("late %s", "crash-secret-42")
boom()
"""


def test_crash_hooks_print_redacted_tracebacks(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-c", _CRASH],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "PYTHONPATH": str(ROOT)},
    )
    assert proc.returncode == 1
    assert "ValueError" in proc.stderr and "Exception in thread" in proc.stderr
    assert "late" in proc.stderr
    assert "crash-secret-42" not in proc.stderr and "abcdefgh1234" not in proc.stderr


def test_public_names_do_not_drift() -> None:
    assert sorted(core.redaction.__all__) == sorted(
        [
            "ALWAYS_SECRET_NAMES",
            "MIN_SECRET_LENGTH",
            "REDACTED",
            "RedactingFilter",
            "RedactingStream",
            "SECRET_NAME_MARKERS",
            "StreamRedactor",
            "forget_secrets",
            "install_log_redaction",
            "is_secret_name",
            "redact",
            "redact_text",
            "redacting",
            "register_environment",
            "register_secret",
            "secret_count",
            "secrets_generation",
        ]
    )


def test_the_secrets_generation_changes_with_every_registration() -> None:
    before = core.redaction.secrets_generation()
    core.redaction.register_secret("generation-test-value-91ab", source="test-generation")
    registered = core.redaction.secrets_generation()
    core.redaction.forget_secrets("test-generation")
    assert before != registered != core.redaction.secrets_generation()
