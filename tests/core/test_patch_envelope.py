"""The ``*** Begin Patch`` envelope: parsing, conversion to operations, atomic application."""

from __future__ import annotations

import random

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from core.tools.editor import ApplyPatchOperation
from core.tools.patch_envelope import PatchAction, apply_actions, apply_patch_to_files, parse_patch
from core.tools.v4a import apply_diff
from tests.support.v4a_diffgen import make_v4a_diff

PATCH = """*** Begin Patch
*** Add File: docs/new.md
+# Title
+
+body
*** Update File: src/app.py
*** Move to: src/main.py
@@ def main():
-    print("hi")
+    print("hello")
*** Delete File: old.txt
*** Update File: README
@@
-v1
+v2
*** End of File
*** End Patch
"""

FILES = {
    "src/app.py": 'import sys\n\ndef main():\n    print("hi")\n',
    "old.txt": "bye\n",
    "README": "intro\nv1",
}


def _reader(files: dict[str, str]):
    return lambda path: files.get(path)


def test_parse_patch_actions_and_operations() -> None:
    actions = parse_patch(PATCH)
    assert actions == [
        PatchAction("create_file", "docs/new.md", "+# Title\n+\n+body\n+\n"),
        PatchAction(
            "update_file",
            "src/app.py",
            '@@ def main():\n-    print("hi")\n+    print("hello")\n',
            "src/main.py",
        ),
        PatchAction("delete_file", "old.txt"),
        PatchAction("update_file", "README", "@@\n-v1\n+v2\n*** End of File\n"),
    ]
    operation = actions[1].to_operation()
    assert isinstance(operation, ApplyPatchOperation)
    assert (operation.type, operation.path, operation.move_to) == (
        "update_file",
        "src/app.py",
        "src/main.py",
    )
    assert actions[2].to_wire() == {"type": "delete_file", "path": "old.txt"}
    assert actions[0].to_wire() == {
        "type": "create_file",
        "path": "docs/new.md",
        "diff": "+# Title\n+\n+body\n+\n",
    }
    # the operation diffs are what an editor feeds to apply_diff
    assert apply_diff("", actions[0].diff or "", mode="create") == "# Title\n\nbody\n"


def test_apply_patch_to_files_computes_every_change() -> None:
    changes = apply_patch_to_files(PATCH, _reader(FILES))
    assert changes == {
        "docs/new.md": "# Title\n\nbody\n",
        "src/app.py": None,
        "src/main.py": 'import sys\n\ndef main():\n    print("hello")\n',
        "old.txt": None,
        "README": "intro\nv2",
    }


@pytest.mark.parametrize(
    ("patch", "message"),
    [
        (
            "*** Begin Patch\n*** Update File: README\n@@\n-nope\n+x\n*** End Patch",
            "Update File 'README': Invalid Context 0:\nnope",
        ),
        (
            "*** Begin Patch\n*** Delete File: missing.txt\n*** End Patch",
            "Delete File 'missing.txt': file not found",
        ),
        (
            "*** Begin Patch\n*** Update File: missing.txt\n@@\n-a\n*** End Patch",
            "Update File 'missing.txt': file not found",
        ),
        (
            "*** Begin Patch\n*** Add File: old.txt\n+x\n*** End Patch",
            "Add File 'old.txt': file already exists",
        ),
        (
            "*** Begin Patch\n*** Update File: README\n*** Move to: old.txt\n@@\n-v1\n+v2\n*** End Patch",
            "Update File 'README': move target 'old.txt' already exists",
        ),
    ],
)
def test_action_errors_name_the_file(patch: str, message: str) -> None:
    with pytest.raises(ValueError) as info:
        apply_patch_to_files(patch, _reader(FILES))
    assert str(info.value) == message


def test_failing_second_action_changes_nothing() -> None:
    files = dict(FILES)
    written: dict[str, str | None] = {}
    patch = (
        "*** Begin Patch\n"
        "*** Update File: old.txt\n@@\n-bye\n+farewell\n"
        "*** Update File: README\n@@\n-not there\n+x\n"
        "*** End Patch"
    )
    with pytest.raises(ValueError, match="Update File 'README'"):
        written.update(apply_patch_to_files(patch, _reader(files)))
    assert written == {} and files == FILES


def test_later_actions_see_earlier_results() -> None:
    patch = (
        "*** Begin Patch\n"
        "*** Add File: a.txt\n+one\n"
        "*** Update File: a.txt\n@@\n-one\n+two\n"
        "*** Delete File: old.txt\n"
        "*** Add File: old.txt\n+again\n"
        "*** End Patch"
    )
    assert apply_patch_to_files(patch, _reader(FILES)) == {"a.txt": "two\n", "old.txt": "again\n"}


def test_overwrite_and_pure_rename() -> None:
    patch = "*** Begin Patch\n*** Add File: old.txt\n+new\n*** End Patch"
    assert apply_patch_to_files(patch, _reader(FILES), allow_overwrite=True) == {"old.txt": "new\n"}
    rename = "*** Begin Patch\n*** Update File: README\n*** Move to: docs/README\n*** End Patch"
    assert parse_patch(rename) == [PatchAction("update_file", "README", "", "docs/README")]
    assert apply_patch_to_files(rename, _reader(FILES)) == {
        "README": None,
        "docs/README": "intro\nv1",
    }


@pytest.mark.parametrize(
    "wrapped",
    [
        "\n\n*** Begin Patch\n*** Delete File: old.txt\n*** End Patch  \n\n",
        "```\n*** Begin Patch\n*** Delete File: old.txt\n*** End Patch\n```",
        "apply_patch <<'EOF'\n*** Begin Patch\n*** Delete File: old.txt\n*** End Patch\nEOF\n",
        "*** Begin Patch\r\n*** Delete File: old.txt\r\n\r\n*** End Patch\r\n",
    ],
)
def test_pasted_wrappers_are_accepted(wrapped: str) -> None:
    assert parse_patch(wrapped) == [PatchAction("delete_file", "old.txt")]


def test_crlf_patch_creates_crlf_file() -> None:
    patch = "*** Begin Patch\r\n*** Add File: w.txt\r\n+a\r\n+b\r\n*** End Patch\r\n"
    assert apply_patch_to_files(patch, _reader({})) == {"w.txt": "a\r\nb\r\n"}


def test_blank_line_between_sections_is_not_context() -> None:
    patch = "*** Begin Patch\n*** Update File: old.txt\n@@\n-bye\n+hi\n\n*** Delete File: README\n*** End Patch"
    assert apply_patch_to_files(patch, _reader(FILES)) == {"old.txt": "hi\n", "README": None}


@pytest.mark.parametrize(
    ("patch", "message"),
    [
        (
            "*** Update File: a\n*** End Patch",
            "Invalid patch: the first line must be '*** Begin Patch'",
        ),
        (
            "*** Begin Patch\n*** Delete File: a",
            "Invalid patch: the last line must be '*** End Patch'",
        ),
        (
            "*** Begin Patch\n*** Add File: a\n+x\ny\n*** End Patch",
            "Invalid patch: Add File 'a': line 4 does not start with '+': 'y'",
        ),
        (
            "*** Begin Patch\n*** Update File: a\n*** End Patch",
            "Invalid patch: Update File 'a' has no hunks",
        ),
        (
            "*** Begin Patch\n*** Delete File: a\n-x\n*** End Patch",
            "Invalid patch: Delete File 'a' must not have a body",
        ),
        (
            "*** Begin Patch\n*** Add File:   \n+x\n*** End Patch",
            "Invalid patch: line 2: '*** Add File:' without a path",
        ),
        (
            "*** Begin Patch\n*** Frobnicate: a\n*** End Patch",
            "Invalid patch: line 2 is not a file header ('*** Add File:', '*** Update File:', "
            "'*** Delete File:'): '*** Frobnicate: a'",
        ),
    ],
)
def test_parse_errors(patch: str, message: str) -> None:
    with pytest.raises(ValueError) as info:
        parse_patch(patch)
    assert str(info.value) == message


# -- property: random multi-file patches apply atomically ---------------------------------------

_LINE = st.sampled_from(["", "a", "b", "  c", "def f():", "    return 1", "}"])


@st.composite
def _workspace_and_patch(draw: st.DrawFn):
    names = ["f0.txt", "f1.txt", "f2.txt", "f3.txt"]
    files = {
        name: "\n".join([*draw(st.lists(_LINE, min_size=1, max_size=12)), ""])
        for name in names
        if draw(st.booleans())
    }
    rng = random.Random(draw(st.integers(0, 2**32 - 1)))
    expected: dict[str, str | None] = {}
    sections: list[str] = []
    for name in names:
        choice = draw(st.sampled_from(["skip", "touch"]))
        if choice == "skip":
            continue
        if name not in files:
            lines = draw(st.lists(_LINE, max_size=6))
            sections.append(f"*** Add File: {name}\n" + "".join(f"+{line}\n" for line in lines))
            expected[name] = "".join(line + "\n" for line in lines)  # Codex: newline-ended
        elif draw(st.booleans()):
            sections.append(f"*** Delete File: {name}\n")
            expected[name] = None
        else:
            old = files[name].split("\n")
            new = list(old)
            position = draw(st.integers(0, len(new) - 1))
            new[position:position] = [draw(_LINE) + " # new"]
            try:
                diff = make_v4a_diff(old, new, rng, codex=True)
            except ValueError:
                assume(False)
            # inside an envelope a trailing empty line is a separator: write empty context as " "
            diff = "".join((line or " ") + "\n" for line in diff.split("\n")[:-1])
            move = draw(st.booleans())
            header = f"*** Update File: {name}\n" + (f"*** Move to: moved/{name}\n" if move else "")
            sections.append(header + diff)
            if move:
                expected[name] = None
                expected[f"moved/{name}"] = "\n".join(new)
            else:
                expected[name] = "\n".join(new)
    return files, sections, expected


@settings(max_examples=150, deadline=None)
@given(case=_workspace_and_patch(), break_one=st.booleans())
def test_random_patches_apply_atomically(case, break_one: bool) -> None:
    files, sections, expected = case
    if break_one and sections:
        # a last action that cannot apply: everything must fail, nothing may be returned
        sections = [*sections, "*** Update File: nowhere.txt\n@@\n-x\n"]
    patch = "*** Begin Patch\n" + "".join(sections) + "*** End Patch\n"
    snapshot = dict(files)
    if not sections:
        with pytest.raises(ValueError, match="no file operations"):
            apply_patch_to_files(patch, _reader(files))
    elif break_one:
        with pytest.raises(ValueError, match=r"Update File 'nowhere\.txt': file not found"):
            apply_patch_to_files(patch, _reader(files))
    else:
        assert apply_patch_to_files(patch, _reader(files)) == expected
    assert files == snapshot


def test_apply_actions_accepts_parsed_actions() -> None:
    actions = [
        PatchAction("create_file", "n.txt", "+x\n+\n"),
        PatchAction("delete_file", "old.txt"),
    ]
    assert apply_actions(actions, _reader(FILES)) == {"n.txt": "x\n", "old.txt": None}
