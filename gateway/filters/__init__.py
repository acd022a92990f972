"""The filter chain every request passes before routing (upstream's DefaultBuildHandlerChain).

Each filter is a small class that owns its dependencies and wraps the next handler; chain.py puts
them in the order they run, in one function.
"""
