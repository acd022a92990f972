"""The key pair that signs service account tokens: RSA, made on first start in the data dir's pki
directory as kubeadm makes it (``sa.key``, ``sa.pub``; owner-only), kept across restarts so that
tokens outlive them. Tokens are signed RS256 with a key id derived from the public key, as
upstream derives it (unpadded base64url of the SHA-256 of the DER-encoded public key)."""

from __future__ import annotations

import base64
import hashlib
from dataclasses import dataclass
from pathlib import Path

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from protokube.gateway.security.certs import write_private

PRIVATE_FILE, PUBLIC_FILE = "sa.key", "sa.pub"
KEY_BITS = 2048


@dataclass(frozen=True, slots=True)
class SigningKeys:
    private: rsa.RSAPrivateKey
    public: rsa.RSAPublicKey

    @property
    def key_id(self) -> str:
        der = self.public.public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
        return base64.urlsafe_b64encode(hashlib.sha256(der).digest()).rstrip(b"=").decode()


def ensure(directory: Path) -> SigningKeys:
    """The key pair in ``directory``, made when missing."""
    private_path, public_path = directory / PRIVATE_FILE, directory / PUBLIC_FILE
    if private_path.exists():
        key = serialization.load_pem_private_key(private_path.read_bytes(), password=None)
        if not isinstance(key, rsa.RSAPrivateKey):
            raise ValueError(f"{private_path}: not an RSA private key")
    else:
        key = rsa.generate_private_key(public_exponent=65537, key_size=KEY_BITS)
        pem = key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL, serialization.NoEncryption()
        )
        write_private(private_path, pem)
    public = key.public_key()
    if not public_path.exists():
        pem = public.public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        write_private(public_path, pem)
    return SigningKeys(key, public)
