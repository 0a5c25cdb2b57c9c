"""A travel-booking service with cards, flights and insurance (``TravelAPI``)."""

from __future__ import annotations

import copy
from datetime import datetime
from typing import Any

from pytest_bfcl.backends.base import Backend, state_copy
from pytest_bfcl.backends.long_context import LongContext

# Directional routes with their base fare in USD. The order matters: in long-context mode the
# cost list holds every route in this order.
_ROUTE_TABLE = """
SFO: LAX 200, JFK 500, ORD 400, BOS 450, RMS 300, SBK 350, MPC 370, SVP 320, SHD 330, SSV 340,
     OKD 360, WLB 310, CRH 380, ATV 390, PHV 420, GFD 430, CIA 700
LAX: SFO 100, JFK 600, ORD 500, BOS 550, RMS 310, SBK 320, MPC 330, SVP 340, SHD 350, SSV 360,
     OKD 370, WLB 380, CRH 390, ATV 400, PHV 410, GFD 420, HND 430
JFK: ORD 300, BOS 250, RMS 450, SBK 460, MPC 470, SVP 480, SHD 490, SSV 500, OKD 510, WLB 520,
     CRH 530, ATV 540, PHV 550, GFD 560, LAX 570, HND 800, PVG 950, PEK 1000
ORD: LAX 180, BOS 200, RMS 350, SBK 360, MPC 370, SVP 380, SHD 390, SSV 400, OKD 410, WLB 420,
     CRH 430, ATV 440, PHV 450, GFD 460
BOS: RMS 400, SBK 410, MPC 420, SVP 430, SHD 440, SSV 450, OKD 460, WLB 470, CRH 480, ATV 490,
     PHV 500, GFD 510
RMS: BOS 200, JFK 210, SBK 220, MPC 230, SVP 240, SHD 250, SSV 260, OKD 270, WLB 280, CRH 290,
     ATV 300, PHV 310, GFD 320, LAX 330
SBK: MPC 200, SVP 210, SHD 220, SSV 230, OKD 240, WLB 250, CRH 260, ATV 270, PHV 280, GFD 290
MPC: SVP 210, SHD 220, SSV 230, OKD 240, WLB 250, CRH 260, ATV 270, PHV 280, GFD 290
SVP: SHD 230, SSV 240, OKD 250, WLB 260, CRH 270, ATV 280, PHV 290, GFD 300
SHD: SSV 220, OKD 230, WLB 240, CRH 250, ATV 260, PHV 270, GFD 280
SSV: OKD 240, WLB 250, CRH 260, ATV 270, PHV 280, GFD 290
OKD: WLB 230, CRH 240, ATV 250, PHV 260, GFD 270
WLB: CRH 250, ATV 260, PHV 270, GFD 280
CRH: ATV 240, PHV 250, GFD 260, SFO 270, RMS 280, HKG 290, JFK 300
ATV: PHV 230, GFD 240
PHV: GFD 220
LHR: CDG 100
OKD: LAX 220
"""


def _parse_routes(table: str) -> dict[tuple[str, str], int]:
    routes: dict[tuple[str, str], int] = {}
    origin = ""
    for line in table.strip().splitlines():
        head, sep, rest = line.partition(":")
        if sep:
            origin = head.strip()
        else:
            rest = line
        for item in rest.split(","):
            if item.strip():
                destination, cost = item.split()
                routes[(origin, destination)] = int(cost)
    return routes


ROUTES = _parse_routes(_ROUTE_TABLE)
AIRPORTS = [
    "RMS", "SBK", "MPC", "SVP", "SHD", "CDG", "LHR", "SSV", "OKD", "WLB", "PEK", "HND",
    "HKG", "CIA", "CRH", "ATV", "PHV", "GFD", "SFO", "LAX", "JFK", "ORD", "BOS",
]  # fmt: skip
CITY_AIRPORTS = {
    "Rivermist": "RMS",
    "Stonebrook": "SBK",
    "Maplecrest": "MPC",
    "Silverpine": "SVP",
    "Shadowridge": "SHD",
    "London": "LHR",
    "Paris": "CDG",
    "Sunset Valley": "SSV",
    "Oakendale": "OKD",
    "Willowbend": "WLB",
    "Crescent Hollow": "CRH",
    "Autumnville": "ATV",
    "Pinehaven": "PHV",
    "Greenfield": "GFD",
    "San Francisco": "SFO",
    "Los Angeles": "LAX",
    "New York": "JFK",
    "Chicago": "ORD",
    "Boston": "BOS",
    "Beijing": "PEK",
    "Hong Kong": "HKG",
    "Rome": "CIA",
    "Tokyo": "HND",
}
CLASS_FACTORS = {"economy": 1, "business": 2, "first": 5}
USD_RATES = {
    "RMB": 7, "EUR": 0.8, "JPY": 110, "GBP": 0.7, "CAD": 1.3,
    "AUD": 1.4, "INR": 70, "RUB": 60, "BRL": 3.8, "MXN": 20,
}  # fmt: skip


def _date_factor(travel_date: str) -> int:
    return 2 if sum(int(c) for c in travel_date if c.isdigit()) % 2 == 0 else 1


class TravelAPI(Backend):
    DEFAULTS = {
        "credit_card_list": {},
        "booking_record": {},
        "access_token": None,
        "token_type": None,
        "token_expires_in": None,
        "token_scope": None,
        "user_first_name": None,
        "user_last_name": None,
        "budget_limit": None,
        "long_context": False,
    }
    SEED = 141053

    # The state fields of DEFAULTS, set on every instance by Backend.
    credit_card_list: dict[str, dict[str, Any]]
    booking_record: dict[str, dict[str, Any]]
    access_token: str | None
    token_type: str | None
    token_expires_in: int | None
    token_scope: str | None
    user_first_name: str | None
    user_last_name: str | None
    budget_limit: float | None
    long_context: bool

    def __init__(self) -> None:
        super().__init__()
        self._flight_costs: dict[str, float] = {}

    def _load_scenario(self, config: dict[str, Any], long_context: LongContext | None) -> None:
        super()._load_scenario(config, long_context)
        self.long_context = long_context is not None
        if long_context is not None:
            # Deliberate deviation: the benchmark adds the shared module-level records, so one
            # entry's bookings could leak into another's; each instance gets its own copies.
            for card_id, card in long_context["CREDIT_CARD_EXTENSION"].items():
                self.credit_card_list.setdefault(card_id, state_copy(card))
            for booking_id, booking in long_context["BOOKING_RECORD_EXTENSION"].items():
                self.booking_record.setdefault(booking_id, state_copy(booking))

    # -- guards ---------------------------------------------------------------------------------

    def _token_problem(self, access_token: str) -> str | None:
        if self.token_expires_in == 0:
            return "Token expired"
        if access_token != self.access_token:
            return "Invalid access token"
        return None

    # -- session --------------------------------------------------------------------------------

    def authenticate_travel(
        self,
        client_id: str,
        client_secret: str,
        refresh_token: str,
        grant_type: str,
        user_first_name: str,
        user_last_name: str,
    ) -> dict[str, Any]:
        self.token_expires_in = 2
        self.access_token = str(self._random.randint(100000, 999999))
        self.token_type = "Bearer"
        self.token_scope = grant_type
        self.user_first_name = user_first_name
        self.user_last_name = user_last_name
        return {
            "expires_in": 2,
            "access_token": self.access_token,
            "token_type": "Bearer",
            "scope": grant_type,
        }

    def travel_get_login_status(self) -> dict[str, bool]:
        return {"status": not (self.token_expires_in is None or self.token_expires_in == 0)}

    def get_budget_fiscal_year(
        self, lastModifiedAfter: str | None = None, includeRemoved: str | None = None
    ) -> dict[str, str]:
        return {"budget_fiscal_year": "2018"}

    # -- cards ------------------------------------------------------------------------------------

    def register_credit_card(
        self,
        access_token: str,
        card_number: str,
        expiration_date: str,
        cardholder_name: str,
        card_verification_number: int,
    ) -> dict[str, Any]:
        if self.token_expires_in is None:
            return {"error": "Token not initialized"}
        problem = self._token_problem(access_token)
        if problem:
            return {"error": problem}
        if card_number in self.credit_card_list:
            return {"error": "Card already registered"}
        card_id = str(self._random.randint(100000000000, 999999999999))
        self.credit_card_list[card_id] = {
            "card_number": card_number,
            "expiration_date": expiration_date,
            "cardholder_name": cardholder_name,
            "card_verification_number": card_verification_number,
            "balance": self._random.randint(10000, 99999),
        }
        return {"card_id": card_id}

    def get_credit_card_balance(self, access_token: str, card_id: str) -> dict[str, Any]:
        problem = self._token_problem(access_token)
        if problem:
            return {"error": problem}
        if card_id not in self.credit_card_list:
            return {
                "error": "Card not registered. Here are a list of card_id's: "
                + str(list(self.credit_card_list))
            }
        return {"card_balance": self.credit_card_list[card_id]["balance"]}

    def get_all_credit_cards(self) -> dict[str, Any]:
        return {"credit_card_list": self.credit_card_list}

    # -- flights ----------------------------------------------------------------------------------

    def get_flight_cost(
        self, travel_from: str, travel_to: str, travel_date: str, travel_class: str
    ) -> dict[str, list[float]]:
        if (travel_from, travel_to) not in ROUTES:
            raise ValueError("No available route for the given airports.")
        # compared by equality, as the reference's chain of classes: any value is looked up
        known = [f for name, f in CLASS_FACTORS.items() if travel_class == name]
        if not known:
            raise ValueError("Invalid travel class. Options are: economy, business, first.")
        factor = known[0] * _date_factor(travel_date)
        cost = float(ROUTES[(travel_from, travel_to)] * factor)
        self._flight_costs = {f"{travel_from}|{travel_to}|{travel_class}|{travel_date}": cost}
        if self._long is not None:
            return {"travel_cost_list": [float(base * factor) for base in ROUTES.values()]}
        return {"travel_cost_list": [cost]}

    def list_all_airports(self) -> list[str]:
        return list(AIRPORTS)

    def get_nearest_airport_by_city(self, location: str) -> dict[str, str]:
        return {"nearest_airport": CITY_AIRPORTS.get(location, "Unknown")}

    def book_flight(
        self,
        access_token: str,
        card_id: str,
        travel_date: str,
        travel_from: str,
        travel_to: str,
        travel_class: str,
    ) -> dict[str, Any]:
        def failed(message: str) -> dict[str, Any]:
            return {"booking_status": False, "error": message}

        problem = self._token_problem(access_token)
        if problem:
            return failed(problem)
        if card_id not in self.credit_card_list:
            return failed("Card not registered")
        card = self.credit_card_list[card_id]
        if "balance" not in card:
            return failed("Balance not found")
        if travel_from not in AIRPORTS:
            return failed(f"Invalid departure airport code: {travel_from}")
        if travel_to not in AIRPORTS:
            return failed(f"Invalid destination airport code: {travel_to}")
        try:
            datetime.strptime(travel_date, "%Y-%m-%d")
        except ValueError:
            return failed("Invalid date format. Use YYYY-MM-DD.")
        # a set built as the reference builds it, so that it prints in the same order
        valid_classes = {"economy", "business", "first"}
        if travel_class not in valid_classes:
            return failed(f"Invalid travel class. Must be one of {valid_classes}")
        try:
            self.get_flight_cost(travel_from, travel_to, travel_date, travel_class)
        except ValueError as exc:
            return failed(str(exc))
        cost = self._flight_costs[f"{travel_from}|{travel_to}|{travel_class}|{travel_date}"]
        if card["balance"] < cost:
            return failed("Insufficient funds")
        if self.budget_limit is not None and card["balance"] < self.budget_limit:
            return failed("Balance is less than budget limit")
        card["balance"] -= cost
        booking_id = str(self._random.randint(1000000, 9999999))
        transaction_id = str(self._random.randint(10000000, 99999999))
        self.booking_record[booking_id] = {
            "card_id": card_id,
            "travel_date": travel_date,
            "travel_from": travel_from,
            "travel_to": travel_to,
            "travel_class": travel_class,
            "travel_cost": cost,
            "transaction_id": transaction_id,
        }
        return {
            "booking_id": booking_id,
            "transaction_id": transaction_id,
            "booking_status": True,
            "booking_history": self.booking_record if self._long is not None else {},
        }

    def retrieve_invoice(
        self, access_token: str, booking_id: str | None = None, insurance_id: str | None = None
    ) -> dict[str, Any]:
        problem = self._token_problem(access_token)
        if problem:
            return {"error": problem}
        if booking_id not in self.booking_record:
            return {"error": "Booking not found"}
        booking = self.booking_record[booking_id]
        fields = (
            "travel_date",
            "travel_from",
            "travel_to",
            "travel_class",
            "travel_cost",
            "transaction_id",
        )
        return {"invoice": {"booking_id": booking_id, **{f: booking[f] for f in fields}}}

    def get_booking_history(self, access_token: str) -> dict[str, Any]:
        problem = self._token_problem(access_token)
        if problem:
            return {"error": problem}
        return {"booking_history": copy.deepcopy(self.booking_record)}

    def cancel_booking(self, access_token: str, booking_id: str) -> dict[str, Any]:
        problem = self._token_problem(access_token)
        if problem:
            return {"cancel_status": False, "error": problem}
        if booking_id not in self.booking_record:
            return {"cancel_status": False, "error": "Booking not found"}
        booking = self.booking_record[booking_id]
        self.credit_card_list[booking["card_id"]]["balance"] += booking["travel_cost"]
        del self.booking_record[booking_id]
        return {"cancel_status": True}

    # -- money and travellers -----------------------------------------------------------------

    def compute_exchange_rate(
        self, base_currency: str, target_currency: str, value: float
    ) -> dict[str, float]:
        for currency, rate in USD_RATES.items():
            if base_currency == "USD" and target_currency == currency:
                return {"exchanged_value": float(value * rate)}
            if base_currency == currency and target_currency == "USD":
                return {"exchanged_value": round(value / rate, 2)}
        raise ValueError("No available exchange rate for the given currencies.")

    def verify_traveler_information(
        self, first_name: str, last_name: str, date_of_birth: str, passport_number: str
    ) -> dict[str, Any]:
        def failed(message: str) -> dict[str, Any]:
            return {"verification_status": False, "verification_failure": message}

        if self.user_first_name != first_name or self.user_last_name != last_name:
            return failed(
                "Cannot book flight information for another user."
                f"Expected {self.user_first_name} {self.user_last_name}, "
                f"got {first_name} {last_name}"
            )
        try:
            born = datetime.strptime(date_of_birth, "%Y-%m-%d")
        except ValueError:
            return failed("Invalid date of birth format. Please use YYYY-MM-DD.")
        today = datetime.today()  # as the benchmark does; every stored birth date is an adult's
        age = today.year - born.year - ((today.month, today.day) < (born.month, born.day))
        if age < 18:
            return failed("Traveler must be at least 18 years old.")
        if not passport_number.startswith("US"):
            return failed("Passport must be issued by the United States.")
        return {"verification_status": True}

    def set_budget_limit(self, access_token: str, budget_limit: float) -> dict[str, Any]:
        problem = self._token_problem(access_token)
        if problem:
            return {"error": problem}
        self.budget_limit = float(budget_limit)
        return {"budget_limit": self.budget_limit}

    def purchase_insurance(
        self,
        access_token: str,
        insurance_type: str,
        booking_id: str,
        insurance_cost: float,
        card_id: str,
    ) -> dict[str, Any]:
        def failed(message: str) -> dict[str, Any]:
            return {"insurance_status": False, "error": message}

        problem = self._token_problem(access_token)
        if problem:
            return failed(problem)
        if self.budget_limit is not None and self.budget_limit < insurance_cost:
            return failed("Exceeded budget limit")
        if booking_id not in self.booking_record:
            return failed("Booking not found")
        if card_id not in self.credit_card_list:
            return failed("Credit card not registered")
        self.credit_card_list[card_id]["balance"] -= insurance_cost
        return {
            "insurance_id": str(self._random.randint(100000000, 999999999)),
            "insurance_status": True,
        }

    def contact_customer_support(self, booking_id: str, message: str) -> dict[str, str]:
        if booking_id not in self.booking_record:
            return {"error": "Booking not found"}
        return {
            "customer_support_message": "Thank you for contacting customer support. Your message "
            "has been received and we will get back to you shortly."
        }
