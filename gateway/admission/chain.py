"""The admission chain: kube-apiserver's plugin names, their order, and which run.

Every plugin has upstream's name and place (pkg/kubeapiserver/options/plugins.go, 1.32): the
mutating ones (those with ``admit``) run in that order, then the validating ones (``validate``) in
that order. ``--enable-admission-plugins`` adds plugins to the default set,
``--disable-admission-plugins`` takes them out; the order is always upstream's, whatever the
flags' order. A plugin upstream has and protokube does not is refused when asked for by name,
never silently left out.
"""

from __future__ import annotations

import importlib
import logging
from collections.abc import Callable
from types import ModuleType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from protokube.gateway.admission.context import PluginContext
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

PluginFactory = Callable[["PluginContext"], object]


def _module(name: str) -> ModuleType:
    """A plugin's module under gateway/admission/, imported when the chain is built: reading the
    flags needs only the names, and the plugins' imports (CEL, x509, the registry) are a large part
    of the server's start (issue 33)."""
    return importlib.import_module(f"protokube.gateway.admission.{name}")


# The plugins protokube has, by upstream's name.
FACTORIES: dict[str, PluginFactory] = {
    "NamespaceAutoProvision": lambda c: _module("namespace").NamespaceAutoProvision(c.cachers[NAMESPACES], c.stores),
    "NamespaceLifecycle": lambda c: _module("namespace").NamespaceLifecycle(c.cachers[NAMESPACES]),
    "NamespaceExists": lambda c: _module("namespace").NamespaceExists(c.cachers[NAMESPACES]),
    "LimitRanger": lambda c: _module("limitranger").LimitRanger(c.cachers[LIMIT_RANGES]),
    "ServiceAccount": lambda c: _module("serviceaccount").ServiceAccount(c.cachers[SERVICE_ACCOUNTS]),
    "TaintNodesByCondition": lambda c: _module("nodetaint").TaintNodesByCondition(),
    "PodSecurity": lambda c: _module("podsecurity").new(
        c.configuration.get("PodSecurity"), c.cachers[NAMESPACES], c.cacher(PODS)
    ),
    "Priority": lambda c: _module("pods").Priority(c.cacher(PRIORITY_CLASSES)),
    "DefaultTolerationSeconds": lambda c: _module("pods").DefaultTolerationSeconds(),
    "DefaultStorageClass": lambda c: _module("storageclass").DefaultStorageClass(c.cachers[STORAGE_CLASSES]),
    "StorageObjectInUseProtection": lambda c: _module("inuseprotection").StorageObjectInUseProtection(),
    "PersistentVolumeClaimResize": lambda c: _module("pvcresize").PersistentVolumeClaimResize(
        c.cachers[STORAGE_CLASSES]
    ),
    "RuntimeClass": lambda c: _module("runtimeclass").RuntimeClass(c.cachers[RUNTIME_CLASSES]),
    "CertificateApproval": lambda c: _module("certificates").CertificateApproval(c.authorizer),
    "CertificateSigning": lambda c: _module("certificates").CertificateSigning(c.authorizer),
    "ClusterTrustBundleAttest": lambda c: _module("clustertrustbundles").ClusterTrustBundleAttest(c.authorizer),
    "CertificateSubjectRestriction": lambda c: _module("certificates").CertificateSubjectRestriction(),
    "DefaultIngressClass": lambda c: _module("ingressclass").DefaultIngressClass(c.cachers[INGRESS_CLASSES]),
    "ResourceQuota": lambda c: _module("resourcequota").ResourceQuota(
        c.cachers[RESOURCE_QUOTAS],
        c.stores,
        _module("resourcequota").parse_configuration(c.configuration.get("ResourceQuota")),
    ),
    "ValidatingAdmissionPolicy": lambda c: _module("policy.plugin").ValidatingAdmissionPolicy(
        c.cachers, c.registry, c.authorizer
    ),
    "MutatingAdmissionWebhook": lambda c: _module("webhook.mutating").MutatingAdmissionWebhook.of(c, mutating=True),
    "ValidatingAdmissionWebhook": lambda c: _module("webhook.validating").ValidatingAdmissionWebhook.of(
        c, mutating=False
    ),
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


def _configuration(module: str) -> Callable[[Any], object]:
    """The ``parse`` of ``module`` for a plugin's configuration; none (the plugin's defaults) is not
    parsed, so that reading the flags imports no plugin."""

    def parse(raw: Any) -> object:
        return None if raw is None else _module(module).parse(raw)

    return parse


# Plugins' configurations are parsed when the flags are read: one that cannot be used stops the start.
CONFIGURATION_PARSERS: dict[str, Callable[[Any], object]] = {
    "PodSecurity": _configuration("podsecurity.configuration"),
    "ResourceQuota": _configuration("resourcequota.configuration"),
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
    from protokube.gateway.registry.admission import Admission  # with the plugins: see _module

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
