"""The four wire formats the replay speaks; each module has the same four functions.

``parse(body, path) -> Conversation`` (Gemini reads the model and streaming from the path), ``render(reply, conversation) -> dict`` (the
non-streamed body), ``stream(body, conversation) -> list[bytes]`` (the SSE frames
that build exactly that body) and ``error(message, kind) -> dict``.
"""
