"""Turn ``git diff`` text (checkpoint diffs) into the diff view's read-only ``FileDiff`` list."""

from __future__ import annotations

import re

from .views.diff_model import DiffHunk, DiffLine, FileDiff

__all__ = ["parse_unified_diff"]

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@ ?(.*)$")


def parse_unified_diff(text: str) -> list[FileDiff]:
    """Parse a ``git diff`` (or ``diff -u``) text into one :class:`FileDiff` per file.

    The files' full texts are unknown, so ``old_text``/``new_text`` hold just the hunks' sides
    (``None`` for a created or deleted file's missing side). Binary and unparseable sections are
    kept as files without hunks.
    """
    files: list[FileDiff] = []
    path = ""
    status = "modified"
    hunks: list[DiffHunk] = []
    current: dict[str, object] | None = None

    def close_hunk() -> None:
        nonlocal current
        if current is None:
            return
        lines = current["lines"]
        assert isinstance(lines, list)
        hunks.append(
            DiffHunk(
                id=len(hunks) + 1,
                old_start=int(current["old_start"]),  # type: ignore[call-overload]
                old_lines=int(current["old_lines"]),  # type: ignore[call-overload]
                new_start=int(current["new_start"]),  # type: ignore[call-overload]
                new_lines=int(current["new_lines"]),  # type: ignore[call-overload]
                lines=lines,
                old_text="".join(f"{ln.text}\n" for ln in lines if ln.kind != "add"),
                new_text="".join(f"{ln.text}\n" for ln in lines if ln.kind != "delete"),
                section=str(current["section"]),
            )
        )
        current = None

    def close_file() -> None:
        nonlocal hunks, status
        close_hunk()
        if path:
            old = None if status == "created" else "".join(h.old_text for h in hunks)
            new = None if status == "deleted" else "".join(h.new_text for h in hunks)
            files.append(FileDiff(path, old, new, hunks, None, status))  # type: ignore[arg-type]
        hunks = []
        status = "modified"

    old_no = new_no = 0
    for line in text.splitlines():
        if line.startswith("diff --git "):
            close_file()
            parts = line.split(" b/", 1)
            path = parts[1] if len(parts) == 2 else line.removeprefix("diff --git ")
            continue
        if line.startswith("new file mode"):
            status = "created"
            continue
        if line.startswith("deleted file mode"):
            status = "deleted"
            continue
        if line.startswith(
            ("--- ", "+++ ", "index ", "similarity ", "rename ", "old mode", "new mode")
        ):
            if line.startswith("+++ ") and not path:
                path = line[4:].removeprefix("b/")
            continue
        match = _HUNK.match(line)
        if match:
            close_hunk()
            old_no, new_no = int(match.group(1)), int(match.group(3))
            current = {
                "old_start": old_no,
                "old_lines": int(match.group(2) or 1),
                "new_start": new_no,
                "new_lines": int(match.group(4) or 1),
                "section": match.group(5),
                "lines": [],
            }
            continue
        if current is None or line.startswith("\\"):
            continue
        lines = current["lines"]
        assert isinstance(lines, list)
        tag, body = line[:1], line[1:]
        if tag == "+":
            lines.append(DiffLine("add", None, new_no, body))
            new_no += 1
        elif tag == "-":
            lines.append(DiffLine("delete", old_no, None, body))
            old_no += 1
        else:
            lines.append(DiffLine("context", old_no, new_no, body))
            old_no += 1
            new_no += 1
    close_file()
    return files
