"""The destructive-command guard (core.policy.destructive): effects, not spellings."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.policy import destructive_reason, inside_build_dir, parse_command
from core.policy.destructive import judge_line
from core.policy.harm import Harm


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    """A workspace with ``README.md``, ``src/main.py``, ``src/app.py``, ``.env``, ``file.txt``."""
    (tmp_path / "src").mkdir()
    for name in ("README.md", "src/main.py", "src/app.py", ".env", "file.txt", "data.db"):
        (tmp_path / name).write_text(name + "\n")
    return tmp_path


def reasons(line: str, workspace: Path | None = None) -> list[str | None]:
    return [destructive_reason(s, workspace) for s in parse_command(line).segments]


def harms(line: str, workspace: Path | None = None) -> list[Harm | None]:
    return judge_line(parse_command(line), workspace)


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
        # issue 12: holes the guard used to leave open (these were in the safe list)
        "git reset",
        "git restore --staged src/app.py",
        "git restore -S x",
        "git stash pop",
        "rm file.txt",
        "rm -f file.txt",
    ],
)
def test_destructive_commands_are_caught(line: str):
    assert any(reasons(line)), line


@pytest.mark.parametrize(
    "line",
    [
        "git status",
        "git diff",
        "git reset --soft HEAD~1",
        "git checkout main",
        "git checkout feature/login",
        "git checkout -b new origin/main",
        "git checkout -",
        "git switch main",
        "git clean -n",
        "git clean --dry-run -d",
        "git push origin main",
        "git branch -d merged",
        "git stash",
        "git stash list",
        "git stash push -m wip",
        "git stash apply",
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
        "mv README.md new.md",
        "mv README.md src",
        "cp README.md new.md",
        "echo x > new-file",
        "echo x >> README.md",
        "ls | tee -a README.md",
        "ls | tee new.log",
        "sed -i s/a/b/ README.md",
        "sh script.sh",
        "python tool.py",
        "python -m pytest -q",
        "python --version",
        "rmdir empty",
        "awk '{print $1}' README.md",
    ],
)
def test_safe_commands_are_not_flagged(line: str, ws: Path):
    assert not any(reasons(line, ws)), (line, reasons(line, ws))


def test_reason_phrases_say_what_is_lost(ws: Path):
    assert reasons("git clean -fd") == ["deletes untracked files"]
    assert reasons("git clean -fdx") == ["deletes untracked and ignored files (git clean -x)"]
    assert reasons("git clean -fX") == ["deletes ignored files (git clean -X)"]
    assert reasons("git reset --hard") == ["discards uncommitted changes"]
    assert reasons("rm -rf src") == ["deletes src and everything under it"]
    assert reasons("git checkout src/main.py", ws) == [
        "discards uncommitted changes to src/main.py"
    ]
    assert reasons("git reset", ws) == ["discards staged changes (staged-only content is lost)"]
    assert reasons("rm .env", ws) == ["deletes .env"]
    assert reasons("mv README.md src/main.py", ws) == [
        "overwrites src/main.py (its current content is lost)"
    ]
    assert reasons(": > data.db", ws) == ["overwrites data.db (the current content is lost)"]
    assert reasons("git stash clear") == ["deletes every stash entry"]


def test_a_lone_checkout_operand_is_a_path_when_it_exists(ws: Path):
    assert reasons("git checkout src", ws) == ["discards uncommitted changes to src"]
    assert reasons("git checkout main", ws) == [None]
    (ws / "main").write_text("a file named like the branch\n")
    # both a branch and a path: decided conservatively, as a path
    assert reasons("git checkout main", ws) == ["discards uncommitted changes to main"]


def test_without_a_workspace_existence_is_unknown_and_counts_as_existing():
    assert reasons("git checkout main") == ["discards uncommitted changes to main"]
    assert reasons("echo x > new-file") == ["overwrites new-file (the current content is lost)"]
    assert reasons("mv a b") != [None]


def test_cd_and_git_C_move_the_existence_check(ws: Path):
    assert harms("cd src && git checkout main.py", ws)[1] is not None
    assert harms("git -C src checkout main.py", ws)[0] is not None
    assert harms("cd src && git checkout nothing-here", ws)[1] is None
    assert harms("cd $X && git checkout main", ws)[1] is not None  # unknown directory


def test_removes_names_absolute_targets_for_the_checkpoint(ws: Path):
    (harm,) = harms("rm .env src/*.py", ws)
    assert harm is not None and harm.certain
    assert set(harm.removes) == {
        str(ws / ".env"),
        str(ws / "src" / "app.py"),
        str(ws / "src" / "main.py"),
    }
    assert not harm.removes_unknown
    (harm,) = harms("rm $(cat list)", ws)[-1:]
    assert harm is not None and harm.removes_unknown


def test_git_clean_keeps_its_arguments_for_a_dry_run():
    (harm,) = harms("git clean -fdx -e .env src")
    assert harm is not None and harm.git_clean == ("-fdx", "-e", ".env", "src")
    assert harm.reason == "deletes untracked and ignored files under src (git clean -x)"


def test_refs_name_what_a_ref_deletion_loses():
    assert harms("git update-ref -d refs/stash")[0].refs == ("refs/stash",)  # type: ignore[union-attr]
    assert harms("git branch -D feature")[0].refs == ("refs/heads/feature",)  # type: ignore[union-attr]
    assert harms("git stash drop stash@{1}")[0].refs == ("stash@{1}",)  # type: ignore[union-attr]


@pytest.mark.parametrize(
    "line",
    [
        "python -c 'print(1)'",
        "node -e 'console.log(1)'",
        "git co src",
        "$CMD x",
        'eval "$X"',
        "python",
        "cat script.py | python",
    ],
)
def test_what_cannot_be_analysed_is_possibly_destructive(line: str):
    found = [h for h in harms(line) if h is not None]
    assert found and not any(h.certain for h in found), (line, found)


def test_inline_code_that_deletes_is_certainly_destructive():
    (harm,) = harms("python3 -c 'import shutil; shutil.rmtree(\"src\")'")
    assert harm is not None and harm.certain and "`rmtree`" in harm.reason


def test_aliases_defined_in_the_line_are_judged_through(ws: Path):
    assert harms("alias x='rm -rf src'; x", ws)[1] is not None
    assert harms("alias g='git status'; g", ws)[1] is None
    assert harms("git -c alias.x='!rm -rf src' x", ws)[0] is not None
    assert harms("git -c alias.co=checkout co src/main.py", ws)[0] is not None
    assert harms("git -c alias.st=status st", ws)[0] is None


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
