"""Errors of the LLM client: one class per kind of failure, all with Russian messages.

The application catches `LLMClientError`; the subclasses let a caller (or a lesson) tell a timeout
from a rate limit without parsing text.
"""


class LLMClientError(RuntimeError):
    """Any failure to get a completion from the model."""


class LLMConnectionError(LLMClientError):
    """The server could not be reached."""


class LLMTimeoutError(LLMClientError):
    """The server did not answer in time."""


class LLMRateLimitError(LLMClientError):
    """HTTP 429: too many requests or no quota left."""


class LLMAuthenticationError(LLMClientError):
    """HTTP 401/403: the key is missing, wrong or has no access."""


class LLMBadRequestError(LLMClientError):
    """HTTP 400/404/422: the request itself was rejected."""


class LLMServerError(LLMClientError):
    """HTTP 5xx: the provider failed."""


class LLMInstructionRoleError(LLMBadRequestError):
    """The server refused the role of the instruction message (developer vs system)."""


class LLMStreamInterruptedError(LLMConnectionError):
    """A streamed reply broke off before its end; the text received so far is unfinished."""


class LLMContextOverflowError(LLMBadRequestError):
    """The request (input + reply limit) does not fit the model's context window on the server."""

    def __init__(self, message: str, context_size: int | None = None) -> None:
        super().__init__(message)
        self.context_size = context_size


class LLMToolSequenceError(LLMBadRequestError):
    """HTTP 400: a `tool` message without the assistant `tool_calls` it answers, or a call left
    without its result: the history was cut inside a tool exchange."""


class LLMResponseFormatError(LLMServerError):
    """HTTP 200, but the body is not a chat completion (an HTML page from a proxy, plain text, ...)."""
