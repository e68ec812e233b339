"""Tokenizer for Prolog text: names, variables, numbers, strings, punctuation, end."""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import TermSyntaxError

SYMBOL_CHARS = frozenset("+-*/\\^<>=~:.?@#&$")
SOLO_CHARS = frozenset("!;")
DIGITS = frozenset("0123456789")
PUNCTUATION = frozenset("()[]{},|")
ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "a": "\a", "b": "\b", "f": "\f", "v": "\v",
           "\\": "\\", "'": "'", '"': '"', "`": "`", "e": "\x1b", "s": " "}


# Integers have at most 4000 decimal digits (arithmetic keeps to the same bound): Python will not
# print or parse more than 4300, and bigger numbers make single operations slow.
MAX_INTEGER_DIGITS = 4000
INTEGER_LIMIT = 10 ** MAX_INTEGER_DIGITS


@dataclass(slots=True)
class Token:
    kind: str  # name | qname | var | int | float | string | punct | end | eof
    value: object
    offset: int
    layout_before: bool  # whitespace or a comment directly precedes this token


class Lexer:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0
        self.n = len(text)

    def where(self, offset: int) -> tuple[int, int]:
        line = self.text.count("\n", 0, offset) + 1
        column = offset - (self.text.rfind("\n", 0, offset) + 1) + 1
        return line, column

    def error(self, message: str, offset: int) -> TermSyntaxError:
        line, column = self.where(offset)
        return TermSyntaxError(message, line, column)

    def _skip_layout(self) -> bool:
        text, n = self.text, self.n
        start = self.pos
        while self.pos < n:
            c = text[self.pos]
            if c.isspace():
                self.pos += 1
            elif c == "%":
                end = text.find("\n", self.pos)
                self.pos = n if end < 0 else end + 1
            elif c == "/" and text.startswith("/*", self.pos):
                end = text.find("*/", self.pos + 2)
                if end < 0:
                    raise self.error("unterminated block comment", self.pos)
                self.pos = end + 2
            else:
                break
        return self.pos > start

    def tokens(self) -> list[Token]:
        out = []
        while True:
            token = self.next()
            out.append(token)
            if token.kind == "eof":
                return out

    def next(self) -> Token:
        layout = self._skip_layout()
        text, n, start = self.text, self.n, self.pos
        if start >= n:
            return Token("eof", None, start, layout)
        c = text[start]
        if c in DIGITS:
            return self._number(layout)
        if c == "_" or c.isupper():
            self.pos = self._word_end(start + 1)
            return Token("var", text[start:self.pos], start, layout)
        if c.isalpha():
            self.pos = self._word_end(start + 1)
            return Token("name", text[start:self.pos], start, layout)
        if c == "'":
            return Token("qname", self._quoted("'"), start, layout)
        if c == '"':
            return Token("string", self._quoted('"'), start, layout)
        if c in PUNCTUATION:
            self.pos += 1
            return Token("punct", c, start, layout)
        if c in SOLO_CHARS:
            self.pos += 1
            return Token("name", c, start, layout)
        if c in SYMBOL_CHARS:
            end = start
            while end < n and text[end] in SYMBOL_CHARS:
                end += 1
            symbol = text[start:end]
            # A lone `.` followed by layout, `%` or the end of text closes a clause.
            if symbol == "." and (end >= n or text[end].isspace() or text[end] == "%"):
                self.pos = end
                return Token("end", ".", start, layout)
            self.pos = end
            return Token("name", symbol, start, layout)
        raise self.error(f"unexpected character {c!r}", start)

    def _word_end(self, pos: int) -> int:
        text, n = self.text, self.n
        while pos < n and (text[pos].isalnum() or text[pos] == "_"):
            pos += 1
        return pos

    def _number(self, layout: bool) -> Token:
        text, n, start = self.text, self.n, self.pos
        if text[start] == "0" and start + 1 < n and text[start + 1] in "xob'":
            kind = text[start + 1]
            if kind == "'":
                self.pos = start + 2
                if self.pos >= n:
                    raise self.error("expected a character after 0'", start)
                ch = text[self.pos]
                if ch == "\\":
                    escaped = self._escape()
                    return Token("int", ord(escaped), start, layout)
                if ch == "'" and text.startswith("''", self.pos):
                    self.pos += 2
                    return Token("int", ord("'"), start, layout)
                self.pos += 1
                return Token("int", ord(ch), start, layout)
            digits = {"x": "0123456789abcdefABCDEF", "o": "01234567", "b": "01"}[kind]
            end = start + 2
            while end < n and text[end] in digits:
                end += 1
            if end > start + 2:
                self.pos = end
                value = int(text[start + 2:end], {"x": 16, "o": 8, "b": 2}[kind])
                if value >= INTEGER_LIMIT:
                    raise self.error(f"integer literal with more than {MAX_INTEGER_DIGITS} digits", start)
                return Token("int", value, start, layout)
        end = start
        while end < n and text[end] in DIGITS:
            end += 1
        is_float = False
        if end + 1 < n and text[end] == "." and text[end + 1] in DIGITS:
            is_float = True
            end += 1
            while end < n and text[end] in DIGITS:
                end += 1
        if end < n and text[end] in "eE":
            exp = end + 1
            if exp < n and text[exp] in "+-":
                exp += 1
            if exp < n and text[exp] in DIGITS:
                is_float = True
                end = exp
                while end < n and text[end] in DIGITS:
                    end += 1
        if end < n and (text[end].isalpha() or text[end] == "_"):
            raise self.error("expected an operator or punctuation after a number", end)
        self.pos = end
        literal = text[start:end]
        if is_float:
            number = float(literal)
            if number in (float("inf"), float("-inf")):
                raise self.error("float literal out of range", start)
            return Token("float", number, start, layout)
        if len(literal) > MAX_INTEGER_DIGITS:
            raise self.error(f"integer literal with more than {MAX_INTEGER_DIGITS} digits", start)
        return Token("int", int(literal), start, layout)

    def _escape(self) -> str:
        """Read an escape sequence starting at the backslash; return its character."""
        text, n = self.text, self.n
        start = self.pos
        self.pos += 1
        if self.pos >= n:
            raise self.error("unterminated escape sequence", start)
        c = text[self.pos]
        if c in ESCAPES:
            self.pos += 1
            return ESCAPES[c]
        if c == "x":
            end = self.pos + 1
            while end < n and text[end] in "0123456789abcdefABCDEF":
                end += 1
            if end == self.pos + 1 or end >= n or text[end] != "\\":
                raise self.error("malformed \\x escape: expected hex digits and a closing backslash", start)
            code = int(text[self.pos + 1:end], 16)
            self.pos = end + 1
            return self._char(code, start)
        if c in DIGITS:
            end = self.pos
            while end < n and text[end] in "01234567":
                end += 1
            if end >= n or text[end] != "\\":
                raise self.error("malformed octal escape: expected a closing backslash", start)
            code = int(text[self.pos:end], 8)
            self.pos = end + 1
            return self._char(code, start)
        if c in "uU":
            width = 4 if c == "u" else 8
            digits = text[self.pos + 1:self.pos + 1 + width]
            if len(digits) != width or any(d not in "0123456789abcdefABCDEF" for d in digits):
                raise self.error(f"malformed \\{c} escape: expected {width} hex digits", start)
            self.pos += 1 + width
            return self._char(int(digits, 16), start)
        raise self.error(f"unknown escape sequence \\{c}", start)

    def _char(self, code: int, offset: int) -> str:
        if code > 0x10FFFF or 0xD800 <= code <= 0xDFFF:
            raise self.error("escape does not name a Unicode character", offset)
        if code == 0:
            raise self.error("NUL characters are not allowed in atoms or strings", offset)
        return chr(code)

    def _quoted(self, quote: str) -> str:
        text, n = self.text, self.n
        start = self.pos
        self.pos += 1
        parts: list[str] = []
        while True:
            if self.pos >= n:
                raise self.error(f"unterminated quoted text (missing {quote})", start)
            c = text[self.pos]
            if c == quote:
                if self.pos + 1 < n and text[self.pos + 1] == quote:
                    parts.append(quote)
                    self.pos += 2
                    continue
                self.pos += 1
                return "".join(parts)
            if c == "\\":
                if self.pos + 1 < n and text[self.pos + 1] == "\n":
                    self.pos += 2  # line continuation
                    continue
                parts.append(self._escape())
                continue
            if c == "\n":
                raise self.error("newline in quoted text (write \\n)", self.pos)
            parts.append(c)
            self.pos += 1
