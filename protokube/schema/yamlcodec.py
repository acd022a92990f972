"""YAML in and out, the way kube-apiserver (sigs.k8s.io/yaml) treats it.

Input YAML is turned into the same plain values JSON parsing gives, then decoded by the JSON
codec. Duplicate keys are reported like upstream (``line 5: key "name" already set in map``), and
documents whose aliases would expand past a limit ("billion laughs") are refused. Timestamps stay
strings. Output YAML is JSON converted with keys sorted and lists flush with their key, as
``kubectl get -o yaml`` shows it.
"""

from __future__ import annotations

from typing import Any

import yaml

from protokube.schema.jsondecode import DecodeError, JSONObject, without_lone_surrogates

# How many values a document may expand to through aliases before it is refused.
MAX_EXPANDED_NODES = 200_000
MAX_DEPTH = 500
DEPTH_EXCEEDED = "yaml: exceeded max depth"


class _Loader(yaml.SafeLoader):
    """SafeLoader without implicit timestamps, whose mappings remember duplicate keys."""


_Loader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def _construct_mapping(loader: _Loader, node: yaml.MappingNode) -> JSONObject:
    loader.flatten_mapping(node)
    pairs = []
    errors = []
    seen: set[str] = set()
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=True)
        if not isinstance(key, str):
            key = str(key).lower() if isinstance(key, bool) else str(key)
        if key in seen:
            errors.append(f'line {key_node.start_mark.line + 1}: key "{key}" already set in map')
        seen.add(key)
        pairs.append((key, loader.construct_object(value_node, deep=True)))
    mapping = JSONObject(pairs)
    mapping.yaml_errors = tuple(errors)
    return mapping


_Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def _check_expansion(node: yaml.Node) -> None:
    """Count the values a node tree expands to, following aliases (memoised per node)."""
    sizes: dict[int, int] = {}

    def size(n: yaml.Node, depth: int) -> int:
        if depth > MAX_DEPTH:
            raise DecodeError(DEPTH_EXCEEDED)
        if id(n) in sizes:
            return sizes[id(n)]
        if isinstance(n, yaml.ScalarNode):
            total = 1
        elif isinstance(n, yaml.SequenceNode):
            total = 1 + sum(size(child, depth + 1) for child in n.value)
        else:
            total = 1 + sum(size(k, depth + 1) + size(v, depth + 1) for k, v in n.value)
        if total > MAX_EXPANDED_NODES:
            raise DecodeError("yaml: document expands to too many values (excessive aliasing)")
        sizes[id(n)] = total
        return total

    size(node, 0)


def load(text: bytes | str) -> Any:
    """Parse one YAML document into JSON-like values (dicts are JSONObject); strings are valid
    text (lone surrogate escapes become U+FFFD, as for JSON)."""
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError:
            raise DecodeError("error converting YAML to JSON: yaml: invalid leading UTF-8 octet") from None
    try:
        loader = _Loader(text)
    except yaml.reader.ReaderError:  # the reader checks the whole text first
        raise DecodeError("error converting YAML to JSON: yaml: control characters are not allowed") from None
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        _check_expansion(node)
        return without_lone_surrogates(_to_json_values(loader.construct_document(node)))
    except yaml.YAMLError as err:
        raise DecodeError(f"error converting YAML to JSON: {_yaml_message(err)}") from None
    except RecursionError:
        raise DecodeError(f"error converting YAML to JSON: {DEPTH_EXCEEDED}") from None
    finally:
        loader.dispose()


def _yaml_message(err: yaml.YAMLError) -> str:
    if isinstance(err, yaml.MarkedYAMLError) and err.problem_mark is not None:
        return f"yaml: line {err.problem_mark.line + 1}: {err.problem}"
    return f"yaml: {err}"


def _to_json_values(value: Any) -> Any:
    """Refuse values JSON cannot hold (binary, sets)."""
    if isinstance(value, dict):
        for item in value.values():
            _to_json_values(item)
    elif isinstance(value, list):
        for item in value:
            _to_json_values(item)
    elif isinstance(value, bytes | set):
        raise DecodeError(f"error converting YAML to JSON: yaml: unsupported value of type {type(value).__name__}")
    return value


def duplicate_errors(value: Any) -> list[str]:
    """Duplicate-key findings of a loaded document, in upstream's wording, for fieldValidation."""
    found: list[str] = []
    if isinstance(value, JSONObject):
        found += getattr(value, "yaml_errors", ())
        for item in value.values():
            found += duplicate_errors(item)
    elif isinstance(value, list):
        for item in value:
            found += duplicate_errors(item)
    return found


class _Dumper(yaml.SafeDumper):
    def choose_scalar_style(self) -> str:
        """Quote with double quotes where quoting is needed, as Go's yaml does."""
        style = super().choose_scalar_style()
        return '"' if style == "'" else style


def _represent_str(dumper: yaml.SafeDumper, data: str) -> yaml.ScalarNode:
    style = "|" if "\n" in data and not data.endswith((" ", "\t")) else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", data, style=style)


_Dumper.add_representer(str, _represent_str)
_Dumper.add_representer(JSONObject, yaml.representer.SafeRepresenter.represent_dict)


def dump(value: Any) -> bytes:
    """YAML for a JSON-like value: keys sorted, block style, no line wrapping."""
    return yaml.dump(
        value, Dumper=_Dumper, sort_keys=True, default_flow_style=False, allow_unicode=True, width=1 << 30
    ).encode()
