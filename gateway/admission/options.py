"""kube-apiserver's admission flags: ``--enable-admission-plugins``, ``--disable-admission-plugins``
and ``--admission-control-config-file`` (an AdmissionConfiguration: each plugin's configuration,
inline or in a file of its own named relative to the configuration's)."""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from protokube.gateway.admission.chain import CONFIGURATION_PARSERS, AdmissionPluginError, enabled_plugins

CONFIGURATION_VERSIONS = ("apiserver.config.k8s.io/v1", "apiserver.k8s.io/v1alpha1")


@dataclass(frozen=True)
class AdmissionSettings:
    plugins: tuple[str, ...]  # the enabled ones, in upstream's order
    configuration: Mapping[str, Any] = field(default_factory=dict)  # each plugin's, by name


def default_admission() -> AdmissionSettings:
    """kube-apiserver's default plugins (those protokube has), without configuration."""
    return AdmissionSettings(tuple(enabled_plugins()))


def _names(text: str) -> tuple[str, ...]:
    return tuple(name.strip() for name in text.split(",") if name.strip())


def load_configuration(path: Path) -> dict[str, Any]:
    """Each plugin's configuration in an AdmissionConfiguration file, by plugin name."""
    try:
        document = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError) as err:
        raise ValueError(f"unable to read admission control configuration from {str(path)!r}: {err}") from None
    if not isinstance(document, dict) or document.get("kind") != "AdmissionConfiguration":
        raise ValueError(f"{path}: not an AdmissionConfiguration")
    if document.get("apiVersion") not in CONFIGURATION_VERSIONS:
        raise ValueError(f"{path}: unsupported apiVersion {document.get('apiVersion')!r}")
    found: dict[str, Any] = {}
    for entry in document.get("plugins") or []:
        name = entry.get("name") if isinstance(entry, dict) else None
        if not name:
            raise ValueError(f"{path}: every plugins entry needs a name")
        if "configuration" in entry:
            found[name] = entry["configuration"]
        elif entry.get("path"):
            found[name] = _configuration_file(path.parent / entry["path"])
    return found


def _configuration_file(path: Path) -> Any:
    try:
        return yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError) as err:
        raise ValueError(f"couldn't read admission plugin configuration {str(path)!r}: {err}") from None


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--enable-admission-plugins",
        type=_names,
        default=(),
        metavar="NAME,...",
        help="admission plugins to run in addition to the default ones (the order is always upstream's)",
    )
    parser.add_argument(
        "--disable-admission-plugins",
        type=_names,
        default=(),
        metavar="NAME,...",
        help="admission plugins of the default set not to run",
    )
    parser.add_argument(
        "--admission-control-config-file",
        type=Path,
        metavar="FILE",
        help="an AdmissionConfiguration with the plugins' configurations",
    )


def settings(args: argparse.Namespace) -> AdmissionSettings:
    """The parsed flags; a SystemExit naming the problem when they are wrong."""
    try:
        plugins = enabled_plugins(args.enable_admission_plugins, args.disable_admission_plugins)
        path = args.admission_control_config_file
        configuration = load_configuration(path) if path is not None else {}
        for name in plugins:
            if name in CONFIGURATION_PARSERS:
                CONFIGURATION_PARSERS[name](configuration.get(name))
    except (AdmissionPluginError, ValueError) as err:
        raise SystemExit(f"protokube: {err}") from None
    return AdmissionSettings(tuple(plugins), configuration)
