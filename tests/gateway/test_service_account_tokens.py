"""Service account tokens against a real server over TLS: TokenRequest (``kubectl create token``),
bound and legacy tokens authenticating as their service account, TokenReview, and the tokens that
must not authenticate (expired, for another audience, badly signed, of objects gone)."""

from __future__ import annotations

import base64
import json
import subprocess
import time
from pathlib import Path
from typing import Any

import httpx
import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from tests.gateway.helpers import GatewayProcess, eventually, kubectl_path

ISSUER = "https://kubernetes.default.svc.cluster.local"
REVIEWS = "/apis/authentication.k8s.io/v1/tokenreviews"
WHOAMI = "/apis/authentication.k8s.io/v1/selfsubjectreviews"


def service_account(client: httpx.Client, namespace: str, name: str) -> dict[str, Any]:
    made = client.post(f"/api/v1/namespaces/{namespace}/serviceaccounts", json={"metadata": {"name": name}})
    assert made.status_code == 201, made.text
    return made.json()


def token_request(client: httpx.Client, namespace: str, name: str, **spec: Any) -> httpx.Response:
    body = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": spec}
    return client.post(f"/api/v1/namespaces/{namespace}/serviceaccounts/{name}/token", json=body)


def token_of(client: httpx.Client, namespace: str, name: str, **spec: Any) -> str:
    answer = token_request(client, namespace, name, **spec)
    assert answer.status_code == 201, answer.text
    return answer.json()["status"]["token"]


def review(client: httpx.Client, token: str, audiences: list[str] | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"token": token}
    if audiences:
        spec["audiences"] = audiences
    answer = client.post(REVIEWS, json={"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "spec": spec})
    assert answer.status_code == 201, answer.text
    return answer.json()["status"]


def whoami(server: GatewayProcess, token: str) -> httpx.Response:
    with server.secure_client(token=token) as holder:
        return holder.post(WHOAMI, json={"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"})


def signing_key(server: GatewayProcess) -> rsa.RSAPrivateKey:
    key = serialization.load_pem_private_key((server.data_dir / "pki" / "sa.key").read_bytes(), None)
    assert isinstance(key, rsa.RSAPrivateKey)
    return key


def resigned(token: str, key: rsa.RSAPrivateKey, **changes: Any) -> str:
    """The token's claims (with ``changes``), signed again with ``key``."""
    claims = {**jwt.decode(token, options={"verify_signature": False}), **changes}
    return jwt.encode(claims, key, algorithm="RS256", headers=jwt.get_unverified_header(token))


def test_kubectl_create_token_and_whoami(
    server: GatewayProcess, client: httpx.Client, namespace: str, tmp_path: Path
) -> None:
    kubectl = kubectl_path()
    if kubectl is None:
        pytest.skip("kubectl is not installed")
    account = service_account(client, namespace, "robot")
    env = {"HOME": str(tmp_path)}
    made = subprocess.run(
        [kubectl, "--kubeconfig", str(server.kubeconfig), "create", "token", "robot", "-n", namespace],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    assert made.returncode == 0, made.stderr
    token = made.stdout.strip()
    header = jwt.get_unverified_header(token)
    assert set(header) == {"alg", "kid"} and header["alg"] == "RS256"
    public = serialization.load_pem_public_key((server.data_dir / "pki" / "sa.pub").read_bytes())
    claims = jwt.decode(token, public, algorithms=["RS256"], audience=ISSUER)  # type: ignore[arg-type]
    assert list(claims) == ["aud", "exp", "iat", "iss", "jti", "kubernetes.io", "nbf", "sub"]
    assert claims["iss"] == ISSUER and claims["aud"] == [ISSUER]
    assert claims["sub"] == f"system:serviceaccount:{namespace}:robot"
    assert claims["exp"] - claims["iat"] == 3600 and claims["nbf"] == claims["iat"]
    uid = account["metadata"]["uid"]
    assert claims["kubernetes.io"] == {"namespace": namespace, "serviceaccount": {"name": "robot", "uid": uid}}
    for name in ("sa.key", "sa.pub"):
        assert (server.data_dir / "pki" / name).stat().st_mode & 0o777 == 0o600

    config = server.token_kubeconfig(tmp_path / "robot.kubeconfig", token)
    me = subprocess.run(
        [kubectl, "--kubeconfig", str(config), "auth", "whoami", "-o", "json"],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    assert me.returncode == 0, me.stderr
    assert json.loads(me.stdout)["status"]["userInfo"] == {
        "username": f"system:serviceaccount:{namespace}:robot",
        "uid": uid,
        "groups": ["system:serviceaccounts", f"system:serviceaccounts:{namespace}", "system:authenticated"],
        "extra": {"authentication.kubernetes.io/credential-id": [f"JTI={claims['jti']}"]},
    }
    short = subprocess.run(
        [kubectl, "--kubeconfig", str(server.kubeconfig), "create", "token", "robot", "-n", namespace, "--duration=1m"],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    assert short.returncode != 0
    assert (
        'TokenRequest.authentication.k8s.io "robot" is invalid: spec.expirationSeconds: Invalid value: 60: '
        "may not specify a duration less than 10 minutes" in short.stderr
    )


def test_token_request_defaults_and_refusals(client: httpx.Client, namespace: str) -> None:
    service_account(client, namespace, "robot")
    answer = token_request(client, namespace, "robot")
    assert answer.status_code == 201
    made = answer.json()
    assert made["kind"] == "TokenRequest" and made["apiVersion"] == "authentication.k8s.io/v1"
    assert made["metadata"]["name"] == "robot" and made["metadata"]["namespace"] == namespace
    assert made["spec"] == {"audiences": [ISSUER], "expirationSeconds": 3600, "boundObjectRef": None}
    assert made["status"]["expirationTimestamp"].endswith("Z")

    too_short = token_request(client, namespace, "robot", expirationSeconds=599)
    assert too_short.status_code == 422
    assert too_short.json()["message"] == (
        'TokenRequest.authentication.k8s.io "robot" is invalid: spec.expirationSeconds: Invalid value: 599: '
        "may not specify a duration less than 10 minutes"
    )
    missing = token_request(client, namespace, "ghost")
    assert missing.status_code == 404
    assert missing.json()["message"] == 'serviceaccounts "ghost" not found'
    body = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "metadata": {"name": "other"}}
    renamed = client.post(f"/api/v1/namespaces/{namespace}/serviceaccounts/robot/token", json=body)
    assert renamed.status_code == 422
    assert renamed.json()["message"] == (
        'TokenRequest.authentication.k8s.io "robot" is invalid: metadata.name: Invalid value: "other": '
        "must match the service account name if specified"
    )
    deployment = {"kind": "Deployment", "apiVersion": "apps/v1", "name": "web"}
    unbindable = token_request(client, namespace, "robot", boundObjectRef=deployment)
    assert unbindable.status_code == 400
    assert unbindable.json()["message"] == "cannot bind token to object of type apps/v1, Kind=Deployment"
    get = client.get(f"/api/v1/namespaces/{namespace}/serviceaccounts/robot/token")
    assert get.status_code == 405


def test_a_pod_bound_token_lives_with_its_pod(server: GatewayProcess, client: httpx.Client, namespace: str) -> None:
    service_account(client, namespace, "robot")
    pods = f"/api/v1/namespaces/{namespace}/pods"
    container = [{"name": "c", "image": "nginx"}]
    pod = client.post(
        pods, json={"metadata": {"name": "p"}, "spec": {"serviceAccountName": "robot", "containers": container}}
    )
    assert pod.status_code == 201, pod.text
    other = client.post(pods, json={"metadata": {"name": "q"}, "spec": {"containers": container}})
    assert other.status_code == 201, other.text
    uid = pod.json()["metadata"]["uid"]

    token = token_of(
        client, namespace, "robot", boundObjectRef={"kind": "Pod", "apiVersion": "v1", "name": "p", "uid": uid}
    )
    claims = jwt.decode(token, options={"verify_signature": False})
    assert claims["kubernetes.io"]["pod"] == {"name": "p", "uid": uid}
    status = review(client, token)
    assert status["authenticated"] is True
    extra = status["user"]["extra"]
    assert extra["authentication.kubernetes.io/pod-name"] == ["p"]
    assert extra["authentication.kubernetes.io/pod-uid"] == [uid]

    wrong_uid = token_request(
        client, namespace, "robot", boundObjectRef={"kind": "Pod", "apiVersion": "v1", "name": "p", "uid": "x"}
    )
    assert wrong_uid.status_code == 409
    assert wrong_uid.json()["message"] == (
        'Operation cannot be fulfilled on Pod "p": the UID in the bound object reference (x) does not match '
        "the UID in record. The object might have been deleted and then recreated"
    )
    foreign = token_request(client, namespace, "robot", boundObjectRef={"kind": "Pod", "apiVersion": "v1", "name": "q"})
    assert foreign.status_code == 400
    assert foreign.json()["message"] == (
        'cannot bind token for serviceaccount "robot" to pod running with different serviceaccount name.'
    )

    assert whoami(server, token).status_code == 201
    assert client.delete(f"{pods}/p", params={"gracePeriodSeconds": "0"}).status_code == 200
    assert eventually(lambda: whoami(server, token).status_code == 401)
    assert review(client, token) == {"user": {}, "error": "service account token has been invalidated"}


def test_tokens_that_do_not_authenticate(server: GatewayProcess, client: httpx.Client, namespace: str) -> None:
    account = service_account(client, namespace, "robot")
    token = token_of(client, namespace, "robot")
    assert whoami(server, token).status_code == 201
    now = int(time.time())
    key = signing_key(server)

    expired = resigned(token, key, iat=now - 4000, nbf=now - 4000, exp=now - 120)
    refused = whoami(server, expired)
    assert refused.status_code == 401
    assert refused.json()["reason"] == "Unauthorized" and refused.json()["message"] == "Unauthorized"
    assert review(client, expired)["error"] == "service account token has expired"
    within_leeway = resigned(token, key, exp=now - 10)  # go-jose's leeway: a minute
    assert whoami(server, within_leeway).status_code == 201
    early = resigned(token, key, nbf=now + 600)
    assert review(client, early)["error"] == "service account token is not valid yet"

    for claim in ("exp", "nbf", "iat"):  # go-jose's NumericDate: a JSON number or nothing
        as_text = resigned(token, key, **{claim: str(now + 600)})
        assert whoami(server, as_text).status_code == 401
        assert review(client, as_text)["error"] == "go-jose/go-jose/jwt: expected number for NumericDate"

    stranger = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    forged = resigned(token, stranger)
    assert whoami(server, forged).status_code == 401
    assert review(client, forged)["error"] == "go-jose/go-jose: error in cryptographic primitive"
    header, _, signature = token.split(".")
    claims = jwt.decode(token, options={"verify_signature": False})
    claims["sub"] = "system:serviceaccount:kube-system:admin"
    forged_payload = base64.urlsafe_b64encode(json.dumps(claims).encode()).rstrip(b"=").decode()
    tampered = f"{header}.{forged_payload}.{signature}"
    assert whoami(server, tampered).status_code == 401

    # The Authorization header split as upstream's: the second space-separated field is the token.
    with server.secure_client() as anonymous:
        spaced = anonymous.post(
            WHOAMI, json={"kind": "SelfSubjectReview"}, headers={"Authorization": f"Bearer  {token}"}
        )
        assert spaced.status_code == 403 and "system:anonymous" in spaced.json()["message"]
        trailing = anonymous.post(
            WHOAMI, json={"kind": "SelfSubjectReview"}, headers={"Authorization": f"Bearer {token} junk"}
        )
        assert trailing.status_code == 201
        assert trailing.json()["status"]["userInfo"]["username"] == f"system:serviceaccount:{namespace}:robot"

    elsewhere = token_of(client, namespace, "robot", audiences=["vault"])
    assert whoami(server, elsewhere).status_code == 401
    assert review(client, elsewhere)["error"] == (
        f'token audiences ["vault"] is invalid for the target audiences ["{ISSUER}"]'
    )
    for_vault = review(client, elsewhere, ["vault", "other"])
    assert for_vault["authenticated"] is True and for_vault["audiences"] == ["vault"]
    assert review(client, "not-a-token") == {"user": {}, "error": "invalid bearer token"}
    empty = client.post(REVIEWS, json={"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "spec": {}})
    assert empty.status_code == 400
    assert empty.json()["message"] == "token is required for TokenReview in authentication"

    # the service account goes, and comes back as another object: old tokens stay refused
    accounts = f"/api/v1/namespaces/{namespace}/serviceaccounts"
    assert client.delete(f"{accounts}/robot").status_code == 200
    assert eventually(lambda: whoami(server, token).status_code == 401)
    assert review(client, token)["error"] == 'serviceaccounts "robot" not found'
    again = service_account(client, namespace, "robot")
    assert eventually(lambda: "does not match" in review(client, token).get("error", ""))
    assert review(client, token)["error"] == (
        f"service account UID ({again['metadata']['uid']}) does not match claim ({account['metadata']['uid']})"
    )


def test_legacy_token_secrets(server: GatewayProcess, client: httpx.Client, namespace: str) -> None:
    account = service_account(client, namespace, "robot")
    secrets = f"/api/v1/namespaces/{namespace}/secrets"
    secret = {
        "metadata": {"name": "robot-token", "annotations": {"kubernetes.io/service-account.name": "robot"}},
        "type": "kubernetes.io/service-account-token",
    }
    assert client.post(secrets, json=secret).status_code == 201

    def filled() -> dict[str, Any] | None:
        found = client.get(f"{secrets}/robot-token").json()
        return found if "token" in (found.get("data") or {}) else None

    found = eventually(filled)
    assert found, "the tokens controller did not fill the secret"
    data = {key: base64.b64decode(value) for key, value in found["data"].items()}
    assert data["ca.crt"] == (server.data_dir / "pki" / "ca.crt").read_bytes()
    assert data["namespace"] == namespace.encode()
    assert found["metadata"]["annotations"]["kubernetes.io/service-account.uid"] == account["metadata"]["uid"]
    token = data["token"].decode()
    assert jwt.decode(token, options={"verify_signature": False}) == {
        "iss": "kubernetes/serviceaccount",
        "kubernetes.io/serviceaccount/namespace": namespace,
        "kubernetes.io/serviceaccount/secret.name": "robot-token",
        "kubernetes.io/serviceaccount/service-account.name": "robot",
        "kubernetes.io/serviceaccount/service-account.uid": account["metadata"]["uid"],
        "sub": f"system:serviceaccount:{namespace}:robot",
    }
    me = whoami(server, token)
    assert me.status_code == 201, me.text
    assert me.json()["status"]["userInfo"]["username"] == f"system:serviceaccount:{namespace}:robot"
    assert review(client, token)["audiences"] == [ISSUER]

    # a token secret of an account that does not exist is removed; so are an account's when it goes
    orphan = {**secret, "metadata": {"name": "orphan", "annotations": {"kubernetes.io/service-account.name": "ghost"}}}
    assert client.post(secrets, json=orphan).status_code == 201
    assert eventually(lambda: client.get(f"{secrets}/orphan").status_code == 404)
    assert client.delete(f"/api/v1/namespaces/{namespace}/serviceaccounts/robot").status_code == 200
    assert eventually(lambda: client.get(f"{secrets}/robot-token").status_code == 404)
    assert eventually(lambda: whoami(server, token).status_code == 401)


def test_a_secret_bound_token_lives_with_its_secret(
    server: GatewayProcess, client: httpx.Client, namespace: str
) -> None:
    service_account(client, namespace, "robot")
    secrets = f"/api/v1/namespaces/{namespace}/secrets"
    made = client.post(secrets, json={"metadata": {"name": "s"}, "stringData": {"a": "b"}})
    assert made.status_code == 201, made.text
    uid = made.json()["metadata"]["uid"]
    token = token_of(client, namespace, "robot", boundObjectRef={"kind": "Secret", "apiVersion": "v1", "name": "s"})
    claims = jwt.decode(token, options={"verify_signature": False})
    assert claims["kubernetes.io"]["secret"] == {"name": "s", "uid": uid}
    assert "pod" not in claims["kubernetes.io"]
    assert whoami(server, token).status_code == 201
    assert client.delete(f"{secrets}/s").status_code == 200
    assert eventually(lambda: whoami(server, token).status_code == 401)
    # a secret of the same name is another object: the token stays refused
    assert client.post(secrets, json={"metadata": {"name": "s"}}).status_code == 201
    assert eventually(lambda: "does not match" in review(client, token).get("error", ""))
    assert review(client, token)["error"].startswith("secret UID (")
    assert whoami(server, token).status_code == 401


def test_issuer_discovery_verifies_tokens(server: GatewayProcess, client: httpx.Client, namespace: str) -> None:
    """Service account issuer discovery (pkg/routes/openidmetadata.go): the OIDC provider metadata
    and the key set, readable by service accounts (system:service-account-issuer-discovery), enough
    for an OIDC library outside the cluster to verify a token."""
    service_account(client, namespace, "relying")
    token = token_of(client, namespace, "relying", audiences=["vault"])  # for someone else to verify
    with server.secure_client(token=token_of(client, namespace, "relying")) as holder:
        config = holder.get("/.well-known/openid-configuration")
        keyset = holder.get("/openid/v1/jwks/")
    assert config.status_code == 200 and config.headers["content-type"] == "application/json"
    assert config.headers["cache-control"] == "public, max-age=3600"
    assert config.json() == {
        "issuer": ISSUER,
        "jwks_uri": f"https://127.0.0.1:{server.secure_port}/openid/v1/jwks",
        "response_types_supported": ["id_token"],
        "subject_types_supported": ["public"],
        "id_token_signing_alg_values_supported": ["RS256"],
    }
    assert keyset.status_code == 200 and keyset.headers["content-type"] == "application/jwk-set+json"
    (key,) = keyset.json()["keys"]
    assert list(key) == ["use", "kty", "kid", "alg", "n", "e"] and key["kid"] == jwt.get_unverified_header(token)["kid"]
    claims = jwt.decode(token, jwt.PyJWK(key).key, algorithms=["RS256"], audience="vault", issuer=ISSUER)
    assert claims["sub"] == f"system:serviceaccount:{namespace}:relying"

    with server.secure_client() as anonymous:
        refused = anonymous.get("/.well-known/openid-configuration")
    assert refused.status_code == 403
    assert client.post("/openid/v1/jwks", json={}).status_code == 405
