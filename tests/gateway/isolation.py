"""What a test module leaves on the shared server for other modules to see.

The session's server is shared by every module a pytest worker runs, in an order that changes from
run to run (xdist's scheduling, random ordering): whatever a module leaves in the cluster's scope —
an APIService, a CRD, a ClusterRole, a namespace — shows up in the next module's discovery
documents and cluster-wide lists. ``ClusterSnapshot`` records the names of every object of every
cluster-scoped resource the server lists, and the API groups it serves. When a module is done
with the shared server, the conftest deletes what the module added to the cluster's scope
(``leave_as_found``: the module's own fixture, for every module) and waits until the server is as
it started; what cannot be put back — an object removed, a group still served — fails the module.
Objects being deleted count as gone (their finalizers allow it, or hold them for good).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import httpx

# Resources whose lists no test writes to: computed by the server at each list.
COMPUTED = frozenset({"componentstatuses"})
SETTLE = 60.0  # seconds a deletion may take to show (CRDs: their objects first; discovery follows)


def cluster_resources(client: httpx.Client) -> list[str]:
    """The list paths of every cluster-scoped resource the server serves (preferred versions)."""
    paths: list[str] = []
    core = client.get("/api/v1").json()
    paths += [f"/api/v1/{r['name']}" for r in core["resources"] if _listable_cluster_resource(r)]
    for group in client.get("/apis").json()["groups"]:
        version = group["preferredVersion"]["groupVersion"]
        answer = client.get(f"/apis/{version}")
        if answer.status_code != 200:  # an APIService whose backend is away
            continue
        paths += [f"/apis/{version}/{r['name']}" for r in answer.json()["resources"] if _listable_cluster_resource(r)]
    return paths


def _listable_cluster_resource(resource: dict) -> bool:
    name = resource["name"]
    return not resource["namespaced"] and "/" not in name and name not in COMPUTED and "list" in resource["verbs"]


@dataclass(frozen=True)
class ClusterSnapshot:
    objects: frozenset[str]  # "<list path>/<name>" of each object not being deleted
    groups: frozenset[str]  # the API groups /apis lists

    @classmethod
    def take(cls, client: httpx.Client) -> ClusterSnapshot:
        objects: set[str] = set()
        for path in cluster_resources(client):
            answer = client.get(path)
            if answer.status_code != 200:
                continue
            for item in answer.json().get("items") or ():
                meta = item.get("metadata") or {}
                if not meta.get("deletionTimestamp"):
                    objects.add(f"{path}/{meta.get('name')}")
        groups = frozenset(g["name"] for g in client.get("/apis").json()["groups"])
        return cls(frozenset(objects), groups)

    def differences(self, now: ClusterSnapshot) -> str:
        """What ``now`` has that this snapshot had not, and what it lost; empty when they agree."""
        lines = [f"left behind: {o}" for o in sorted(now.objects - self.objects)]
        lines += [f"removed: {o}" for o in sorted(self.objects - now.objects)]
        lines += [f"group still served: {g}" for g in sorted(now.groups - self.groups)]
        lines += [f"group no longer served: {g}" for g in sorted(self.groups - now.groups)]
        return "\n".join(lines)


def leave_as_found(client: httpx.Client, as_found: ClusterSnapshot) -> str:
    """Delete the cluster-scoped objects added since ``as_found``, then wait until the server shows
    what it showed then; returns what still differs (empty when all is as found)."""
    now = ClusterSnapshot.take(client)
    for path in sorted(now.objects - as_found.objects):
        client.delete(path)
    deadline = time.monotonic() + SETTLE
    while (differences := as_found.differences(now)) and time.monotonic() < deadline:
        time.sleep(0.1)
        now = ClusterSnapshot.take(client)
    return differences
