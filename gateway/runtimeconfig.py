"""--runtime-config: which group versions the server serves (upstream's flag of that name).

A comma-separated list of ``KEY=BOOL`` (``=true`` may be left out): ``api/all`` turns every group
version on or off, then ``GROUP/VERSION`` entries turn single ones on or off (``api/v1`` or ``v1``
for the core group), then ``GROUP/VERSION/RESOURCE`` entries single resources, whatever their order
in the list (upstream's MergeAPIResourceConfigs). Everything is on by default but the worked
example of a proto-native group (``example.protokube.dev/v1``, proto/dev/protokube/example) and
upstream's alpha ``certificates.k8s.io/v1alpha1``, which are off unless named, as upstream's alpha
versions are (``api/all=true`` names them too). A resource behind a feature gate is served only when
its gate is on too (ClusterTrustBundles: pkg/registry/certificates/rest). The core group must stay
on: namespaces and the system namespaces live there.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the flag is read before the registry's modules import (issue 33's fast start)
    from protokube.schema.registry import Registry

log = logging.getLogger(__name__)

ALL = "api/all"
CORE = ("", "v1")
# Served only when --runtime-config asks for them.
OFF_BY_DEFAULT = frozenset({("example.protokube.dev", "v1"), ("certificates.k8s.io", "v1alpha1")})
# Resources served only when their feature gate (--feature-gates) is on as well.
FEATURE_GATED = {("certificates.k8s.io", "v1alpha1", "clustertrustbundles"): "ClusterTrustBundle"}


class RuntimeConfigError(ValueError):
    pass


@dataclass(frozen=True, slots=True)
class RuntimeConfig:
    all_enabled: bool = True
    # (group, version) → enabled, overriding all_enabled.
    versions: tuple[tuple[tuple[str, str], bool], ...] = ()
    all_named: bool = False  # api/all was given
    # (group, version, resource) → enabled, overriding its group version.
    resources: tuple[tuple[tuple[str, str, str], bool], ...] = ()

    def enabled(self, group: str, version: str) -> bool:
        explicit = dict(self.versions).get((group, version))
        if explicit is not None:
            return explicit
        if (group, version) in OFF_BY_DEFAULT:
            return self.all_named and self.all_enabled
        return self.all_enabled

    def resource_enabled(self, group: str, version: str, resource: str) -> bool:
        """upstream's ResourceEnabled: the resource's own entry, else its group version's."""
        explicit = dict(self.resources).get((group, version, resource))
        return self.enabled(group, version) if explicit is None else explicit

    def apply(self, registry: Registry, gates: Mapping[str, bool] | None = None) -> None:
        """Remove from ``registry`` (before serving) the resources turned off, and those whose
        feature gate is not on in ``gates``."""
        if not self.enabled(*CORE):
            raise RuntimeConfigError("api/v1 cannot be turned off: the core group serves namespaces")
        for key in list(registry.resources):
            if not self.resource_enabled(*key):
                registry.remove(*key)
            elif key in FEATURE_GATED and not (gates or {}).get(gate := FEATURE_GATED[key], False):
                log.warning("%s storage is disabled because the %s feature gate is disabled", gate, gate)
                registry.remove(*key)


def parse(text: str) -> RuntimeConfig:
    all_enabled, all_named = True, False
    versions: dict[tuple[str, str], bool] = {}
    resources: dict[tuple[str, str, str], bool] = {}
    for entry in (e.strip() for e in text.split(",")):
        if not entry:
            continue
        key, _, value = entry.partition("=")
        value = value.strip().lower() or "true"
        if value not in ("true", "false"):
            raise RuntimeConfigError(f"invalid value of {key}: {value}, err: must be true or false")
        on = value == "true"
        key = key.strip()
        if key == ALL:
            all_enabled, all_named = on, True
            continue
        parts = key.split("/")
        if key in ("api/v1", "v1", "api/legacy"):
            versions[CORE] = on
        elif len(parts) == 2 and all(parts) and parts[0] != "api":
            versions[(parts[0], parts[1])] = on
        elif len(parts) == 3 and all(parts) and parts[0] != "api":
            if parts[2].lower() != parts[2]:
                raise RuntimeConfigError(
                    f"invalid key {key}: group/version/resource and resource is always lowercase plural, "
                    f'not "{parts[2]}"'
                )
            resources[(parts[0], parts[1], parts[2])] = on
        else:
            raise RuntimeConfigError(
                f"unknown runtime-config key {key!r}: use api/all, api/v1, GROUP/VERSION or GROUP/VERSION/RESOURCE"
            )
    return RuntimeConfig(all_enabled, tuple(versions.items()), all_named, tuple(resources.items()))
