"""API Priority and Fairness: flowcontrol.apiserver.k8s.io/v1, as documented in
kubernetes.io/docs/concepts/cluster-administration/flow-control/.

Every request is classified by the FlowSchemas (matching.py) to a priority level; each limited
level owns a share of the server's seats (concurrency.py) and queues what exceeds them with
shuffle sharding (shufflesharding.py) and fair queuing (queueset.py), a request costing the seats
its work estimate says (seats.py). controller.py keeps the levels in step with the API objects,
bootstrap.py keeps the mandatory and suggested objects, filter.py is the filter in the chain.
"""
