"""The refusal every normalization stage raises: an offer that cannot become an observation."""


class Quarantined(Exception):
    """An offer that cannot become an observation; `stage` says which step refused it."""

    def __init__(self, stage: str, reason: str) -> None:
        super().__init__(f"{stage}: {reason}")
        self.stage = stage
        self.reason = reason
