"""The request file by which an xdist worker has the controller start the shared servers: the
first request starts them once, every waiting worker learns the outcome, and a controller
that never answers ends the wait with a clear error."""

from __future__ import annotations

import threading

import pytest

from pytest_bfcl.servers import start_request
from pytest_bfcl.servers.server_process import ServerStartError
from pytest_bfcl.servers.start_request import StartRequest


def test_the_first_request_starts_the_servers_once_for_every_worker(tmp_path):
    controller = StartRequest.beside(tmp_path / "logs" / "vllm.log", timeout=5)
    starts = []
    controller.serve(lambda: starts.append(1))
    assert starts == []  # nothing asked yet: nothing started
    workers = [StartRequest(controller.request, timeout=5) for _ in range(3)]
    threads = [threading.Thread(target=w.ask) for w in workers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert starts == [1] and controller.ready.exists()
    controller.close()
    assert not list((tmp_path / "logs").iterdir())


def test_a_start_that_failed_is_the_worker_s_error_with_why(tmp_path):
    controller = StartRequest.beside(tmp_path / "vllm.log", timeout=5)

    def fail() -> None:
        raise ServerStartError("vLLM exited with status 1: CUDA out of memory")

    controller.serve(fail)
    with pytest.raises(ServerStartError, match="CUDA out of memory"):
        StartRequest(controller.request, timeout=5).ask()
    controller.close()


def test_a_controller_that_never_answers_ends_the_wait(tmp_path, monkeypatch):
    monkeypatch.setattr(start_request, "MARGIN_S", 0.0)
    worker = StartRequest(tmp_path / "start-x.request", timeout=0.2)
    with pytest.raises(ServerStartError, match="did not start the model servers within"):
        worker.ask()
