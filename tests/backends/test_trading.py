"""The trading application."""

from __future__ import annotations

from backend_helpers import env_for, run

from pytest_bfcl.backends.long_context import load_long_context


def test_trading_public_information():
    env = env_for("TradingBot")
    assert run(env, "get_current_time()", "get_symbol_by_name('Apple')") == [
        {"current_time": "10:30 AM"},
        {"symbol": "AAPL"},
    ]
    assert run(env, "get_symbol_by_name('Foo')", "get_stock_info('XXX')") == [
        {"symbol": "Stock not found"},
        {"error": "Stock with symbol 'XXX' not found."},
    ]
    assert run(env, "get_stock_info('NVDA')") == [
        {
            "price": 220.34,
            "percent_change": 0.34,
            "volume": 1.234,
            "MA(5)": 220.45,
            "MA(20)": 220.67,
        }
    ]
    assert run(env, "get_order_details(1)") == [
        {"error": "Order with ID 1 not found.Here is the list of orders_id: [12345, 12446]"}
    ]
    assert run(env, "cancel_order(12345)", "cancel_order(12446)", "cancel_order(1)") == [
        {"error": "Can't cancel order 12345. Order is already completed."},
        {"order_id": 12446, "status": "Cancelled"},
        {"error": "Order with ID 1 not found."},
    ]
    assert run(env, "get_available_stocks('Automobile')", "get_available_stocks('Food')") == [
        {"stock_list": ["TSLA", "F", "GM"]},
        {"stock_list": []},
    ]
    assert run(env, "filter_stocks_by_price(['AAPL', 'ZETA', 'NOPE'], 0, 300)") == [
        {"filtered_stocks": ["AAPL", "ZETA", "NOPE"]}  # unknown symbols count as price 0
    ]
    assert run(env, "add_to_watchlist('AAPL')", "add_to_watchlist('NOPE')") == [
        {"watchlist": ["NVDA", "AAPL"]},
        {"watchlist": ["NVDA", "AAPL"]},
    ]
    assert run(env, "notify_price_change(['NVDA', 'MSFT'], 0.3)") == [
        {"notification": "Stocks NVDA have significant price changes."}
    ]
    assert run(env, "notify_price_change(['MSFT'], 0.3)") == [
        {"notification": "No significant price changes in the selected stocks."}
    ]


def test_trading_account():
    env = env_for("TradingBot", {"market_status": "Open"})
    for call, action in (
        ("place_order('Buy', 'AAPL', 1, 1)", "place an order"),
        ("withdraw_funds(1)", "make a transaction"),
        ("get_account_info()", "view account information"),
        ("fund_account(1)", "fund the account"),
        ("remove_stock_from_watchlist('NVDA')", "modify the watchlist"),
    ):
        assert run(env, call) == [{"error": f"User not authenticated. Please log in to {action}."}]
    assert run(env, "get_watchlist()", "get_order_history()", "trading_logout()") == [
        ["Error: User not authenticated. Please log in to view the watchlist."],
        [{"error": "User not authenticated. Please log in to view order history."}],
        {"status": "No user is currently logged in"},
    ]
    assert run(env, "trading_login('u', 'p')", "trading_login('u', 'p')") == [
        {"status": "Logged in successfully"},
        {"status": "Already logged in"},
    ]
    assert run(env, "trading_get_login_status()", "place_order('Buy', 'XX', 1, 1)") == [
        {"status": True},
        {"error": "Invalid stock symbol: XX"},
    ]
    assert run(env, "place_order('Buy', 'AAPL', 0, 1)", "place_order('buy', 'AAPL', 500, 100)") == [
        {"error": "Price and amount must be positive values."},
        {"error": "Insufficient funds: required $50000.00 but only $10000.00 available."},
    ]
    assert run(env, "place_order('Sell', 'AAPL', 200, 100)", "get_order_history()") == [
        {
            "order_id": 12446,
            "order_type": "Sell",
            "status": "Pending",
            "price": 200.0,
            "amount": 100,
        },
        {"history": [12345, 12446]},  # the default counter equals an existing id
    ]
    assert run(env, "fund_account(0)", "fund_account(500)") == [
        {"error": "Funding amount must be positive."},
        {"status": "Account funded successfully", "new_balance": 10500.0},
    ]
    assert run(env, "withdraw_funds(-1)", "withdraw_funds(1e9)", "withdraw_funds(100)") == [
        {"error": "Transaction amount must be positive."},
        {"error": "Insufficient funds for withdrawal."},
        {"status": "Withdrawal successful", "new_balance": 10400.0},
    ]
    history = run(env, "get_transaction_history()")[0]["transaction_history"]
    assert history[0] == {"type": "deposit", "amount": 500, "timestamp": "2024-09-02 05:40:15"}
    assert [t["type"] for t in history] == ["deposit", "withdrawal"]
    assert run(env, "get_transaction_history('2030-01-01')") == [{"transaction_history": []}]
    assert run(env, "get_account_info()")[0]["balance"] == 10400.0
    assert run(
        env, "remove_stock_from_watchlist('NVDA')", "remove_stock_from_watchlist('NVDA')"
    ) == [
        {"status": "Stock NVDA removed from watchlist successfully."},
        {"error": "Stock NVDA not found in watchlist."},
    ]
    assert run(env, "get_watchlist()", "trading_logout()") == [
        {"watchlist": []},
        {"status": "Logged out successfully"},
    ]
    closed = env_for("TradingBot", {"authenticated": True})
    assert run(closed, "withdraw_funds(1)") == [
        {"error": "Market is closed. Transactions are not allowed."}
    ]


def test_trading_long_context(data_source):
    tables = load_long_context(data_source.unpacked_root)
    env = env_for("TradingBot", {"authenticated": True}, tables)
    assert run(env, "get_stock_info('AAPL')")[0]["MA(5)"] == tables["MA_5_EXTENSION"]
    details = run(env, "get_order_details(12345)")[0]["metadata"]
    assert set(details) == set(tables["ORDER_DETAIL_EXTENSION"])
    # A plain list in long-context mode (the table holds an Ellipsis, rendered as upstream).
    assert env.execute(["get_watchlist()"]) == [str(["NVDA", *tables["WATCH_LIST_EXTENSION"]])]
    assert len(run(env, "get_transaction_history()")[0]["transaction_history"]) == 1000
    stocks = run(env, "get_available_stocks('Technology')")[0]["stock_list"]
    assert stocks == ["AAPL", "GOOG", "MSFT", "NVDA", *tables["TECHNOLOGY_EXTENSION"]]
