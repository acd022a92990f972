"""Structural schemas of custom resources (k8s.io/apiextensions-apiserver pkg/apiserver/schema):
what a CRD's openAPIV3Schema must be (``structural_errors``), and what it does to objects —
defaulting, pruning of unknown fields, validation, and the type tree apply merges with."""

from protokube.gateway.apiextensions.schema.structural import Structural, structural_errors

__all__ = ["Structural", "structural_errors"]
