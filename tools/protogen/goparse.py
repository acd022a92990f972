"""Just enough of a Go parser to read the API packages' declarations.

Upstream keeps its Go facts in struct tags (``json``, ``protobuf``, ``patchStrategy``) and in
marker comments (``+optional``, ``+listType=map``, ``+enum``). This module reads them from the
``.go`` files of one package: struct types with their fields, named non-struct types (enum
candidates), string constants, and which types have a ``MarshalJSON`` method.

Doc comments are attached the way gengo (the library under kube-openapi and go-to-protobuf)
attaches them: the comment group that ends on the line right before the declared name, its text
as ``go/ast.CommentGroup.Text`` gives it (markers stripped, first space removed, directives
dropped, runs of blank lines folded). The comment groups themselves are formed as ``go/parser``
forms them: a comment on the same line as the preceding token is a group of its own.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

# ---------------------------------------------------------------------------------------------
# Lexing

IDENT, STRING, NUMBER, PUNCT, SEMI = "ident", "string", "number", "punct", ";"
_KEYWORDS_ENDING_STATEMENT = {"break", "continue", "fallthrough", "return"}
_PUNCT3 = ("<<=", ">>=", "&^=", "...", "&&=", "||=")
_PUNCT2 = ("<<", ">>", "&^", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "&&", "||", "<-", "++", "--", "==",
           "!=", "<=", ">=", ":=")  # fmt: skip


@dataclass(frozen=True, slots=True)
class Token:
    kind: str
    text: str
    line: int


@dataclass(slots=True)
class Comment:
    text: str  # the raw comment, including // or /* */
    line: int  # first line
    end_line: int
    trailing: bool  # on the same line as the token before it


_GO_KEYWORDS = {
    "break", "case", "chan", "const", "continue", "default", "defer", "else", "fallthrough", "for", "func", "go",
    "goto", "if", "import", "interface", "map", "package", "range", "return", "select", "struct", "switch", "type",
    "var",
}  # fmt: skip


def _ends_statement(tok: Token) -> bool:
    """Whether a newline after this token inserts a semicolon (the Go spec's rule)."""
    if tok.kind == IDENT:
        return tok.text not in _GO_KEYWORDS or tok.text in _KEYWORDS_ENDING_STATEMENT
    if tok.kind in (STRING, NUMBER):
        return True
    return tok.kind == PUNCT and tok.text in (")", "]", "}", "++", "--")


def lex(source: str) -> tuple[list[Token], list[Comment]]:
    """Tokens (with Go's automatic semicolons inserted) and comments of a Go source file."""
    tokens: list[Token] = []
    comments: list[Comment] = []
    i, line, n = 0, 1, len(source)
    last_token_line = 0

    def newline_semicolon() -> None:
        if tokens and tokens[-1].kind != SEMI and _ends_statement(tokens[-1]):
            tokens.append(Token(SEMI, "\n", line))

    while i < n:
        c = source[i]
        if c == "\n":
            newline_semicolon()
            line += 1
            i += 1
        elif c in " \t\r":
            i += 1
        elif source.startswith("//", i):
            end = source.find("\n", i)
            end = n if end == -1 else end
            comments.append(Comment(source[i:end], line, line, trailing=bool(tokens) and last_token_line == line))
            i = end
        elif source.startswith("/*", i):
            end = source.index("*/", i + 2) + 2
            text = source[i:end]
            end_line = line + text.count("\n")
            comments.append(Comment(text, line, end_line, trailing=bool(tokens) and last_token_line == line))
            if "\n" in text:
                newline_semicolon()
            line = end_line
            i = end
        elif c == '"':
            j = i + 1
            while source[j] != '"':
                j += 2 if source[j] == "\\" else 1
            tokens.append(Token(STRING, source[i : j + 1], line))
            last_token_line = line
            i = j + 1
        elif c == "`":
            j = source.index("`", i + 1)
            tokens.append(Token(STRING, source[i : j + 1], line))
            last_token_line = line
            line += source.count("\n", i, j)
            i = j + 1
        elif c == "'":
            j = i + 1
            while source[j] != "'":
                j += 2 if source[j] == "\\" else 1
            tokens.append(Token(NUMBER, source[i : j + 1], line))
            last_token_line = line
            i = j + 1
        elif c.isalpha() or c == "_":
            m = re.compile(r"[A-Za-z_0-9]+").match(source, i)
            assert m
            tokens.append(Token(IDENT, m.group(), line))
            last_token_line = line
            i = m.end()
        elif c.isdigit() or (c == "." and i + 1 < n and source[i + 1].isdigit()):
            m = re.compile(r"[0-9a-fA-FxXoObB_.eEpP+-]+").match(source, i)
            assert m
            text = m.group()
            # A number never ends in + or - (that is the next operator).
            while text[-1] in "+-" and text[-2] not in "eEpP":
                text = text[:-1]
            tokens.append(Token(NUMBER, text, line))
            last_token_line = line
            i += len(text)
        else:
            for width, table in ((3, _PUNCT3), (2, _PUNCT2)):
                if source[i : i + width] in table:
                    text = source[i : i + width]
                    break
            else:
                text = c
            tokens.append(Token(PUNCT, text, line))
            last_token_line = line
            i += len(text)
    newline_semicolon()
    return tokens, comments


def comment_groups(comments: list[Comment]) -> dict[int, list[Comment]]:
    """Comment groups by their last line, grouped as go/parser groups them: comments on adjacent
    lines form a group, and a comment on the same line as the token before it forms a group of its
    own."""
    groups: list[list[Comment]] = []
    for comment in comments:
        previous = groups[-1][-1] if groups else None
        if previous and not comment.trailing and not previous.trailing and comment.line <= previous.end_line + 1:
            groups[-1].append(comment)
        else:
            groups.append([comment])
    return {group[-1].end_line: group for group in groups}


_DIRECTIVE = re.compile(r"^([a-z0-9]+:[a-z0-9]|line |extern |export )")


def comment_text_lines(group: list[Comment]) -> list[str]:
    """The lines of ``go/ast.CommentGroup.Text()``, split as gengo splits them."""
    lines: list[str] = []
    for comment in group:
        text = comment.text
        if text.startswith("//"):
            text = text[2:]
            if text.startswith(" "):
                text = text[1:]
            elif text and _DIRECTIVE.match(text):
                continue
        else:
            text = text[2:-2]
        lines.extend(part.rstrip() for part in text.split("\n"))
    # Drop leading and trailing blank lines; fold runs of blank lines into one.
    folded: list[str] = []
    for text_line in lines:
        if not text_line and (not folded or not folded[-1]):
            continue
        folded.append(text_line)
    while folded and not folded[-1]:
        folded.pop()
    return folded


# ---------------------------------------------------------------------------------------------
# Declarations


@dataclass(slots=True)
class GoField:
    name: str  # the Go field name (for an embedded field, the type's name)
    type: str  # the type expression, e.g. "*metav1.LabelSelector", "[]Container", "map[string]string"
    tag: str  # the raw struct tag, without backquotes
    embedded: bool
    doc: list[str]

    def tag_value(self, key: str) -> str | None:
        return struct_tag_lookup(self.tag, key)


@dataclass(slots=True)
class GoStruct:
    name: str
    fields: list[GoField]
    doc: list[str]
    # The comment group before the doc comment, separated by one blank line (gengo's
    # SecondClosestCommentLines), where package-wide markers such as +genclient live.
    detached_doc: list[str]


@dataclass(slots=True)
class GoNamedType:
    """A named type that is not a struct, e.g. ``type Protocol string``."""

    name: str
    underlying: str
    doc: list[str]
    alias: bool  # ``type A = B``


@dataclass(slots=True)
class GoConst:
    name: str
    type: str | None  # as written, or inherited from the constant it refers to
    value: str | None  # the string value, if it is a string constant
    doc: list[str]
    ref: str | None  # the identifier it was defined from (``const A = B``), if any


@dataclass(slots=True)
class GoFile:
    path: Path
    imports: dict[str, str]  # local name -> import path


@dataclass
class GoPackage:
    import_path: str
    structs: dict[str, GoStruct] = field(default_factory=dict)
    named: dict[str, GoNamedType] = field(default_factory=dict)
    consts: dict[str, GoConst] = field(default_factory=dict)
    # Types with a MarshalJSON method: their JSON form is their own, not their fields'.
    custom_json: set[str] = field(default_factory=set)
    # The imports of the file each type was declared in.
    imports_of: dict[str, dict[str, str]] = field(default_factory=dict)

    def resolve(self, type_name: str, where: str) -> tuple[str, str]:
        """(import path, name) of a type expression's named type as seen from type ``where``."""
        if "." in type_name:
            alias, name = type_name.split(".", 1)
            return self.imports_of[where].get(alias, alias), name
        return self.import_path, type_name


def _skip_balanced(tokens: list[Token], i: int) -> int:
    """From an opening bracket at i, the index after its matching closing bracket."""
    pairs = {"(": ")", "[": "]", "{": "}"}
    stack = [pairs[tokens[i].text]]
    i += 1
    while stack:
        tok = tokens[i]
        if tok.kind == PUNCT:
            if tok.text in pairs:
                stack.append(pairs[tok.text])
            elif tok.text == stack[-1]:
                stack.pop()
        i += 1
    return i


class _FileParser:
    def __init__(self, path: Path, package: GoPackage) -> None:
        source = path.read_text()
        self.tokens, comments = lex(source)
        self.groups = comment_groups(comments)
        self.package = package
        self.imports: dict[str, str] = {}
        self.path = path

    def doc(self, line: int) -> list[str]:
        group = self.groups.get(line - 1)
        return comment_text_lines(group) if group else []

    def detached_doc(self, line: int) -> list[str]:
        group = self.groups.get(line - 1)
        start = group[0].line if group else line
        detached = self.groups.get(start - 2)
        return comment_text_lines(detached) if detached else []

    def parse(self) -> None:
        toks, i = self.tokens, 0
        while i < len(toks):
            tok = toks[i]
            if tok.kind == IDENT and tok.text in ("import", "type", "const") and self._at_statement_start(i):
                parse = {"import": self._import_spec, "type": self._type_spec, "const": self._const_spec}[tok.text]
                i += 1
                if toks[i].text == "(":
                    i += 1
                    state: dict[str, object] = {}
                    while toks[i].text != ")":
                        if toks[i].kind == SEMI:
                            i += 1
                            continue
                        i = parse(i, state)
                    i += 1
                else:
                    i = parse(i, {})
            elif tok.kind == IDENT and tok.text == "func" and self._at_statement_start(i):
                i = self._func(i)
            elif tok.kind == PUNCT and tok.text in "([{":
                i = _skip_balanced(toks, i)
            else:
                i += 1

    def _at_statement_start(self, i: int) -> bool:
        return i == 0 or self.tokens[i - 1].kind == SEMI

    def _end_of_spec(self, i: int) -> int:
        toks = self.tokens
        while toks[i].kind != SEMI and toks[i].text != ")":
            i = _skip_balanced(toks, i) if toks[i].kind == PUNCT and toks[i].text in "([{" else i + 1
        return i + 1 if toks[i].kind == SEMI else i

    def _import_spec(self, i: int, state: dict[str, object]) -> int:
        toks = self.tokens
        if toks[i].kind == STRING:
            path = json.loads(toks[i].text)
            self.imports[path.rsplit("/", 1)[-1]] = path
        else:
            self.imports[toks[i].text] = json.loads(toks[i + 1].text)
        return self._end_of_spec(i)

    def _func(self, i: int) -> int:
        toks = self.tokens
        i += 1
        receiver = None
        if toks[i].text == "(":
            end = _skip_balanced(toks, i)
            receiver = [t.text for t in toks[i + 1 : end - 1] if t.kind == IDENT]
            i = end
        name = toks[i].text
        if receiver and name == "MarshalJSON":
            self.package.custom_json.add(receiver[-1])
        # Skip the signature and the body.
        while not (toks[i].kind == PUNCT and toks[i].text == "{") and toks[i].kind != SEMI:
            i = _skip_balanced(toks, i) if toks[i].kind == PUNCT and toks[i].text in "([" else i + 1
        if toks[i].text == "{":
            i = _skip_balanced(toks, i)
        return i

    def _type_expr(self, i: int) -> tuple[str, int]:
        """A type expression's text, up to a struct tag, ``;``, ``=`` or a closing bracket."""
        toks, parts = self.tokens, []
        while True:
            tok = toks[i]
            if tok.kind in (SEMI, STRING) or tok.text in (")", "}", "=", ","):
                break
            if tok.kind == PUNCT and tok.text == "[":
                end = _skip_balanced(toks, i)
                parts.append("".join(t.text for t in toks[i:end]))
                i = end
                continue
            if tok.kind == IDENT and tok.text in ("struct", "interface") and toks[i + 1].text == "{":
                end = _skip_balanced(toks, i + 1)
                parts.append(tok.text + "{...}")
                i = end
                continue
            if tok.kind == IDENT and tok.text == "func":
                end = _skip_balanced(toks, i + 1)
                parts.append("func(...)")
                i = end
                continue
            parts.append(tok.text)
            i += 1
        return "".join(parts), i

    def _type_spec(self, i: int, state: dict[str, object]) -> int:
        toks = self.tokens
        name_tok = toks[i]
        name = name_tok.text
        i += 1
        if toks[i].text == "[":  # generic type parameters: not in API packages
            i = _skip_balanced(toks, i)
        alias = toks[i].text == "="
        if alias:
            i += 1
        doc, detached = self.doc(name_tok.line), self.detached_doc(name_tok.line)
        self.package.imports_of[name] = self.imports
        if toks[i].kind == IDENT and toks[i].text == "struct" and toks[i + 1].text == "{":
            end = _skip_balanced(toks, i + 1)
            self.package.structs[name] = GoStruct(name, self._fields(i + 2, end - 1), doc, detached)
            return self._end_of_spec(end)
        underlying, i = self._type_expr(i)
        self.package.named[name] = GoNamedType(name, underlying, doc, alias)
        return self._end_of_spec(i)

    def _fields(self, i: int, end: int) -> list[GoField]:
        toks, fields = self.tokens, []
        while i < end:
            if toks[i].kind == SEMI:
                i += 1
                continue
            first = toks[i]
            doc = self.doc(first.line)
            names: list[str] = []
            # Named fields: IDENT [, IDENT]* TYPE; embedded: [*]IDENT[.IDENT]
            j = i
            while toks[j].kind == IDENT and toks[j + 1].text == ",":
                names.append(toks[j].text)
                j += 2
            nxt = toks[j + 1] if toks[j].kind == IDENT else None
            embedded = first.text == "*" or (nxt is not None and (nxt.text == "." or nxt.kind in (SEMI, STRING)))
            if embedded:
                type_text, j = self._type_expr(i)
                names = [type_text.lstrip("*").rsplit(".", 1)[-1]]
            else:
                names.append(toks[j].text)
                type_text, j = self._type_expr(j + 1)
            tag = ""
            if toks[j].kind == STRING:
                raw = toks[j].text
                tag = raw[1:-1] if raw.startswith("`") else json.loads(raw)
                j += 1
            fields.extend(GoField(name, type_text, tag, embedded, doc) for name in names)
            i = j
        return fields

    def _const_spec(self, i: int, state: dict[str, object]) -> int:
        """One ``Name [Type] [= value]`` of a const declaration. A spec without a value repeats
        the previous one's type and value (``state["last"]``), as Go's iota blocks do."""
        toks = self.tokens
        names = [toks[i]]
        j = i + 1
        while toks[j].text == ",":
            names.append(toks[j + 1])
            j += 2
        type_text: str | None = None
        if toks[j].kind != SEMI and toks[j].text not in ("=", ")"):
            type_text, j = self._type_expr(j)
        value_tokens: list[Token] = []
        if toks[j].text == "=":
            start = j + 1
            j = self._end_of_spec(start)
            value_tokens = [t for t in toks[start:j] if t.kind != SEMI and t.text != ")"]
            state["last"] = (type_text, value_tokens)
        else:
            if "last" in state:
                type_text, value_tokens = state["last"]  # type: ignore[misc]
            j = self._end_of_spec(j)
        if len(names) == 1:  # API enums are one constant per line
            value, ref = _const_value(value_tokens)
            if type_text is None and value is not None and len(value_tokens) == 4:
                type_text = value_tokens[0].text  # T("x")
            name = names[0].text
            self.package.consts[name] = GoConst(name, type_text, value, self.doc(names[0].line), ref)
            self.package.imports_of[name] = self.imports
        return j


def _const_value(tokens: list[Token]) -> tuple[str | None, str | None]:
    """The string value of a constant expression (a literal or T(literal)), or the identifier it
    refers to."""
    if len(tokens) == 1 and tokens[0].kind == STRING:
        return _string_literal(tokens[0].text), None
    if len(tokens) == 4 and tokens[1].text == "(" and tokens[2].kind == STRING:
        return _string_literal(tokens[2].text), None
    if len(tokens) == 1 and tokens[0].kind == IDENT:
        return None, tokens[0].text
    if len(tokens) == 3 and tokens[1].text == "." and tokens[0].kind == tokens[2].kind == IDENT:
        return None, tokens[0].text + "." + tokens[2].text
    return None, None


def _string_literal(text: str) -> str:
    if text.startswith("`"):
        return text[1:-1]
    return json.loads(text)


def struct_tag_lookup(tag: str, key: str) -> str | None:
    """reflect.StructTag.Lookup: the value of ``key:"value"`` in a struct tag."""
    for m in re.finditer(r'([^\s:"]+):("(?:[^"\\]|\\.)*")', tag):
        if m.group(1) == key:
            return json.loads(m.group(2))
    return None


SKIPPED_FILES = re.compile(r"(_test\.go|^generated\.pb\.go|^zz_generated.*|^types_swagger_doc_generated\.go)$")


def parse_package(directory: Path, import_path: str) -> GoPackage:
    """Every declaration of interest in the Go package in ``directory``."""
    package = GoPackage(import_path)
    for path in sorted(directory.glob("*.go")):
        if SKIPPED_FILES.search(path.name) or not _built_by_default(path):
            continue
        _FileParser(path, package).parse()
    _resolve_const_refs(package)
    return package


_BUILD_LINE = re.compile(r"^//go:build (.+)$", re.MULTILINE)


def _built_by_default(path: Path) -> bool:
    """Whether a plain ``go build`` (no build tags set) compiles the file: its ``//go:build``
    expression with every tag false (API packages use tags only for variants such as
    meta/v1's fieldsv1string)."""
    m = _BUILD_LINE.search(path.read_text().split("\npackage ", 1)[0])
    if m is None:
        return True
    expr = re.sub(r"[A-Za-z_][A-Za-z0-9_.]*", "False", m.group(1))
    expr = expr.replace("&&", " and ").replace("||", " or ").replace("!", " not ")
    return bool(eval(expr, {"__builtins__": {}}))  # only False, and, or, not and parentheses remain


def _resolve_const_refs(package: GoPackage) -> None:
    """``const A = B``: A has B's type and value (within the package)."""
    for _ in range(3):
        for const in package.consts.values():
            target = package.consts.get(const.ref or "")
            if target is None:
                continue
            if const.value is None:
                const.value = target.value
            if const.type is None:
                const.type = target.type
