"""The admission chain: kube-apiserver's plugin names, their order, and which run.

Every plugin has upstream's name and place (pkg/kubeapiserver/options/plugins.go, 1.32): the
mutating ones (those with ``admit``) run in that order, then the validating ones (``validate``) in
that order. ``--enable-admission-plugins`` adds plugins to the default set,
``--disable-admission-plugins`` takes them out; the order is always upstream's, whatever the
flags' order. A plugin upstream has and protokube does not is refused when asked for by name,
never silently left out.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from protokube.gateway.admission import certificates, podsecurity
from protokube.gateway.admission.clustertrustbundles import ClusterTrustBundleAttest
from protokube.gateway.admission.context import PluginContext
from protokube.gateway.admission.ingressclass import DefaultIngressClass
from protokube.gateway.admission.inuseprotection import StorageObjectInUseProtection
from protokube.gateway.admission.limitranger import LimitRanger
from protokube.gateway.admission.namespace import NamespaceAutoProvision, NamespaceExists, NamespaceLifecycle
from protokube.gateway.admission.nodetaint import TaintNodesByCondition
from protokube.gateway.admission.pods import DefaultTolerationSeconds, Priority
from protokube.gateway.admission.policy.plugin import ValidatingAdmissionPolicy
from protokube.gateway.admission.pvcresize import PersistentVolumeClaimResize
from protokube.gateway.admission.resourcequota import ResourceQuota, parse_configuration
from protokube.gateway.admission.runtimeclass import RuntimeClass
from protokube.gateway.admission.serviceaccount import ServiceAccount
from protokube.gateway.admission.storageclass import DefaultStorageClass
from protokube.gateway.admission.webhook.mutating import MutatingAdmissionWebhook
from protokube.gateway.admission.webhook.validating import ValidatingAdmissionWebhook
from protokube.gateway.registry.admission import Admission, MutatingPlugin, Plugin

log = logging.getLogger(__name__)

# Upstream's AllOrderedPlugins as kube-apiserver 1.32 has them.
ORDER = (
    "AlwaysAdmit",
    "NamespaceAutoProvision",
    "NamespaceLifecycle",
    "NamespaceExists",
    "LimitPodHardAntiAffinityTopology",
    "LimitRanger",
    "ServiceAccount",
    "NodeRestriction",
    "TaintNodesByCondition",
    "AlwaysPullImages",
    "ImagePolicyWebhook",
    "PodSecurity",
    "PodNodeSelector",
    "Priority",
    "DefaultTolerationSeconds",
    "PodTolerationRestriction",
    "EventRateLimit",
    "ExtendedResourceToleration",
    "DefaultStorageClass",
    "StorageObjectInUseProtection",
    "OwnerReferencesPermissionEnforcement",
    "PersistentVolumeClaimResize",
    "RuntimeClass",
    "CertificateApproval",
    "CertificateSigning",
    "ClusterTrustBundleAttest",
    "CertificateSubjectRestriction",
    "DefaultIngressClass",
    "DenyServiceExternalIPs",
    "MutatingAdmissionPolicy",
    "MutatingAdmissionWebhook",
    "ValidatingAdmissionPolicy",
    "ValidatingAdmissionWebhook",
    "ResourceQuota",
    "AlwaysDeny",
)

# kube-apiserver 1.32's default-on set (MutatingAdmissionPolicy's feature gate is off there).
DEFAULT_ON = frozenset(
    {
        "NamespaceLifecycle",
        "LimitRanger",
        "ServiceAccount",
        "TaintNodesByCondition",
        "PodSecurity",
        "Priority",
        "DefaultTolerationSeconds",
        "DefaultStorageClass",
        "StorageObjectInUseProtection",
        "PersistentVolumeClaimResize",
        "RuntimeClass",
        "CertificateApproval",
        "CertificateSigning",
        "ClusterTrustBundleAttest",
        "CertificateSubjectRestriction",
        "DefaultIngressClass",
        "MutatingAdmissionWebhook",
        "ValidatingAdmissionPolicy",
        "ValidatingAdmissionWebhook",
        "ResourceQuota",
    }
)


NAMESPACES = ("", "v1", "namespaces")
PRIORITY_CLASSES = ("scheduling.k8s.io", "v1", "priorityclasses")
LIMIT_RANGES = ("", "v1", "limitranges")
RESOURCE_QUOTAS = ("", "v1", "resourcequotas")
PODS = ("", "v1", "pods")
SERVICE_ACCOUNTS = ("", "v1", "serviceaccounts")
STORAGE_CLASSES = ("storage.k8s.io", "v1", "storageclasses")
INGRESS_CLASSES = ("networking.k8s.io", "v1", "ingressclasses")
RUNTIME_CLASSES = ("node.k8s.io", "v1", "runtimeclasses")

PluginFactory = Callable[[PluginContext], object]

# The plugins protokube has, by upstream's name.
FACTORIES: dict[str, PluginFactory] = {
    "NamespaceAutoProvision": lambda context: NamespaceAutoProvision(context.cachers[NAMESPACES], context.stores),
    "NamespaceLifecycle": lambda context: NamespaceLifecycle(context.cachers[NAMESPACES]),
    "NamespaceExists": lambda context: NamespaceExists(context.cachers[NAMESPACES]),
    "LimitRanger": lambda context: LimitRanger(context.cachers[LIMIT_RANGES]),
    "ServiceAccount": lambda context: ServiceAccount(context.cachers[SERVICE_ACCOUNTS]),
    "TaintNodesByCondition": lambda context: TaintNodesByCondition(),
    "PodSecurity": lambda context: podsecurity.new(
        context.configuration.get("PodSecurity"), context.cachers[NAMESPACES], context.cacher(PODS)
    ),
    "Priority": lambda context: Priority(context.cacher(PRIORITY_CLASSES)),
    "DefaultTolerationSeconds": lambda context: DefaultTolerationSeconds(),
    "DefaultStorageClass": lambda context: DefaultStorageClass(context.cachers[STORAGE_CLASSES]),
    "StorageObjectInUseProtection": lambda context: StorageObjectInUseProtection(),
    "PersistentVolumeClaimResize": lambda context: PersistentVolumeClaimResize(context.cachers[STORAGE_CLASSES]),
    "RuntimeClass": lambda context: RuntimeClass(context.cachers[RUNTIME_CLASSES]),
    "CertificateApproval": lambda context: certificates.CertificateApproval(context.authorizer),
    "CertificateSigning": lambda context: certificates.CertificateSigning(context.authorizer),
    "ClusterTrustBundleAttest": lambda context: ClusterTrustBundleAttest(context.authorizer),
    "CertificateSubjectRestriction": lambda context: certificates.CertificateSubjectRestriction(),
    "DefaultIngressClass": lambda context: DefaultIngressClass(context.cachers[INGRESS_CLASSES]),
    "ResourceQuota": lambda context: ResourceQuota(
        context.cachers[RESOURCE_QUOTAS],
        context.stores,
        parse_configuration(context.configuration.get("ResourceQuota")),
    ),
    "ValidatingAdmissionPolicy": lambda context: ValidatingAdmissionPolicy(
        context.cachers, context.registry, context.authorizer
    ),
    "MutatingAdmissionWebhook": lambda context: MutatingAdmissionWebhook.of(context, mutating=True),
    "ValidatingAdmissionWebhook": lambda context: ValidatingAdmissionWebhook.of(context, mutating=False),
}

ADMISSION_GROUP = "admissionregistration.k8s.io"
# What a plugin reads its rules from: when --runtime-config turns those resources off, none can
# exist, and the plugin does not run (logged at start).
SERVED_FROM: dict[str, tuple[tuple[str, str, str], ...]] = {
    "LimitRanger": (LIMIT_RANGES,),
    "ServiceAccount": (SERVICE_ACCOUNTS,),
    "ResourceQuota": (RESOURCE_QUOTAS,),
    "DefaultStorageClass": (STORAGE_CLASSES,),
    "PersistentVolumeClaimResize": (STORAGE_CLASSES,),
    "RuntimeClass": (RUNTIME_CLASSES,),
    "DefaultIngressClass": (INGRESS_CLASSES,),
    "ValidatingAdmissionPolicy": (
        (ADMISSION_GROUP, "v1", "validatingadmissionpolicies"),
        (ADMISSION_GROUP, "v1", "validatingadmissionpolicybindings"),
    ),
    "MutatingAdmissionWebhook": ((ADMISSION_GROUP, "v1", "mutatingwebhookconfigurations"),),
    "ValidatingAdmissionWebhook": ((ADMISSION_GROUP, "v1", "validatingwebhookconfigurations"),),
}

# Plugins' configurations are parsed when the flags are read: one that cannot be used stops the start.
CONFIGURATION_PARSERS: dict[str, Callable[[Any], object]] = {
    "PodSecurity": podsecurity.configuration.parse,
    "ResourceQuota": parse_configuration,
}


class AdmissionPluginError(ValueError):
    """A flag names a plugin that does not exist, or one protokube does not have."""


def enabled_plugins(enable: tuple[str, ...] = (), disable: tuple[str, ...] = ()) -> list[str]:
    """The plugins that run, in upstream's order: the default set, plus ``enable``, minus ``disable``
    (upstream's flags). A name upstream does not know is an error, as one protokube lacks when it
    is asked for explicitly; lacking ones of the default set are logged once."""
    for name in (*enable, *disable):
        if name not in ORDER:
            raise AdmissionPluginError(f'admission plugin "{name}" is unknown')
    missing = [name for name in enable if name not in FACTORIES]
    if missing:
        raise AdmissionPluginError(f"admission plugins not implemented by protokube: {', '.join(missing)}")
    wanted = (DEFAULT_ON | set(enable)) - set(disable)
    lacking = sorted(name for name in wanted if name not in FACTORIES)
    if lacking:
        log.info("default admission plugins protokube does not have yet: %s", ", ".join(lacking))
    return [name for name in ORDER if name in wanted and name in FACTORIES]


def build(
    names: list[str], context: PluginContext, first: tuple[Plugin, ...] = ()
) -> tuple[Admission, dict[str, object]]:
    """The chain of ``names`` (from ``enabled_plugins``), after ``first``: validators the server
    always runs (checks upstream makes in its storage layer, not as plugins). Returns it and the
    plugins by name."""
    unserved = {name: [k for k in SERVED_FROM.get(name, ()) if k not in context.cachers] for name in names}
    for name, keys in unserved.items():
        if keys:
            log.warning("admission plugin %s does not run: %s not served", name, ", ".join("/".join(k) for k in keys))
    plugins = {name: FACTORIES[name](context) for name in names if not unserved[name]}
    mutating: list[MutatingPlugin] = [p for p in plugins.values() if hasattr(p, "admit")]  # type: ignore[misc]
    validating: list[Plugin] = [p for p in plugins.values() if hasattr(p, "validate")]  # type: ignore[misc]
    mutating_names = [n for n, p in plugins.items() if hasattr(p, "admit")]
    validating_names = [n for n, p in plugins.items() if hasattr(p, "validate")]
    log.info(
        "Loaded %d mutating admission controller(s) successfully in the following order: %s.",
        len(mutating_names),
        ",".join(mutating_names),
    )
    log.info(
        "Loaded %d validating admission controller(s) successfully in the following order: %s.",
        len(validating_names),
        ",".join(validating_names),
    )
    return Admission([*first, *validating], mutating), plugins
