"""Pod specs and pod templates (core validation's ValidatePodSpec and what it calls): volumes,
containers (names, images, ports, env, mounts, probes, resources, security contexts), scheduling
fields, DNS, tolerations, affinity and topology spread — shared by Pods and every workload kind.

Fields upstream's defaulting always fills (restartPolicy, dnsPolicy, imagePullPolicy, probe
thresholds, ...) are checked when set: an empty one never reaches upstream's validation.
Feature gates are those of 1.32 (relaxed environment variable names on).
"""

from __future__ import annotations

from collections.abc import Iterable

from google.protobuf.message import Message

from protokube.gateway.errors import FieldError
from protokube.gateway.registry.validation.claims import claim_template_errors
from protokube.gateway.registry.validation.common import (
    MAX_INT32,
    annotations_errors,
    check,
    enum,
    int_or_string,
    invalid_each,
    ip_errors,
    label_selector_errors,
    labels_errors,
    nonnegative,
    parse_ip,
    quantity_value,
    required_then,
)
from protokube.gateway.registry.validation.resources import (
    container_resource_name_errors,
    quantity_value_errors,
    requirements_errors,
)
from protokube.gateway.syntax import (
    config_key_problems,
    dns1123_label_problems,
    dns1123_subdomain_problems,
    http_header_name_problems,
    inclusive_range_error,
    label_value_problems,
    port_name_problems,
    port_number_problems,
    qualified_name_problems,
)

PROTOCOLS = ("SCTP", "TCP", "UDP")
FILE_MODE_ERROR = "must be a number between 0 and 0777 (octal), both inclusive"
_PULL_POLICIES = ("Always", "IfNotPresent", "Never")
_TERMINATION_MESSAGE_POLICIES = ("File", "FallbackToLogsOnError")
_RESTART_POLICIES = ("Always", "OnFailure", "Never")
_DNS_POLICIES = ("ClusterFirstWithHostNet", "ClusterFirst", "Default", "None")
_HOST_PATH_TYPES = ("", "BlockDevice", "CharDevice", "Directory", "DirectoryOrCreate", "File", "FileOrCreate", "Socket")
_TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
_MOUNT_PROPAGATIONS = ("Bidirectional", "HostToContainer", "None")
_ENV_FIELD_PATHS = (
    "metadata.name",
    "metadata.namespace",
    "metadata.uid",
    "spec.nodeName",
    "spec.serviceAccountName",
    "status.hostIP",
    "status.hostIPs",
    "status.podIP",
    "status.podIPs",
)
_VOLUME_FIELD_PATHS = ("metadata.annotations", "metadata.labels", "metadata.name", "metadata.namespace", "metadata.uid")
_RESOURCE_FIELD_PATHS = (
    "limits.cpu",
    "limits.ephemeral-storage",
    "limits.memory",
    "requests.cpu",
    "requests.ephemeral-storage",
    "requests.memory",
)
POD_DELETION_COST = "controller.kubernetes.io/pod-deletion-cost"
# VolumeSource fields in the order upstream checks them, with the child name its errors use.
_VOLUME_TYPES = (
    ("emptyDir", "emptyDir"),
    ("hostPath", "hostPath"),
    ("gitRepo", "gitRepo"),
    ("gcePersistentDisk", "persistentDisk"),
    ("awsElasticBlockStore", "awsElasticBlockStore"),
    ("secret", "secret"),
    ("nfs", "nfs"),
    ("iscsi", "iscsi"),
    ("glusterfs", "glusterfs"),
    ("flocker", "flocker"),
    ("persistentVolumeClaim", "persistentVolumeClaim"),
    ("rbd", "rbd"),
    ("cinder", "cinder"),
    ("cephfs", "cephfs"),
    ("quobyte", "quobyte"),
    ("downwardAPI", "downwardAPI"),
    ("fc", "fc"),
    ("flexVolume", "flexVolume"),
    ("configMap", "configMap"),
    ("azureFile", "azureFile"),
    ("vsphereVolume", "vsphereVolume"),
    ("photonPersistentDisk", "photonPersistentDisk"),
    ("portworxVolume", "portworxVolume"),
    ("azureDisk", "azureDisk"),
    ("storageos", "storageos"),
    ("projected", "projected"),
    ("scaleIO", "scaleIO"),
    ("csi", "csi"),
    ("ephemeral", "ephemeral"),
    ("image", "image"),
)
# Where "may not specify more than 1 volume type" points when it differs from the field name.
_SECOND_TYPE_PATH = {"cephfs": "cephFS", "downwardAPI": "downwarAPI"}
# Volume types whose only rules are required fields (in upstream's order).
_REQUIRED_SOURCE_FIELDS = {
    "gitRepo": ("repository",),
    "gcePersistentDisk": ("pdName",),
    "awsElasticBlockStore": ("volumeID",),
    "glusterfs": ("endpoints", "path"),
    "rbd": ("monitors", "image"),
    "cinder": ("volumeID",),
    "cephfs": ("monitors",),
    "flexVolume": ("driver",),
    "azureFile": ("secretName", "shareName"),
    "vsphereVolume": ("volumePath",),
    "photonPersistentDisk": ("pdID",),
    "portworxVolume": ("volumeID",),
    "azureDisk": ("diskName", "diskURI"),
    "scaleIO": ("gateway", "system", "volumeName"),
    "storageos": ("volumeName",),
    "iscsi": ("targetPortal", "iqn"),
    "quobyte": ("registry", "volume"),
}
# Proto field names that differ from the JSON names upstream's errors use.
_JSON_NAMES = {"endpoints": "endpointsName", "image": "image", "diskURI": "diskURI"}


def _proto_name(source: Message, json_name: str) -> str:
    fields = source.DESCRIPTOR.fields_by_name
    if json_name in fields:
        return json_name
    return _JSON_NAMES.get(json_name, json_name)


def ref_name(reference: Message) -> str:
    """The name of a selector or source embedding a LocalObjectReference."""
    return reference.localObjectReference.name


# ---- paths ------------------------------------------------------------------------------------
def _path_no_backsteps(path: str, field: str) -> list[FieldError]:
    if ".." in path.replace("\\", "/").split("/"):
        return [FieldError.invalid(field, path, "must not contain '..'")]
    return []


def _local_descending_path(path: str, field: str) -> list[FieldError]:
    found = [FieldError.invalid(field, path, "must be a relative path")] if path.startswith("/") else []
    return found + _path_no_backsteps(path, field)


def local_non_reserved_path(path: str, field: str) -> list[FieldError]:
    found = _local_descending_path(path, field)
    if path.startswith("..") and not path.startswith("../"):
        found.append(FieldError.invalid(field, path, "must not start with '..'"))
    return found


def _file_mode(message: Message, name: str, field: str) -> list[FieldError]:
    if message.HasField(name) and not 0 <= getattr(message, name) <= 0o777:
        return [FieldError.invalid(field, getattr(message, name), FILE_MODE_ERROR)]
    return []


# ---- volumes ----------------------------------------------------------------------------------
def _key_to_path(item: Message, field: str) -> list[FieldError]:
    found = []
    if not item.key:
        found.append(FieldError.required(f"{field}.key"))
    if not item.path:
        found.append(FieldError.required(f"{field}.path"))
    found += local_non_reserved_path(item.path, f"{field}.path")
    return found + _file_mode(item, "mode", f"{field}.mode")


def _object_field_selector(selector: Message, allowed: tuple[str, ...], field: str) -> list[FieldError]:
    if not selector.apiVersion:
        return [FieldError.required(f"{field}.apiVersion")]
    if not selector.fieldPath:
        return [FieldError.required(f"{field}.fieldPath")]
    path = selector.fieldPath
    base, bracket, rest = path.partition("[")
    if bracket and rest.endswith("]"):
        subscript = rest[:-1].strip("'")
        if base == "metadata.annotations":
            return check(field, subscript.lower(), qualified_name_problems)
        if base == "metadata.labels":
            return check(field, subscript, qualified_name_problems)
        return [FieldError.invalid(field, base, "does not support subscript")]
    if path not in allowed:
        return [FieldError.not_supported(f"{field}.fieldPath", path, allowed)]
    return []


def _resource_field_selector(selector: Message, field: str, volume: bool) -> list[FieldError]:
    found = []
    if volume and not selector.containerName:
        found.append(FieldError.required(f"{field}.containerName"))
    elif not selector.resource:
        found.append(FieldError.required(f"{field}.resource"))
    elif selector.resource not in _RESOURCE_FIELD_PATHS and not selector.resource.startswith(
        ("requests.hugepages-", "limits.hugepages-")
    ):
        found.append(FieldError.not_supported(f"{field}.resource", selector.resource, _RESOURCE_FIELD_PATHS))
    return found


def _downward_api_file(item: Message, field: str) -> list[FieldError]:
    found = [] if item.path else [FieldError.required(f"{field}.path")]
    found += local_non_reserved_path(item.path, f"{field}.path")
    if item.HasField("fieldRef"):
        found += _object_field_selector(item.fieldRef, _VOLUME_FIELD_PATHS, f"{field}.fieldRef")
        if item.HasField("resourceFieldRef"):
            detail = "fieldRef and resourceFieldRef can not be specified simultaneously"
            found.append(FieldError.invalid(field, "resource", detail))
    elif item.HasField("resourceFieldRef"):
        found += _resource_field_selector(item.resourceFieldRef, f"{field}.resourceFieldRef", True)
    else:
        found.append(FieldError.required(field, "one of fieldRef and resourceFieldRef is required"))
    return found + _file_mode(item, "mode", f"{field}.mode")


def _projected(source: Message, field: str) -> list[FieldError]:
    found = _file_mode(source, "defaultMode", f"{field}.defaultMode")
    paths: set[str] = set()

    def claim(path: str, shown: str) -> None:
        if path in paths:
            found.append(FieldError.invalid(field, shown, "conflicting duplicate paths"))
        paths.add(path)

    for i, projection in enumerate(source.sources):
        where = f"{field}.sources[{i}]"
        count = 0
        for kind in ("secret", "configMap"):
            if projection.HasField(kind):
                count += 1
                part = getattr(projection, kind)
                if not ref_name(part):
                    found.append(FieldError.required(f"{where}.{kind}.name"))
                for j, item in enumerate(part.items):
                    found += _key_to_path(item, f"{where}.{kind}.items[{j}]")
                    if item.path:
                        claim(item.path, ref_name(part))
        if projection.HasField("downwardAPI"):
            count += 1
            for item in projection.downwardAPI.items:
                found += _downward_api_file(item, f"{where}.downwardAPI")
                if item.path:
                    claim(item.path, item.path)
        if projection.HasField("serviceAccountToken"):
            count += 1
            token = projection.serviceAccountToken
            if token.HasField("expirationSeconds"):
                seconds = token.expirationSeconds
                if seconds < 600:
                    detail = "may not specify a duration less than 10 minutes"
                    found.append(FieldError.invalid(f"{where}.serviceAccountToken.expirationSeconds", seconds, detail))
                if seconds > 1 << 32:
                    detail = "may not specify a duration larger than 2^32 seconds"
                    found.append(FieldError.invalid(f"{where}.serviceAccountToken.expirationSeconds", seconds, detail))
            if not token.path:
                found.append(FieldError.required(f"{field}.path"))
            else:
                found += local_non_reserved_path(token.path, f"{field}.path")
        if projection.HasField("clusterTrustBundle"):
            count += 1
        if count > 1:
            found.append(FieldError.forbidden(where, "may not specify more than 1 volume type per source"))
    return found


def volume_type_errors(source: Message, field: str, kind: str) -> list[FieldError]:
    """The rules of one volume type (upstream's validate<Type>VolumeSource)."""
    found: list[FieldError] = []
    if kind in _REQUIRED_SOURCE_FIELDS:
        for name in _REQUIRED_SOURCE_FIELDS[kind]:
            value = getattr(source, _proto_name(source, name))
            if not value:
                found.append(FieldError.required(f"{field}.{name}"))
        if kind == "gitRepo":
            found += _local_descending_path(source.directory, f"{field}.directory")
        if kind in ("gcePersistentDisk", "awsElasticBlockStore") and not 0 <= source.partition <= 255:
            found.append(FieldError.invalid(f"{field}.partition", source.partition, inclusive_range_error(1, 255)))
        if kind == "iscsi" and not 0 <= source.lun <= 255:
            found.append(FieldError.invalid(f"{field}.lun", source.lun, inclusive_range_error(0, 255)))
        return found
    if kind == "emptyDir":
        if source.HasField("sizeLimit") and quantity_value(source.sizeLimit.string) < 0:
            found.append(
                FieldError.forbidden(f"{field}.sizeLimit", "SizeLimit field must be a valid resource quantity")
            )
    elif kind == "hostPath":
        if not source.path:
            return [FieldError.required(f"{field}.path")]
        found += _path_no_backsteps(source.path, f"{field}.path")
        if source.HasField("type"):
            found += enum(f"{field}.type", source.type, _HOST_PATH_TYPES[1:]) if source.type else []
    elif kind in ("secret", "configMap"):
        name = source.secretName if kind == "secret" else ref_name(source)
        if not name:
            found.append(FieldError.required(f"{field}.{'secretName' if kind == 'secret' else 'name'}"))
        found += _file_mode(source, "defaultMode", f"{field}.defaultMode")
        for i, item in enumerate(source.items):
            found += _key_to_path(item, f"{field}.items[{i}]")
    elif kind == "persistentVolumeClaim":
        if not source.claimName:
            found.append(FieldError.required(f"{field}.claimName"))
    elif kind == "nfs":
        if not source.server:
            found.append(FieldError.required(f"{field}.server"))
        if not source.path:
            found.append(FieldError.required(f"{field}.path"))
        if not source.path.startswith("/"):
            found.append(FieldError.invalid(f"{field}.path", source.path, "must be an absolute path"))
    elif kind == "downwardAPI":
        found += _file_mode(source, "defaultMode", f"{field}.defaultMode")
        for item in source.items:
            found += _downward_api_file(item, field)
    elif kind == "projected":
        found += _projected(source, field)
    elif kind == "csi":
        found += csi_driver_name_errors(source.driver, f"{field}.driver")
        if source.HasField("nodePublishSecretRef"):
            secret = source.nodePublishSecretRef.name
            if not secret:
                found.append(FieldError.required(f"{field}.nodePublishSecretRef.name"))
            else:
                found += check(f"{field}.name", secret, dns1123_subdomain_problems)
    elif kind == "ephemeral":
        if not source.HasField("volumeClaimTemplate"):
            found.append(FieldError.required(f"{field}.volumeClaimTemplate"))
        else:
            found += claim_template_errors(source.volumeClaimTemplate, f"{field}.volumeClaimTemplate")
    elif kind == "fc":
        if not source.targetWWNs and not source.wwids:
            detail = "must specify either targetWWNs or wwids, but not both"
            found.append(FieldError.required(f"{field}.targetWWNs", detail))
    elif kind == "flocker" and not source.datasetName and not source.datasetUUID:
        found.append(FieldError.required(field, "one of datasetName and datasetUUID is required"))
    return found


def csi_driver_name_errors(driver: str, field: str) -> list[FieldError]:
    """ValidateCSIDriverName: required, at most 63 characters, a DNS subdomain (lower-cased)."""
    found = [] if driver else [FieldError.required(field)]
    if len(driver) > 63:
        found.append(FieldError.too_long(field, 63))
    return found + invalid_each(field, driver, dns1123_subdomain_problems(driver.lower()))


def volume_source_errors(source: Message, field: str, name_field: str = "") -> list[FieldError]:
    """validateVolumeSource: exactly one volume type, and that type's rules."""
    found: list[FieldError] = []
    count = 0
    for kind, child in _VOLUME_TYPES:
        if kind not in source.DESCRIPTOR.fields_by_name or not source.HasField(kind):
            continue
        if count:
            found.append(
                FieldError.forbidden(
                    f"{field}.{_SECOND_TYPE_PATH.get(kind, kind)}", "may not specify more than 1 volume type"
                )
            )
            continue
        count += 1
        found += volume_type_errors(getattr(source, kind), f"{field}.{child}", kind)
    if not count:
        found.append(FieldError.required(field, "must specify a volume type"))
    return found


def volumes_errors(volumes: Iterable[Message], field: str) -> tuple[dict[str, Message], list[FieldError]]:
    """ValidateVolumes: each volume valid, named by a DNS label, names unique; the valid ones by name."""
    found: list[FieldError] = []
    valid: dict[str, Message] = {}
    for i, volume in enumerate(volumes):
        where = f"{field}[{i}]"
        errors = volume_source_errors(volume.volumeSource, where)
        errors += required_then(f"{where}.name", volume.name, dns1123_label_problems)
        if volume.name in valid:
            errors.append(FieldError.duplicate(f"{where}.name", volume.name))
        if errors:
            found += errors
        else:
            valid[volume.name] = volume.volumeSource
    return valid, found


# ---- containers -------------------------------------------------------------------------------
def port_number_or_name_errors(port: Message, field: str) -> list[FieldError]:
    """ValidatePortNumOrName for an IntOrString."""
    value = int_or_string(port)
    if isinstance(value, str):
        return invalid_each(field, value, port_name_problems(value))
    return invalid_each(field, value, port_number_problems(value))


def _container_ports(ports: Iterable[Message], field: str) -> list[FieldError]:
    found: list[FieldError] = []
    names: set[str] = set()
    for i, port in enumerate(ports):
        where = f"{field}[{i}]"
        if port.name:
            problems = port_name_problems(port.name)
            if problems:
                found += invalid_each(f"{where}.name", port.name, problems)
            elif port.name in names:
                found.append(FieldError.duplicate(f"{where}.name", port.name))
            else:
                names.add(port.name)
        if port.containerPort == 0:
            found.append(FieldError.required(f"{where}.containerPort"))
        else:
            found += invalid_each(
                f"{where}.containerPort", port.containerPort, port_number_problems(port.containerPort)
            )
        if port.hostPort:
            found += invalid_each(f"{where}.hostPort", port.hostPort, port_number_problems(port.hostPort))
        found += enum(f"{where}.protocol", port.protocol, PROTOCOLS)
    return found


def env_name_problems(name: str) -> list[str]:
    """IsRelaxedEnvVarName (RelaxedEnvironmentVariableValidation is on in 1.32)."""
    if any(not (" " <= c <= "~") or c == "=" for c in name):
        return ["a valid environment variable name must consist only of printable ASCII characters other than '='"]
    return []


def _key_selector(selector: Message, field: str) -> list[FieldError]:
    found = check(f"{field}.name", ref_name(selector), dns1123_subdomain_problems)
    return found + required_then(f"{field}.key", selector.key, config_key_problems)


def _env(variables: Iterable[Message], field: str) -> list[FieldError]:
    found: list[FieldError] = []
    for i, variable in enumerate(variables):
        where = f"{field}[{i}]"
        found += required_then(f"{where}.name", variable.name, env_name_problems)
        if not variable.HasField("valueFrom"):
            continue
        source, path = variable.valueFrom, f"{where}.valueFrom"
        count = 0
        if source.HasField("fieldRef"):
            count += 1
            found += _object_field_selector(source.fieldRef, _ENV_FIELD_PATHS, f"{path}.fieldRef")
        if source.HasField("resourceFieldRef"):
            count += 1
            found += _resource_field_selector(source.resourceFieldRef, f"{path}.resourceFieldRef", False)
        for kind in ("configMapKeyRef", "secretKeyRef"):
            if source.HasField(kind):
                count += 1
                found += _key_selector(getattr(source, kind), f"{path}.{kind}")
        if count == 0:
            detail = "must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`"
            found.append(FieldError.invalid(path, "", detail))
        elif variable.value:
            found.append(FieldError.invalid(path, "", "may not be specified when `value` is not empty"))
        elif count > 1:
            found.append(FieldError.invalid(path, "", "may not have more than one field specified at a time"))
    return found


def _env_from(sources: Iterable[Message], field: str) -> list[FieldError]:
    found: list[FieldError] = []
    for i, source in enumerate(sources):
        where = f"{field}[{i}]"
        if source.prefix:
            found += invalid_each(f"{where}.prefix", source.prefix, env_name_problems(source.prefix))
        count = 0
        for kind in ("configMapRef", "secretRef"):
            if source.HasField(kind):
                count += 1
                name = ref_name(getattr(source, kind))
                found += required_then(f"{where}.{kind}.name", name, _prefix_subdomain_problems)
        if count == 0:
            found.append(FieldError.invalid(field, "", "must specify one of: `configMapRef` or `secretRef`"))
        elif count > 1:
            found.append(FieldError.invalid(field, "", "may not have more than one field specified at a time"))
    return found


def _prefix_subdomain_problems(name: str) -> list[str]:
    """NameIsDNSSubdomain(name, prefix=true): a trailing dash is allowed."""
    return dns1123_subdomain_problems(name[:-2] + "a" if len(name) > 1 and name.endswith("-") else name)


def _volume_mounts(container: Message, volumes: dict[str, Message], field: str) -> list[FieldError]:
    found: list[FieldError] = []
    device_names = {device.name: device.devicePath for device in container.volumeDevices}
    mount_points: set[str] = set()
    privileged = container.HasField("securityContext") and container.securityContext.privileged
    for i, mount in enumerate(container.volumeMounts):
        where = f"{field}[{i}]"
        if not mount.name:
            found.append(FieldError.required(f"{where}.name"))
        if mount.name not in volumes:
            found.append(FieldError.not_found(f"{where}.name", mount.name))
        if not mount.mountPath:
            found.append(FieldError.required(f"{where}.mountPath"))
        if mount.mountPath in mount_points:
            found.append(FieldError.invalid(f"{where}.mountPath", mount.mountPath, "must be unique"))
        mount_points.add(mount.mountPath)
        if mount.name in device_names:
            found.append(FieldError.invalid(f"{where}.name", mount.name, "must not already exist in volumeDevices"))
        if mount.mountPath in device_names.values():
            detail = "must not already exist as a path in volumeDevices"
            found.append(FieldError.invalid(f"{where}.mountPath", mount.mountPath, detail))
        if mount.subPath:
            found += _local_descending_path(mount.subPath, f"{field}.subPath")
        if mount.subPathExpr:
            if mount.subPath:
                detail = "subPathExpr and subPath are mutually exclusive"
                found.append(FieldError.invalid(f"{where}.subPathExpr", mount.subPathExpr, detail))
            found += _local_descending_path(mount.subPathExpr, f"{field}.subPathExpr")
        if mount.HasField("mountPropagation"):
            propagation = mount.mountPropagation
            found += enum(f"{field}.mountPropagation", propagation, _MOUNT_PROPAGATIONS, required=True)
            if propagation == "Bidirectional" and not privileged:
                detail = "Bidirectional mount propagation is available only to privileged containers"
                found.append(FieldError.forbidden(f"{field}.mountPropagation", detail))
        if mount.HasField("recursiveReadOnly"):
            found += _recursive_read_only(mount, f"{field}.recursiveReadOnly")
    return found


def _recursive_read_only(mount: Message, field: str) -> list[FieldError]:
    value = mount.recursiveReadOnly
    if value == "Disabled":
        return []
    if value not in ("Enabled", "IfPossible"):
        return [FieldError.not_supported(field, value, ("Disabled", "Enabled", "IfPossible"))]
    found = [] if mount.readOnly else [FieldError.forbidden(field, "may only be specified when readOnly is true")]
    if mount.HasField("mountPropagation") and mount.mountPropagation != "None":
        detail = "may only be specified when mountPropagation is None or not specified"
        found.append(FieldError.forbidden(field, detail))
    return found


def _volume_devices(container: Message, volumes: dict[str, Message], field: str) -> list[FieldError]:
    found: list[FieldError] = []
    mounts = {mount.name: mount.mountPath for mount in container.volumeMounts}
    paths: set[str] = set()
    names: set[str] = set()
    for i, device in enumerate(container.volumeDevices):
        where = f"{field}[{i}]"
        source = volumes.get(device.name)
        if not device.name:
            found.append(FieldError.required(f"{where}.name"))
        if device.name in names:
            found.append(FieldError.invalid(f"{where}.name", device.name, "must be unique"))
        if source is not None and not (source.HasField("persistentVolumeClaim") or source.HasField("ephemeral")):
            detail = "can only use volume source type of PersistentVolumeClaim or Ephemeral for block mode"
            found.append(FieldError.invalid(f"{where}.name", device.name, detail))
        if source is None:
            found.append(FieldError.not_found(f"{where}.name", device.name))
        if not device.devicePath:
            found.append(FieldError.required(f"{where}.devicePath"))
        if device.devicePath in paths:
            found.append(FieldError.invalid(f"{where}.devicePath", device.devicePath, "must be unique"))
        if device.devicePath and _path_no_backsteps(device.devicePath, ""):
            detail = "can not contain backsteps ('..')"
            found.append(FieldError.invalid(f"{where}.devicePath", device.devicePath, detail))
        else:
            paths.add(device.devicePath)
        if device.name in mounts:
            found.append(FieldError.invalid(f"{where}.name", device.name, "must not already exist in volumeMounts"))
        if device.devicePath in mounts.values():
            detail = "must not already exist as a path in volumeMounts"
            found.append(FieldError.invalid(f"{where}.devicePath", device.devicePath, detail))
        if device.name:
            names.add(device.name)
    return found


def _seccomp_profile(profile: Message, field: str) -> list[FieldError]:
    found = []
    kinds = ("Localhost", "RuntimeDefault", "Unconfined")
    if not profile.type:
        found.append(FieldError.required(f"{field}.type", "type is required when seccompProfile is set"))
    elif profile.type not in kinds:
        found.append(FieldError.not_supported(f"{field}.type", profile.type, kinds))
    if profile.type == "Localhost":
        if not profile.HasField("localhostProfile"):
            detail = "must be set when seccomp type is Localhost"
            found.append(FieldError.required(f"{field}.localhostProfile", detail))
        else:
            found += _local_descending_path(profile.localhostProfile, f"{field}.localhostProfile")
    elif profile.HasField("localhostProfile"):
        detail = "can only be set when seccomp type is Localhost"
        found.append(FieldError.invalid(f"{field}.localhostProfile", profile.localhostProfile, detail))
    return found


def _app_armor_profile(profile: Message, field: str) -> list[FieldError]:
    kinds = ("Localhost", "RuntimeDefault", "Unconfined")
    if profile.type == "Localhost":
        if not profile.HasField("localhostProfile") or not profile.localhostProfile.strip():
            if profile.HasField("localhostProfile") and profile.localhostProfile:
                detail = "must not be padded with whitespace"
                return [FieldError.invalid(f"{field}.localhostProfile", profile.localhostProfile, detail)]
            return [FieldError.required(f"{field}.localhostProfile", "must be set when AppArmor type is Localhost")]
        if profile.localhostProfile != profile.localhostProfile.strip():
            detail = "must not be padded with whitespace"
            return [FieldError.invalid(f"{field}.localhostProfile", profile.localhostProfile, detail)]
        return []
    if profile.type in ("RuntimeDefault", "Unconfined"):
        if profile.HasField("localhostProfile"):
            detail = "can only be set when AppArmor type is Localhost"
            return [FieldError.invalid(f"{field}.localhostProfile", profile.localhostProfile, detail)]
        return []
    if not profile.type:
        return [FieldError.required(f"{field}.type", "type is required when appArmorProfile is set")]
    return [FieldError.not_supported(f"{field}.type", profile.type, kinds)]


def _id_errors(message: Message, name: str, field: str) -> list[FieldError]:
    if message.HasField(name) and not 0 <= getattr(message, name) <= MAX_INT32:
        return [FieldError.invalid(field, getattr(message, name), inclusive_range_error(0, MAX_INT32))]
    return []


def _container_security_context(context: Message, field: str, host_users: bool) -> list[FieldError]:
    found = _id_errors(context, "runAsUser", f"{field}.runAsUser")
    found += _id_errors(context, "runAsGroup", f"{field}.runAsGroup")
    if context.HasField("procMount"):
        found += enum(f"{field}.procMount", context.procMount, ("Default", "Unmasked"), required=True)
        if host_users and context.procMount == "Unmasked":
            detail = "`hostUsers` must be false to use `Unmasked`"
            found.append(FieldError.invalid(f"{field}.procMount", context.procMount, detail))
    if context.HasField("seccompProfile"):
        found += _seccomp_profile(context.seccompProfile, f"{field}.seccompProfile")
    if context.HasField("allowPrivilegeEscalation") and not context.allowPrivilegeEscalation:
        if context.privileged:
            detail = "cannot set `allowPrivilegeEscalation` to false and `privileged` to true"
            found.append(FieldError.invalid(field, "", detail))
        if "CAP_SYS_ADMIN" in context.capabilities.add:
            detail = "cannot set `allowPrivilegeEscalation` to false and `capabilities.Add` CAP_SYS_ADMIN"
            found.append(FieldError.invalid(field, "", detail))
    if context.HasField("appArmorProfile"):
        found += _app_armor_profile(context.appArmorProfile, f"{field}.appArmorProfile")
    return found


def _handler(handler: Message, kinds: tuple[str, ...], field: str, grace: int | None) -> list[FieldError]:
    """validateHandler: exactly one handler type, and its rules."""
    found: list[FieldError] = []
    count = 0
    for kind in kinds:
        if not handler.HasField(kind):
            continue
        if count:
            found.append(FieldError.forbidden(f"{field}.{kind}", "may not specify more than 1 handler type"))
            continue
        count += 1
        action, where = getattr(handler, kind), f"{field}.{kind}"
        if kind == "exec" and not action.command:
            found.append(FieldError.required(f"{where}.command"))
        elif kind == "httpGet":
            if action.HasField("path") and not action.path:
                found.append(FieldError.required(f"{where}.path"))
            found += port_number_or_name_errors(action.port, f"{where}.port")
            if action.scheme:
                found += enum(f"{where}.scheme", action.scheme, ("HTTP", "HTTPS"))
            for header in action.httpHeaders:
                found += check(f"{where}.httpHeaders", header.name, http_header_name_problems)
        elif kind == "tcpSocket":
            found += port_number_or_name_errors(action.port, f"{where}.port")
        elif kind == "grpc":
            found += invalid_each(f"{where}.port", action.port, port_number_problems(action.port))
        elif kind == "sleep" and grace is not None and not 0 < action.seconds <= grace:
            detail = (
                f"must be greater than 0 and less than terminationGracePeriodSeconds ({grace}). "
                "Enable AllowPodLifecycleSleepActionZeroValue feature gate for zero sleep."
            )
            found.append(FieldError.invalid(where, action.seconds, detail))
    if not count:
        found.append(FieldError.required(field, "must specify a handler type"))
    return found


_PROBE_HANDLERS = ("exec", "httpGet", "tcpSocket", "grpc")
_LIFECYCLE_HANDLERS = ("exec", "httpGet", "tcpSocket", "sleep")


def _probe(container: Message, name: str, field: str, grace: int | None) -> list[FieldError]:
    if not container.HasField(name):
        return []
    probe = getattr(container, name)
    found = _handler(probe.handler, _PROBE_HANDLERS, field, grace)
    for number in ("initialDelaySeconds", "timeoutSeconds", "periodSeconds", "successThreshold", "failureThreshold"):
        found += nonnegative(f"{field}.{number}", getattr(probe, number))
    if probe.HasField("terminationGracePeriodSeconds") and probe.terminationGracePeriodSeconds <= 0:
        seconds = probe.terminationGracePeriodSeconds
        found.append(FieldError.invalid(f"{field}.terminationGracePeriodSeconds", seconds, "must be greater than 0"))
    if name in ("livenessProbe", "startupProbe") and probe.HasField("successThreshold") and probe.successThreshold != 1:
        found.append(FieldError.invalid(f"{field}.successThreshold", probe.successThreshold, "must be 1"))
    if name == "readinessProbe" and probe.HasField("terminationGracePeriodSeconds"):
        seconds = probe.terminationGracePeriodSeconds
        detail = "must not be set for readinessProbes"
        found.append(FieldError.invalid(f"{field}.terminationGracePeriodSeconds", seconds, detail))
    return found


def _lifecycle_and_probes(container: Message, field: str, grace: int | None) -> list[FieldError]:
    found: list[FieldError] = []
    if container.HasField("lifecycle"):
        for hook in ("postStart", "preStop"):
            if container.lifecycle.HasField(hook):
                handler = getattr(container.lifecycle, hook)
                found += _handler(handler, _LIFECYCLE_HANDLERS, f"{field}.lifecycle.{hook}", grace)
    for probe in ("livenessProbe", "readinessProbe", "startupProbe"):
        found += _probe(container, probe, f"{field}.{probe}", grace)
    return found


def _container_common(
    container: Message, volumes: dict[str, Message], field: str, host_users: bool
) -> list[FieldError]:
    """validateContainerCommon: name, image, ports, env, mounts, resources, security context."""
    found = required_then(f"{field}.name", container.name, dns1123_label_problems)
    if not container.image:
        found.append(FieldError.required(f"{field}.image"))
    found += enum(
        f"{field}.terminationMessagePolicy", container.terminationMessagePolicy, _TERMINATION_MESSAGE_POLICIES
    )
    found += _container_ports(container.ports, f"{field}.ports")
    found += _env(container.env, f"{field}.env")
    found += _env_from(container.envFrom, f"{field}.envFrom")
    found += _volume_mounts(container, volumes, f"{field}.volumeMounts")
    found += _volume_devices(container, volumes, f"{field}.volumeDevices")
    found += enum(f"{field}.imagePullPolicy", container.imagePullPolicy, _PULL_POLICIES)
    found += requirements_errors(container.resources, f"{field}.resources")
    for policy in container.resizePolicy:
        where = f"{field}.resizePolicy"
        found += enum(where, policy.resourceName, ("cpu", "memory"), required=True)
        found += enum(where, policy.restartPolicy, ("NotRequired", "RestartContainer"), required=True)
    if container.HasField("securityContext"):
        found += _container_security_context(container.securityContext, f"{field}.securityContext", host_users)
    return found


def _host_port_conflicts(containers: Iterable[Message], field: str) -> list[FieldError]:
    seen: set[str] = set()
    found = []
    for i, container in enumerate(containers):
        for j, port in enumerate(container.ports):
            if not port.hostPort:
                continue
            key = f"{port.protocol}/{port.hostIP}/{port.hostPort}"
            if key in seen:
                found.append(FieldError.duplicate(f"{field}[{i}].ports[{j}].hostPort", key))
            seen.add(key)
    return found


def _containers(
    spec: Message, volumes: dict[str, Message], field: str, grace: int | None, host_users: bool
) -> list[FieldError]:
    if not spec.containers:
        return [FieldError.required(field)]
    found: list[FieldError] = []
    names: set[str] = set()
    for i, container in enumerate(spec.containers):
        where = f"{field}[{i}]"
        found += _container_common(container, volumes, where, host_users)
        if container.name in names:
            found.append(FieldError.duplicate(f"{where}.name", container.name))
        names.add(container.name)
        found += _lifecycle_and_probes(container, where, grace)
        if container.HasField("restartPolicy"):
            found.append(FieldError.forbidden(f"{where}.restartPolicy", "may not be set for non-init containers"))
    return found + _host_port_conflicts(spec.containers, field)


def _init_containers(
    spec: Message, volumes: dict[str, Message], field: str, grace: int | None, host_users: bool
) -> list[FieldError]:
    found: list[FieldError] = []
    names = {container.name for container in spec.containers}
    for i, container in enumerate(spec.initContainers):
        where = f"{field}[{i}]"
        found += _container_common(container, volumes, where, host_users)
        always = False
        if container.HasField("restartPolicy"):
            found += enum(f"{where}.restartPolicy", container.restartPolicy, ("Always",), required=True)
            always = container.restartPolicy == "Always"
        if container.name in names:
            found.append(FieldError.duplicate(f"{where}.name", container.name))
        elif container.name:
            names.add(container.name)
        found += _host_port_conflicts([container], field)
        if always:
            found += _lifecycle_and_probes(container, where, grace)
            continue
        detail = "may not be set for init containers without restartPolicy=Always"
        for name in ("lifecycle", "livenessProbe", "readinessProbe", "startupProbe"):
            if container.HasField(name):
                found.append(FieldError.forbidden(f"{where}.{name}", detail))
    return found


# ---- scheduling -------------------------------------------------------------------------------
def tolerations_errors(tolerations: Iterable[Message], field: str) -> list[FieldError]:
    found: list[FieldError] = []
    for i, toleration in enumerate(tolerations):
        where = f"{field}[{i}]"
        if toleration.key:
            found += check(f"{where}.key", toleration.key, qualified_name_problems)
        if not toleration.key and toleration.operator != "Exists":
            detail = 'operator must be Exists when `key` is empty, which means "match all values and all keys"'
            found.append(FieldError.invalid(f"{where}.operator", toleration.operator, detail))
        if toleration.HasField("tolerationSeconds") and toleration.effect != "NoExecute":
            detail = "effect must be 'NoExecute' when `tolerationSeconds` is set"
            found.append(FieldError.invalid(f"{where}.effect", toleration.effect, detail))
        if toleration.operator in ("Equal", ""):
            problems = label_value_problems(toleration.value)
            if problems:
                found.append(FieldError.invalid(f"{where}.operator", toleration.value, ";".join(problems)))
        elif toleration.operator == "Exists":
            if toleration.value:
                detail = "value must be empty when `operator` is 'Exists'"
                found.append(FieldError.invalid(f"{where}.operator", toleration.value, detail))
        else:
            found.append(FieldError.not_supported(f"{where}.operator", toleration.operator, ("Equal", "Exists")))
        if toleration.effect:
            found += enum(f"{where}.effect", toleration.effect, _TAINT_EFFECTS)
    return found


def _node_selector_requirement(requirement: Message, field: str, check_values: bool) -> list[FieldError]:
    found = []
    operator = requirement.operator
    if operator in ("In", "NotIn"):
        if not requirement.values:
            detail = "must be specified when `operator` is 'In' or 'NotIn'"
            found.append(FieldError.required(f"{field}.values", detail))
    elif operator in ("Exists", "DoesNotExist"):
        if requirement.values:
            detail = "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"
            found.append(FieldError.forbidden(f"{field}.values", detail))
    elif operator in ("Gt", "Lt"):
        if len(requirement.values) != 1:
            detail = "must be specified single value when `operator` is 'Lt' or 'Gt'"
            found.append(FieldError.required(f"{field}.values", detail))
    else:
        found.append(FieldError.invalid(f"{field}.operator", operator, "not a valid selector operator"))
    found += check(f"{field}.key", requirement.key, qualified_name_problems)
    if check_values:
        for i, value in enumerate(requirement.values):
            found += check(f"{field}.values[{i}]", value, label_value_problems)
    return found


def node_selector_term_errors(term: Message, field: str, check_values: bool = True) -> list[FieldError]:
    found: list[FieldError] = []
    for i, requirement in enumerate(term.matchExpressions):
        found += _node_selector_requirement(requirement, f"{field}.matchExpressions[{i}]", check_values)
    for i, requirement in enumerate(term.matchFields):
        where = f"{field}.matchFields[{i}]"
        if requirement.operator in ("In", "NotIn"):
            if len(requirement.values) != 1:
                detail = "must be only one value when `operator` is 'In' or 'NotIn' for node field selector"
                found.append(FieldError.required(f"{where}.values", detail))
        else:
            found.append(FieldError.invalid(f"{where}.operator", requirement.operator, "not a valid selector operator"))
        if requirement.key != "metadata.name":
            found.append(FieldError.invalid(f"{where}.key", requirement.key, "not a valid field selector key"))
        else:
            for j, value in enumerate(requirement.values):
                found += check(f"{where}.values[{j}]", value, dns1123_subdomain_problems)
    return found


def node_selector_errors(selector: Message, field: str) -> list[FieldError]:
    if not selector.nodeSelectorTerms:
        return [FieldError.required(f"{field}.nodeSelectorTerms", "must have at least one node selector term")]
    found: list[FieldError] = []
    for i, term in enumerate(selector.nodeSelectorTerms):
        found += node_selector_term_errors(term, f"{field}.nodeSelectorTerms[{i}]")
    return found


def _weight(weight: int, field: str) -> list[FieldError]:
    return [] if 0 < weight <= 100 else [FieldError.invalid(field, weight, "must be in the range 1-100")]


def _pod_affinity_term(term: Message, field: str) -> list[FieldError]:
    found: list[FieldError] = []
    if term.HasField("labelSelector"):
        found += label_selector_errors(term.labelSelector, f"{field}.labelSelector")
    if term.HasField("namespaceSelector"):
        found += label_selector_errors(term.namespaceSelector, f"{field}.namespaceSelector")
    for name in term.namespaces:
        found += check(f"{field}.namespace", name, dns1123_label_problems)
    if not term.topologyKey:
        found.append(FieldError.required(f"{field}.topologyKey", "can not be empty"))
    return found + check(f"{field}.topologyKey", term.topologyKey, qualified_name_problems)


def _affinity(affinity: Message, field: str) -> list[FieldError]:
    found: list[FieldError] = []
    if affinity.HasField("nodeAffinity"):
        node, where = affinity.nodeAffinity, f"{field}.nodeAffinity"
        required = "requiredDuringSchedulingIgnoredDuringExecution"
        preferred = "preferredDuringSchedulingIgnoredDuringExecution"
        if node.HasField(required):
            found += node_selector_errors(getattr(node, required), f"{where}.{required}")
        for i, term in enumerate(getattr(node, preferred)):
            found += _weight(term.weight, f"{where}.{preferred}[{i}].weight")
            found += node_selector_term_errors(term.preference, f"{where}.{preferred}[{i}].preference", False)
    for kind in ("podAffinity", "podAntiAffinity"):
        if not affinity.HasField(kind):
            continue
        terms, where = getattr(affinity, kind), f"{field}.{kind}"
        for i, term in enumerate(terms.requiredDuringSchedulingIgnoredDuringExecution):
            found += _pod_affinity_term(term, f"{where}.requiredDuringSchedulingIgnoredDuringExecution[{i}]")
        for i, weighted in enumerate(terms.preferredDuringSchedulingIgnoredDuringExecution):
            path = f"{where}.preferredDuringSchedulingIgnoredDuringExecution[{i}]"
            found += _weight(weighted.weight, f"{path}.weight")
            found += _pod_affinity_term(weighted.podAffinityTerm, f"{path}.podAffinityTerm")
    return found


def _topology_spread(constraints: list[Message], field: str) -> list[FieldError]:
    found: list[FieldError] = []
    for i, constraint in enumerate(constraints):
        where = f"{field}[{i}]"
        if constraint.maxSkew <= 0:
            found.append(FieldError.invalid(f"{where}.maxSkew", constraint.maxSkew, "must be greater than zero"))
        if not constraint.topologyKey:
            found.append(FieldError.required(f"{where}.topologyKey", "can not be empty"))
        action = constraint.whenUnsatisfiable
        if action not in ("DoNotSchedule", "ScheduleAnyway"):
            found.append(
                FieldError.not_supported(f"{where}.whenUnsatisfiable", action, ("DoNotSchedule", "ScheduleAnyway"))
            )
        for later in constraints[i + 1 :]:
            if (later.topologyKey, later.whenUnsatisfiable) == (constraint.topologyKey, action):
                shown = f"{{{constraint.topologyKey}, {action}}}"
                found.append(FieldError.duplicate(f"{where}.{{topologyKey, whenUnsatisfiable}}", shown))
                break
        if constraint.HasField("minDomains"):
            if constraint.minDomains <= 0:
                found.append(
                    FieldError.invalid(f"{where}.minDomains", constraint.minDomains, "must be greater than zero")
                )
            if action != "DoNotSchedule":
                detail = f"can only use minDomains if whenUnsatisfiable=DoNotSchedule, not {action}"
                found.append(FieldError.invalid(f"{where}.minDomains", constraint.minDomains, detail))
        for policy in ("nodeAffinityPolicy", "nodeTaintsPolicy"):
            if constraint.HasField(policy):
                found += enum(f"{where}.{policy}", getattr(constraint, policy), ("Honor", "Ignore"), required=True)
        if constraint.HasField("labelSelector"):
            found += label_selector_errors(constraint.labelSelector, f"{where}.labelSelector")
    return found


def _dns_config(spec: Message, field: str) -> list[FieldError]:
    if spec.dnsPolicy == "None":
        if not spec.HasField("dnsConfig"):
            return [FieldError.required(field, "must provide `dnsConfig` when `dnsPolicy` is None")]
        if not spec.dnsConfig.nameservers:
            detail = "must provide at least one DNS nameserver when `dnsPolicy` is None"
            return [FieldError.required(f"{field}.nameservers", detail)]
    if not spec.HasField("dnsConfig"):
        return []
    config = spec.dnsConfig
    found: list[FieldError] = []
    if len(config.nameservers) > 3:
        detail = "must not have more than 3 nameservers"
        found.append(FieldError.invalid(f"{field}.nameservers", list(config.nameservers), detail))
    for i, server in enumerate(config.nameservers):
        found += ip_errors(f"{field}.nameservers[{i}]", server)
    if len(config.searches) > 32:
        detail = "must not have more than 32 search paths"
        found.append(FieldError.invalid(f"{field}.searches", list(config.searches), detail))
    if len(" ".join(config.searches)) > 2048:
        detail = "must not have more than 2048 characters (including spaces) in the search list"
        found.append(FieldError.invalid(f"{field}.searches", list(config.searches), detail))
    for i, search in enumerate(config.searches):
        found += check(f"{field}.searches[{i}]", search.removesuffix("."), dns1123_subdomain_problems)
    for i, option in enumerate(config.options):
        if not option.name:
            found.append(FieldError.required(f"{field}.options[{i}]", "must not be empty"))
    return found


def _pod_security_context(spec: Message, field: str) -> list[FieldError]:
    if not spec.HasField("securityContext"):
        return []
    context = spec.securityContext
    found = _id_errors(context, "fsGroup", f"{field}.fsGroup")
    found += _id_errors(context, "runAsUser", f"{field}.runAsUser")
    found += _id_errors(context, "runAsGroup", f"{field}.runAsGroup")
    for i, group in enumerate(context.supplementalGroups):
        if not 0 <= group <= MAX_INT32:
            found.append(
                FieldError.invalid(f"{field}.supplementalGroups[{i}]", group, inclusive_range_error(0, MAX_INT32))
            )
    if spec.shareProcessNamespace and spec.hostPID:
        detail = "ShareProcessNamespace and HostPID cannot both be enabled"
        found.append(FieldError.invalid(f"{field}.shareProcessNamespace", True, detail))
    names: set[str] = set()
    for i, sysctl in enumerate(context.sysctls):
        where = f"{field}.sysctls[{i}].name"
        if not sysctl.name:
            found.append(FieldError.required(where))
        elif sysctl.name in names:
            found.append(FieldError.duplicate(where, sysctl.name))
        names.add(sysctl.name)
    if context.HasField("fsGroupChangePolicy"):
        found += enum(
            f"{field}.fsGroupChangePolicy", context.fsGroupChangePolicy, ("Always", "OnRootMismatch"), required=True
        )
    if context.HasField("seccompProfile"):
        found += _seccomp_profile(context.seccompProfile, f"{field}.seccompProfile")
    if context.HasField("appArmorProfile"):
        found += _app_armor_profile(context.appArmorProfile, f"{field}.appArmorProfile")
    if context.HasField("supplementalGroupsPolicy"):
        found += enum(
            f"{field}.supplementalGroupsPolicy", context.supplementalGroupsPolicy, ("Merge", "Strict"), required=True
        )
    if context.HasField("seLinuxChangePolicy"):
        found += enum(
            f"{field}.seLinuxChangePolicy", context.seLinuxChangePolicy, ("MountOption", "Recursive"), required=True
        )
    return found


def _host_network_ports(spec: Message, field: str, is_pod: bool) -> list[FieldError]:
    if not spec.hostNetwork:
        return []
    found = []
    for i, container in enumerate(spec.containers):
        for j, port in enumerate(container.ports):
            if (is_pod or port.hostPort) and port.hostPort != port.containerPort:
                detail = "must match `containerPort` when `hostNetwork` is true"
                found.append(FieldError.invalid(f"{field}.containers[{i}].ports[{j}].hostPort", port.hostPort, detail))
    return found


# ---- the pod spec -----------------------------------------------------------------------------
def pod_spec_errors(spec: Message, field: str, *, is_pod: bool = False) -> list[FieldError]:
    """ValidatePodSpec, in upstream's order."""
    grace = spec.terminationGracePeriodSeconds if spec.HasField("terminationGracePeriodSeconds") else None
    host_users = not (spec.HasField("hostUsers") and not spec.hostUsers)
    volumes, found = volumes_errors(spec.volumes, f"{field}.volumes")
    found += _containers(spec, volumes, f"{field}.containers", grace, host_users)
    found += _init_containers(spec, volumes, f"{field}.initContainers", grace, host_users)
    found += _host_network_ports(spec, field, is_pod)
    found += enum(f"{field}.restartPolicy", spec.restartPolicy, _RESTART_POLICIES)
    found += enum(f"{field}.dnsPolicy", spec.dnsPolicy, _DNS_POLICIES)
    found += labels_errors(dict(spec.nodeSelector), f"{field}.nodeSelector")
    found += _pod_security_context(spec, f"{field}.securityContext")
    if spec.HasField("affinity"):
        found += _affinity(spec.affinity, f"{field}.affinity")
    found += _dns_config(spec, f"{field}.dnsConfig")
    for i, gate in enumerate(spec.readinessGates):
        found += check(f"{field}.readinessGates[{i}].conditionType", gate.conditionType, qualified_name_problems)
    seen_gates: set[str] = set()
    for i, gate in enumerate(spec.schedulingGates):
        found += check(f"{field}.schedulingGates[{i}]", gate.name, qualified_name_problems)
        if gate.name in seen_gates:
            found.append(FieldError.duplicate(f"{field}.schedulingGates[{i}]", gate.name))
        seen_gates.add(gate.name)
    found += _topology_spread(list(spec.topologySpreadConstraints), f"{field}.topologySpreadConstraints")
    for name in ("serviceAccountName", "nodeName"):
        if getattr(spec, name):
            found += check(f"{field}.{name}", getattr(spec, name), dns1123_subdomain_problems)
    if spec.HasField("activeDeadlineSeconds") and not 1 <= spec.activeDeadlineSeconds <= MAX_INT32:
        detail = inclusive_range_error(1, MAX_INT32)
        found.append(FieldError.invalid(f"{field}.activeDeadlineSeconds", spec.activeDeadlineSeconds, detail))
    for name in ("hostname", "subdomain"):
        if getattr(spec, name):
            found += check(f"{field}.{name}", getattr(spec, name), dns1123_label_problems)
    found += tolerations_errors(spec.tolerations, f"{field}.tolerations")
    for i, alias in enumerate(spec.hostAliases):
        found += ip_errors(f"{field}.hostAliases[{i}].ip", alias.ip)
        for j, hostname in enumerate(alias.hostnames):
            found += check(f"{field}.hostAliases[{i}].hostnames[{j}]", hostname, dns1123_subdomain_problems)
    if spec.priorityClassName:
        found += check(f"{field}.priorityClassName", spec.priorityClassName, dns1123_subdomain_problems)
    if spec.HasField("runtimeClassName"):
        found += check(f"{field}.runtimeClassName", spec.runtimeClassName, dns1123_subdomain_problems)
    if spec.HasField("preemptionPolicy"):
        policies = ("PreemptLowerPriority", "Never")
        found += enum(f"{field}.preemptionPolicy", spec.preemptionPolicy, policies, required=True)
    for name in sorted(spec.overhead):
        found += _overhead(name, spec.overhead[name].string, f"{field}.overhead")
    if spec.HasField("os"):
        if not spec.os.name:
            found.append(FieldError.required(f"{field}.os.name", "cannot be empty"))
        else:
            found += enum(f"{field}.os", spec.os.name, ("linux", "windows"))
    return found


def _overhead(name: str, text: str, field: str) -> list[FieldError]:
    path = f"{field}.limits[{name}]"
    return container_resource_name_errors(name, path) + quantity_value_errors(name, text, path)


def deletion_cost_errors(annotations: dict[str, str], field: str) -> list[FieldError]:
    """The pod deletion cost annotation must be a 32-bit integer."""
    if POD_DELETION_COST not in annotations:
        return []
    value = annotations[POD_DELETION_COST]
    text = value.removeprefix("+").removeprefix("-")
    if not text.isdigit() or not -(2**31) <= int(value) < 2**31:
        return [FieldError.invalid(f"{field}[{POD_DELETION_COST}]", value, "must be a 32bit integer")]
    return []


def pod_template_spec_errors(template: Message, field: str) -> list[FieldError]:
    """ValidatePodTemplateSpec: labels, annotations, the spec; no ephemeral containers."""
    metadata = template.metadata
    found = labels_errors(dict(metadata.labels), f"{field}.labels")
    found += annotations_errors(dict(metadata.annotations), f"{field}.annotations")
    found += deletion_cost_errors(dict(metadata.annotations), f"{field}.annotations")
    found += pod_spec_errors(template.spec, f"{field}.spec")
    if template.spec.ephemeralContainers:
        detail = "ephemeral containers not allowed in pod template"
        found.append(FieldError.forbidden(f"{field}.spec.ephemeralContainers", detail))
    return found


def image_whitespace_errors(containers: Iterable[Message], field: str) -> list[FieldError]:
    """validateContainersOnlyForPod: images without leading or trailing whitespace."""
    return [
        FieldError.invalid(f"{field}[{i}].image", c.image, "must not have leading or trailing whitespace")
        for i, c in enumerate(containers)
        if c.image != c.image.strip()
    ]


def special_ip_problems(value: str) -> list[str]:
    """ValidateNonSpecialIP's problems with an IP address."""
    address = parse_ip(value)
    if address is None:
        return ["must be a valid IP address"]
    problems = []
    if address.is_unspecified:
        problems.append(f"may not be unspecified ({value})")
    if address.is_loopback:
        problems.append("may not be in the loopback range (127.0.0.0/8, ::1/128)")
    if address.is_link_local:
        problems.append("may not be in the link-local range (169.254.0.0/16, fe80::/10)")
    first, second = address.packed[0], address.packed[1]
    if (address.version == 4 and address.packed[:3] == bytes([224, 0, 0])) or (
        address.version == 6 and first == 0xFF and second & 0x0F == 0x02
    ):
        problems.append("may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)")
    return problems
