"""The HTTP layer: routes, dependencies, wire schemas and error rendering.

Routes stay thin (parse, call, return). Rules live in the pure core; SQL lives in ``app.store``.
"""
