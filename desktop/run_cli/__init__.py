"""Parts of ``tandem run`` (issue 16, Build item 2; docs/tandem-run.md): the JSONL events of
``--json`` (:mod:`.events`), live command output and prompts (:mod:`.terminal`), approvals
with ``--yes`` / ``--yes-destructive`` (:mod:`.approvals`), reviews (:mod:`.reviews`), hunk
by hunk on a terminal (:mod:`.review_tty`), the journal of CLI runs (:mod:`.journaling`) and
``tandem sessions list|show`` (:mod:`.sessions_cmd`)."""

__all__: list[str] = []
