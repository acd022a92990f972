"""What mypyc compiles differently from Python, checked in the sources of the compiled set
(protokube/compiled.py): in a compiled function a local name has one type, so ``except A as err``
followed by ``except B as err`` makes the second handler fail with a TypeError (``A object expected;
got B``) before its body runs: a 500 where a 400 was meant (a protobuf CRD nested too deep: an
EnvelopeError handler's name reused for a DecodeError)."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from protokube.compiled import COMPILED, source_of


def _reused_exception_names(tree: ast.AST) -> Iterator[tuple[str, int, str, set[str]]]:
    """(function, line, name, the types it is bound to) for every name two handlers of one function
    bind to different exception types."""
    for function in ast.walk(tree):
        if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        bound: dict[str, set[str]] = {}
        for node in ast.walk(function):
            if isinstance(node, ast.ExceptHandler) and node.name:
                kind = ast.unparse(node.type) if node.type is not None else "BaseException"
                bound.setdefault(node.name, set()).add(kind)
        for name, kinds in bound.items():
            if len(kinds) > 1:
                yield function.name, function.lineno, name, kinds


def test_no_compiled_function_binds_one_name_to_two_exception_types() -> None:
    found = [
        f"{source_of(module).name}:{line} {function}(): {name} is {' and '.join(sorted(kinds))}"
        for module in COMPILED
        for function, line, name, kinds in _reused_exception_names(ast.parse(source_of(module).read_text()))
    ]
    assert found == []


def test_the_check_finds_a_reused_name() -> None:
    source = "def f():\n    try: g()\n    except KeyError as err: h(err)\n    except ValueError as err: h(err)\n"
    assert list(_reused_exception_names(ast.parse(source))) == [("f", 1, "err", {"KeyError", "ValueError"})]
