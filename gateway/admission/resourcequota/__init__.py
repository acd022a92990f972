"""ResourceQuota: what objects cost (``evaluators``), the admission plugin that charges them
(``admission``) with its configuration (``configuration``) and the usage the resourcequota
controller recounts (``usage``)."""

from protokube.gateway.admission.resourcequota.admission import ResourceQuota
from protokube.gateway.admission.resourcequota.configuration import parse as parse_configuration

__all__ = ["ResourceQuota", "parse_configuration"]
