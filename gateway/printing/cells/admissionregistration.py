"""Cells of admissionregistration.k8s.io/v1 webhook configurations and validating admission
policies and bindings."""

from __future__ import annotations

from google.protobuf.message import Message

from protokube.gateway.printing.cells.base import Row, cell

UNSET = "<unset>"


@cell("webhook_count")
def webhook_count(row: Row) -> int:
    return len(row.obj.Webhooks)


@cell("policy_validations")
def policy_validations(row: Row) -> int:
    return len(row.obj.spec.validations)


@cell("policy_param_kind")
def policy_param_kind(row: Row) -> str:
    spec = row.obj.spec
    return f"{spec.paramKind.apiVersion}/{spec.paramKind.kind}" if spec.HasField("paramKind") else UNSET


def label_selector_string(selector: Message) -> str:
    """The Go String() of a *metav1.LabelSelector (gogo-protobuf's generated form)."""
    labels = "".join(f"{k}: {selector.matchLabels[k]}," for k in sorted(selector.matchLabels))
    requirements = "".join(
        f"LabelSelectorRequirement{{Key:{r.key},Operator:{r.operator},Values:[{' '.join(r.values)}],}},"
        for r in selector.matchExpressions
    )
    return (
        f"&LabelSelector{{MatchLabels:map[string]string{{{labels}}},"
        f"MatchExpressions:[]LabelSelectorRequirement{{{requirements}}},}}"
    )


@cell("policy_binding_param_ref")
def policy_binding_param_ref(row: Row) -> str:
    """The param: namespace/name, */name without a namespace, else its selector."""
    spec = row.obj.spec
    if not spec.HasField("paramRef"):
        return UNSET
    ref = spec.paramRef
    if ref.name:
        return f"{ref.namespace}/{ref.name}" if ref.namespace else f"*/{ref.name}"
    if ref.HasField("selector"):
        return label_selector_string(ref.selector)
    return UNSET
