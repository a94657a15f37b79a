"""Splitting shell lines into simple commands (core.policy.command_parser)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.policy import parse_command


def argvs(command: str | list[str]) -> list[tuple[str, ...]]:
    return [s.argv for s in parse_command(command).segments]


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("git diff | grep x", [("git", "diff"), ("grep", "x")]),
        ("git diff; rm -rf /", [("git", "diff"), ("rm", "-rf", "/")]),
        ("a && b || c", [("a",), ("b",), ("c",)]),
        ("ls &\npwd", [("ls",), ("pwd",)]),
        ("(cd sub && make)", [("cd", "sub"), ("make",)]),
        ("{ ls; pwd; }", [("ls",), ("pwd",)]),
        ("if true; then ls; fi", [("true",), ("ls",)]),
        ("for f in a b; do cat $f; done", [("cat", "$f")]),
        ("while false; do ls; done", [("false",), ("ls",)]),
        ("echo 'a;b' \"c|d\"", [("echo", "a;b", "c|d")]),
        ("ls # ; rm -rf /", [("ls",)]),
        ("ls \\\n  -l", [("ls", "-l")]),
    ],
)
def test_compound_lines_split_into_simple_commands(line: str, expected: list[tuple[str, ...]]):
    parsed = parse_command(line)
    assert parsed.ok, parsed.error
    assert argvs(line) == expected


@pytest.mark.parametrize(
    ("line", "inner", "context"),
    [
        ("echo $(rm -rf ~)", ("rm", "-rf", "~"), "command substitution"),
        ('echo "a $(rm x) b"', ("rm", "x"), "command substitution"),
        ("echo `rm x`", ("rm", "x"), "command substitution"),
        ('echo "$(echo `rm y`)"', ("rm", "y"), "command substitution"),
        ("x=$(rm z)", ("rm", "z"), "command substitution"),
        ("diff <(ls a) <(rm b)", ("rm", "b"), "process substitution"),
        ("echo >(rm c)", ("rm", "c"), "process substitution"),
        ("ls > $(rm d)", ("rm", "d"), "command substitution"),
        ("for i in $(rm e); do :; done", ("rm", "e"), "command substitution"),
    ],
)
def test_substitutions_are_segments_of_their_own(line: str, inner: tuple[str, ...], context: str):
    segments = parse_command(line).segments
    found = [s for s in segments if s.argv == inner]
    assert found, segments
    assert found[0].context == context


def test_env_assignments_are_stripped_and_recorded():
    (seg,) = parse_command("FOO=1 BAR=two git diff --stat").segments
    assert seg.argv == ("git", "diff", "--stat")
    assert seg.env == ("FOO", "BAR")
    assert seg.unvetted == ()


def test_risky_env_assignment_is_flagged():
    (seg,) = parse_command("GIT_PAGER=evil git log").segments
    assert seg.argv == ("git", "log")
    assert seg.unvetted and "GIT_PAGER" in seg.unvetted[0]
    (bare,) = parse_command("PATH=.:$PATH").segments
    assert bare.argv == () and bare.unvetted


@pytest.mark.parametrize(
    ("line", "argv", "wrappers"),
    [
        ("sudo rm -rf /", ("rm", "-rf", "/"), ("sudo",)),
        ("sudo -u root -E apt-get install x", ("apt-get", "install", "x"), ("sudo",)),
        ("env -i A=1 B=2 make test", ("make", "test"), ("env",)),
        ("nohup python server.py", ("python", "server.py"), ("nohup",)),
        ("timeout 30 pytest -x", ("pytest", "-x"), ("timeout",)),
        ("timeout -s KILL -k 5 30 pytest", ("pytest",), ("timeout",)),
        ("time ls -l", ("ls", "-l"), ()),
        ("nice -n 10 make", ("make",), ("nice",)),
        ("nice -5 make", ("make",), ("nice",)),
        ("command git status", ("git", "status"), ("command",)),
        ("sudo timeout 5 nohup git push -f", ("git", "push", "-f"), ("sudo", "timeout", "nohup")),
        ("/usr/bin/sudo ls", ("ls",), ("sudo",)),
    ],
)
def test_wrappers_are_judged_as_the_inner_command(
    line: str, argv: tuple[str, ...], wrappers: tuple[str, ...]
):
    (seg,) = parse_command(line).segments
    assert seg.argv == argv
    assert seg.wrappers == wrappers
    assert seg.privileged == ("sudo" in wrappers)


def test_wrapper_without_command_is_a_plain_program():
    assert argvs("env") == [("env",)]
    assert argvs("sudo -l") == [("sudo", "-l")]
    assert argvs("command -v git") == [("command", "-v", "git")]
    (seg,) = parse_command("sudo -i").segments
    assert seg.opaque and seg.privileged


def test_env_inside_sudo_is_recorded():
    (seg,) = parse_command("sudo LD_PRELOAD=x.so ls").segments
    assert seg.argv == ("ls",) and seg.env == ("LD_PRELOAD",) and seg.unvetted


def test_shell_dash_c_and_eval_are_parsed_inside():
    assert argvs("bash -lc 'ls && rm -rf build'") == [("ls",), ("rm", "-rf", "build")]
    assert argvs("sh -e -o pipefail -c 'git status'") == [("git", "status")]
    assert argvs("eval 'git diff; rm x'") == [("git", "diff"), ("rm", "x")]
    (seg,) = parse_command('bash -c "$SCRIPT"').segments
    assert seg.opaque
    (seg,) = parse_command("sudo bash -c 'rm -rf /'").segments
    assert seg.argv == ("rm", "-rf", "/") and seg.privileged


def test_argv_lists_are_taken_literally_or_unwrapped_from_a_shell():
    assert argvs(["bash", "-lc", "ls; pwd"]) == [("ls",), ("pwd",)]
    (seg,) = parse_command(["rm", "-rf", "$(x)"]).segments
    assert seg.argv == ("rm", "-rf", "$(x)") and seg.opaque is None
    assert parse_command(["git", "diff"]).source == "git diff"


def test_xargs_and_find_exec_expose_the_command_they_run():
    segments = parse_command("ls | xargs rm -rf").segments
    assert segments[1].argv == ("rm", "-rf") and segments[1].hidden_args
    segments = parse_command("find . -name '*.pyc' -exec rm -f {} +").segments
    assert segments[0].argv[0] == "find"
    assert segments[1].argv == ("rm", "-f", "{}") and segments[1].context == "find -exec"


def test_git_global_options_are_dropped_and_config_overrides_flagged():
    (seg,) = parse_command("git -C sub --no-pager diff HEAD").segments
    assert seg.argv == ("git", "diff", "HEAD")
    assert seg.full_argv == ("git", "-C", "sub", "--no-pager", "diff", "HEAD")
    (seg,) = parse_command("git -c core.pager=evil log").segments
    assert seg.argv == ("git", "log") and seg.unvetted


@pytest.mark.parametrize(
    ("line", "writes"),
    [
        ("echo x > out.txt", ("out.txt",)),
        ("echo x >> log 2>&1", ("log",)),
        ("make &> build.log", ("build.log",)),
        ("ls > /dev/null 2>/dev/null", ()),
        ("cat < in.txt", ()),
        ("ls | tee a.txt -a b.txt", ("a.txt", "b.txt")),
        ("(ls; pwd) > both.txt", ("both.txt",)),
        ("/usr/bin/time -o t.txt ls", ("t.txt",)),
    ],
)
def test_output_redirections_count_as_writes(line: str, writes: tuple[str, ...]):
    segments = parse_command(line).segments
    seen = tuple(dict.fromkeys(w for s in segments for w in s.writes))
    assert seen == writes


@pytest.mark.parametrize(
    "line",
    [
        "echo 'unterminated",
        "git diff && ",
        "case x in a) ls;; esac",
        "[[ -f x ]] && ls",
        "echo $((1 + 2))",
        "cat <<'EOF'\nhi\nEOF\n",
        "cat <<EOF\n$(rm -rf ~)\nEOF\n",
        "echo ${x:-$(rm y)}",
        "a=(1 2 3)",
        "coproc ls",
    ],
)
def test_unparsable_lines_report_an_error_and_a_rough_split(line: str):
    parsed = parse_command(line)
    assert not parsed.ok and parsed.error
    assert all(s.context == "unparsed" for s in parsed.segments)


def test_rough_split_still_sees_dangerous_commands():
    parsed = parse_command("echo 'oops; rm -rf /")
    assert not parsed.ok
    assert ("rm", "-rf", "/") in [s.argv for s in parsed.segments]


def test_computed_program_names_are_opaque():
    for line in ("$CMD -rf x", "$(which rm) -rf x", "{rm,-rf,x}", "r* x"):
        segments = parse_command(line).segments
        assert any(s.opaque for s in segments), line


def test_empty_and_comment_only_lines_have_no_segments():
    assert parse_command("").segments == ()
    assert parse_command("   ").segments == ()
    assert parse_command("# just a comment").segments == ()


def test_segment_text_is_the_source_text():
    segs = parse_command("git diff --stat | grep -v foo > out").segments
    assert [s.text for s in segs] == ["git diff --stat", "grep -v foo > out"]


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab $()`'\";|&<>{}[]*\\\n=-#~")), max_size=40))
def test_parser_never_raises(line: str):
    parsed = parse_command(line)
    assert isinstance(parsed.segments, tuple)


def test_bashlex_traps_are_refused_not_parsed():
    # bashlex 0.18 loops forever, eating memory, on an unclosed ``${`` (found by fuzzing)
    for line in ("'${'{", "'${'=", "echo '${' | cat"):
        parsed = parse_command(line)
        assert parsed.error is not None and "${" in parsed.error


def test_closed_parameter_expansion_still_parses():
    parsed = parse_command('echo "${HOME}" && ls')
    assert parsed.error is None
    assert [s.argv[0] for s in parsed.segments] == ["echo", "ls"]
