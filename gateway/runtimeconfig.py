"""--runtime-config: which group versions the server serves (upstream's flag of that name).

A comma-separated list of ``KEY=BOOL`` (``=true`` may be left out): ``api/all`` turns every group
version on or off, then ``GROUP/VERSION`` entries turn single ones on or off (``api/v1`` or ``v1``
for the core group), whatever their order in the list. Everything is on by default but the worked
example of a proto-native group (``example.protokube.dev/v1``, proto/dev/protokube/example), which
is off unless named, as upstream's alpha versions are (``api/all=true`` names it too). The core group
must stay on: namespaces and the system namespaces live there.
"""

from __future__ import annotations

from dataclasses import dataclass

from protokube.schema.registry import Registry

ALL = "api/all"
CORE = ("", "v1")
# Served only when --runtime-config asks for them.
OFF_BY_DEFAULT = frozenset({("example.protokube.dev", "v1")})


class RuntimeConfigError(ValueError):
    pass


@dataclass(frozen=True, slots=True)
class RuntimeConfig:
    all_enabled: bool = True
    # (group, version) → enabled, overriding all_enabled.
    versions: tuple[tuple[tuple[str, str], bool], ...] = ()
    all_named: bool = False  # api/all was given

    def enabled(self, group: str, version: str) -> bool:
        explicit = dict(self.versions).get((group, version))
        if explicit is not None:
            return explicit
        if (group, version) in OFF_BY_DEFAULT:
            return self.all_named and self.all_enabled
        return self.all_enabled

    def apply(self, registry: Registry) -> None:
        """Remove the resources of disabled group versions from ``registry`` (before serving)."""
        if not self.enabled(*CORE):
            raise RuntimeConfigError("api/v1 cannot be turned off: the core group serves namespaces")
        for key in [k for k in registry.resources if not self.enabled(k[0], k[1])]:
            registry.remove(*key)


def parse(text: str) -> RuntimeConfig:
    all_enabled, all_named = True, False
    versions: dict[tuple[str, str], bool] = {}
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
        else:
            raise RuntimeConfigError(f"unknown runtime-config key {key!r}: use api/all, api/v1 or GROUP/VERSION")
    return RuntimeConfig(all_enabled, tuple(versions.items()), all_named)
