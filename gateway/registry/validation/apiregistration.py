"""apiregistration.k8s.io/v1 (kube-aggregator pkg/apis/apiregistration/validation): an APIService
is named ``<version>.<group>``; local ones (no service) carry no TLS settings."""

from __future__ import annotations

from google.protobuf.message import Message

import protokube.gen.protokube.options.v1.options_pb2 as opts
from protokube.gateway.errors import FieldError
from protokube.gateway.registry.validation.base import validator
from protokube.gateway.registry.validation.meta import name_problems

MAX_GROUP_PRIORITY, MAX_VERSION_PRIORITY = 20000, 1000


@validator("k8s.io.kube_aggregator.pkg.apis.apiregistration.v1.APIService")
def validate_apiservice(obj: Message, old: Message | None) -> list[FieldError]:
    spec = obj.spec
    errors: list[FieldError] = []
    required_name = f"{spec.version}.{spec.group}"
    if obj.metadata.name != required_name:
        detail = f'must be `spec.version+"."+spec.group`: "{required_name}"'
        errors.append(FieldError.invalid("metadata.name", obj.metadata.name, detail))
    if spec.group:
        problems = name_problems(opts.NAME_RULE_UNSPECIFIED, spec.group)
        errors += [FieldError.invalid("spec.group", spec.group, p) for p in problems]
    if not spec.version:
        errors.append(FieldError.required("spec.version"))
    else:
        problems = name_problems(opts.NAME_RULE_DNS1035_LABEL, spec.version)
        errors += [FieldError.invalid("spec.version", spec.version, p) for p in problems]
    if not 0 < spec.groupPriorityMinimum <= MAX_GROUP_PRIORITY:
        detail = f"must be positive and less than {MAX_GROUP_PRIORITY}"
        errors.append(FieldError.invalid("spec.groupPriorityMinimum", spec.groupPriorityMinimum, detail))
    if not 0 < spec.versionPriority <= MAX_VERSION_PRIORITY:
        detail = f"must be positive and less than {MAX_VERSION_PRIORITY}"
        errors.append(FieldError.invalid("spec.versionPriority", spec.versionPriority, detail))
    if not spec.HasField("service"):
        if spec.caBundle:
            detail = "local APIServices may not have a caBundle"
            errors.append(FieldError.invalid("spec.caBundle", f"{len(spec.caBundle)} bytes", detail))
        if spec.insecureSkipTLSVerify:
            detail = "local APIServices may not have insecureSkipTLSVerify"
            errors.append(FieldError.invalid("spec.insecureSkipTLSVerify", True, detail))
        return errors
    if not spec.service.namespace:
        errors.append(FieldError.required("spec.service.namespace"))
    if not spec.service.name:
        errors.append(FieldError.required("spec.service.name"))
    if spec.insecureSkipTLSVerify and spec.caBundle:
        detail = "may not be true if caBundle is present"
        errors.append(FieldError.invalid("spec.insecureSkipTLSVerify", True, detail))
    return errors
