"""The Pod Security Standards' checks as k8s.io/pod-security-admission 1.32 has them (policy/check_*.go),
each with the policy versions it changed at, and how a level and version picks them.

A check looks at a pod's metadata and spec (a pod's, or a template's) and returns None when it
allows them, else a Forbidden: a short reason ("host namespaces") and a detail naming what breaks
it ("hostNetwork=true"). The baseline level runs the baseline checks; restricted runs the
restricted ones and the baseline ones they do not replace. A level's checks run in the order of
their ids (baseline first), which is the order of the reasons in a message.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import cache, partial

from google.protobuf.message import Message

from protokube.gateway.admission.podsecurity.levels import BASELINE, PRIVILEGED, RESTRICTED, LevelVersion
from protokube.gateway.errors import go_quote


@dataclass(frozen=True, slots=True)
class Forbidden:
    reason: str
    detail: str = ""


CheckPod = Callable[[Message, Message], Forbidden | None]  # (metadata, spec)


@dataclass(frozen=True, slots=True)
class Check:
    id: str
    level: str
    versions: tuple[tuple[int, CheckPod], ...]  # (the first v1.X it applies to, how), oldest first
    replaces: tuple[str, ...] = ()  # baseline checks this restricted one stands for where it applies

    def at(self, minor: int) -> CheckPod | None:
        """How the check runs at policy version v1.<minor> (None before it existed)."""
        found = None
        for first, check in self.versions:
            if first <= minor:
                found = check
        return found


# ---- helpers as upstream words them --------------------------------------------------------------
def _join_quote(items: Sequence[str]) -> str:
    return '"' + '", "'.join(items) + '"' if items else ""


def _plural(singular: str, plural: str, count: int) -> str:
    return singular if count == 1 else plural


def _containers_named(names: Sequence[str]) -> str:
    return f"{_plural('container', 'containers', len(names))} {_join_quote(names)}"


def _containers(spec: Message) -> Iterator[Message]:
    """Init containers, containers, then ephemeral containers."""
    yield from spec.initContainers
    yield from spec.containers
    for ephemeral in spec.ephemeralContainers:
        yield ephemeral.ephemeralContainerCommon


def _context(container: Message) -> Message | None:
    return container.securityContext if container.HasField("securityContext") else None


def _pod_context(spec: Message) -> Message | None:
    return spec.securityContext if spec.HasField("securityContext") else None


def _windows(spec: Message) -> bool:
    return spec.HasField("os") and spec.os.name == "windows"


def _unless_windows(check: CheckPod) -> CheckPod:
    """The 1.25 revisions: pods that say they run on Windows are not concerned."""

    def checked(metadata: Message, spec: Message) -> Forbidden | None:
        return None if _windows(spec) else check(metadata, spec)

    return checked


def _setters(pod: bool, containers: Sequence[str]) -> list[str]:
    """Who set a forbidden value: "pod" and/or 'container(s) "a", "b"'."""
    found = ["pod"] if pod else []
    if containers:
        found.append(_containers_named(containers))
    return found


# ---- baseline ------------------------------------------------------------------------------------
def _app_armor_profile(metadata: Message, spec: Message) -> Forbidden | None:
    allowed_types = ("RuntimeDefault", "Localhost")
    bad_values: set[str] = set()
    pod = _pod_context(spec)
    pod_bad = False
    if pod is not None and pod.HasField("appArmorProfile") and pod.appArmorProfile.type not in allowed_types:
        pod_bad = True
        bad_values.add(pod.appArmorProfile.type)
    containers = []
    for container in _containers(spec):
        context = _context(container)
        profile = context.appArmorProfile if context is not None and context.HasField("appArmorProfile") else None
        if profile is not None and profile.type not in allowed_types:
            containers.append(container.name)
            bad_values.add(profile.type)
    setters = _setters(pod_bad, containers)
    prefix = "container.apparmor.security.beta.kubernetes.io/"
    annotations = sorted(
        f"{key}={go_quote(value)}"
        for key, value in metadata.annotations.items()
        if key.startswith(prefix) and not (value in ("", "runtime/default") or value.startswith("localhost/"))
    )
    values = sorted(bad_values) + annotations
    if annotations:
        setters.append(_plural("annotation", "annotations", len(annotations)))
    if not setters:
        return None
    return Forbidden(
        _plural("forbidden AppArmor profile", "forbidden AppArmor profiles", len(values)),
        f"{' and '.join(setters)} must not set AppArmor profile type to {_join_quote(values)}",
    )


DEFAULT_CAPABILITIES = frozenset(
    {
        "AUDIT_WRITE",
        "CHOWN",
        "DAC_OVERRIDE",
        "FOWNER",
        "FSETID",
        "KILL",
        "MKNOD",
        "NET_BIND_SERVICE",
        "SETFCAP",
        "SETGID",
        "SETPCAP",
        "SETUID",
        "SYS_CHROOT",
    }
)


def _capabilities_baseline(metadata: Message, spec: Message) -> Forbidden | None:
    containers, capabilities = [], set()
    for container in _containers(spec):
        context = _context(container)
        if context is None or not context.HasField("capabilities"):
            continue
        added = [c for c in context.capabilities.add if c not in DEFAULT_CAPABILITIES]
        if added:
            containers.append(container.name)
            capabilities.update(added)
    if not containers:
        return None
    return Forbidden(
        "non-default capabilities",
        f"{_containers_named(containers)} must not include {_join_quote(sorted(capabilities))} "
        "in securityContext.capabilities.add",
    )


def _host_namespaces(metadata: Message, spec: Message) -> Forbidden | None:
    shared = [f"{name}=true" for name in ("hostNetwork", "hostPID", "hostIPC") if getattr(spec, name)]
    return Forbidden("host namespaces", ", ".join(shared)) if shared else None


def _host_path_volumes(metadata: Message, spec: Message) -> Forbidden | None:
    names = [v.name for v in spec.volumes if v.volumeSource.HasField("hostPath")]
    if not names:
        return None
    return Forbidden("hostPath volumes", f"{_plural('volume', 'volumes', len(names))} {_join_quote(names)}")


def _host_ports(metadata: Message, spec: Message) -> Forbidden | None:
    containers, ports = [], set()
    for container in _containers(spec):
        used = {str(port.hostPort) for port in container.ports if port.hostPort}
        if used:
            containers.append(container.name)
            ports |= used
    if not containers:
        return None
    return Forbidden(
        "hostPort",
        f"{_containers_named(containers)} {_plural('uses', 'use', len(containers))} "
        f"{_plural('hostPort', 'hostPorts', len(ports))} {', '.join(sorted(ports))}",
    )


def _privileged(metadata: Message, spec: Message) -> Forbidden | None:
    containers = [c.name for c in _containers(spec) if (ctx := _context(c)) is not None and ctx.privileged]
    if not containers:
        return None
    return Forbidden("privileged", f"{_containers_named(containers)} must not set securityContext.privileged=true")


def _proc_mount(metadata: Message, spec: Message) -> Forbidden | None:
    containers, types = [], set()
    for container in _containers(spec):
        context = _context(container)
        if context is not None and context.HasField("procMount") and context.procMount != "Default":
            containers.append(container.name)
            types.add(context.procMount)
    if not containers:
        return None
    return Forbidden(
        "procMount",
        f"{_containers_named(containers)} must not set securityContext.procMount to {_join_quote(sorted(types))}",
    )


SELINUX_TYPES_1_0 = frozenset({"", "container_t", "container_init_t", "container_kvm_t"})
SELINUX_TYPES_1_31 = SELINUX_TYPES_1_0 | {"container_engine_t"}


def _se_linux_options(allowed_types: frozenset[str], metadata: Message, spec: Message) -> Forbidden | None:
    bad_types: set[str] = set()
    user_set = role_set = False

    def valid(options: Message) -> bool:
        nonlocal user_set, role_set
        ok = True
        if options.type not in allowed_types:
            ok = False
            bad_types.add(options.type)
        if options.user:
            ok, user_set = False, True
        if options.role:
            ok, role_set = False, True
        return ok

    pod = _pod_context(spec)
    pod_bad = pod is not None and pod.HasField("seLinuxOptions") and not valid(pod.seLinuxOptions)
    containers = []
    for container in _containers(spec):
        context = _context(container)
        if context is not None and context.HasField("seLinuxOptions") and not valid(context.seLinuxOptions):
            containers.append(container.name)
    setters = _setters(pod_bad, containers)
    if not setters:
        return None
    problems = []
    if bad_types:
        problems.append(f"{_plural('type', 'types', len(bad_types))} {_join_quote(sorted(bad_types))}")
    if user_set:
        problems.append("user may not be set")
    if role_set:
        problems.append("role may not be set")
    return Forbidden(
        "seLinuxOptions",
        f"{' and '.join(setters)} set forbidden securityContext.seLinuxOptions: {'; '.join(problems)}",
    )


SECCOMP_POD_ANNOTATION = "seccomp.security.alpha.kubernetes.io/pod"
SECCOMP_CONTAINER_ANNOTATION = "container.seccomp.security.alpha.kubernetes.io/"
SECCOMP_TYPES = ("RuntimeDefault", "Localhost")


def _seccomp_annotations_1_0(metadata: Message, spec: Message) -> Forbidden | None:
    """Before v1.19 the profiles were annotations."""
    keys = [SECCOMP_POD_ANNOTATION] + [SECCOMP_CONTAINER_ANNOTATION + c.name for c in _containers(spec)]
    forbidden = set()
    for key in keys:
        value = metadata.annotations.get(key)
        if value is not None and not (value in ("runtime/default", "docker/default") or value.startswith("localhost/")):
            forbidden.add(f"{key}={go_quote(value)}")
    if not forbidden:
        return None
    return Forbidden(
        "seccompProfile",
        f"forbidden {_plural('annotation', 'annotations', len(forbidden))} {', '.join(sorted(forbidden))}",
    )


def _seccomp_profile(required: bool, metadata: Message, spec: Message) -> Forbidden | None:
    """The seccompProfile fields: a type other than RuntimeDefault or Localhost is forbidden; and
    (``required``, restricted) every container must have one, its own or the pod's."""
    bad_values: set[str] = set()
    pod = _pod_context(spec)
    pod_set = pod_bad = False
    if pod is not None and pod.HasField("seccompProfile"):
        pod_bad = pod.seccompProfile.type not in SECCOMP_TYPES
        pod_set = not pod_bad
        if pod_bad:
            bad_values.add(pod.seccompProfile.type)
    explicit, implicit = [], []
    for container in _containers(spec):
        context = _context(container)
        if context is not None and context.HasField("seccompProfile"):
            if context.seccompProfile.type not in SECCOMP_TYPES:
                explicit.append(container.name)
                bad_values.add(context.seccompProfile.type)
        elif not pod_set:
            implicit.append(container.name)
    setters = _setters(pod_bad, explicit)
    if setters:
        return Forbidden(
            "seccompProfile",
            f"{' and '.join(setters)} must not set securityContext.seccompProfile.type to "
            f"{_join_quote(sorted(bad_values))}",
        )
    if required and implicit:
        return Forbidden(
            "seccompProfile",
            f'pod or {_containers_named(implicit)} must set securityContext.seccompProfile.type to "RuntimeDefault" '
            'or "Localhost"',
        )
    return None


SYSCTLS_1_0 = frozenset(
    {
        "kernel.shm_rmid_forced",
        "net.ipv4.ip_local_port_range",
        "net.ipv4.tcp_syncookies",
        "net.ipv4.ping_group_range",
        "net.ipv4.ip_unprivileged_port_start",
    }
)
SYSCTLS_1_27 = SYSCTLS_1_0 | {"net.ipv4.ip_local_reserved_ports"}
SYSCTLS_1_29 = SYSCTLS_1_27 | {
    "net.ipv4.tcp_keepalive_time",
    "net.ipv4.tcp_fin_timeout",
    "net.ipv4.tcp_keepalive_intvl",
    "net.ipv4.tcp_keepalive_probes",
}
SYSCTLS_1_32 = SYSCTLS_1_29 | {"net.ipv4.tcp_rmem", "net.ipv4.tcp_wmem"}


def _sysctls(allowed: frozenset[str], metadata: Message, spec: Message) -> Forbidden | None:
    pod = _pod_context(spec)
    forbidden = [s.name for s in pod.sysctls if s.name not in allowed] if pod is not None else []
    return Forbidden("forbidden sysctls", ", ".join(forbidden)) if forbidden else None


def _host_process(metadata: Message, spec: Message) -> Forbidden | None:
    def sets_it(context: Message | None) -> bool:
        return context is not None and context.HasField("windowsOptions") and context.windowsOptions.hostProcess

    containers = [c.name for c in _containers(spec) if sets_it(_context(c))]
    setters = _setters(sets_it(_pod_context(spec)), containers)
    if not setters:
        return None
    return Forbidden(
        "hostProcess", f"{' and '.join(setters)} must not set securityContext.windowsOptions.hostProcess=true"
    )


# ---- restricted ----------------------------------------------------------------------------------
def _allow_privilege_escalation(metadata: Message, spec: Message) -> Forbidden | None:
    containers = [
        c.name
        for c in _containers(spec)
        if (ctx := _context(c)) is None or not ctx.HasField("allowPrivilegeEscalation") or ctx.allowPrivilegeEscalation
    ]
    if not containers:
        return None
    return Forbidden(
        "allowPrivilegeEscalation != false",
        f"{_containers_named(containers)} must set securityContext.allowPrivilegeEscalation=false",
    )


def _capabilities_restricted(metadata: Message, spec: Message) -> Forbidden | None:
    missing_drop, adding, capabilities = [], [], set()
    for container in _containers(spec):
        context = _context(container)
        if context is None or not context.HasField("capabilities"):
            missing_drop.append(container.name)
            continue
        if "ALL" not in context.capabilities.drop:
            missing_drop.append(container.name)
        added = [c for c in context.capabilities.add if c != "NET_BIND_SERVICE"]
        if added:
            adding.append(container.name)
            capabilities.update(added)
    details = []
    if missing_drop:
        details.append(f'{_containers_named(missing_drop)} must set securityContext.capabilities.drop=["ALL"]')
    if adding:
        details.append(
            f"{_containers_named(adding)} must not include {_join_quote(sorted(capabilities))} "
            "in securityContext.capabilities.add"
        )
    return Forbidden("unrestricted capabilities", "; ".join(details)) if details else None


ALLOWED_VOLUME_SOURCES = (
    "configMap",
    "csi",
    "downwardAPI",
    "emptyDir",
    "ephemeral",
    "persistentVolumeClaim",
    "projected",
    "secret",
)
# Named as upstream names them, in the order it looks for them; any other source is "unknown".
RESTRICTED_VOLUME_SOURCES = (
    "hostPath",
    "gcePersistentDisk",
    "awsElasticBlockStore",
    "gitRepo",
    "nfs",
    "iscsi",
    "glusterfs",
    "rbd",
    "flexVolume",
    "cinder",
    "cephfs",
    "flocker",
    "fc",
    "azureFile",
    "vsphereVolume",
    "quobyte",
    "azureDisk",
    "photonPersistentDisk",
    "portworxVolume",
    "scaleIO",
    "storageos",
)


def _restricted_volumes(metadata: Message, spec: Message) -> Forbidden | None:
    names, types = [], set()
    for volume in spec.volumes:
        source = volume.volumeSource
        if any(source.HasField(name) for name in ALLOWED_VOLUME_SOURCES):
            continue
        names.append(volume.name)
        types.add(next((name for name in RESTRICTED_VOLUME_SOURCES if source.HasField(name)), "unknown"))
    if not names:
        return None
    return Forbidden(
        "restricted volume types",
        f"{_plural('volume', 'volumes', len(names))} {_join_quote(names)} {_plural('uses', 'use', len(names))} "
        f"{_plural('restricted volume type', 'restricted volume types', len(types))} {_join_quote(sorted(types))}",
    )


def _run_as_non_root(metadata: Message, spec: Message) -> Forbidden | None:
    pod = _pod_context(spec)
    pod_bad = pod_true = False
    if pod is not None and pod.HasField("runAsNonRoot"):
        pod_true, pod_bad = pod.runAsNonRoot, not pod.runAsNonRoot
    explicit, implicit = [], []
    for container in _containers(spec):
        context = _context(container)
        if context is not None and context.HasField("runAsNonRoot"):
            if not context.runAsNonRoot:
                explicit.append(container.name)
        elif not pod_true:
            implicit.append(container.name)
    setters = _setters(pod_bad, explicit)
    if setters:
        return Forbidden(
            "runAsNonRoot != true", f"{' and '.join(setters)} must not set securityContext.runAsNonRoot=false"
        )
    if implicit:
        return Forbidden(
            "runAsNonRoot != true", f"pod or {_containers_named(implicit)} must set securityContext.runAsNonRoot=true"
        )
    return None


def _run_as_user(metadata: Message, spec: Message) -> Forbidden | None:
    def root(context: Message | None) -> bool:
        return context is not None and context.HasField("runAsUser") and context.runAsUser == 0

    containers = [c.name for c in _containers(spec) if root(_context(c))]
    setters = _setters(root(_pod_context(spec)), containers)
    if not setters:
        return None
    return Forbidden("runAsUser=0", f"{' and '.join(setters)} must not set runAsUser=0")


CHECKS = (
    Check(
        "allowPrivilegeEscalation",
        RESTRICTED,
        ((8, _allow_privilege_escalation), (25, _unless_windows(_allow_privilege_escalation))),
    ),
    Check("appArmorProfile", BASELINE, ((0, _app_armor_profile),)),
    Check("capabilities_baseline", BASELINE, ((0, _capabilities_baseline),)),
    Check(
        "capabilities_restricted",
        RESTRICTED,
        ((22, _capabilities_restricted), (25, _unless_windows(_capabilities_restricted))),
        replaces=("capabilities_baseline",),
    ),
    Check("hostNamespaces", BASELINE, ((0, _host_namespaces),)),
    Check("hostPathVolumes", BASELINE, ((0, _host_path_volumes),)),
    Check("hostPorts", BASELINE, ((0, _host_ports),)),
    Check("privileged", BASELINE, ((0, _privileged),)),
    Check("procMount", BASELINE, ((0, _proc_mount),)),
    Check("restrictedVolumes", RESTRICTED, ((0, _restricted_volumes),), replaces=("hostPathVolumes",)),
    Check("runAsNonRoot", RESTRICTED, ((0, _run_as_non_root),)),
    Check("runAsUser", RESTRICTED, ((23, _run_as_user),)),
    Check(
        "seLinuxOptions",
        BASELINE,
        ((0, partial(_se_linux_options, SELINUX_TYPES_1_0)), (31, partial(_se_linux_options, SELINUX_TYPES_1_31))),
    ),
    Check(
        "seccompProfile_baseline",
        BASELINE,
        ((0, _seccomp_annotations_1_0), (19, partial(_seccomp_profile, False))),
    ),
    Check(
        "seccompProfile_restricted",
        RESTRICTED,
        ((19, partial(_seccomp_profile, True)), (25, _unless_windows(partial(_seccomp_profile, True)))),
        replaces=("seccompProfile_baseline",),
    ),
    Check(
        "sysctls",
        BASELINE,
        (
            (0, partial(_sysctls, SYSCTLS_1_0)),
            (27, partial(_sysctls, SYSCTLS_1_27)),
            (29, partial(_sysctls, SYSCTLS_1_29)),
            (32, partial(_sysctls, SYSCTLS_1_32)),
        ),
    ),
    Check("windowsHostProcess", BASELINE, ((0, _host_process),)),
)
# The newest policy version a check changed at: "latest" and any later v1.X evaluate as this one.
NEWEST_MINOR = max(first for check in CHECKS for first, _ in check.versions)


@cache
def checks_for(level: str, minor: int) -> tuple[CheckPod, ...]:
    """The checks ``level`` runs at v1.<minor>: baseline ones by id, then (restricted) the
    restricted ones by id, without the baseline ones they replace."""
    active = [(check, how) for check in CHECKS if (how := check.at(minor)) is not None]
    restricted = [(check, how) for check, how in active if check.level == RESTRICTED] if level == RESTRICTED else []
    replaced = {name for check, _ in restricted for name in check.replaces}
    baseline = [(check, how) for check, how in active if check.level == BASELINE and check.id not in replaced]
    return tuple(how for _, how in sorted(baseline, key=_id) + sorted(restricted, key=_id))


def _id(entry: tuple[Check, CheckPod]) -> str:
    return entry[0].id


def evaluate(level_version: LevelVersion, metadata: Message, spec: Message) -> list[Forbidden]:
    """What the pod (metadata and spec) breaks at this level and version (nothing when privileged)."""
    if level_version.level == PRIVILEGED:
        return []
    minor = level_version.version.minor
    minor = NEWEST_MINOR if minor is None else min(minor, NEWEST_MINOR)
    return [found for check in checks_for(level_version.level, minor) if (found := check(metadata, spec)) is not None]


def reasons(found: Sequence[Forbidden]) -> str:
    """upstream's ForbiddenReason: the reasons alone (as namespace checks list them)."""
    return ", ".join(f.reason for f in found)


def details(found: Sequence[Forbidden]) -> str:
    """upstream's ForbiddenDetail: each reason with its detail in parentheses."""
    return ", ".join(f"{f.reason} ({f.detail})" if f.detail else f.reason for f in found)
