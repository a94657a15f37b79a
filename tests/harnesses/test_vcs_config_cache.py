"""The door's reused config listing (issue 15, Build item 5) never hides a config change.

Each case plants a driver in a real repository's config after the door has listed it once,
then asks git through the door what value it sees for that driver: the door's neutral value
means the new key was listed and overridden; the planted command means a stale listing.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from harnesses.vcs import door_counters, run_git, runner

PLANTED = "/bin/sh -c planted"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    subprocess.run(["git", "init", "-q", str(ws)], check=True, capture_output=True)
    return ws


@pytest.fixture
def settled(monkeypatch: pytest.MonkeyPatch) -> None:
    """Treat config files as changed long ago, so listings are reused (no waiting)."""
    monkeypatch.setattr(runner, "_RACY_NS", -(10**12))


def _seen(ws: Path, key: str) -> str:
    """The value git run through the door sees for ``key``."""
    result = run_git(["config", "--get", key], cwd=ws, git_dir=ws / ".git", check=False)
    return result.text.strip()


def _plant(ws: Path, name: str) -> None:
    with open(ws / ".git" / "config", "a", encoding="utf-8") as f:
        f.write(f'[filter "{name}"]\n\tclean = {PLANTED}\n')


def test_listing_is_reused_while_the_config_is_unchanged(repo: Path, settled: None) -> None:
    _seen(repo, "core.bare")
    before = door_counters()
    for _ in range(3):
        _seen(repo, "core.bare")
    after = door_counters()
    assert after["listings_reused"] - before["listings_reused"] == 3
    assert after["listings"] == before["listings"]


def test_a_driver_planted_after_a_reused_listing_is_overridden(repo: Path, settled: None) -> None:
    _plant(repo, "first")
    assert _seen(repo, "filter.first.clean") == ""
    assert _seen(repo, "filter.first.clean") == ""  # from the reused listing
    _plant(repo, "second")
    assert _seen(repo, "filter.second.clean") == ""


def test_a_same_size_rewrite_with_the_same_mtime_is_seen(repo: Path) -> None:
    """Racy config: rewritten at once, same size, mtime put back; the real clock decides."""
    config = repo / ".git" / "config"
    base = config.read_text(encoding="utf-8")
    config.write_text(base + f'[filter "aaaa"]\n\tclean = {PLANTED}\n', encoding="utf-8")
    st = os.stat(config)
    assert _seen(repo, "filter.aaaa.clean") == ""
    config.write_text(base + f'[filter "bbbb"]\n\tclean = {PLANTED}\n', encoding="utf-8")
    os.utime(config, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert os.stat(config).st_size == st.st_size
    assert _seen(repo, "filter.bbbb.clean") == ""


def test_a_fresh_config_is_never_reused(repo: Path) -> None:
    (repo / ".git" / "config").write_text("[core]\n\tbare = false\n", encoding="utf-8")
    _seen(repo, "core.bare")
    before = door_counters()
    _seen(repo, "core.bare")
    assert door_counters()["listings_reused"] == before["listings_reused"]


@pytest.mark.parametrize(
    "extra",
    [
        pytest.param("[include]\n\tpath = {inc}\n", id="include-path-not-yet-there"),
        pytest.param('[includeIf "gitdir:/"]\n\tpath = {inc}\n', id="includeif"),
        pytest.param("[extensions]\n\tworktreeConfig = true\n", id="worktree-config"),
    ],
)
def test_a_config_that_reads_other_files_is_listed_every_time(
    repo: Path, settled: None, extra: str
) -> None:
    inc = repo.parent / "included.cfg"
    with open(repo / ".git" / "config", "a", encoding="utf-8") as f:
        f.write(extra.format(inc=inc))
    _seen(repo, "core.bare")
    # the included file (or config.worktree) appears without touching .git/config
    planted = f'[filter "inc"]\n\tclean = {PLANTED}\n'
    inc.write_text(planted, encoding="utf-8")
    (repo / ".git" / "config.worktree").write_text(planted, encoding="utf-8")
    before = door_counters()
    assert _seen(repo, "filter.inc.clean") == ""
    assert door_counters()["listings_reused"] == before["listings_reused"]


def test_a_replaced_git_dir_is_listed_again(repo: Path, settled: None, tmp_path: Path) -> None:
    _seen(repo, "core.bare")
    other = tmp_path / "other"
    subprocess.run(["git", "init", "-q", str(other)], check=True, capture_output=True)
    _plant(other, "swapped")
    os.rename(repo / ".git", tmp_path / "old-git")
    os.rename(other / ".git", repo / ".git")
    assert _seen(repo, "filter.swapped.clean") == ""
