"""The travel-booking application."""

from __future__ import annotations

from typing import Any

from backend_helpers import env_for, run

from pytest_bfcl.backends.long_context import load_long_context


def test_travel_session_and_cards():
    env = env_for("TravelAPI")
    assert run(env, "travel_get_login_status()", "get_budget_fiscal_year()") == [
        {"status": False},
        {"budget_fiscal_year": "2018"},
    ]
    assert run(env, "register_credit_card('t', '4111', '12/30', 'A B', 123)") == [
        {"error": "Token not initialized"}
    ]
    assert run(env, "authenticate_travel('c', 's', 'r', 'read_write', 'Ann', 'Lee')") == [
        {"expires_in": 2, "access_token": "251675", "token_type": "Bearer", "scope": "read_write"}
    ]
    assert run(env, "register_credit_card('bad', '4111', '12/30', 'A B', 123)") == [
        {"error": "Invalid access token"}
    ]
    assert run(env, "register_credit_card('251675', '4111', '12/30', 'Ann Lee', 123)") == [
        {"card_id": "391310425148"}
    ]
    card = env.instances["TravelAPI"].credit_card_list["391310425148"]
    assert run(env, "get_credit_card_balance('251675', '391310425148')") == [
        {"card_balance": card["balance"]}
    ]
    assert run(env, "get_credit_card_balance('251675', 'x')") == [
        {"error": "Card not registered. Here are a list of card_id's: ['391310425148']"}
    ]
    assert run(env, "get_all_credit_cards()")[0]["credit_card_list"]["391310425148"] == card
    expired = env_for("TravelAPI", {"token_expires_in": 0, "access_token": "t"})
    assert run(expired, "get_booking_history('t')", "set_budget_limit('t', 5)") == [
        {"error": "Token expired"},
        {"error": "Token expired"},
    ]


CARDS = {
    "c1": {
        "card_number": "1",
        "expiration_date": "x",
        "cardholder_name": "Ann Lee",
        "card_verification_number": 1,
        "balance": 5000.0,
    }
}


def test_travel_flights_and_bookings():
    env = env_for(
        "TravelAPI",
        {"credit_card_list": CARDS, "access_token": "t", "token_expires_in": 2,
         "user_first_name": "Ann", "user_last_name": "Lee"},
    )  # fmt: skip
    # 2024-11-15: digit sum 14 (even) doubles the fare; business doubles it again.
    assert run(env, "get_flight_cost('SFO', 'LAX', '2024-11-15', 'business')") == [
        {"travel_cost_list": [800.0]}
    ]
    assert run(env, "get_flight_cost('LAX', 'XXX', '2024-11-15', 'economy')") == [
        "Error during execution: No available route for the given airports."
    ]
    assert run(env, "get_flight_cost('SFO', 'LAX', '2024-11-15', 'coach')") == [
        "Error during execution: Invalid travel class. Options are: economy, business, first."
    ]

    def booking_error(call: str) -> str:
        result = run(env, call)[0]
        assert result["booking_status"] is False
        return result["error"]

    assert booking_error("book_flight('bad', 'c1', '2024-11-15', 'SFO', 'LAX', 'economy')") == (
        "Invalid access token"
    )
    assert booking_error("book_flight('t', 'c9', '2024-11-15', 'SFO', 'LAX', 'economy')") == (
        "Card not registered"
    )
    assert booking_error("book_flight('t', 'c1', '2024-11-15', 'XXX', 'LAX', 'economy')") == (
        "Invalid departure airport code: XXX"
    )
    assert booking_error("book_flight('t', 'c1', '2024-11-15', 'SFO', 'XXX', 'economy')") == (
        "Invalid destination airport code: XXX"
    )
    assert booking_error("book_flight('t', 'c1', '15/11/2024', 'SFO', 'LAX', 'economy')") == (
        "Invalid date format. Use YYYY-MM-DD."
    )
    assert booking_error("book_flight('t', 'c1', '2024-11-15', 'SFO', 'LAX', 'coach')").startswith(
        "Invalid travel class. Must be one of {"
    )
    assert booking_error("book_flight('t', 'c1', '2024-11-15', 'LAX', 'CIA', 'economy')") == (
        "No available route for the given airports."
    )
    assert booking_error("book_flight('t', 'c1', '2024-11-15', 'SFO', 'CIA', 'first')") == (
        "Insufficient funds"
    )
    booked = run(env, "book_flight('t', 'c1', '2024-11-15', 'SFO', 'LAX', 'economy')")[0]
    assert booked["booking_status"] is True and booked["booking_history"] == {}
    booking_id = booked["booking_id"]
    api = env.instances["TravelAPI"]
    assert api.credit_card_list["c1"]["balance"] == 4600.0
    invoice = run(env, f"retrieve_invoice('t', '{booking_id}')")[0]["invoice"]
    assert invoice["travel_cost"] == 400.0 and invoice["booking_id"] == booking_id
    assert run(env, "retrieve_invoice('t', 'nope')") == [{"error": "Booking not found"}]
    assert list(run(env, "get_booking_history('t')")[0]["booking_history"]) == [booking_id]
    assert run(env, f"contact_customer_support('{booking_id}', 'hi')")[0][
        "customer_support_message"
    ].startswith("Thank you for contacting customer support.")
    assert run(env, "contact_customer_support('nope', 'hi')") == [{"error": "Booking not found"}]
    assert run(env, f"purchase_insurance('t', 'full', '{booking_id}', 100, 'c1')")[0][
        "insurance_status"
    ]
    assert api.credit_card_list["c1"]["balance"] == 4500.0
    assert run(env, "purchase_insurance('t', 'full', 'nope', 100, 'c1')") == [
        {"insurance_status": False, "error": "Booking not found"}
    ]
    assert run(env, f"purchase_insurance('t', 'full', '{booking_id}', 100, 'c9')") == [
        {"insurance_status": False, "error": "Credit card not registered"}
    ]
    assert run(env, "set_budget_limit('t', '50')") == [{"budget_limit": 50.0}]
    assert run(env, f"purchase_insurance('t', 'full', '{booking_id}', 100, 'c1')") == [
        {"insurance_status": False, "error": "Exceeded budget limit"}
    ]
    assert run(env, f"cancel_booking('t', '{booking_id}')", "cancel_booking('t', 'x')") == [
        {"cancel_status": True},
        {"cancel_status": False, "error": "Booking not found"},
    ]
    assert api.credit_card_list["c1"]["balance"] == 4900.0
    api.budget_limit = 10_000.0
    assert booking_error("book_flight('t', 'c1', '2024-11-15', 'SFO', 'LAX', 'economy')") == (
        "Balance is less than budget limit"
    )


def test_travel_reference_data_and_verification():
    env = env_for("TravelAPI", {"user_first_name": "Ann", "user_last_name": "Lee"})
    assert env.execute(["list_all_airports()"])[0].startswith("['RMS', 'SBK'")
    assert run(
        env, "get_nearest_airport_by_city('Rivermist')", "get_nearest_airport_by_city('X')"
    ) == [
        {"nearest_airport": "RMS"},
        {"nearest_airport": "Unknown"},
    ]
    assert run(
        env, "compute_exchange_rate('USD', 'EUR', 10)", "compute_exchange_rate('JPY', 'USD', 1000)"
    ) == [
        {"exchanged_value": 8.0},
        {"exchanged_value": 9.09},
    ]
    assert run(env, "compute_exchange_rate('USD', 'USD', 1)") == [
        "Error during execution: No available exchange rate for the given currencies."
    ]

    def verify(first: str, last: str, born: str, passport: str) -> dict[str, Any]:
        return run(
            env, f"verify_traveler_information('{first}', '{last}', '{born}', '{passport}')"
        )[0]

    assert verify("Ann", "Lee", "1990-01-01", "US123") == {"verification_status": True}
    assert verify("Bob", "Lee", "1990-01-01", "US123")["verification_failure"] == (
        "Cannot book flight information for another user.Expected Ann Lee, got Bob Lee"
    )
    assert verify("Ann", "Lee", "01/01/1990", "US123")["verification_failure"] == (
        "Invalid date of birth format. Please use YYYY-MM-DD."
    )
    assert verify("Ann", "Lee", "2099-01-01", "US123")["verification_failure"] == (
        "Traveler must be at least 18 years old."
    )
    assert verify("Ann", "Lee", "1990-01-01", "UK123")["verification_failure"] == (
        "Passport must be issued by the United States."
    )


def test_travel_long_context_cards_are_per_instance(data_source):
    tables = load_long_context(data_source.unpacked_root)
    first = env_for("TravelAPI", {}, tables).instances["TravelAPI"]
    second = env_for("TravelAPI", {}, tables).instances["TravelAPI"]
    assert set(first.credit_card_list) == set(tables["CREDIT_CARD_EXTENSION"])
    card_id = next(iter(first.credit_card_list))
    first.credit_card_list[card_id]["balance"] = -1
    assert second.credit_card_list[card_id]["balance"] != -1
    assert tables["CREDIT_CARD_EXTENSION"][card_id]["balance"] != -1
