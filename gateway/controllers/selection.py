"""kube-controller-manager's ``--controllers``: which of its controllers run (protokube runs them in
the elected gateway).

A comma-separated list of names: ``*`` turns on every controller that is on by default (all of
protokube's are), ``foo`` turns foo on, ``-foo`` turns it off; the first mention of a name decides,
and a name not mentioned is on only when the list has ``*``. Names are 1.32's
(``serviceaccount-controller``); the older short names (``serviceaccount``) still name the same
controllers, as upstream takes them. Names of controllers protokube does not run are refused (as
the admission flags refuse plugins it lacks), where kube-controller-manager knows them. Running the
API server without some of them is what upstream's own API tests do (they run kube-apiserver
without kube-controller-manager).
"""

from __future__ import annotations

from dataclasses import dataclass

NAMESPACE = "namespace-controller"
GARBAGE_COLLECTOR = "garbage-collector-controller"
RESOURCE_QUOTA = "resourcequota-controller"
SERVICE_ACCOUNT = "serviceaccount-controller"
SERVICE_ACCOUNT_TOKEN = "serviceaccount-token-controller"
ROOT_CA_PUBLISHER = "root-ca-certificate-publisher-controller"
CLUSTER_ROLE_AGGREGATION = "clusterrole-aggregation-controller"
PVC_PROTECTION = "persistentvolumeclaim-protection-controller"
PV_PROTECTION = "persistentvolume-protection-controller"
# Every controller protokube runs, by its name and the name it had before 1.28.
ALIASES = {
    "namespace": NAMESPACE,
    "garbagecollector": GARBAGE_COLLECTOR,
    "resourcequota": RESOURCE_QUOTA,
    "serviceaccount": SERVICE_ACCOUNT,
    "serviceaccount-token": SERVICE_ACCOUNT_TOKEN,
    "root-ca-cert-publisher": ROOT_CA_PUBLISHER,
    "clusterrole-aggregation": CLUSTER_ROLE_AGGREGATION,
    "pvc-protection": PVC_PROTECTION,
    "pv-protection": PV_PROTECTION,
}
KNOWN = frozenset(ALIASES.values())
ALL = "*"


@dataclass(frozen=True)
class ControllerSelection:
    names: tuple[str, ...] = (ALL,)  # as given, short names made long

    def enabled(self, name: str) -> bool:
        for given in self.names:
            if given == name:
                return True
            if given == f"-{name}":
                return False
        return ALL in self.names

    @classmethod
    def parse(cls, text: str) -> ControllerSelection:
        """The flag's value; ValueError naming an unknown controller as upstream does."""
        names = []
        for item in filter(None, (part.strip() for part in text.split(","))):
            off = item.startswith("-")
            name = item.removeprefix("-")
            if name != ALL:
                name = ALIASES.get(name, name)
                if name not in KNOWN:
                    raise ValueError(f'"{name}" is not in the list of known controllers')
            names.append(f"-{name}" if off else name)
        return cls(tuple(names))


DEFAULT = ControllerSelection()
