"""storage.k8s.io/v1 defaults: k8s.io/kubernetes pkg/apis/storage/v1/defaults.go as of 1.32
(SELinuxMountReadWriteOncePod on)."""

from __future__ import annotations

from google.protobuf.message import Message

from protokube.gateway.registry.defaults.base import defaulter
from protokube.gateway.registry.defaults.values import default, default_list

STORAGE = "k8s.io.api.storage.v1"


@defaulter(f"{STORAGE}.StorageClass")
def storage_class(obj: Message) -> None:
    default(obj, "reclaimPolicy", "Delete")
    default(obj, "volumeBindingMode", "Immediate")


@defaulter(f"{STORAGE}.CSIDriver")
def csi_driver(obj: Message) -> None:
    spec = obj.spec
    default(spec, "attachRequired", True)
    default(spec, "podInfoOnMount", False)
    default(spec, "storageCapacity", False)
    default(spec, "fsGroupPolicy", "ReadWriteOnceWithFSType")
    default_list(spec, "volumeLifecycleModes", ["Persistent"])
    default(spec, "requiresRepublish", False)
    default(spec, "seLinuxMount", False)
