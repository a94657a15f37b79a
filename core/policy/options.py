"""Option tables of the read-only tools, and a GNU ``getopt_long`` scanner that applies them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from .sed_script import sed_problems

__all__ = ["Effect", "Scan", "Tool", "TOOLS", "resolve_long", "scan"]

Effect = Literal[
    "write",
    "run",
    "read",
    "list",
    "follow",
    "pattern",
    "recurse",
    "endless",
    "script",
    "script-file",
    "quiet",
]
"""What an option does: writes its file, runs a program, reads its file (path-checked),
reads file names only known at run time, follows symlinks recursively, supplies the
pattern (so grep's first operand is a file), makes the program walk its directory
operands (``grep -r``, ``ls -R``; with a value, only ``recurse``: ``grep -d recurse``), or
makes it run until killed (``tail -f``: no read-only rule vouches for it, so it asks in
the modes that judge reach; an approved or *auto* one still ends at the command timeout),
supplies a sed script (``sed -e``: judged by :mod:`core.policy.sed_script`), reads one
from a file (``sed -f``: unjudgeable, so it asks) or silences sed's automatic printing
(``sed -n``)."""

Operands = Literal["paths", "none", "pattern-then-paths", "jq", "sed"]


@dataclass(frozen=True, slots=True)
class Tool:
    """How one program parses its options (GNU ``getopt_long`` unless said otherwise).

    Attributes:
        longs: long option name → ``""`` (no argument), ``"="`` (required), ``"=?"``
            (optional, attached only) or ``"2"`` (two words follow, jq's ``--rawfile``).
        short_args: short option letters that take an argument (``"k o S t T"`` for sort).
        effects: option (``"-o"`` or ``"--output"``) → :data:`Effect`.
        operands: what non-option words are: file paths, nothing to check, a pattern then
            paths (grep), a jq filter then paths, or a sed script then paths (unless
            ``-e`` gave the script).
        abbrev: whether unambiguous prefixes of long options are accepted (getopt_long).
    """

    longs: Mapping[str, str]
    short_args: frozenset[str] = frozenset()
    effects: Mapping[str, Effect] = field(default_factory=dict)
    operands: Operands = "paths"
    abbrev: bool = True


@dataclass(slots=True)
class Scan:
    """What the arguments of one command do.

    Attributes:
        problems: reasons no read-only rule can vouch for it (``"`--outp` writes a file"``).
        writes: files options write to.
        paths: values to check for confinement (operands and file arguments of options).
        jq_filter: the jq program text, when there is one.
        pattern_given: an option supplied the pattern or program (grep ``-e``/``-f``, jq
            ``-f``), so every operand is a file.
        operands: the file operands among ``paths`` (not the files of options).
        recursive: an option makes the program walk its directory operands.
        scripts: sed scripts (``-e`` values, or the first operand).
        quiet: sed's ``-n``/``--quiet``/``--silent`` was given.
    """

    problems: list[str] = field(default_factory=list)
    writes: list[str] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)
    jq_filter: str | None = None
    pattern_given: bool = False
    operands: list[str] = field(default_factory=list)
    recursive: bool = False
    scripts: list[str] = field(default_factory=list)
    quiet: bool = False


def resolve_long(tool: Tool, name: str) -> str | None:
    """The long option ``name`` (without ``--``) stands for: itself, or the one option it is
    an unambiguous prefix of (getopt_long, glibc ``posix/getopt.c``); ``None`` if unknown
    or ambiguous."""
    if name in tool.longs:
        return name
    if not tool.abbrev or not name:
        return None
    hits = [n for n in tool.longs if n.startswith(name)]
    return hits[0] if len(hits) == 1 else None


def scan(tool: Tool, args: Sequence[str]) -> Scan:
    """Scan ``args`` (the expanded words after the program) the way ``tool`` parses them.

    GNU permutation applies (options may follow operands); ``--`` ends the options; short
    options cluster (``-rno``) and take their argument attached (``-ofile``) or as the next
    word; long options take ``--opt=value`` or, when required, the next word.

    Returns:
        The :class:`Scan`. Unknown or ambiguous long options are problems (what cannot be
        analysed fails closed).
    """
    out = Scan()
    operands: list[str] = []
    pattern_given = False
    i = 0
    while i < len(args):
        arg = args[i]
        i += 1
        if arg == "--":
            operands.extend(args[i:])
            break
        if arg.startswith("--"):
            name, eq, value = arg[2:].partition("=")
            full = resolve_long(tool, name)
            if full is None:
                out.problems.append(
                    f"uses `--{name}`, an option it does not know or cannot tell apart"
                )
                continue
            kind = tool.longs[full]
            if kind == "=" and not eq:
                value = args[i] if i < len(args) else ""
                i += 1
            elif kind == "2":  # jq's `--rawfile NAME FILE`: the second word is the value
                value = args[i + 1] if i + 1 < len(args) else ""
                i += 2
            pattern_given |= _apply(tool, out, f"--{full}", f"--{name}", value)
            continue
        if arg.startswith("-") and len(arg) > 1:
            letters = arg[1:]
            for pos, letter in enumerate(letters):
                if letter in tool.short_args:
                    value = letters[pos + 1 :]
                    if not value:
                        value = args[i] if i < len(args) else ""
                        i += 1
                    pattern_given |= _apply(tool, out, f"-{letter}", f"-{letter}", value)
                    break
                pattern_given |= _apply(tool, out, f"-{letter}", f"-{letter}", "")
            continue
        operands.append(arg)
    out.pattern_given = pattern_given
    if tool.operands == "pattern-then-paths" and not pattern_given and operands:
        operands = operands[1:]
    elif tool.operands == "jq" and not pattern_given and operands:
        out.jq_filter = operands[0]
        operands = operands[1:]
    elif tool.operands == "sed":
        if not pattern_given and operands:
            out.scripts.append(operands[0])
            operands = operands[1:]
        out.problems.extend(sed_problems(out.scripts, quiet=out.quiet))
    if tool.operands != "none":
        out.operands.extend(operands)
        out.paths.extend(operands)
    return out


def _apply(tool: Tool, out: Scan, key: str, spelled: str, value: str) -> bool:
    effect = tool.effects.get(key)
    if effect == "write":
        out.problems.append(f"uses `{spelled}`, which writes a file")
        out.writes.append(value)
    elif effect == "run":
        out.problems.append(f"uses `{spelled}`, which runs another program")
    elif effect == "list":
        out.problems.append(f"uses `{spelled}`, which reads file names only known at run time")
    elif effect == "follow":
        out.problems.append(f"uses `{spelled}`, which follows symbolic links out of the folder")
    elif effect == "read":
        out.paths.append(value)
    elif effect == "recurse":
        out.recursive = out.recursive or value in ("", "recurse")
    elif effect == "script":
        out.scripts.append(value)
        return True
    elif effect == "script-file":
        out.problems.append(f"uses `{spelled}`, which reads a sed script Tandem cannot judge")
    elif effect == "quiet":
        out.quiet = True
    elif effect == "endless":
        out.problems.append(
            f"uses `{spelled}`, which follows the file and never ends (it would run until "
            "the command timeout)"
        )
    return effect == "pattern" or (effect == "read" and key in ("-f", "--file"))


def _longs(spec: str) -> dict[str, str]:
    table: dict[str, str] = {}
    for item in spec.split():
        if item.endswith("=2"):
            table[item[:-2]] = "2"
        elif item.endswith("=?"):
            table[item[:-2]] = "=?"
        elif item.endswith("="):
            table[item[:-1]] = "="
        else:
            table[item] = ""
    return table


def _tool(
    longs: str,
    short_args: str = "",
    effects: Mapping[str, Effect] | None = None,
    operands: Operands = "paths",
    abbrev: bool = True,
) -> Tool:
    return Tool(
        _longs(longs + " help version"),
        frozenset(short_args.split()),
        dict(effects or {}),
        operands,
        abbrev,
    )


# fmt: off
_GREP = _tool(
    "after-context= basic-regexp before-context= binary binary-files= byte-offset color=? "
    "colour=? context= count dereference-recursive devices= directories= exclude-dir= "
    "exclude-from= exclude= extended-regexp file= files-with-matches files-without-match "
    "fixed-strings group-separator= ignore-case include= initial-tab invert-match label= "
    "line-buffered line-number line-regexp max-count= no-filename no-group-separator "
    "no-ignore-case no-messages null null-data only-matching perl-regexp quiet recursive "
    "regexp= silent text with-filename word-regexp",
    "A B C D d e f m",
    {"-f": "read", "--file": "read", "--exclude-from": "read", "-e": "pattern",
     "--regexp": "pattern", "-R": "follow", "--dereference-recursive": "follow",
     "-r": "recurse", "--recursive": "recurse", "-d": "recurse", "--directories": "recurse"},
    "pattern-then-paths",
)
_SUM = _tool(
    "binary check ignore-missing quiet status strict tag text warn zero",
    "",
    {"-c": "list", "--check": "list"},
)
TOOLS: dict[str, Tool] = {
    "ls": _tool(
        "all almost-all author block-size= classify=? color=? context dereference "
        "dereference-command-line dereference-command-line-symlink-to-dir directory dired "
        "escape file-type format= full-time group-directories-first hide-control-chars hide= "
        "human-readable hyperlink=? ignore-backups ignore= indicator-style= inode kibibytes "
        "literal no-group numeric-uid-gid quote-name quoting-style= recursive reverse "
        "show-control-chars si size sort= time= time-style= tabsize= width= zero",
        "I T w",
        {"-L": "follow", "--dereference": "follow", "-R": "recurse", "--recursive": "recurse"},
    ),
    "cat": _tool(
        "show-all number-nonblank show-ends number squeeze-blank show-tabs show-nonprinting"
    ),
    "head": _tool("bytes= lines= quiet silent verbose zero-terminated", "c n"),
    "tail": _tool(
        "bytes= follow=? lines= max-unchanged-stats= pid= quiet retry silent "
        "sleep-interval= verbose zero-terminated debug",
        "c n s",
        {"-f": "endless", "-F": "endless", "--follow": "endless"},
    ),
    "wc": _tool(
        "bytes chars files0-from= lines max-line-length words total=",
        "",
        {"--files0-from": "list"},
    ),
    "nl": _tool(
        "body-numbering= footer-numbering= header-numbering= join-blank-lines= "
        "line-increment= no-renumber number-format= number-separator= number-width= "
        "section-delimiter= starting-line-number=",
        "b d f h i l n s v w",
    ),
    "grep": _GREP,
    "egrep": _GREP,
    "fgrep": _GREP,
    "rg": _tool(
        "after-context= before-context= binary block-buffered byte-offset case-sensitive "
        "color= colors= column context= context-separator= count count-matches crlf "
        "debug dfa-size-limit= encoding= engine= field-context-separator= "
        "field-match-separator= file= files files-with-matches files-without-match "
        "fixed-strings follow generate= glob= glob-case-insensitive heading hidden "
        "hostname-bin= hyperlink-format= iglob= ignore-case ignore-file= "
        "ignore-file-case-insensitive include-zero invert-match json line-buffered "
        "line-number line-regexp max-columns= max-columns-preview max-count= max-depth= "
        "max-filesize= mmap multiline multiline-dotall no-config no-filename no-heading "
        "no-ignore no-ignore-dot no-ignore-exclude no-ignore-files no-ignore-global "
        "no-ignore-messages no-ignore-parent no-ignore-vcs no-line-number no-messages "
        "no-mmap no-pcre2-unicode no-require-git no-unicode null null-data one-file-system "
        "only-matching passthru path-separator= pcre2 pcre2-version pre= pre-glob= pretty "
        "quiet regex-size-limit= regexp= replace= search-zip smart-case sort= sortr= stats "
        "stop-on-nonmatch text threads= trace trim type= type-add= type-clear= type-list "
        "type-not= unrestricted vimgrep with-filename word-regexp auto-hybrid-regex "
        "no-auto-hybrid-regex no-binary no-block-buffered no-byte-offset no-column "
        "no-context-separator no-crlf no-encoding no-follow no-glob-case-insensitive "
        "no-hidden no-include-zero no-invert-match no-json no-line-buffered "
        "no-max-columns-preview no-multiline no-multiline-dotall no-one-file-system "
        "no-pcre2 no-pre no-search-zip no-sort-files no-stats no-text no-trim sort-files",
        "A B C E M T e f g j m r t d",
        {"--pre": "run", "--pre-glob": "run", "--hostname-bin": "run", "-z": "run",
         "--search-zip": "run", "-f": "read", "--file": "read", "--ignore-file": "read",
         "-e": "pattern", "--regexp": "pattern", "-L": "follow", "--follow": "follow",
         "--files": "pattern", "--type-list": "pattern"},
        "pattern-then-paths",
        abbrev=False,
    ),
    "file": _tool(
        "apple brief checking-printout compile debug dereference exclude= exclude-quiet= "
        "extension files-from= keep-going list magic-file= mime mime-encoding mime-type "
        "no-buffer no-dereference no-pad no-sandbox parameter= preserve-date print0 raw "
        "separator= special-files uncompress uncompress-noreport",
        "e F f m P",
        {"-C": "write", "--compile": "write", "-m": "read", "--magic-file": "read",
         "-f": "list", "--files-from": "list"},
    ),
    "stat": _tool("cached= dereference file-system format= printf= terse", "c"),
    "du": _tool(
        "all apparent-size block-size= bytes count-links dereference dereference-args "
        "exclude-from= exclude= files0-from= human-readable inodes max-depth= no-dereference "
        "null one-file-system separate-dirs si summarize threshold= time=? time-style= total",
        "B d t X",
        {"--files0-from": "list", "-X": "read", "--exclude-from": "read", "-L": "follow",
         "--dereference": "follow"},
    ),
    "df": _tool(
        "all block-size= exclude-type= human-readable inodes local no-sync output=? "
        "portability print-type si sync total type=",
        "B t x",
        None,
        "none",  # df reports file-system usage; it reads no file's content
    ),
    "tree": _tool(
        "inodes device noreport nolinks dirsfirst filesfirst charset= si du prune timefmt= "
        "ignore-case matchdirs fromfile filelimit= sort= gitignore gitfile= info infofile= "
        "metafirst condense hintro= houtro= opt-toggle",
        "L P I H T o",
        {"-o": "write", "-R": "write", "-l": "follow", "--fromfile": "list",
         "--gitfile": "read", "--infofile": "read", "--hintro": "read", "--houtro": "read"},
        abbrev=False,
    ),
    "sort": _tool(
        "batch-size= buffer-size= check=? compress-program= debug dictionary-order "
        "field-separator= files0-from= general-numeric-sort human-numeric-sort ignore-case "
        "ignore-leading-blanks ignore-nonprinting key= merge month-sort numeric-sort output= "
        "parallel= random-sort random-source= reverse sort= stable temporary-directory= "
        "unique version-sort zero-terminated",
        "k o S t T",
        {"-o": "write", "--output": "write", "-T": "write", "--temporary-directory": "write",
         "--compress-program": "run", "--files0-from": "list", "--random-source": "read"},
    ),
    "cut": _tool(
        "bytes= characters= complement delimiter= fields= only-delimited output-delimiter= "
        "zero-terminated",
        "b c d f",
    ),
    "tr": _tool("complement delete squeeze-repeats truncate-set1", "", None, "none"),
    "diff": _tool(
        "brief color=? context=? ed exclude-from= exclude= expand-tabs from-file= "
        "horizon-lines= ifdef= ignore-all-space ignore-blank-lines ignore-case "
        "ignore-file-name-case ignore-matching-lines= ignore-space-change "
        "ignore-tab-expansion ignore-trailing-space initial-tab label= left-column "
        "line-format= minimal new-file no-dereference no-ignore-file-name-case normal "
        "paginate palette= rcs recursive report-identical-files show-c-function "
        "show-function-line= side-by-side speed-large-files starting-file= "
        "strip-trailing-cr suppress-blank-empty suppress-common-lines tabsize= text "
        "to-file= unidirectional-new-file unified=? width= old-line-format= "
        "new-line-format= unchanged-line-format= old-group-format= new-group-format= "
        "unchanged-group-format= changed-group-format=",
        "C D F I L S U W X x",
        {"--from-file": "read", "--to-file": "read", "-X": "read", "--exclude-from": "read",
         "-r": "follow", "--recursive": "follow", "-l": "run", "--paginate": "run"},
    ),
    "cmp": _tool("bytes= ignore-initial= print-bytes quiet silent verbose", "i n"),
    "realpath": _tool(
        "canonicalize-existing canonicalize-missing logical no-symlinks physical quiet "
        "relative-base= relative-to= strip zero",
        "",
        {"--relative-base": "read", "--relative-to": "read"},
    ),
    "readlink": _tool(
        "canonicalize canonicalize-existing canonicalize-missing no-newline quiet silent "
        "verbose zero"
    ),
    "md5sum": _SUM,
    "sha1sum": _SUM,
    "sha256sum": _SUM,
    # GNU sed 4.9. `-i`/`--in-place` (any spelling: `-ni`, `-i.bak`, `--in-place=.bak`,
    # `--in`) writes; `-f`/`--file` reads a script Tandem cannot see; the script itself is
    # judged by core/policy/sed_script.py (print commands on line addresses only).
    "sed": _tool(
        "debug expression= file= follow-symlinks in-place=? line-length= null-data "
        "zero-terminated posix quiet silent regexp-extended sandbox separate unbuffered",
        "e f l",
        {"-i": "write", "--in-place": "write", "-f": "script-file", "--file": "script-file",
         "-e": "script", "--expression": "script", "-n": "quiet", "--quiet": "quiet",
         "--silent": "quiet"},
        "sed",
    ),
    "jq": _tool(
        "seq stream stream-errors slurp raw-input null-input compact-output tab indent= "
        "color-output monochrome-output ascii-output unbuffered sort-keys raw-output "
        "raw-output0 join-output exit-status arg=2 argjson=2 slurpfile=2 rawfile=2 args "
        "jsonargs from-file library-path= binary",
        "L",
        {"-f": "pattern", "--from-file": "pattern", "-L": "read", "--library-path": "read",
         "--rawfile": "read", "--slurpfile": "read"},
        "jq",
        abbrev=False,
    ),
}
# fmt: on
"""Option tables for the programs the built-in read-only rules allow (from their ``--help``:
GNU coreutils 9, grep 3, diffutils 3, file 5, ripgrep 14, tree 2, jq 1.7)."""
