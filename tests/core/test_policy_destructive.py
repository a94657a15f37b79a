"""The destructive-command guard (core.policy.destructive)."""

from __future__ import annotations

import pytest

from core.policy import destructive_reason, inside_build_dir, parse_command


def reasons(line: str) -> list[str | None]:
    return [destructive_reason(s) for s in parse_command(line).segments]


@pytest.mark.parametrize(
    "line",
    [
        "git reset --hard",
        "git reset --hard HEAD~1",
        "git checkout -- .",
        "git checkout .",
        "git checkout -- src/app.py",
        "git checkout HEAD -- src/app.py",
        "git checkout -f main",
        "git checkout main src/app.py",
        "git restore src/app.py",
        "git restore --worktree --staged x",
        "git restore .",
        "git clean -f",
        "git clean -fd",
        "git clean -fdx",
        "git clean -xdf",
        "git push --force",
        "git push -f origin main",
        "git push --force-with-lease",
        "git push origin +main",
        "git push origin --delete feature",
        "git branch -D feature",
        "git branch -d --force feature",
        "git stash drop",
        "git stash clear",
        "git switch --discard-changes main",
        "git -C sub reset --hard",
        "rm -r src",
        "rm -rf src",
        "rm -fr src",
        "rm -Rf src",
        "rm --recursive src",
        "rm -rf /",
        "rm -rf ~",
        "rm -rf .",
        "rm -rf *",
        "rm -rf node_modules src",
        "rm -rf node_modules/../src",
        "rm -rf $DIR/node_modules",
        "rm -rf",
        "ls | xargs rm -rf",
        "find . -name '*.tmp' -delete",
        "find . -type d -exec rm -rf {} +",
        "dd if=/dev/zero of=disk.img",
        "mkfs.ext4 /dev/sdb1",
        "mkfs -t ext4 /dev/sdb1",
        "chmod -R 777 .",
        "chown -R me .",
        "chmod --recursive u+w .",
        "truncate -s 0 data.db",
        "shred secrets.txt",
        "sudo rm -rf /var/lib",
        "echo $(git reset --hard)",
    ],
)
def test_destructive_commands_are_caught(line: str):
    assert any(reasons(line)), line


@pytest.mark.parametrize(
    "line",
    [
        "git status",
        "git diff",
        "git reset",
        "git reset --soft HEAD~1",
        "git checkout main",
        "git checkout feature/login",
        "git checkout -b new origin/main",
        "git restore --staged src/app.py",
        "git restore -S x",
        "git clean -n",
        "git clean --dry-run -d",
        "git push origin main",
        "git branch -d merged",
        "git stash",
        "git stash pop",
        "rm file.txt",
        "rm -f file.txt",
        "rm -rf node_modules",
        "rm -rf node_modules dist build target",
        "rm -rf ./.pytest_cache __pycache__ .venv .mypy_cache .ruff_cache coverage",
        "rm -rf build/*",
        "rm -rf packages/*/node_modules",
        "rm -rf src/__pycache__",
        "rm -rf tandem.egg-info",
        "find . -name '*.py'",
        "chmod +x run.sh",
        "chmod 644 -- -R",
        "echo rm -rf /",
    ],
)
def test_safe_commands_are_not_flagged(line: str):
    assert not any(reasons(line)), (line, reasons(line))


def test_reason_phrases_say_what_is_lost():
    assert reasons("git clean -fd") == ["deletes untracked files"]
    assert reasons("git reset --hard") == ["discards uncommitted changes"]
    assert reasons("rm -rf src") == ["deletes files recursively"]


@pytest.mark.parametrize(
    ("path", "inside"),
    [
        ("node_modules", True),
        ("./dist", True),
        ("web/node_modules/.cache", True),
        ("/tmp/proj/target", True),
        ("src", False),
        ("/", False),
        ("*", False),
        ("node_modules/..", False),
        ("$HOME/build", False),
        ("", False),
    ],
)
def test_inside_build_dir(path: str, inside: bool):
    assert inside_build_dir(path) is inside
