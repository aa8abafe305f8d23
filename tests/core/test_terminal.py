from __future__ import annotations

import io
import json
import os
from collections.abc import Callable

import pytest

from checker.core import terminal
from checker.core.terminal import SafeStream, escape, escape_json, escape_lines


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("plain name", "plain name"),
        ("s1\x1b[2J", "s1\\x1b[2J"),
        ("bell\x07", "bell\\x07"),
        ("two\nlines", "two\\x0alines"),
        ("tab\there", "tab\\x09here"),
        ("del\x7f", "del\\x7f"),
        ("csi\x9b2J", "csi\\x9b2J"),
        ("nel\x85", "nel\\x85"),
        ("line\u2028sep", "line\\u2028sep"),
        ("rtl\u202eoverride", "rtl\\u202eoverride"),
        ("isolate\u2066x\u2069", "isolate\\u2066x\\u2069"),
        ("\udcff.yaml", "\\udcff.yaml"),  # the byte 0xff in a file name
        ("café Ω 数据", "café Ω 数据"),  # printable text is left alone
    ],
)
def test_escape_shows_every_control_character(text: str, shown: str) -> None:
    assert escape(text) == shown


def test_escape_lines_keeps_newlines_only() -> None:
    assert escape_lines("a\x1b\nb\tc\n") == "a\\x1b\nb\\x09c\n"


def test_escape_json_stays_json() -> None:
    text = json.dumps({"m": "a\x1b\x7f\x9b\u202e\t"}, ensure_ascii=False)
    escaped = escape_json(text)
    assert json.loads(escaped) == {"m": "a\x1b\x7f\x9b\u202e\t"}
    assert escaped == '{"m": "a\\u001b\\u007f\\u009b\\u202e\\t"}'


def test_safe_stream_escapes_what_is_written() -> None:
    inner = io.StringIO()
    stream = SafeStream(inner)
    stream.write("error: \x1b[31mred\x1b[0m\n")
    stream.flush()
    assert inner.getvalue() == "error: \\x1b[31mred\\x1b[0m\n"


@pytest.mark.parametrize("escaper", [escape, escape_lines, escape_json])
def test_escaping_by_pattern_is_the_table_translation(escaper: Callable[[str], str]) -> None:
    # Every code point up to U+2100, the bidi controls and lone surrogates.
    text = "".join(chr(code) for code in range(0x2100)) + "\u2066\u202e\ud800\udfff"
    field = {code: terminal._spelled(code) for code in terminal._UNSAFE}
    lines = {code: text for code, text in field.items() if code != 0x0A}
    json_ = {code: f"\\u{code:04x}" for code in terminal._UNSAFE if code >= 0x20}
    tables = {escape: field, escape_lines: lines, escape_json: json_}
    assert escaper(text) == text.translate(tables[escaper])


def test_a_status_line_is_escaped_cut_and_erasable() -> None:
    out = io.StringIO()  # no terminal: 80 columns
    stream = SafeStream(out)
    stream.write_status("reading \x1b[2Jevil.yaml " + "x" * 100)
    stream.write_status("")
    drawn, cleared = out.getvalue().split("\x1b[K")[:2]
    assert drawn.startswith("\rreading \\x1b[2Jevil.yaml x") and len(drawn) == 1 + 79
    assert cleared == "\r"
    assert out.getvalue().count("\x1b") == 2  # only the two erase sequences written here


def test_a_terminal_that_does_not_know_its_width_gets_80_columns(monkeypatch: pytest.MonkeyPatch) -> None:
    class Sized(io.StringIO):
        def fileno(self) -> int:
            return 2

    monkeypatch.setattr("os.get_terminal_size", lambda fd: os.terminal_size((0, 0)))  # a fresh pty
    out = Sized()
    SafeStream(out).write_status("y" * 100)
    assert out.getvalue() == "\r" + "y" * 79 + "\x1b[K"


@pytest.mark.parametrize("escaper", [escape, escape_lines, terminal.escape_annotations, escape_json])
@pytest.mark.parametrize("code", range(0x80))
def test_ascii_text_is_escaped_as_the_table_says(escaper: Callable[[str], str], code: int) -> None:
    """ASCII text takes a shortcut past the patterns (nothing to escape: the text
    itself): each ASCII character, in a long line and at a line's start."""
    text = "x" * 100 + chr(code) + "\n" + chr(code) + "y"
    field = {c: terminal._spelled(c) for c in terminal._UNSAFE}
    tables = {
        escape: field,
        escape_lines: {c: s for c, s in field.items() if c != 0x0A},
        terminal.escape_annotations: {c: s for c, s in field.items() if c != 0x0A},
        escape_json: {c: f"\\u{c:04x}" for c in terminal._UNSAFE if c >= 0x20},
    }
    assert escaper(text) == text.translate(tables[escaper])
