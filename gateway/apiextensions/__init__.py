"""CustomResourceDefinitions (apiextensions.k8s.io/v1): their rules, the resources they serve and
the structural schemas that default, prune and validate custom objects."""
