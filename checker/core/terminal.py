"""The one choke point for human-readable output: no control character from an
inventory, a rule folder or a file name reaches a terminal.

Inventories and rule folders come from pull requests anyone can open; a name
with ESC in it could clear or rewrite a CI log, a newline could forge a finding
line. Every human-readable string is escaped here: C0 and C1 control characters
(ECMA-48), DEL, the Unicode line separators, the bidirectional overrides
("Trojan Source", CVE-2021-42574) and lone surrogates (undecodable bytes in a
file name) become visible `\\xNN` / `\\uNNNN` text, and so do the invisible
characters (zero-width spaces and joiners, the word joiner, the byte order
mark, the soft hyphen) that make two names that look the same differ.

A line of text never starts with `::` (or the older `##[`): GitHub Actions
reads such a line in a job's log as a workflow command (`::add-mask::`,
`::stop-commands::`), so its first character is escaped. Only the github
format's own annotations are written as commands (`escape_annotations`).
"""

from __future__ import annotations

import io
import os
import re
from collections.abc import Iterable
from typing import Any, TextIO

from checker.core.errors import clip

_BIDI = (0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A))
# Lone surrogates stand for undecodable bytes in file names; no encoder writes them.
_SURROGATES = range(0xD800, 0xE000)
# Invisible: soft hyphen, Mongolian vowel separator, zero-width space, non-joiner
# and joiner, word joiner and the invisible operators, the byte order mark.
_INVISIBLE = (0x00AD, 0x180E, *range(0x200B, 0x200E), *range(0x2060, 0x2065), 0xFEFF)
_UNSAFE = (*range(0x20), 0x7F, *range(0x80, 0xA0), 0x2028, 0x2029, *_BIDI, *_INVISIBLE, *_SURROGATES)


def _spelled(code: int) -> str:
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def _finder(codes: Iterable[int]) -> re.Pattern[str]:
    # str.translate looks every character up in a dict; a character class scans
    # at C speed and calls back only on a match, which output rarely holds
    # (escaping the JSON of a 10,000-server audit: 0.10 s -> 0.01 s).
    # Runs of codes as ranges: a class of 2,000 single characters took 15 ms to
    # compile, at every start of the command.
    runs: list[list[int]] = []
    for code in sorted(codes):
        if runs and code == runs[-1][1] + 1:
            runs[-1][1] = code
        else:
            runs.append([code, code])
    spans = (re.escape(chr(a)) + (f"-{re.escape(chr(b))}" if b > a else "") for a, b in runs)
    return re.compile("[" + "".join(spans) + "]")


_FIELD_RE = _finder(_UNSAFE)
_LINES_RE = _finder(code for code in _UNSAFE if code != 0x0A)
# JSON escapes C0 itself; DEL, C1 and the rest are legal raw in JSON strings.
_JSON_RE = _finder(code for code in _UNSAFE if code >= 0x20)


# Text that is ASCII and holds none of these bytes has nothing to escape: asked
# of the text at C speed (isascii is a flag of the string; encoding ASCII text is
# a copy, translate one table lookup a byte), where a character class's scan of
# the 12.5 MB JSON of a 10,000-server audit took 30-50 ms.
_PRINTABLE_ASCII = bytes(range(0x20, 0x7F))
_PRINTABLE_LINES = _PRINTABLE_ASCII + b"\n"


def _plain_ascii(text: str, allowed: bytes) -> bool:
    """Whether `text` is ASCII made of the bytes `allowed` only."""
    return text.isascii() and not text.encode("ascii").translate(None, allowed)


def _spell(match: re.Match[str]) -> str:
    return _spelled(ord(match.group()))


def _spell_json(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def escape(text: object) -> str:
    """One field of one line: every control character, newline included, escaped."""
    return _FIELD_RE.sub(_spell, str(text))


# A workflow command: `::` or `##[` first on a line, after any blanks (the runner trims them).
_COMMAND_RE = re.compile(r"^([^\S\n]*)(::|##\[)", re.MULTILINE)


def _defuse(match: re.Match[str]) -> str:
    command = match.group(2)
    return match.group(1) + _spelled(ord(command[0])) + command[1:]


def escape_lines(text: str) -> str:
    """Several lines: every control character but the newline escaped, and no line
    that starts a workflow command."""
    escaped = text if _plain_ascii(text, _PRINTABLE_LINES) else _LINES_RE.sub(_spell, text)
    # A MULTILINE `^` is tried at every character; most output holds no `::`
    # or `##[` at all, which a substring search finds at C speed (the JSON of
    # a 10,000-server audit, 12.5 MB: 0.13 s -> none).
    if "::" not in escaped and "##[" not in escaped:
        return escaped
    return _COMMAND_RE.sub(_defuse, escaped)


def escape_annotations(text: str) -> str:
    """The github format's own lines: control characters escaped; its commands stay."""
    return text if _plain_ascii(text, _PRINTABLE_LINES) else _LINES_RE.sub(_spell, text)


def escape_json(text: str) -> str:
    """JSON text with the control characters JSON leaves raw written as `\\uNNNN`
    (C0 JSON escapes itself). Of these, ASCII text can hold only DEL."""
    if text.isascii() and "\x7f" not in text:
        return text
    return _JSON_RE.sub(_spell_json, text)


class StreamError(Exception):
    """Standard output or error cannot be written (a full disk, a closed descriptor)."""

    def __init__(self, name: str, exc: OSError) -> None:
        super().__init__(f"{name}: cannot write: {exc.strerror or exc}")


def whole_writes(stream: TextIO) -> TextIO:
    """`stream`, or a stream onto the same file descriptor that writes every byte
    or raises. Under PYTHONUNBUFFERED=1 (set in many CI images) or `python -u`,
    standard output's text layer writes straight to the descriptor and drops
    whatever a partial write(2) leaves, as when the reader of a pipe goes away
    or a disk fills up half-way (https://github.com/python/cpython/issues/85393):
    `checker audit | head -1` then ended as if all was written. A buffered layer
    writes the rest or raises (BrokenPipeError, then exit 141); line buffering
    keeps each line as prompt as unbuffered output was."""
    if not isinstance(getattr(stream, "buffer", None), io.RawIOBase):
        return stream
    try:
        fd = stream.fileno()
    except (OSError, ValueError, io.UnsupportedOperation):
        return stream
    encoding = getattr(stream, "encoding", None) or "utf-8"
    raw = io.FileIO(fd, "w", closefd=False)
    return io.TextIOWrapper(io.BufferedWriter(raw), encoding, "backslashreplace", line_buffering=True)


class SafeStream:
    """A text stream that escapes what is written to it, the last line of defence
    for output that no formatter wrote (argparse messages, say). A failed write
    (`> /dev/full`) is a StreamError, which the command line reports as exit 2;
    a reader that went away stays a BrokenPipeError."""

    def __init__(self, stream: TextIO, name: str = "standard output", max_line: int | None = None) -> None:
        self._stream = stream
        self._name = name
        self._max_line = max_line

    def _checked(self, write: Any, text: str) -> int:
        try:
            return int(write(text))
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise StreamError(self._name, exc) from None

    def write(self, text: str) -> int:
        text = escape_lines(text)
        limit = self._max_line
        if limit is not None and len(text) > limit:  # messages only: a value never comes back whole
            text = "\n".join(clip(line, limit) for line in text.split("\n"))
        return self._checked(self._stream.write, text)

    def write_rendered(self, text: str) -> int:
        """Text escaped already: by checker.render.output's last guard, or field by
        field by its formatter (coloured text, render/text.py, whose own SGR
        sequences must reach the terminal, which `write` would escape)."""
        return self._checked(self._stream.write, text)

    def write_annotations(self, text: str) -> int:
        """The github format's workflow commands, which `write` would defuse."""
        return self._checked(self._stream.write, escape_annotations(text))

    def flush(self) -> None:
        try:
            self._stream.flush()
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise StreamError(self._name, exc) from None

    def write_status(self, text: str) -> None:
        """Rewrite the terminal's current line with `text`, escaped and cut to the
        terminal's width (a wrapped line could not be rewritten); '' erases it.
        The only control sequences written are these two: carriage return, and
        ECMA-48 EL (erase to the end of the line)."""
        shown = escape(text)[: max(self._columns() - 1, 0)]
        self._stream.write(f"\r{shown}\x1b[K")
        self._stream.flush()

    def _columns(self) -> int:
        try:
            columns = os.get_terminal_size(self._stream.fileno()).columns
        except (AttributeError, OSError, ValueError):
            return 80
        return columns if columns > 0 else 80  # a terminal that does not know its size says 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)
