"""Encryption at rest (upstream's ``--encryption-provider-config``): stored values of chosen
resources are encrypted by the first provider listed for them and read with any listed one.

- config.py: the ``EncryptionConfiguration`` file, validated as upstream, to a transformer per
  group resource;
- providers.py: aescbc, aesgcm, secretbox and identity, with upstream's ``k8s:enc:<provider>:v1:<key>:``
  prefixes and byte layouts, so data is readable by kube-apiserver with the same keys and back;
- backend.py: a Backend wrapper that encrypts on write and decrypts every value it reads or watches.
"""
