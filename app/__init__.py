"""Projector: the message-history service for AI agents.

Layers (imports point one way): ``api`` -> ``store`` and the pure core
``engine`` <- ``projections`` <- ``providers``. The core never imports ``store`` or ``api``.
"""
