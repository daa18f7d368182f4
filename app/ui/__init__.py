"""The built-in viewer: static pages (HTML, CSS and ES modules in ``static/``) that ``/ui`` serves.

The pages are plain files shipped in the package, with no build step and nothing loaded from outside the
service. They read the public HTTP API with the caller's key like any other client, so no rule of the service
is restated here: the model view, its diagnostics and the context accounting all come from the API.
"""
