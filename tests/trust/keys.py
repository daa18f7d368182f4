"""The API keys the trust tests configure: three roles in tenant ``acme`` and a runtime in tenant ``globex``
(configured by digest, as an operator who never puts secrets in config would)."""

import hashlib

READER = "rk_acme_reader_0123456789"
WRITER = "wk_acme_writer_0123456789"
RUNTIME = "rt_acme_runtime_0123456789"
OTHER_TENANT = "rt_globex_runtime_0123456789"

API_KEYS = [
    {"key": READER, "tenant": "acme", "role": "reader"},
    {"key": WRITER, "tenant": "acme", "role": "writer"},
    {"key": RUNTIME, "tenant": "acme", "role": "runtime"},
    {"sha256": hashlib.sha256(OTHER_TENANT.encode()).hexdigest(), "tenant": "globex", "role": "runtime"},
]
