"""Pod Security levels, policy versions and the namespace labels that choose them
(k8s.io/pod-security-admission/api, 1.32).

A namespace's labels ``pod-security.kubernetes.io/<mode>`` and ``<mode>-version`` choose a level
(privileged, baseline, restricted) and a policy version (``latest`` or ``v1.X``) for each mode:
enforce (refuse), audit (record) and warn (tell the client). A mode without a label has the
configuration's default; an unparseable label is an error, and the mode then falls back to
restricted:latest for enforce (fail closed) and privileged for audit and warn (fail open).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, replace

from protokube.gateway.errors import FieldError

PRIVILEGED, BASELINE, RESTRICTED = "privileged", "baseline", "restricted"
LEVELS = (PRIVILEGED, BASELINE, RESTRICTED)  # from the least to the most strict
LATEST = "latest"
MODES = ("enforce", "audit", "warn")
LABEL_PREFIX = "pod-security.kubernetes.io/"
LEVEL_ERROR = f"must be one of {', '.join(LEVELS)}"
VERSION_ERROR = 'must be "latest" or "v1.x"'
_VERSION = re.compile(r"v1\.(0|[1-9][0-9]*)")


@dataclass(frozen=True, slots=True)
class Version:
    """A policy version: v1.<minor>, or latest (None), newer than every numbered one."""

    minor: int | None = None

    def __str__(self) -> str:
        return LATEST if self.minor is None else f"v1.{self.minor}"


@dataclass(frozen=True, slots=True)
class LevelVersion:
    level: str
    version: Version = Version()

    def __str__(self) -> str:
        return f"{self.level}:{self.version}"

    def equivalent(self, other: LevelVersion) -> bool:
        """Both privileged (whatever their versions), or the same level and version."""
        return (self.level == PRIVILEGED and other.level == PRIVILEGED) or self == other


@dataclass(frozen=True, slots=True)
class Policy:
    enforce: LevelVersion = LevelVersion(PRIVILEGED)
    audit: LevelVersion = LevelVersion(PRIVILEGED)
    warn: LevelVersion = LevelVersion(PRIVILEGED)

    def fully_privileged(self) -> bool:
        return all(mode.level == PRIVILEGED for mode in (self.enforce, self.audit, self.warn))

    def equivalent(self, other: Policy) -> bool:
        return (
            self.enforce.equivalent(other.enforce)
            and self.audit.equivalent(other.audit)
            and self.warn.equivalent(other.warn)
        )


def parse_level(text: str) -> str | None:
    """The level, or None when ``text`` is not one."""
    return text if text in LEVELS else None


def parse_version(text: str) -> Version | None:
    """The version (``latest`` or ``v1.X``), or None when ``text`` is not one."""
    if text == LATEST:
        return Version()
    match = _VERSION.fullmatch(text)
    return Version(int(match.group(1))) if match else None


def compare_levels(a: str, b: str) -> int:
    """-1, 0 or 1 as ``a`` is less, as or more strict than ``b``."""
    return (LEVELS.index(a) > LEVELS.index(b)) - (LEVELS.index(a) < LEVELS.index(b))


def label(mode: str, version: bool = False) -> str:
    return f"{LABEL_PREFIX}{mode}{'-version' if version else ''}"


def policy_from_labels(labels: Mapping[str, str], defaults: Policy) -> tuple[Policy, list[FieldError]]:
    """upstream's PolicyToEvaluate: the policy a namespace's labels choose over ``defaults``, and
    the errors of the labels that do not parse. A warn level left unset follows an enforce level
    set explicitly when that one is stricter (with its version, unless warn's is set)."""
    errors: list[FieldError] = []
    chosen: dict[str, LevelVersion] = {}
    enforce_level_set = False
    for mode in MODES:
        current: LevelVersion = getattr(defaults, mode)
        level_text, version_text = labels.get(label(mode)), labels.get(label(mode, version=True))
        if level_text is not None:
            level = parse_level(level_text)
            if level is None:
                errors.append(FieldError.invalid(f"metadata.labels[{label(mode)}]", level_text, LEVEL_ERROR))
                level = RESTRICTED if mode == "enforce" else PRIVILEGED
            elif mode == "enforce":
                enforce_level_set = True
            current = replace(current, level=level)
        if version_text is not None:
            version = parse_version(version_text)
            if version is None:
                errors.append(FieldError.invalid(f"metadata.labels[{label(mode, True)}]", version_text, VERSION_ERROR))
                version = Version()
            current = replace(current, version=version)
        chosen[mode] = current
    policy = Policy(**chosen)
    if (
        label("warn") not in labels
        and enforce_level_set
        and compare_levels(policy.enforce.level, policy.warn.level) > 0
    ):
        version = policy.warn.version if label("warn", version=True) in labels else policy.enforce.version
        policy = replace(policy, warn=LevelVersion(policy.enforce.level, version))
    return policy, errors
