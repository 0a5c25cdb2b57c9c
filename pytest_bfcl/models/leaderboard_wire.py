"""What the leaderboard's chat-completions handler puts on the wire besides the benchmark's
own texts: its sampling parameters, and how it echoes a model's answer into the history of a
conversation (``bfcl-eval`` 2026.3.23, ``OpenAICompletionsHandler`` and its subclasses).

Matching these makes a model see, step after step, what it sees on the leaderboard; any
difference (a sampling temperature, a reasoning trace left in or taken out of the history)
changes what it answers next and so its score.
"""

from __future__ import annotations

# The leaderboard's default sampling temperature (its ``--temperature``): sent unless the user
# sets one. Not 0: some servers treat 0 as "use the model's default".
REFERENCE_TEMPERATURE = 0.001

# Sent with every request: the leaderboard opts out of OpenAI storing its completions (the
# account's default may store them), in function-calling and prompting mode alike.
STORE = False
