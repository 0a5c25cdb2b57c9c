"""Web access of the web-search categories: search providers, a bounded page fetcher, and
cassettes that record a live run's searches and pages and replay them offline."""
