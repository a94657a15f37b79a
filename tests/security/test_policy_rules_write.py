"""Attack class: rules that write. A built-in read-only rule must never let a write or a program run.

Each case is a spelling of a write (or of running a program) through a command the built-in
read-only rules allow: GNU long options and their abbreviations (``sort --outp=``), attached
and bundled short options (``-ofile``, ``-rno``), git's ``--output`` on every log-like
subcommand, pagers, external diff and textconv programs, filters and fsmonitor named by
the repository's config, ``find -fprint``, ``file -C``, ``time -o``, redirections. The
promise: in *ask* and *read-only* modes the line does not run without a prompt, so the target
is unchanged (or the marker outside the workspace absent). Where the spelling is live on
this machine, running it unjudged afterwards proves it really writes.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.security._policy_box import ASKING_MODES, Box, make_box

OUT = "out.txt"
MAIN = "src/main.py"
MARK = "{outside}/m"


def _evil_script(box: Box) -> Path:
    script = box.outside / "evil.sh"
    script.write_text(f"#!/bin/sh\ntouch {box.outside / 'm'}\ncat\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return script


def _stash(box: Box) -> None:
    (box.root / "README.md").write_text("changed\n")
    box.git("stash", "-q")


def _diff_external(box: Box) -> None:
    box.git("config", "diff.external", str(_evil_script(box)))
    (box.root / "README.md").write_text("changed\n")


def _fsmonitor(box: Box) -> None:
    box.git("config", "core.fsmonitor", str(_evil_script(box)))


def _textconv(box: Box) -> None:
    (box.root / ".gitattributes").write_text("*.md diff=evil\n")
    box.git("config", "diff.evil.textconv", str(_evil_script(box)))
    (box.root / "README.md").write_text("changed\n")


def _clean_filter(box: Box) -> None:
    (box.root / ".gitattributes").write_text("*.md filter=evil\n")
    box.git("config", "filter.evil.clean", str(_evil_script(box)))
    (box.root / "README.md").write_text("changed\n")


def _include(box: Box) -> None:
    included = box.outside / "inc.cfg"
    included.write_text(f"[diff]\n\texternal = {_evil_script(box)}\n")
    box.git("config", "include.path", str(included))
    (box.root / "README.md").write_text("changed\n")


def _magic(box: Box) -> None:
    (box.root / "magic").write_text("0\tstring\tfoo\tFoo file\n")


SETUPS: dict[str, Callable[[Box], None]] = {
    "stash": _stash,
    "diff-external": _diff_external,
    "fsmonitor": _fsmonitor,
    "textconv": _textconv,
    "clean-filter": _clean_filter,
    "include": _include,
    "magic": _magic,
}


def case(line: str, target: str | None, *, live: bool, setup: str = "", id: str):
    """``target``: the file that must stay unchanged (``None``: judge only, never run)."""
    return pytest.param(line, target, live, setup, id=id)


WRITES = [
    # sort: every spelling of --output, -o and -T
    case("sort --outp=src/main.py README.md", MAIN, live=True, id="sort-outp-abbrev"),
    case("sort --o=src/main.py README.md", MAIN, live=True, id="sort-o-shortest-abbrev"),
    case("sort --output=src/main.py README.md", MAIN, live=True, id="sort-output-eq"),
    case("sort --output src/main.py README.md", MAIN, live=True, id="sort-output-separate"),
    case("sort -o src/main.py README.md", MAIN, live=True, id="sort-o-separate"),
    case("sort -osrc/main.py README.md", MAIN, live=True, id="sort-o-attached"),
    case("sort -rno src/main.py README.md", MAIN, live=True, id="sort-bundled-rno"),
    case("sort README.md -o src/main.py", MAIN, live=True, id="sort-o-after-operand"),
    case("sort -k1 -o src/main.py README.md", MAIN, live=True, id="sort-o-after-arg-option"),
    case("sort -T {outside} README.md", None, live=False, id="sort-temporary-directory"),
    case("sort --compress-program=gzip README.md", None, live=False, id="sort-compress-program"),
    case("sort --compress=gzip README.md", None, live=False, id="sort-compress-abbrev"),
    # git: --output on every log-like subcommand, and abbreviations
    case(
        "git stash list --format=%H --output=.git/config",
        ".git/config",
        live=True,
        setup="stash",
        id="git-stash-list-output-git-config",
    ),
    case("git shortlog --output=out.txt HEAD", OUT, live=True, id="git-shortlog-output"),
    case("git log --output=out.txt -1", OUT, live=True, id="git-log-output-eq"),
    case("git log --output out.txt -1", OUT, live=True, id="git-log-output-separate"),
    case("git log -p --outp=out.txt", OUT, live=False, id="git-log-output-abbrev"),
    case("git log --ou=out.txt", OUT, live=False, id="git-log-ou-abbrev"),
    case("git show --output=out.txt", OUT, live=True, id="git-show-output"),
    case("git diff --output=out.txt HEAD", OUT, live=True, id="git-diff-output"),
    case("git blame --output=out.txt README.md", OUT, live=True, id="git-blame-output"),
    case("git --no-pager log --output=out.txt -1", OUT, live=True, id="git-global-then-output"),
    # git: programs run by options
    case("git grep -O'touch {outside}/m' foo", MARK, live=True, id="git-grep-O-pager"),
    case(
        "git grep --open-files-in-pager='touch {outside}/m' foo",
        MARK,
        live=True,
        id="git-grep-open-files-in-pager",
    ),
    case("git grep --open='touch {outside}/m' foo", MARK, live=False, id="git-grep-open-abbrev"),
    case("git log -p --ext-diff", None, live=False, id="git-log-ext-diff"),
    case("git diff --ext", None, live=False, id="git-diff-ext-abbrev"),
    case("git show --textconv HEAD", None, live=False, id="git-show-textconv"),
    case("git log -p --textc", None, live=False, id="git-log-textconv-abbrev"),
    case("git cat-file --filters HEAD:README.md", None, live=False, id="git-cat-file-filters"),
    case("git cat-file --textconv HEAD:README.md", None, live=False, id="git-cat-file-textconv"),
    case("git -c core.pager='touch {outside}/m' log", None, live=False, id="git-c-pager"),
    # git: programs named by the repository's config
    case("git diff", MARK, live=True, setup="diff-external", id="config-diff-external"),
    case("git status", MARK, live=True, setup="fsmonitor", id="config-fsmonitor-status"),
    case("git diff", MARK, live=True, setup="fsmonitor", id="config-fsmonitor-diff"),
    case("git diff", MARK, live=True, setup="textconv", id="config-textconv-diff"),
    case("git diff", MARK, live=True, setup="clean-filter", id="config-clean-filter-diff"),
    case("git status", MARK, live=False, setup="clean-filter", id="config-clean-filter-status"),
    case("git diff", MARK, live=True, setup="include", id="config-include-path"),
    # file(1) compiles magic
    case("file -C -m magic", "magic.mgc", live=True, setup="magic", id="file-compile"),
    case(
        "file --compile --magic-file=magic",
        "magic.mgc",
        live=True,
        setup="magic",
        id="file-compile-long",
    ),
    case("file --comp -m magic", "magic.mgc", live=True, setup="magic", id="file-comp-abbrev"),
    # find's writing actions
    case("find . -maxdepth 0 -fprint out.txt", OUT, live=True, id="find-fprint"),
    case("find . -maxdepth 0 -fprint0 out.txt", OUT, live=True, id="find-fprint0"),
    case("find . -maxdepth 0 -fprintf out.txt %p", OUT, live=True, id="find-fprintf"),
    case("find . -maxdepth 0 -fls out.txt", OUT, live=True, id="find-fls"),
    case("find . -name README.md -delete", "README.md", live=True, id="find-delete"),
    case("find . -maxdepth 0 -exec touch out.txt \\;", OUT, live=True, id="find-exec"),
    case("find . -maxdepth 0 -execdir touch {outside}/m \\;", MARK, live=True, id="find-execdir"),
    # time, tee, redirections
    case("/usr/bin/time -o out.txt ls", OUT, live=True, id="gnu-time-o"),
    case("/usr/bin/time --out=out.txt ls", OUT, live=True, id="gnu-time-output-abbrev"),
    case("command time -o out.txt ls", OUT, live=True, id="command-time-o"),
    case("ls | tee out.txt", OUT, live=True, id="tee"),
    case("ls | tee -a src/main.py", MAIN, live=True, id="tee-append"),
    case("echo hi > out.txt", OUT, live=True, id="redirect-out"),
    case("echo hi >> src/main.py", MAIN, live=True, id="redirect-append"),
    case("cat <> out.txt", OUT, live=True, id="redirect-read-write"),
    case("ls &> out.txt", OUT, live=True, id="redirect-both"),
    case("ls >| out.txt", OUT, live=True, id="redirect-clobber"),
    case("ls 2> out.txt", OUT, live=True, id="redirect-stderr"),
    case("cat README.md 1>out.txt", OUT, live=True, id="redirect-fd1"),
    case("{ ls; } > out.txt", OUT, live=True, id="group-redirect-out"),
    case("> src/main.py", MAIN, live=True, id="bare-redirect-truncates"),
    case(": > src/main.py", MAIN, live=True, id="colon-redirect-truncates"),
    # wrappers and inner shells
    case("env -S 'touch out.txt'", OUT, live=True, id="env-split-string"),
    case("env --sp='touch out.txt'", OUT, live=True, id="env-split-string-abbrev"),
    case("bash -c 'echo x > out.txt'", OUT, live=True, id="bash-c-redirect"),
    case("sh -c 'sort -o out.txt README.md'", OUT, live=True, id="sh-c-sort-o"),
    case("eval 'echo x > out.txt'", OUT, live=True, id="eval-redirect"),
    case("echo out.txt | xargs touch", OUT, live=True, id="xargs-touch"),
    case("timeout 5 sort -o out.txt README.md", OUT, live=True, id="timeout-sort-o"),
    # settings that change the machine or later commands
    case("date -s 2001-01-01", None, live=False, id="date-set"),
    case("date --set=2001-01-01", None, live=False, id="date-set-long"),
    case("printf -v PATH /nowhere; ls", None, live=False, id="printf-v-path"),
    case("printf -vPATH /nowhere; ls", None, live=False, id="printf-v-attached"),
    # tools not installed here: judged only
    case("tree -o out.txt", None, live=False, id="tree-o"),
    case("tree -R -H . -L 1", None, live=False, id="tree-R-writes-html"),
    case("rg --pre ./evil foo", None, live=False, id="rg-pre"),
    case("rg --pre-glob '*' foo", None, live=False, id="rg-pre-glob"),
    case("rg -z foo", None, live=False, id="rg-search-zip"),
    case("rg --hostname-bin=./evil foo", None, live=False, id="rg-hostname-bin"),
    case("diff -l README.md src/main.py", None, live=False, id="diff-paginate-runs-pr"),
]


@pytest.fixture
def box(tmp_path) -> Box:
    return make_box(tmp_path)


def _snapshot(path: Path) -> bytes | None:
    return path.read_bytes() if path.exists() else None


@pytest.mark.parametrize(("template", "target", "live", "setup"), WRITES)
def test_writing_spelling_is_held(
    box: Box, template: str, target: str | None, live: bool, setup: str
):
    if setup:
        SETUPS[setup](box)
    line = box.fill(template)
    path = None if target is None else box.root / box.fill(target)
    before = None if path is None else _snapshot(path)
    for mode in ASKING_MODES:
        decision = box.decide(line, mode)
        assert decision.action != "allow", (mode, decision.reason)
        if path is not None:
            box.gate(line, mode)
            assert _snapshot(path) == before, mode
    if live:
        assert path is not None
        box.run(line)
        assert _snapshot(path) != before, "the spelling must really write"


HARMLESS = [
    pytest.param("cut -d' ' -f1 --output-delimiter=: README.md", id="cut-output-delimiter"),
    pytest.param("cut -d' ' -f1 --output-d=: README.md", id="cut-output-delimiter-abbrev"),
    pytest.param("df --output=source .", id="df-output-is-a-field-list"),
    pytest.param("git log -p --output-indicator-new=+ -1", id="git-output-indicator"),
    pytest.param("git log -p --no-ext-diff --no-textconv -1", id="git-no-ext-diff"),
    pytest.param("git diff --text", id="git-diff-text-is-not-textconv"),
    pytest.param("sort -k2 -t, README.md", id="sort-key-separator"),
    pytest.param("git grep -n foo", id="git-grep"),
    pytest.param("file README.md", id="file"),
    pytest.param("echo hi > /dev/null 2>&1", id="redirect-to-dev-null"),
]


@pytest.mark.parametrize("line", HARMLESS)
def test_reading_spellings_still_run_without_a_prompt(box: Box, line: str):
    files = {p: p.read_bytes() for p in box.root.rglob("*") if p.is_file()}
    for mode in ASKING_MODES:
        decision = box.decide(line, mode)
        assert decision.action == "allow", (mode, decision.reason)
        box.gate(line, mode)
    assert {p: p.read_bytes() for p in box.root.rglob("*") if p.is_file()} == files
    assert not os.path.exists(box.outside / "m")


def test_every_built_in_rule_has_a_reach_table():
    """A built-in rule without a table would ask for everything (fail closed); none lacks one."""
    from core.policy import DEFAULT_RULES
    from core.policy.options import TOOLS
    from core.policy.reach import _NO_PATHS

    programs = {rule.tokens[0] for rule in DEFAULT_RULES}
    assert programs - set(TOOLS) - _NO_PATHS <= {"git", "find"}
