"""CEL for admission (ValidatingAdmissionPolicy, webhook matchConditions) on cel-python, with the
Kubernetes CEL libraries that can be written on its extension points: lists, strings, regex, url,
quantity, ip and cidr. A function that is not there is refused when the expression compiles,
by name, never accepted and ignored.

    program = compile("object.spec.replicas <= 5", ["object", "oldObject"])
    program.evaluate({"object": {...}, "oldObject": None})   # BoolType(True)
"""

from protokube.gateway.cel.program import CELCompileError, CELEvaluationError, LazyMap, Program, compile
from protokube.gateway.cel.values import from_cel, to_cel

__all__ = ["CELCompileError", "CELEvaluationError", "LazyMap", "Program", "compile", "from_cel", "to_cel"]
