"""Which garbage-collection finalizers a delete sets (upstream's deletionFinalizersForGarbageCollection).

A delete asks what happens to the object's dependents: ``Orphan`` (the ``orphan`` finalizer: the
garbage collector removes the owner reference from each dependent, then the finalizer),
``Foreground`` (the ``foregroundDeletion`` finalizer: the owner stays until its blocking dependents
are gone) or ``Background`` (no finalizer: dependents are collected once the owner is gone).
The request's propagationPolicy or orphanDependents decide, else a finalizer already on the object,
else the kind's default (Background, but Orphan where upstream keeps it for older clients).
"""

from __future__ import annotations

from protokube.gateway.params import DeleteOptions

ORPHAN, BACKGROUND, FOREGROUND = "Orphan", "Background", "Foreground"
ORPHAN_FINALIZER = "orphan"
FOREGROUND_FINALIZER = "foregroundDeletion"
GC_FINALIZERS = (ORPHAN_FINALIZER, FOREGROUND_FINALIZER)

# Resources (group, version, plural) whose served version orphans dependents by default, as upstream's
# strategies' DefaultGarbageCollectionPolicy for these versions.
ORPHAN_BY_DEFAULT = frozenset({("", "v1", "replicationcontrollers"), ("batch", "v1", "jobs")})
# The warning a delete that leaves the policy to the kind's default gets (upstream's Job REST).
DEFAULT_POLICY_WARNINGS = {
    ("batch", "v1", "jobs"): "child pods are preserved by default when jobs are deleted; "
    "set propagationPolicy=Background to remove them or set propagationPolicy=Orphan to suppress this warning",
}


def default_policy(key: tuple[str, str, str]) -> str:
    return ORPHAN if key in ORPHAN_BY_DEFAULT else BACKGROUND


def _orphans(finalizers: list[str], options: DeleteOptions, default: str) -> bool:
    if options.orphan_dependents is not None:
        return options.orphan_dependents
    if options.propagation_policy is not None:
        return options.propagation_policy == ORPHAN
    for finalizer in finalizers:
        if finalizer in GC_FINALIZERS:
            return finalizer == ORPHAN_FINALIZER
    return default == ORPHAN


def _in_foreground(finalizers: list[str], options: DeleteOptions) -> bool:
    if options.orphan_dependents is not None:
        return False
    if options.propagation_policy is not None:
        return options.propagation_policy == FOREGROUND
    return FOREGROUND_FINALIZER in finalizers


def deletion_finalizers(finalizers: list[str], options: DeleteOptions, default: str) -> list[str]:
    """The object's finalizers once this delete has set those of garbage collection."""
    found = [f for f in finalizers if f not in GC_FINALIZERS]
    if _orphans(finalizers, options, default):
        found.append(ORPHAN_FINALIZER)
    if _in_foreground(finalizers, options):
        found.append(FOREGROUND_FINALIZER)
    return found if set(found) != set(finalizers) else list(finalizers)


def default_policy_warnings(key: tuple[str, str, str], options: DeleteOptions) -> list[str]:
    """The warning of a delete that leaves the policy to a kind whose default orphans."""
    warning = DEFAULT_POLICY_WARNINGS.get(key)
    if warning is None or options.propagation_policy is not None or options.orphan_dependents is not None:
        return []
    return [warning]
