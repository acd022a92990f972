"""The ``EncryptionConfiguration`` file (apiserver.config.k8s.io/v1) of ``--encryption-provider-config``.

Each entry names resources (``secrets``, ``deployments.apps``, ``*.apps``, ``*.`` for every core
resource, ``*.*`` for all) and an ordered list of providers, each one of ``aescbc``, ``aesgcm``,
``secretbox`` (with named base64 keys) or ``identity``. The first provider (and its first key)
encrypts; all of them decrypt. Resources named nowhere are stored as they are. Checked as upstream
checks it (pkg/apis/apiserver/validation/validation_encryption.go), with its messages.
"""

from __future__ import annotations

import base64
import binascii
from pathlib import Path

import yaml

from protokube.gateway.storage.encryption.providers import (
    AESCBCTransformer,
    AESGCMTransformer,
    IdentityTransformer,
    Prefixed,
    PrefixTransformers,
    SecretboxTransformer,
)

API_VERSIONS = ("apiserver.config.k8s.io/v1", "apiserver.config.k8s.io/v1beta1")
KIND = "EncryptionConfiguration"
KEYED = {
    "aescbc": (AESCBCTransformer, (16, 24, 32)),
    "aesgcm": (AESGCMTransformer, (16, 24, 32)),
    "secretbox": (SecretboxTransformer, (32,)),
}
PROVIDERS = (*KEYED, "identity", "kms")
MORE_THAN_ONE = "more than one provider specified in a single element, should split into different list elements"
NONE_GIVEN = "provider does not contain any of the expected providers: KMS, AESGCM, AESCBC, Secretbox, Identity"
NOT_REST = ("apiserveripinfo", "serviceipallocations", "servicenodeportallocations")


class EncryptionConfigError(ValueError):
    pass


class Encryption:
    """Transformers by group resource (``secrets``, ``deployments.apps``; wildcards resolved)."""

    def __init__(self, transformers: dict[tuple[str, str], PrefixTransformers]) -> None:
        self.transformers = transformers

    def for_resource(self, group: str, resource: str) -> PrefixTransformers | None:
        """Exact names first, then the group's wildcard, then ``*.*`` (upstream's order)."""
        for key in ((group, resource), (group, "*"), ("*", "*")):
            if key in self.transformers:
                return self.transformers[key]
        return None


def load(path: Path) -> Encryption:
    try:
        document = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError) as err:
        raise EncryptionConfigError(
            f"error reading encryption provider configuration file {str(path)!r}: {err}"
        ) from None
    return parse(document)


def parse(document: object) -> Encryption:
    if not isinstance(document, dict):
        raise EncryptionConfigError("EncryptionConfiguration can't be nil")
    if document.get("kind") != KIND or document.get("apiVersion") not in API_VERSIONS:
        raise EncryptionConfigError(
            f"got unexpected config type: {document.get('apiVersion', '')}, Kind={document.get('kind', '')}"
        )
    entries = document.get("resources") or []
    if not entries:
        raise _required("resources", "at least one resources is required")
    transformers: dict[tuple[str, str], PrefixTransformers] = {}
    for i, entry in enumerate(entries):
        where = f"resources[{i}]"
        names = entry.get("resources") or []
        if not names:
            raise _required(f"{where}.resources", f"at least one {where}.resources is required")
        chain = _providers(entry.get("providers") or [], f"{where}.providers")
        for j, name in enumerate(names):
            key = _group_resource(name, f"{where}.resources[{j}]")
            if key in transformers:
                raise _invalid(f"{where}.resources[{j}]", name, "the same resource cannot be specified multiple times")
            transformers[key] = chain
    return Encryption(transformers)


def _group_resource(name: str, where: str) -> tuple[str, str]:
    def invalid(message: str) -> EncryptionConfigError:
        return _invalid(where, name, message)

    if name == "*":
        raise invalid("use '*.' to encrypt all the resources from core API group or *.* to encrypt all resources")
    if name != name.lower():
        raise invalid("resource name should not contain capital letters")
    resource, _, group = name.partition(".")
    if resource in NOT_REST:
        raise invalid("resources which do not have REST API/s cannot be encrypted")
    if group == "events.k8s.io":
        raise invalid(
            "'*.events.k8s.io' objects are stored using the 'events' API group in etcd. "
            "Use 'events' instead in the config file"
        )
    if group == "extensions":
        raise invalid("'extensions' group has been removed and cannot be used for encryption")
    return group, resource


def _providers(providers: list[dict], where: str) -> PrefixTransformers:
    if not providers:
        raise _required(where, f"at least one {where} is required")
    chain: list[Prefixed] = []
    for i, provider in enumerate(providers):
        named = [name for name in PROVIDERS if provider.get(name) is not None]
        if len(named) != 1:
            raise _invalid(f"{where}[{i}]", provider, MORE_THAN_ONE if named else NONE_GIVEN)
        name = named[0]
        if name == "identity":
            chain.append(Prefixed(b"", IdentityTransformer()))
        elif name == "kms":
            raise EncryptionConfigError(f"{where}[{i}].kms: Unsupported value: KMS plugins are not available here")
        else:
            chain.append(_keyed(name, provider[name], f"{where}[{i}].{name}.keys"))
    return PrefixTransformers(chain)


def _keyed(name: str, config: dict, where: str) -> Prefixed:
    """One provider with its keys: ``k8s:enc:<name>:v1:`` then the key name chooses the key."""
    make, sizes = KEYED[name]
    keys = config.get("keys") or []
    if not keys:
        raise _required(where, f"at least one {where} is required")
    by_key: list[Prefixed] = []
    for i, key in enumerate(keys):
        key_name, secret_text = key.get("name") or "", key.get("secret") or ""
        if not key_name:
            raise _required(f"{where}[{i}].name", f"key.name is a mandatory field for a {name}")
        try:
            secret = base64.b64decode(secret_text, validate=True)
        except (binascii.Error, ValueError):
            raise _invalid(f"{where}[{i}].secret", "REDACTED", "secrets must be base64 encoded") from None
        if len(secret) not in sizes:
            expected = " ".join(map(str, sizes))
            raise _invalid(
                f"{where}[{i}].secret",
                "REDACTED",
                f"secret is not of the expected length, got {len(secret)}, expected one of [{expected}]",
            )
        by_key.append(Prefixed(f"{key_name}:".encode(), make(secret)))
    return Prefixed(f"k8s:enc:{name}:v1:".encode(), PrefixTransformers(by_key))


def _required(where: str, message: str) -> EncryptionConfigError:
    return EncryptionConfigError(f"{where}: Required value: {message}")


def _invalid(where: str, value: object, message: str) -> EncryptionConfigError:
    shown = f'"{value}"' if isinstance(value, str) else repr(value)
    return EncryptionConfigError(f"{where}: Invalid value: {shown}: {message}")
