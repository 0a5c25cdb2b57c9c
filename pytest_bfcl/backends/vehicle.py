"""A car's controls: engine, doors, brakes, climate, navigation (``VehicleControlAPI``)."""

from __future__ import annotations

import copy
from typing import Any

from pytest_bfcl.backends.base import Backend
from pytest_bfcl.backends.long_context import LongContext

MAX_FUEL_LEVEL = 50
MIN_FUEL_LEVEL = 0.0
MILES_PER_GALLON = 20.0

# Road distances between zip codes, in both directions.
_DISTANCES = {
    frozenset(("83214", "74532")): 750.0,
    frozenset(("56108", "62947")): 320.0,
    frozenset(("71354", "83462")): 450.0,
    frozenset(("47329", "52013")): 290.0,
    frozenset(("69238", "51479")): 630.0,
    frozenset(("94016", "83214")): 980.0,
    frozenset(("94016", "94704")): 600.0,
    frozenset(("94704", "08540")): 2550.0,
    frozenset(("94016", "08540")): 1950.0,
    frozenset(("62947", "47329")): 1053.0,
    frozenset(("94016", "62947")): 780.0,
    frozenset(("74532", "94016")): 880.0,
}
ZIP_CODES = {
    "Rivermist": "83214",
    "Stonebrook": "74532",
    "Maplecrest": "56108",
    "Silverpine": "62947",
    "Shadowridge": "71354",
    "Sunset Valley": "83462",
    "Oakendale": "47329",
    "Willowbend": "52013",
    "Crescent Hollow": "69238",
    "Autumnville": "51479",
    "San Francisco": "94016",
}


class VehicleControlAPI(Backend):
    DEFAULTS = {
        "fuelLevel": 0.0,
        "batteryVoltage": 12.6,
        "engine_state": "stopped",
        "remainingUnlockedDoors": 4,
        "doorStatus": {
            "driver": "unlocked",
            "passenger": "unlocked",
            "rear_left": "unlocked",
            "rear_right": "unlocked",
        },
        "acTemperature": 25.0,
        "fanSpeed": 50,
        "acMode": "auto",
        "humidityLevel": 50.0,
        "headLightStatus": "off",
        "parkingBrakeStatus": "released",
        "brakePedalStatus": "released",
        "distanceToNextVehicle": 50.0,
        "cruiseStatus": "inactive",
        "destination": "None",
        "frontLeftTirePressure": 32.0,
        "frontRightTirePressure": 32.0,
        "rearLeftTirePressure": 30.0,
        "rearRightTirePressure": 30.0,
        "long_context": False,
    }
    SEED = 141053

    # The state fields of DEFAULTS, set on every instance by Backend.
    fuelLevel: float
    batteryVoltage: float
    engine_state: str
    remainingUnlockedDoors: int
    doorStatus: dict[str, str]
    acTemperature: float
    fanSpeed: int
    acMode: str
    humidityLevel: float
    headLightStatus: str
    parkingBrakeStatus: str
    brakePedalStatus: str
    distanceToNextVehicle: float
    cruiseStatus: str
    destination: str
    frontLeftTirePressure: float
    frontRightTirePressure: float
    rearLeftTirePressure: float
    rearRightTirePressure: float
    long_context: bool

    def __init__(self) -> None:
        super().__init__()
        self._parkingBrakeForce = 0.0
        self._slopeAngle = 0.0
        self._brakePedalForce = 0.0

    def _load_scenario(self, config: dict[str, Any], long_context: LongContext | None) -> None:
        super()._load_scenario(config, long_context)
        self.long_context = long_context is not None
        self.engine_state = config.get("engineState", "stopped")
        self._parkingBrakeForce = config.get("parkingBrakeForce", 0.0)
        self._slopeAngle = config.get("slopeAngle", 0.0)
        self._brakePedalForce = config.get("brakePedalForce", 0.0)
        # Always derived from the doors, whatever the scenario says.
        locked = sum(1 for status in self.doorStatus.values() if status == "locked")
        self.remainingUnlockedDoors = 4 - locked

    def startEngine(self, ignitionMode: str) -> dict[str, Any]:
        if ignitionMode == "STOP":
            self.engine_state = "stopped"
        if self.remainingUnlockedDoors > 0:
            unlocked = [door for door, status in self.doorStatus.items() if status == "unlocked"]
            return {
                "error": "All doors must be locked before starting the engine. "
                "Here are the unlocked doors: " + ", ".join(unlocked)
            }
        if self.brakePedalStatus != "pressed":
            return {"error": "Brake pedal needs to be pressed when starting the engine."}
        if self._brakePedalForce != 1000.0:
            return {"error": "Must press the brake fully before starting the engine."}
        if self.fuelLevel < MIN_FUEL_LEVEL:
            return {"error": "Fuel tank is empty."}
        if ignitionMode != "START":
            return {"error": "Invalid ignition mode."}
        self.engine_state = "running"
        return {
            "engineState": self.engine_state,
            "fuelLevel": self.fuelLevel,
            "batteryVoltage": self.batteryVoltage,
        }

    def fillFuelTank(self, fuelAmount: float) -> dict[str, Any]:
        if fuelAmount < 0:
            return {"error": "Fuel amount cannot be negative."}
        if self.fuelLevel + fuelAmount > MAX_FUEL_LEVEL:
            return {"error": "Cannot fill gas above the tank capacity."}
        if self.fuelLevel + fuelAmount < MIN_FUEL_LEVEL:
            return {"error": "Fuel tank is empty. Min fuel level is 0 gallons."}
        self.fuelLevel += fuelAmount
        return {"fuelLevel": self.fuelLevel}

    def lockDoors(self, unlock: bool, door: list[str]) -> dict[str, Any]:
        wanted = "unlocked" if unlock else "locked"
        for name in door:
            if self.doorStatus[name] == wanted:  # an unknown door raises KeyError, as upstream
                continue
            self.doorStatus[name] = wanted
            self.remainingUnlockedDoors += 1 if unlock else -1
        return {"lockStatus": wanted, "remainingUnlockedDoors": self.remainingUnlockedDoors}

    def adjustClimateControl(
        self, temperature: float, unit: str = "celsius", fanSpeed: int = 50, mode: str = "auto"
    ) -> dict[str, Any]:
        if not 0 <= fanSpeed <= 100:
            return {"error": "Fan speed must be between 0 and 100."}
        self.acTemperature = (temperature - 32) * 5 / 9 if unit == "fahrenheit" else temperature
        self.fanSpeed = fanSpeed
        self.acMode = mode
        return {
            "currentACTemperature": temperature,
            "climateMode": mode,
            "humidityLevel": self.humidityLevel,
        }

    def get_outside_temperature_from_google(self) -> dict[str, Any]:
        temperature = self._random.uniform(-10.0, 40.0)
        if self._long is not None:
            # The benchmark writes into its shared weather table; a copy gives the same answer.
            weather = copy.deepcopy(self._long["LONG_WEATHER_EXTENSION"])
            weather["outsideTemperature"] = temperature
            return weather
        return {"outsideTemperature": temperature}

    def get_outside_temperature_from_weather_com(self) -> dict[str, Any]:
        return {"error": 404}

    def setHeadlights(self, mode: str) -> dict[str, str]:
        if mode not in ("on", "off", "auto"):
            return {"error": "Invalid headlight mode."}
        self.headLightStatus = "on" if mode == "on" else "off"
        return {"headlightStatus": self.headLightStatus}

    def displayCarStatus(self, option: str) -> dict[str, Any]:
        status: dict[str, Any] = {}
        if self._long is not None:
            status["metadata"] = self._long["CAR_STATUS_METADATA_EXTENSION"]
        if option == "fuel":
            status["fuelLevel"] = self.fuelLevel
        elif option == "battery":
            status["batteryVoltage"] = self.batteryVoltage
        elif option == "doors":
            status["doorStatus"] = self.doorStatus
        elif option == "climate":
            status["currentACTemperature"] = self.acTemperature
            status["fanSpeed"] = self.fanSpeed
            status["climateMode"] = self.acMode
            status["humidityLevel"] = self.humidityLevel
        elif option == "headlights":
            status["headlightStatus"] = self.headLightStatus
        elif option == "parkingBrake":
            status["parkingBrakeStatus"] = self.parkingBrakeStatus
            status["parkingBrakeForce"] = self._parkingBrakeForce
            status["slopeAngle"] = self._slopeAngle
        elif option == "brakePedal":
            status["brakePedalStatus"] = self.brakePedalStatus
            status["brakePedalForce"] = self._brakePedalForce
        elif option == "engine":
            status["engineState"] = self.engine_state
        else:
            status["error"] = "Invalid option"
        return status

    def activateParkingBrake(self, mode: str) -> dict[str, Any]:
        if mode not in ("engage", "release"):
            return {"error": "Invalid mode"}
        engaged = mode == "engage"
        self.parkingBrakeStatus = "engaged" if engaged else "released"
        self._parkingBrakeForce = 500.0 if engaged else 0.0
        self._slopeAngle = 10.0
        result: dict[str, Any] = {}
        if self._long is not None:
            result["parkingBrakeInstruction"] = self._long["PARKING_BRAKE_INSTRUCTION"]
        result.update(
            {
                "parkingBrakeStatus": self.parkingBrakeStatus,
                "_parkingBrakeForce": self._parkingBrakeForce,
                "_slopeAngle": self._slopeAngle,
            }
        )
        return result

    def pressBrakePedal(self, pedalPosition: float) -> dict[str, Any]:
        if not 0 <= pedalPosition <= 1:
            return {"error": "Pedal position must be between 0 and 1."}
        if pedalPosition == 0:
            return self.releaseBrakePedal()
        force = pedalPosition * 1000
        self.brakePedalStatus = "pressed"
        self._brakePedalForce = force
        return {"brakePedalStatus": "pressed", "brakePedalForce": float(force)}

    def releaseBrakePedal(self) -> dict[str, Any]:
        self.brakePedalStatus = "released"
        self._brakePedalForce = 0.0
        return {"brakePedalStatus": "released", "brakePedalForce": 0.0}

    def setCruiseControl(
        self, speed: float, activate: bool, distanceToNextVehicle: float
    ) -> dict[str, Any]:
        distanceToNextVehicle = float(distanceToNextVehicle)
        speed = float(speed)
        if self.engine_state == "stopped":
            return {"error": "Start the engine before activating the cruise control."}
        self.distanceToNextVehicle = distanceToNextVehicle  # stored before the speed check
        if activate:
            if speed < 0 or speed > 120 or speed % 5 != 0:
                return {"error": "Invalid speed"}
            self.cruiseStatus = "active"
        else:
            self.cruiseStatus = "inactive"
        return {
            "cruiseStatus": self.cruiseStatus,
            "currentSpeed": speed,
            "distanceToNextVehicle": distanceToNextVehicle,
        }

    def get_current_speed(self) -> dict[str, float]:
        return {"currentSpeed": self._random.uniform(0.0, 120.0)}

    def display_log(self, messages: list[str]) -> dict[str, Any]:
        return {"log": messages}

    def estimate_drive_feasibility_by_mileage(self, distance: float) -> dict[str, bool]:
        return {"canDrive": not self.fuelLevel * MILES_PER_GALLON < distance}

    def liter_to_gallon(self, liter: float) -> dict[str, float]:
        return {"gallon": liter * 0.264172}

    def gallon_to_liter(self, gallon: float) -> dict[str, float]:
        return {"liter": gallon * 3.78541}

    def estimate_distance(self, cityA: str, cityB: str) -> dict[str, Any]:
        known = isinstance(cityA, str) and isinstance(cityB, str) and cityA != cityB
        distance = _DISTANCES.get(frozenset((cityA, cityB))) if known else None
        result: dict[str, Any] = (
            {"distance": distance}
            if distance is not None
            else {"error": "distance not found in database."}
        )
        if self._long is not None:
            result["intermediaryCities"] = self._long["INTERMEDIARY_CITIES"]
        return result

    def get_zipcode_based_on_city(self, city: str) -> dict[str, str]:
        # compared by equality, as the reference's chain of cities: any value is looked up
        return {
            "zipcode": next((code for name, code in ZIP_CODES.items() if city == name), "00000")
        }

    def set_navigation(self, destination: str) -> dict[str, str]:
        self.destination = destination
        return {"status": "Navigating to " + destination}

    def check_tire_pressure(self) -> dict[str, Any]:
        pressures = {
            "frontLeftTirePressure": self.frontLeftTirePressure,
            "frontRightTirePressure": self.frontRightTirePressure,
            "rearLeftTirePressure": self.rearLeftTirePressure,
            "rearRightTirePressure": self.rearRightTirePressure,
        }
        mean = sum(pressures.values()) / 4
        return {
            **pressures,
            "healthy_tire_pressure": 30 <= mean <= 35,
            "car_info": self._long["CAR_STATUS_METADATA_EXTENSION"] if self._long else {},
        }

    def find_nearest_tire_shop(self) -> dict[str, str]:
        return {"shopLocation": "456 Oakwood Avenue, Rivermist, 83214"}
