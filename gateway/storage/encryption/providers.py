"""The value transformers of upstream's encryption providers (k8s.io/apiserver pkg/storage/value).

A stored value is ``<prefix><ciphertext>``: ``k8s:enc:aescbc:v1:<key name>:`` then a random 16-byte
IV and AES-CBC of the PKCS#7-padded value; ``k8s:enc:aesgcm:v1:<key name>:`` then a random 12-byte
nonce and AES-GCM with the storage key as additional authenticated data;
``k8s:enc:secretbox:v1:<key name>:`` then a random 24-byte nonce and NaCl secretbox. ``identity``
writes plaintext and refuses to read what carries the ``k8s:enc:`` mark.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Protocol

import nacl.exceptions
import nacl.secret
from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import padding
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

ENCRYPTED_MARK = b"k8s:enc:"
AES_BLOCK = 16
GCM_NONCE = 12


class TransformError(Exception):
    """A stored value no listed provider can read."""


class Transformer(Protocol):
    def to_storage(self, data: bytes, key: bytes) -> bytes: ...

    def from_storage(self, data: bytes, key: bytes) -> bytes: ...


class AESCBCTransformer:
    def __init__(self, secret: bytes) -> None:
        self.algorithm = algorithms.AES(secret)

    def to_storage(self, data: bytes, key: bytes) -> bytes:
        iv = os.urandom(AES_BLOCK)
        padder = padding.PKCS7(AES_BLOCK * 8).padder()
        encryptor = Cipher(self.algorithm, modes.CBC(iv)).encryptor()
        return iv + encryptor.update(padder.update(data) + padder.finalize()) + encryptor.finalize()

    def from_storage(self, data: bytes, key: bytes) -> bytes:
        if len(data) < AES_BLOCK:
            raise TransformError("the stored data was shorter than the required size")
        iv, body = data[:AES_BLOCK], data[AES_BLOCK:]
        if len(body) % AES_BLOCK:
            raise TransformError("the stored data is not a multiple of the block size")
        decryptor = Cipher(self.algorithm, modes.CBC(iv)).decryptor()
        padded = decryptor.update(body) + decryptor.finalize()
        if not padded:
            raise TransformError("invalid PKCS7 data (empty or not padded)")
        unpadder = padding.PKCS7(AES_BLOCK * 8).unpadder()
        try:
            return unpadder.update(padded) + unpadder.finalize()
        except ValueError:
            raise TransformError("invalid padding on input") from None


class AESGCMTransformer:
    def __init__(self, secret: bytes) -> None:
        self.aead = AESGCM(secret)

    def to_storage(self, data: bytes, key: bytes) -> bytes:
        nonce = os.urandom(GCM_NONCE)
        return nonce + self.aead.encrypt(nonce, data, key)

    def from_storage(self, data: bytes, key: bytes) -> bytes:
        if len(data) < GCM_NONCE:
            raise TransformError("the stored data was shorter than the required size")
        try:
            return self.aead.decrypt(data[:GCM_NONCE], data[GCM_NONCE:], key)
        except InvalidTag:
            raise TransformError("cipher: message authentication failed") from None


class SecretboxTransformer:
    def __init__(self, secret: bytes) -> None:
        self.box = nacl.secret.SecretBox(secret)

    def to_storage(self, data: bytes, key: bytes) -> bytes:
        return bytes(self.box.encrypt(data))  # the 24-byte nonce, then the sealed box

    def from_storage(self, data: bytes, key: bytes) -> bytes:
        if len(data) < nacl.secret.SecretBox.NONCE_SIZE:
            raise TransformError("the stored data was shorter than the required size")
        try:
            return self.box.decrypt(data)
        except nacl.exceptions.CryptoError:
            raise TransformError("output array was not large enough for encryption") from None


class IdentityTransformer:
    def to_storage(self, data: bytes, key: bytes) -> bytes:
        return data

    def from_storage(self, data: bytes, key: bytes) -> bytes:
        if data.startswith(ENCRYPTED_MARK):
            raise TransformError("identity transformer tried to read encrypted data")
        return data


@dataclass(frozen=True, slots=True)
class Prefixed:
    prefix: bytes
    transformer: Transformer


class PrefixTransformers:
    """Writes with the first; reads with the first whose prefix matches and that succeeds (one
    provider may be listed twice with different keys during a rotation, so a failure goes on)."""

    def __init__(self, transformers: list[Prefixed]) -> None:
        self.transformers = transformers

    def to_storage(self, data: bytes, key: bytes) -> bytes:
        first = self.transformers[0]
        return first.prefix + first.transformer.to_storage(data, key)

    def from_storage(self, data: bytes, key: bytes) -> bytes:
        return self.read(data, key)[0]

    def read(self, data: bytes, key: bytes) -> tuple[bytes, bool]:
        """The plaintext, and whether it was read with another than the first transformer (stale)."""
        errors: list[str] = []
        for i, candidate in enumerate(self.transformers):
            if data.startswith(candidate.prefix):
                body = data[len(candidate.prefix) :]
                try:
                    if isinstance(candidate.transformer, PrefixTransformers):  # a provider's keys
                        plain, stale = candidate.transformer.read(body, key)
                        return plain, stale or i > 0
                    return candidate.transformer.from_storage(body, key), i > 0
                except TransformError as err:
                    if candidate.prefix:  # identity's refusal is not worth reporting
                        errors.append(str(err))
        raise TransformError(errors[0] if len(errors) == 1 else f"[{', '.join(errors)}]" if errors else NO_MATCH)


NO_MATCH = "no matching prefix found"
