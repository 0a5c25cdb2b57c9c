"""A stock-trading account (``TradingBot``)."""

from __future__ import annotations

import copy
from datetime import datetime, timedelta
from typing import Any

from pytest_bfcl.backends.base import Backend
from pytest_bfcl.backends.long_context import LongContext

# The simulated market's clock never moves.
CURRENT_TIME = datetime(2024, 9, 1, 10, 30)


def _stock(price: float, change: float, volume: float, ma5: float, ma20: float) -> dict[str, Any]:
    return {
        "price": price,
        "percent_change": change,
        "volume": volume,
        "MA(5)": ma5,
        "MA(20)": ma20,
    }


SYMBOLS = {
    "Apple": "AAPL",
    "Google": "GOOG",
    "Tesla": "TSLA",
    "Microsoft": "MSFT",
    "Nvidia": "NVDA",
    "Zeta Corp": "ZETA",
    "Alpha Tech": "ALPH",
    "Omega Industries": "OMEG",
    "Quasar Ltd.": "QUAS",
    "Neptune Systems": "NEPT",
    "Synex Solutions": "SYNX",
    "Amazon": "AMZN",
    "Gorilla": "GORI",
}

_NOT_LOGGED_IN = "User not authenticated. Please log in to {}."


def _unauthenticated(action: str) -> dict[str, str]:
    return {"error": _NOT_LOGGED_IN.format(action)}


class TradingBot(Backend):
    DEFAULTS = {
        "orders": {
            12345: {
                "id": 12345,
                "order_type": "Buy",
                "symbol": "AAPL",
                "price": 210.65,
                "amount": 10,
                "status": "Completed",
            },
            12446: {
                "id": 12446,
                "order_type": "Sell",
                "symbol": "GOOG",
                "price": 2840.56,
                "amount": 5,
                "status": "Pending",
            },
        },
        "account_info": {
            "account_id": 12345,
            "balance": 10000.0,
            "binding_card": 1974202140965533,
        },
        "authenticated": False,
        "market_status": "Closed",
        "order_counter": 12446,  # quirk of the default scenario: equals an existing order id
        "stocks": {
            "AAPL": _stock(227.16, 0.17, 2.552, 227.11, 227.09),
            "GOOG": _stock(2840.34, 0.24, 1.123, 2835.67, 2842.15),
            "TSLA": _stock(667.92, -0.12, 1.654, 671.15, 668.20),
            "MSFT": _stock(310.23, 0.09, 3.234, 309.88, 310.11),
            "NVDA": _stock(220.34, 0.34, 1.234, 220.45, 220.67),
            "ALPH": _stock(1320.45, -0.08, 1.567, 1321.12, 1325.78),
            "OMEG": _stock(457.23, 0.12, 2.345, 456.78, 458.12),
            "QUAS": _stock(725.89, -0.03, 1.789, 726.45, 728.00),
            "NEPT": _stock(88.34, 0.19, 0.654, 88.21, 88.67),
            "SYNX": _stock(345.67, 0.11, 2.112, 345.34, 346.12),
            "ZETA": _stock(22.09, -0.05, 0.789, 22.12, 22.34),
        },
        "watch_list": ["NVDA"],
        "transaction_history": [],
        "long_context": False,
    }
    SEED = 1053520

    # The state fields of DEFAULTS, set on every instance by Backend.
    orders: dict[Any, dict[str, Any]]
    account_info: dict[str, Any]
    authenticated: bool
    market_status: str
    order_counter: int
    stocks: dict[str, dict[str, Any]]
    watch_list: list[str]
    transaction_history: list[dict[str, Any]]
    long_context: bool

    def _load_scenario(self, config: dict[str, Any], long_context: LongContext | None) -> None:
        super()._load_scenario(config, long_context)
        self.long_context = long_context is not None
        self.orders = {
            int(k) if isinstance(k, str) and k.isdigit() else k: v for k, v in self.orders.items()
        }

    def _timestamp(self) -> str:
        # The benchmark draws a POSIX time within the next day; an offset over the same range
        # of 86,401 seconds consumes the generator identically and is timezone-independent.
        offset = self._random.randint(0, 86400)
        return (CURRENT_TIME + timedelta(seconds=offset)).strftime("%Y-%m-%d %H:%M:%S")

    def get_current_time(self) -> dict[str, str]:
        return {"current_time": CURRENT_TIME.strftime("%I:%M %p")}

    def get_symbol_by_name(self, name: str) -> dict[str, str]:
        return {"symbol": SYMBOLS.get(name, "Stock not found")}

    def get_stock_info(self, symbol: str) -> dict[str, Any]:
        if symbol not in self.stocks:
            return {"error": f"Stock with symbol '{symbol}' not found."}
        if self._long is not None:
            stock = dict(self.stocks[symbol])
            stock["MA(5)"] = self._long["MA_5_EXTENSION"]
            stock["MA(20)"] = self._long["MA_20_EXTENSION"]
            return stock
        return self.stocks[symbol]

    def get_order_details(self, order_id: int) -> dict[str, Any]:
        if order_id not in self.orders:
            return {
                "error": f"Order with ID {order_id} not found."
                f"Here is the list of orders_id: {list(self.orders)}"
            }
        if self._long is not None:
            order = dict(self.orders[order_id])
            symbol = order["symbol"]
            texts = self._long["ORDER_DETAIL_EXTENSION"]
            order["metadata"] = {key: text.format(symbol=symbol) for key, text in texts.items()}
            return order
        return self.orders[order_id]

    def cancel_order(self, order_id: int) -> dict[str, Any]:
        if order_id not in self.orders:
            return {"error": f"Order with ID {order_id} not found."}
        if self.orders[order_id]["status"] == "Completed":
            return {"error": f"Can't cancel order {order_id}. Order is already completed."}
        self.orders[order_id]["status"] = "Cancelled"
        return {"order_id": order_id, "status": "Cancelled"}

    def place_order(
        self, order_type: str, symbol: str, price: float, amount: int
    ) -> dict[str, Any]:
        if not self.authenticated:
            return _unauthenticated("place an order")
        if symbol not in self.stocks:
            return {"error": f"Invalid stock symbol: {symbol}"}
        if price <= 0 or amount <= 0:
            return {"error": "Price and amount must be positive values."}
        if order_type.lower() == "buy":
            total = float(price) * int(amount)
            balance = self.account_info.get("balance", 0)
            if total > balance:
                return {
                    "error": f"Insufficient funds: required ${total:.2f} "
                    f"but only ${balance:.2f} available."
                }
        price = float(price)
        order_id = self.order_counter
        self.orders[order_id] = {
            "id": order_id,
            "order_type": order_type,
            "symbol": symbol,
            "price": price,
            "amount": amount,
            "status": "Open",
        }
        self.order_counter += 1
        return {
            "order_id": order_id,
            "order_type": order_type,
            "status": "Pending",
            "price": price,
            "amount": amount,
        }

    def withdraw_funds(self, amount: float) -> dict[str, Any]:
        if not self.authenticated:
            return _unauthenticated("make a transaction")
        if self.market_status != "Open":
            return {"error": "Market is closed. Transactions are not allowed."}
        if amount <= 0:
            return {"error": "Transaction amount must be positive."}
        if amount > self.account_info["balance"]:
            return {"error": "Insufficient funds for withdrawal."}
        self.account_info["balance"] -= amount
        self.transaction_history.append(
            {"type": "withdrawal", "amount": amount, "timestamp": self._timestamp()}
        )
        return {"status": "Withdrawal successful", "new_balance": self.account_info["balance"]}

    def get_account_info(self) -> dict[str, Any]:
        if not self.authenticated:
            return _unauthenticated("view account information")
        return self.account_info

    def trading_login(self, username: str, password: str) -> dict[str, str]:
        if self.authenticated:
            return {"status": "Already logged in"}
        self.authenticated = True  # the simulated service checks no credentials
        return {"status": "Logged in successfully"}

    def trading_get_login_status(self) -> dict[str, bool]:
        return {"status": bool(self.authenticated)}

    def trading_logout(self) -> dict[str, str]:
        if not self.authenticated:
            return {"status": "No user is currently logged in"}
        self.authenticated = False
        return {"status": "Logged out successfully"}

    def fund_account(self, amount: float) -> dict[str, Any]:
        if not self.authenticated:
            return _unauthenticated("fund the account")
        if amount <= 0:
            return {"error": "Funding amount must be positive."}
        self.account_info["balance"] += amount
        self.transaction_history.append(
            {"type": "deposit", "amount": amount, "timestamp": self._timestamp()}
        )
        return {
            "status": "Account funded successfully",
            "new_balance": self.account_info["balance"],
        }

    def remove_stock_from_watchlist(self, symbol: str) -> dict[str, str]:
        if not self.authenticated:
            return _unauthenticated("modify the watchlist")
        if symbol not in self.watch_list:
            return {"error": f"Stock {symbol} not found in watchlist."}
        self.watch_list.remove(symbol)
        return {"status": f"Stock {symbol} removed from watchlist successfully."}

    def get_watchlist(self) -> Any:
        if not self.authenticated:
            return ["Error: " + _NOT_LOGGED_IN.format("view the watchlist")]
        if self._long is not None:
            return self.watch_list + list(self._long["WATCH_LIST_EXTENSION"])
        return {"watchlist": self.watch_list}

    def get_order_history(self) -> Any:
        if not self.authenticated:
            return [_unauthenticated("view order history")]
        return {"history": list(self.orders)}

    def get_transaction_history(
        self, start_date: str | None = None, end_date: str | None = None
    ) -> Any:
        if not self.authenticated:
            return [_unauthenticated("view transaction history")]
        start = datetime.strptime(start_date, "%Y-%m-%d") if start_date else datetime.min
        end = datetime.strptime(end_date, "%Y-%m-%d") if end_date else datetime.max
        history = [
            t
            for t in self.transaction_history
            if start <= datetime.strptime(t["timestamp"], "%Y-%m-%d %H:%M:%S") <= end
        ]
        if self._long is not None:
            history.extend(copy.deepcopy(self._long["TRANSACTION_HISTORY_EXTENSION"]))
        return {"transaction_history": history}

    def get_available_stocks(self, sector: str) -> dict[str, list[str]]:
        sectors = {
            "Technology": ["AAPL", "GOOG", "MSFT", "NVDA"],
            "Automobile": ["TSLA", "F", "GM"],
        }
        if self._long is not None:
            sectors["Technology"].extend(self._long["TECHNOLOGY_EXTENSION"])
            sectors["Automobile"].extend(self._long["AUTOMOBILE_EXTENSION"])
        return {"stock_list": sectors.get(sector, [])}

    def filter_stocks_by_price(
        self, stocks: list[str], min_price: float, max_price: float
    ) -> dict[str, list[str]]:
        def price(symbol: str) -> float:
            return self.stocks.get(symbol, {}).get("price", 0)

        # compared in the reference's order, so a bad bound fails with the same message
        return {
            "filtered_stocks": [
                s for s in stocks if price(s) >= min_price and price(s) <= max_price
            ]
        }

    def add_to_watchlist(self, stock: str) -> dict[str, list[str]]:
        if stock not in self.watch_list and stock in self.stocks:
            self.watch_list.append(stock)
        return {"watchlist": self.watch_list}

    def notify_price_change(self, stocks: list[str], threshold: float) -> dict[str, str]:
        changed = [
            s
            for s in stocks
            if s in self.stocks and abs(self.stocks[s]["percent_change"]) >= threshold
        ]
        if changed:
            return {"notification": f"Stocks {', '.join(changed)} have significant price changes."}
        return {"notification": "No significant price changes in the selected stocks."}
