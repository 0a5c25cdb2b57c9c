"""A local stand-in for the public APIs of the executable categories, for recording cassettes
offline: plausible JSON for each API the functions call, and, for the REST category, the
dataset's stored response of each ground-truth request (so the oracle's REST calls match).

Requests arrive through ``BFCL_EXEC_API_BASE`` with the original host in
``X-Bfcl-Original-Host``; RapidAPI hosts require the fake key, as the real ones require a key.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

from pytest_bfcl.backends.exec_api import KEY_PLACEHOLDERS, ApiRequest

FAKE_KEYS = {
    variable: f"fake-{variable.lower()}-0123456789" for variable in KEY_PLACEHOLDERS.values()
}
RATES = {
    "USD": 1.0,
    "EUR": 0.9,
    "JPY": 150.0,
    "GBP": 0.8,
    "AUD": 1.5,
    "CAD": 1.35,
    "CHF": 0.88,
    "CNY": 7.2,
}
KEY_PARAMS = ("api_key", "apikey")


def _query_key(params: dict[str, list[str]]) -> tuple[tuple[str, tuple[str, ...]], ...]:
    return tuple(sorted((k, tuple(v)) for k, v in params.items() if k not in KEY_PARAMS))


def _unfilled(path: str) -> str:
    """The path with fake keys put back as the dataset's placeholders."""
    for placeholder, variable in KEY_PLACEHOLDERS.items():
        path = path.replace(FAKE_KEYS[variable], placeholder)
    return path


class ApiServer:
    def __init__(self, canned: list[tuple[ApiRequest, Any]] | None = None) -> None:
        self.requests: list[dict[str, Any]] = []
        self.factor = 1.0  # live figures (COVID, stock prices) are multiplied by this
        self._canned: dict[tuple[Any, ...], Any] = {}
        for request, body in canned or []:
            parts = urlsplit(request.url)
            query = parse_qs(urlencode(request.params, doseq=True))
            self._canned[(parts.netloc, parts.path, _query_key(query))] = body

    def answer(
        self, host: str, path: str, query: dict[str, list[str]], headers: Any
    ) -> tuple[int, Any]:
        self.requests.append({"host": host, "path": path, "query": query, "headers": dict(headers)})
        if (
            host.endswith("rapidapi.com")
            and headers.get("X-RapidAPI-Key") != FAKE_KEYS["RAPID_API_KEY"]
        ):
            return 401, {"message": "Invalid API key"}
        canned = self._canned.get((host, _unfilled(path), _query_key(query)))
        if canned is not None:
            return 200, canned
        one = {k: v[0] for k, v in query.items()}
        return self._simulated(host, path, one)

    def _simulated(self, host: str, path: str, q: dict[str, str]) -> tuple[int, Any]:
        segments = [s for s in path.split("/") if s]
        if host == "v6.exchangerate-api.com":
            if segments[1] != FAKE_KEYS["EXCHANGERATE_API_KEY"]:
                return 403, {"result": "error", "error-type": "invalid-key"}
            base = RATES[segments[-1]]
            return 200, {
                "result": "success",
                "base_code": segments[-1],
                "conversion_rates": {c: r / base for c, r in RATES.items()},
            }
        if host.startswith("mashape-community-urban-dictionary"):
            return 200, {
                "list": [{"word": q["term"], "definition": f"[{q['term']}] means something"}]
            }
        if host.startswith("covid-193"):
            n = sum(map(ord, q["country"]))
            return 200, {
                "response": [
                    {
                        "country": q["country"],
                        "cases": {"active": round(1000 * n * self.factor)},
                        "deaths": {"total": round(100 * n * self.factor)},
                    }
                ]
            }
        if host.startswith("yahoo-finance15") and path.endswith("/quotes"):
            return 200, {
                "body": [
                    {
                        "symbol": q["ticker"],
                        "longName": f"{q['ticker']} Inc.",
                        "regularMarketPrice": 100.5 * self.factor,
                    }
                ]
            }
        if host.startswith("yahoo-finance15") and path.endswith("/history"):
            day = {"date": "01-08-2023", "open": 1.0, "close": 2.0, "volume": 3}
            return 200, {
                "meta": {"symbol": q["symbol"]},
                "body": {"1690862400": day, "1693540800": day},
            }
        if host == "ip-api.com":
            ip = segments[-1]
            if ip.startswith(("192.168.", "10.", "172.16.")):
                return 200, {"status": "fail", "message": "private range", "query": ip}
            if ip.startswith(("192.0.2.", "203.0.113.")):
                return 200, {"status": "fail", "message": "reserved range", "query": ip}
            return 200, {
                "status": "success",
                "lat": 37.4,
                "lon": -122.1,
                "zip": "94043",
                "query": ip,
            }
        if host == "geocode.maps.co":
            return 200, [{"lat": "48.8588897", "lon": "2.3200410217200766", "display_name": q["q"]}]
        if host.startswith("timezone-by-location"):
            return 200, {"Zones": [{"TimezoneId": "Etc/GMT", "Result": "In zone"}], "Safezone": 1.0}
        if host == "api.open-meteo.com":
            return 200, {"latitude": float(q["latitude"]), "current": {"temperature_2m": 12.5}}
        if host.startswith("real-time-amazon-data"):
            return 200, {
                "status": "OK",
                "data": {
                    "asin": q["asin"],
                    "product_title": f"Product {q['asin']}",
                    "product_price": "$10.00",
                    "product_star_rating": "4.5",
                },
            }
        if host == "api.zippopotam.us":
            return 200, {"post code": segments[-1], "places": [{"place name": "Beverly Hills"}]}
        if host == "date.nager.at":
            return 200, [
                {
                    "date": f"{segments[-2]}-01-01",
                    "name": "New Year's Day",
                    "countryCode": segments[-1],
                }
            ]
        if host == "redirect.example":  # a moved API, and one that never settles
            return (
                (302, "/new")
                if path == "/old"
                else (302, "/loop")
                if path == "/loop"
                else (200, {"moved": True})
            )
        if host == "www.omdbapi.com":
            if q.get("apikey") != FAKE_KEYS["OMDB_API_KEY"]:
                return 401, {"Response": "False", "Error": "Invalid API key!"}
            return 200, {
                "Title": q["t"],
                "Director": "A. Director",
                "Rated": "PG-13",
                "Genre": "Drama",
                "Response": "True",
            }
        return 404, {"error": f"no such API: {host}{path}"}


@contextmanager
def serve(server: ApiServer) -> Iterator[str]:
    """Run the stand-in on a free local port; yields its base URL."""

    class Handler(BaseHTTPRequestHandler):
        disable_nagle_algorithm = True  # headers and body leave at once (no 40 ms stalls)
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:
            parts = urlsplit(self.path)
            host = self.headers.get("X-Bfcl-Original-Host", "")
            status, body = server.answer(host, parts.path, parse_qs(parts.query), self.headers)
            data = json.dumps(body).encode()
            self.send_response(status)
            if status in (301, 302):
                self.send_header("Location", body)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: Any) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()
