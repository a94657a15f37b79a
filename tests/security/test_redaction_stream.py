"""Attack class: a registered secret that is split, obfuscated or encoded (issue 11, hole 9).

A hostile command prints the API key across stream chunks, with ANSI escape codes,
zero-width characters or line breaks inside it, or base64/hex encoded. The promise: what
reaches the window's terminal (``StreamRedactor``, as the controller feeds it) and every
redacted text (``redact_text``) holds none of it.
"""

from __future__ import annotations

import base64

import pytest

from core.redaction import REDACTED, StreamRedactor, redact_text, register_secret

KEY = "sk-envKEYRk28dn3Lq0Zt"
RAW = KEY.encode()

OBFUSCATED = [
    pytest.param(f"a {KEY[:9]}\n{KEY[9:]} b", id="newline-inside"),
    pytest.param(f"a {KEY[:5]} {KEY[5:12]}\t{KEY[12:]} b", id="spaces-inside"),
    pytest.param(f"a {KEY[:7]}\x1b[1;31m{KEY[7:]}\x1b[0m b", id="ansi-csi-inside"),
    pytest.param(f"a {KEY[:4]}\x1b]0;t\x07{KEY[4:]} b", id="ansi-osc-inside"),
    pytest.param("a " + "\u200b".join(KEY) + " b", id="zero-width-space-between-all"),
    pytest.param(f"a {KEY[:3]}\u2060{KEY[3:10]}\ufeff{KEY[10:]} b", id="word-joiner-bom"),
    pytest.param(f"a {KEY[:8]}\u200c\u200d{KEY[8:]} b", id="zwnj-zwj"),
    pytest.param(base64.b64encode(RAW).decode(), id="base64-aligned"),
    pytest.param(base64.b64encode(b"x" + RAW).decode(), id="base64-offset-1"),
    pytest.param(base64.b64encode(b"user:" + RAW).decode(), id="base64-basic-auth"),
    pytest.param(RAW.hex(), id="hex-lower"),
    pytest.param(RAW.hex().upper(), id="hex-upper"),
    pytest.param(" ".join(f"{b:02x}" for b in RAW), id="hexdump-spaced"),
    pytest.param(base64.encodebytes(b"pad" * 20 + RAW).decode(), id="base64-wrapped-76"),
]


@pytest.fixture(autouse=True)
def _key() -> None:
    register_secret(KEY, source="env:OPENAI_API_KEY")


def _leaks(text: str) -> bool:
    squeezed = "".join(c for c in text if c.isalnum() or c in "-+/=")
    return (
        KEY in squeezed
        or RAW.hex() in squeezed.lower()
        or any(
            base64.b64encode(p + RAW).decode()[2 + len(p) : -4] in squeezed
            for p in (b"", b"x", b"xy")
        )
    )


@pytest.mark.parametrize("text", OBFUSCATED)
def test_obfuscated_or_encoded_key_is_redacted(text: str) -> None:
    out = redact_text(text)
    assert REDACTED in out
    assert not _leaks(out)


def _streamed(text: str, size: int) -> str:
    redactor = StreamRedactor()
    out = [redactor.feed(text[i : i + size]) for i in range(0, len(text), size)]
    return "".join(out) + redactor.flush()


STREAMED = [
    pytest.param(f"log\nkey: {KEY}\nmore\n" * 4, id="registered-key"),
    pytest.param(f"export OPENAI_API_KEY={KEY}\n", id="assignment"),
    pytest.param("password = hunter2hunter2\nok\n", id="password-shape-unregistered"),
    pytest.param("Authorization: Bearer abcdefgh12345678\n", id="bearer-shape"),
    pytest.param(
        "-----BEGIN RSA PRIVATE KEY-----\n" + "MIIEowIBAAKCAQEAx9Fq3\n" * 40
        + "-----END RSA PRIVATE KEY-----\n",
        id="pem-block",
    ),
    pytest.param(f"x {KEY[:6]}\x1b[0m{KEY[6:]} y\n", id="ansi-inside-and-split"),
]


@pytest.mark.parametrize("size", [1, 2, 5, 13, 64])
@pytest.mark.parametrize("text", STREAMED)
def test_secret_split_across_chunks_is_redacted(text: str, size: int) -> None:
    out = _streamed(text, size)
    assert out == redact_text(text)
    for secret in (KEY, "hunter2hunter2", "abcdefgh12345678", "MIIEowIBAAKCAQEAx9Fq3"):
        assert secret not in out


def test_hold_back_is_bounded_and_complete_lines_flow() -> None:
    redactor = StreamRedactor()
    assert redactor.feed("listening on :8000\n") == "listening on :8000\n"
    assert redactor.feed("x" * 100_000) != ""
    assert len(redactor.flush()) <= StreamRedactor.MAX_HOLD
