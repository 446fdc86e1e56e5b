"""The one exception of the docs build: the results cannot back the site."""


class ResultsError(Exception):
    """The results cannot back the site: missing, stale, malformed, or lacking a value a page uses."""
