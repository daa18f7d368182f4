"""One router module per resource; each route parses, calls one service function (``app.services``) and
answers."""
