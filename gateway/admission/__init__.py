"""Admission plugins: changes and checks that run on writes after decoding and before storage.

Each plugin implements registry/admission.py's interface (upstream's k8s.io/apiserver/pkg/admission),
which the store calls for every create, update, delete and connect. Which plugins run, and in which
order, is ``chain.py``'s (kube-apiserver's plugin names and flags).
"""
