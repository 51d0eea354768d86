"""Run a ValidatingAdmissionPolicy's CEL the way kube-apiserver does, in two
real CEL implementations: cel-python (``celpy``) and common-expression-language
(``cel``, Rust's cel-interpreter). The matchConditions first (one false: the
request is not checked); then the variables in order, each seeing
``object``, ``oldObject`` (null on CREATE), ``request.operation`` and the
``variables`` before it; then each validation, and the messageExpression of
those that fail. Both implementations must agree.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import cel
import celpy
from celpy import celtypes
from celpy.evaluation import CELEvalError


class PolicyError(AssertionError):
    """An expression that does not compile or fails at run time."""


def _to_python(value: Any) -> Any:
    if isinstance(value, CELEvalError):
        raise PolicyError(f"celpy: {value}")
    if isinstance(value, celtypes.BoolType):
        return bool(value)
    if isinstance(value, (celtypes.IntType, celtypes.UintType)):
        return int(value)
    if isinstance(value, celtypes.StringType):
        return str(value)
    if isinstance(value, celtypes.MapType):
        return {_to_python(k): _to_python(v) for k, v in value.items()}
    if isinstance(value, celtypes.ListType):
        return [_to_python(v) for v in value]
    return value


@dataclass
class Verdict:
    messages: list[str]  # one per failed validation, in order
    variables: dict[str, Any]
    matched: bool = True  # False: a matchCondition left the request unchecked

    @property
    def allowed(self) -> bool:
        return not self.messages


class Evaluator:
    def __init__(self, policy: dict[str, Any]) -> None:
        spec = policy["spec"]
        self.env = celpy.Environment()
        self.variables = [(v["name"], v["expression"]) for v in spec["variables"]]
        self.validations = [(v["expression"], v["messageExpression"]) for v in spec["validations"]]
        self.conditions = [c["expression"] for c in spec.get("matchConditions", [])]
        self.py: dict[str, Any] = {}
        self.rust: dict[str, Any] = {}
        for expr in self.conditions + [e for _, e in self.variables] + [e for pair in self.validations for e in pair]:
            try:
                self.py[expr] = self.env.program(self.env.compile(expr))
            except Exception as error:  # noqa: BLE001 - any compile error fails the test
                raise PolicyError(f"celpy cannot compile {expr[:200]!r}: {error}") from None
            try:
                self.rust[expr] = cel.compile(expr)
            except Exception as error:  # noqa: BLE001
                raise PolicyError(f"cel cannot compile {expr[:200]!r}: {error}") from None
        # Constant variables (no object, no other variable) are the same for
        # every request: kube-apiserver folds them; here they are run once.
        self.constants: dict[str, tuple[Any, Any]] = {}
        for name, expr in self.variables:
            if not any(word in expr for word in ("object", "oldObject", "request", "variables.")):
                self.constants[name] = (self.py[expr].evaluate({}), _to_python(self.py[expr].evaluate({})))

    def _run(self, expr: str, obj_py: Any, vars_py: dict[str, Any], obj: Any, vars_plain: dict[str, Any]) -> Any:
        used = [k for k in vars_py if f"variables.{k}" in expr]  # pass only what the expression reads
        activation = {
            **self._request_py,
            "object": obj_py,
            "variables": celtypes.MapType({celtypes.StringType(k): vars_py[k] for k in used}),
        }
        mine = _to_python(self.py[expr].evaluate(activation))
        try:
            theirs = self.rust[expr].execute(
                {**self._request, "object": obj, "variables": {k: vars_plain[k] for k in used}}
            )
        except Exception as error:  # noqa: BLE001
            raise PolicyError(f"cel fails on {expr[:200]!r}: {error}") from None
        if mine != theirs:
            raise PolicyError(f"the two CEL implementations disagree on {expr[:200]!r}: {mine!r} != {theirs!r}")
        return mine

    def __call__(self, obj: dict[str, Any], old: dict[str, Any] | None = None, operation: str = "") -> Verdict:
        """The verdict on a CREATE of ``obj``, or an UPDATE from ``old`` (``operation`` defaults so)."""
        operation = operation or ("UPDATE" if old is not None else "CREATE")
        self._request = {"oldObject": old, "request": {"operation": operation}}
        self._request_py = {k: celpy.json_to_cel(v) for k, v in self._request.items()}
        obj_py = celpy.json_to_cel(obj)
        vars_py: dict[str, Any] = {}
        vars_plain: dict[str, Any] = {}
        for condition in self.conditions:
            matched = self._run(condition, obj_py, vars_py, obj, vars_plain)
            if matched is not True and matched is not False:
                raise PolicyError(f"matchCondition {condition!r} gave {matched!r}, not a bool")
            if not matched:
                return Verdict([], {}, matched=False)
        for name, expr in self.variables:
            if name in self.constants:
                vars_py[name], vars_plain[name] = self.constants[name]
                continue
            value = self._run(expr, obj_py, vars_py, obj, vars_plain)
            vars_plain[name] = value
            vars_py[name] = celpy.json_to_cel(value)
        messages = []
        for expr, message in self.validations:
            ok = self._run(expr, obj_py, vars_py, obj, vars_plain)
            if ok is not True and ok is not False:
                raise PolicyError(f"{expr!r} gave {ok!r}, not a bool")
            if not ok:
                text = self._run(message, obj_py, vars_py, obj, vars_plain)
                if not isinstance(text, str):
                    raise PolicyError(f"messageExpression gave {text!r}")
                messages.append(text)
        return Verdict(messages, {k: v for k, v in vars_plain.items() if k not in self.constants})
