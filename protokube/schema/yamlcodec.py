"""YAML out, the way kube-apiserver (sigs.k8s.io/yaml) writes it: JSON converted with keys sorted
and lists flush with their key, as ``kubectl get -o yaml`` shows it. YAML in: yamldecode.py.
"""

from __future__ import annotations

from typing import Any

import yaml

from protokube.schema.jsondecode import JSONObject


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
