"""Test doubles for running the plugin offline, used by the project's tests and benchmarks and
usable by a team testing its own hooks and handlers:

- ``fake_openai.FakeOpenAI``: an OpenAI-compatible server that answers with the oracle's
  answers (tool calls or prompting text), with a latency, a capacity and hostile behaviours
  (stalls, drips, huge bodies, refusals, gateway errors), on chat completions and the
  Responses API (``responses_wire``); ``python -m pytest_bfcl.testing.fake_openai
  [CATEGORIES] [--port N]`` runs it in a process of its own (``fake_server_cli``);
- ``stand_in_vllm``: a stand-in for the ``vllm`` executable (``python -m
  pytest_bfcl.testing.stand_in_vllm serve MODEL --host H --port P``) for the server life cycle;
- ``recording_server.RecordingServer``: a chat-completions and Responses API server that
  answers from the request alone (``scripted_answers.Script``: text, right calls, wrong calls,
  a call at every step, in plain, vLLM-shaped, reasoning and mixed answers) and records every
  request;
- ``fake_web.FakeWeb``: search and page server for the web-search tools;
- ``exec_api_server``: the executable categories' public APIs, answered locally;
- ``result_files.write_oracle_results``: a result directory in the reference's layout.
"""
