"""Every route the server serves, walked as clients without rights: each resource and subresource
with each verb discovery lists, and every non-resource path. Anonymous requests are refused (403)
except for the public info (system:public-info-viewer); an authenticated user without bindings may
also read discovery (system:discovery) and review itself (system:basic-user); with
--anonymous-auth=false a request without credentials gets 401 everywhere."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from tests.gateway.helpers import GatewayProcess

NOBODY_TOKEN = "nobody-token"
SELF_REVIEWS = {"selfsubjectaccessreviews", "selfsubjectrulesreviews", "selfsubjectreviews"}
PUBLIC = {"/healthz", "/livez", "/readyz", "/version", "/version/"}
DISCOVERY_PREFIXES = ("/api", "/apis", "/openapi")
NON_RESOURCE_PATHS = (
    "/",
    "/api",
    "/api/v1",
    "/apis",
    "/apis/apps",
    "/apis/apps/v1",
    "/version",
    "/version/",
    "/healthz",
    "/healthz/ping",
    "/livez",
    "/livez/etcd",
    "/readyz",
    "/readyz/shutdown",
    "/metrics",
    "/openapi/v2",
    "/openapi/v3",
    "/debug/pprof/",
    "/logs",
    "/.well-known/openid-configuration",
    "/openid/v1/jwks",
)
VERB_METHODS = {
    "get": "GET",
    "list": "GET",
    "watch": "GET",
    "create": "POST",
    "update": "PUT",
    "patch": "PATCH",
    "delete": "DELETE",
    "deletecollection": "DELETE",
}


@dataclass(frozen=True)
class Route:
    verb: str
    group: str
    resource: str  # "pods" or "pods/status"
    path: str

    @property
    def method(self) -> str:
        return VERB_METHODS[self.verb]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GatewayProcess]:
    data = tmp_path_factory.mktemp("walk")
    tokens = data / "tokens.csv"
    tokens.write_text(f"{NOBODY_TOKEN},nobody,u-9\n")
    process = GatewayProcess(data, "--token-auth-file", str(tokens)).start()
    yield process
    process.kill()


def group_versions(admin: httpx.Client) -> Iterator[tuple[str, str]]:
    """(group, path of the group version) for every served group version."""
    for version in admin.get("/api").json()["versions"]:
        yield "", f"/api/{version}"
    for group in admin.get("/apis").json()["groups"]:
        for version in group["versions"]:
            yield group["name"], f"/apis/{version['groupVersion']}"


def routes(admin: httpx.Client) -> list[Route]:
    """Every (verb, resource) discovery lists, as the URL a client would use."""
    found = []
    for group, prefix in group_versions(admin):
        for entry in admin.get(prefix).json()["resources"]:
            plural, _, subresource = entry["name"].partition("/")
            base = f"{prefix}/namespaces/default/{plural}" if entry["namespaced"] else f"{prefix}/{plural}"
            for verb in entry["verbs"]:
                if subresource:
                    path = f"{base}/x/{subresource}"
                elif verb in ("list", "watch", "create", "deletecollection"):
                    path = base
                else:
                    path = f"{base}/x"
                found.append(Route(verb, group, entry["name"], path))
    return found


def ask(client: httpx.Client, route: Route) -> httpx.Response:
    params = {"watch": "1", "timeoutSeconds": "1"} if route.verb == "watch" else None
    headers = {"Content-Type": "application/merge-patch+json"} if route.method == "PATCH" else None
    body = b"{}" if route.method in ("POST", "PUT", "PATCH") else None
    if body is not None and headers is None:
        headers = {"Content-Type": "application/json"}
    return client.request(route.method, route.path, params=params, headers=headers, content=body)


def test_the_walk_covers_every_kind_of_route(server: GatewayProcess) -> None:
    with server.client() as admin:
        walked = routes(admin)
    names = {(r.resource, r.verb) for r in walked}
    for expected in (
        ("pods", "list"),
        ("pods/status", "patch"),
        ("serviceaccounts/token", "create"),
        ("tokenreviews", "create"),
        ("clusterroles", "deletecollection"),
        ("deployments/scale", "update"),
        ("namespaces/finalize", "update"),
    ):
        assert expected in names, expected
    assert len(walked) > 300


def test_anonymous_and_unprivileged_clients_are_refused(server: GatewayProcess) -> None:
    with server.client() as admin:
        walked = routes(admin)
    with server.secure_client() as anonymous, server.secure_client(token=NOBODY_TOKEN) as nobody:
        for route in walked:
            answer = ask(anonymous, route)
            assert answer.status_code == 403, (route, answer.text)
            status = answer.json()
            assert status["reason"] == "Forbidden"
            assert f'User "system:anonymous" cannot {route.verb} resource "{route.resource}" ' in status["message"]
            assert f'in API group "{route.group}"' in status["message"]
            answer = ask(nobody, route)
            if route.resource in SELF_REVIEWS and route.verb == "create":
                assert answer.status_code != 403, route  # system:basic-user
            else:
                assert answer.status_code == 403, (route, answer.text)
                assert f'User "nobody" cannot {route.verb} resource "{route.resource}"' in answer.json()["message"]
        for path in NON_RESOURCE_PATHS:
            answer = anonymous.get(path)
            if path in PUBLIC:
                assert answer.status_code != 403, path
            else:
                assert answer.status_code == 403, path
                assert answer.json()["message"] == f'forbidden: User "system:anonymous" cannot get path "{path}"'
            readable = path in PUBLIC or any(path == p or path.startswith(p + "/") for p in DISCOVERY_PREFIXES)
            answer = nobody.get(path)
            assert (answer.status_code != 403) == readable, (path, answer.status_code)
            if not readable:
                assert answer.json()["message"] == f'forbidden: User "nobody" cannot get path "{path}"'
            assert nobody.post(path, json={}).status_code == 403, path  # nothing grants other verbs on paths


def test_without_anonymous_auth_every_route_needs_credentials(tmp_path: Path) -> None:
    process = GatewayProcess(tmp_path, "--anonymous-auth=false").start()
    try:
        with process.client() as admin:
            walked = routes(admin)
        with process.secure_client() as stranger:
            for route in walked:
                answer = ask(stranger, route)
                assert answer.status_code == 401, route
                assert answer.json()["reason"] == "Unauthorized"
            for path in NON_RESOURCE_PATHS:
                assert stranger.get(path).status_code == 401, path
    finally:
        process.kill()
