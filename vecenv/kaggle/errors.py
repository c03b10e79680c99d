"""kaggle-environments' error types, with its status names, so code catching them keeps working."""


class KaggleError(Exception):
    status = "UNKNOWN"

    def __init__(self, error=""):
        super().__init__(error)
        self.message = error

    def toJSON(self):  # noqa: N802 (Kaggle's name)
        return {"message": self.message, "status": self.status}


class InvalidArgument(KaggleError, ValueError):
    status = "INVALID_ARGUMENT"


class FailedPrecondition(KaggleError, RuntimeError):
    status = "FAILED_PRECONDITION"


class DeadlineExceeded(KaggleError, TimeoutError):
    status = "DEADLINE_EXCEEDED"


class NotFound(KaggleError, LookupError):
    status = "NOT_FOUND"
