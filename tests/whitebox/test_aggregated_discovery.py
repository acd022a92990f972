"""Aggregated discovery follows the registry: a resource added while the server runs appears in the
document (its group after the built-in ones, at custom resources' priority) under a new ETag, and
goes again when removed. Also the Accept negotiation and the group order on their own."""

from __future__ import annotations

import json

from protokube.gateway.app import create_app
from protokube.gateway.handlers.aggregated import Wanted, wanted
from protokube.gateway.negotiation.negotiate import DEFAULT_FORMATS, Formats
from protokube.gateway.registry.apiservicepriorities import discovery_order
from protokube.schema.registry import GroupVersionKind, Resource

from .stack import run, running_server

V2 = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
GROUP = "gadgets.example.dev"


def gadgets(version: str) -> Resource:
    return Resource(
        gvk=GroupVersionKind(GROUP, version, "Gadget"),
        plural="gadgets",
        singular="gadget",
        short_names=("gd",),
        categories=("all",),
        namespaced=False,
        verbs=("get", "list"),
        subresources={},
        printer_columns=(),
        selectable_fields=("metadata.name", "metadata.namespace"),
        storage_prefix=f"{GROUP}/gadgets",
        name_rule=0,
        allow_create_on_update=False,
        return_deleted_object=False,
        storage_kind=None,
        message="",
        list_message="",
    )


def test_the_document_follows_the_registry() -> None:
    async def scenario() -> None:
        async with running_server() as server:
            client = create_app(server).test_client()
            before = await client.get("/apis", headers={"Accept": V2})
            etag = before.headers["ETag"]

            server.registry.add(gadgets("v1beta1"))
            server.registry.add(gadgets("v1"))
            after = await client.get("/apis", headers={"Accept": V2, "If-None-Match": etag})
            assert after.status_code == 200 and after.headers["ETag"] != etag
            items = json.loads(await after.get_data())["items"]
            assert items[-1]["metadata"]["name"] == GROUP  # priority 1000, below every built-in group
            versions = items[-1]["versions"]
            assert [v["version"] for v in versions] == ["v1", "v1beta1"]
            assert versions[0]["resources"] == [
                {
                    "resource": "gadgets",
                    "responseKind": {"group": "", "version": "", "kind": "Gadget"},
                    "scope": "Cluster",
                    "singularResource": "gadget",
                    "verbs": ["get", "list"],
                    "shortNames": ["gd"],
                    "categories": ["all"],
                }
            ]

            server.registry.remove(GROUP, "v1", "gadgets")
            server.registry.remove(GROUP, "v1beta1", "gadgets")
            gone = await client.get("/apis", headers={"Accept": V2, "If-None-Match": etag})
            assert gone.status_code == 304  # the same document as before, so the same ETag

    run(scenario)


def test_accept_negotiation() -> None:
    cbor = Formats(cbor=True)
    assert wanted(None, DEFAULT_FORMATS) is None
    assert wanted("application/json", DEFAULT_FORMATS) is None
    assert wanted(V2, DEFAULT_FORMATS) == Wanted("v2", "application/json")
    assert wanted(f"{V2};q=0.5,application/json", DEFAULT_FORMATS) is None  # preference order decides
    yaml = V2.replace("application/json", "application/yaml")
    assert wanted(yaml, DEFAULT_FORMATS) == Wanted("v2", "application/yaml")
    assert wanted(V2.replace("application/json", "application/cbor"), DEFAULT_FORMATS) is None
    assert wanted(V2.replace("application/json", "application/cbor"), cbor) == Wanted("v2", "application/cbor")
    other = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscovery"
    assert wanted(f"{other},{V2.replace('v=v2', 'v=v2beta1')}", DEFAULT_FORMATS) == Wanted(
        "v2beta1", "application/json"
    )


def test_group_and_version_order() -> None:
    order = discovery_order(
        {
            "zeta.example": ["v1alpha1", "v2", "v1", "v1beta2", "v10"],
            "apps": ["v1"],
            "autoscaling": ["v1", "v2"],
            "alpha.example": ["v1"],
            "apiregistration.k8s.io": ["v1"],
            "": ["v1"],
        }
    )
    assert order == [
        ("apiregistration.k8s.io", ["v1"]),
        ("", ["v1"]),
        ("apps", ["v1"]),
        ("autoscaling", ["v2", "v1"]),
        ("alpha.example", ["v1"]),
        ("zeta.example", ["v10", "v2", "v1", "v1beta2", "v1alpha1"]),
    ]
