"""Attack class: commands that lose the user's work. The guard judges effects, not spellings.

Each case is a way to discard content HEAD cannot bring back (uncommitted or staged changes,
untracked or ignored files, stash entries, branches, refs): path checkouts spelled as a
branch, restores, any reset, every ``git clean`` spelling, ref and stash deletions, ``rm``
of a single file, truncation, moves and copies over existing files, ``find -delete``,
``xargs rm``, aliases, inline interpreter code, ``bash -c``/``eval``. The workspace is a real
repository holding every kind of content. The promise: the command asks in **every** mode,
full access included, with a reason that says what could be lost, and the decision asks for
a checkpoint; run through the gate (which only runs what is allowed), the working tree,
index and stash are unchanged byte for byte. Where the spelling is live on this machine,
running it unjudged afterwards proves it really destroys something.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from core.policy import command_rule, decide_command, suggest_rule, suggest_rules
from tests.security._policy_box import Box, make_box

MODES = ("read-only", "ask", "auto", "full")


def _repo(tmp_path: Path) -> Box:
    """A repo with uncommitted, staged-only, untracked, ignored and stashed content, and an
    unmerged branch ``feature``."""
    box = make_box(tmp_path)
    root = box.root
    (root / ".gitignore").write_text(".env\nbuild/\n")
    box.git("add", ".gitignore")
    box.git("commit", "-qm", "ignore")
    box.git("branch", "feature")
    box.git("checkout", "-q", "feature")
    (root / "feature.txt").write_text("unmerged work\n")
    box.git("add", "feature.txt")
    box.git("commit", "-qm", "feature")
    box.git("checkout", "-q", "main")
    (root / "README.md").write_text("stashed change\n")
    box.git("stash", "-q")
    (root / "data.json").write_text('{"a": 2}\n')
    box.git("add", "data.json")
    (root / "data.json").write_text('{"a": 3}\n')  # {"a": 2} now lives only in the index
    (root / "src" / "main.py").write_text("print('uncommitted')\n")
    (root / "notes.txt").write_text("untracked notes\n")
    (root / "src" / "notes.txt").write_text("other untracked notes\n")
    (root / ".env").write_text("TOKEN=ignored-but-precious\n")
    return box


def _state(box: Box) -> dict[str, bytes]:
    """Every file of the working tree, the index, the refs and the stash, as bytes."""
    out = {
        str(p.relative_to(box.root)): p.read_bytes()
        for p in sorted(box.root.rglob("*"))
        if p.is_file() and ".git" not in p.relative_to(box.root).parts
    }
    index = box.root / ".git" / "index"
    out[".git/index"] = index.read_bytes() if index.exists() else b"(no index)"
    refs = subprocess.run(
        ["git", "for-each-ref", "--format=%(refname) %(objectname)"],
        cwd=box.root,
        env=box.env,
        capture_output=True,
    ).stdout
    stash = subprocess.run(
        ["git", "stash", "list"], cwd=box.root, env=box.env, capture_output=True
    ).stdout
    out["refs"], out["stash"] = refs, stash
    return out


@pytest.fixture
def repo(tmp_path: Path) -> Box:
    return _repo(tmp_path)


# (id naming the technique, command, words the reason must hold, live on this fixture)
CASES = [
    ("checkout-file-as-branch", "git checkout src/main.py", "src/main.py", True),
    ("checkout-folder-as-branch", "git checkout src", "changes to src", True),
    ("checkout-dot", "git checkout .", "every file", True),
    ("checkout-dashdash", "git checkout -- src/main.py", "src/main.py", True),
    ("checkout-head-dashdash", "git checkout HEAD -- data.json", "data.json", True),
    (
        "checkout-pathspec-from-file",
        "git checkout --pathspec-from-file=list.txt",
        "pathspec",
        False,
    ),
    ("checkout-force-branch", "git checkout -f feature", "uncommitted", True),
    ("checkout-long-force", "git checkout --force feature", "uncommitted", True),
    ("checkout-patch", "git checkout -p", "uncommitted", False),
    ("switch-force", "git switch -f feature", "uncommitted", True),
    ("switch-discard-changes", "git switch --discard-changes feature", "uncommitted", True),
    ("restore-file", "git restore src/main.py", "src/main.py", True),
    ("restore-staged", "git restore --staged data.json", "staged-only", True),
    ("restore-S", "git restore -S data.json", "staged-only", True),
    ("restore-worktree", "git restore --worktree data.json", "data.json", True),
    ("restore-source", "git restore --source HEAD~1 README.md", "README.md", False),
    ("reset-bare", "git reset", "staged-only", True),
    ("reset-path", "git reset data.json", "data.json", True),
    ("reset-hard", "git reset --hard", "uncommitted", True),
    ("reset-merge", "git reset --merge", "uncommitted", False),
    ("reset-keep", "git reset --keep HEAD", "uncommitted", False),
    ("reset-mixed", "git reset --mixed HEAD", "staged", True),
    ("read-tree-reset", "git read-tree -u --reset HEAD", "working tree", True),
    ("read-tree-index", "git read-tree HEAD", "index", True),
    ("checkout-index-force-all", "git checkout-index -f -a", "working tree", True),
    ("update-ref-delete-stash", "git update-ref -d refs/stash", "refs/stash", True),
    (
        "update-ref-delete-branch",
        "git update-ref -d refs/heads/feature",
        "refs/heads/feature",
        True,
    ),
    ("update-ref-stdin", "echo 'delete refs/stash' | git update-ref --stdin", "refs", True),
    ("stash-drop", "git stash drop", "stash", True),
    ("stash-clear", "git stash clear", "every stash entry", True),
    ("stash-pop", "git stash pop", "stash", True),
    ("branch-D", "git branch -D feature", "feature", True),
    ("branch-d-f", "git branch -d -f feature", "feature", True),
    ("branch-delete-force", "git branch --delete --force feature", "feature", True),
    ("worktree-remove-force", "git worktree remove --force ../wt", "worktree", False),
    ("clean-f", "git clean -f", "untracked", True),
    ("clean-fd", "git clean -fd", "untracked", True),
    ("clean-fdx", "git clean -fdx", "ignored", True),
    ("clean-xdf", "git clean -xdf", "ignored", True),
    ("clean-force-long", "git clean --force", "untracked", True),
    ("clean-ffx", "git clean -ffx", "ignored", True),
    ("clean-X", "git clean -fX", "ignored", True),
    ("clean-exclude", "git clean -fdx -e notes.txt", "ignored", True),
    ("gc-prune-now", "git gc --prune=now", "prunes", False),
    ("reflog-expire", "git reflog expire --expire=now --all", "reflog", False),
    ("filter-branch", "git filter-branch --tree-filter 'rm -f README.md' HEAD", "history", False),
    ("git-rm", "git rm -q --cached notes.txt README.md", "README.md", False),
    ("git-mv-force", "git mv -f README.md data.json", "data.json", False),
    ("am-abort", "git am --abort", "abort", False),
    ("find-exec-rm", "find src -type f -exec rm {} +", "find selects", True),
    ("find-delete", "find . -name '*.txt' -not -path './.git/*' -delete", "deletes", True),
    ("xargs-rm", "git ls-files -o | xargs rm", "input", True),
    ("git-config-alias", "git -c alias.x='!rm -rf src' x", "src", True),
    ("shell-alias-same-line", "alias x='rm -rf src'; x", "src", False),
    ("rm-dotenv", "rm .env", ".env", True),
    ("rm-f", "rm -f notes.txt", "notes.txt", True),
    ("rm-rf-src", "rm -rf src", "src", True),
    ("rm-rf-git", "rm -rf .git", ".git", True),
    ("unlink", "unlink notes.txt", "notes.txt", True),
    ("colon-truncate", ": > src/main.py", "src/main.py", True),
    ("bare-truncate", "> notes.txt", "notes.txt", True),
    ("truncate-cmd", "truncate -s 0 .env", ".env", True),
    ("cp-dev-null", "cp /dev/null .env", ".env", True),
    ("tee-over-file", "echo x | tee notes.txt", "notes.txt", True),
    ("redirect-over-file", "echo x > README.md", "README.md", True),
    ("mv-over-file", "mv README.md src/main.py", "src/main.py", True),
    (
        "mv-into-dir-over-file",
        "mv src/notes.txt .",
        "notes.txt",
        True,
    ),
    ("cp-force", "cp -f data.json .env", ".env", True),
    ("install-over-file", "install -m 644 data.json notes.txt", "notes.txt", True),
    ("rsync-delete", "mkdir -p e && rsync -a --delete e/ src/", "rsync --delete", False),
    ("python-rmtree", "python3 -c 'import shutil; shutil.rmtree(\"src\")'", "rmtree", True),
    ("python-heredoc", "python3 - <<EOF\nimport os\nos.remove('.env')\nEOF\n", "remove", True),
    ("perl-unlink", "perl -e 'unlink \".env\"'", "unlink", True),
    ("node-rmsync", 'node -e \'require("fs").rmSync("src",{recursive:true})\'', "rmSync", False),
    ("ruby-rm-rf", 'ruby -e \'require "fileutils"; FileUtils.rm_rf("src")\'', "rm_rf", False),
    ("bash-c-inner", "bash -c 'git checkout .'", "every file", True),
    ("eval-literal", "eval 'rm -f notes.txt'", "notes.txt", True),
    ("dd-of", "dd if=/dev/zero of=data.json bs=1 count=1", "data.json", True),
    ("sudo-wrapped", "sudo rm .env", ".env", False),
    ("substitution", "echo $(git stash clear)", "stash", True),
]

# Cannot be analysed, so possibly destructive: asks in every mode but sandboxed auto,
# where it runs only after a checkpoint of everything it could reach.
POSSIBLY = [
    ("python-inline-unknown", "python3 -c 'print(1)'"),
    ("node-inline-unknown", "node -e 'console.log(1)'"),
    ("unknown-git-subcommand", "git co src"),
    ("computed-program", "$CMD src"),
    ("eval-dynamic", 'eval "$X"'),
    ("interpreter-on-pipe", "cat x.py | python3"),
    ("unparsable-line", "rm -rf src 'unbalanced"),
    ("heredoc-quoted-delimiter", "python3 - <<'EOF'\nprint(1)\nEOF\n"),
]

SAFE = [
    ("checkout-new-branch", "git checkout -b new"),
    ("checkout-branch-not-path", "git checkout feature"),
    ("switch-branch", "git switch feature"),
    ("stash-push", "git stash"),
    ("stash-list", "git stash list"),
    ("test-bracket", "[ -f notes.txt ] && echo yes"),
    ("if-test-bracket", "if [ -d src ]; then echo dir; fi"),
    ("rm-build-dir", "rm -rf node_modules"),
    ("mv-to-new-name", "mv notes.txt new-notes.txt"),
    ("cp-to-new-name", "cp notes.txt new-notes.txt"),
    ("redirect-new-file", "echo x > new-file"),
    ("append", "echo x >> notes.txt"),
    ("reset-soft", "git reset --soft HEAD~1"),
    ("clean-dry-run", "git clean -n"),
    ("clean-dry-run-long", "git clean --dry-run -dx"),
]


def _ids(cases):
    return [c[0] for c in cases]


@pytest.mark.parametrize(("technique", "line", "says", "live"), CASES, ids=_ids(CASES))
def test_destructive_command_asks_in_every_mode(
    repo: Box, technique: str, line: str, says: str, live: bool
):
    before = _state(repo)
    for mode in MODES:
        d = repo.decide(line, mode)
        assert d.action == "ask", (technique, mode, d.reason)
        assert d.rule_id == "destructive-guard", (technique, mode, d.reason)
        assert "is destructive: it" in d.reason and says in d.reason, (technique, d.reason)
        assert d.checkpoint_required, (technique, mode)
        repo.gate(line, mode)
    assert _state(repo) == before, technique
    if live:
        repo.run(line)
        assert _state(repo) != before, f"{technique}: the spelling is not live here"


@pytest.mark.parametrize(("technique", "line", "says", "live"), CASES, ids=_ids(CASES))
def test_destructive_command_asks_even_with_a_sandbox(
    repo: Box, technique: str, line: str, says: str, live: bool
):
    for mode in ("auto", "full"):
        d = decide_command(line, mode, sandbox_available=True, workspace=repo.root)
        assert d.action == "ask" and d.checkpoint_required, (technique, mode, d.reason)


@pytest.mark.parametrize(("technique", "line"), POSSIBLY, ids=_ids(POSSIBLY))
def test_what_cannot_be_analysed_asks_or_runs_after_a_checkpoint(
    repo: Box, technique: str, line: str
):
    for mode in MODES:
        d = repo.decide(line, mode)
        assert d.action == "ask", (technique, mode, d.reason)
        assert d.checkpoint_required and d.removes_unknown, (technique, mode)
    sandboxed = decide_command(line, "auto", sandbox_available=True, workspace=repo.root)
    assert sandboxed.checkpoint_required and sandboxed.removes_unknown, technique
    if sandboxed.action == "allow":
        assert "checkpoint first" in sandboxed.reason


@pytest.mark.parametrize(("technique", "line"), SAFE, ids=_ids(SAFE))
def test_recoverable_commands_are_not_destructive(repo: Box, technique: str, line: str):
    d = decide_command(line, "full", sandbox_available=True, workspace=repo.root)
    assert d.action == "allow", (technique, d.reason)
    assert not d.checkpoint_required, technique
    assert all(s.destructive is None for s in d.segments), technique


def test_full_mode_no_longer_runs_the_issue_line(repo: Box):
    line = "git reset --hard && git clean -fdx && git stash clear"
    before = _state(repo)
    d = repo.decide(line, "full")
    assert d.action == "ask" and d.checkpoint_required
    assert d.git_clean == (("-fdx",),)
    assert d.refs == ("refs/stash",)
    assert repo.gate(line, "full") == "" and _state(repo) == before


def test_rm_names_its_targets_for_the_checkpoint(repo: Box):
    d = repo.decide("rm .env notes.txt", "auto")
    assert d.removes == (str(repo.root / ".env"), str(repo.root / "notes.txt"))
    assert not d.removes_unknown
    assert repo.decide("git ls-files -o | xargs rm", "auto").removes_unknown


def test_always_allow_for_a_destructive_command_is_the_exact_command(repo: Box):
    rule = suggest_rule("git clean -fdx", workspace=repo.root)
    assert rule.pattern == "git clean -fdx" and not rule.any_args
    assert rule.description == "exactly `git clean -fdx` (no further arguments)"
    assert [r.pattern for r in suggest_rules("rm .env && git status", workspace=repo.root)] == [
        "rm .env",
        "git status *",
    ]
    # an allow rule for the exact command: no prompt, still a checkpoint, any mode
    for mode in MODES:
        d = decide_command(
            "git clean -fdx", mode, [rule], sandbox_available=False, workspace=repo.root
        )
        assert d.action == "allow" and d.checkpoint_required, mode
        assert "names this exact command" in d.reason
    # … and nothing else
    for other in ("git clean -fdx src", "git clean -ffdx", "git -C .. clean -fdx"):
        d = decide_command(other, "full", [rule], sandbox_available=False, workspace=repo.root)
        assert d.action == "ask", other


@pytest.mark.parametrize(
    "line",
    ["find src -type f -exec rm {} +", "git ls-files -o | xargs rm", "rm -rf *"],
    ids=["find-exec-hidden-args", "xargs-hidden-args", "glob-star-word"],
)
def test_no_exact_rule_is_offered_when_the_command_is_not_exact(repo: Box, line: str):
    for rule in suggest_rules(line, workspace=repo.root):
        assert rule.pattern.split()[0] not in ("rm", "xargs"), rule.pattern


def test_a_broad_user_rule_does_not_vouch_for_a_destructive_command(repo: Box):
    rules = [command_rule("rm *"), command_rule("git *"), command_rule("git reset")]
    for line in ("rm .env", "git reset", "git checkout src/main.py"):
        for mode in MODES:
            d = decide_command(line, mode, rules, sandbox_available=True, workspace=repo.root)
            assert d.action == ("allow" if line == "git reset" else "ask"), (line, mode)
            assert d.checkpoint_required
