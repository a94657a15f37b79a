"""Detection of ``apply_patch`` run through the shell (Codex CLI ``maybe_parse_apply_patch``)."""

from __future__ import annotations

import pytest

from core.tools.patch_envelope import parse_patch
from core.tools.shell_patch import (
    detect_shell_patches,
    looks_like_envelope,
    parse_shell_patch,
    resolve_patch_path,
    success_summary,
)

ENVELOPE = "*** Begin Patch\n*** Update File: a.py\n@@\n-x = 1\n+x = 2\n*** End Patch"
BODY = ENVELOPE + "\n"


@pytest.mark.parametrize(
    ("command", "workdir"),
    [
        (f"apply_patch <<'EOF'\n{ENVELOPE}\nEOF\n", None),
        (f"apply_patch <<EOF\n{ENVELOPE}\nEOF", None),
        (f'apply_patch <<"PATCH"\n{ENVELOPE}\nPATCH\n', None),
        (f"apply_patch << 'END_OF_PATCH'\n{ENVELOPE}\nEND_OF_PATCH\n", None),
        (f"applypatch <<'EOF'\n{ENVELOPE}\nEOF\n", None),
        (f"cd sub && apply_patch <<'EOF'\n{ENVELOPE}\nEOF\n", "sub"),
        (f"cd 'my dir' && apply_patch <<'EOF'\n{ENVELOPE}\nEOF\n", "my dir"),
        (f'cd "a/b" && apply_patch <<EOF\n{ENVELOPE}\nEOF\n', "a/b"),
        (f"bash -lc \"apply_patch <<'EOF'\n{ENVELOPE}\nEOF\n\"", None),
        (f"bash -c 'apply_patch <<EOF\n{ENVELOPE}\nEOF\n'", None),
        (f"/bin/sh -c 'cd sub && apply_patch <<EOF\n{ENVELOPE}\nEOF\n'", "sub"),
        (f"zsh -lc 'apply_patch \"{ENVELOPE}\"'", None),
        (f"apply_patch '{ENVELOPE}'", None),
        (f"\napply_patch <<'EOF'\n{ENVELOPE}\nEOF\n\n", None),
    ],
    ids=[
        "heredoc-quoted",
        "heredoc-bare",
        "heredoc-double-quoted",
        "heredoc-space-long-delimiter",
        "applypatch",
        "cd-and",
        "cd-quoted-dir",
        "cd-double-quoted-dir",
        "bash-lc",
        "bash-c-single-quoted",
        "sh-c-cd",
        "zsh-argument",
        "argument",
        "surrounding-newlines",
    ],
)
def test_spellings_are_detected(command, workdir):
    found = parse_shell_patch(command)
    assert found is not None
    assert found.patch.rstrip("\n") == ENVELOPE and found.workdir == workdir
    assert found.command == command
    assert parse_patch(found.patch)[0].path == "a.py"  # what is extracted parses as sent


def test_heredoc_body_is_taken_raw_not_expanded():
    envelope = "*** Begin Patch\n*** Add File: a.sh\n+echo $HOME `id` $(whoami)\n*** End Patch"
    found = parse_shell_patch(f"apply_patch <<EOF\n{envelope}\nEOF\n")
    assert found is not None and found.patch == envelope + "\n"


def test_dash_heredoc_strips_leading_tabs_like_bash():
    tabbed = "\n".join(f"\t{line}" for line in ENVELOPE.split("\n"))
    found = parse_shell_patch(f"apply_patch <<-EOF\n{tabbed}\n\tEOF\n")
    assert found is not None and found.patch == BODY


@pytest.mark.parametrize(
    "command",
    [
        f"apply_patch <<'EOF'\n{ENVELOPE}\nEOF\necho done",
        f"apply_patch <<'EOF'\n{ENVELOPE}\nEOF\n && rm -rf ~",
        f"apply_patch <<'EOF' && touch pwned\n{ENVELOPE}\nEOF\n",
        f"apply_patch <<'EOF'; touch pwned\n{ENVELOPE}\nEOF\n",
        f"apply_patch <<'EOF' | sh\n{ENVELOPE}\nEOF\n",
        f"apply_patch <<'EOF' > /tmp/out\n{ENVELOPE}\nEOF\n",
        f"touch pwned; apply_patch <<'EOF'\n{ENVELOPE}\nEOF\n",
        f"touch pwned && apply_patch <<'EOF'\n{ENVELOPE}\nEOF\n",
        f"cd sub; apply_patch <<'EOF'\n{ENVELOPE}\nEOF\n",
        f"cd sub || apply_patch <<'EOF'\n{ENVELOPE}\nEOF\n",
        f"cd $HOME && apply_patch <<'EOF'\n{ENVELOPE}\nEOF\n",
        f"cd $(mktemp -d) && apply_patch <<'EOF'\n{ENVELOPE}\nEOF\n",
        f"cd ~ && apply_patch <<'EOF'\n{ENVELOPE}\nEOF\n",
        f"cd a b && apply_patch <<'EOF'\n{ENVELOPE}\nEOF\n",
        f"PATH=/tmp/evil apply_patch <<'EOF'\n{ENVELOPE}\nEOF\n",
        f"apply_patch --force <<'EOF'\n{ENVELOPE}\nEOF\n",
        f"sudo apply_patch <<'EOF'\n{ENVELOPE}\nEOF\n",
        f"cat <<'EOF'\n{ENVELOPE}\nEOF\n",
        f"python - <<'EOF'\n{ENVELOPE}\nEOF\n",
        f"apply_patch <<'EOF'\n{ENVELOPE}\n",  # unterminated heredoc
        "apply_patch <<'EOF'\nnot a patch\nEOF\n",
        f'apply_patch "{ENVELOPE}$(touch pwned)"',
        f"apply_patch \"$(curl -s evil)\" '{ENVELOPE}'",
        f"apply_patch '{ENVELOPE}' extra",
        f"bash -lc \"apply_patch <<'EOF'\n{ENVELOPE}\n$(touch pwned)\nEOF\n\"",
        f"bash -lc \"apply_patch <<'EOF'\n{ENVELOPE}\n`touch pwned`\nEOF\n\"",
        f"bash -lc \"apply_patch <<'EOF'\n{ENVELOPE}\n${{HOME}}\nEOF\n\"",
        f"bash -lc 'apply_patch <<EOF\n{ENVELOPE}\nEOF\ntouch pwned'",
        f"bash -lc 'apply_patch <<EOF\n{ENVELOPE}\nEOF\n' && touch pwned",
        f"bash -x -c 'apply_patch <<EOF\n{ENVELOPE}\nEOF\n'",
        f"python -c 'apply_patch <<EOF\n{ENVELOPE}\nEOF\n'",
        f"bash -lc \"apply_patch <<'EOF'\n+${{unclosed\n{ENVELOPE}\nEOF\n\"",
        ENVELOPE,
        "ls -la",
        "",
    ],
    ids=[
        "command-after-heredoc",
        "and-after-heredoc",
        "and-on-head-line",
        "semicolon-on-head-line",
        "pipe",
        "redirect",
        "command-before",
        "and-before",
        "cd-semicolon",
        "cd-or",
        "cd-parameter",
        "cd-command-substitution",
        "cd-tilde",
        "cd-two-args",
        "assignment-prefix",
        "extra-flag",
        "sudo",
        "cat-heredoc",
        "python-heredoc",
        "unterminated",
        "no-envelope",
        "argument-command-substitution",
        "argument-dynamic-first",
        "argument-extra",
        "bash-lc-command-substitution",
        "bash-lc-backticks",
        "bash-lc-parameter",
        "bash-lc-command-after",
        "bash-lc-and-after",
        "bash-extra-flag",
        "not-a-shell",
        "unclosed-brace-trap",
        "bare-envelope",
        "plain-command",
        "empty",
    ],
)
def test_anything_else_is_a_normal_command(command):
    assert parse_shell_patch(command) is None
    assert detect_shell_patches([command]) is None


def test_argv_forms():
    (found,) = detect_shell_patches(["apply_patch", ENVELOPE]) or []
    assert found.patch == ENVELOPE and found.workdir is None
    (found,) = detect_shell_patches(["applypatch", ENVELOPE]) or []
    assert found.patch == ENVELOPE
    (found,) = (
        detect_shell_patches(["bash", "-lc", f"cd s && apply_patch <<'EOF'\n{BODY}EOF"]) or []
    )
    assert found.patch == BODY and found.workdir == "s"
    assert detect_shell_patches(["apply_patch", "echo hi"]) is None
    assert detect_shell_patches(["apply_patch", ENVELOPE, "extra"]) is None
    assert detect_shell_patches(["bash", "-lc", "rm -rf ~"]) is None


def test_several_commands_are_patches_only_when_all_are():
    first = f"apply_patch <<'EOF'\n{ENVELOPE}\nEOF"
    second = f"cd sub && apply_patch <<'EOF'\n{ENVELOPE}\nEOF"
    found = detect_shell_patches([first, second])
    assert found is not None and [f.workdir for f in found] == [None, "sub"]
    assert detect_shell_patches([first, "touch pwned"]) is None
    assert detect_shell_patches(["touch pwned", first]) is None
    assert detect_shell_patches([]) is None


def test_resolve_patch_path():
    assert resolve_patch_path("a.py", None) == "a.py"
    assert resolve_patch_path("a.py", ".") == "a.py"
    assert resolve_patch_path("a.py", "src/") == "src/a.py"
    assert resolve_patch_path("./a.py", "src") == "src/a.py"
    assert resolve_patch_path("../a.py", "src") == "a.py"
    assert resolve_patch_path("../../a.py", "src") == "../a.py"  # confinement refuses it
    assert resolve_patch_path("/etc/passwd", "src") == "/etc/passwd"  # refused likewise


def test_success_summary_matches_codex():
    changes = [("M", "b.py"), ("A", "new.txt"), ("D", "old.txt"), ("M", "a.py")]
    assert success_summary(changes) == (
        "Success. Updated the following files:\nA new.txt\nM b.py\nM a.py\nD old.txt\n"
    )


def test_looks_like_envelope():
    assert looks_like_envelope("\n  *** Begin Patch\n")
    assert not looks_like_envelope("please apply *** Begin Patch")
