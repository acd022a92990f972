"""ValidatingAdmissionPolicy (admissionregistration.k8s.io/v1): policies of CEL validations
bound to requests by bindings, evaluated in admission.

- ``compiled``: policies and bindings as the plugin runs them, every expression compiled once;
- ``matching``: matchConstraints / matchResources (selectors, the webhooks' rules, matchPolicy);
- ``params``: the params objects a binding evaluates with;
- ``plugin``: the admission plugin;
- ``typechecking``: status.typeChecking's warnings (the status controller's).
"""
