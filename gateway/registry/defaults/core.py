"""Core (v1) defaults: k8s.io/kubernetes pkg/apis/core/v1/defaults.go as of Kubernetes 1.32, with
that release's feature gates at their defaults (ImageVolume and PodLevelResources off,
LoadBalancerIPMode on)."""

from __future__ import annotations

from google.protobuf.message import Message

from protokube.gateway.registry.defaults.base import defaulter
from protokube.gateway.registry.defaults.values import (
    default,
    default_message,
    is_zero_int_or_string,
    pull_policy,
    round_up_to_milli,
    set_int_or_string,
)
from protokube.schema.descriptors import descriptor

CORE = "k8s.io.api.core.v1"
QUANTITY = "k8s.io.apimachinery.pkg.api.resource.Quantity"
METADATA_NAME_LABEL = "kubernetes.io/metadata.name"
FILE_MODE_DEFAULT = 0o644  # Secret, ConfigMap, DownwardAPI and projected volumes' defaultMode
TOKEN_EXPIRATION_SECONDS = 3600


def _register_resource_lists() -> None:
    """SetDefaults_ResourceList runs on every ResourceList (map of quantities) of core/v1."""
    for message in descriptor(f"{CORE}.Pod").file.message_types_by_name.values():
        lists = [
            f.name
            for f in message.fields
            if f.message_type is not None
            and f.message_type.GetOptions().map_entry
            and f.message_type.fields_by_name["value"].message_type is not None
            and f.message_type.fields_by_name["value"].message_type.full_name == QUANTITY
        ]
        if lists:
            defaulter(message.full_name)(lambda obj, names=tuple(lists): _round_lists(obj, names))


def _round_lists(obj: Message, names: tuple[str, ...]) -> None:
    for name in names:
        round_up_to_milli(obj, name)


_register_resource_lists()


@defaulter(f"{CORE}.ReplicationController")
def replication_controller(obj: Message) -> None:
    spec = obj.spec
    labels = spec.template.metadata.labels if spec.HasField("template") else {}
    if labels:
        if not spec.selector:
            spec.selector.update(labels)
        if not obj.metadata.labels:
            obj.metadata.labels.update(labels)
    default(spec, "replicas", 1)


@defaulter(f"{CORE}.Volume")
def volume(obj: Message) -> None:
    if not obj.volumeSource.ListFields():
        obj.volumeSource.emptyDir.SetInParent()


def _container(obj: Message) -> None:
    if not obj.imagePullPolicy:
        obj.imagePullPolicy = pull_policy(obj.image)
    if not obj.terminationMessagePath:
        obj.terminationMessagePath = "/dev/termination-log"
    if not obj.terminationMessagePolicy:
        obj.terminationMessagePolicy = "File"


defaulter(f"{CORE}.Container")(_container)
defaulter(f"{CORE}.EphemeralContainerCommon")(_container)


@defaulter(f"{CORE}.Service")
def service(obj: Message) -> None:
    spec = obj.spec
    if not spec.sessionAffinity:
        spec.sessionAffinity = "None"
    if spec.sessionAffinity == "None":
        spec.ClearField("sessionAffinityConfig")
    if spec.sessionAffinity == "ClientIP":
        config = spec.sessionAffinityConfig
        if not config.clientIP.HasField("timeoutSeconds"):
            config.Clear()
            config.clientIP.timeoutSeconds = 10800
    if not spec.type:
        spec.type = "ClusterIP"
    for port in spec.ports:
        if not port.protocol:
            port.protocol = "TCP"
        if is_zero_int_or_string(port.targetPort):
            set_int_or_string(port.targetPort, port.port)
    externally_accessible = spec.type in ("LoadBalancer", "NodePort") or (
        spec.type == "ClusterIP" and len(spec.externalIPs) > 0
    )
    if externally_accessible and not spec.externalTrafficPolicy:
        spec.externalTrafficPolicy = "Cluster"
    if spec.type in ("NodePort", "LoadBalancer", "ClusterIP"):
        default(spec, "internalTrafficPolicy", "Cluster")
    if spec.type == "LoadBalancer":
        default(spec, "allocateLoadBalancerNodePorts", True)
        for ingress in obj.status.loadBalancer.ingress:
            if ingress.ip:
                default(ingress, "ipMode", "VIP")


@defaulter(f"{CORE}.Pod")
def pod(obj: Message) -> None:
    spec = obj.spec
    for container in [*spec.containers, *spec.initContainers]:
        resources = container.resources
        for key, value in resources.limits.items():
            if key not in resources.requests:
                resources.requests[key].CopyFrom(value)
    default(spec, "enableServiceLinks", True)
    if spec.hostNetwork:
        for container in [*spec.containers, *spec.initContainers]:
            for port in container.ports:
                if port.hostPort == 0:
                    port.hostPort = port.containerPort


@defaulter(f"{CORE}.PodSpec")
def pod_spec(obj: Message) -> None:
    if not obj.dnsPolicy:
        obj.dnsPolicy = "ClusterFirst"
    if not obj.restartPolicy:
        obj.restartPolicy = "Always"
    default_message(obj, "securityContext")
    default(obj, "terminationGracePeriodSeconds", 30)
    if not obj.schedulerName:
        obj.schedulerName = "default-scheduler"
    # serviceAccount, deprecated, is serviceAccountName's alias (upstream's v1 conversion): taken when
    # serviceAccountName is empty, and always written as serviceAccountName.
    if not obj.serviceAccountName and obj.serviceAccount:
        obj.serviceAccountName = obj.serviceAccount
    if obj.serviceAccountName:
        obj.serviceAccount = obj.serviceAccountName


@defaulter(f"{CORE}.Probe")
def probe(obj: Message) -> None:
    for name, value in (("timeoutSeconds", 1), ("periodSeconds", 10), ("successThreshold", 1), ("failureThreshold", 3)):
        if getattr(obj, name) == 0:
            setattr(obj, name, value)


def _default_mode(obj: Message) -> None:
    default(obj, "defaultMode", FILE_MODE_DEFAULT)


for _source in ("SecretVolumeSource", "ConfigMapVolumeSource", "DownwardAPIVolumeSource", "ProjectedVolumeSource"):
    defaulter(f"{CORE}.{_source}")(_default_mode)


@defaulter(f"{CORE}.Secret")
def secret(obj: Message) -> None:
    if not obj.type:
        obj.type = "Opaque"


@defaulter(f"{CORE}.ServiceAccountTokenProjection")
def service_account_token_projection(obj: Message) -> None:
    default(obj, "expirationSeconds", TOKEN_EXPIRATION_SECONDS)


@defaulter(f"{CORE}.PersistentVolume")
def persistent_volume(obj: Message) -> None:
    if not obj.status.phase:
        obj.status.phase = "Pending"
    if not obj.spec.persistentVolumeReclaimPolicy:
        obj.spec.persistentVolumeReclaimPolicy = "Retain"
    default(obj.spec, "volumeMode", "Filesystem")


@defaulter(f"{CORE}.PersistentVolumeClaim")
def persistent_volume_claim(obj: Message) -> None:
    if not obj.status.phase:
        obj.status.phase = "Pending"


@defaulter(f"{CORE}.PersistentVolumeClaimSpec")
def persistent_volume_claim_spec(obj: Message) -> None:
    default(obj, "volumeMode", "Filesystem")


@defaulter(f"{CORE}.Endpoints")
def endpoints(obj: Message) -> None:
    for subset in obj.subsets:
        for port in subset.ports:
            if not port.protocol:
                port.protocol = "TCP"


@defaulter(f"{CORE}.HTTPGetAction")
def http_get_action(obj: Message) -> None:
    if not obj.path:
        obj.path = "/"
    if not obj.scheme:
        obj.scheme = "HTTP"


@defaulter(f"{CORE}.Namespace")
def namespace(obj: Message) -> None:
    """Every named namespace carries its name as a label (generateName: once the name exists)."""
    if obj.metadata.name:
        obj.metadata.labels[METADATA_NAME_LABEL] = obj.metadata.name


@defaulter(f"{CORE}.NamespaceStatus")
def namespace_status(obj: Message) -> None:
    if not obj.phase:
        obj.phase = "Active"


@defaulter(f"{CORE}.NodeStatus")
def node_status(obj: Message) -> None:
    if not obj.allocatable and obj.capacity:
        for key, value in obj.capacity.items():
            obj.allocatable[key].CopyFrom(value)


@defaulter(f"{CORE}.ObjectFieldSelector")
def object_field_selector(obj: Message) -> None:
    if not obj.apiVersion:
        obj.apiVersion = "v1"


@defaulter(f"{CORE}.LimitRangeItem")
def limit_range_item(obj: Message) -> None:
    """Container limits: default limit from max, default request from the default limit, then min."""
    if obj.type != "Container":
        return
    for source, target in (("max", "default"), ("default", "defaultRequest"), ("min", "defaultRequest")):
        wanted = getattr(obj, target)
        for key, value in getattr(obj, source).items():
            if key not in wanted:
                wanted[key].CopyFrom(value)


@defaulter(f"{CORE}.HostPathVolumeSource")
def host_path_volume_source(obj: Message) -> None:
    default(obj, "type", "")
