"""ResourceQuota: what objects cost (``evaluators``), the admission plugin that charges them
(``admission``) and the usage the resourcequota controller recounts (``usage``)."""

from gateway.admission.resourcequota.admission import ResourceQuota

__all__ = ["ResourceQuota"]
