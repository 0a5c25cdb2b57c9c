"""The replicas of one server: which replica a request goes to (least expected wait, a
conversation kept where its prefix is cached), which leave the rotation, and how long rate limits
are waited out."""
