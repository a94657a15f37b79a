"""Attack class: a hostile config honoured by the git door after a reused config listing.

The door reuses ``git config --list`` for a repository while ``<git_dir>/config`` keeps its
identity (harnesses/vcs/runner.py). The attacker (the agent's commands, or the cloned
repository) changes what git reads without changing that identity as far as it can: the
same size, the mtime put back, a symbolic link, a hard link written through, a file
renamed over it (inode numbers are reused), a ``commondir`` planted after the listing, the
git dir itself a symbolic link swapped to another. The promise: every filter git would run
through the door is one the door overrode (git sees the empty command, never the planted
one). Listings are made reusable at once (``settled``), and each change waits for the file
system's clock to tick, so only the identity check stands between the attack and git.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from harnesses.vcs import door_counters, run_git, runner

PLANTED = "/bin/sh -c planted"
FILTER = '[filter "evil"]\n\tclean = ' + PLANTED + "\n"
SAME_SIZE = '[filter "eviL"]\n\tclean = ' + PLANTED + "\n"  # as long as FILTER


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    subprocess.run(["git", "init", "-q", str(ws)], check=True, capture_output=True)
    return ws


@pytest.fixture
def settled(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every listing is reusable at once (the racy window would otherwise refuse it)."""
    monkeypatch.setattr(runner, "_RACY_NS", -(10**12))


def _seen(ws: Path, key: str, git_dir: Path | None = None) -> str:
    result = run_git(["config", "--get", key], cwd=ws, git_dir=git_dir or ws / ".git", check=False)
    return result.text.strip()


def _listed_and_reused(ws: Path, git_dir: Path | None = None) -> None:
    """List once, then prove the next run reuses the listing (the cache is really armed)."""
    _seen(ws, "core.bare", git_dir)
    before = door_counters()["listings_reused"]
    assert _seen(ws, "filter.evil.clean", git_dir) in ("", PLANTED)
    assert door_counters()["listings_reused"] == before + 1


def _next_tick(path: Path) -> None:
    """Wait (bounded polling, no sleep) until a file changed now gets a later ctime."""
    probe = path.parent / ".tick-probe"
    probe.write_text("0")
    first = os.stat(probe).st_ctime_ns
    for n in range(10_000_000):
        probe.write_text(str(n % 2))
        if os.stat(probe).st_ctime_ns != first:
            break
    else:
        pytest.fail("the file system clock never ticked")
    probe.unlink()


def test_same_size_rewrite_with_mtime_put_back(repo: Path, settled: None) -> None:
    config = repo / ".git" / "config"
    base = config.read_text()
    config.write_text(base + SAME_SIZE)
    _listed_and_reused(repo)
    st = os.stat(config)
    _next_tick(config)
    config.write_text(base + FILTER)
    os.utime(config, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert os.stat(config).st_size == st.st_size
    assert _seen(repo, "filter.evil.clean") == ""


def test_hard_link_written_through(repo: Path, settled: None, tmp_path: Path) -> None:
    config = repo / ".git" / "config"
    base = config.read_text()
    config.write_text(base + SAME_SIZE)
    os.link(config, repo / "innocent.txt")  # a work-tree name for the same inode
    _listed_and_reused(repo)
    st = os.stat(config)
    _next_tick(config)
    with open(repo / "innocent.txt", "r+", encoding="utf-8") as f:
        f.write(base + FILTER)
    os.utime(config, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert (os.stat(config).st_ino, os.stat(config).st_size) == (st.st_ino, st.st_size)
    assert _seen(repo, "filter.evil.clean") == ""


def test_renamed_over_with_mtime_put_back(repo: Path, settled: None) -> None:
    config = repo / ".git" / "config"
    base = config.read_text()
    config.write_text(base + SAME_SIZE)
    _listed_and_reused(repo)
    st = os.stat(config)
    _next_tick(config)
    new = repo / ".git" / "config.new"
    new.write_text(base + FILTER)
    os.chmod(new, st.st_mode)
    os.utime(new, ns=(st.st_atime_ns, st.st_mtime_ns))
    os.replace(new, config)
    assert _seen(repo, "filter.evil.clean") == ""


def test_replaced_by_a_symbolic_link(repo: Path, settled: None, tmp_path: Path) -> None:
    config = repo / ".git" / "config"
    _listed_and_reused(repo)
    elsewhere = tmp_path / "elsewhere.cfg"
    elsewhere.write_text(config.read_text() + FILTER)
    config.unlink()
    config.symlink_to(elsewhere)
    assert _seen(repo, "filter.evil.clean") == ""


def test_commondir_planted_after_the_listing(repo: Path, settled: None, tmp_path: Path) -> None:
    _listed_and_reused(repo)
    common = tmp_path / "common"
    subprocess.run(["git", "init", "-q", "--bare", str(common)], check=True, capture_output=True)
    with open(common / "config", "a", encoding="utf-8") as f:
        f.write(FILTER)
    (repo / ".git" / "commondir").write_text(str(common) + "\n")
    assert _seen(repo, "filter.evil.clean") == ""


def test_git_dir_symlink_swapped_to_a_hard_linked_config(
    repo: Path, settled: None, tmp_path: Path
) -> None:
    """``ws/.git`` is a link to a real git dir; it is swapped to another whose config is the
    same inode (so the identity matches) but which plants a ``commondir``."""
    real = tmp_path / "real-git"
    os.rename(repo / ".git", real)
    (repo / ".git").symlink_to(real)
    _listed_and_reused(repo)
    other = tmp_path / "other-git"
    subprocess.run(["git", "init", "-q", "--bare", str(other)], check=True, capture_output=True)
    (other / "config").unlink()
    os.link(real / "config", other / "config")
    common = tmp_path / "common"
    subprocess.run(["git", "init", "-q", "--bare", str(common)], check=True, capture_output=True)
    with open(common / "config", "a", encoding="utf-8") as f:
        f.write(FILTER)
    (other / "commondir").write_text(str(common) + "\n")
    (repo / ".git").unlink()
    (repo / ".git").symlink_to(other)
    assert _seen(repo, "filter.evil.clean") == ""


@pytest.mark.parametrize(
    "command",
    [
        pytest.param(f"printf '{FILTER}' >> .git/config", id="append-from-the-sandbox"),
        pytest.param(
            "git config filter.evil.clean 'sh -c planted'", id="git-config-from-the-sandbox"
        ),
        pytest.param(
            f"cp .git/config c && printf '{FILTER}' >> c && mv -f c .git/config",
            id="rename-over-from-the-sandbox",
        ),
        pytest.param(
            f"mkdir -p ../common && printf '{FILTER}' > ../common/config && "
            "echo ../common > .git/commondir",
            id="commondir-from-the-sandbox",
        ),
    ],
)
async def test_a_command_between_two_door_runs_cannot_plant_a_filter(
    repo: Path, settled: None, command: str
) -> None:
    """The agent's command runs (real bubblewrap, workspace writable) between two runs of
    the door that would reuse one listing."""
    from harnesses.shell import SubprocessShellExecutor

    _listed_and_reused(repo)
    executor = SubprocessShellExecutor(repo, sandbox="workspace-write")
    result = await executor.run([command], timeout_ms=30_000)
    assert all(o.provider_data and o.provider_data["sandboxed"] for o in result.output)
    assert _seen(repo, "filter.evil.clean") == ""
