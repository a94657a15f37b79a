"""Attack class: policy blind spots. The policy must judge what a command can reach.

Each case reaches ``target.txt`` in a folder beside the workspace (it holds a marker)
through a spelling the policy once could not see through: variable and tilde expansion,
a ``cd`` earlier in the line, input redirections, ``git -C``/``--git-dir``, wrappers
(``env -C``, ``nice``, ``timeout``, ``xargs``), inner shells (``bash -c``, ``eval``) and
values only known at run time. The line is first run unjudged, to prove it really reaches
the marker; the promise is that, through the policy gate in *ask* and *read-only* modes,
the marker is absent from what the agent gets. Ordinary commands must still run without
a prompt: a policy that asks for everything is no policy.
"""

from __future__ import annotations

import pytest

from tests.security._policy_box import ASKING_MODES, MARKER, Box, make_box

LISTING = "target.txt"  # what a directory listing of the outside folder leaks


def case(line: str, leak: str | None = MARKER, *, setup: str = "", id: str):
    """``leak``: text the unjudged run prints (``None``: judge only, never run)."""
    return pytest.param(line, leak, setup, id=id)


REACH = [
    # expansion
    case("cat {outside}/target.txt", id="absolute"),
    case("cat ../outside/target.txt", id="dotdot"),
    case("cat $HOME/../outside/target.txt", id="home-dotdot"),
    case("cat ~/../outside/target.txt", id="tilde-dotdot"),
    case("T={outside}; cat $T/target.txt", id="variable-assigned-in-line"),
    case("for d in {outside}; do cat $d/target.txt; done", id="for-loop-variable"),
    case("HOME={outside}; cat ~/target.txt", id="home-reassigned"),
    case("cat ../outs*/target.txt", id="glob-dir-outside"),
    case("cat ../{outside,none}/target.txt", id="brace-expansion"),
    case("cat $'\\x2e\\x2e'/outside/target.txt", id="ansi-c-escapes"),
    case('cat "$(printf ..)"/outside/target.txt', id="command-substitution"),
    case("cat `echo ..`/outside/target.txt", id="backticks"),
    case("cat $(dirname $PWD)/outside/target.txt", id="substitution-of-pwd"),
    case("cat ${UNSET:-..}/outside/target.txt", id="parameter-default"),
    case("cat $RANDOM", None, id="random"),
    case("cat ~nobody/x", None, id="tilde-user"),
    case("cat $UNKNOWN/x", None, id="unknown-variable"),
    case("cd {outside}; cd -; cat $OLDPWD/target.txt", id="oldpwd"),
    case("cd {outside} && cd - && cat ~-/target.txt", id="tilde-minus"),
    # cd tracking
    case("cd ../outside && cat target.txt", id="cd-and"),
    case("cd ..; cat outside/target.txt", id="cd-semicolon"),
    case("cd {outside}\ncat target.txt", id="cd-newline"),
    case("cd src && cd ../.. && cat outside/target.txt", id="cd-chain"),
    case("cd -P .. && cat outside/target.txt", id="cd-physical"),
    case("cd -- .. && cat outside/target.txt", id="cd-double-dash"),
    case("builtin cd .. && cat outside/target.txt", id="builtin-cd"),
    case("if true; then cd ..; fi; cat outside/target.txt", id="cd-in-if"),
    case("(cd .. && cat outside/target.txt)", id="cd-in-subshell"),
    case("true && cd .. ; cat outside/target.txt", id="cd-after-and"),
    case("cd nowhere ; cat ../outside/target.txt", id="failed-cd-keeps-cwd"),
    case("CDPATH=.. cd outside && cat target.txt", id="cdpath-prefix"),
    case("CDPATH=..; cd outside; cat target.txt", id="cdpath-assignment"),
    case('cd "$HOME/../outside" && cat target.txt', id="cd-quoted-home"),
    case("pushd .. && cat outside/target.txt", id="pushd"),
    case("cd .. && ls outside", LISTING, id="cd-then-ls"),
    case("cd .. && grep -r OUTSIDE", id="cd-then-grep-implicit-cwd"),
    # input redirections
    case("cat < ../outside/target.txt", id="redirect-in"),
    case("cat 0< {outside}/target.txt", id="redirect-fd0"),
    case("tr -d x < $HOME/../outside/target.txt", id="redirect-expanded"),
    case("(cat) < ../outside/target.txt", id="subshell-redirect"),
    case("while read -r l; do echo $l; done < ../outside/target.txt", id="loop-redirect"),
    case("cd .. && cat < outside/target.txt", id="cd-then-redirect"),
    case("tr '\\0' '\\n' < /proc/$PPID/environ", None, id="proc-ppid-environ"),
    case("cat /proc/self/environ", None, id="proc-self-environ"),
    # git: where it runs, which repo it reads
    case("git -C {outside} log -p", setup="outside-repo", id="git-C-outside"),
    case("git -C ../outside show HEAD:target.txt", setup="outside-repo", id="git-C-relative"),
    case(
        "git -C src -C ../../outside show HEAD:target.txt",
        setup="outside-repo",
        id="git-C-cumulative",
    ),
    case(
        "git --git-dir={outside}/.git show HEAD:target.txt",
        setup="outside-repo",
        id="git-dir-option",
    ),
    case(
        "git --work-tree={outside} --git-dir={outside}/.git diff HEAD~0 --stat",
        None,
        setup="outside-repo",
        id="git-work-tree",
    ),
    case("GIT_DIR={outside}/.git git show HEAD:target.txt", setup="outside-repo", id="git-dir-env"),
    case("cd ../outside && git log -p", setup="outside-repo", id="cd-then-git"),
    case("env -C ../outside git log -p", setup="outside-repo", id="env-C-git"),
    case("git blame --contents ../outside/target.txt README.md", id="git-blame-contents"),
    case("git diff --no-index ../outside/target.txt README.md", id="git-diff-no-index"),
    case("git ls-files --exclude-from=../outside/target.txt", None, id="git-ls-files-X"),
    case("git grep -f ../outside/target.txt", None, id="git-grep-f"),
    case("git log", None, setup="no-repo", id="git-without-repo-searches-up"),
    # find, xargs, env, nice, timeout and friends
    case("find ../outside", LISTING, id="find-start-outside"),
    case("find", LISTING, setup="cd-outside", id="find-implicit-start"),
    case("find -L . -name x", None, id="find-L"),
    case("find . -follow", None, id="find-follow"),
    case("find . -newer ../outside/target.txt", None, id="find-newer"),
    case("find . -files0-from list", None, id="find-files0-from"),
    case("find ../outside -name target.txt -exec cat {} +", id="find-exec-cat"),
    case("echo ../outside/target.txt | xargs cat", id="xargs"),
    case("find ../outside -name target.txt | xargs cat", id="find-xargs"),
    case("xargs -a ../outside/target.txt echo", id="xargs-a"),
    case("xargs --arg-file=../outside/target.txt echo", id="xargs-arg-file"),
    case("env -C .. cat outside/target.txt", id="env-C"),
    case("env --chdir=.. cat outside/target.txt", id="env-chdir"),
    case("env --chd .. cat outside/target.txt", id="env-chdir-abbrev-separate"),
    case("env -iC.. cat outside/target.txt", id="env-bundled-iC"),
    case("env -i cat ../outside/target.txt", id="env-i"),
    case("nice cat ../outside/target.txt", id="nice"),
    case("nice --adj 5 cat ../outside/target.txt", id="nice-adjustment-abbrev"),
    case("timeout 5 cat ../outside/target.txt", id="timeout"),
    case("timeout --sig=KILL 5 cat ../outside/target.txt", id="timeout-signal-abbrev"),
    case("timeout -s KILL 5 cat ../outside/target.txt", id="timeout-signal"),
    case("nohup cat ../outside/target.txt", id="nohup"),
    case("stdbuf -oL cat ../outside/target.txt", id="stdbuf"),
    case("stdbuf --output L cat ../outside/target.txt", id="stdbuf-long-separate"),
    case("command -p cat ../outside/target.txt", id="command-p"),
    case("exec cat ../outside/target.txt", id="exec"),
    case("time cat ../outside/target.txt", id="time-keyword"),
    case("/usr/bin/time -f %e cat ../outside/target.txt", id="gnu-time"),
    # inner shells
    case("bash -c 'cd .. && cat outside/target.txt'", id="bash-c-cd"),
    case('sh -c "cat ../outside/target.txt"', id="sh-c"),
    case("bash -lc 'cat ~/../outside/target.txt'", id="bash-lc-tilde"),
    case("bash -c 'cat \"$1\"' _ ../outside/target.txt", id="bash-c-positional"),
    case("eval cat ../outside/target.txt", id="eval"),
    case("eval 'cd ..; cat outside/target.txt'", id="eval-cd"),
    case("source ../outside/target.txt", None, id="source-runs-a-file"),
    case(". ./README.md", None, id="dot-runs-a-file"),
    # readers' file options
    case("grep -f ../outside/target.txt -r .", None, id="grep-f"),
    case("grep --file=../outside/target.txt README.md", None, id="grep-file"),
    case("grep -R OUTSIDE .", None, id="grep-R-follows-symlinks"),
    case("grep --exclude-from=../outside/target.txt x README.md", None, id="grep-exclude-from"),
    case("diff --to-file=../outside/target.txt README.md", id="diff-to-file"),
    case("diff -r . ../outside", None, id="diff-recursive"),
    case("du --files0-from=list", None, id="du-files0-from"),
    case("wc --files0-from=list", None, id="wc-files0-from"),
    case("sort --files0-from=list", None, id="sort-files0-from"),
    case("sort --random-source=../outside/target.txt -R README.md", None, id="sort-random-source"),
    case("md5sum -c ../outside/target.txt", None, id="md5sum-check"),
    case("jq -n --slurpfile k ../outside/target.txt '$k'", None, id="jq-slurpfile"),
    case("jq -f prog.jq data.json", None, id="jq-from-file"),
    case("jq -n 'import \"x\" as $x; $x'", None, id="jq-import"),
    case("jq -L .. -n 1", None, id="jq-library-path"),
    case("file -m ../outside/target.txt README.md", None, id="file-magic-file"),
    case("file -f ../outside/target.txt", None, id="file-files-from"),
    case("head -c 100 ../outside/target.txt", id="head-c"),
    case("tail -n +1 -- ../outside/target.txt", id="tail-double-dash"),
    case("cmp README.md ../outside/target.txt", None, id="cmp"),
    case("stat ../outside/target.txt", None, id="stat"),
    case("ls ../outside", LISTING, id="ls"),
    case("ls --quoting=literal ../outside", LISTING, id="ls-abbrev-option"),
    case("du -a ../outside", LISTING, id="du"),
    case("realpath ../outside/target.txt", LISTING, id="realpath"),
]


def _outside_repo(box: Box) -> None:
    import subprocess

    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "x"]):
        subprocess.run(["git", *args], cwd=box.outside, env=box.env, check=True)


def _no_repo(box: Box) -> None:
    import shutil

    shutil.rmtree(box.root / ".git")


SETUPS = {"outside-repo": _outside_repo, "no-repo": _no_repo}


@pytest.fixture
def box(tmp_path) -> Box:
    return make_box(tmp_path)


@pytest.mark.parametrize(("template", "leak", "setup"), REACH)
def test_reach_outside_the_workspace_is_held(box: Box, template: str, leak: str | None, setup):
    if setup in SETUPS:
        SETUPS[setup](box)
    line = box.fill(template)
    if setup == "cd-outside":
        line = f"cd {box.outside} && {line}"
    if leak is not None:
        assert leak in box.run(line), "the spelling must really reach the outside folder"
    for mode in ASKING_MODES:
        decision = box.decide(line, mode)
        assert decision.action != "allow", (mode, decision.reason)
        if leak is not None:
            assert leak not in box.gate(line, mode), mode


ORDINARY = [
    "ls src", "git diff", "git log -p", "cat README.md", "grep -rn foo src", "cd src && ls",
    "git status", "cd src && cat ../README.md", "cat ./README.md", "cat src/*.py",
    "wc -l src/*.py", "head -n 1 README.md", "git show HEAD:README.md", "git log --oneline -5",
    "git log main..HEAD", "git blame README.md", "git grep -n foo", "find . -name '*.py'",
    "jq . data.json", "jq -n '1+1'", "diff README.md src/main.py", "echo $HOME", "echo ~",
    "pwd", "ls -la", "cat $PWD/README.md", "cat ~+/README.md", "git -C src log -1",
    "cd src && git status", "sort README.md | head -1", "cat README.md | grep foo",
    "git diff | grep x", "cat /dev/null", "git rev-parse HEAD", "git ls-files",
    "stat README.md", "du -sh src", "df -h /", "md5sum README.md", "realpath README.md",
    "tr a b < README.md", "cat < README.md", "cat <<EOF\nhi\nEOF", "cd \"$PWD/src\" && ls",
    "grep -c foo <<< hello", "git log -p -- src", "git diff HEAD -- README.md",
    "find src -type f -newer README.md", "cat {root}/README.md", "ls ~/../ws",
]  # fmt: skip


@pytest.mark.parametrize("template", ORDINARY)
def test_ordinary_reads_run_without_a_prompt(box: Box, template: str):
    line = template.replace("{root}", str(box.root))
    if template == "ls ~/../ws":
        assert box.root.name == "ws"
    for mode in ASKING_MODES:
        decision = box.decide(line, mode)
        assert decision.action == "allow", (mode, decision.reason)
