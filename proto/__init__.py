"""The .proto sources of every generated module, shipped in the distribution (crd-from-proto's include path)."""
